"""Shared pieces of the readers: one canonical row, target canonicalisation, provenance, and the harness log
read once.

A log is read once per ``read_file``: :func:`received_log` opens it through ``viewcert.io.received`` (a regular
file; a zip container, ``.eval`` / ``.xlsx``, on its checked descriptor with its members checked, anything else
read into memory within ``max_json_bytes``); inside that block the format detection, the reader
(:func:`log_text`, :func:`log_buffer`, :func:`log_zip`) and the digest (:func:`finish`) all use that one open
file. Outside such a block these helpers read the path themselves, as a direct reader call does.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import io
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import pandas as pd

from viewcert.attribution.parsing import UNDECODABLE, AnswerParser, ParsedAnswer
from viewcert.attribution.table import InputRecord, ResultTable, make_frame, sha256_file
from viewcert.errors import InputError
from viewcert.io.received import open_received_zip, read_received_bytes
from viewcert.limits import active_limits
from viewcert.sanitize import console_text

#: suffixes of zip containers, read on their checked descriptor (members checked, no whole-file size limit)
ZIPPED = (".eval", ".xlsx")
#: (path, open file) of the harness log being read (``received_log``)
_OPEN_LOG: contextvars.ContextVar[tuple[str, BinaryIO] | None] = contextvars.ContextVar("open_log", default=None)


def _shared(path: str | Path) -> BinaryIO | None:
    """The open file of the log at ``path`` inside ``received_log`` (rewound), else None."""
    cur = _OPEN_LOG.get()
    if cur is None or cur[0] != str(path):
        return None
    cur[1].seek(0)
    return cur[1]


@contextlib.contextmanager
def received_log(path: str | Path) -> Iterator[BinaryIO]:
    """The harness log at ``path`` opened once (module docstring); re-entering for the same path reuses it."""
    shared = _shared(path)
    if shared is not None:
        yield shared
        return
    path = Path(path)
    if not path.exists():  # anything else that is not a regular file: refused by the received reader
        raise InputError("file not found", source=str(path))
    if path.suffix.lower() in ZIPPED:
        opened = open_received_zip(path, what="harness log")
    else:
        opened = contextlib.nullcontext(io.BytesIO(read_received_bytes(path, what="harness log")))
    with opened as fh:
        token = _OPEN_LOG.set((str(path), fh))
        try:
            yield fh
        finally:
            _OPEN_LOG.reset(token)


def log_text(path: str | Path, *, what: str = "harness log") -> str:
    """Text of the log (the shared bytes inside ``received_log``), decoded as UTF-8 with every byte that is not
    kept as a lone surrogate (``surrogateescape``, U+DC80–U+DCFF): a response holding one is one failed
    response (:func:`row`), never a refused file. Such a character outside a JSON string still fails the
    JSON parse, naming the file."""
    shared = _shared(path)
    raw = shared.read() if shared is not None else read_received_bytes(path, what=what)
    return raw.decode("utf-8", "surrogateescape")


#: bytes that are not UTF-8 (``surrogateescape``) or a lone surrogate escape (JSON ``"\ud800"``)
_SURROGATE = re.compile("[\ud800-\udfff]")


def undecodable(text: str | None) -> str:
    """Why a received response is not text (``""`` when it is): the first byte that is not UTF-8 (kept by
    ``surrogateescape``) or the first lone surrogate, by character offset."""
    m = _SURROGATE.search(text) if isinstance(text, str) else None
    if m is None:
        return ""
    c = ord(m.group(0))
    if 0xDC80 <= c <= 0xDCFF:
        return f"{UNDECODABLE}: byte 0x{c - 0xDC00:02x} at character {m.start()}"
    return f"{UNDECODABLE}: a lone surrogate U+{c:04X} at character {m.start()}"


def log_buffer(path: str | Path) -> BinaryIO:
    """The log's bytes as a file object for pandas (the shared one inside ``received_log``)."""
    shared = _shared(path)
    return shared if shared is not None else io.BytesIO(read_received_bytes(path, what="harness log"))


@contextlib.contextmanager
def log_zip(path: str | Path) -> Iterator[BinaryIO]:
    """The log as a zip container whose members are checked (``Limits.check_zip``) before anything is
    decompressed (the shared file inside ``received_log``)."""
    shared = _shared(path)
    if shared is None:
        with open_received_zip(path, what="harness log") as fh:
            yield fh
        return
    active_limits().check_zip(shared, source=str(path))
    shared.seek(0)
    yield shared


def log_sha256(path: str | Path) -> str:
    """SHA-256 (hex) of the log: of the shared bytes inside ``received_log``, else streamed from the path."""
    shared = _shared(path)
    return sha256_file(path) if shared is None else hashlib.file_digest(shared, "sha256").hexdigest()


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def item_context(items, parser: AnswerParser, raw_id: Any, options: Any = None, *, source: str = "",
                 where: str = "") -> tuple[str, AnswerParser]:
    """(item id, parser) of one logged sample: with a shipped benchmark (``attribution.shipped``) the item id
    of whatever id the harness logged and the parser with that item's option letters; ``options`` (the
    choices the harness itself logged, e.g. Inspect's ``choices``) give the letters otherwise."""
    iid = str(raw_id) if items is None else items.resolve(raw_id)
    if items is not None and iid in items.choices:
        return iid, items.item_parser(parser, iid)
    if items is not None and items.choices and iid not in items.answers:
        # an id outside the export: with one set of choices for all items its letters still read, and the
        # coverage check then lists every such id with their count; per-item choices cannot be guessed
        if len(set(items.choices.values())) > 1:
            raise InputError(f"{where}: item id {iid!r} is not in the export's id table (ids.csv)", source=source,
                             field="id")
        return iid, items.item_parser(parser, items.ids[0])
    if isinstance(options, list) and options and hasattr(parser, "with_letters"):
        letters = {}
        for i, text in enumerate(options):
            label = parser.canonical(str(text))
            if label is None:
                raise InputError(f"{where}: option {chr(65 + i)} = {str(text)[:60]!r} is not a label", source=source,
                                 field="choices")
            letters[chr(65 + i)] = label
        return iid, parser.with_letters(letters)
    return iid, parser


def canonical_target(parser: AnswerParser, value: Any, *, source: str, where: str, field: str) -> str:
    """The canonical label of a target; a missing or unknown target raises naming file, row and field."""
    if is_missing(value) or str(value).strip() == "":
        raise InputError(f"{where}: target is empty", source=source, field=field)
    label = parser.canonical(str(value))
    if label is None:
        letters = getattr(parser, "letters", None)
        shown = (f"the options {', '.join(sorted(letters))} or " if letters else "") + "the labels "
        raise InputError(
            f"{where}: target {str(value)[:60]!r} is not one of {shown}{', '.join(parser.labels[:12])}"
            + (" …" if len(parser.labels) > 12 else ""),
            source=source,
            field=field,
        )
    return label


def as_score(value: Any, *, source: str, where: str, field: str) -> float | None:
    """A harness score as a float in [0, 1]: numbers, booleans, Inspect's C/I/P/N; None when absent."""
    if is_missing(value):
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        v = float(value)
    elif isinstance(value, str):
        s = value.strip()
        letters = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
        if s.upper() in letters:
            return letters[s.upper()]
        if s.lower() in ("true", "false"):
            return 1.0 if s.lower() == "true" else 0.0
        try:
            v = float(s)
        except ValueError:
            raise InputError(f"{where}: score {value!r} is not a number", source=source, field=field) from None
    else:
        raise InputError(
            f"{where}: score of type {type(value).__name__} is not a number", source=source, field=field
        )
    if not (0.0 <= v <= 1.0) or math.isnan(v):
        raise InputError(f"{where}: score {v} is not in [0, 1]", source=source, field=field)
    return v


def row(
    *,
    run: str,
    model: str,
    rung: str,
    item_id: str,
    sample_k: int,
    raw_output: str | None,
    parsed: ParsedAnswer,
    target: str,
    category: str | None,
    source_file: str,
    harness: str,
    harness_score: float | None = None,
) -> dict:
    """One canonical row. The score is the harness's when given, else parsed == target. A response that is
    not UTF-8 text (:func:`undecodable`) is one failed response: unparseable, with the reason, score 0."""
    bad = undecodable(raw_output)
    if bad:  # kept visibly escaped (``\\udcff``): a table holds text, and the reason says what was received
        parsed, harness_score = ParsedAnswer(None, "unparseable", bad), 0.0
        raw_output = console_text(raw_output)
    computed = 1.0 if (parsed.answer is not None and parsed.answer == target) else 0.0
    return {
        "run": run,
        "model": model,
        "rung": rung,
        "item_id": str(item_id),
        "sample_k": int(sample_k),
        "raw_output": raw_output,
        "parsed_answer": parsed.answer,
        "target": target,
        "score": computed if harness_score is None else float(harness_score),
        "parse_status": parsed.status,
        "category": category,
        "source_file": source_file,
        "harness": harness,
        "parse_reason": parsed.reason,
        "harness_scored": "no" if harness_score is None else "yes",
    }


def finish(
    records: list[dict],
    *,
    path: Path,
    harness: str,
    warnings: list[str],
    model: str,
    rung: str,
) -> ResultTable:
    src = str(path)
    frame = make_frame(records, source=src)
    disagree = 0
    if not frame.empty:
        computed = (frame["parsed_answer"] == frame["target"]).astype(float)
        disagree = int(((frame["score"] >= 0.5) != (computed >= 0.5)).sum())
    if disagree:
        warnings = [
            *warnings,
            f"{src}: the harness's score and viewcert's parse disagree on {disagree} sample(s) "
            "(the ladder votes on parsed answers unless scoring='harness')",
        ]
    rec = InputRecord(
        path=src,
        sha256=log_sha256(path),
        harness=harness,
        model=model,
        rung=rung,
        rows=len(frame),
        items=int(frame["item_id"].nunique()) if len(frame) else 0,
    )
    return ResultTable(frame, list(warnings), [rec])


def require(mapping: Mapping, key: str, *, source: str, where: str, types: tuple[type, ...] | type) -> Any:
    if not isinstance(mapping, Mapping) or key not in mapping:
        raise InputError(f"{where} lacks {key!r}", source=source, field=key)
    value = mapping[key]
    if not isinstance(value, types):
        names = types.__name__ if isinstance(types, type) else " or ".join(t.__name__ for t in types)
        raise InputError(
            f"{where}: {key!r} must be {names}, got {type(value).__name__}", source=source, field=key
        )
    return value
