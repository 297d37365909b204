"""One account of a model's deficit R1 − R4: format, shortcut, perception and reasoning, in points of the item
scale, that add up exactly. The scale is accuracy (a point is the fraction of the items, 0–1) against the
ladder's ceilings, or, for a transformation (command) or interaction (list) export with its certificate, MiSI's
partial credit of each voted answer against the certificate's per-item ceiling on that scale
(:class:`ItemScale`, built by :mod:`.task_scores`).

Per model and ceiling, over the n items of the ladder (each item's answer the ladder's majority vote, an item
without an answer wrong), with per-item terms so that one bootstrap resample recomputes all of them jointly:

- **R4**: the share of items the R4 arm's lenient vote gets right (the ladder's R4);
- **format** f = (1/n) Σ (lenient_i − strict_i) on R4: lenient_i is the ladder's vote, strict_i the vote of the
  item's *compliant* responses only (tie rule as the ladder's). It is what the model loses to form alone.
  *Not measurable* when nothing beyond a parseable answer was asked (no explicit constraint on any R4 item):
  then a correct answer is a compliant one by construction;
- **shortcut** s = (1/n) Σ [min(R4_i, free_i) − min(R4_i, text_i)], for 0/1 points (1/n) Σ R4_i (free_i − text_i): of R4's credit, the items the image-free arm (``no-image``,
  else ``choices-only``) also gets right, minus those the model-free text-only reader gets right
  (:func:`~.text_ceiling.exact_ceiling_items`: each distinct prompt text answered with its largest class).
  R4 − s is the vision-grounded R4. *Not measured* without an image-free arm with an answer, or without the
  prompt texts;
- **perception** p = R3 − R4 (the ladder's gap; the perception share (R3 − R4)/(R1 − R4) is the ladder's);
- **reasoning** r = (R1 − R4) − f − s − p: what remains up to R1, i.e. the post-perception residual R1 − R3
  less what format and shortcuts account for.

An unmeasured term counts 0 and is absorbed by reasoning (the table says so). The point values are exact
fractions (``*_exact``, from integer counts and the exact R1), so f + s + p + r = R1 − R4 holds exactly; the
floats are those fractions rounded once. Intervals: the ladder's paired item bootstrap (the same seed, hence
the same item draws), each resample recomputing every term from the same resampled items, percentile
intervals at α/2 and 1 − α/2; an R1 given as a number without per-item outcomes is held fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from viewcert import stats as st
from viewcert.attribution.ladder import Arm, Ladder, _not_computed
from viewcert.attribution.parsing import majority_vote

TERMS = ("format", "shortcut", "perception", "reasoning")
UNIT = "points of accuracy (fraction of the items, 0–1)"
FREE_ORDER = ("no-image", "choices-only")
NOT_MEASURABLE_FORMAT = "not measurable: nothing beyond a parseable answer was asked; absorbed by reasoning"
ABSORBED = "absorbed by reasoning"

COLUMNS = ["r1", "model", "unit", "n", "status", "R4", "R4_exact", "R4_lo", "R4_hi",
           *[f"{t}{x}" for t in TERMS for x in ("", "_exact", "_lo", "_hi", "_status")],
           "R1", "R1_exact", "deficit", "deficit_exact", "deficit_lo", "deficit_hi", "shortcut_arm",
           "perception_share", "perception_share_exact", "sentence"]


@dataclass(frozen=True)
class ItemScale:
    """A partial-credit item scale (MiSI's, for the transformation and interaction exports): ``score`` of a
    voted answer (None: no answer) against the target, in [0, 1], and the certified per-item ceiling ``r1`` on
    the same scale over the ladder's items; ``label`` names that ceiling, ``unit`` the points."""

    name: str
    score: Callable[[str | None, str], float]
    r1: tuple[float, ...]
    label: str
    unit: str


def strict_answers(responses: pd.DataFrame, model: str, rung: str, universe: Sequence[str],
                   tie_rule: str = "first") -> tuple[list[str | None], bool]:
    """(per item: the vote of its compliant responses, None without one; whether any item of the arm had an
    explicit constraint) for one arm of :func:`~.adherence.response_frame`."""
    sub = responses[(responses["model"] == model) & (responses["rung"] == rung)]
    by_item = {iid: g for iid, g in sub.groupby("item_id", sort=False)}
    out: list[str | None] = []
    for iid in universe:
        g = by_item.get(iid)
        if g is None:
            out.append(None)
            continue
        answers = [a if (c and isinstance(a, str)) else None for a, c in zip(g["answer"], g["compliant"],
                                                                               strict=True)]
        out.append(majority_vote(answers, tie_rule).answer)
    return out, bool(sub["explicit"].any()) if len(sub) else False


def _free_arm(arms: dict, model: str) -> tuple[Arm | None, str]:
    """The model's image-free arm with an answer (no-image first), or None and why not."""
    present = [arms[(model, r)] for r in FREE_ORDER if (model, r) in arms]
    for a in present:
        if any(x is not None for x in a.answers):
            return a, ""
    if present:
        return None, f"not measured: the {present[0].rung} arm has no parseable answer; {ABSORBED}"
    return None, f"not measured: no image-free (no-image or choices-only) arm; {ABSORBED}"


_WHAT = {"format": "to the required format", "shortcut": "to what the text alone gives away",
         "perception": "to perception", "reasoning": "to reasoning"}
#: what a negative term means, said beside its value in the sentence
_NEGATIVE = {"format": "its compliant answers alone score higher than all its parseable ones",
             "shortcut": "without the image it earns less of R4's credit than the text alone gives away",
             "perception": "R3 scores below R4",
             "reasoning": "the other terms add up to more than R1 − R4"}


def _sentence(model: str, row: dict) -> str:
    """The one-sentence account of a decomposed row: the terms lost (zero or positive), then the negative terms
    as points gained back, each stated as negative with what it means (so the numbers said add up to R1 − R4),
    then the terms not measurable (format) or not measured (shortcut), which reasoning absorbs."""
    measured = [t for t in TERMS if row[f"{t}_exact"] is not None]
    lost = [f"{row[t]:.4f} {_WHAT[t]}" for t in measured if Fraction(row[f"{t}_exact"]) >= 0]
    gained = [f"{-row[t]:.4f} on the {t} term (negative, −{-row[t]:.4f}: {_NEGATIVE[t]})"
              for t in measured if Fraction(row[f"{t}_exact"]) < 0]
    said = (", ".join(lost[:-1]) + f" and {lost[-1]}" if len(lost) > 1 else lost[0]) if lost else "no points"
    if gained:
        said += " and gains back " + " and ".join(gained)
    missing = [f"{t} {'not measurable' if row[f'{t}_status'].startswith('not measurable') else 'not measured'}"
               for t in TERMS if row[f"{t}_exact"] is None]
    tail = f"; {' and '.join(missing)}, so counted in reasoning" if missing else ""
    return (f"{model} loses {said}, out of R1 − R4 = {row['deficit']:.4f} ({row['r1']}, R4 = {row['R4']:.4f}, "
            f"{row['unit']}){tail}")


def _points(arm: Arm, universe: Sequence[str], targets: dict, scale: ItemScale | None) -> list[Fraction]:
    """Per item, the arm's points: its ladder outcome (1 or 0), or its voted answer's score on ``scale`` (the
    float taken exactly, as a binary fraction)."""
    if scale is None:
        return [Fraction(int(x)) for x in arm.correct_vector]
    return [Fraction(scale.score(a, targets[u])) for a, u in zip(arm.answers, universe, strict=True)]


def _terms(model: str, arms: dict, responses: pd.DataFrame, universe: Sequence[str], targets: dict,
           text_items: np.ndarray | None, tie_rule: str, text_why: str, scale: ItemScale | None
           ) -> tuple[list[Fraction], dict, dict, str | None]:
    """R4's per-item points, the per-item points of format, shortcut and perception (None when not measured),
    their statuses and the image-free arm used. Shortcut per item: min(R4_i, free_i) − min(R4_i, text_i), the
    credit R4 shares with the image-free arm less the credit it shares with the text-only reader (for 0/1
    points R4_i (free_i − text_i))."""
    a4, a3 = arms[(model, "R4")], arms[(model, "R3")]
    r4 = _points(a4, universe, targets, scale)
    vec: dict[str, list[Fraction] | None] = {"perception": [b - a for a, b in
                                                            zip(r4, _points(a3, universe, targets, scale),
                                                                strict=True)]}
    status = {"perception": "measured", "reasoning": "measured (the remainder up to R1)"}
    strict, explicit = strict_answers(responses, model, "R4", universe, tie_rule)
    if explicit:
        st4 = [Fraction(int(a == targets[u])) if scale is None else Fraction(scale.score(a, targets[u]))
               for a, u in zip(strict, universe, strict=True)]
        vec["format"], status["format"] = [a - b for a, b in zip(r4, st4, strict=True)], "measured"
    else:
        vec["format"], status["format"] = None, NOT_MEASURABLE_FORMAT
    free, why = _free_arm(arms, model)
    if free is not None and text_items is None:
        free, why = None, f"not measured: {text_why}; {ABSORBED}"
    if free is None:
        vec["shortcut"], status["shortcut"] = None, why
    else:
        fp = _points(free, universe, targets, scale)
        vec["shortcut"] = [min(a, b) - min(a, Fraction(int(t))) for a, b, t in zip(r4, fp, text_items, strict=True)]
        status["shortcut"] = f"measured ({free.rung} arm" + ("" if free.scored else
                                                             f", unscored: {free.reason}; missing answers "
                                                             "count as wrong") + ")"
    return r4, vec, status, None if free is None else free.rung


@dataclass(frozen=True)
class _Common:
    """What every row of one account shares: the ladder's arms and items, the responses, the bootstrap draws
    (``idx``: resample × item indices) and settings, and the text-only reader's per-item correctness."""

    arms: dict
    responses: pd.DataFrame
    universe: Sequence[str]
    targets: dict
    text_items: np.ndarray | None
    idx: np.ndarray
    alpha: float
    tie_rule: str
    text_why: str


def _row(r1_label: str, r1_items: list[Fraction], model: str, common: _Common, share: tuple | None,
         scale: ItemScale | None) -> dict:
    arms, responses, universe, targets = common.arms, common.responses, common.universe, common.targets
    text_items, idx, alpha, tie_rule, text_why = (common.text_items, common.idx, common.alpha, common.tie_rule,
                                                  common.text_why)
    n = len(universe)
    a4, a3 = arms.get((model, "R4")), arms.get((model, "R3"))
    r1p = sum(r1_items, Fraction(0)) / n
    row: dict = {"r1": r1_label, "model": model, "unit": UNIT if scale is None else scale.unit, "n": n,
                 "R1": float(r1p), "R1_exact": str(r1p)}
    if a4 is not None:
        r4p = sum(_points(a4, universe, targets, scale), Fraction(0)) / n
        row.update({"R4": float(r4p), "R4_exact": str(r4p)})
    why = _not_computed(a4, a3)
    if why:
        row["status"] = "not computed: " + "; ".join(why)
        return row
    r4, vec, status, free_rung = _terms(model, arms, responses, universe, targets, text_items, tie_rule, text_why,
                                        scale)
    exact = {t: (None if vec[t] is None else sum(vec[t], Fraction(0)) / n) for t in ("format", "shortcut",
                                                                                   "perception")}
    deficit = r1p - sum(r4, Fraction(0)) / n
    exact["reasoning"] = deficit - sum((v for v in exact.values() if v is not None), Fraction(0))

    def floats(v: list[Fraction]) -> np.ndarray:
        return np.array([float(x) for x in v])

    a4s = floats(r4)[idx].mean(axis=1)
    a1s = floats(r1_items)[idx].mean(axis=1)
    samples = {t: (np.zeros(idx.shape[0]) if vec[t] is None else floats(vec[t])[idx].mean(axis=1))
               for t in ("format", "shortcut", "perception")}
    samples["reasoning"] = a1s - a4s - samples["format"] - samples["shortcut"] - samples["perception"]
    lo4, hi4 = st.percentile_interval(a4s, alpha=alpha)
    dlo, dhi = st.percentile_interval(a1s - a4s, alpha=alpha)
    if share is None:  # on a partial-credit scale: the share of that scale's deficit
        sh = None if deficit <= 0 else exact["perception"] / deficit
        share = (None if sh is None else float(sh), None if sh is None else str(sh))
    row.update({"status": "ok", "R4_lo": lo4, "R4_hi": hi4, "deficit": float(deficit), "deficit_exact": str(deficit),
                "deficit_lo": dlo, "deficit_hi": dhi, "shortcut_arm": free_rung,
                "perception_share": share[0], "perception_share_exact": share[1]})
    for t in TERMS:
        if exact[t] is None:
            row.update({t: None, f"{t}_exact": None, f"{t}_lo": None, f"{t}_hi": None, f"{t}_status": status[t]})
            continue
        lo, hi = st.percentile_interval(samples[t], alpha=alpha)
        row.update({t: float(exact[t]), f"{t}_exact": str(exact[t]), f"{t}_lo": lo, f"{t}_hi": hi,
                    f"{t}_status": status[t]})
    row["sentence"] = _sentence(model, row)
    return row


def deficit_account(ladder: Ladder, responses: pd.DataFrame, targets: dict[str, str], *,
                    text_items: np.ndarray | None, text_why: str = "no prompt texts, so no text ceiling",
                    scale: ItemScale | None = None) -> pd.DataFrame:
    """One row per (ceiling, model): R4, the four terms (float, exact fraction, bootstrap interval, status), R1,
    R1 − R4 and the one-sentence account (module docstring). ``responses``: :func:`~.adherence.response_frame`
    of the ladder's table; ``targets``: item id → target; ``text_items``: the text-only reader's per-item
    correctness over the ladder's items (None: shortcut not measured, for the reason ``text_why``); ``scale``:
    a partial-credit item scale (then the account is on it, against its own per-item ceiling, instead of the
    ladder's ceilings). The bootstrap uses the ladder's seed, resample count and α, so its item draws are the
    ladder's."""
    universe = list(ladder.universe)
    n = len(universe)
    idx = st.bootstrap_indices(n, n_boot=ladder.settings.n_boot, seed=ladder.settings.seed)
    models = sorted({m for m, _ in ladder.arm_objects})
    common = _Common(ladder.arm_objects, responses, universe, targets, text_items, idx, ladder.settings.alpha,
                     ladder.settings.tie_rule, text_why)
    rows = []
    if scale is not None:
        r1_items = [Fraction(x) for x in scale.r1]
        rows = [_row(scale.label, r1_items, model, common, None, scale) for model in models]
        return pd.DataFrame(rows).reindex(columns=COLUMNS)
    for ceiling in ladder.ceilings:
        dec = ladder.decomposition[ladder.decomposition["r1"] == ceiling.label].set_index("model")
        vec = ceiling.item_vector()
        r1_items = [Fraction(int(x)) for x in vec] if isinstance(vec, np.ndarray) else [ceiling.value] * n
        for model in models:
            share = ((None if pd.isna(dec.loc[model, "share"]) else float(dec.loc[model, "share"]),
                      dec.loc[model, "share_exact"]) if model in dec.index else (None, None))
            rows.append(_row(ceiling.label, r1_items, model, common, share, None))
    return pd.DataFrame(rows).reindex(columns=COLUMNS)
