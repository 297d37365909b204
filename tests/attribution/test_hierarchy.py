"""Issue 56, item 2: the optional hierarchical model. On small simulated ladders, each piece against a twin written
from the model's definition: every item's integral log ∫ Π Bin(c | K, σ(x·a + u)) N(u; 0, σ_u²) du against a fine
grid, the gradient and Hessian of log p(a | y) against central differences of that twin (structure level included),
the draws of each item against its posterior mixed over a; the variance components where the marginal likelihood
peaks; a rung's posterior mean on its raw mean (the joint Laplace approximation this replaced leaned towards 0.5);
every rung and difference of rungs reported with the raw mean beside it; the structure level used only when a
structure holds two items; the report writing hierarchy.csv when asked (``hierarchy=True``).
Coverage in simulation: tests/stats/test_interval_coverage.py (bench)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import log_expit

from tests.support.hierarchy_coverage import simulate
from viewcert.attribution.hierarchy import COLUMNS, _em, _Model, fit_hierarchy

GRID = np.linspace(-12.0, 12.0, 1201)


def _small(seed=3, m=3, n=30):
    return simulate(np.random.default_rng(seed), m=m, n=n, k=3, a=2.0, b=3.0)


def _model(counts, models, rungs, structures=None):
    names_m, names_r = sorted(set(models)), list(dict.fromkeys(rungs))
    n = counts.shape[1]
    s = structures if structures is not None else [str(j) for j in range(n)]
    names_s = sorted(set(s))
    return _Model(np.asarray(counts, float), 3, np.array([names_m.index(x) for x in models]),
                  np.array([names_r.index(x) for x in rungs]), np.array([names_s.index(x) for x in s]),
                  len(names_m), len(names_r), len(names_s), len(names_s) < n)


def _twin_items(counts, models, rungs, structures, a, sd_u, k=3):
    """log p(y_ri | a) of every item at every rung from the definition, on a fine grid (trapezoid rule), with a laid
    out as (β_r, θ_m, δ_mr (m·rungs + r), w_rs (r·structures + s)), binomial coefficients left out."""
    names_m, names_r, names_s = sorted(set(models)), list(dict.fromkeys(rungs)), sorted(set(structures))
    nm, nr, ns = len(names_m), len(names_r), len(names_s)
    s_of = np.array([names_s.index(x) for x in structures])
    out = []
    for r, rung in enumerate(names_r):
        w = a[nr + nm + nm * nr + r * ns + s_of] if ns < counts.shape[1] else np.zeros(counts.shape[1])
        loglik = np.zeros((counts.shape[1], GRID.size))
        for row, (m, rr) in enumerate(zip(models, rungs, strict=True)):
            if rr == rung:
                j = names_m.index(m)
                e = (a[r] + a[nr + j] + a[nr + nm + j * nr + r] + w)[:, None] + GRID[None, :]
                loglik += counts[row][:, None] * log_expit(e) + (k - counts[row])[:, None] * log_expit(-e)
        f = np.exp(loglik - GRID ** 2 / (2 * sd_u ** 2)) / np.sqrt(2 * np.pi * sd_u ** 2)
        out.append(np.log(np.trapezoid(f, GRID, axis=1)))
    return np.concatenate(out)


def _twin_value(counts, models, rungs, structures, a, prec, sd_u):
    return _twin_items(counts, models, rungs, structures, a, sd_u).sum() - 0.5 * np.sum(prec * a ** 2) \
        + 0.5 * np.sum(np.log(prec))


def test_item_integrals_gradient_and_hessian_equal_the_definition():
    """2 models at 2 rungs, 8 items in 4 structures of 2: the quadrature against the grid to 1e-8; the gradient and
    the Hessian (with the score covariance over the nodes) against central differences of the grid's value."""
    counts, models, rungs, _ = simulate(np.random.default_rng(11), m=2, n=8, k=3, a=2.0, b=3.0)
    structures = [f"s{j // 2}" for j in range(8)]
    mod = _model(counts, models, rungs, structures)
    assert mod.with_structure and mod.p == 2 + 2 + 4 + 8
    sds = {"theta": 0.6, "delta": 0.4, "u": 1.1, "w": 0.5}
    prec = mod.prior_precision(sds)
    a = np.random.default_rng(2).normal(0, 0.4, mod.p)
    s = mod.at(prec, 1 / 1.1 ** 2, a, [np.zeros(8), np.zeros(8)], steps=0)
    got = np.concatenate([t["log_marg"] for t in s["rungs"]])
    assert got == pytest.approx(_twin_items(counts, models, rungs, structures, a, 1.1), abs=1e-8)
    value = lambda x: _twin_value(counts, models, rungs, structures, x, prec, 1.1)  # noqa: E731
    assert s["value"] == pytest.approx(value(a), abs=1e-7)
    h, eye = 1e-3, np.eye(mod.p)
    grad = np.array([(value(a + h * e) - value(a - h * e)) / (2 * h) for e in eye])
    assert s["grad"] == pytest.approx(grad, abs=2e-6)
    hess = np.empty((mod.p, mod.p))
    for i in range(mod.p):
        for j in range(i, mod.p):
            ei, ej = h * eye[i], h * eye[j]
            hess[i, j] = hess[j, i] = (value(a + ei + ej) - value(a + ei - ej) - value(a - ei + ej)
                                       + value(a - ei - ej)) / (4 * h * h)
    assert s["hess"] == pytest.approx(-hess, abs=1e-5)


def test_draws_of_each_item_follow_its_posterior_mixed_over_a():
    """At the mode: a ~ N(â, H⁻¹), and each u from p(u | a, y) on the grid (the twin, 100 antithetic pairs of draws of a) against the
    model's draws (nodes at â moved along the slope of E[u | a]): means within 0.02 and SDs within 3 %."""
    counts, models, rungs, _ = _small()
    mod = _model(counts, models, rungs)
    sds = {"theta": 0.5, "delta": 0.3, "u": 1.0}
    s = mod.at(mod.prior_precision(sds), 1.0, np.zeros(mod.p), [np.zeros(30), np.zeros(30)])
    assert s["decrement"] < 1e-8
    a, us = mod.draws(s, np.random.default_rng(0), 20_000)
    assert a.mean(0) == pytest.approx(s["a"], abs=0.02)
    rng = np.random.default_rng(1)
    cov = np.linalg.inv(s["hess"])
    half = rng.multivariate_normal(s["a"], cov, size=100)
    twin_a = np.concatenate([half, 2 * s["a"] - half])  # antithetic pairs: the twin's own Monte Carlo error small
    first = np.zeros((2, 30))
    second = np.zeros((2, 30))
    for x in twin_a:
        for r in range(2):
            off = mod.incidence[mod.rows[r]] @ x
            e = off[:, None, None] + GRID[None, None, :]
            c = mod.counts[r][:, :, None]
            logp = (c * log_expit(e) + (3 - c) * log_expit(-e)).sum(0) - GRID[None, :] ** 2 / 2  # σ_u = 1
            w = np.exp(logp - logp.max(1, keepdims=True))
            w /= w.sum(1, keepdims=True)
            first[r] += (w * GRID).sum(1) / 200
            second[r] += (w * GRID ** 2).sum(1) / 200
    for r in range(2):
        assert us[r].mean(0) == pytest.approx(first[r], abs=0.02)
        assert us[r].std(0) == pytest.approx(np.sqrt(second[r] - first[r] ** 2), rel=0.03)


def test_variance_components_where_the_marginal_likelihood_peaks():
    """EM's σ against the definition of empirical Bayes: moving any σ by ±10 % does not raise log p(y | σ) (the items
    integrated, the Laplace approximation over a) by more than 0.01."""
    counts, models, rungs, _ = _small(seed=5, m=5, n=60)
    mod = _model(counts, models, rungs)
    comps = ["theta", "delta", "u"]
    sds, start, converged = _em(mod, comps)
    assert converged

    def log_marginal(x):
        s = mod.at(mod.prior_precision(x), 1 / x["u"] ** 2, start["a"], start["v"])
        return mod.log_marginal(s)

    best = log_marginal(sds)
    for name in comps:
        for f in (0.9, 1.1):
            assert log_marginal({**sds, name: sds[name] * f}) < best + 0.01, (name, f)


def test_rung_posterior_mean_on_the_raw_mean():
    """β_r's score at the mode: Σ E[σ(η)] = Σ c / K over the rung's arms (β's prior aside), so with every arm
    present a rung's posterior mean is its raw mean; the joint Laplace approximation this replaced put it 0.004
    towards 0.5 (half its standard error) at n = 210, K = 3."""
    counts, models, rungs, _ = simulate(np.random.default_rng(8), m=5, n=210, k=3, a=2.0, b=3.0)
    t = fit_hierarchy(counts, 3, models, rungs, draws=4000, seed=2).table
    for _, row in t.iterrows():
        assert row["mean"] == pytest.approx(row["observed"], abs=0.001), row["rung"]


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
    assert list(fit.record["variance_components_sd"]) == ["theta", "delta", "u"] and fit.record["converged"]


def test_structure_level_only_when_a_structure_holds_two_items():
    counts, models, rungs, _ = _small()
    structures = [f"s{j // 2}" for j in range(30)]  # two items per structure
    fit = fit_hierarchy(counts, 3, models, rungs, structures, draws=500, seed=1)
    assert fit.record["structure_level"] and "w" in fit.record["variance_components_sd"]


def test_a_model_without_an_arm_is_predicted_at_that_rung():
    """Model m2 has no R3 arm: R3's accuracy averages all three models (m2 from its ability and δ's prior), so it
    differs from the raw mean of the two arms there are, and its interval is wider than with the arm."""
    counts, models, rungs, _ = _small()
    keep = [j for j, (m, r) in enumerate(zip(models, rungs, strict=True)) if (m, r) != ("m2", "R3")]
    full = fit_hierarchy(counts, 3, models, rungs, draws=2000, seed=1).table.set_index(["quantity", "rung"])
    part = fit_hierarchy(counts[keep], 3, [models[j] for j in keep], [rungs[j] for j in keep], draws=2000,
                         seed=1).table.set_index(["quantity", "rung"])
    r3 = ("rung accuracy", "R3")
    assert part.loc[r3, "observed"] == pytest.approx(counts[[3, 4]].mean() / 3)
    assert part.loc[r3, "hi"] - part.loc[r3, "lo"] > full.loc[r3, "hi"] - full.loc[r3, "lo"]
    assert part.loc[r3, "lo"] < full.loc[r3, "mean"] < part.loc[r3, "hi"]


def test_the_report_writes_hierarchy_when_asked(tmp_path):
    """(Not asked, no hierarchy.csv: test_evidence_presentation.py, beside a report it writes anyway.)"""
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
    ev = item_evidence(lad, table, bootstrap=BOOT, hierarchy=True)
    rep = write_report(tmp_path, ladder=lad, table=table, evidence=ev)
    assert "hierarchy" in rep.csv and "Every rung and every difference of rungs" in rep.markdown.read_text("utf-8")
    assert ev.hierarchy.record["models"] == 3 and ev.hierarchy.record["rungs"] == ["R4", "R3"]
    written = pd.read_csv(rep.csv["hierarchy"])
    assert list(written.columns) == COLUMNS and len(written) == 3
