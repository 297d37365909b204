"""Reading a streamed certificate (``certify.stream``: Parquet item-table shards beside a small ``certificate.json``)
for showing it: ``explore``, ``ladder`` and the summary read it lazily, one shard at a time.

Before any item is read (``open_table``): the small certificate's digest (a stale one refused unless asked), its
shape and chain and every shard's presence (``verify_table.receive_table``), and every shard a regular file inside
the certificate's ``items/`` folder (no symlink out of it). Each shard is then read when its items are needed:

- ``items`` / ``shard``: whole rows, each shard's schema checked, its rows hashed against its SHA-256 and that
  against the certificate's record, the chain at the end (``stream.read_table``'s checks): what ``explore`` shows.
- ``r1_items``: only the columns R1 needs (``id``, ``correct``, ``reasons``, ``periodic``), each shard's schema and
  its metadata (format, rows, SHA-256) checked against the certificate's record: what ``ladder`` reads. The rows'
  contents are rehashed by ``explore`` and recomputed by ``verify``.

Every failure is an :class:`InputError` naming the file (the shard) and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from viewcert.certify import stream as T
from viewcert.certify.records import ABSENT, ItemOutcome, TableHead, digest_value, outcomes_of
from viewcert.certify.verify_table import is_table, read_received, receive_table
from viewcert.errors import InputError
from viewcert.io.received import read_received_bytes
from viewcert.limits import DEFAULT_LIMITS, Limits

#: the columns R1 reads (``r1_items``)
R1_COLUMNS = ("id", "correct", "reasons", "periodic")


def schema_types() -> dict[str, str]:
    """The item table's columns and their Arrow types (``stream.shard_bytes``)."""
    return {f: ("bool" if f == "correct" else "string") for f in (*T.FIELDS, "extra")}


@dataclass(frozen=True)
class TableCertificate:
    """A streamed certificate opened for reading: ``path`` (its certificate.json), ``data`` (the small certificate:
    settings, summary, items_table), the SHA-256 of its bytes and whether its digest held. Its sections read as
    a JSON certificate's (``config``, ``protocol``, ...); its items are read lazily (``items``, ``shard``)."""

    path: Path
    data: dict
    sha256: str
    digest_ok: bool

    @property
    def head(self) -> TableHead:
        return TableHead.of(self.data)

    def section(self, name: str) -> Any:
        """A settings section of the small certificate (a JSON object), ``ABSENT`` when it has none."""
        v = self.data.get(name, ABSENT)
        return v if isinstance(v, dict) or v is ABSENT else ABSENT

    @property
    def format(self) -> str:
        return str(self.data.get("format"))

    @property
    def summary(self) -> dict:
        return dict(self.head.summary)

    @property
    def digest_value(self) -> str | None:
        return digest_value(self.data)

    @property
    def folder(self) -> Path:
        return self.path.parent / T.TABLE_DIR

    @property
    def shards(self) -> list[dict]:
        return list(self.head.items_table.get("shards") or [])

    @cached_property
    def offsets(self) -> tuple[int, ...]:
        """The index of each shard's first item, then the number of items."""
        out = [0]
        for s in self.shards:
            out.append(out[-1] + s["n"])
        return tuple(out)

    @property
    def n_items(self) -> int:
        return self.offsets[-1]

    def shard_path(self, k: int) -> Path:
        return self.folder / self.shards[k]["name"]

    def shard(self, k: int) -> list[ItemOutcome]:
        """The items of shard ``k``, read whole and checked (module docstring)."""
        path, rec = self.shard_path(k), self.shards[k]
        check_schema(path)
        meta, items = T.read_shard(path)  # its rows hashed against its own SHA-256
        _check_meta(path, meta, rec)
        return outcomes_of(items)

    def items(self) -> Iterator[ItemOutcome]:
        """Every item in table order, one shard in memory at a time (``shard``), the chain checked at the end."""
        seen = []
        for k in range(len(self.shards)):
            yield from self.shard(k)
            seen.append(self.shards[k]["sha256"])
        if T.chain(seen) != self.head.items_table.get("chain"):
            raise InputError("the shards do not chain to the certificate's digest", source=str(self.path),
                             field="items_table.chain")

    def __getattr__(self, name: str) -> Any:
        if name in ("inputs", "config", "protocol", "observation_model", "tolerances", "oracle", "scoring",
                    "libraries", "digest", "location", "resolution", "items_table"):
            return self.section(name)
        raise AttributeError(name)


def _check_meta(path: Path, meta: dict, rec: dict) -> None:
    if meta.get("format") != T.TABLE_FORMAT:
        raise InputError(f"not an item-table shard (format {str(meta.get('format'))[:60]!r})", source=str(path),
                         field="format")
    if meta.get("sha256") != rec["sha256"] or meta.get("n") != rec["n"]:
        raise InputError("shard's SHA-256 or rows differ from the certificate's record (items_table.shards)",
                         source=str(path), field="sha256")


def _parquet(path: Path):
    """The Parquet file of a shard, parsed from the bytes of one checked open (a symlink not followed, a FIFO
    never waited on: ``io.received.read_received_bytes``); InputError naming it when it is not one."""
    import pyarrow as pa  # lazy: pyarrow only when an item table is read
    import pyarrow.parquet as pq

    raw = read_received_bytes(path, what="item-table shard", follow_links=False)
    try:
        return pq.ParquetFile(pa.BufferReader(raw))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"not a readable item-table shard ({str(exc)[:120]})", source=str(path)) from None


def check_schema(path: Path):
    """The shard's Parquet file when its columns are exactly the item table's with their types
    (``schema_types``); InputError naming the shard and the first column that differs otherwise."""
    pf = _parquet(path)
    got = {f.name: str(f.type) for f in pf.schema_arrow}
    want = schema_types()
    for name in sorted(want.keys() | got.keys()):
        if got.get(name) != want.get(name):
            said = (f"has an unknown column {name[:60]!r}" if name not in want
                    else f"has no column {name!r}" if name not in got
                    else f"column {name!r} is {got[name][:40]}, not {want[name]}")
            raise InputError(f"wrong item-table schema: the shard {said}", source=str(path), field=name)
    return pf


def _meta(pf, path: Path) -> dict:
    raw = (pf.schema_arrow.metadata or {}).get(b"viewcert", b"{}")
    try:
        meta = json.loads(raw)
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        raise InputError("shard metadata 'viewcert' is not a JSON object", source=str(path), field="viewcert")
    return meta


def r1_items(tc: TableCertificate) -> Iterator[dict]:
    """{id, correct, reasons, periodic} of every item in table order, reading only those columns, one shard at a
    time; each shard's schema and metadata checked against the certificate's record (module docstring)."""
    import pyarrow as pa  # lazy: as _parquet

    for k, rec in enumerate(tc.shards):
        path = tc.shard_path(k)
        pf = check_schema(path)
        _check_meta(path, _meta(pf, path), rec)
        try:
            cols = pf.read(columns=list(R1_COLUMNS)).to_pydict()
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise InputError(f"not a readable item-table shard ({str(exc)[:120]})", source=str(path)) from None
        if len(cols["id"]) != rec["n"]:
            raise InputError("shard's rows differ from the certificate's record", source=str(path), field="n")
        for j, (iid, ok, why, per) in enumerate(zip(*(cols[c] for c in R1_COLUMNS), strict=True)):
            if not isinstance(iid, str) or not isinstance(ok, bool):
                raise InputError(f"row {j} has no text id or no true/false 'correct'", source=str(path),
                                 field="id" if not isinstance(iid, str) else "correct")
            try:
                reasons = json.loads(why) if why is not None else []
                periodic = json.loads(per) if per is not None else ABSENT
            except ValueError:
                raise InputError(f"row {j} ({iid[:80]!r}): 'reasons' or 'periodic' is not JSON", source=str(path),
                                 field="reasons") from None
            yield {"id": iid, "correct": ok, "reasons": reasons if isinstance(reasons, list) else [],
                   "periodic": periodic}


def open_table(path: str | Path, data: dict | None = None, sha256: str | None = None, *,
               allow_stale: bool = False, limits: Limits = DEFAULT_LIMITS) -> TableCertificate:
    """The streamed certificate at ``path`` (its certificate.json; ``data``, ``sha256``: when the caller read it),
    checked before any item is read (module docstring)."""
    path = Path(path)
    if data is None:
        data, sha256 = read_received(path, limits)
    if not is_table(data):
        raise InputError(f"not a streamed certificate (format {T.CERTIFICATE_FORMAT} expected)", source=str(path),
                         field="format")
    ok = receive_table(path, data, allow_stale=allow_stale)  # digest, shape, chain, shards present and inside
    return TableCertificate(path, data, sha256 or "", ok)
