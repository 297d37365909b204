"""Repeated samples: what K answers per item say beyond the majority vote, per model and rung.

For one arm with K samples per item (n items; an item missing from the arm counts as K samples without an
answer), c_i = the item's samples whose parsed answer equals the target (a sample without an answer is wrong):

- **expected accuracy**: mean over items of c_i / K (the accuracy of one sample drawn at random; pass@1);
- **majority-vote accuracy**: the share of items whose vote over the ``ok`` samples, in sample order, is right,
  with the ladder's tie rule (``first``: the tied answer met first; ``alphabetical``: the alphabetically first;
  ``none``: a tie is no answer, hence wrong). It equals the ladder's count for the arm under ``scoring="vote"``
  (every figure here reads the parsed answers, never a harness's own scores);
- **pass@k** (k = 2..K): mean over items of the unbiased estimator 1 − C(K − c_i, k) / C(K, k) (Chen et al. 2021):
  the chance that at least one of k samples drawn without replacement from the item's K is right;
- **pass^k** (k = 2..K): mean over items of C(c_i, k) / C(K, k): the chance that all k drawn without
  replacement are right (pass^K: all K right); pass@1 = pass^1 = the expected accuracy;
- **consistency**: the share of items whose K samples all have an answer and the same one (defined for K ≥ 2).

Intervals, one method per figure, stated in each row's ``interval`` column (issue 56):

- a figure that is a **count of items** (majority-vote accuracy; consistency; pass@K and pass^K at k = K: the
  items with at least one, or all K, samples right) gets the exact two-sided **Clopper–Pearson** interval, the
  same interval ``arms.csv`` gives the arm's majority count;
- a figure that is a **mean of per-item fractions** (expected accuracy; pass@k and pass^k at k < K) gets the
  **item (cluster) bootstrap**: n items drawn with replacement, each keeping its own K samples as they are
  (``stats.bootstrap_indices``: the ladder's seed and resamples), percentile interval at α/2 and 1 − α/2. The
  items are the sampling unit; the K samples of an item are not resampled again (a second level counts the
  within-item variance twice: intervals 5–22 % too wide on the study's arms).

An **unscored** arm (``ladder.Arm.scored`` false: too many API errors or items without an answer) gets one row,
``unscored: <reason>``, and no figure. **K too small**: an item right in all K samples has the exact one-sided
1 − α lower bound α^(1/K) on its per-sample accuracy (0.368 at K = 3, α = 0.05); while that bound is below 1/2
(K ≤ 4 at α = 0.05) the K samples cannot tell a reliable item from a coin flip, so the pass^k and consistency
rows say ``K too small`` (:func:`k_too_small`) and the report prints the warning once.

An arm whose items carry different numbers of samples (K varying per item) is not computed: its row says
which file and which items, and the rest of the report stands.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from viewcert import stats as st
from viewcert.attribution.parsing import TIE_RULES
from viewcert.errors import InputError

COLUMNS = ["model", "rung", "K", "metric", "k", "point", "lo", "hi", "interval", "n_items", "status"]
CLOPPER_PEARSON = "exact Clopper-Pearson (a count of items)"
ITEM_BOOTSTRAP = "item bootstrap percentile (items resampled, each with its own K samples)"
SCHEME = ("exact Clopper-Pearson for a count of items (majority-vote accuracy, consistency, pass@K and pass^K at "
          "k = K); item (cluster) bootstrap percentile for a mean of per-item fractions (expected accuracy, pass@k "
          "and pass^k at k < K): items resampled with replacement, each keeping its own K samples")


@dataclass(frozen=True)
class ArmSamples:
    """One arm's samples over the item universe: ``answers`` (n, K) integer codes of the parsed answers in
    ``labels`` (alphabetical; −1: no answer), ``correct`` (n, K) whether each sample is right, in sample order."""

    answers: np.ndarray
    correct: np.ndarray
    labels: tuple[str, ...]
    missing: int

    @property
    def k(self) -> int:
        return int(self.answers.shape[1])


def arm_samples(frame: pd.DataFrame, universe: Sequence[str]) -> ArmSamples | str:
    """The samples of one arm's rows of the canonical table over ``universe``, or why not (a string naming the
    file and items when the number of samples differs between items)."""
    sub = frame[frame["item_id"].isin(set(universe))].sort_values(["item_id", "sample_k"], kind="stable")
    sizes = sub.groupby("item_id", sort=True).size()
    if sizes.empty:
        return "no samples"
    if sizes.nunique() > 1:
        lo, hi = sizes.idxmin(), sizes.idxmax()
        files = sorted(set(map(str, sub["source_file"])))
        return (f"not computed: K varies per item in {', '.join(files)}: item {lo!r} has {sizes[lo]} samples, "
                f"item {hi!r} has {sizes[hi]}")
    k = int(sizes.iloc[0])
    ok = (sub["parse_status"] == "ok").to_numpy()
    ans = sub["parsed_answer"].where(ok, None)
    labels = tuple(sorted({str(a) for a in ans if a is not None}))
    code = {lab: i for i, lab in enumerate(labels)}
    codes = np.array([code[str(a)] if a is not None else -1 for a in ans], dtype=np.int64)
    right = ok & (sub["parsed_answer"].astype(str).to_numpy() == sub["target"].astype(str).to_numpy())
    pos = {u: i for i, u in enumerate(universe)}
    rows = np.array([pos[u] for u in sub["item_id"]], dtype=np.int64).reshape(-1, k)[:, 0]
    answers = np.full((len(universe), k), -1, dtype=np.int64)
    correct = np.zeros((len(universe), k), dtype=bool)
    answers[rows] = codes.reshape(-1, k)
    correct[rows] = right.reshape(-1, k)
    return ArmSamples(answers, correct, labels, len(universe) - len(rows))


def vote_right(answers: np.ndarray, correct: np.ndarray, tie_rule: str) -> np.ndarray:
    """Per item (last axis: the K samples in order), whether the majority vote of the answered samples is right
    under ``tie_rule`` (module docstring); any leading axes are kept."""
    if tie_rule not in TIE_RULES:
        raise InputError(f"tie rule must be one of {TIE_RULES}, got {tie_rule!r}", field="tie_rule")
    valid = answers >= 0
    same = (answers[..., :, None] == answers[..., None, :]) & valid[..., None, :]
    count = np.where(valid, same.sum(-1), 0)  # votes for each sample's answer
    top = count.max(-1, keepdims=True)
    is_top = valid & (count == top)
    big = np.iinfo(np.int64).max
    chosen = np.where(is_top, answers, big).min(-1, keepdims=True) if tie_rule == "alphabetical" else None
    pick = is_top if chosen is None else is_top & (answers == chosen)
    j = pick.argmax(-1)[..., None]
    right = np.take_along_axis(correct, j, -1)[..., 0] & pick.any(-1)
    if tie_rule == "none":
        tied = (is_top & (answers != np.take_along_axis(answers, j, -1))).any(-1)
        right &= ~tied
    return right


def _tables(k_max: int) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    """pass@k and pass^k per item as a lookup on c = 0..K, for k = 2..K (exact binomial coefficients)."""
    at, hat = {}, {}
    for k in range(2, k_max + 1):
        total = math.comb(k_max, k)
        at[k] = np.array([1 - math.comb(k_max - c, k) / total for c in range(k_max + 1)])
        hat[k] = np.array([math.comb(c, k) / total for c in range(k_max + 1)])
    return at, hat


def per_item_figures(answers: np.ndarray, correct: np.ndarray, tie_rule: str) -> dict[tuple[str, int], np.ndarray]:
    """Every figure of the module docstring per item (the last axis, the K samples, reduced); leading axes kept.
    Keys: (metric, k)."""
    k_max = answers.shape[-1]
    c = correct.sum(-1)
    out = {("expected accuracy", 1): c / k_max,
           ("majority-vote accuracy", k_max): vote_right(answers, correct, tie_rule).astype(float)}
    at, hat = _tables(k_max)
    for k in range(2, k_max + 1):
        out[("pass@k", k)] = at[k][c]
    for k in range(2, k_max + 1):
        out[("pass^k", k)] = hat[k][c]
    if k_max >= 2:
        out[("consistency", k_max)] = ((answers == answers[..., :1]).all(-1) & (answers[..., 0] >= 0)).astype(float)
    return out


def item_figures(answers: np.ndarray, correct: np.ndarray, tie_rule: str) -> dict[tuple[str, int], float]:
    """Every figure of the module docstring over the items of an (n, K) arm."""
    return {key: float(v.mean()) for key, v in per_item_figures(answers, correct, tie_rule).items()}


def is_count(metric: str, k: int, k_max: int) -> bool:
    """Whether a figure is a count of items (module docstring): majority vote, consistency, pass@K and pass^K
    (and every figure of a K = 1 arm)."""
    return k_max == 1 or metric in ("majority-vote accuracy", "consistency") or (metric in ("pass@k", "pass^k") and k == k_max)


def k_too_small(k_max: int, alpha: float = st.DEFAULT_ALPHA) -> str:
    """The warning of the module docstring when K samples cannot show an item right more often than not (α^(1/K)
    below 1/2), else ''.

    Parameters
    ----------
    k_max : int
        Samples per item, K.
    alpha : float, default 0.05
        1 − the confidence of the one-sided bound.

    Returns
    -------
    str
        One sentence, or '' when K is large enough.
    """
    bound = alpha ** (1 / k_max) if k_max >= 1 else 0.0
    if k_max < 2 or bound >= 0.5:
        return ""
    return (f"K = {k_max} too small for pass^k and consistency: an item right in all {k_max} samples has an exact "
            f"one-sided {1 - alpha:.0%} lower bound of {bound:.3f} on its per-sample accuracy (below 1/2), so these "
            "figures describe this K and cannot tell a reliable item from a coin flip")


def item_bootstrap(per_item: np.ndarray, idx: np.ndarray, alpha: float) -> tuple[float, float]:
    """The item bootstrap's percentile interval of the mean of ``per_item`` over the resamples ``idx``
    (``stats.bootstrap_indices``)."""
    return st.percentile_interval(np.asarray(per_item, float)[idx].mean(axis=1), alpha=alpha)


def arm_rows(model: str, rung: str, s: ArmSamples | str, tie_rule: str,
             bootstrap: st.BootstrapSettings, *, unscored: str = "") -> list[dict]:
    """The rows of one arm: one per figure with its point value and its one interval (module docstring); an
    unscored arm (``unscored``: its reason) one row without figures."""
    if unscored:
        return [{"model": model, "rung": rung, "metric": "all", "status": f"unscored: {unscored}"}]
    if isinstance(s, str):
        return [{"model": model, "rung": rung, "metric": "all", "status": s}]
    n = s.answers.shape[0]
    per = per_item_figures(s.answers, s.correct, tie_rule)
    idx = st.bootstrap_indices(n, n_boot=bootstrap.n_boot, seed=bootstrap.seed)
    status = "ok" if not s.missing else f"ok; {s.missing} missing item(s) count as K samples without an answer"
    small = bool(k_too_small(s.k, bootstrap.alpha))
    rows = []
    for (metric, k), v in per.items():
        point = float(v.mean())
        if is_count(metric, k, s.k):
            b = st.clopper_pearson_interval(int(round(float(v.sum()))), n, 1 - bootstrap.alpha)
            lo, hi, how = b.lower, b.upper, CLOPPER_PEARSON
        else:
            (lo, hi), how = item_bootstrap(v, idx, bootstrap.alpha), ITEM_BOOTSTRAP
        note = f"; K = {s.k} too small" if small and metric in ("pass^k", "consistency") else ""
        rows.append({"model": model, "rung": rung, "K": s.k, "metric": metric, "k": k, "point": point,
                     "lo": lo, "hi": hi, "interval": how, "n_items": n, "status": status + note})
    return rows


def repeated_samples(frame: pd.DataFrame, universe: Sequence[str], *, tie_rule: str = "first",
                     bootstrap: st.BootstrapSettings = st.BootstrapSettings(),
                     arms: Sequence[tuple[str, str]] | None = None,
                     unscored: Mapping[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """One row per (model, rung, figure) of the canonical ``frame`` over ``universe`` (module docstring);
    ``arms``: the (model, rung) pairs to compute (all of the frame's by default); ``unscored``: (model, rung) →
    why the ladder left the arm unscored (one row, no figures)."""
    keys = arms if arms is not None else sorted({(str(m), str(r)) for m, r in zip(frame["model"], frame["rung"],
                                                                                  strict=True)})
    groups = {key: g for key, g in frame.groupby(["model", "rung"], sort=True)}
    unscored = unscored or {}
    rows = []
    for model, rung in keys:
        g = groups.get((model, rung))
        s = "no samples" if g is None else arm_samples(g, universe)
        rows += arm_rows(model, rung, s, tie_rule, bootstrap, unscored=unscored.get((model, rung), ""))
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


__all__ = ["CLOPPER_PEARSON", "COLUMNS", "ITEM_BOOTSTRAP", "SCHEME", "ArmSamples", "arm_samples", "is_count",
           "item_bootstrap", "item_figures", "k_too_small", "per_item_figures", "repeated_samples", "vote_right"]
