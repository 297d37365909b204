"""viewcert.sanitize on hand-made hostile strings: every expected output below is written out by hand from the
rule (OWASP's CSV-injection rule, CommonMark's backslash escapes, ``html.escape``), not copied from the code."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from viewcert.sanitize import console_text, csv_cell, html_text, markdown_text, plot_text, response_text

OSC = "\x1b]0;pwned\x07"  # retitles an xterm
CSI = "\x1b[2J\x1b[31mred"  # clears the screen, turns red
BIDI = "invoice\u202egnp.exe"  # shows as 'invoiceexe.png'


def _no_control(s: str) -> bool:
    return not any(unicodedata.category(c) in ("Cc", "Cs") or 0x202A <= ord(c) <= 0x202E
                   or 0x2066 <= ord(c) <= 0x2069 for c in s if c not in "\n\t")


@pytest.mark.parametrize("raw, expected", [
    (OSC, r"\x1b]0;pwned\x07"),
    (CSI, r"\x1b[2J\x1b[31mred"),
    (BIDI, r"invoice\u202egnp.exe"),
    ("\u2066x\u2069", r"\u2066x\u2069"),
    ("a\rb", r"a\x0db"),
    ("del\x7f", r"del\x7f"),
    ("c1 csi \x9b31m", r"c1 csi \x9b31m"),
    ("bad byte \udcff", r"bad byte \udcff"),
    ("two\nlines\tand tab", "two\nlines\tand tab"),
    ("plain ÅØ 結晶 α-quartz = (1 + 2)", "plain ÅØ 結晶 α-quartz = (1 + 2)"),
])
def test_console_text(raw, expected):
    assert console_text(raw) == expected


def test_console_fields():
    from viewcert.sanitize import console_fields

    got = console_fields({"id\n": ["a\nb", ("c\x1b",)], "n": 2, "x": None})
    assert got == {r"id\x0a": [r"a\x0ab", (r"c\x1b",)], "n": 2, "x": None}


def test_console_text_one_line():
    assert console_text("a\nb\tc", keep_newlines=False) == r"a\x0ab\x09c"


@pytest.mark.parametrize("raw, expected", [
    ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
    ("-2+3", "'-2+3"),
    ("+1", "'+1"),
    ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
    ("\t=1", r"'\x09=1"),
    ("\r=1", r"'\x0d=1"),
    ("a=b", "a=b"),  # only the first character matters
    ("mp-149", "mp-149"),
    ("line\nbreak", r"line\x0abreak"),
    (OSC, r"\x1b]0;pwned\x07"),
])
def test_csv_cell_strings(raw, expected):
    assert csv_cell(raw) == expected


@pytest.mark.parametrize("value", [-2.5, -3, 0, 1.0e-9, None, True, float("nan")])
def test_csv_cell_leaves_non_strings(value):
    out = csv_cell(value)
    assert out is value or (out != out and value != value)


@pytest.mark.parametrize("raw, expected", [
    ("# heading", r"\# heading"),
    ("  ## h2", r"  \#\# h2"),
    ("a | b", r"a \| b"),
    ("<script>alert(1)</script>", r"&lt;script&gt;alert(1)&lt;/script&gt;"),
    ("*bold* _it_ `code` [l](u)", r"\*bold\* \_it\_ \`code\` \[l\](u)"),
    ("back\\slash", r"back\\slash"),
    ("two\nlines", "two lines"),
    ("- item", r"\- item"),
    ("1. item", r"1\. item"),
    ("2) item", r"2\) item"),
    ("---", r"\---"),
    ("-2+3", "-2+3"),  # not a list item: no space after the marker
    ("0.6667 [0.3, 1.0]", r"0.6667 \[0.3, 1.0\]"),
    ("> quote", "&gt; quote"),
    ("a & b", "a &amp; b"),
    ("# =cmd|' /C calc'!A0 " + OSC, r"\# =cmd\|' /C calc'\!A0 \\x1b\]0;pwned\\x07"),
])
def test_markdown_text(raw, expected):
    assert markdown_text(raw) == expected


@pytest.mark.parametrize("raw, expected", [
    ("<script>alert('x')</script>", "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;"),
    ('"q" & a', "&quot;q&quot; &amp; a"),
    (OSC, r"\x1b]0;pwned\x07"),
])
def test_html_text(raw, expected):
    assert html_text(raw) == expected


@pytest.mark.parametrize("raw, expected", [
    ("$x^2$", r"\$x^2\$"),
    ("a\nb", r"a\x0ab"),
    (OSC, r"\x1b]0;pwned\x07"),
    ("GPT-4o (2024)", "GPT-4o (2024)"),
])
def test_plot_text(raw, expected):
    assert plot_text(raw) == expected


@pytest.mark.parametrize("value, text", [("a\u202eb", '"a\\u202eb"'), ("x\x9by", '"x\\u009by"'),
                                         ("bad\udcff", '"bad\\udcff"'), ("é\n", '"é\\n"')])
def test_json_text(value, text):
    import json

    from viewcert.sanitize import json_text

    assert json_text(json.dumps(value, ensure_ascii=False)) == text and json.loads(text) == value


@given(st.text())
def test_no_raw_control_survives(s):
    """Property: whatever comes in, no control byte, bidi control or lone surrogate comes out, and the
    output encodes as UTF-8 (a console never sees an undecodable file name)."""
    for f in (console_text, markdown_text, html_text, plot_text, csv_cell):
        out = f(s)
        assert _no_control(out), (f.__name__, s, out)
        out.encode("utf-8")
    assert "\n" not in csv_cell(s) and "\n" not in markdown_text(s) and "\n" not in plot_text(s)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Cf", "Zl", "Zp"))))
def test_printable_text_unchanged(s):
    assert console_text(s) == s
    assert plot_text(s) == s.replace("$", r"\$")


def test_plot_text_has_no_missing_glyph(recwarn):
    """matplotlib draws the sanitised text of a hostile name without a missing-glyph warning."""
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ax.set_title(plot_text("# =cmd|' /C calc'!A0 " + OSC + " $x$ \u202e"))
            ax.set_xticks([0, 1], [plot_text("a\x00b"), plot_text("c\td")])
            fig.canvas.draw()
    finally:
        plt.close(fig)


@pytest.mark.parametrize(("received", "shows"), [
    ("\x1b[1mB\x1b[0m", "B"),  # SGR bold and reset (CSI ... m)
    ("\x9b32mcubic\x9b0m", "cubic"),  # the 8-bit CSI introducer
    ("\x1b]0;pwned\x07ANSWER: C", "ANSWER: C"),  # a window title (OSC ... BEL), its text never shown
    ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),  # a hyperlink (OSC 8 ... ST): its text is shown
    ("\x1bPq#0;2\x1b\\hex", "hex"),  # a DCS string (sixel) up to ST
    ("\x1b[2J\x1b[H\x1b[1;31rA", "A"),  # erase, home, scroll region
    ("\x1b(Bcubic\x1b7", "cubic"),  # charset designation (nF) and save cursor (Fp)
    ("cu\x00bic\u202e\ud800", "cubic"),  # a NUL, a bidi override, a lone surrogate
    ("a\tb\r\nc <script>x</script>", "a\tb\r\nc <script>x</script>"),  # tab and line breaks kept; markup is text
    ("\x1b[31", "31"),  # an unfinished CSI (no final byte): ESC [ removed as an escape, the digits are text
])
def test_a_response_is_read_as_a_terminal_shows_it(received, shows):
    """``response_text``: terminal control sequences (ECMA-48) removed with what they carry, then the other control
    characters; printable text, markup included, unchanged (cases worked by hand from ECMA-48's grammar)."""
    assert response_text(received) == shows
