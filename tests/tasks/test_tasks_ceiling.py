"""Benchmark-level ceilings: hand-worked aggregates."""

from __future__ import annotations

import numpy as np
import pytest

from viewcert.tasks.ceiling import build_items, sample_truths, summarise
from viewcert.tasks.identify import identify
from viewcert.tasks.model import ViewSetup


def _structures():
    rng = np.random.default_rng(11)
    return [(f"s{i}", rng.uniform(-5, 5, (15, 3)), rng.choice([6, 7, 8], 15)) for i in range(2)]


def test_zoom_orthographic_summary_hand_worked():
    items = build_items(_structures(), "zoom", ViewSetup())
    results = [identify(it) for it in items]
    s = summarise(items, results)["all"]
    assert s["n"] == 42 and s["unique"] == 0
    assert s["exact_ceiling"]["mean"] == pytest.approx(1 / 21)
    assert s["unique_bound"]["lower"] == 0.0 and s["unique_bound"]["sided"] == "one-sided-lower"
    # every item has the same set, so every bootstrap resample has the same mean
    assert s["exact_ceiling"]["lo95"] == pytest.approx(1 / 21) and s["exact_ceiling"]["hi95"] == pytest.approx(1 / 21)


def test_translation_summary_per_axis_and_clopper_pearson():
    items = build_items(_structures(), "translation", ViewSetup())
    s = summarise(items, [identify(it) for it in items])
    assert s["axis x"]["n"] == 16 and s["axis y"]["n"] == 16 and s["all"]["unique"] == 32
    # 32/32: exact one-sided 95 % lower bound 0.05^(1/32)
    assert s["all"]["unique_bound"]["lower"] == pytest.approx(0.05 ** (1 / 32), rel=1e-9)


def test_seeded_sampling_is_reproducible():
    a = sample_truths(36, 4, np.random.default_rng(3))
    b = sample_truths(36, 4, np.random.default_rng(3))
    assert a == b and len(set(a)) == 4 and a == sorted(a)
    assert sample_truths(5, None, np.random.default_rng(0)) == [0, 1, 2, 3, 4]
