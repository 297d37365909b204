"""Output sanitising: received text (file names, item ids, model names, messages quoting a file) made safe
for the place it is written to. One function per kind of sink:

- ``console_text``: control characters (C0 but newline and tab, DEL, C1 with the ESC/CSI/OSC introducers),
  bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069, with U+061C, U+200E, U+200F), line and
  paragraph separators and lone surrogates (undecodable file-name bytes) escaped visibly as ``\\xNN``,
  ``\\uNNNN``; everything printable is unchanged;
- ``csv_cell``: OWASP's CSV-injection rule (a string cell beginning with ``=``, ``+``, ``-``, ``@``, tab or CR
  gets a leading ``'``), control characters escaped; numbers and other non-strings are returned unchanged.
  Unlike the others it is exactly reversible (``csv_cell_value``): a cell that starts with ``'`` gets one
  more, and a backslash that would read as an escape is doubled, so a table's ids read back as they were;
- ``markdown_text``: Markdown metacharacters backslash-escaped, ``& < >`` as entities, one line;
- ``html_text``: ``html.escape(quote=True)`` after control-character escaping;
- ``plot_text``: printable text for matplotlib (control characters escaped, ``$`` escaped against mathtext);
- ``response_text``: not a sink but a source: the text a received model response says, read before it is parsed
  and scored (terminal control sequences, ECMA-48 CSI/OSC/DCS and other escapes, removed with what they carry;
  the other control characters, bidi controls and lone surrogates removed), so an answer a response wraps in
  colour codes or a title sequence is scored as the words it shows;
- ``json_text``: JSON text with the characters ``json.dumps(ensure_ascii=False)`` leaves raw (DEL, C1, bidi
  controls, separators, lone surrogates) written as ``\\uXXXX`` escapes: the same JSON value, safe bytes.

Escaping is visible and, but for table cells, one-way: the output is for people and spreadsheets, never
parsed back.
"""

from __future__ import annotations

import html
import re

__all__ = ["console_text", "console_fields", "csv_cell", "csv_cell_value", "markdown_text", "html_text", "plot_text", "json_text", "response_text", "CSV_FORMULA_START"]

#: characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
CSV_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

_UNSAFE = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (but \t, \n), DEL, C1 (incl. the 8-bit CSI/OSC introducers)
    "\u061c\u200e\u200f"  # Arabic letter mark, LRM, RLM
    "\u2028\u2029"  # line and paragraph separators
    "\u202a-\u202e\u2066-\u2069"  # bidi embeddings, overrides and isolates
    "\ud800-\udfff"  # lone surrogates (os.fsdecode's surrogateescape of undecodable bytes)
)
_UNSAFE_KEEP_LINES = re.compile(f"[{_UNSAFE}]")
_UNSAFE_ONE_LINE = re.compile(f"[{_UNSAFE}\t\n]")
_MD_ALWAYS = re.compile(r"([\\`*_{}\[\]#|~!])")  # ( ) need no escape once [ ] are escaped
# a list marker, thematic break or setext underline at the start (CommonMark: the marker is followed by
# whitespace or the end; "-2+3" and "0.5" are text and stay as they are)
_MD_LINE_START = re.compile(r"^(\s*)([+\-=](?=\s|$|[\-=\s]*$)|\d{1,9}(?=[.)](\s|$)))")


def _escape(m: re.Match) -> str:
    c = ord(m.group(0))
    if c < 0x100:
        return f"\\x{c:02x}"
    return f"\\u{c:04x}"


def _escape_line_start(m: re.Match) -> str:
    lead, mark = m.group(1), m.group(2)
    return lead + (mark + "\\" if mark.isdigit() else "\\" + mark)


def console_text(s: object, *, keep_newlines: bool = True) -> str:
    """``str(s)`` with control characters, bidi controls and lone surrogates escaped visibly (``\\x1b``).

    ``keep_newlines=False`` also escapes newline and tab (one-line fields: an item id, a file name).

    Parameters
    ----------
    s : object
        The received value, written as ``str(s)``.
    keep_newlines : bool, default True
        Keep newline and tab as they are; False escapes them too.

    Returns
    -------
    str
        The text with every unsafe character escaped; safe for a terminal.
    """
    pattern = _UNSAFE_KEEP_LINES if keep_newlines else _UNSAFE_ONE_LINE
    return pattern.sub(_escape, str(s))


#: a terminal control sequence (ECMA-48 / ISO 6429), 7- or 8-bit: a control string (OSC, DCS, SOS, PM, APC) up to
#: its terminator (BEL or ST), a CSI sequence (parameters, intermediates, final byte), or another escape
_TERMINAL_SEQUENCE = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"  # control strings
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erasures
    r"|\x1b[ -/]*[0-~]"  # other escapes (nF, Fp, Fe, Fs)
)
#: what is left to remove: the unsafe characters but tab, newline and carriage return (line breaks of the text)
_RESPONSE_UNSAFE = re.compile("[" + _UNSAFE.replace("\x0b-\x1f", "\x0b\x0c\x0e-\x1f") + "]")


def response_text(s: object) -> str:
    """The text a received response says, as a reader sees it on a page: ``str(s)`` with every terminal control
    sequence removed with what it carries (a window title, a colour, a cursor move) and then every other control
    character, bidi control and lone surrogate removed (tab, newline and carriage return kept). For parsing and
    scoring a model's answer, never for display (a sink escapes the raw text instead).

    Parameters
    ----------
    s : object
        A received response, read as ``str(s)``.

    Returns
    -------
    str
        The response without control sequences or control characters; printable text unchanged.
    """
    return _RESPONSE_UNSAFE.sub("", _TERMINAL_SEQUENCE.sub("", str(s)))


def console_fields(obj):
    """``obj`` (JSON-like: dicts, lists, tuples, scalars) with every string, keys included, made one line by
    ``console_text(keep_newlines=False)``: received values ready to be formatted into console lines.

    Parameters
    ----------
    obj : object
        A JSON-like value: dicts, lists, tuples and scalars, nested.

    Returns
    -------
    object
        The same structure (lists stay lists, tuples tuples) with every string, dict keys included, passed
        through ``console_text(keep_newlines=False)``; other scalars unchanged.
    """
    if isinstance(obj, str):
        return console_text(obj, keep_newlines=False)
    if isinstance(obj, dict):
        return {console_fields(k): console_fields(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(console_fields(v) for v in obj)
    return obj


#: a cell's unsafe characters: one line (newline and tab escaped too), or keeping newlines (multi-line text)
_CELL_UNSAFE = {False: f"{_UNSAFE}\t\n", True: f"{_UNSAFE}\t"}
#: in a cell: a backslash that would read as an escape (doubled), or an unsafe character (``\xNN``, ``\uNNNN``)
_CELL_ESCAPE = {lines: re.compile(rf"\\(?=\\|x[0-9a-f]{{2}}|u[0-9a-f]{{4}}|[{chars}])|[{chars}]")
                for lines, chars in _CELL_UNSAFE.items()}
_CELL_UNESCAPE = re.compile(r"\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4})")


def _cell_escape(m: re.Match) -> str:
    return "\\\\" if m.group(0) == "\\" else _escape(m)


def csv_cell(value, *, keep_newlines: bool = False):
    """One CSV/TSV cell made safe: a string starting with ``= + - @``, tab, CR or ``'`` gets a leading ``'``
    (OWASP); control characters (newlines and tabs included, unless ``keep_newlines``: multi-line text that a
    harness shows as it is, quoted by the table writer) are escaped as ``\\xNN``/``\\uNNNN``, and a backslash
    that would then read as an escape is doubled. Non-strings (numbers, None) are unchanged, so a negative
    float stays a number. ``csv_cell_value`` undoes it exactly.

    Parameters
    ----------
    value : object
        The cell's value; only a ``str`` is changed.
    keep_newlines : bool, default False
        Keep newlines (tabs are always escaped): multi-line text that the table writer quotes.

    Returns
    -------
    object
        The safe cell text when ``value`` is a ``str``, else ``value`` itself.
    """
    if not isinstance(value, str):
        return value
    prefix = "'" if value.startswith((*CSV_FORMULA_START, "'")) else ""
    return prefix + _CELL_ESCAPE[keep_newlines].sub(_cell_escape, value)


def csv_cell_value(text):
    """The text a ``csv_cell`` cell was made from: one leading ``'`` dropped, ``\\\\``, ``\\xNN`` and ``\\uNNNN``
    unescaped (a backslash before anything else is itself). Non-strings are returned unchanged.

    Parameters
    ----------
    text : object
        A cell as written by :func:`csv_cell`; only a ``str`` is changed.

    Returns
    -------
    object
        The original string when ``text`` is a ``str``, else ``text`` itself.
    """
    if not isinstance(text, str):
        return text
    if text.startswith("'"):
        text = text[1:]
    return _CELL_UNESCAPE.sub(lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(1)[1:], 16)), text)


def markdown_text(s: object) -> str:
    """Text that Markdown (CommonMark/GFM) shows literally: one line, metacharacters backslash-escaped
    (``\\ ` * _ { } [ ] # | ~ !``, so no link, emphasis, code or table cell can form; ``+ - =``
    and ``1.``/``1)`` at the start), ``& < >`` as HTML entities.

    Parameters
    ----------
    s : object
        The received value, written as ``str(s)``; line breaks and tabs become spaces.

    Returns
    -------
    str
        One line of Markdown that renders as the text of ``s``.
    """
    text = console_text(re.sub(r"[\r\n\t\u2028\u2029]+", " ", str(s)), keep_newlines=False)
    text = _MD_ALWAYS.sub(r"\\\1", text)
    text = _MD_LINE_START.sub(_escape_line_start, text)
    return html.escape(text, quote=False)


def json_text(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with every unsafe character that is still raw
    written as a ``\\uXXXX`` escape. Such characters can only occur inside JSON strings, so the parsed value
    is unchanged; a lone surrogate (an undecodable file name) becomes encodable as UTF-8.

    Parameters
    ----------
    text : str
        A JSON document as ``json.dumps(..., ensure_ascii=False)`` writes it.

    Returns
    -------
    str
        The same JSON document (it parses to the same value) with no raw unsafe character.
    """
    return _UNSAFE_KEEP_LINES.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def html_text(s: object) -> str:
    """Text for HTML element content or a quoted attribute: controls escaped, then ``html.escape(quote=True)``.

    Parameters
    ----------
    s : object
        The received value, written as ``str(s)``.

    Returns
    -------
    str
        HTML-escaped text (``& < > " '`` as entities), control characters escaped visibly.
    """
    return html.escape(console_text(s), quote=True)


def plot_text(s: object) -> str:
    """Text for a matplotlib label, title or tick: every control character escaped (newlines too), and
    ``$`` escaped so mathtext never parses received text.

    Parameters
    ----------
    s : object
        The received value, written as ``str(s)``.

    Returns
    -------
    str
        One line of text that matplotlib shows literally.
    """
    return console_text(s, keep_newlines=False).replace("$", r"\$")
