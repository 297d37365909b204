"""The settings each attribution value records of how it was computed, as frozen typed values: the ladder's
(:class:`LadderSettingsRecord`), the diagnostics' (:class:`DiagnosticsSettingsRecord`) and the item evidence's
(:class:`EvidenceSettingsRecord`). Code reads them by attribute (``ladder.settings.n_items``); ``to_dict`` is the
JSON object the report's provenance writes (the same keys and values as before they were typed). Fractions are
text (``"1/4"``) beside their float value; α, thresholds and cut-offs are fractions in [0, 1]; no lengths or
angles here.

``docs/formats.md`` shows one table per record (:func:`settings_markdown`, generated from the models' field
descriptions by ``formats.doc``; ``python -m viewcert.attribution.settings docs/formats.md`` rewrites it, a test
compares)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import Field

from viewcert.formats.doc import models_markdown, with_block
from viewcert.formats.model import Count, Number, Record, Text

__all__ = ["DiagnosticsSettingsRecord", "EvidenceSettingsRecord", "LadderSettingsRecord", "settings_markdown"]

SETTINGS_BEGIN = ("<!-- attribution settings: generated from viewcert.attribution.settings by "
                  "python -m viewcert.attribution.settings; do not edit -->")
SETTINGS_END = "<!-- end of the generated attribution settings -->"


class _SettingsRecord(Record):
    """The JSON object of a settings record: every field in field order, a tuple written as a list."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the settings (a tuple, e.g. the ladder's ``ceilings``, as a list), as the report's
        provenance writes it.

        Returns
        -------
        dict
            One key per field.
        """
        out = self.model_dump()
        return {k: list(v) if isinstance(v, tuple) else v for k, v in out.items()}


class LadderSettingsRecord(_SettingsRecord):
    """What a ladder was built with (``Ladder.settings``): the unscored threshold and its rule, the majority-vote
    tie rule, the scoring, the bootstrap (seed, resamples, α, share cut-off), chance and the majority class (text
    and value), the number of items and the ceilings (each ``Ceiling.to_dict``)."""

    threshold: Number = Field(description="an arm is unscored above it (a fraction in [0, 1), strict >)")
    threshold_rule: Text = Field(description="the unscored rule, in words")
    tie_rule: Text = Field(description="the majority-vote tie rule over repeats: first, alphabetical or none")
    scoring: Text = Field(description=(
        "vote (the majority answer per item) or harness (the mean of the harness's scores)"))
    seed: Count = Field(description="the bootstrap's seed")
    n_boot: Count = Field(description="the bootstrap's resamples")
    alpha: Number = Field(description="α of the intervals (two-sided, 1 − α)")
    interval: Text = Field(description="the intervals' methods, in words")
    share_cutoff: Number = Field(description="the share is suppressed when the lower end of R1 − R4's interval is below it")
    chance: Text = Field(description="chance accuracy, a fraction as text ('1/4')")
    chance_value: Number = Field(description="chance accuracy as a number")
    majority_class: Text = Field(description="the most frequent target's share of the items, a fraction as text")
    majority_class_value: Number = Field(description="the same as a number")
    n_items: Count = Field(description="the items of the universe every arm is scored on")
    ceilings: tuple[dict[str, Any], ...] = Field((), description="each R1 as Ceiling.to_dict writes it")


class DiagnosticsSettingsRecord(_SettingsRecord):
    """What the diagnostics were computed with (``Diagnostics.settings``): the bootstrap's α, seed and resamples,
    where the prompts came from (None: none given), which constraints were checked, and the text ceiling's value
    (None: not computed or uninformative)."""

    alpha: Number = Field(description="α of the bootstrap intervals")
    seed: Count = Field(description="the bootstrap's seed")
    n_boot: Count = Field(description="the bootstrap's resamples")
    prompts: Text | None = Field(description="where the prompts came from (None: none given)")
    constraints: Text = Field(description="which constraints were checked")
    text_ceiling: Number | None = Field(description="the text ceiling's value (None: not computed or uninformative)")


class EvidenceSettingsRecord(_SettingsRecord):
    """What the item evidence was computed with (``ItemEvidence.settings``): the ceiling the statuses read (its
    label; None: no ceiling with per-item outcomes), the repeated samples' interval scheme, where the evidence of
    items answerable without the image came from, the samples' seed and resamples, α and the tie rule."""

    status_ceiling: Text | None = Field(description="the label of the ceiling the statuses read (None: none with per-item outcomes)")
    samples_interval: Text = Field(description="the repeated samples' interval scheme")
    shortcut_evidence: Text = Field(description="where the evidence of items answerable without the image came from")
    samples_seed: Count = Field(description="the samples' bootstrap seed")
    samples_n_boot: Count = Field(description="the samples' bootstrap resamples")
    alpha: Number = Field(description="α of the intervals")
    tie_rule: Text = Field(description="the majority-vote tie rule (the ladder's)")


def settings_markdown() -> str:
    """The attribution-settings section of ``docs/formats.md``: one table per settings record (its fields, their
    types and what the docstring says of them), as ``provenance.json`` writes them.

    Returns
    -------
    str
        The section (Markdown, from its begin marker to its end marker, ending in a newline).
    """
    return models_markdown(
        (LadderSettingsRecord, DiagnosticsSettingsRecord, EvidenceSettingsRecord), SETTINGS_BEGIN, SETTINGS_END,
        "Attribution settings (`provenance.json`)",
        "What each part of a `viewcert ladder` report was computed with, typed (`viewcert.attribution.settings`) and "
        "written by its `to_dict` into the report's `provenance.json`: the ladder's under `ladder.settings`, the "
        "diagnostics' under `diagnostics.settings`, the item evidence's under `items.settings`.")


if __name__ == "__main__":  # pragma: no cover - the docs' maintenance command
    page = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/formats.md")
    page.write_text(with_block(page.read_text(), SETTINGS_BEGIN, SETTINGS_END, settings_markdown()))
