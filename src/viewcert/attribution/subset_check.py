"""Is a small subset of the items worth using instead of all of them? Measured out of sample, beside random subsets
of the same size, in the same run.

**Certified pool.** A subset is drawn only from the items the status table keeps (``items.CLEAN``): determined by
the views (the certificate), with a label that agrees with the structure, not answerable from the text or the
choices alone, and not missed by every model. No dropped item can enter it.

**Leave one model out.** For each model h of the ranking (its arm at one rung): the subset is chosen from the pool
*without h* (the 2PL is fitted on the other models, ``quality.fit_2pl``, and ``quality.propose_subset`` keeps their
ranking), then h is scored on it:

- accuracy error e_h = h's accuracy on the subset − on all items (points of accuracy);
- rank error: |h's rank among all models by subset accuracy − by full accuracy| (average ranks, ties shared; every
  other model scored on the same subset);
- reconstruction (metabench-style): the full accuracy predicted from the subset accuracy by a straight line fitted on
  the other models (``numpy.polyfit``, degree 1), error r_h − full_h; RMSE over the held-out models.

The same check is made for a **Fluid-style** choice by information: without h, the n items of the pool with the
largest test information at the other models' abilities, Σ_m a_j² P_mj (1 − P_mj) under their 2PL fit.

Each summary (mean |rank error|, mean |accuracy error|, reconstruction RMSE) gets a percentile interval from a
bootstrap over the held-out models (``numpy.random.default_rng(seed)``; with about ten models the interval is
coarse, and says so by its width). **Random subsets**: ``n_random`` subsets of the same size drawn uniformly from
the same pool (the same seed), each scored the same way (its reconstruction line fitted on the other models too);
the report gives their median and central 95 % and the share of random subsets at least as good as the chosen
one on each summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from viewcert import stats as st
from viewcert.attribution.quality import fit_2pl, propose_subset
from viewcert.errors import InputError

__all__ = ["FOLD_COLUMNS", "SUMMARIES", "SubsetCheck", "check_subset", "fold_errors", "most_informative"]

DEFAULT_RANDOM = 200
FOLD_COLUMNS = ["model", "full_accuracy", "subset_accuracy", "accuracy_error", "reconstructed", "reconstruction_error",
                "rank_full", "rank_subset", "rank_error"]
SUMMARIES = ("mean_abs_rank_error", "mean_abs_accuracy_error", "reconstruction_rmse")


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks, 1 = the highest value (ties share their mean rank)."""
    return (x[:, None] < x[None, :]).sum(1) + ((x[:, None] == x[None, :]).sum(1) + 1) / 2


def fold_errors(mat: np.ndarray, keep_for: Sequence[np.ndarray]) -> pd.DataFrame:
    """Each held-out model's errors (module docstring) given the subset chosen without it.

    Parameters
    ----------
    mat : numpy.ndarray of float, shape (models, items)
        Per model the 0/1 correctness on every item.
    keep_for : sequence of numpy.ndarray of int
        Per model h, the item indices of the subset chosen without h.

    Returns
    -------
    pandas.DataFrame
        :data:`FOLD_COLUMNS` but ``model`` (row h: model h held out); accuracies in points (0–1), ranks 1-based.
    """
    full = mat.mean(1)
    rows = []
    for h, keep in enumerate(keep_for):
        sub = mat[:, keep].mean(1)
        others = np.arange(mat.shape[0]) != h
        if np.ptp(sub[others]) > 0:
            slope, icpt = np.polyfit(sub[others], full[others], 1)
            recon = float(slope * sub[h] + icpt)
        else:  # the others all score alike on the subset: the line is flat at their mean
            recon = float(full[others].mean())
        rf, rs = _ranks(full)[h], _ranks(sub)[h]
        rows.append({"full_accuracy": float(full[h]), "subset_accuracy": float(sub[h]),
                     "accuracy_error": float(sub[h] - full[h]), "reconstructed": recon,
                     "reconstruction_error": recon - float(full[h]), "rank_full": float(rf), "rank_subset": float(rs),
                     "rank_error": float(abs(rs - rf))})
    return pd.DataFrame(rows)


def _summaries(folds: pd.DataFrame) -> dict[str, float]:
    return {"mean_abs_rank_error": float(folds["rank_error"].mean()),
            "mean_abs_accuracy_error": float(folds["accuracy_error"].abs().mean()),
            "reconstruction_rmse": float(np.sqrt((folds["reconstruction_error"] ** 2).mean()))}


def _model_bootstrap(folds: pd.DataFrame, n_boot: int, seed: int, alpha: float) -> dict[str, tuple[float, float]]:
    """Percentile intervals of the summaries over resampled held-out models."""
    idx = st.bootstrap_indices(len(folds), n_boot=n_boot, seed=seed)
    r = folds["rank_error"].to_numpy(float)[idx].mean(1)
    a = np.abs(folds["accuracy_error"].to_numpy(float))[idx].mean(1)
    e = np.sqrt((folds["reconstruction_error"].to_numpy(float) ** 2)[idx].mean(1))
    return {"mean_abs_rank_error": st.percentile_interval(r, alpha=alpha),
            "mean_abs_accuracy_error": st.percentile_interval(a, alpha=alpha),
            "reconstruction_rmse": st.percentile_interval(e, alpha=alpha)}


@dataclass(frozen=True)
class SubsetCheck:
    """The leave-one-model-out check of a subset size: the chosen subsets' folds and summaries with intervals, the
    random subsets' summaries, and the record the report writes."""

    folds: pd.DataFrame
    random: pd.DataFrame
    record: dict


def check_subset(correct: Mapping[str, np.ndarray], n_keep: int, pool: Sequence[int], *,
                 bootstrap: st.BootstrapSettings = st.BootstrapSettings(), n_random: int = DEFAULT_RANDOM,
                 max_swaps: int = 4000) -> SubsetCheck:
    """The check of the module docstring for subsets of ``n_keep`` items from ``pool``.

    Parameters
    ----------
    correct : mapping of str to numpy.ndarray of bool
        Per model (at least 3), its per-item correctness at the ranking's rung.
    n_keep : int
        The subset's size, 1 ≤ n_keep < len(pool).
    pool : sequence of int
        The item indices a subset may hold (the kept items).
    bootstrap : stats.BootstrapSettings
        Seed, resamples and α of the intervals; the seed also draws the random subsets.
    n_random : int, default 200
        Random subsets of the same size.
    max_swaps : int, default 4000
        ``quality.propose_subset``'s swaps per fold.

    Returns
    -------
    SubsetCheck
        Folds (one row per held-out model), random subsets' summaries (one row per draw) and the record.

    Raises
    ------
    InputError
        Fewer than 4 models (a held-out model leaves fewer than 3 to rank), or ``n_keep`` outside 1..len(pool) − 1
        (field ``subset``).
    """
    models = sorted(correct)
    pool = np.asarray(sorted(pool), dtype=np.int64)
    if len(models) < 4:
        raise InputError(f"leave-one-model-out needs at least 4 models with a scored arm, got {len(models)}",
                         field="subset")
    if not 1 <= n_keep < pool.size:
        raise InputError(f"--subset must be between 1 and {pool.size - 1} (the items the status table keeps), got "
                         f"{n_keep}", field="subset")
    mat = np.vstack([np.asarray(correct[m], float) for m in models])
    keep_for, info_for = [], []
    for h in range(len(models)):
        train = {m: mat[i] for i, m in enumerate(models) if i != h}
        fit = fit_2pl(mat[[i for i in range(len(models)) if i != h]], [m for i, m in enumerate(models) if i != h])
        keep, _ = propose_subset(train, n_keep, fit, seed=bootstrap.seed, max_swaps=max_swaps, candidates=pool)
        keep_for.append(keep)
        info_for.append(np.sort(most_informative(fit, pool, n_keep)))
    folds = fold_errors(mat, keep_for)
    folds.insert(0, "model", models)
    info_folds = fold_errors(mat, info_for)
    rng = np.random.default_rng(bootstrap.seed)
    draws = []
    for _ in range(n_random):
        keep = np.sort(rng.choice(pool, size=n_keep, replace=False))
        draws.append(_summaries(fold_errors(mat, [keep] * len(models))))
    random = pd.DataFrame(draws, columns=list(SUMMARIES))
    record = {"n": int(n_keep), "pool": int(pool.size), "models": models, "n_random": int(n_random),
              "seed": bootstrap.seed, "n_boot": bootstrap.n_boot, "alpha": bootstrap.alpha}
    record.update(_compare(folds, random, bootstrap))
    record["information"] = _compare(info_folds, random, bootstrap)
    return SubsetCheck(folds, random, record)


def _compare(folds: pd.DataFrame, random: pd.DataFrame, bootstrap: st.BootstrapSettings) -> dict:
    """Each summary of the chosen subsets with its interval, beside the random subsets'."""
    chosen = _summaries(folds)
    ci = _model_bootstrap(folds, bootstrap.n_boot, bootstrap.seed, bootstrap.alpha)
    out = {}
    for k in SUMMARIES:
        lo, hi = np.quantile(random[k], [bootstrap.alpha / 2, 1 - bootstrap.alpha / 2])
        out[k] = {"chosen": chosen[k], "chosen_lo": ci[k][0], "chosen_hi": ci[k][1],
                  "random_median": float(random[k].median()), "random_lo": float(lo), "random_hi": float(hi),
                  "random_at_least_as_good": float((random[k] <= chosen[k] + 1e-12).mean())}
    return out


def most_informative(fit, pool: np.ndarray, n_keep: int) -> np.ndarray:
    """The ``n_keep`` items of ``pool`` with the largest 2PL test information at the fitted abilities,
    Σ_p a_j² P_pj (1 − P_pj) (Fluid-style selection), ties broken by item order.

    Parameters
    ----------
    fit : quality.IrtFit
        The fit on the models that choose (abilities ``theta``, ``difficulty``, ``discrimination``).
    pool : numpy.ndarray of int
        The item indices allowed.
    n_keep : int
        How many to keep.

    Returns
    -------
    numpy.ndarray of int
        The chosen item indices, most informative first.
    """
    a, b = fit.discrimination[pool], fit.difficulty[pool]
    p = 1 / (1 + np.exp(-a[None, :] * (np.asarray(fit.theta)[:, None] - b[None, :])))
    info = (a[None, :] ** 2 * p * (1 - p)).sum(0)
    return pool[np.argsort(-info, kind="stable")[:n_keep]]
