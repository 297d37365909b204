"""Readers: one module per source, each returning a canonical :class:`~viewcert.attribution.table.ResultTable`.

========== ============================================= ==========================================
harness    files                                         module
========== ============================================= ==========================================
study      render-ceiling prediction JSON                :mod:`.study`
native     CSV / TSV / JSONL with canonical columns      :mod:`.native`
vlmevalkit VLMEvalKit prediction / result xlsx, tsv, csv :mod:`.vlmevalkit`
lmms_eval  lmms-eval ``--log_samples`` JSONL             :mod:`.lmms_eval`
inspect    Inspect AI ``.eval`` zip or ``.json`` log     :mod:`.inspect_ai`
========== ============================================= ==========================================

:func:`read_file` dispatches on the harness (or detects it); :func:`read_manifest` reads every entry of a
manifest, concatenates, and runs the cross-arm checks.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

import pandas as pd

from viewcert.attribution.parsing import AnswerParser, get_parser
from viewcert.attribution.readers._common import log_buffer, log_text, log_zip, received_log
from viewcert.attribution.readers.inspect_ai import read_inspect
from viewcert.attribution.readers.lmms_eval import read_lmms_eval
from viewcert.attribution.readers.native import read_native
from viewcert.attribution.readers.study import read_study
from viewcert.attribution.readers.vlmevalkit import read_vlmevalkit
from viewcert.attribution.shipped import ShippedBenchmark, is_export, load_shipped, task_parser
from viewcert.attribution.table import (
    Coverage,
    Manifest,
    ResultTable,
    check_consistency,
    read_items,
)
from viewcert.errors import InputError
from viewcert.io.received import iter_json_lines, loads_json_strict

READERS = {
    "study": read_study,
    "native": read_native,
    "vlmevalkit": read_vlmevalkit,
    "lmms_eval": read_lmms_eval,
    "inspect": read_inspect,
}

__all__ = ["READERS", "detect_harness", "manifest_benchmark", "read_file", "read_manifest"]


#: what a malformed file makes the libraries underneath raise (pandas, openpyxl, zipfile, json, codecs)
READ_FAILURES = (ValueError, KeyError, IndexError, OSError, EOFError, zipfile.BadZipFile, UnicodeError,
                 RecursionError, AttributeError, TypeError, zlib.error, struct.error, OverflowError)


def _guarded_read(path: Path, what: str, fn):
    """``fn()`` on the log opened once (``received_log``: a regular file, its size or, for zip containers,
    every member's uncompressed size and ratio checked first), with any failure of the parsing libraries
    turned into an InputError naming the file; detection, reader and digest all use that one open file."""
    src = str(path)
    try:
        with received_log(path):
            return fn()
    except InputError:
        raise
    except READ_FAILURES as exc:
        msg = " ".join(str(exc).split())[:200]
        raise InputError(f"cannot read as {what}: {type(exc).__name__}: {msg}", source=src) from None


def detect_harness(path: str | Path) -> str:
    """Which reader a file needs, from its extension and first record; raises naming the file. Inside
    ``received_log`` of the same path it reads the open log, not the file again."""
    path = Path(path)
    return _guarded_read(path, "a harness file", lambda: _detect(path))


def _detect(path: Path) -> str:
    src = str(path)
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return "inspect"
    if suffix == ".json":
        try:
            data = loads_json_strict(log_text(path), source=src)
        except InputError:
            raise
        except ValueError as exc:
            raise InputError(f"not valid JSON: {exc}", source=src) from None
        if isinstance(data, dict) and "predictions" in data and "K" in data:
            return "study"
        if isinstance(data, dict) and "eval" in data:
            return "inspect"
        raise InputError("JSON file is neither a study prediction file nor an Inspect log", source=src)
    if suffix == ".jsonl":
        for _, first in iter_json_lines(log_text(path), source=src):
            if isinstance(first, dict) and "doc_id" in first and ("filtered_resps" in first or "resps" in first):
                return "lmms_eval"
            return "native"
        raise InputError("empty file", source=src)
    if suffix in (".xlsx", ".tsv", ".csv"):
        if suffix == ".xlsx":
            with log_zip(path) as fh:
                if not zipfile.is_zipfile(fh):
                    raise InputError("not an xlsx workbook", source=src)
                fh.seek(0)
                cols = pd.read_excel(fh, nrows=0, engine="openpyxl").columns
        else:
            cols = pd.read_csv(log_buffer(path), sep="\t" if suffix == ".tsv" else ",",
                               nrows=0).columns
        low = {str(c).lower() for c in cols}
        if {"index", "prediction"} <= low:
            return "vlmevalkit"
        if suffix == ".xlsx":
            raise InputError("xlsx without VLMEvalKit's index/prediction columns", source=src)
        return "native"
    raise InputError(f"no reader for {suffix!r} files", source=src)


def read_file(
    path: str | Path,
    *,
    harness: str | None = None,
    model: str | None = None,
    rung: str | None = None,
    run: str | None = None,
    parser: AnswerParser | str | None = None,
    **options,
) -> ResultTable:
    """Read one file into the canonical table. ``options`` go to the reader (e.g. ``id_column``). The file is
    read once: detection, reader and digest share one open (``received_log``)."""
    if harness is not None and harness not in READERS:
        raise InputError(f"unknown harness {harness!r}; known: {sorted(READERS)}", source=str(path),
                         field="harness")
    with received_log(path):
        return _read_open(path, harness, model=model, rung=rung, run=run, parser=parser, options=options)


def _read_open(path: str | Path, harness: str | None, *, model, rung, run, parser, options: dict) -> ResultTable:
    """``read_file`` inside ``received_log`` of ``path`` (a given harness already checked)."""
    harness = harness or detect_harness(path)
    reader = READERS[harness]
    try:
        return _guarded_read(Path(path), f"a {harness} file", lambda: reader(
            path, model=model, rung=rung, run=run, parser=get_parser(parser), **options))
    except InputError as exc:
        if "unexpected keyword" in str(exc):
            raise InputError(f"reader {harness!r} does not take option(s): {exc}", source=str(path)) from None
        raise


#: the readers that map ids and letters through a shipped benchmark (``attribution.shipped``)
SHIPPED_READERS = ("native", "vlmevalkit", "lmms_eval", "inspect")


def manifest_benchmark(manifest: Manifest) -> ShippedBenchmark | None:
    """The export a manifest scores: ``[study].benchmark``, else the folder of its certificate when that is
    an export (ids.csv + benchmark.jsonl beside it), else None."""
    if manifest.benchmark is not None:
        return load_shipped(manifest.benchmark)
    if manifest.certificate is not None and is_export(manifest.certificate.parent):
        return load_shipped(manifest.certificate.parent)
    return None


def read_manifest(manifest: Manifest, *, parser: AnswerParser | str | None = None,
                  shipped: ShippedBenchmark | None = None) -> tuple[ResultTable, Coverage]:
    """Read every manifest entry, concatenate (duplicate keys raise) and check targets and coverage
    against the item list: the shipped benchmark's (``shipped``, by default the manifest's own export; every
    harness's ids mapped to its item ids), else the manifest's item list when it has one."""
    if shipped is None:
        shipped = manifest_benchmark(manifest)
    if parser is None:
        parser = task_parser(manifest.task, shipped)
    parser = get_parser(parser)
    tables = []
    for e in manifest.entries:
        with received_log(e.path):  # one read of each log: detection, reader and digest
            harness = e.harness or detect_harness(e.path)
            extra = {"items": shipped} if shipped is not None and harness in SHIPPED_READERS else {}
            tables.append(read_file(e.path, harness=harness, model=e.model, rung=e.rung, run=e.run, parser=parser,
                                    **extra, **dict(e.options)))
    table = ResultTable.concat(tables)
    universe = None
    if shipped is not None:
        universe = shipped.targets(parser)
    elif manifest.items is not None:
        universe = read_items(manifest.items, id_field=manifest.items_id_field,
                              target_field=manifest.items_target_field, parser=parser)
    coverage = check_consistency(table, universe)
    return table, coverage
