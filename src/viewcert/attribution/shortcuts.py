"""Shortcut rungs: is an item answered without the image more often than the model's own answer prior
predicts? (MicroVQA's no-image and choices-only ablations, made per item and prior-aware.)

For one model and one image-free arm (``no-image`` or ``choices-only``), from the canonical table's ``ok``
samples:

- the model's **answer prior** π(y) = share of its answers in that arm that are y (a model that says "cubic"
  to everything has π(cubic) = 1: language bias, not a shortcut in any item);
- per item i with N_i answered samples, k_i of them the target y_i: an exact one-sided binomial test
  (``scipy.stats.binomtest``, alternative "greater") of k_i against N_i draws with p = π(y_i);
- Benjamini–Hochberg across the model's items (``scipy.stats.false_discovery_control``); an item is
  shortcut-answerable for the model when its adjusted p < α;
- the **shortcut share**: mean over the items with an answer of k_i/N_i − π(y_i) (the correct answers beyond
  what the prior predicts), with a percentile bootstrap interval over items.

Across models, an item is **not flagged** when no model finds it shortcut-answerable. That is a count of
non-rejections, not evidence that the item needs the image, so it gets no interval: with K samples the smallest
p-value an item can reach is π(y)^K (every sample right). **Power**, per arm: the smallest attainable p-value (min
over its items of π(y_i)^N_i) against the first Benjamini–Hochberg threshold α/m (m items tested): above it, no
item can be flagged on its own, whatever the model answers on it; items are flagged only in bulk, when many are
answered beyond the prior at once. ``max_rejectable`` is the most BH could flag, every item at its smallest
p-value at once (BH's rejections only grow as p-values fall). The report states the low power of every arm that
cannot flag a single item (:func:`power_lines`) instead of calling the unflagged items vision-centric.

Each image-free arm is also tested against the text ceiling c: an exact one-sided binomial test of its
correct items against n draws at c (a reader of the text alone should not beat c), Holm across the tested
arms. An unscored arm is tested too when it has answers (its missing answers count as wrong, so its p-value
is conservative) and its status says so; an arm without a single lenient answer (one the task's parser reads,
compliant with the requested form or not) is listed with its adherence and no test.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from viewcert import stats as st

FREE_RUNGS = ("choices-only", "no-image")
METHOD = ("exact one-sided binomial test per item of k correct of N answered samples against the model's own "
          "answer prior in the arm (scipy.stats.binomtest, greater), Benjamini-Hochberg across items "
          "(scipy.stats.false_discovery_control)")


def item_tests(frame: pd.DataFrame, universe: Sequence[str], *, alpha: float = st.DEFAULT_ALPHA) -> pd.DataFrame:
    """One row per (model, image-free rung, item with an answer): k, N, π(target), p, BH-adjusted p, flag."""
    rows = []
    ok = frame[(frame["parse_status"] == "ok") & frame["rung"].isin(FREE_RUNGS)]
    pos = {u: i for i, u in enumerate(universe)}
    for (model, rung), g in ok.groupby(["model", "rung"], sort=True):
        prior = Counter(g["parsed_answer"])
        total = sum(prior.values())
        arm = []
        for iid, gi in g.groupby("item_id", sort=False):
            if iid not in pos:
                continue
            y = gi["target"].iloc[0]
            k, n = int((gi["parsed_answer"] == y).sum()), len(gi)
            p_y = prior.get(y, 0) / total
            pval = float(sps.binomtest(k, n, p_y, alternative="greater").pvalue) if 0 < p_y < 1 else 1.0
            arm.append({"model": model, "rung": rung, "item_id": iid, "target": y, "k": k, "N": n,
                        "prior": p_y, "excess": k / n - p_y, "p_value": pval})
        if arm:
            q = sps.false_discovery_control([r["p_value"] for r in arm], method="bh")
            for r, qv in zip(arm, q, strict=True):
                r["p_bh"] = float(qv)
                r["significant"] = bool(qv < alpha)
            rows += sorted(arm, key=lambda r: pos[r["item_id"]])
    return pd.DataFrame(rows, columns=["model", "rung", "item_id", "target", "k", "N", "prior", "excess",
                                       "p_value", "p_bh", "significant"])


def shortcut_summary(tests: pd.DataFrame, *, seed: int = st.DEFAULT_SEED, n_boot: int = st.DEFAULT_N_BOOT,
                     alpha: float = st.DEFAULT_ALPHA) -> pd.DataFrame:
    """Per (model, rung): items tested, significant items, shortcut share (mean excess) with a percentile
    bootstrap interval over items, and the method."""
    rows = []
    for (model, rung), g in tests.groupby(["model", "rung"], sort=True):
        ex = g["excess"].to_numpy(float)
        idx = st.bootstrap_indices(len(ex), n_boot=n_boot, seed=seed)
        lo, hi = st.percentile_interval(ex[idx].mean(axis=1), alpha=alpha)
        best = smallest_p(g["prior"].to_numpy(float), g["N"].to_numpy(int))
        rows.append({"model": model, "rung": rung, "items_tested": len(g), "significant_items": int(g["significant"].sum()),
                     "shortcut_share": float(ex.mean()), "shortcut_share_lo": lo, "shortcut_share_hi": hi,
                     "smallest_attainable_p": float(best.min()), "bh_first_threshold": alpha / len(g),
                     "max_rejectable": int((sps.false_discovery_control(best, method="bh") < alpha).sum()),
                     "method": METHOD})
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


SUMMARY_COLUMNS = ["model", "rung", "items_tested", "significant_items", "shortcut_share", "shortcut_share_lo",
                   "shortcut_share_hi", "smallest_attainable_p", "bh_first_threshold", "max_rejectable", "method"]


def smallest_p(prior: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Per item the smallest p-value the one-sided test can give: every one of its N samples right, P = π^N
    (1 where π is 0 or 1, which the test does not test).

    Parameters
    ----------
    prior : numpy.ndarray of float, shape (m,)
        π(y_i), the arm's share of answers equal to the item's target.
    n : numpy.ndarray of int, shape (m,)
        N_i, the item's answered samples.

    Returns
    -------
    numpy.ndarray of float, shape (m,)
        The smallest attainable p-value per item.
    """
    prior = np.asarray(prior, float)
    return np.where((prior > 0) & (prior < 1), prior ** np.asarray(n, float), 1.0)


def power_lines(summary: pd.DataFrame, vc: Mapping, *, alpha: float = st.DEFAULT_ALPHA) -> list[str]:
    """What the per-item shortcut test shows, in the report's words: the items flagged and not, and a low-power
    statement naming every arm that cannot reject (module docstring).

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`shortcut_summary`'s table.
    vc : mapping
        :func:`vision_centric`'s record.
    alpha : float, default 0.05
        The BH level.

    Returns
    -------
    list of str
        The lines, the low-power one last (absent when every arm can reject).
    """
    n, flagged = int(vc["n"]), int(vc["shortcut_items"])
    lines = [f"per-item shortcut test: {flagged} of {n} items answered beyond the model's own answer prior by some "
             f"image-free arm (BH at α = {alpha}); the other {n - flagged} are not flagged, which does not show that "
             "they need the image"]
    weak = summary[summary["smallest_attainable_p"] > summary["bh_first_threshold"]] if len(summary) else summary
    if len(weak):
        arms = "; ".join(f"{r['model']} {r['rung']} (smallest attainable p {r['smallest_attainable_p']:.2g} > first "
                         f"BH threshold {r['bh_first_threshold']:.2g}; at most {int(r['max_rejectable'])} of "
                         f"{int(r['items_tested'])} in bulk)" for _, r in weak.iterrows())
        lines.append(f"low power: in {len(weak)} of {len(summary)} image-free arms tested the test cannot flag any "
                     "single item on its own, whatever the model answers on it (every sample right is not enough): "
                     + arms)
    return lines


def vision_centric(tests: pd.DataFrame, universe: Sequence[str], *, alpha: float = st.DEFAULT_ALPHA) -> dict:
    """Items no model finds shortcut-answerable, of n: a count of non-rejections, given no interval (module
    docstring)."""
    flagged = set(tests.loc[tests["significant"], "item_id"]) if len(tests) else set()
    n = len(universe)
    k = n - len([u for u in universe if u in flagged])
    models = sorted(set(tests["model"])) if len(tests) else []
    return {"vision_centric": k, "n": n, "fraction": k / n, "shortcut_items": n - k, "models_tested": len(models), "method": METHOD,
            "note": "vision_centric counts items not flagged: non-rejections, not evidence the items need the image"}


def against_text_ceiling(arms: pd.DataFrame, ceiling: float, adherence: Mapping[tuple[str, str], str] | None = None,
                         answered: Mapping[tuple[str, str], int] | None = None) -> pd.DataFrame:
    """Each image-free arm's correct count against the text ceiling (exact one-sided binomial, Holm across the
    tested arms), with its adherence; ``answered`` (items with an answer per arm) marks the arms with nothing
    to test (module docstring)."""
    answered = answered or {}
    adherence = adherence or {}
    rows = []
    for _, a in arms[arms["rung"].isin(FREE_RUNGS)].iterrows():
        key = (a["model"], a["rung"])
        row = {"model": a["model"], "rung": a["rung"], "correct": int(a["correct"]), "n": int(a["n"]),
               "accuracy": float(a["accuracy"]), "text_ceiling": ceiling, "adherence": adherence.get(key, ""),
               "p_above_ceiling": np.nan, "status": "tested"}
        if not a["scored"]:
            row["status"] = f"unscored ({a['unscored_reason']})"
        if answered.get(key, 1) == 0:
            row["status"] += "; no answer to test"
        else:
            if not a["scored"]:
                row["status"] += "; tested with missing answers as wrong (conservative)"
            row["p_above_ceiling"] = float(sps.binomtest(int(a["correct"]), int(a["n"]), ceiling,
                                                         alternative="greater").pvalue) if 0 < ceiling < 1 else 1.0
        rows.append(row)
    out = pd.DataFrame(rows, columns=["model", "rung", "correct", "n", "accuracy", "text_ceiling", "adherence",
                                      "p_above_ceiling", "status"])
    out["p_holm"] = np.nan
    tested = out["p_above_ceiling"].notna()
    if tested.any():
        out.loc[tested, "p_holm"] = st.holm(out.loc[tested, "p_above_ceiling"].tolist())
    return out
