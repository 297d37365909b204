"""docs/formats.md documents the certificate kinds from the types (issue 26) and every typed section and
attribution settings record with a table of its own (issue 41): the committed sections equal the ones generated
from ``formats.records``, the ``Section`` classes of ``formats`` (regenerate both with ``python -m
viewcert.formats.doc``) and ``attribution.settings`` (``python -m viewcert.attribution.settings``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from viewcert.attribution.settings import (
    SETTINGS_BEGIN,
    SETTINGS_END,
    DiagnosticsSettingsRecord,
    EvidenceSettingsRecord,
    LadderSettingsRecord,
    settings_markdown,
)
from viewcert.formats.doc import (
    BEGIN,
    END,
    certificate_kinds_markdown,
    field_meanings,
    record_table,
    section_classes,
    sections_markdown,
    undocumented,
    with_section,
)
from viewcert.formats.records import ABSENT, KINDS

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


def test_every_typed_section_and_settings_record_has_its_table_on_the_page():
    """Issue 41: each public Section class of formats (item, summary, settings sections) and each attribution
    settings record has a table of its own, generated from its dataclass fields; the committed page holds them."""
    text = PAGE.read_text()
    classes = section_classes()
    assert {c.__name__ for c in classes} >= {"OracleReport", "ItemCeiling", "Kinds", "RateBound", "TaskSummary",
                                             "InteractionSummary", "Tolerances", "TaskProtocol",
                                             "ExportSettingsRecord"}
    assert not any(c.__name__.startswith("_") for c in classes)  # a private base is no section of the page
    for cls in classes:
        assert f"### `{cls.__name__}` (`{cls.SOURCE}`)" in text
    for cls in (LadderSettingsRecord, DiagnosticsSettingsRecord, EvidenceSettingsRecord):
        assert f"### `{cls.__name__}`" in text
    # fields read from the dataclasses, inherited ones too (TaskSummary's ``all`` is its base's)
    md = sections_markdown()
    assert "| `delta_angstrom` | `float` |" in md and "| `all` | `TaskGroup` |" in md
    assert "| `n_items` | `int` | the items of the universe every arm is scored on; required |" in settings_markdown()
    head, rest = text.split(SETTINGS_BEGIN, 1)
    assert SETTINGS_BEGIN + rest.split(SETTINGS_END, 1)[0] + SETTINGS_END + "\n" == settings_markdown(), \
        "docs/formats.md is stale: run python -m viewcert.attribution.settings docs/formats.md"


def test_a_record_table_reads_names_annotations_defaults_and_comments():
    """The table of a hand-written dataclass: a ``#:`` comment above a field and one after it are its meaning, a
    docstring clause naming it in double backticks otherwise; a linter's noqa is not a meaning."""

    @dataclasses.dataclass(frozen=True)
    class Planted:
        """A planted record: ``depth`` (Å, below the surface), and ``name``."""

        #: how many
        count: int
        depth: float | None = None
        name: str = ABSENT  # noqa: A003 - a pragma
        label: str = "x"  # its label, in words
        extra: dict = dataclasses.field(default_factory=dict)

    assert record_table(Planted) == [
        "| field | type | meaning |", "|---|---|---|",
        "| `count` | `int` | how many; required |",
        "| `depth` | `float \\| None` | ``depth`` (Å, below the surface); default `None` |",
        "| `name` | `str` |  |",
        "| `label` | `str` | its label, in words; default `'x'` |"]


def test_every_field_of_every_typed_section_and_settings_record_says_what_it_is():
    """Every field of every typed section (and attribution settings record) has a meaning in its table: a field
    added without a comment (or a docstring clause naming it) fails here, before it reaches the page blank."""
    classes = [*section_classes(), LadderSettingsRecord, DiagnosticsSettingsRecord, EvidenceSettingsRecord]
    missing = {c.__name__: undocumented(c) for c in classes if undocumented(c)}
    assert not missing, f"fields without a meaning (add a #: comment above each): {missing}"
    for md in (sections_markdown(), settings_markdown()):
        rows = [r for r in md.splitlines() if r.startswith("| `")]
        blank = [r for r in rows if not r.rsplit("|", 2)[1].strip()]
        assert rows and not blank, blank
    # spot checks of units and frames, read from the sections' own comments
    md = sections_markdown()
    assert "| `margin` | `float \\| None` | the phantom margin, in units of δ (dimensionless, not Å)" in md
    assert "| `near_miss_point` | `list \\| None` | the near-miss tuple's least-squares point [x, y, z] (Å, the " \
           "rendered cell's Cartesian frame" in md
    assert "| `lower` | `float` | the lower end, a rate in [0, 1]" in md


def test_a_field_without_a_meaning_is_found_and_shows_a_blank_cell():
    """The check above, on a planted record: the field with no comment is named, the documented ones are not, and
    its table row is the blank cell the check forbids (a default is no meaning)."""

    @dataclasses.dataclass(frozen=True)
    class Planted:
        """A planted record: ``named`` (Å, said in the docstring)."""

        #: a count of things
        counted: int = 0
        named: float = 1.0
        bare: str = ABSENT
        pragma: str = ABSENT  # noqa: A003 - a pragma is no meaning
        extra: dict = dataclasses.field(default_factory=dict)

    assert undocumented(Planted) == ["bare", "pragma"]
    assert field_meanings(Planted) == {"counted": "a count of things", "named": "``named`` (Å, said in the docstring)"}
    assert record_table(Planted)[-2:] == ["| `bare` | `str` |  |", "| `pragma` | `str` |  |"]
