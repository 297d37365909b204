"""Model answers from a ladder output (``viewcert ladder --out DIR``: its ``results_table.csv``, one row per
model, rung, item and sample): what each model answered on each rung of each item, and whether it scored.

An item of the certificate is matched by its id, else by its export question's id. A model is **right** on a
rung of an item as the ladder scores it by vote: the majority vote of its parsed samples there (ties: the
first answer) is an answer that scored; **wrong** otherwise (no parsed sample: wrong). Two index
filters come from it: ``every_model_wrong`` (every model that answered the item on R4 is wrong there) and
``r3_right_r4_wrong`` (some model is right on R3 and wrong on R4). Everything here is received text: it is
only ever written through the explorer's escaping.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

from viewcert.attribution.parsing import majority_vote
from viewcert.attribution.table import RUNGS
from viewcert.errors import InputError
from viewcert.io.received import read_received_text

TABLE = "results_table.csv"
NEEDED = ("model", "rung", "item_id", "sample_k", "parsed_answer", "score", "parse_status")
FILTERS = ("every_model_wrong", "r3_right_r4_wrong")
TITLES = {"every_model_wrong": "every model wrong (R4)", "r3_right_r4_wrong": "right on R3, wrong on R4"}


@dataclass(frozen=True)
class Answer:
    """One sample's answer: the parsed answer ('' when none), its score (0–1) and parse status."""

    answer: str
    score: float
    status: str


@dataclass(frozen=True)
class Answers:
    """The ladder's answers: models and rungs (ladder order) and, per item id, per (model, rung), the samples."""

    models: tuple[str, ...]
    rungs: tuple[str, ...]
    by_item: dict

    def of(self, *ids) -> dict:
        """The answers of the first of ``ids`` (the certificate's id, the question's id) the table holds."""
        for i in ids:
            if isinstance(i, str) and i in self.by_item:
                return self.by_item[i]
        return {}


def _score(text: str, where: str) -> float:
    try:
        x = float(text) if text.strip() else 0.0
    except ValueError:
        raise InputError(f"score must be a number, got {text[:40]!r}", source=where, field="score") from None
    if not math.isfinite(x) or not 0.0 <= x <= 1.0:
        raise InputError(f"score must be in [0, 1], got {text[:40]!r}", source=where, field="score")
    return x


def read_answers(ladder_dir) -> Answers:
    """The answers of the ladder output ``ladder_dir`` (its ``results_table.csv``); InputError (one line,
    naming the file and field) when it is missing or malformed."""
    path = Path(ladder_dir) / TABLE
    if not path.is_file():
        raise InputError(f"no {TABLE} in the ladder output (viewcert ladder --out DIR writes it)",
                         source=str(ladder_dir))
    reader = csv.DictReader(io.StringIO(read_received_text(path, what=TABLE), newline=""))
    missing = [c for c in NEEDED if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", source=str(path), field=missing[0])
    by_item: dict = {}
    models: dict[str, None] = {}
    rungs: set[str] = set()
    for row in reader:
        key = (row["model"], row["rung"])
        models.setdefault(row["model"], None)
        rungs.add(row["rung"])
        by_item.setdefault(row["item_id"], {}).setdefault(key, []).append(
            (row["sample_k"], Answer(row["parsed_answer"] or "", _score(row["score"] or "", str(path)),
                                     row["parse_status"] or "")))
    order = {r: k for k, r in enumerate(RUNGS)}
    for per in by_item.values():
        for key, samples in per.items():
            per[key] = tuple(a for _, a in sorted(samples, key=lambda s: int(s[0]) if s[0].isdigit() else 0))
    return Answers(tuple(models), tuple(sorted(rungs, key=lambda r: (order.get(r, len(order)), r))), by_item)


def right(samples) -> bool | None:
    """Whether a model is right on a rung as the ladder scores an item (``attribution.ladder``, scoring by
    vote): the majority vote of its parsed (``ok``) samples, ties to the first (``parsing.majority_vote``), is
    an answer that scored; None without samples."""
    if not samples:
        return None
    vote = majority_vote([a.answer if a.status == "ok" and a.answer else None for a in samples], "first")
    return vote.answer is not None and any(a.answer == vote.answer and a.score > 0.5 for a in samples)


def answer_tags(per: dict, models) -> tuple[str, ...]:
    """The answer filters (``FILTERS``) one item's answers (``Answers.of``) belong to."""
    r4 = [right(per.get((m, "R4"))) for m in models]
    r3 = [right(per.get((m, "R3"))) for m in models]
    out = []
    if any(x is not None for x in r4) and all(x is False for x in r4 if x is not None):
        out.append("every_model_wrong")
    if any(a is True and b is False for a, b in zip(r3, r4, strict=True)):
        out.append("r3_right_r4_wrong")
    return tuple(out)
