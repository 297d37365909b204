"""The certificate-kind section of ``docs/formats.md``, generated from the types of ``formats.records`` (the
registry :data:`~viewcert.formats.records.KINDS` and each kind's record and item dataclasses), so the page
cannot drift from the code. ``python -m viewcert.formats.doc docs/formats.md`` rewrites the section
between the markers; ``tests/certify/test_formats_doc.py`` checks that the committed page equals the generated one."""

from __future__ import annotations

import inspect
import sys
from dataclasses import MISSING, fields
from pathlib import Path

from viewcert.formats.records import ABSENT, DIGEST_SHAPES, KINDS, UNDIGESTED, CeilingCertificate, Summary

BEGIN = "<!-- certificate kinds: generated from viewcert.formats.records by viewcert.formats.doc; do not edit -->"
END = "<!-- end of the generated certificate kinds -->"


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


def with_section(text: str) -> str:
    """``text`` with the generated section replaced (or appended when it has none)."""
    section = certificate_kinds_markdown()
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        return head + section + rest.split(END, 1)[1].lstrip("\n")
    return text.rstrip("\n") + "\n\n" + section


if __name__ == "__main__":  # pragma: no cover - the docs' maintenance command
    page = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/formats.md")
    page.write_text(with_section(page.read_text()))
