"""The typed settings of the ladder, the diagnostics and the item evidence (``attribution.settings``): each
written as the JSON object the report's provenance held before they were typed (hand-written expectations)."""

from __future__ import annotations

import dataclasses

import pytest

from viewcert.attribution.settings import (
    DiagnosticsSettingsRecord,
    EvidenceSettingsRecord,
    LadderSettingsRecord,
)


def test_ladder_settings_write_the_object_the_provenance_holds():
    s = LadderSettingsRecord(threshold=0.3, threshold_rule="strict >", tie_rule="first", scoring="vote", seed=7,
                             n_boot=100, alpha=0.05, interval="percentile", share_cutoff=0.0, chance="1/4",
                             chance_value=0.25, majority_class="1/2", majority_class_value=0.5, n_items=4,
                             ceilings=({"label": "R1 = 1", "value": "1"},))
    assert s.to_dict() == {"threshold": 0.3, "threshold_rule": "strict >", "tie_rule": "first", "scoring": "vote",
                           "seed": 7, "n_boot": 100, "alpha": 0.05, "interval": "percentile", "share_cutoff": 0.0,
                           "chance": "1/4", "chance_value": 0.25, "majority_class": "1/2",
                           "majority_class_value": 0.5, "n_items": 4, "ceilings": [{"label": "R1 = 1", "value": "1"}]}
    assert (s.n_items, s.chance, s.tie_rule) == (4, "1/4", "first")
    with pytest.raises((dataclasses.FrozenInstanceError, ValueError)):  # a frozen model: pydantic's error
        s.n_items = 5  # type: ignore[misc]


def test_diagnostics_and_evidence_settings_write_their_objects():
    d = DiagnosticsSettingsRecord(alpha=0.05, seed=1, n_boot=10, prompts=None,
                                  constraints="implicit: a parseable answer", text_ceiling=None)
    assert d.to_dict() == {"alpha": 0.05, "seed": 1, "n_boot": 10, "prompts": None,
                           "constraints": "implicit: a parseable answer", "text_ceiling": None}
    e = EvidenceSettingsRecord(status_ceiling=None, samples_interval="two-level", shortcut_evidence="none given",
                               samples_seed=3, samples_n_boot=20, alpha=0.1, tie_rule="none")
    assert e.to_dict() == {"status_ceiling": None, "samples_interval": "two-level", "shortcut_evidence": "none given",
                           "samples_seed": 3, "samples_n_boot": 20, "alpha": 0.1, "tie_rule": "none"}
