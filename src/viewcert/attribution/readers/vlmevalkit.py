"""VLMEvalKit per-sample files.

VLMEvalKit's inference writes ``{work_dir}/{model}_{dataset}.xlsx`` (``.tsv``/``.json`` with
``PRED_FORMAT``): the dataset's TSV columns except the image, plus ``prediction``. For a multiple-choice
dataset the columns are ``index, question, A, B, ..., answer, category[, l2-category], split[, ...],
prediction`` with ``answer`` an option letter. Its evaluation then writes
``{model}_{dataset}_{judge}_result.xlsx`` (the same rows plus ``hit`` 0/1 and ``log``) and a
``..._acc.csv`` summary; Y/N and VQA datasets write a ``..._score.xlsx``/``.csv`` with a ``score``
column. API failures appear as the prediction ``"Failed to obtain answer via API."``.

This reader takes any of those per-row files (xlsx, tsv, csv). Options:

- ``id_column`` (default ``index``): the item id column (use a dataset column such as ``material_id``
  when the dataset kept one);
- ``score_column`` (default: ``hit`` if present, else ``score``);
- the target is ``answer`` resolved through the option columns A, B, ... when it is a letter;
- with a viewcert export (``items``) the export's own columns are read back through the table rule's
  inverse (``io.tables.cell_value``), so ``id_column="source_id"`` finds the input's id as it was.
VLMEvalKit runs one sample per item, so ``sample_k`` is 0 and a repeated id is an error.
"""

from __future__ import annotations

import string
from pathlib import Path

import pandas as pd

from viewcert.attribution.parsing import AnswerParser, ChoiceParser, ParsedAnswer, get_parser
from viewcert.attribution.readers._common import (
    as_score,
    canonical_target,
    finish,
    is_missing,
    item_context,
    log_buffer,
    log_zip,
    row,
)
from viewcert.attribution.table import ResultTable, canonical_rung
from viewcert.errors import InputError
from viewcert.io.tables import cell_value

HARNESS = "vlmevalkit"
FAIL_MSG = "Failed to obtain answer via API."


def load_frame(path: Path) -> pd.DataFrame:
    src = str(path)
    if not path.exists():  # anything else that is not a regular file: refused by the received reader
        raise InputError("file not found", source=src)
    suffix = path.suffix.lower()
    try:
        if suffix == ".xlsx":
            with log_zip(path) as fh:  # parsed from the checked descriptor
                df = pd.read_excel(fh, engine="openpyxl")
        elif suffix in (".tsv", ".csv"):
            df = pd.read_csv(log_buffer(path), sep="\t" if suffix == ".tsv" else ",",
                             keep_default_na=False, na_values=[""], encoding_errors="surrogateescape")
        else:
            raise InputError(f"VLMEvalKit files are .xlsx, .tsv or .csv, not {suffix!r}", source=src)
    except (ValueError, pd.errors.ParserError, OSError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"cannot read the table: {exc}", source=src) from None
    # VLMEvalKit lower-cases every non-option column when it loads a file; do the same
    return df.rename(columns={c: c if (len(str(c)) == 1 and str(c).isupper()) else str(c).lower()
                              for c in df.columns})


#: the columns of a viewcert export's ``benchmark.tsv`` (``benchmark.harness_files.harness_tsv``) that a
#: VLMEvalKit result file copies: written by the table rule (``io.tables``)
EXPORT_COLUMNS = ("index", "image_path", "question", "answer", "category", "split", "id", "source_id",
                  "constraints", *string.ascii_uppercase)


def exported_cells(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the cells of the export's own columns read back through ``io.tables.cell_value`` (a
    source id ``'@SUM(1+1)cmd`` is ``@SUM(1+1)cmd`` again); the harness's columns (``prediction``, ``hit``,
    ``log``, ...) are as the harness wrote them."""
    df = df.copy()
    for col in EXPORT_COLUMNS:
        if col in df.columns:
            df[col] = df[col].map(cell_value)
    return df


def _score_column(df: pd.DataFrame, src: str, id_column: str, score_column: str | None) -> str | None:
    """The score column to read (``hit``, else ``score``, else none unless one is given); refuses a frame
    without the id, ``prediction`` and ``answer`` columns or without the score column given."""
    for col in (id_column, "prediction", "answer"):
        if col not in df.columns:
            raise InputError(f"missing column {col!r} (columns: {', '.join(map(str, df.columns))})",
                             source=src, field=col)
    if score_column is None:
        return "hit" if "hit" in df.columns else ("score" if "score" in df.columns else None)
    if score_column not in df.columns:
        raise InputError(f"missing score column {score_column!r}", source=src, field=score_column)
    return score_column


def _manifest_rung(model: str | None, rung: str | None, src: str) -> str:
    """The canonical rung; both it and the model must come from the manifest."""
    if not model:
        raise InputError("the model name must come from the manifest (VLMEvalKit files do not hold it)",
                         source=src, field="model")
    if not rung:
        raise InputError("the rung must come from the manifest", source=src, field="rung")
    return canonical_rung(rung, source=src)


def _item_id(r: dict, id_column: str, items, parser: AnswerParser, src: str, where: str) -> str:
    """The row's item id (an integral float read as an int, mapped through ``items``); refuses an empty one."""
    iid = r.get(id_column)
    if is_missing(iid) or str(iid).strip() == "":
        raise InputError(f"{where}: {id_column} is empty", source=src, field=id_column)
    if isinstance(iid, float) and iid.is_integer():
        iid = int(iid)
    iid, _ = item_context(items, parser, str(iid) if items is not None else str(iid).strip())
    return iid


def _row_parser(r: dict, parser: AnswerParser, option_cols: list[str], src: str, where: str) -> AnswerParser:
    """``parser`` with the row's option letters A, B, ... as labels (a choice parser only)."""
    if not (option_cols and isinstance(parser, ChoiceParser)):
        return parser
    letters = {}
    for c in option_cols:
        v = r.get(c)
        if is_missing(v) or str(v).strip() == "":
            continue
        lab = parser.canonical(str(v))
        if lab is None:
            raise InputError(f"{where}: option {c} = {v!r} is not a label", source=src, field=c)
        letters[c] = lab
    return parser.with_letters(letters)


def read_vlmevalkit(
    path: str | Path,
    *,
    model: str | None = None,
    rung: str | None = None,
    run: str | None = None,
    parser: AnswerParser | None = None,
    id_column: str = "index",
    score_column: str | None = None,
    items=None,
) -> ResultTable:
    """The rows as canonical rows; ``items``: a shipped benchmark (``attribution.shipped``) mapping ``index``
    (or any id column) to the item id."""
    path = Path(path)
    src = str(path)
    parser = get_parser(parser)
    df = load_frame(path)
    if items is not None:  # a viewcert export's TSV: its cells back as they were (the table rule's inverse)
        df = exported_cells(df)
    score_column = _score_column(df, src, id_column, score_column)
    rung = _manifest_rung(model, rung, src)
    option_cols = [c for c in string.ascii_uppercase if c in df.columns]
    records = []
    seen: dict[str, int] = {}
    for i, r in enumerate(df.to_dict("records")):
        where = f"row {i + 1}"
        iid = _item_id(r, id_column, items, parser, src, where)
        if iid in seen:
            raise InputError(f"{where}: duplicate item id {iid!r} (first at row {seen[iid] + 1})", source=src,
                             field=id_column)
        seen[iid] = i
        row_parser = _row_parser(r, parser, option_cols, src, where)
        target = canonical_target(row_parser, r.get("answer"), source=src, where=where, field="answer")
        pred = r.get("prediction")
        raw = None if is_missing(pred) else str(pred)
        if raw is not None and FAIL_MSG in raw:
            parsed = ParsedAnswer(None, "api_error", "VLMEvalKit recorded an API failure")
        else:
            parsed = row_parser.parse(raw)
        score = None
        if score_column is not None:
            score = as_score(r.get(score_column), source=src, where=where, field=score_column)
        cat = r.get("category")
        records.append(row(run=run or path.stem, model=model, rung=rung, item_id=iid, sample_k=0,
                           raw_output=raw, parsed=parsed, target=target,
                           category=None if is_missing(cat) else str(cat), source_file=src, harness=HARNESS,
                           harness_score=score))
    return finish(records, path=path, harness=HARNESS, warnings=[], model=model, rung=rung)
