"""Item quality for the benchmark's builder: which items separate models, and which N items keep their ranking.

**Two-parameter logistic fit.** Respondents are the ladder's scored arms on measured rungs (model × rung), items
the ladder's items, the response whether the arm's vote is right. P(right) = σ(a_j (θ_p − b_j)) with ability θ_p,
difficulty b_j and discrimination a_j > 0. Fitted by joint maximum a posteriori (``scipy.optimize.minimize``,
L-BFGS-B, analytic gradient, ftol 1e-13, gtol 1e-6) under the priors θ ~ N(0, 1), b ~ N(0, 2²), log a ~ N(0, 0.5²): the priors keep an
item every respondent gets right (or wrong) finite and fix the scale. The fit reports scipy's convergence flag
and message, iterations and the largest absolute gradient at the optimum.

**Subset.** The ranking kept is the models' accuracy at one rung (R4 by default) over the full item set. The
proposal draws only from its candidate items (the ladder passes the items the status table keeps: ``clean``),
starts from the most discriminating candidate in each of N bins of difficulty, then swaps one item in for one
out (``numpy.random.default_rng(seed)``), keeping a swap that does not lower Spearman's ρ between the models'
subset and full accuracies, and at equal ρ lowers their mean squared difference; it stops at ``max_swaps``
proposals. It reports Spearman's ρ and Kendall's τ (``scipy.stats``, ties averaged / τ-b) against the full set:
in sample, so the ladder checks it out of sample too (:mod:`.subset_check`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize
from scipy import stats as sps
from scipy.special import expit

from viewcert.errors import InputError

PRIOR_B_SD = 2.0
PRIOR_LOG_A_SD = 0.5
SWAP_BLOCK = 48  # swaps scored at once by propose_subset (about 3 % are accepted on the study)
TARGET_RHO = 0.95
FIT = ("two-parameter logistic P = σ(a_j (θ_p − b_j)); joint MAP, priors θ ~ N(0, 1), b ~ N(0, 2²), "
       "log a ~ N(0, 0.5²); scipy.optimize.minimize L-BFGS-B with analytic gradient")


def _objective(x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Negative log posterior of the 2PL and its gradient; x = (θ (P), b (J), log a (J))."""
    p_, j_ = y.shape
    th, b, la = x[:p_], x[p_:p_ + j_], x[p_ + j_:]
    a = np.exp(la)
    d = th[:, None] - b[None, :]
    z = a[None, :] * d
    nll = float(np.sum(np.logaddexp(0.0, z) - y * z))
    nll += float(th @ th / 2 + b @ b / (2 * PRIOR_B_SD ** 2) + la @ la / (2 * PRIOR_LOG_A_SD ** 2))
    r = expit(z) - y
    g_th = (r * a[None, :]).sum(1) + th
    g_b = -(r * a[None, :]).sum(0) + b / PRIOR_B_SD ** 2
    g_la = (r * z).sum(0) + la / PRIOR_LOG_A_SD ** 2
    return nll, np.concatenate([g_th, g_b, g_la])


@dataclass(frozen=True)
class IrtFit:
    """The fitted 2PL: per respondent ability, per item difficulty and discrimination, and the fit's record."""

    respondents: tuple[str, ...]
    theta: np.ndarray
    difficulty: np.ndarray
    discrimination: np.ndarray
    record: dict


def fit_2pl(y: np.ndarray, respondents: Sequence[str]) -> IrtFit:
    """The 2PL of the module docstring on a respondents × items 0/1 matrix."""
    y = np.asarray(y, dtype=float)
    if y.ndim != 2 or y.shape[0] < 2 or y.shape[1] < 2:
        raise InputError(f"an item-response fit needs at least 2 respondents and 2 items, got {y.shape}", field="irt")
    p_, j_ = y.shape
    res = optimize.minimize(_objective, np.zeros(p_ + 2 * j_), args=(y,), jac=True, method="L-BFGS-B",
                            options={"maxiter": 5000, "ftol": 1e-13, "gtol": 1e-6})
    _, grad = _objective(res.x, y)
    record = {"fit": FIT, "respondents": p_, "items": j_, "converged": bool(res.success), "message": str(res.message),
              "iterations": int(res.nit), "max_abs_gradient": float(np.abs(grad).max()),
              "neg_log_posterior": float(res.fun)}
    return IrtFit(tuple(respondents), res.x[:p_], res.x[p_:p_ + j_], np.exp(res.x[p_ + j_:]), record)


def item_quality(universe: Sequence[str], fit: IrtFit, y: np.ndarray) -> pd.DataFrame:
    """Per item: difficulty, discrimination and the share of respondents right."""
    return pd.DataFrame({"item_id": list(universe), "difficulty": fit.difficulty, "discrimination": fit.discrimination,
                         "respondents_right": np.asarray(y, float).sum(0).astype(int),
                         "respondents": np.full(len(universe), y.shape[0])})


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties sharing their mean rank), as ``scipy.stats.rankdata``."""
    return (x[:, None] > x[None, :]).sum(1) + ((x[:, None] == x[None, :]).sum(1) + 1) / 2


def _score(sub: np.ndarray, f: np.ndarray, full: np.ndarray) -> tuple[float, float]:
    """(Spearman ρ = Pearson of the average ranks, −mean squared difference) of the models' subset accuracies
    against the full ones (``f``: the full accuracies' average ranks less their mean); ρ = −1 when the subset ties
    every model. The average ranks less their mean (M + 1)/2 are half the sum of sign(x_i − x_j) over j (a rank is
    the count below plus half the count equal, self included), so they come from one comparison, exactly (the loop of
    :func:`propose_subset` calls this thousands of times)."""
    r = np.sign(sub[:, None] - sub[None, :]).sum(1) / 2
    den = np.sqrt((r @ r) * (f @ f))
    return (float(r @ f / den) if den > 0 else -1.0), -float(np.mean((sub - full) ** 2))


def _scores(subs: np.ndarray, f: np.ndarray, full: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_score` of each row of ``subs`` (candidates × models), the same numbers: ρ's sums are of
    half-integer products, exact in any order, and the mean squared difference is summed along each row as for
    one row."""
    r = np.sign(subs[:, :, None] - subs[:, None, :]).sum(2) / 2
    den = np.sqrt((r * r).sum(1) * (f @ f))
    rho = np.where(den > 0, (r @ f) / np.where(den > 0, den, 1.0), -1.0)
    return rho, -np.mean((subs - full[None, :]) ** 2, axis=1)


def _start(n_keep: int, difficulty: np.ndarray, discrimination: np.ndarray) -> np.ndarray:
    """The most discriminating item in each of ``n_keep`` equal bins of the items sorted by difficulty."""
    order = np.argsort(difficulty, kind="stable")
    return np.array([b[np.argmax(discrimination[b])] for b in np.array_split(order, n_keep)])


def propose_subset(correct: Mapping[str, np.ndarray], n_keep: int, fit: IrtFit, *, seed: int,
                   max_swaps: int = 4000, candidates: Sequence[int] | None = None) -> tuple[np.ndarray, dict]:
    """(item indices of the proposal, sorted; its record: ρ, τ, swaps tried and accepted) for models →
    per-item correctness at the ranking's rung (module docstring); ``candidates``: the item indices it may hold
    (default every item; the ladder passes the items the status table keeps). The ranking kept is over every
    item."""
    models = sorted(correct)
    mat = np.vstack([np.asarray(correct[m], float) for m in models])
    n = mat.shape[1]
    pool = np.arange(n) if candidates is None else np.asarray(sorted(candidates), dtype=np.int64)
    if not 1 <= n_keep < pool.size:
        raise InputError(f"--subset must be between 1 and {pool.size - 1} (the items"
                         + ("" if candidates is None else " the status table keeps") + f"), got {n_keep}",
                         field="subset")
    if len(models) < 3:
        raise InputError(f"a ranking needs at least 3 models with a scored arm, got {len(models)}", field="subset")
    full = mat.mean(1)
    full_ranks = _ranks(full) - (full.size + 1) / 2
    keep = pool[_start(n_keep, fit.difficulty[pool], fit.discrimination[pool])]
    out = np.setdiff1d(pool, keep)
    sums = mat[:, keep].sum(1)
    best = _score(sums / n_keep, full_ranks, full)
    rng = np.random.default_rng(seed)
    pairs = np.array([(rng.integers(n_keep), rng.integers(out.size)) for _ in range(max_swaps)], dtype=np.int64)
    accepted, t = 0, 0
    while t < max_swaps:  # the swaps in order; a block of them scored at once from the current subset
        i, o = pairs[t:t + SWAP_BLOCK, 0], pairs[t:t + SWAP_BLOCK, 1]
        trials = sums[None, :] - mat[:, keep[i]].T + mat[:, out[o]].T
        rho, neg_mse = _scores(trials / n_keep, full_ranks, full)
        ok = np.flatnonzero((rho > best[0]) | ((rho == best[0]) & (neg_mse >= best[1])))
        if ok.size == 0:
            t += i.size
            continue
        j = int(ok[0])
        keep[i[j]], out[o[j]] = out[o[j]], keep[i[j]]
        sums, best, accepted = trials[j], (float(rho[j]), float(neg_mse[j])), accepted + 1
        t += j + 1
    sub = mat[:, keep].mean(1)
    rho, tau = sps.spearmanr(sub, full).statistic, sps.kendalltau(sub, full).statistic
    return np.sort(keep), {"n": int(n_keep), "items": n, "pool": int(pool.size), "models": models, "spearman_rho": float(rho),
                           "kendall_tau": float(tau), "target_rho": TARGET_RHO, "met": bool(rho >= TARGET_RHO),
                           "swaps_tried": max_swaps, "swaps_accepted": accepted, "seed": seed,
                           "full_accuracy": dict(zip(models, full.tolist(), strict=True)),
                           "subset_accuracy": dict(zip(models, sub.tolist(), strict=True))}


__all__ = ["FIT", "TARGET_RHO", "IrtFit", "fit_2pl", "item_quality", "propose_subset"]
