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

Intervals: a **two-level bootstrap** — each resample draws n items with replacement, then, within each drawn
item, K samples with replacement from its own K — recomputing every figure on the resampled items. Drawing K of
K with replacement repeats samples, which biases the figures that are not linear in the samples (consistency
rises, pass@K and the vote move), so the resampled values are **centred on the point value** (each less their
mean, plus the point) before the percentile interval at α/2 and 1 − α/2 is taken, then clipped to [0, 1]; the
spread, hence the variance, is the two-level bootstrap's. ``numpy.random.default_rng(seed)``, the draws made in blocks of
:data:`BLOCK` resamples (the items, then for each drawn item one of its K^K equally likely tuples of sample
indices) so the same seed gives the same intervals. An arm with K > :data:`MAX_TABULATED_K` has its point
values without intervals (its status says so). A K = 1 arm's bootstrap is the item bootstrap and its figures
are its accuracy (the ladder's numbers).

An arm whose items carry different numbers of samples (K varying per item) is not computed: its row says
which file and which items, and the rest of the report stands.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from viewcert import stats as st
from viewcert.attribution.parsing import TIE_RULES
from viewcert.errors import InputError

BLOCK = 1000
#: the largest K whose K^K within-item sample tuples are tabulated (5^5 = 3125)
MAX_TABULATED_K = 5
COLUMNS = ["model", "rung", "K", "metric", "k", "point", "lo", "hi", "n_items", "status"]
SCHEME = ("two-level bootstrap: n items drawn with replacement, then K samples with replacement within each "
          "drawn item; percentile interval of the resamples centred on the point value")


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


def two_level_samples(s: ArmSamples, tie_rule: str, *, n_boot: int, seed: int) -> dict[tuple[str, int], np.ndarray]:
    """The two-level bootstrap's resampled figures (n_boot values per key). The K draws within an item are one
    of the K^K equally likely index tuples, so each item's figures are tabulated once per tuple (K ≤ 5) and a
    resample gathers them; draws in blocks of :data:`BLOCK` resamples: items, then the tuple of each drawn item."""
    rng = np.random.default_rng(seed)
    n, k = s.answers.shape
    if k > MAX_TABULATED_K:
        raise InputError(f"the two-level bootstrap tabulates K^K sample tuples; K = {k} > {MAX_TABULATED_K}",
                         field="K")
    tuples = np.array(list(itertools.product(range(k), repeat=k)), dtype=np.int64)  # (K^K, K)
    per = per_item_figures(s.answers[:, tuples], s.correct[:, tuples], tie_rule)  # each (n, K^K)
    keys = list(per)
    table = np.stack([per[key] for key in keys], axis=-1)  # (n, K^K, figures)
    parts = []
    done = 0
    while done < n_boot:
        b = min(BLOCK, n_boot - done)
        idx = rng.integers(0, n, size=(b, n))
        tup = rng.integers(0, tuples.shape[0], size=(b, n))
        parts.append(table[idx, tup].mean(axis=1))  # (b, figures)
        done += b
    got = np.concatenate(parts)
    return {key: got[:, i] for i, key in enumerate(keys)}


def centred_interval(resampled: np.ndarray, point: float, alpha: float) -> tuple[float, float]:
    """The percentile interval of the resampled values centred on ``point`` (module docstring), within [0, 1]."""
    lo, hi = st.percentile_interval(resampled - resampled.mean() + point, alpha=alpha)
    return max(0.0, lo), min(1.0, hi)


def arm_rows(model: str, rung: str, s: ArmSamples | str, tie_rule: str,
             bootstrap: st.BootstrapSettings) -> list[dict]:
    """The rows of one arm: one per figure with its point value and two-level bootstrap interval."""
    if isinstance(s, str):
        return [{"model": model, "rung": rung, "metric": "all", "status": s}]
    points = item_figures(s.answers, s.correct, tie_rule)
    boots = (two_level_samples(s, tie_rule, n_boot=bootstrap.n_boot, seed=bootstrap.seed)
             if s.k <= MAX_TABULATED_K else None)
    status = "ok" if not s.missing else f"ok; {s.missing} missing item(s) count as K samples without an answer"
    if boots is None:
        status += f"; no interval: K = {s.k} > {MAX_TABULATED_K}"
    rows = []
    for (metric, k), point in points.items():
        lo, hi = (np.nan, np.nan) if boots is None else centred_interval(boots[(metric, k)], point, bootstrap.alpha)
        rows.append({"model": model, "rung": rung, "K": s.k, "metric": metric, "k": k, "point": point,
                     "lo": lo, "hi": hi, "n_items": s.answers.shape[0], "status": status})
    return rows


def repeated_samples(frame: pd.DataFrame, universe: Sequence[str], *, tie_rule: str = "first",
                     bootstrap: st.BootstrapSettings = st.BootstrapSettings(),
                     arms: Sequence[tuple[str, str]] | None = None) -> pd.DataFrame:
    """One row per (model, rung, figure) of the canonical ``frame`` over ``universe`` (module docstring);
    ``arms``: the (model, rung) pairs to compute (all of the frame's by default)."""
    keys = arms if arms is not None else sorted({(str(m), str(r)) for m, r in zip(frame["model"], frame["rung"],
                                                                                  strict=True)})
    groups = {key: g for key, g in frame.groupby(["model", "rung"], sort=True)}
    rows = []
    for model, rung in keys:
        g = groups.get((model, rung))
        s = "no samples" if g is None else arm_samples(g, universe)
        rows += arm_rows(model, rung, s, tie_rule, bootstrap)
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


__all__ = ["COLUMNS", "MAX_TABULATED_K", "SCHEME", "ArmSamples", "arm_samples", "centred_interval", "item_figures", "per_item_figures",
           "repeated_samples",
           "two_level_samples", "vote_right"]
