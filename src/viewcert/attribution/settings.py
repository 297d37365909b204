"""The settings each attribution value records of how it was computed, as frozen typed values: the ladder's
(:class:`LadderSettingsRecord`), the diagnostics' (:class:`DiagnosticsSettingsRecord`) and the item evidence's
(:class:`EvidenceSettingsRecord`). Code reads them by attribute (``ladder.settings.n_items``); ``to_dict`` is the
JSON object the report's provenance writes (the same keys and values as before they were typed). Fractions are
text (``"1/4"``) beside their float value; α, thresholds and cut-offs are fractions in [0, 1]; no lengths or
angles here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["DiagnosticsSettingsRecord", "EvidenceSettingsRecord", "LadderSettingsRecord"]


def _as_dict(value) -> dict:
    """The fields of the dataclass ``value`` as a JSON object, in field order (a tuple written as a list)."""
    out = {}
    for f in fields(value):
        v = getattr(value, f.name)
        out[f.name] = [dict(x) if isinstance(x, Mapping) else x for x in v] if isinstance(v, tuple) else v
    return out


@dataclass(frozen=True)
class LadderSettingsRecord:
    """What a ladder was built with (``Ladder.settings``): the unscored threshold and its rule, the majority-vote
    tie rule, the scoring, the bootstrap (seed, resamples, α, share cut-off), chance and the majority class (text
    and value), the number of items and the ceilings (each ``Ceiling.to_dict``)."""

    threshold: float
    threshold_rule: str
    tie_rule: str
    scoring: str
    seed: int
    n_boot: int
    alpha: float
    interval: str
    share_cutoff: float
    chance: str
    chance_value: float
    majority_class: str
    majority_class_value: float
    n_items: int
    ceilings: tuple[Mapping[str, Any], ...] = ()

    def to_dict(self) -> dict:
        """The JSON object of the settings (``ceilings`` a list), as the report's provenance writes it.

        Returns
        -------
        dict
            One key per field.
        """
        return _as_dict(self)


@dataclass(frozen=True)
class DiagnosticsSettingsRecord:
    """What the diagnostics were computed with (``Diagnostics.settings``): the bootstrap's α, seed and resamples,
    where the prompts came from (None: none given), which constraints were checked, and the text ceiling's value
    (None: not computed or uninformative)."""

    alpha: float
    seed: int
    n_boot: int
    prompts: str | None
    constraints: str
    text_ceiling: float | None

    def to_dict(self) -> dict:
        """The JSON object of the settings, as the report's provenance writes it.

        Returns
        -------
        dict
            One key per field.
        """
        return _as_dict(self)


@dataclass(frozen=True)
class EvidenceSettingsRecord:
    """What the item evidence was computed with (``ItemEvidence.settings``): the ceiling the statuses read (its
    label; None: no ceiling with per-item outcomes), the repeated samples' interval scheme, where the evidence of
    items answerable without the image came from, the samples' seed and resamples, α and the tie rule."""

    status_ceiling: str | None
    samples_interval: str
    shortcut_evidence: str
    samples_seed: int
    samples_n_boot: int
    alpha: float
    tie_rule: str

    def to_dict(self) -> dict:
        """The JSON object of the settings, as the report's provenance writes it.

        Returns
        -------
        dict
            One key per field.
        """
        return _as_dict(self)
