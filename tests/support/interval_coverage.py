"""Simulated coverage of every interval the ladder report prints for K-sample figures (issue 56): n items, K
samples each, per-item accuracies p_i ~ Beta(a, b), one wrong answer label (so a vote is right iff more than half
the samples are, and consistency is all right or all wrong). Each replicate computes the report's own intervals
(``samples.per_item_figures``; Clopper–Pearson for counts, the item bootstrap for means, ``samples.is_count``; the
Beta-Binomial posterior of ``attribution.posterior``) and checks whether they hold the population value, worked from
the Beta moments E[p^j (1 − p)^l] = B(a + j, b + l) / B(a, b):

- expected accuracy E[p]; pass@k E[1 − (1 − p)^k]; pass^k E[p^k];
- majority-vote accuracy P(Bin(K, p) > K/2); consistency E[p^K + (1 − p)^K];
- the posterior's μ = a / (a + b).

Used by ``tests/stats/test_interval_coverage.py`` (bench) and ``benchmarks/bench_interval_coverage.py`` (which writes
``benchmarks/results/interval_coverage.json``)."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betaln

from viewcert import stats as st
from viewcert.attribution.posterior import beta_binomial_posterior
from viewcert.attribution.samples import is_count, item_bootstrap, per_item_figures


def moment(a: float, b: float, j: int, l_: int) -> float:
    """E[p^j (1 − p)^l] for p ~ Beta(a, b)."""
    return math.exp(betaln(a + j, b + l_) - betaln(a, b))


def targets(a: float, b: float, k_max: int) -> dict:
    """The population value of every figure (module docstring), keyed like ``per_item_figures``."""
    out = {("expected accuracy", 1): a / (a + b)}
    for k in range(2, k_max + 1):
        out[("pass@k", k)] = 1 - moment(a, b, 0, k)
        out[("pass^k", k)] = moment(a, b, k, 0)
    out[("majority-vote accuracy", k_max)] = sum(math.comb(k_max, j) * moment(a, b, j, k_max - j)
                                                 for j in range(k_max // 2 + 1, k_max + 1))
    out[("consistency", k_max)] = moment(a, b, k_max, 0) + moment(a, b, 0, k_max)
    return out


def coverage(a: float, b: float, *, n: int = 210, k_max: int = 3, reps: int = 1000, n_boot: int = 2000,
             seed: int = 56, alpha: float = 0.05, posterior: bool = True) -> dict:
    """The share of ``reps`` replicates whose interval holds the population value, per figure (and the posterior).

    Returns
    -------
    dict
        {figure name: coverage (0–1)}, plus ``"setting"``.
    """
    rng = np.random.default_rng(seed)
    want = targets(a, b, k_max)
    hits = dict.fromkeys([*want, "posterior"], 0)
    for r in range(reps):
        p = rng.beta(a, b, n)
        right = rng.random((n, k_max)) < p[:, None]
        answers = np.where(right, 0, 1)
        per = per_item_figures(answers, right, "first")
        idx = st.bootstrap_indices(n, n_boot=n_boot, seed=seed + r)
        for key, v in per.items():
            if is_count(key[0], key[1], k_max):
                bnd = st.clopper_pearson_interval(int(round(float(v.sum()))), n, 1 - alpha)
                lo, hi = bnd.lower, bnd.upper
            else:
                lo, hi = item_bootstrap(v, idx, alpha)
            hits[key] += lo <= want[key] <= hi
        if posterior:
            post = beta_binomial_posterior(right, confidence=1 - alpha)
            hits["posterior"] += post.lo <= a / (a + b) <= post.hi
    out = {f"{m} (k = {k})": hits[(m, k)] / reps for (m, k) in want}
    if posterior:
        out["Beta-Binomial posterior of μ"] = hits["posterior"] / reps
    out["setting"] = {"a": a, "b": b, "n": n, "K": k_max, "reps": reps, "n_boot": n_boot, "seed": seed, "alpha": alpha}
    return out
