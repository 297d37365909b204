"""Statistics against closed forms and scipy, plus hypothesis properties."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from scipy import stats as sst

from viewcert import stats as st
from viewcert.errors import InputError


def test_mcnemar_exact_matches_binomial():
    a = np.array([1] * 30 + [0] * 50 + [1] * 5 + [0] * 15, dtype=bool)
    b = np.array([1] * 30 + [0] * 50 + [0] * 5 + [1] * 15, dtype=bool)
    t = st.mcnemar_exact(a, b)
    assert (t.a_only, t.b_only, t.both, t.neither) == (5, 15, 30, 50)
    assert t.p_value == pytest.approx(sst.binomtest(5, 20, 0.5).pvalue)
    assert t.p_value == pytest.approx(2 * sst.binom.cdf(5, 20, 0.5))
    assert st.mcnemar_exact(a, a).p_value == 1.0
    with pytest.raises(InputError):
        st.mcnemar_exact(a, b[:-1])


def test_holm_hand_worked():
    # sorted p: 0.01, 0.02, 0.04 with m = 3 -> 0.03, 0.04, 0.04 (monotone); input order kept
    assert st.holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert st.holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])
    assert st.holm([]) == []
    with pytest.raises(InputError):
        st.holm([1.5])


@given(hst.lists(hst.floats(0, 1), min_size=1, max_size=12))
def test_holm_properties(p):
    adj = st.holm(p)
    assert all(a >= q - 1e-15 and a <= 1 for a, q in zip(adj, p, strict=True))
    order = np.argsort(p, kind="stable")
    assert all(np.diff(np.asarray(adj)[order]) >= -1e-15)


def test_sign_test():
    t = st.sign_test([0.2, 0.3, 0.1, -0.1, 0.0])
    assert (t.n_positive, t.n_negative, t.n_zero) == (3, 1, 1)
    assert t.p_value == pytest.approx(sst.binomtest(3, 4).pvalue)
    assert st.sign_test([0.1] * 9).p_value == pytest.approx(2 / 2**9)


def test_bootstrap_reproducible_with_seed():
    a = st.bootstrap_indices(50, n_boot=200, seed=7)
    b = st.bootstrap_indices(50, n_boot=200, seed=7)
    c = st.bootstrap_indices(50, n_boot=200, seed=8)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.min() >= 0 and a.max() < 50


def _vectors(n4: int, n3: int, n: int, overlap: int) -> tuple[np.ndarray, np.ndarray]:
    r4 = np.zeros(n, bool)
    r3 = np.zeros(n, bool)
    r4[:n4] = True
    r3[n4 - overlap : n4 - overlap + n3] = True
    return r4, r3


def test_share_point_is_exact_from_counts():
    assert st.share_point(48, 95, 210, Fraction(1)) == Fraction(47, 162)
    assert st.share_point(48, 95, 210, Fraction(200, 210)) == Fraction(47, 152)
    assert st.share_point(210, 210, 210, Fraction(1)) is None


def test_paired_bootstrap_share_and_suppression():
    r4, r3 = _vectors(48, 95, 210, 23)
    idx = st.bootstrap_indices(210, n_boot=2000, seed=1)
    b = st.paired_share_bootstrap(r4, r3, Fraction(1), idx)
    assert not b.suppressed and b.share.point == pytest.approx(47 / 162)
    assert b.share.lo < b.share.point < b.share.hi
    assert b.gap.lo < 47 / 210 < b.gap.hi and b.degenerate == 0
    # a model at the ceiling: R1 − R4 is tiny -> suppressed, not clipped
    r4 = np.ones(210, bool)
    r4[:3] = False
    r3 = np.ones(210, bool)
    s = st.paired_share_bootstrap(r4, r3, Fraction(1), idx, share_cutoff=0.05)
    assert s.suppressed and s.share is None and "cutoff 0.05" in s.reason
    assert s.degenerate > 0  # resamples that drew none of the 3 missed items
    # per-item R1 vector: resampled with the items
    r1 = np.ones(210, bool)
    r1[-10:] = False
    r4, r3 = _vectors(48, 95, 210, 23)
    v = st.paired_share_bootstrap(r4, r3, r1, idx)
    assert v.share.point == pytest.approx(float(Fraction(47, 210) / Fraction(200 - 48, 210)))


@settings(max_examples=25, deadline=None)
@given(hst.integers(0, 2**32 - 1), hst.randoms())
def test_share_invariant_to_item_order(seed, rnd):
    rng = np.random.default_rng(seed)
    n = 60
    r4 = rng.random(n) < 0.4
    r3 = rng.random(n) < 0.6
    perm = list(range(n))
    rnd.shuffle(perm)
    perm = np.array(perm)
    c4, c3 = int(r4.sum()), int(r3.sum())
    assert st.share_point(c4, c3, n, Fraction(1)) == st.share_point(int(r4[perm].sum()), int(r3[perm].sum()), n,
                                                                     Fraction(1))
    idx = st.bootstrap_indices(n, n_boot=300, seed=seed % 1000)
    a = st.paired_share_bootstrap(r4, r3, Fraction(1), idx, share_cutoff=0.0)
    # permuting the items and the draws together gives the identical bootstrap distribution
    inv = np.argsort(perm)
    b = st.paired_share_bootstrap(r4[perm], r3[perm], Fraction(1), inv[idx], share_cutoff=0.0)
    assert a.gap == b.gap and a.residual == b.residual and a.degenerate == b.degenerate
    if a.share is not None:
        assert a.share == b.share


def test_bootstrap_median_across_models():
    samples = {"m1": np.array([0.1, 0.2, 0.3, np.nan]), "m2": np.array([0.2, 0.3, 0.4, 0.5]),
               "m3": np.array([0.3, 0.4, 0.5, 0.6])}
    med, dropped = st.bootstrap_median(samples, {"m1": 0.2, "m2": 0.3, "m3": 0.4})
    assert med.point == pytest.approx(0.3) and dropped == 1
    assert med.lo == pytest.approx(np.quantile([0.2, 0.3, 0.4], 0.025))
