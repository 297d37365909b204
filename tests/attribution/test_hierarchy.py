"""Issue 56, item 2: the optional hierarchical model. On a small simulated ladder: the block (Schur) Laplace
posterior equals the dense one built independently from the full Hessian, every rung and difference of rungs is
reported with the raw mean beside it, the structure level is used only when a structure holds two items, and the
report writes hierarchy.csv when asked (``hierarchy=True``) and not otherwise. Coverage in simulation:
tests/stats/test_interval_coverage.py (bench)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from scipy.special import expit

from tests.support.hierarchy_coverage import simulate
from viewcert.attribution.hierarchy import _Design, _Posterior, fit_hierarchy


def _small(seed=3):
    return simulate(np.random.default_rng(seed), m=3, n=30, k=3, a=2.0, b=3.0)


def test_block_posterior_equals_the_dense_laplace():
    counts, models, rungs, _ = _small()
    rows, cols = np.nonzero(np.ones_like(counts, bool))
    m_idx = np.array([int(m[1:]) for m in models])[rows]
    r_idx = np.array([0 if r == "R4" else 1 for r in rungs])[rows]
    d = _Design(m_idx, r_idx, cols, cols, 3, 2, 30, 30, False)
    prec = d.prior_precision({"theta": 0.6, "delta": 0.4, "u": 1.2})
    y = counts[rows, cols].astype(float)
    post = _Posterior(d, y, 3, prec, np.zeros(d.p))
    # the dense twin: Newton on the full Hessian X^T W X + diag(prec), then its log-determinant
    z = np.zeros(d.p)
    x = d.x.toarray()
    for _ in range(60):
        p = expit(x @ z)
        g = x.T @ (3 * p - y) + prec * z
        h = x.T @ (x * (3 * p * (1 - p))[:, None]) + np.diag(prec)
        z -= np.linalg.solve(h, g)
    p = expit(x @ z)
    h = x.T @ (x * (3 * p * (1 - p))[:, None]) + np.diag(prec)
    assert post.z == pytest.approx(z, abs=1e-7)
    assert post.logdet() == pytest.approx(np.linalg.slogdet(h)[1], abs=1e-6)
    draws = post.draws(np.random.default_rng(0), 20000)
    cov = np.linalg.inv(h)
    assert np.cov(draws[:, :6].T) == pytest.approx(cov[:6, :6], abs=0.03 * np.abs(cov[:6, :6]).max())
    assert isinstance(d.x, sparse.csr_matrix)


def test_rungs_and_differences_with_the_raw_means():
    counts, models, rungs, _ = _small()
    fit = fit_hierarchy(counts, 3, models, rungs, draws=1000, seed=1)
    t = fit.table
    assert list(t["quantity"]) == ["rung accuracy", "rung accuracy", "difference of rungs"]
    acc = t[t["quantity"] == "rung accuracy"].set_index("rung")
    for r in ("R4", "R3"):
        assert acc.loc[r, "observed"] == pytest.approx(counts[np.array(rungs) == r].mean() / 3)
        assert acc.loc[r, "lo"] < acc.loc[r, "mean"] < acc.loc[r, "hi"]
    d = t.iloc[2]
    assert (d["rung"], d["other"]) == ("R3", "R4")
    assert d["observed"] == pytest.approx(acc.loc["R3", "observed"] - acc.loc["R4", "observed"])
    assert not fit.record["structure_level"] and "one item per structure" in fit.record["note"]


def test_structure_level_only_when_a_structure_holds_two_items():
    counts, models, rungs, _ = _small()
    structures = [f"s{j // 2}" for j in range(30)]  # two items per structure
    fit = fit_hierarchy(counts, 3, models, rungs, structures, draws=500, seed=1)
    assert fit.record["structure_level"] and "w" in fit.record["variance_components_sd"]


def test_the_report_writes_hierarchy_only_when_asked(tmp_path):
    from tests.attribution.test_evidence_presentation import BOOT, _ladder, _rows
    from viewcert.attribution.evidence import item_evidence
    from viewcert.attribution.report import write_report

    rng = np.random.default_rng(4)
    rows = []
    for m, skill in (("p", 0.7), ("q", 0.5), ("s", 0.3)):
        for rung, shift in (("R4", 0.0), ("R3", 0.2)):
            for i in range(20):
                rows += _rows(m, rung, f"i{i:02d}", ["a" if rng.random() < skill + shift else "b" for _ in range(3)],
                              "a")
    lad, table = _ladder(rows)
    ev = item_evidence(lad, table, bootstrap=BOOT)
    assert ev.hierarchy is None and "hierarchy" not in write_report(tmp_path / "a", ladder=lad, table=table,
                                                                    evidence=ev).csv
    ev = item_evidence(lad, table, bootstrap=BOOT, hierarchy=True)
    rep = write_report(tmp_path / "b", ladder=lad, table=table, evidence=ev)
    assert "hierarchy" in rep.csv and "Every rung and every difference of rungs" in rep.markdown.read_text("utf-8")
    assert ev.hierarchy.record["models"] == 3 and ev.hierarchy.record["rungs"] == ["R4", "R3"]
