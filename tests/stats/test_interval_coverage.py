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
@pytest.mark.xfail(strict=True, reason="measured: the optional hierarchical model's R4 and R3 − R4 intervals cover 0.91 "
                   "in 200 replicates with Beta(2, 3) items (its item prior is logit-normal): below the 93 % band; open "
                   "(issue 56), the model stays off by default and the report says its intervals are approximate")
def test_hierarchical_intervals_cover_93_to_97_percent():
    from tests.support.hierarchy_coverage import coverage as hierarchy_coverage

    got = hierarchy_coverage(reps=200)  # the benchmark's own settings
    for name in ("R4", "R3", "R3 − R4"):
        assert 0.93 <= got[name] <= 0.97, (name, got[name])
