"""The render-ceiling study's prediction JSON.

Format (``release/predictions/{arm}__{org}__{model}__K{K}.json``)::

    {"model": "x-ai/grok-4.5", "arm": "R3 coordinates-as-text", "K": 3, "n": 210, "micro": 0.8524,
     "unparseable": 0, "api_errors": 0, "scored": true,          # the last three only on some arms
     "predictions": [{"material_id": "mp-1235466", "truth": "triclinic", "pred": "triclinic",
                      "votes": {"triclinic": 2, "monoclinic": 1}}, ...]}

The file keeps the K answers only as vote counts (in first-occurrence order), not the raw outputs, so each
item becomes K rows: the votes, in their order, as ``ok`` samples, then ``K - sum(votes)`` failed samples.
What failed samples were is known only in total: ``api_errors`` counts failed *calls* (samples), and
``unparseable`` counts *items* left without an answer. The reader therefore marks failed samples as
``api_error`` up to the file's ``api_errors`` total, in file order, and ``unparseable`` after that; a
warning says so whenever one file mixes both, because then the per-item split is an assignment, not a
record (arm-level totals, and every decision made from them, are exact).

The voted answer under the ``first`` tie rule is checked against the file's ``pred``; disagreements are
reported as warnings.
"""

from __future__ import annotations

from pathlib import Path

from viewcert.attribution.parsing import AnswerParser, ParsedAnswer, get_parser, majority_vote
from viewcert.attribution.readers._common import canonical_target, finish, log_text, require, row
from viewcert.attribution.table import STUDY_ARMS, ResultTable, canonical_rung
from viewcert.errors import InputError
from viewcert.io.received import loads_json_strict

HARNESS = "study"


def _rung_from(path: Path, arm_field: str | None) -> str | None:
    prefix = path.name.split("__", 1)[0]
    if prefix in STUDY_ARMS:
        return STUDY_ARMS[prefix]
    if arm_field:
        low = arm_field.lower()
        if "r3" in low or "coordinates" in low:
            return "R3"
        if "no-image" in low or "noimage" in low:
            return "no-image"
        if "zero-shot" in low or "frontier" in low:
            return "R4"
    return None


def _study_item(p, i: int, k: int, parser, src: str, seen: dict[str, int]) -> tuple:
    """Validate one prediction: (item id, target, the K-or-fewer answers from its votes, pred or None)."""
    where = f"predictions[{i}] (row {i + 1})"
    if not isinstance(p, dict):
        raise InputError(f"{where} is not an object", source=src, field="predictions")
    iid = require(p, "material_id", source=src, where=where, types=str)
    if iid in seen:
        raise InputError(
            f"{where}: duplicate item id {iid!r} (first at row {seen[iid] + 1})", source=src,
            field="material_id",
        )
    seen[iid] = i
    truth = canonical_target(parser, p.get("truth"), source=src, where=where, field="truth")
    votes = require(p, "votes", source=src, where=where, types=dict)
    answers: list[str] = []
    for label, count in votes.items():
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise InputError(f"{where}: vote count for {label!r} must be a non-negative integer, got "
                             f"{count!r}", source=src, field="votes")
        canon = parser.canonical(label)
        if canon is None:
            raise InputError(f"{where}: vote for {label!r}, which is not a label", source=src,
                             field="votes")
        answers.extend([canon] * count)
    if len(answers) > k:
        raise InputError(f"{where}: {len(answers)} votes for K = {k} samples", source=src, field="votes")
    pred = p.get("pred")
    if pred is not None and not isinstance(pred, str):
        raise InputError(f"{where}: pred must be a string or null", source=src, field="pred")
    return iid, truth, answers, None if pred is None else parser.canonical(pred)


def _study_records(items: list[tuple], k: int, api_left: int, run: str, model: str, rung: str, src: str):
    """One row per sample (the missing ones api_error while the file's count lasts, in file order, else
    unparseable): (records, items whose majority vote differs from the file's pred, items with no vote)."""
    records = []
    vote_mismatch = []
    null_items = 0
    for iid, truth, answers, pred in items:
        for s, a in enumerate(answers):
            records.append(row(run=run, model=model, rung=rung, item_id=iid, sample_k=s, raw_output=None,
                               parsed=ParsedAnswer(a, "ok"), target=truth, category=truth, source_file=src,
                               harness=HARNESS))
        for s in range(len(answers), k):
            if api_left > 0:
                parsed = ParsedAnswer(None, "api_error", "API error (counted in the file's api_errors)")
                api_left -= 1
            else:
                parsed = ParsedAnswer(None, "unparseable", "no parseable answer recorded for this sample")
            records.append(row(run=run, model=model, rung=rung, item_id=iid, sample_k=s, raw_output=None,
                               parsed=parsed, target=truth, category=truth, source_file=src, harness=HARNESS))
        vote = majority_vote(answers, "first")
        null_items += vote.answer is None
        if vote.answer != pred:
            vote_mismatch.append(iid)
    return records, vote_mismatch, null_items


def _declared_mismatches(data: dict, src: str, vote_mismatch: list[str], null_items: int, n_items: int) -> list[str]:
    """Warnings where the file's own figures (pred, unparseable, n) disagree with the predictions it holds."""
    warnings = []
    if vote_mismatch:
        warnings.append(
            f"{src}: the majority vote (tie rule 'first') differs from the file's pred on "
            f"{len(vote_mismatch)} item(s), first {vote_mismatch[0]!r}"
        )
    declared_unp = data.get("unparseable")
    if isinstance(declared_unp, int) and declared_unp != null_items:
        warnings.append(
            f"{src}: the file declares unparseable = {declared_unp} but {null_items} item(s) have no vote"
        )
    n = data.get("n")
    if isinstance(n, int) and n != n_items:
        warnings.append(f"{src}: the file declares n = {n} but holds {n_items} predictions")
    return warnings


def _load(path: Path, src: str):
    """The parsed JSON of the prediction file (the log read once inside ``received_log``; no duplicate key)."""
    if not path.exists():
        raise InputError("file not found", source=src)
    text = log_text(path, what="JSON file")
    try:
        return loads_json_strict(text, source=src)
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(f"not valid JSON: {exc}", source=src) from None


def read_study(
    path: str | Path,
    *,
    model: str | None = None,
    rung: str | None = None,
    run: str | None = None,
    parser: AnswerParser | None = None,
) -> ResultTable:
    path = Path(path)
    src = str(path)
    parser = get_parser(parser)
    data = _load(path, src)
    if not isinstance(data, dict):
        raise InputError("top level must be an object with 'predictions'", source=src)
    k = require(data, "K", source=src, where="file", types=int)
    if k < 1:
        raise InputError(f"K must be >= 1, got {k}", source=src, field="K")
    preds = require(data, "predictions", source=src, where="file", types=list)
    file_model = data.get("model")
    model = model or file_model
    if not model:
        raise InputError("no model name (neither in the manifest nor in the file's 'model')", source=src,
                         field="model")
    warnings: list[str] = []
    if file_model and model != file_model:
        warnings.append(f"{src}: manifest model {model!r} overrides the file's {file_model!r}")
    rung = canonical_rung(rung, source=src) if rung else _rung_from(path, data.get("arm"))
    if rung is None:
        raise InputError("cannot tell the rung from the file name or 'arm'; give it in the manifest",
                         source=src, field="rung")
    run = run or f"{path.name.split('__', 1)[0]}-K{k}"
    declared_api = data.get("api_errors")
    if declared_api is not None and (not isinstance(declared_api, int) or declared_api < 0):
        raise InputError(f"api_errors must be a count, got {declared_api!r}", source=src, field="api_errors")
    seen: dict[str, int] = {}
    items = [_study_item(p, i, k, parser, src, seen) for i, p in enumerate(preds)]
    n_missing = sum(k - len(it[2]) for it in items)
    api_left = declared_api or 0
    if api_left > n_missing:
        raise InputError(
            f"api_errors = {api_left} but only {n_missing} of {k * len(items)} samples lack an answer",
            source=src,
            field="api_errors",
        )
    if 0 < api_left < n_missing:
        warnings.append(
            f"{src}: {n_missing} failed samples, {api_left} of them API errors by the file's count; the "
            "file does not say which, so the first ones in file order are marked api_error"
        )
    records, vote_mismatch, null_items = _study_records(items, k, api_left, run, model, rung, src)
    warnings += _declared_mismatches(data, src, vote_mismatch, null_items, len(items))
    return finish(records, path=path, harness=HARNESS, warnings=warnings, model=model, rung=rung)
