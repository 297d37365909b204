"""Model answers from a ladder output (``viewcert ladder --out DIR``: its ``results_table.csv``, one row per
model, rung, item and sample): what each model answered on each rung of each item, and whether it scored.

An item of the certificate is matched by its id, else by its export question's id. A model is **right** on a
rung of an item as the ladder scored it: its ``item_outcomes.csv`` (each arm's verdict on each item, written by
``viewcert ladder``) when the output has one, so that the explorer counts exactly what the ladder report counts;
else by vote, recomputed: the majority vote of its parsed samples there (ties: the first answer) is an answer
that scored; **wrong** otherwise (no parsed sample: wrong). Two index
filters come from it: ``every_model_wrong`` (every model that answered the item on R4 is wrong there) and
``r3_right_r4_wrong`` (some model is right on R3 and wrong on R4); with the ladder's ``item_status.csv`` (its item
statuses, ``attribution.items``), one filter per status (``attribution.items.status_filter``), which the report's
status counts link to. Everything here is received text: it is only ever written through the explorer's escaping.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

from viewcert.attribution.items import STATUSES, status_filter
from viewcert.attribution.parsing import majority_vote
from viewcert.attribution.table import RUNGS
from viewcert.errors import InputError
from viewcert.io.received import read_received_text

TABLE = "results_table.csv"
OUTCOMES = "item_outcomes.csv"
OUTCOME_COLUMNS = ("model", "rung", "item_id", "right")
NEEDED = ("model", "rung", "item_id", "sample_k", "parsed_answer", "score", "parse_status")
FILTERS = ("every_model_wrong", "r3_right_r4_wrong")
TITLES = {"every_model_wrong": "every model wrong (R4)", "r3_right_r4_wrong": "right on R3, wrong on R4"}
STATUS = "item_status.csv"
STATUS_FILTERS = tuple(status_filter(s) for s in STATUSES)
STATUS_TITLES = {status_filter(s): f"status: {s}" for s in STATUSES}


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
    scored: dict | None = None  # the ladder's own verdicts: {item id: {(model, rung): bool}} (``OUTCOMES``)
    statuses: dict | None = None  # the ladder's item statuses: {item id: status} (``STATUS``)

    def status_tags(self, *ids) -> tuple[str, ...]:
        """The status filter of the first of ``ids`` the ladder gave a status (none without ``STATUS``)."""
        for i in ids:
            if self.statuses is not None and isinstance(i, str) and i in self.statuses:
                return (status_filter(self.statuses[i]),)
        return ()

    def of(self, *ids) -> dict:
        """The answers of the first of ``ids`` (the certificate's id, the question's id) the table holds."""
        for i in ids:
            if isinstance(i, str) and i in self.by_item:
                return self.by_item[i]
        return {}

    def verdicts(self, *ids) -> dict:
        """{(model, rung): right} of the first of ``ids`` the ladder scored (its ``OUTCOMES``), else recomputed
        by vote from the samples (``right``); a (model, rung) without a verdict is left out."""
        if self.scored is not None:
            for i in ids:
                if isinstance(i, str) and i in self.scored:
                    return self.scored[i]
            return {}
        out = {key: right(samples) for key, samples in self.of(*ids).items()}
        return {k: v for k, v in out.items() if v is not None}


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
    scored = read_outcomes(Path(ladder_dir) / OUTCOMES) if (Path(ladder_dir) / OUTCOMES).is_file() else None
    statuses = read_statuses(Path(ladder_dir) / STATUS) if (Path(ladder_dir) / STATUS).is_file() else None
    return Answers(tuple(models), tuple(sorted(rungs, key=lambda r: (order.get(r, len(order)), r))), by_item,
                   scored, statuses)


def read_statuses(path: Path) -> dict:
    """A ladder's ``item_status.csv`` (``attribution.items.item_status``): {item id: status}; InputError naming the
    file and field when a column is missing or a status is not one of ``attribution.items.STATUSES``."""
    reader = csv.DictReader(io.StringIO(read_received_text(path, what=STATUS), newline=""))
    missing = [c for c in ("item_id", "status") if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", source=str(path), field=missing[0])
    out: dict = {}
    for n, row in enumerate(reader, start=2):
        if row["status"] not in STATUSES:
            raise InputError(f"line {n}: unknown status {str(row['status'])[:60]!r}", source=str(path),
                             field="status")
        out[row["item_id"]] = row["status"]
    return out


def read_outcomes(path: Path) -> dict:
    """A ladder's ``item_outcomes.csv`` (``attribution.report.item_outcomes_table``): {item id: {(model, rung):
    right}}; InputError naming the file and field when a column is missing or ``right`` is not 0 or 1."""
    reader = csv.DictReader(io.StringIO(read_received_text(path, what=OUTCOMES), newline=""))
    missing = [c for c in OUTCOME_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", source=str(path), field=missing[0])
    out: dict = {}
    for n, row in enumerate(reader, start=2):
        if row["right"] not in ("0", "1"):
            raise InputError(f"line {n}: right must be 0 or 1, got {str(row['right'])[:40]!r}", source=str(path),
                             field="right")
        out.setdefault(row["item_id"], {})[(row["model"], row["rung"])] = row["right"] == "1"
    return out


def right(samples) -> bool | None:
    """Whether a model is right on a rung as the ladder scores an item (``attribution.ladder``, scoring by
    vote): the majority vote of its parsed (``ok``) samples, ties to the first (``parsing.majority_vote``), is
    an answer that scored; None without samples."""
    if not samples:
        return None
    vote = majority_vote([a.answer if a.status == "ok" and a.answer else None for a in samples], "first")
    return vote.answer is not None and any(a.answer == vote.answer and a.score > 0.5 for a in samples)


def answer_tags(verdicts: dict, models) -> tuple[str, ...]:
    """The answer filters (``FILTERS``) one item's verdicts (``Answers.verdicts``) belong to."""
    r4 = [verdicts.get((m, "R4")) for m in models]
    r3 = [verdicts.get((m, "R3")) for m in models]
    out = []
    if any(x is not None for x in r4) and all(x is False for x in r4 if x is not None):
        out.append("every_model_wrong")
    if any(a is True and b is False for a, b in zip(r3, r4, strict=True)):
        out.append("r3_right_r4_wrong")
    return tuple(out)
