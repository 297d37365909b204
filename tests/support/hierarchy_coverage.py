"""Simulated coverage of the hierarchical model's intervals (issue 56): M models at two rungs (R4, R3), n items, K
samples. Each item has a per-rung accuracy p_ri ~ Beta(a, b) (drawn apart at each rung), each model an ability
θ_m ~ N(0, 0.5²) and each arm an effect δ_mr ~ N(0, 0.3²), and R3 a shift of +0.8 logits:
p_mri = σ(logit p_ri + θ_m + δ_mr + 0.8·[r = R3]); c ~ Binomial(K, p_mri). The targets are what the model reports:
each rung's mean of p_mri over the models and items, and their difference (R3 − R4). Used by
``tests/stats/test_interval_coverage.py`` (bench) and ``benchmarks/bench_hierarchy_coverage.py``."""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logit

from viewcert.attribution.hierarchy import fit_hierarchy


def simulate(rng: np.random.Generator, *, m: int, n: int, k: int, a: float, b: float):
    """(counts (2m, n), models, rungs, targets {R4, R3, R3 − R4})."""
    p_item = np.clip(rng.beta(a, b, (2, n)), 1e-4, 1 - 1e-4)
    theta = rng.normal(0, 0.5, m)
    delta = rng.normal(0, 0.3, (m, 2))
    p = expit(logit(p_item)[None, :, :] + theta[:, None, None] + delta[:, :, None] + np.array([0.0, 0.8])[None, :, None])
    counts = rng.binomial(k, p)  # (m, 2, n)
    rows = np.concatenate([counts[:, 0], counts[:, 1]])
    models = [f"m{i}" for i in range(m)] * 2
    rungs = ["R4"] * m + ["R3"] * m
    t4, t3 = float(p[:, 0].mean()), float(p[:, 1].mean())
    return rows, models, rungs, {"R4": t4, "R3": t3, "R3 − R4": t3 - t4}


def coverage(*, reps: int = 200, m: int = 5, n: int = 210, k: int = 3, a: float = 2.0, b: float = 3.0,
             seed: int = 56, draws: int = 1000) -> dict:
    """The share of ``reps`` replicates whose 95 % interval holds each target."""
    rng = np.random.default_rng(seed)
    hits = {"R4": 0, "R3": 0, "R3 − R4": 0}
    for r in range(reps):
        counts, models, rungs, want = simulate(rng, m=m, n=n, k=k, a=a, b=b)
        t = fit_hierarchy(counts, k, models, rungs, draws=draws, seed=seed + r).table
        acc = t[t["quantity"] == "rung accuracy"].set_index("rung")
        d = t[t["quantity"] == "difference of rungs"].iloc[0]
        sign = 1.0 if (d["rung"], d["other"]) == ("R3", "R4") else -1.0
        lo, hi = sorted((sign * d["lo"], sign * d["hi"]))
        hits["R4"] += acc.loc["R4", "lo"] <= want["R4"] <= acc.loc["R4", "hi"]
        hits["R3"] += acc.loc["R3", "lo"] <= want["R3"] <= acc.loc["R3", "hi"]
        hits["R3 − R4"] += lo <= want["R3 − R4"] <= hi
    return {**{key: v / reps for key, v in hits.items()},
            "setting": {"reps": reps, "models": m, "n": n, "K": k, "a": a, "b": b, "seed": seed, "draws": draws}}
