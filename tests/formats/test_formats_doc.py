"""docs/formats.md documents every certificate kind, every typed section and every attribution settings record
with a table of its own, generated from the models' field descriptions (``Field(description=...)``): the committed
sections equal the generated ones (regenerate with ``python -m viewcert.formats.doc docs/formats.md`` and
``python -m viewcert.attribution.settings docs/formats.md``), and every field says what it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from viewcert.attribution.settings import (
    SETTINGS_BEGIN,
    SETTINGS_END,
    DiagnosticsSettingsRecord,
    EvidenceSettingsRecord,
    LadderSettingsRecord,
    settings_markdown,
)
from viewcert.formats.doc import BEGIN, END, certificate_kinds_markdown, section_classes, with_section
from viewcert.formats.export import ExportManifest
from viewcert.formats.ladder import LadderInput, LadderManifest, R1CountsRecord
from viewcert.formats.records import JSON_KINDS, Summary
from viewcert.formats.table import ItemsTable, ShardRecord, StreamedCertificate

PAGE = Path(__file__).resolve().parents[2] / "docs" / "formats.md"
#: every model whose fields the page documents (the kinds' items reached through their ``items`` field)
MODELS = [*JSON_KINDS, StreamedCertificate, ItemsTable, ShardRecord, Summary, ExportManifest, LadderInput,
          LadderManifest, R1CountsRecord, LadderSettingsRecord, DiagnosticsSettingsRecord, EvidenceSettingsRecord,
          *section_classes()]


def test_committed_page_equals_the_generated_one():
    text = PAGE.read_text()
    assert with_section(text) == text, "docs/formats.md is stale: run python -m viewcert.formats.doc docs/formats.md"
    head, rest = text.split(SETTINGS_BEGIN, 1)
    assert SETTINGS_BEGIN + rest.split(SETTINGS_END, 1)[0] + SETTINGS_END + "\n" == settings_markdown(), \
        "docs/formats.md is stale: run python -m viewcert.attribution.settings docs/formats.md"


def test_the_section_names_every_kind_and_format():
    md = certificate_kinds_markdown()
    assert md.startswith(BEGIN) and md.rstrip().endswith(END)
    for cls in (*JSON_KINDS, StreamedCertificate):
        assert f"### `{cls.__name__}`" in md and all(f"`{f}`" in md for f in cls.FORMATS)
    # a task item's field, its kind and that it is required, from TaskItemRecord (hand-written expectation)
    assert "| `n_consistent` | count ≥ 1 | a count (≥ 1) of the answers consistent with the views; required |" in md
    assert "`viewcert-interaction-benchmark/1` wrote the bare hex value" in md


def test_every_typed_section_and_settings_record_has_its_table_on_the_page():
    text = PAGE.read_text()
    names = {c.__name__ for c in section_classes()}
    assert names >= {"OracleReport", "ItemCeiling", "Kinds", "RateBound", "TaskSummary", "InteractionSummary",
                     "Tolerances", "TaskProtocol", "ExportSettingsRecord"}
    assert not any(n.startswith("_") for n in names)  # a private base is no section of the page
    for cls in section_classes():
        assert f"### `{cls.__name__}` (`{cls.SOURCE}`)" in text
    for cls in (LadderSettingsRecord, DiagnosticsSettingsRecord, EvidenceSettingsRecord):
        assert f"### `{cls.__name__}`" in text
    assert "| `delta_angstrom` | number (never null) |" in text and "| `all` | TaskGroup or null |" in text
    assert "| `n_items` | count | the items of the universe every arm is scored on; required |" in settings_markdown()


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_every_field_says_what_it_is(cls: type[BaseModel]):
    """A field with no description would show a blank meaning cell (its kind is no meaning)."""
    blank = [name for name, f in cls.model_fields.items() if not (f.description or "").strip()]
    assert not blank, f"{cls.__name__}: fields without a description: {blank}"
