"""Issue 56, acceptance: every interval the ladder report prints for a K-sample figure covers 93–97 % at nominal
95 % in simulation (n = 210, K = 3, p_i ~ Beta; seeded; ``tests/support/interval_coverage.py``), and the
Beta-Binomial posterior's interval too; ``benchmarks/bench_interval_coverage.py`` writes the same figures to
``benchmarks/results/interval_coverage.json``. The Jeffreys interval (the posterior at K = 1) lies within the exact
Clopper–Pearson interval where both apply (a published property of the two, checked on every count of n = 30)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.interval_coverage import coverage, targets
from viewcert.attribution.posterior import beta_binomial_posterior, jeffreys_interval
from viewcert.stats import clopper_pearson_interval


def test_targets_by_hand():
    """Beta(1, 1) (uniform): E[p] = 1/2, E[p³] = 1/4, E[(1 − p)³] = 1/4, P(Bin(3, p) ≥ 2) = 1/2 (3·B(3,2) + B(4,1)
    = 3/12 + 1/4), pass@2 = 1 − E[(1 − p)²] = 2/3."""
    t = targets(1.0, 1.0, 3)
    assert t[("expected accuracy", 1)] == pytest.approx(0.5)
    assert t[("pass^k", 3)] == pytest.approx(0.25) and t[("consistency", 3)] == pytest.approx(0.5)
    assert t[("majority-vote accuracy", 3)] == pytest.approx(0.5) and t[("pass@k", 2)] == pytest.approx(2 / 3)


@pytest.mark.bench
@pytest.mark.parametrize(("a", "b"), [(2.0, 3.0), (0.6, 0.4)])
def test_every_interval_covers_93_to_97_percent(a, b):
    got = coverage(a, b)  # 1000 replicates, the benchmark's own settings
    for name, c in got.items():
        if name != "setting":
            assert 0.93 <= c <= 0.97, (name, c)


def test_jeffreys_within_clopper_pearson_and_posterior_at_k1():
    for c in range(31):
        lo, hi = jeffreys_interval(c, 30)
        cp = clopper_pearson_interval(c, 30)
        assert cp.lower - 1e-12 <= lo <= hi <= cp.upper + 1e-12
    x = np.zeros((30, 1), bool)
    x[:12] = True
    post = beta_binomial_posterior(x)
    assert (post.lo, post.hi) == jeffreys_interval(12, 30) and post.mu == pytest.approx(0.4)


def test_posterior_holds_a_homogeneous_arm():
    """Every item right 2 of 3 times (κ large: the items alike): μ near 2/3, the interval about the binomial one
    of 420 of 630 samples (Wilson half-width 1.96·√(2/9/630) = 0.037), within a factor of 1.5 of it."""
    x = np.tile(np.array([True, True, False]), (210, 1))
    post = beta_binomial_posterior(x)
    assert post.mu == pytest.approx(2 / 3, abs=0.005)
    half = (post.hi - post.lo) / 2
    assert 0.037 / 1.5 < half < 0.037 * 1.5


@pytest.mark.bench
@pytest.mark.parametrize("family", ["Beta(2, 3)", "Beta(0.6, 0.4)", "logit-normal(-0.5, 1)"])
def test_hierarchical_intervals_cover_93_to_97_percent(family):
    """The optional hierarchical model's intervals (every rung and the difference R3 − R4; 5 models, n = 210, K = 3),
    1000 replicates per item family, the benchmark's own settings (benchmarks/bench_hierarchy_coverage.py; about
    20 minutes on 2 busy cores). Before each item was integrated out (joint Laplace approximation) R4 and R3 − R4
    covered 0.91 in 200 replicates with Beta(2, 3) items: this test was a strict expected failure."""
    from tests.support.hierarchy_coverage import coverage as hierarchy_coverage

    got = hierarchy_coverage(reps=1000, family=family)
    for name in ("R4", "R3", "R3 − R4"):
        assert 0.93 <= got[name] <= 0.97, (name, got[name])


def test_hierarchical_homogeneous_ladder_by_hand():
    """Every item right 1 of 3 times at R4 and 2 of 3 at R3, for each of 5 models: nothing varies (θ, δ and u near
    0), so each rung is one binomial proportion of 5 · 210 · 3 = 3150 samples: mean 1/3 and 2/3, 95 % half-width
    1.96 · √((2/9) / 3150) = 0.0165, and the difference's √2 times that, 0.0233 (within 10 %: the ends are
    quantiles of 4000 draws)."""
    from viewcert.attribution.hierarchy import fit_hierarchy

    counts = np.vstack([np.ones((5, 210), int), np.full((5, 210), 2)])
    t = fit_hierarchy(counts, 3, [f"m{i}" for i in range(5)] * 2, ["R4"] * 5 + ["R3"] * 5, draws=4000, seed=1).table
    half = 1.959964 * np.sqrt(2 / 9 / 3150)
    for rung, other, want, h in (("R4", "", 1 / 3, half), ("R3", "", 2 / 3, half), ("R3", "R4", 1 / 3, half * 2 ** 0.5)):
        row = t[(t["rung"] == rung) & (t["other"] == other)].iloc[0]
        assert row["mean"] == pytest.approx(want, abs=0.001), (rung, other)
        assert (row["hi"] - row["lo"]) / 2 == pytest.approx(h, rel=0.1), (rung, other)


def test_hierarchical_coverage_in_60_replicates():
    """The bench test below in little (60 seeded replicates, 5 models, n = 210, K = 3, Beta(2, 3) items; seconds).
    Calibrated intervals make the standardised error z = (mean − target) / (half-width / 1.96) about N(0, 1), so
    each limit is 3 standard errors of its statistic: |mean z| < 3/√60 = 0.387, SD of z within 1 ± 3/√120 (0.726–
    1.274), and at least 53 of 60 intervals hold their target (P(Bin(60, 0.95) ≤ 52) = 1 %). The joint Laplace fit
    this replaced fails it (mean z 0.41 at R4 on these replicates: its mean leaned towards 0.5); the sharp check of
    that is test_hierarchy.py's posterior mean on the raw mean."""
    from tests.support.hierarchy_coverage import coverage as hierarchy_coverage

    got = hierarchy_coverage(reps=60, family="Beta(2, 3)")
    for name in ("R4", "R3", "R3 − R4"):
        assert abs(got["mean_z"][name]) < 3 / np.sqrt(60), (name, got["mean_z"][name])
        assert abs(got["sd_z"][name] - 1) < 3 / np.sqrt(120), (name, got["sd_z"][name])
        assert got[name] * 60 >= 53, (name, got[name])
