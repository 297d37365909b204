"""The generated sections of ``docs/formats.md``, so the page cannot drift from the code: the certificate kinds
(from the types of ``formats.records``: the registry :data:`~viewcert.formats.records.KINDS` and each kind's
record and item dataclasses) and one table per typed section (every public ``Section`` class of
:data:`SECTION_MODULES`: its JSON path, docstring and fields). The tables are read from the dataclass fields
(names, annotations, defaults) and the comments written on them (:func:`field_comments`), never from the
sections' validation. Every field of a typed section says what it is, with its unit and frame where it has one,
in a ``#:`` comment above it or a comment after it; a field without one (:func:`undocumented`) fails the test. ``python -m viewcert.formats.doc docs/formats.md`` rewrites the sections between their
markers; ``tests/certify/test_formats_doc.py`` checks that the committed page equals the generated one.
:func:`records_markdown` and :func:`with_block` are what a higher layer uses for its own records' section (the
attribution settings: ``python -m viewcert.attribution.settings docs/formats.md``)."""

from __future__ import annotations

import functools
import inspect
import re
import sys
from collections.abc import Sequence
from dataclasses import MISSING, fields, is_dataclass
from pathlib import Path

from viewcert.formats import (
    image_sections,
    item_sections,
    recovery_sections,
    settings_sections,
    summary_sections,
)
from viewcert.formats.fields import Section
from viewcert.formats.records import ABSENT, DIGEST_SHAPES, KINDS, UNDIGESTED, CeilingCertificate, Summary

BEGIN = "<!-- certificate kinds: generated from viewcert.formats.records by viewcert.formats.doc; do not edit -->"
END = "<!-- end of the generated certificate kinds -->"
SECTIONS_BEGIN = "<!-- typed sections: generated from the Section classes of viewcert.formats by viewcert.formats.doc; do not edit -->"
SECTIONS_END = "<!-- end of the generated typed sections -->"
#: the modules whose public ``Section`` classes get a table, in this order (each in source order)
SECTION_MODULES = (item_sections, summary_sections, settings_sections, image_sections, recovery_sections)


def _doc(cls) -> str:
    return " ".join(inspect.getdoc(cls).split())


def _table(cls) -> list[str]:
    rows = ["| field | type | |", "|---|---|---|"]
    for f in fields(cls):
        if f.name == "extra":
            continue
        need = "required" if f.default is MISSING and f.default_factory is MISSING else (
            "written when it applies" if f.default is ABSENT else "optional")
        rows.append(f"| `{f.name}` | `{str(f.type).replace('|', chr(92) + '|')}` | {need} |")
    return rows


def certificate_kinds_markdown() -> str:
    """The generated section (Markdown, ending in a newline)."""
    out = [BEGIN, "", "## Certificate kinds", "",
           "Every certificate is read by one reader, `viewcert.formats.read` (`formats.reader`): it checks the "
           "`format` against the registry below and the digest against the content, and returns the typed "
           "record. The digest of every kind: SHA-256 of the compact canonical JSON (sorted keys) of every "
           f"top-level key except {', '.join(f'`{k}`' for k in UNDIGESTED)}, written as "
           "`{\"algorithm\": \"sha256\", \"scope\": ..., \"value\": HEX}`"
           + "".join(f"; `{fmt}` wrote the bare `{shape}` value" for fmt, shape in sorted(DIGEST_SHAPES.items()))
           + ". A digest that does not match is refused in one line (exit 2). Keys a record does not name are "
           "kept as they are (`extra`).", ""]
    for kind in KINDS.values():
        out += [f"### `{kind.name}`: {kind.what}", "",
                f"Formats read: {', '.join(f'`{f}`' for f in kind.formats)} (written: `{kind.format}`), by "
                f"`{kind.producer}`.", "", _doc(kind.record), ""]
        out += _table(kind.record) + [""]
        out += [f"Each of `items[]` (`{kind.item.__name__}`): {_doc(kind.item)}", ""] + _table(kind.item) + [""]
        if kind.record is CeilingCertificate:
            out += [f"`summary` (`Summary`): {_doc(Summary)}", ""] + _table(Summary) + [""]
    out.append(END)
    return "\n".join(out) + "\n"


#: a field's own line: its name at the class body's indent, its annotation, a trailing comment
_FIELD_LINE = re.compile(r"^(\s*)([A-Za-z_]\w*)\s*:[^#]*?(?:#\s*(.*))?$")


@functools.cache
def _source(klass: type) -> tuple[list[str], int]:
    """(the source lines of the class ``klass``, its first line number), read once per class (a shared base's
    too); ([], 0) when it has no source."""
    try:
        return inspect.getsourcelines(klass)
    except (OSError, TypeError):
        return [], 0


@functools.cache
def field_comments(cls: type) -> dict[str, str]:
    """{field: what its comment says} of the dataclass ``cls`` and its dataclass bases, from their source: the
    ``#:`` lines just above a field, or a comment after it on its line (a linter's ``noqa`` is not a meaning)."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        lines = _source(klass)[0] if is_dataclass(klass) else []
        if not lines:
            continue
        names = {f.name for f in fields(klass)}
        body = len(lines[0]) - len(lines[0].lstrip()) + 4  # the class body's indent
        above: list[str] = []
        for line in lines[1:]:
            text = line.strip()
            if text.startswith("#:"):
                above.append(text[2:].strip())
                continue
            m = _FIELD_LINE.match(line.rstrip("\n"))
            if m and len(m.group(1)) == body and m.group(2) in names:
                trailing = (m.group(3) or "").strip()
                said = " ".join([*above, "" if trailing.startswith(("noqa", "type:")) else trailing]).strip()
                if said:
                    out[m.group(2)] = said
            above = []
    return out


_OPEN, _CLOSE, _STOPS = "([", ")]", ",;:"


def _clause(doc: str, at: int, stop: int) -> str:
    """The clause of ``doc`` around ``doc[at:stop]``: out to the nearest ``,``/``;``/``:`` or sentence end at the
    same bracket depth, or to the bracket enclosing it."""
    depth, i = 0, at
    while i > 0:
        c = doc[i - 1]
        if c in _CLOSE:
            depth += 1
        elif c in _OPEN:
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (c in _STOPS or doc.startswith(". ", i - 1)):
            break
        i -= 1
    depth, j = 0, stop
    while j < len(doc):
        c = doc[j]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (c in _STOPS or doc.startswith(". ", j) or (c == "." and j == len(doc) - 1)):
            break
        j += 1
    return doc[i:j].strip()


def docstring_meanings(cls: type) -> dict[str, str]:
    """{field: the clause of ``cls``'s docstring that names it} for each field the docstring names in double
    backticks (its first mention), when the clause says more than the name."""
    doc = _doc(cls)
    out = {}
    for f in fields(cls):
        k = doc.find(f"``{f.name}``")
        if f.name == "extra" or k < 0:
            continue
        said = re.sub(r"^(and|or)\s+|\s+(and|or)$", "", _clause(doc, k, k + len(f.name) + 4))
        if not re.fullmatch(rf"((the|its|a|an)\s+)?``{re.escape(f.name)}``", said) and said.count("``") % 2 == 0:
            out[f.name] = said  # more than its name; no code span cut in two
    return out


def field_meanings(cls: type) -> dict[str, str]:
    """{field: what it means} of the dataclass ``cls``: its comment (:func:`field_comments`), else the clause of
    the class's docstring naming it (:func:`docstring_meanings`); what the meaning column of its table shows.

    Parameters
    ----------
    cls : type
        A dataclass (a ``Section``, a record, a settings record).

    Returns
    -------
    dict
        Field name -> its meaning, for the fields that have one.
    """
    return {**docstring_meanings(cls), **field_comments(cls)}


def undocumented(cls: type) -> list[str]:
    """The fields of the dataclass ``cls`` (``extra`` aside) with no meaning (:func:`field_meanings`): each would
    show a blank meaning cell in its table (a "required" or a default is no meaning).

    Parameters
    ----------
    cls : type
        A dataclass.

    Returns
    -------
    list of str
        The field names, in field order; empty when every field says what it is.
    """
    said = field_meanings(cls)
    return [f.name for f in fields(cls) if f.name != "extra" and not said.get(f.name, "").strip()]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def record_table(cls: type) -> list[str]:
    """The Markdown table of the dataclass ``cls``: per field (``extra`` aside) its name, its annotation and what
    it means (:func:`field_meanings`): its comment (:func:`field_comments`), else the clause of the class's
    docstring naming it (:func:`docstring_meanings`); a field without a default is marked required, one with
    another default than absent shows it. ``tests/certify/test_formats_doc.py`` fails on a typed section or
    settings record with a field that has no meaning (:func:`undocumented`).

    Parameters
    ----------
    cls : type
        A dataclass (a ``Section``, a record, a settings record).

    Returns
    -------
    list of str
        The table's lines.
    """
    said = field_meanings(cls)
    rows = ["| field | type | meaning |", "|---|---|---|"]
    for f in fields(cls):
        if f.name == "extra":
            continue
        need = ("required" if f.default_factory is MISSING else "") if f.default is MISSING else (
            "" if f.default is ABSENT else f"default `{f.default!r}`")
        meaning = "; ".join(x for x in (said.get(f.name, ""), need) if x)
        rows.append(f"| `{f.name}` | `{_cell(str(f.type))}` | {_cell(meaning)} |")
    return rows


def records_markdown(classes: Sequence[type], begin: str, end: str, title: str, intro: str) -> str:
    """A generated section of ``docs/formats.md``: ``title``, ``intro`` and per class its name (a ``Section``: with
    the JSON path it is read from, its ``SOURCE``), its docstring and :func:`record_table`.

    Parameters
    ----------
    classes : sequence of type
        The dataclasses, in the order shown.
    begin, end : str
        The section's markers.
    title : str
        Its heading.
    intro : str
        Its first paragraph.

    Returns
    -------
    str
        The section (Markdown, from ``begin`` to ``end``, ending in a newline).
    """
    out = [begin, "", f"## {title}", "", intro, ""]
    for cls in classes:
        where = f" (`{cls.SOURCE}`)" if isinstance(cls, type) and issubclass(cls, Section) else ""
        out += [f"### `{cls.__name__}`{where}", "", _doc(cls), ""] + record_table(cls) + [""]
    out.append(end)
    return "\n".join(out) + "\n"


def section_classes() -> list[type]:
    """The public ``Section`` classes of :data:`SECTION_MODULES`, module by module, each in source order."""
    out = []
    for mod in SECTION_MODULES:
        own = [c for name, c in vars(mod).items() if isinstance(c, type) and issubclass(c, Section)
               and c.__module__ == mod.__name__ and not name.startswith("_")]
        out += sorted(own, key=lambda c: _source(c)[1])
    return out


def sections_markdown() -> str:
    """The generated typed-section tables (Markdown, ending in a newline)."""
    mods = ", ".join(f"`{m.__name__.rsplit('.', 1)[1]}`" for m in SECTION_MODULES)
    return records_markdown(
        section_classes(), SECTIONS_BEGIN, SECTIONS_END, "Typed sections",
        "A JSON object inside a certificate or a manifest is read as a typed section (`formats.fields.Section`, "
        f"in `formats`: {mods}): one per object, named here with the JSON path it is read from. Every field is "
        "written when it applies (a key the object does not have stays absent, and is not written back); keys a "
        "section does not name are kept as they are (`extra`), so `from_dict(d).to_dict() == d`.")


def with_block(text: str, begin: str, end: str, section: str) -> str:
    """``text`` with the block from ``begin`` to ``end`` replaced by ``section`` (appended when it has none).

    Parameters
    ----------
    text : str
        The page.
    begin, end : str
        The block's markers.
    section : str
        The new block (from ``begin`` to ``end``).

    Returns
    -------
    str
        The page with the block replaced.
    """
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        return head + section + ("\n" + tail if tail else "")  # a blank line before what follows
    return text.rstrip("\n") + "\n\n" + section


def with_section(text: str) -> str:
    """``text`` with the generated sections of ``formats`` replaced (or appended when it has none): the
    certificate kinds, then the typed sections."""
    text = with_block(text, BEGIN, END, certificate_kinds_markdown())
    return with_block(text, SECTIONS_BEGIN, SECTIONS_END, sections_markdown())


if __name__ == "__main__":  # pragma: no cover - the docs' maintenance command
    page = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/formats.md")
    page.write_text(with_section(page.read_text()))
