"""Inspect AI logs: ``.eval`` (zip) and ``.json``.

A ``.eval`` file is a zip archive holding ``header.json`` (the log without samples: ``version``,
``status``, ``eval`` with ``run_id``, ``task``, ``model``, ``dataset``, ``config.epochs``; ``plan``;
``results``; ``stats``), one ``samples/{id}_epoch_{epoch}.json`` per sample and epoch,
``summaries.json`` and ``reductions.json``. Inspect writes the members zstd-compressed (zip method 93;
Inspect 0.3.285 always does), which Python's ``zipfile`` cannot read before 3.14: such members are
decompressed here with pyarrow's zstd codec and checked against the member's CRC-32. A log still being written has ``_journal/start.json``
instead of ``header.json``. A ``.json`` log is the whole ``EvalLog`` in one object with a ``samples``
list.

Each sample: ``id`` (int or str), ``epoch`` (1-based), ``input``, ``target`` (str or list of str),
``output`` (``ModelOutput``: ``model``, ``choices[0].message.content`` as a string or a list of content
parts, ``completion``, ``stop_reason``, ``error``), ``scores`` (``{scorer: {value, answer,
explanation}}`` with values such as ``"C"``/``"I"`` or numbers), ``metadata`` and ``error`` (set when
the sample failed, e.g. on an API error). Option ``scorer`` picks the score (default: the first).
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pyarrow as pa

from viewcert.attribution.parsing import AnswerParser, ParsedAnswer, get_parser
from viewcert.attribution.readers._common import (
    as_score,
    canonical_target,
    finish,
    item_context,
    log_text,
    log_zip,
    row,
)
from viewcert.attribution.table import ResultTable, canonical_rung
from viewcert.errors import InputError
from viewcert.io.received import loads_json_strict

HARNESS = "inspect"


ZIP_ZSTANDARD = 93  # the zip format's method id for zstd (APPNOTE 4.4.5)


def _raw(zf: zipfile.ZipFile, info: zipfile.ZipInfo, src: str) -> bytes:
    """A member's compressed bytes, read from its local header (``compress_size`` of them: the archive's
    central directory, its sizes checked against the limits before any member is read)."""
    fp = zf.fp
    fp.seek(info.header_offset)
    head = fp.read(30)
    if len(head) != 30 or head[:4] != b"PK\x03\x04":
        raise InputError(f"member {info.filename!r}: bad local file header", source=src, field=info.filename)
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    fp.seek(info.header_offset + 30 + name_len + extra_len)
    raw = fp.read(info.compress_size)
    if len(raw) != info.compress_size:
        raise InputError(f"member {info.filename!r}: the archive ends inside it", source=src, field=info.filename)
    return raw


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, src: str) -> bytes:
    """A member's bytes, decompressed with a bound: a deflate stream is inflated to at most its stated size
    plus one byte (one that says 1,000 bytes and inflates to 300 MB is refused after 1,001), zstd to its stated
    size (pyarrow), and each checked against the stated size and CRC-32 (InputError naming the log and the
    member otherwise)."""
    method = info.compress_type
    if method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, ZIP_ZSTANDARD):
        raise InputError(f"member {info.filename!r}: zip compression method {method} is not supported", source=src,
                         field=info.filename)
    raw = _raw(zf, info, src)
    if method == zipfile.ZIP_STORED:
        data = raw
    elif method == zipfile.ZIP_DEFLATED:
        inflate = zlib.decompressobj(-15)
        try:
            data = inflate.decompress(raw, info.file_size + 1)  # inflation stops one byte past the stated size
        except zlib.error as exc:
            raise InputError(f"member {info.filename!r}: cannot inflate its deflate data ({exc})", source=src,
                             field=info.filename) from None
        if len(data) > info.file_size or not inflate.eof:
            raise InputError(f"member {info.filename!r} inflates beyond its stated size of {info.file_size:,} bytes "
                             "(refused after reading one byte more; a lying archive)", source=src, field=info.filename)
    else:
        try:
            data = pa.Codec("zstd").decompress(raw, decompressed_size=info.file_size, asbytes=True)
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise InputError(f"member {info.filename!r}: cannot decompress zstd data ({exc})", source=src,
                             field=info.filename) from None
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise InputError(f"member {info.filename!r}: its data does not match the size/CRC-32 in the archive",
                         source=src, field=info.filename)
    return data


def _read_log(path: Path) -> tuple[dict, list[tuple[str, dict]]]:
    """(header, [(where, sample)]) from a .eval zip or a .json log."""
    src = str(path)
    if not path.exists():  # anything else that is not a regular file: refused by the received reader
        raise InputError("file not found", source=src)
    if path.suffix.lower() == ".json":
        try:
            log = loads_json_strict(log_text(path), source=src)
        except InputError:
            raise
        except ValueError as exc:
            raise InputError(f"not valid JSON: {exc}", source=src) from None
        if not isinstance(log, dict) or "eval" not in log:
            raise InputError("an Inspect JSON log is an object with 'eval' and 'samples'", source=src,
                             field="eval")
        samples = log.get("samples") or []
        if not isinstance(samples, list):
            raise InputError("'samples' must be a list", source=src, field="samples")
        return log, [(f"samples[{i}]", s) for i, s in enumerate(samples)]
    with log_zip(path) as fh:  # members checked on the descriptor read
        return _read_archive(fh, src)


def read_header(path: str | Path) -> dict:
    """The header of a ``.eval`` log alone (``header.json``, or ``_journal/start.json`` of a log still being
    written), its members checked before anything is decompressed: what ``eval.task`` and ``eval.model`` a log
    holds, without reading its samples."""
    src = str(path)
    if not Path(path).exists():
        raise InputError("file not found", source=src)
    with log_zip(path) as fh:
        zf = _zip(fh, src)
        with zf:
            head_name = _header_name(zf.namelist(), src)
            try:
                header = loads_json_strict(_read_member(zf, zf.getinfo(head_name), src), source=f"{src}:{head_name}")
            except InputError:
                raise
            except ValueError as exc:
                raise InputError(f"{head_name} is not valid JSON: {exc}", source=src) from None
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise InputError("the header has no 'eval' object", source=src, field="eval")
    return header


def _zip(fh, src: str) -> zipfile.ZipFile:
    """The .eval archive open as ``fh``; one line when it is not a zip archive."""
    try:
        return zipfile.ZipFile(fh)
    except zipfile.BadZipFile:
        raise InputError("not a zip archive (an Inspect .eval log is one)", source=src) from None


def _header_name(names: list[str], src: str) -> str:
    """The member holding a log's header: ``header.json``, or ``_journal/start.json`` of a log being written."""
    head_name = "header.json" if "header.json" in names else "_journal/start.json"
    if head_name not in names:
        raise InputError("no header.json (or _journal/start.json) in the archive", source=src, field="header.json")
    return head_name


def _read_archive(fh, src: str) -> tuple[dict, list[tuple[str, dict]]]:
    """(header, [(member, sample)]) of a .eval archive open as ``fh``; a duplicate key in a member is refused."""
    zf = _zip(fh, src)
    with zf:
        names = zf.namelist()
        head_name = _header_name(names, src)
        try:
            header = loads_json_strict(_read_member(zf, zf.getinfo(head_name), src), source=f"{src}:{head_name}")
            samples = [
                (name, loads_json_strict(_read_member(zf, zf.getinfo(name), src), source=f"{src}:{name}"))
                for name in sorted(names)
                if name.startswith("samples/") and name.endswith(".json")
            ]
        except InputError:
            raise
        except ValueError as exc:
            raise InputError(f"a member is not valid JSON: {exc}", source=src) from None
    return header, samples


def _completion(output: Any) -> str | None:
    if not isinstance(output, dict):
        return None
    if isinstance(output.get("completion"), str) and output["completion"]:
        return output["completion"]
    choices = output.get("choices") or []
    if not choices:
        return None
    content = (choices[0].get("message") or {}).get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"]
        return "\n".join(parts)
    return None


def _parsed(s: dict, parser: AnswerParser) -> tuple[str | None, ParsedAnswer]:
    """(completion text, parsed answer) of a sample: a sample error is api_error, a content-filter stop is
    refused, else the parser's answer."""
    output = s.get("output") or {}
    text = _completion(output)
    err = s.get("error") or (output.get("error") if isinstance(output, dict) else None)
    if err:
        msg = err.get("message", "") if isinstance(err, dict) else str(err)
        return text, ParsedAnswer(None, "api_error", f"sample error: {msg[:80]}")
    if isinstance(output, dict) and any(
        (c or {}).get("stop_reason") == "content_filter" for c in output.get("choices") or []
    ):
        return text, ParsedAnswer(None, "refused", "stopped by the provider's content filter")
    return text, parser.parse(text)


def _score(s: dict, where: str, src: str, scorer: str | None):
    """The harness's own score of a sample (the named scorer, else the first), None without scores."""
    scores = s.get("scores") or {}
    if not scores:
        return None
    if not isinstance(scores, dict):
        raise InputError(f"{where}: scores must be an object", source=src, field="scores")
    name = scorer or next(iter(scores))
    if name not in scores:
        raise InputError(f"{where}: no score from scorer {name!r} (has {sorted(scores)})", source=src,
                         field="scores")
    entry = scores[name]
    value = entry.get("value") if isinstance(entry, dict) else entry
    return as_score(value, source=src, where=where, field=f"scores.{name}.value")


def _sample_key(s: Any, where: str, src: str) -> tuple[int | str, int]:
    """(id, epoch) of a sample, checked: an object with an int or str id and a positive integer epoch."""
    if not isinstance(s, dict):
        raise InputError(f"{where} is not an object", source=src)
    if "id" not in s:
        raise InputError(f"{where} lacks 'id'", source=src, field="id")
    sid = s["id"]
    if isinstance(sid, bool) or not isinstance(sid, (int, str)):
        raise InputError(f"{where}: id must be an int or str", source=src, field="id")
    epoch = s.get("epoch", 1)
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise InputError(f"{where}: epoch must be a positive integer, got {epoch!r}", source=src, field="epoch")
    return sid, epoch


def read_inspect(
    path: str | Path,
    *,
    model: str | None = None,
    rung: str | None = None,
    run: str | None = None,
    parser: AnswerParser | None = None,
    scorer: str | None = None,
    items=None,
) -> ResultTable:
    """The log's samples as canonical rows; ``items``: a shipped benchmark (``attribution.shipped``) mapping
    sample ids and letter targets; a sample's own ``choices`` map letter targets otherwise."""
    path = Path(path)
    src = str(path)
    parser = get_parser(parser)
    header, samples = _read_log(path)
    spec = header.get("eval") if isinstance(header.get("eval"), dict) else {}
    model = model or spec.get("model")
    if not model:
        raise InputError("no model (manifest or eval.model)", source=src, field="eval.model")
    if not rung:
        raise InputError("the rung must come from the manifest", source=src, field="rung")
    rung = canonical_rung(rung, source=src)
    run = run or spec.get("run_id") or path.stem
    warnings: list[str] = []
    if header.get("status") not in (None, "success"):
        warnings.append(f"{src}: log status is {header.get('status')!r}, not 'success'")
    records = []
    seen: dict[tuple[str, int], str] = {}
    for where, s in samples:
        sid, epoch = _sample_key(s, where, src)
        iid, sparser = item_context(items, parser, sid, s.get("choices"), source=src, where=where)
        key = (iid, epoch)
        if key in seen:
            raise InputError(f"{where}: duplicate item id {sid!r} at epoch {epoch} (also {seen[key]})",
                             source=src, field="id")
        seen[key] = where
        target = s.get("target")
        if isinstance(target, list):
            if len(target) != 1:
                raise InputError(f"{where}: {len(target)} targets; one expected", source=src, field="target")
            target = target[0]
        target = canonical_target(sparser, target, source=src, where=where, field="target")
        text, parsed = _parsed(s, sparser)
        score = _score(s, where, src, scorer)
        meta = s.get("metadata") if isinstance(s.get("metadata"), dict) else {}
        cat = meta.get("category", meta.get("crystal_system"))
        records.append(row(run=run, model=model, rung=rung, item_id=iid, sample_k=epoch - 1,
                           raw_output=text, parsed=parsed, target=target,
                           category=None if cat is None else str(cat), source_file=src, harness=HARNESS,
                           harness_score=score))
    if not records:
        raise InputError("the log holds no samples", source=src, field="samples")
    return finish(records, path=path, harness=HARNESS, warnings=warnings, model=model, rung=rung)
