"""viewcert's native result files: CSV or JSONL with (a subset of) the canonical columns.

Required: ``item_id`` (alias ``id``), ``target``, and ``raw_output`` or ``parsed_answer`` (or both).
Optional: ``sample_k`` (default 0; a repeated item id without it is an error), ``score``,
``parse_status`` (``api_error``/``refused`` rows keep it; otherwise the parser decides), ``parse_reason``,
``category``,
``model``, ``rung``, ``run`` (manifest values take precedence over columns).

CSV/TSV cells follow viewcert's table rule (``io.tables``): ``write_native`` gives a text cell starting
with ``= + - @``, tab, CR or ``'`` a leading ``'`` and writes control characters as ``\\xNN``/``\\uNNNN`` and
a backslash before such an escape doubled; ``read_native`` undoes exactly that (so a file written by hand
reads as written unless a cell starts with ``'`` or holds ``\\\\``, ``\\xNN`` or ``\\uNNNN``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from viewcert.attribution.parsing import PARSE_STATUSES, AnswerParser, ParsedAnswer, get_parser
from viewcert.attribution.readers._common import (
    as_score,
    canonical_target,
    finish,
    is_missing,
    item_context,
    log_buffer,
    log_text,
    row,
)
from viewcert.attribution.table import COLUMNS, EXTRA_COLUMNS, ResultTable, canonical_rung
from viewcert.errors import InputError
from viewcert.io.atomic import write_text_atomic
from viewcert.io.received import iter_json_lines
from viewcert.io.tables import cell_value, frame_csv_text

HARNESS = "native"


def _load(path: Path) -> tuple[pd.DataFrame, str]:
    src = str(path)
    if not path.exists():  # anything else that is not a regular file: refused by the received reader
        raise InputError("file not found", source=src)
    if path.suffix.lower() == ".jsonl":
        rows = []
        for n, obj in iter_json_lines(log_text(path), source=src):
            if not isinstance(obj, dict):
                raise InputError(f"line {n}: each line must be a JSON object", source=src)
            rows.append(obj)
        return pd.DataFrame(rows, dtype=object), "line"  # object: a response may hold a lone surrogate
    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        # bytes that are not UTF-8 kept as lone surrogates: such a response is one failed response (``row``)
        df = pd.read_csv(log_buffer(path), sep=sep, dtype=object, keep_default_na=False, na_values=[""],
                         encoding_errors="surrogateescape")
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InputError(f"not a readable CSV: {exc}", source=src) from None
    # cells by the table rule (io.tables), as write_native writes them: back to the text they were made from
    # (object columns built cell by cell: a response may hold a lone surrogate, which no pandas string holds)
    return pd.DataFrame({cell_value(c): pd.Series([cell_value(v) for v in df[c]], index=df.index, dtype=object)
                         for c in df.columns}), "row"


def _as_int(value, *, source: str, where: str) -> int:
    if is_missing(value) or str(value).strip() == "":
        return 0
    try:
        f = float(value)
    except (TypeError, ValueError):
        f = float("nan")
    if not f.is_integer():
        raise InputError(f"{where}: sample_k {value!r} is not an integer", source=source, field="sample_k")
    return int(f)


def _columns_checked(df: pd.DataFrame, src: str) -> pd.DataFrame:
    """The frame with ``id`` read as ``item_id``; refuses one without the required columns."""
    if "item_id" not in df.columns and "id" in df.columns:
        df = df.rename(columns={"id": "item_id"})
    for col in ("item_id", "target"):
        if col not in df.columns:
            raise InputError(f"missing column {col!r} (columns: {', '.join(map(str, df.columns))})",
                             source=src, field=col)
    if "raw_output" not in df.columns and "parsed_answer" not in df.columns:
        raise InputError("needs a raw_output or a parsed_answer column", source=src, field="raw_output")
    return df


def _named(given: str | None, r: dict, col: str) -> str | None:
    """The manifest's value, else the row's column (None when both are missing)."""
    return given or (None if is_missing(r.get(col)) else str(r.get(col)))


def _status(r: dict, *, src: str, where: str) -> str | None:
    """The row's recorded parse_status (None when absent); refuses one that is not a parse status."""
    status = r.get("parse_status")
    status = None if is_missing(status) else str(status).strip()
    if status is not None and status not in PARSE_STATUSES:
        raise InputError(f"{where}: parse_status {status!r} is not one of {PARSE_STATUSES}", source=src,
                         field="parse_status")
    return status


def _parsed(r: dict, parser: AnswerParser, raw: str | None, status: str | None, *, src: str,
            where: str) -> ParsedAnswer:
    """The row's answer: a recorded failure, else its parsed_answer, else a recorded unparseable, else
    ``raw`` parsed."""
    given = r.get("parsed_answer")
    reason = r.get("parse_reason")
    reason = None if is_missing(reason) or not str(reason).strip() else str(reason)
    if status in ("api_error", "refused"):
        return ParsedAnswer(None, status, reason or f"{status} (recorded in the file)")
    if not is_missing(given) and str(given).strip():
        label = parser.canonical(str(given))
        if label is None:
            raise InputError(f"{where}: parsed_answer {given!r} is not a label", source=src,
                             field="parsed_answer")
        return ParsedAnswer(label, "ok")
    if status == "unparseable" and raw is None:
        return ParsedAnswer(None, "unparseable", reason or "unparseable (recorded in the file)")
    return parser.parse(raw)


def _record(r: dict, where: str, path: Path, manifest: tuple, base_parser: AnswerParser, items) -> dict:
    """One canonical row from the file's row ``r``; ``manifest``: its (model, rung, run), each or None."""
    src = str(path)
    model, rung, run = manifest
    iid = r.get("item_id")
    if is_missing(iid) or str(iid).strip() == "":
        raise InputError(f"{where}: item_id is empty", source=src, field="item_id")
    m = _named(model, r, "model")
    if not m:
        raise InputError(f"{where}: no model (column or manifest)", source=src, field="model")
    rg = _named(rung, r, "rung")
    if not rg:
        raise InputError(f"{where}: no rung (column or manifest)", source=src, field="rung")
    rg = canonical_rung(rg, source=f"{src} {where}")
    k = _as_int(r.get("sample_k"), source=src, where=where)
    iid, parser = item_context(items, base_parser, str(iid).strip())
    target = canonical_target(parser, r.get("target"), source=src, where=where, field="target")
    raw = r.get("raw_output")
    raw = None if is_missing(raw) else str(raw)
    parsed = _parsed(r, parser, raw, _status(r, src=src, where=where), src=src, where=where)
    score = as_score(r.get("score"), source=src, where=where, field="score") if "score" in r else None
    cat = r.get("category")
    return row(run=_named(run, r, "run") or path.stem, model=m, rung=rg, item_id=iid, sample_k=k,
               raw_output=raw, parsed=parsed, target=target, category=None if is_missing(cat) else str(cat),
               source_file=src, harness=HARNESS, harness_score=score)


def read_native(
    path: str | Path,
    *,
    model: str | None = None,
    rung: str | None = None,
    run: str | None = None,
    parser: AnswerParser | None = None,
    items=None,
) -> ResultTable:
    """The file's rows; ``items``: a shipped benchmark (``attribution.shipped``) mapping ids and letters."""
    path = Path(path)
    base_parser = get_parser(parser)
    df, unit = _load(path)
    df = _columns_checked(df, str(path))
    records = [_record(r, f"{unit} {i + 1}", path, (model, rung, run), base_parser, items)
               for i, r in enumerate(df.to_dict("records"))]
    models = sorted({r["model"] for r in records})
    rungs = sorted({r["rung"] for r in records})
    return finish(records, path=path, harness=HARNESS, warnings=[], model=",".join(models),
                  rung=",".join(rungs))


def write_native(table: ResultTable | pd.DataFrame, path: str | Path) -> Path:
    """Write a canonical table as native CSV (``.csv``) or JSONL (``.jsonl``), atomically; reading it
    back with :func:`read_native` gives the same rows (harness and source_file become ``native`` and the
    new path)."""
    frame = table.frame if isinstance(table, ResultTable) else table
    cols = [*COLUMNS, *(c for c in EXTRA_COLUMNS if c in frame.columns)]
    frame = frame[cols].sort_values(["model", "rung", "item_id", "sample_k"], kind="stable")
    path = Path(path)
    if path.suffix.lower() == ".jsonl":
        lines = []
        for rec in frame.to_dict("records"):
            lines.append(json.dumps({k: (None if is_missing(v) else v) for k, v in rec.items()}, ensure_ascii=False))
        return write_text_atomic(path, "\n".join(lines) + "\n")
    if path.suffix.lower() != ".csv":
        raise InputError("native files are .csv or .jsonl", source=str(path))
    return write_text_atomic(path, frame_csv_text(frame))  # the table rule: no formula, no raw control
