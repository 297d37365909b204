"""Every failed item typed: why a model missed an item at R4 (pixels), read off the rungs it passes and fails.

For each model with an R4 arm and each item its R4 vote gets wrong (``Ladder.arm_objects``: the ladder's own
verdicts, so the types of a model add up to the items it missed at R4), the first type that applies, in this
order (``also`` lists every later one that applies too):

1. ``not determined by the views``: R1 fails on the item (the first ceiling with per-item outcomes, as the item
   statuses read it): no reader of these views can be right, so the miss is not the model's;
2. ``no response``: every sample of the item at R4 is an API error (nothing the model said);
3. ``format``: the model answered but no sample parses into an answer (unparseable or refused): the answer was
   not given in a form the task reads (format adherence);
4. ``shortcut``: the wrong R4 answer is the answer the model gives without the image (its ``no-image`` arm, else
   ``choices-only``, voting the same wrong answer on the item): the image did not move the answer;
5. ``perception``: the model is right on the item at R3 (the same question with the geometry as text): it can
   reason to the answer once the structure is given, so the miss is in reading the image;
6. ``reasoning``: the model is wrong at R3 too: given the geometry it still misses;
7. ``perception or reasoning``: the model has no scored R3 arm to tell the two apart.

Beside MMErroR's four types (perception, knowledge, comprehension, reasoning), which a model assigns by reading the
response: here ``perception`` is theirs, ``reasoning`` holds their knowledge and reasoning (a rung cannot split
them), ``format`` is the part of comprehension the parser sees, and ``not determined by the views`` and
``shortcut`` are types they cannot see (the first needs the certificate, the second the image-free arm).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from viewcert.attribution.account import FREE_ORDER

__all__ = ["COLUMNS", "SHARE_COLUMNS", "TYPES", "failure_shares", "failure_types"]

UNDETERMINED = "not determined by the views"
NO_RESPONSE = "no response"
FORMAT = "format"
SHORTCUT = "shortcut"
PERCEPTION = "perception"
REASONING = "reasoning"
EITHER = "perception or reasoning"
TYPES = (UNDETERMINED, NO_RESPONSE, FORMAT, SHORTCUT, PERCEPTION, REASONING, EITHER)
COLUMNS = ["model", "rung", "item_id", "target", "answer", "type", "reason", "also"]
SHARE_COLUMNS = ["model", "missed", *TYPES]


def _sample_status(frame: pd.DataFrame, model: str, rung: str) -> dict[str, set[str]]:
    """{item: the parse statuses of its samples} of one arm."""
    sub = frame[(frame["model"] == model) & (frame["rung"] == rung)]
    out: dict[str, set[str]] = {}
    for iid, status in zip(sub["item_id"].tolist(), sub["parse_status"].tolist(), strict=True):
        out.setdefault(str(iid), set()).add(str(status))
    return out


def _applies(i: int, iid: str, answer: str | None, determined: np.ndarray | None, statuses: set[str],
             free, r3) -> list[tuple[str, str]]:
    """Every (type, reason) that holds for a missed item, in the order of precedence."""
    out = []
    if determined is not None and not determined[i]:
        out.append((UNDETERMINED, "R1 fails on the item"))
    if answer is None and "ok" not in statuses:  # (a tie under the rule ``none`` has ok samples: typed below)
        if statuses and statuses <= {"api_error"}:
            out.append((NO_RESPONSE, "every sample an API error"))
        else:
            out.append((FORMAT, "no sample parses ("
                        + (", ".join(sorted(statuses - {"ok"})) or "item missing from the file") + ")"))
    elif answer is not None and free is not None and free.answers[i] == answer:
        out.append((SHORTCUT, f"the {free.rung} arm votes the same answer {answer!r}"))
    if r3 is None:
        out.append((EITHER, "no scored R3 arm"))
    elif r3.correct_vector[i]:
        out.append((PERCEPTION, "right at R3"))
    else:
        out.append((REASONING, "wrong at R3 too"))
    return out


def failure_types(arms: Mapping[tuple[str, str], object], universe: Sequence[str], targets: Mapping[str, str],
                  frame: pd.DataFrame, determined: np.ndarray | None, *, rung: str = "R4") -> pd.DataFrame:
    """One row per (model, item the model misses at ``rung``) with its type (module docstring).

    Parameters
    ----------
    arms : mapping of (model, rung) to ladder.Arm
        The ladder's arms (``Ladder.arm_objects``).
    universe : sequence of str
        The ladder's items, in the arms' order.
    targets : mapping of str to str
        The right answer of each item.
    frame : pandas.DataFrame
        The canonical table (each sample's ``parse_status``).
    determined : numpy.ndarray of bool, shape (n,), optional
        R1's per-item outcomes (None: determination not assessed, type 1 never applies).
    rung : str, default "R4"
        The rung whose misses are typed.

    Returns
    -------
    pandas.DataFrame
        :data:`COLUMNS`; ``also``: the later types that apply too, ``; ``-joined.
    """
    rows = []
    for (model, r), arm in sorted(arms.items()):
        if r != rung:
            continue
        statuses = _sample_status(frame, model, rung)
        free = next((arms[(model, f)] for f in FREE_ORDER if (model, f) in arms
                     and any(x is not None for x in arms[(model, f)].answers)), None)
        r3 = arms.get((model, "R3"))
        r3 = r3 if r3 is not None and r3.scored else None
        for i, iid in enumerate(universe):
            if arm.correct_vector[i]:
                continue
            got = _applies(i, iid, arm.answers[i], determined, statuses.get(iid, set()), free, r3)
            rows.append({"model": model, "rung": rung, "item_id": iid, "target": targets[iid],
                         "answer": arm.answers[i], "type": got[0][0], "reason": got[0][1],
                         "also": "; ".join(t for t, _ in got[1:])})
    return pd.DataFrame(rows, columns=COLUMNS)


def failure_shares(types: pd.DataFrame, missed: Mapping[str, int]) -> pd.DataFrame:
    """Per model: the items missed and the items of each type (:data:`TYPES`); each row's types add up to its
    ``missed``.

    Parameters
    ----------
    types : pandas.DataFrame
        :func:`failure_types`' table.
    missed : mapping of str to int
        Per model, the items it misses at the rung (the ladder's n − correct).

    Returns
    -------
    pandas.DataFrame
        :data:`SHARE_COLUMNS`, items per type.
    """
    counts = types.groupby(["model", "type"]).size() if len(types) else pd.Series(dtype=int)
    rows = [{"model": m, "missed": int(missed[m]), **{t: int(counts.get((m, t), 0)) for t in TYPES}}
            for m in sorted(missed)]
    return pd.DataFrame(rows, columns=SHARE_COLUMNS)
