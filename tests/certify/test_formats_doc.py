"""docs/formats.md documents the certificate kinds from the types (issue 26): the committed section equals the
one generated from ``formats.records`` (regenerate with ``python -m viewcert.formats.doc``)."""

from __future__ import annotations

from pathlib import Path

from viewcert.formats.doc import BEGIN, END, certificate_kinds_markdown, with_section
from viewcert.formats.records import KINDS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "formats.md"


def test_committed_page_equals_the_generated_one():
    text = PAGE.read_text()
    assert with_section(text) == text, "docs/formats.md is stale: run python -m viewcert.formats.doc"


def test_the_section_names_every_kind_and_format():
    md = certificate_kinds_markdown()
    assert md.startswith(BEGIN) and md.rstrip().endswith(END)
    for kind in KINDS.values():
        assert f"### `{kind.name}`" in md and all(f"`{f}`" in md for f in kind.formats)
    assert "| `n_consistent` | `int` | required |" in md  # a task item's field, from TaskItemRecord
    assert "`viewcert-interaction-benchmark/1` wrote the bare `hex` value" in md
