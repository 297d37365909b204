"""One status per item: what the certificate, the prompt audits and the models' answers say about it.

Statuses, in order of precedence (an item gets the first that applies; ``applies`` lists every one that does):

1. ``label disagrees with the structure``: the certificate records ``label_mismatch`` for the item (the
   dataset's label is not the structure's own label at the scored level);
2. ``not determined by the views``: R1 fails on the item (the certificate's outcome is not correct), with the
   certificate's reasons (``phantoms``, ``missing_atoms``, ...); items to drop;
3. ``answerable from the text alone``: the visual-giveaway audit flags the prompt (it names the answer, a space
   group or lattice parameters), or some model's ``no-image`` arm answers the item more often than its own
   answer prior predicts (the per-item shortcut test, Benjamini–Hochberg at α; :mod:`.shortcuts`);
4. ``answerable from the choices alone``: the same test on a ``choices-only`` arm;
5. ``hard``: determined by the views, and every model with a scored R4 arm is wrong on it at R4;
6. ``clean``: none of the above.

The R1 used is the ladder's first ceiling with per-item outcomes (a certificate, or R1 = 1 given as a number,
which determines every item); when no ceiling has them, statuses 1 and 2 are not assessed and ``reason`` says
so (``hard`` then reads "every model wrong", determination unknown).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

LABEL = "label disagrees with the structure"
UNDETERMINED = "not determined by the views"
TEXT = "answerable from the text alone"
CHOICES = "answerable from the choices alone"
HARD = "hard"
CLEAN = "clean"
STATUSES = (LABEL, UNDETERMINED, TEXT, CHOICES, HARD, CLEAN)
COLUMNS = ["item_id", "target", "status", "reason", "applies", "r4_models_right", "r4_models"]
NOT_ASSESSED = "R1 has no per-item outcomes: determination and label agreement not assessed"


def shortcut_evidence(giveaway: pd.DataFrame, shortcut_tests: pd.DataFrame) -> tuple[dict, dict]:
    """({item: why answerable from the text alone}, {item: why from the choices alone}) from the giveaway audit
    (``Diagnostics.giveaway``) and the per-item shortcut tests (``Diagnostics.shortcut_tests``)."""
    text: dict[str, list[str]] = {}
    choices: dict[str, list[str]] = {}
    if len(giveaway):
        for _, r in giveaway[giveaway["flagged"]].iterrows():
            text.setdefault(str(r["item_id"]), []).append(f"prompt audit: {r['flags']}")
    if len(shortcut_tests):
        sig = shortcut_tests[shortcut_tests["significant"]]
        for _, r in sig.iterrows():
            where = text if r["rung"] == "no-image" else choices
            where.setdefault(str(r["item_id"]), []).append(
                f"{r['model']} {r['rung']}: {int(r['k'])}/{int(r['N'])} right against its prior {r['prior']:.3f} "
                f"(BH p = {r['p_bh']:.3g})")
    return ({k: "; ".join(v) for k, v in text.items()}, {k: "; ".join(v) for k, v in choices.items()})


def _applies(i: int, iid: str, determined: np.ndarray | None, reasons: Sequence[str] | None,
             text: Mapping[str, str], choices: Mapping[str, str], all_wrong: bool) -> list[tuple[str, str]]:
    """Every (status, reason) that holds for item ``i``, in the order of precedence."""
    out = []
    why = "" if reasons is None else reasons[i]
    if why and "label_mismatch" in why:
        out.append((LABEL, f"certificate: {why}"))
    if determined is not None and not determined[i]:
        out.append((UNDETERMINED, f"certificate: {why}" if why else "R1 fails (no reason recorded)"))
    if iid in text:
        out.append((TEXT, text[iid]))
    if iid in choices:
        out.append((CHOICES, choices[iid]))
    if all_wrong and (determined is None or determined[i]):
        out.append((HARD, "every model with a scored R4 arm is wrong at R4"
                    + ("" if determined is not None else f" ({NOT_ASSESSED})")))
    return out


def item_status(universe: Sequence[str], targets: Mapping[str, str], determined: np.ndarray | None,
                reasons: Sequence[str] | None, r4: Mapping[str, np.ndarray], text: Mapping[str, str],
                choices: Mapping[str, str]) -> pd.DataFrame:
    """One row per item of ``universe`` (module docstring). ``determined``: R1's per-item outcomes (None: not
    assessed); ``reasons``: the certificate's per-item reasons ('' when correct); ``r4``: model → R4
    correctness over the items (scored arms only); ``text``/``choices``: :func:`shortcut_evidence`."""
    mat = np.vstack([np.asarray(v, bool) for v in r4.values()]) if r4 else np.zeros((0, len(universe)), bool)
    right = mat.sum(axis=0)
    rows = []
    for i, iid in enumerate(universe):
        got = _applies(i, iid, determined, reasons, text, choices, bool(len(r4)) and right[i] == 0)
        status, reason = got[0] if got else (CLEAN, "")
        if determined is None and not got:
            reason = NOT_ASSESSED
        rows.append({"item_id": iid, "target": targets[iid], "status": status, "reason": reason,
                     "applies": "; ".join(s for s, _ in got) or CLEAN, "r4_models_right": int(right[i]),
                     "r4_models": len(r4)})
    return pd.DataFrame(rows, columns=COLUMNS)


def status_filter(status: str) -> str:
    """The explorer's index filter of the items of one status (``index.html#filter=NAME``: the report's links)."""
    return "status_" + "_".join(str(status).split())


def status_counts(status: pd.DataFrame) -> pd.DataFrame:
    """Items per status (every status listed, zeros included), with the share of the items."""
    n = len(status)
    counts = status["status"].value_counts()
    return pd.DataFrame([{"status": s, "items": int(counts.get(s, 0)), "share": int(counts.get(s, 0)) / n if n else 0.0}
                         for s in STATUSES])


def clean_accuracy(status: pd.DataFrame, arms: Mapping[tuple[str, str], object]) -> pd.DataFrame:
    """Per arm (``Ladder.arm_objects``): items right of all and of the clean items, and both accuracies."""
    clean = (status["status"] == CLEAN).to_numpy()
    rows = []
    for (model, rung), a in sorted(arms.items()):
        v = np.asarray(a.correct_vector, bool)
        nc = int(clean.sum())
        rows.append({"model": model, "rung": rung, "scored": bool(a.scored), "correct": int(v.sum()), "n": v.size,
                     "accuracy": float(v.mean()), "clean_correct": int(v[clean].sum()), "clean_n": nc,
                     "clean_accuracy": float(v[clean].mean()) if nc else float("nan")})
    return pd.DataFrame(rows, columns=["model", "rung", "scored", "correct", "n", "accuracy", "clean_correct",
                                       "clean_n", "clean_accuracy"])


__all__ = ["CHOICES", "CLEAN", "COLUMNS", "HARD", "LABEL", "STATUSES", "TEXT", "UNDETERMINED", "clean_accuracy",
           "item_status", "shortcut_evidence", "status_counts", "status_filter"]
