"""The generated sections of ``docs/formats.md``, read from the models' field descriptions
(``Field(description=...)``), so the page cannot drift from the code: the certificate kinds (each kind's model,
its items and summary) and one table per section model of :data:`SECTION_MODULES`.
``python -m viewcert.formats.doc docs/formats.md`` rewrites the sections between their markers;
``tests/formats/test_formats_doc.py`` checks that the committed page equals the generated one."""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from viewcert.formats import (
    image_sections,
    item_sections,
    recovery_sections,
    settings_sections,
    summary_sections,
)
from viewcert.formats.model import (
    Bool,
    Count,
    List,
    MaybeList,
    MaybeNumber,
    MaybeObject,
    MaybeText,
    NonEmptyList,
    Number,
    Object,
    PositiveCount,
    Text,
    TextOrObject,
)
from viewcert.formats.records import (
    HEX_DIGEST_FORMATS,
    JSON_KINDS,
    UNDIGESTED,
    CeilingCertificate,
    Certificate,
    Summary,
)
from viewcert.formats.table import ItemsTable, ShardRecord, StreamedCertificate

__all__ = ["model_table", "models_markdown", "with_block", "with_section"]

BEGIN = "<!-- certificate kinds: generated from viewcert.formats.records by viewcert.formats.doc; do not edit -->"
END = "<!-- end of the generated certificate kinds -->"
SECTIONS_BEGIN = ("<!-- typed sections: generated from the section models of viewcert.formats by "
                  "viewcert.formats.doc; do not edit -->")
SECTIONS_END = "<!-- end of the generated typed sections -->"
#: the modules whose public models get a table, in this order (each in source order)
SECTION_MODULES = (item_sections, summary_sections, settings_sections, image_sections, recovery_sections)
#: how a JSON kind is named in a table
_KIND_NAMES = {Count: "count", PositiveCount: "count ≥ 1", Number: "number", Text: "text", Bool: "true/false",
               Object: "object", List: "list", NonEmptyList: "list (not empty)", TextOrObject: "text or object",
               MaybeText: "text (never null)", MaybeNumber: "number (never null)", MaybeObject: "object (never null)",
               MaybeList: "list (never null)"}


def _doc(cls: type) -> str:
    return " ".join((cls.__doc__ or "").split())


def type_name(annotation: Any) -> str:
    """A field's annotation as a table names it: its JSON kind (``count``, ``number or null``), a model by
    its name, a list or an object of them."""
    for k, name in _KIND_NAMES.items():
        if annotation == k:
            return name
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        names = [type_name(a) for a in args if a is not type(None)]
        return " or ".join(names) + (" or null" if type(None) in args else "")
    if origin in (list, tuple):
        return f"list of {type_name(args[0])}"
    if origin is dict:
        return f"object of {type_name(args[1])}"
    if origin is typing.Annotated:
        return "text"  # a text of a stated set (the description names it)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation.__name__
    return "any JSON value"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def model_table(cls: type[BaseModel]) -> list[str]:
    """The Markdown table of the model ``cls``: per field its name, its kind and its description; a required
    field says so, every other is written when it applies.

    Parameters
    ----------
    cls : type
        A pydantic model (a certificate kind, a section, a settings record).

    Returns
    -------
    list of str
        The table's lines.
    """
    rows = ["| field | type | meaning |", "|---|---|---|"]
    for name, f in cls.model_fields.items():
        need = "required" if f.is_required() else ""
        default = f.default if not f.is_required() and f.default is not None else None
        meaning = "; ".join(x for x in (f.description or "", need,
                                        f"default `{default!r}`" if default is not None else "") if x)
        kind = next((n for k, n in _KIND_NAMES.items() if typing.get_args(k)[1] in f.metadata), None)
        rows.append(f"| `{f.alias or name}` | {_cell(kind or type_name(f.annotation))} | {_cell(meaning)} |")
    return rows


def models_markdown(classes: Sequence[type[BaseModel]], begin: str, end: str, title: str, intro: str) -> str:
    """A generated section of ``docs/formats.md``: ``title``, ``intro`` and per model its name (with the JSON
    path it is read from, its ``SOURCE``, when it has one), its docstring and :func:`model_table`.

    Parameters
    ----------
    classes : sequence of type
        The models, in the order shown.
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
        source = getattr(cls, "SOURCE", "")
        where = f" (`{source}`)" if source else ""
        out += [f"### `{cls.__name__}`{where}", "", _doc(cls), ""] + model_table(cls) + [""]
    out.append(end)
    return "\n".join(out) + "\n"


def certificate_kinds_markdown() -> str:
    """The generated section of the certificate kinds (Markdown, ending in a newline)."""
    out = [BEGIN, "", "## Certificate kinds", "",
           "Every certificate is read by one reader, `viewcert.formats.read` (`formats.reader`): it checks the "
           "`format` against the kinds below and the digest against the content, and returns the typed "
           "certificate. The digest of every kind: SHA-256 of the compact canonical JSON (sorted keys) of every "
           f"top-level key except {', '.join(f'`{k}`' for k in UNDIGESTED)}, written as "
           "`{\"algorithm\": \"sha256\", \"scope\": ..., \"value\": HEX}`"
           + "".join(f"; `{fmt}` wrote the bare hex value" for fmt in HEX_DIGEST_FORMATS)
           + ". A digest that does not match is refused in one line (exit 2). Keys a model does not name are "
           "kept as they are.", ""]
    kinds: tuple[type[Certificate], ...] = (*JSON_KINDS, StreamedCertificate)
    for cls in kinds:
        out += [f"### `{cls.__name__}`: {cls.WHAT}", "",
                f"Formats read: {', '.join(f'`{f}`' for f in cls.FORMATS)} (written: `{cls.written_format()}`), "
                f"by `{cls.PRODUCER}`.", "", _doc(cls), ""] + model_table(cls) + [""]
        items = cls.model_fields.get("items")
        item = typing.get_args(items.annotation)[0] if items is not None else None
        if isinstance(item, type):
            out += [f"Each of `items[]` (`{item.__name__}`): {_doc(item)}", ""] + model_table(item) + [""]
        if cls is CeilingCertificate:
            out += [f"`summary` (`Summary`): {_doc(Summary)}", ""] + model_table(Summary) + [""]
        if cls is StreamedCertificate:
            for m in (ItemsTable, ShardRecord):
                out += [f"`{m.SOURCE}` (`{m.__name__}`): {_doc(m)}", ""] + model_table(m) + [""]
    out.append(END)
    return "\n".join(out) + "\n"


def section_classes() -> list[type[BaseModel]]:
    """The public models of :data:`SECTION_MODULES`, module by module, each in its ``__all__`` order of
    definition."""
    out: list[type[BaseModel]] = []
    for mod in SECTION_MODULES:
        own = [c for name, c in vars(mod).items() if isinstance(c, type) and issubclass(c, BaseModel)
               and c.__module__ == mod.__name__ and not name.startswith("_")]
        out += own  # vars() keeps the order of definition
    return out


def sections_markdown() -> str:
    """The generated section-model tables (Markdown, ending in a newline)."""
    mods = ", ".join(f"`{m.__name__.rsplit('.', 1)[1]}`" for m in SECTION_MODULES)
    return models_markdown(
        section_classes(), SECTIONS_BEGIN, SECTIONS_END, "Typed sections",
        "A JSON object inside a certificate or a manifest is read as a typed section (a model of "
        f"`viewcert.formats`: {mods}), named here with the JSON path it is read from. Every field is written when "
        "it applies (a key the object does not have stays unset and is not written back); keys a section does "
        "not name are kept as they are, so `from_dict(d).to_dict() == d`.")


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
