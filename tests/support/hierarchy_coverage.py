"""Simulated coverage of the hierarchical model's intervals (issue 56): M models at two rungs (R4, R3), n items, K
samples. Each item has a per-rung accuracy p_ri drawn apart at each rung from its family: Beta(a, b), as the issue
states, or logit-normal (logit p ~ N(mean, sd²): the model's own family, so that a fix is not tuned to one family).
Each model has an ability θ_m ~ N(0, 0.5²) and each arm an effect δ_mr ~ N(0, 0.3²), and R3 a shift of +0.8 logits:
p_mri = σ(logit p_ri + θ_m + δ_mr + 0.8·[r = R3]); c ~ Binomial(K, p_mri). The targets are what the model reports:
each rung's mean of p_mri over the models and items, and their difference (R3 − R4). Used by
``tests/stats/test_interval_coverage.py`` (bench) and ``benchmarks/bench_hierarchy_coverage.py``."""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logit

from viewcert.attribution.hierarchy import fit_hierarchy

#: the item families of the benchmark: Beta(2, 3) (items spread around 0.4), Beta(0.6, 0.4) (most items near always
#: right or always wrong, as the study's arms are) and logit-normal with about Beta(2, 3)'s logit mean and SD
#: (ψ(2) − ψ(3) = −0.5, √(ψ'(2) + ψ'(3)) = 1.02)
FAMILIES = {"Beta(2, 3)": ("beta", 2.0, 3.0), "Beta(0.6, 0.4)": ("beta", 0.6, 0.4),
            "logit-normal(-0.5, 1)": ("logit-normal", -0.5, 1.0)}


def simulate(rng: np.random.Generator, *, m: int, n: int, k: int, a: float, b: float, family: str = "beta"):
    """(counts (2m, n), models, rungs, targets {R4, R3, R3 − R4}); items Beta(a, b), or with ``family =
    'logit-normal'`` logit p ~ N(a, b²)."""
    if family == "beta":
        logit_item = logit(np.clip(rng.beta(a, b, (2, n)), 1e-4, 1 - 1e-4))
    else:
        logit_item = rng.normal(a, b, (2, n))
    theta = rng.normal(0, 0.5, m)
    delta = rng.normal(0, 0.3, (m, 2))
    p = expit(logit_item[None, :, :] + theta[:, None, None] + delta[:, :, None] + np.array([0.0, 0.8])[None, :, None])
    counts = rng.binomial(k, p)  # (m, 2, n)
    rows = np.concatenate([counts[:, 0], counts[:, 1]])
    models = [f"m{i}" for i in range(m)] * 2
    rungs = ["R4"] * m + ["R3"] * m
    t4, t3 = float(p[:, 0].mean()), float(p[:, 1].mean())
    return rows, models, rungs, {"R4": t4, "R3": t3, "R3 − R4": t3 - t4}


def coverage(*, reps: int = 1000, m: int = 5, n: int = 210, k: int = 3, family: str = "Beta(2, 3)", seed: int = 56,
             draws: int = 1000) -> dict:
    """The share of ``reps`` replicates whose 95 % interval holds each target, with the mean interval width, the
    mean error of the posterior mean (bias), and the mean and SD of the standardised error z = (posterior mean −
    target) / (interval width / (2 · 1.96)) over the replicates (N(0, 1) when the intervals are calibrated and
    about normal: mean 0 ± 1/√reps, SD 1 ± 1/√(2 reps))."""
    kind, a, b = FAMILIES[family]
    rng = np.random.default_rng(seed)
    names = ("R4", "R3", "R3 − R4")
    hits, width, error = dict.fromkeys(names, 0), dict.fromkeys(names, 0.0), dict.fromkeys(names, 0.0)
    z = {name: [] for name in names}
    for r in range(reps):
        counts, models, rungs, want = simulate(rng, m=m, n=n, k=k, a=a, b=b, family=kind)
        t = fit_hierarchy(counts, k, models, rungs, draws=draws, seed=seed + r).table
        acc = t[t["quantity"] == "rung accuracy"].set_index("rung")
        d = t[t["quantity"] == "difference of rungs"].iloc[0]
        sign = 1.0 if (d["rung"], d["other"]) == ("R3", "R4") else -1.0
        lo, hi = sorted((sign * d["lo"], sign * d["hi"]))
        got = {"R4": (acc.loc["R4", "lo"], acc.loc["R4", "mean"], acc.loc["R4", "hi"]),
               "R3": (acc.loc["R3", "lo"], acc.loc["R3", "mean"], acc.loc["R3", "hi"]),
               "R3 − R4": (lo, sign * d["mean"], hi)}
        for name, (low, mean, high) in got.items():
            hits[name] += low <= want[name] <= high
            width[name] += (high - low) / reps
            error[name] += (mean - want[name]) / reps
            z[name].append((mean - want[name]) / ((high - low) / (2 * 1.959964)))
    return {**{key: v / reps for key, v in hits.items()},
            "mean_width": width, "mean_error": error, "mean_z": {q: float(np.mean(v)) for q, v in z.items()},
            "sd_z": {q: float(np.std(v, ddof=1)) for q, v in z.items()},
            "setting": {"reps": reps, "models": m, "n": n, "K": k, "family": family, "seed": seed, "draws": draws}}
