"""The streamed certificate's format (``certify.stream`` writes it): Parquet item-table shards beside a small
``certificate.json`` (format ``viewcert-certificate-table/1``), and its reader.

Layout of ``OUT``:

- ``items/part-NNNNNN.parquet``: one row per item in input order. Columns: ``id``, ``outcome`` (text), ``correct``
  (bool) and every other field of ``records.ItemOutcome`` as the canonical compact JSON of its value (null where the
  record has none); ``extra`` holds fields the record does not name. A shard's key-value metadata ``viewcert``
  records the table format, the run's fingerprint, its item count and its SHA-256.
- ``certificate.json``: the settings sections of the JSON certificate, the summary and ``items_table``: the shards
  (name, items, SHA-256) and their chain. Its digest is the one digest of every certificate
  (``records.digest_record``), so it covers the chain.

**Canonical bytes.** A shard's SHA-256 hashes its items' canonical lines (``json_dumps(item, indent=None)``, the line
a JSON certificate writes for the item), not the Parquet bytes (which depend on pyarrow's version); the chain is
c₀ = SHA-256("viewcert-item-table/1"), cₖ = SHA-256(cₖ₋₁ ":" sha256ₖ) in hex.

Reading (``explore``, ``ladder``, ``verify`` and the summary read it lazily, one shard at a time). Before any item is
read (``receive_table``, from ``formats.reader.receive``): the small certificate's digest (a stale one refused unless asked), its shape and chain and
every shard's presence, and every shard a regular file inside the certificate's ``items/``
folder (no symlink out of it). Each shard is then read when its items are needed:

- ``items`` / ``shard``: whole rows, each shard's schema checked, its rows hashed against its SHA-256 and that
  against the certificate's record, the chain at the end: what ``explore`` shows.
- ``r1_items``: only the columns R1 needs (``id``, ``correct``, ``reasons``, ``periodic``), each shard's schema and
  its metadata (format, rows, SHA-256) checked against the certificate's record: what ``ladder`` reads. The rows'
  contents are rehashed by ``explore`` and recomputed by ``verify``.

Every failure is an :class:`InputError` naming the file (the shard) and the field.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, PrivateAttr, model_validator

from viewcert.errors import InputError
from viewcert.formats.model import Count, Object, PositiveCount, Record, Text
from viewcert.formats.records import (
    TABLE_CERTIFICATE_FORMAT,
    Certificate,
    CertificateVisitor,
    ItemOutcome,
    T,
    check_digest,
    outcomes_of,
)
from viewcert.formats.settings_sections import (
    CertifyConfigRecord,
    Inputs,
    Location,
    ObservationRecord,
    OracleSettingsRecord,
    Scoring,
    Tolerances,
    ViewProtocol,
)
from viewcert.formats.summary_sections import TableSummary
from viewcert.io.atomic import json_dumps
from viewcert.io.parquet import check_decoded, check_footer, open_bounded
from viewcert.io.received import read_received_bytes

TABLE_FORMAT = "viewcert-item-table/1"
#: the small certificate.json beside the item table
CERTIFICATE_FORMAT = TABLE_CERTIFICATE_FORMAT
TABLE_DIR = "items"
FIELDS = tuple(ItemOutcome.model_fields)
PLAIN = ("id", "outcome", "correct")  # columns stored as their value, not as JSON text


def item_line(item: dict[str, Any]) -> bytes:
    """The canonical line of one item record (compact JSON, sorted keys, newline)."""
    return json_dumps(item, indent=None).encode()


def shard_sha256(items: Iterable[dict[str, Any]]) -> str:
    """SHA-256 (hex) of a shard's canonical bytes: its items' canonical lines in order."""
    h = hashlib.sha256()
    for it in items:
        h.update(item_line(it))
    return h.hexdigest()


def chain(digests: Iterable[str]) -> str:
    """The chained digest of shard digests in order (module docstring)."""
    c = hashlib.sha256(TABLE_FORMAT.encode()).hexdigest()
    for d in digests:
        c = hashlib.sha256(f"{c}:{d}".encode()).hexdigest()
    return c



def shard_bytes(items: list[dict[str, Any]], fingerprint: str) -> bytes:
    """A shard's Parquet bytes (module docstring), its metadata naming format, fingerprint, count and SHA-256."""
    import pyarrow as pa  # lazy: pyarrow only when an item table is written or read
    import pyarrow.parquet as pq

    cols: dict[str, list[Any]] = {f: [] for f in (*FIELDS, "extra")}
    for it in items:
        for f in FIELDS:
            v = it.get(f, _UNWRITTEN)
            cols[f].append(v if f in PLAIN else (None if v is _UNWRITTEN else json_dumps(v, indent=None).rstrip("\n")))
        extra = {k: v for k, v in it.items() if k not in FIELDS}
        cols["extra"].append(json_dumps(extra, indent=None).rstrip("\n") if extra else None)
    schema = pa.schema([(f, pa.bool_() if f == "correct" else pa.string()) for f in cols])
    meta = {"format": TABLE_FORMAT, "fingerprint": fingerprint, "n": len(items), "sha256": shard_sha256(items)}
    table = pa.table(cols, schema=schema.with_metadata({"viewcert": json.dumps(meta, sort_keys=True)}))
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def _item_of(row: dict[str, Any]) -> dict[str, Any]:
    out = {f: (row[f] if f in PLAIN else json.loads(row[f])) for f in FIELDS if row.get(f) is not None}
    return {**out, **(json.loads(row["extra"]) if row.get("extra") else {})}


def read_shard(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(metadata, item records) of one shard, its rows checked against its recorded SHA-256 (InputError naming the
    shard otherwise). The shard is opened once, a symlink not followed and a FIFO never waited on
    (``io.received.read_received_bytes``: a regular file within ``max_json_bytes``), and parsed from those bytes."""
    import pyarrow as pa  # lazy: as shard_bytes

    raw = read_received_bytes(path, what="item-table shard", follow_links=False)  # one checked open, no link
    pf = open_bounded(pa.BufferReader(raw), name=str(path))  # text columns dictionary-encoded: bounded first
    _schema_ok(pf, Path(path))  # the one schema check of every reader (verify, explore, ladder, a resumed run)
    try:
        check_footer(pf, range(pf.metadata.num_row_groups), None, name=str(path))
        table = pf.read()
        check_decoded(table, name=str(path))
        meta = json.loads((table.schema.metadata or {}).get(b"viewcert", b"{}"))
        items = [_item_of(r) for r in table.to_pylist()]
    except (pa.ArrowException, OSError, ValueError, KeyError) as exc:
        raise InputError(f"not a readable item-table shard ({str(exc)[:120]})", source=str(path)) from None
    if meta.get("format") != TABLE_FORMAT or meta.get("sha256") != shard_sha256(items):
        raise InputError(f"shard does not match its SHA-256 ({TABLE_FORMAT})", source=str(path), field="sha256")
    return meta, items



SHARD_NAME = re.compile(r"part-\d{6}\.parquet")
SHA256 = re.compile(r"[0-9a-f]{64}")
_UNWRITTEN = object()  # a field the item record does not have (an Arrow null, not the text "null")
#: the columns R1 reads (``StreamedCertificate.r1_rows``)
R1_COLUMNS = ("id", "correct", "reasons", "periodic")


def schema_types() -> dict[str, str]:
    """The item table's columns and their Arrow types (:func:`shard_bytes`)."""
    return {f: ("bool" if f == "correct" else "string") for f in (*FIELDS, "extra")}


class ShardRecord(Record):
    """One shard of the item table as the certificate records it."""

    SOURCE: ClassVar[str] = "items_table.shards[]"
    name: Text = Field(description="the shard's bare file name, ``part-NNNNNN.parquet`` (its place, from 0)")
    n: Count = Field(description="a count of the shard's items (at most ``shard_items``)")
    sha256: Text = Field(description="the SHA-256 (hex) of the shard's items' canonical lines")


class ItemsTable(Record):
    """``items_table`` of a streamed certificate: where the item table is, its shards and their chain."""

    SOURCE: ClassVar[str] = "items_table"
    format: Text = Field(description=f"``{TABLE_FORMAT}``")
    folder: Text = Field(description=f"the table's folder beside the certificate: ``{TABLE_DIR}``")
    shard_items: PositiveCount = Field(description="a count: the items per shard (the last may hold fewer)")
    n_items: Count | None = Field(None, description="a count of the items, over every shard")
    shards: list[ShardRecord] = Field(description="the shards in order (``ShardRecord``)")
    chain: Text = Field(description="the chained digest of the shards' SHA-256 in order (module docstring)")

    @model_validator(mode="after")
    def _consistent(self) -> ItemsTable:
        def need(ok: bool, what: str, fld: str) -> None:
            if not ok:
                raise InputError(what, field=fld)

        need(self.format == TABLE_FORMAT, f"must be {TABLE_FORMAT!r}", "items_table.format")
        need(self.folder == TABLE_DIR, f"must be {TABLE_DIR!r}", "items_table.folder")
        for k, s in enumerate(self.shards):
            need(s.name == f"part-{k:06d}.parquet" and 0 <= s.n <= self.shard_items
                 and bool(SHA256.fullmatch(s.sha256)),
                 f"shard {k} must be {{name: part-{k:06d}.parquet, n: 0..{self.shard_items}, sha256: 64 hex digits}}",
                 "items_table.shards")
        need(self.chain == chain(s.sha256 for s in self.shards),
             "the recorded shard digests do not chain to items_table.chain", "items_table.chain")
        return self

    @property
    def offsets(self) -> tuple[int, ...]:
        """The index of each shard's first item, then the number of items."""
        out = [0]
        for s in self.shards:
            out.append(out[-1] + s.n)
        return tuple(out)


class StreamedCertificate(Certificate):
    """A streamed certificate (``certify.stream``, ``viewcert-certificate-table/1``): a ceiling certificate's
    settings sections and summary in a small ``certificate.json``, its items in the item table beside it, read
    lazily (:meth:`items`, one shard in memory at a time). Opened by the one reader (``formats.reader``), which
    checks its digest, its table record and every shard's place before any item is read."""

    KIND: ClassVar[str] = "ceiling"
    TITLE: ClassVar[str] = "streamed crystal/molecule"
    SHOWN_SETTINGS: ClassVar[tuple[str, ...]] = ("format", "protocol", "tolerances", "config", "observation_model",
                                                 "libraries", "items_table", "digest")
    FORMATS: ClassVar[tuple[str, ...]] = (TABLE_CERTIFICATE_FORMAT,)
    PRODUCER: ClassVar[str] = "viewcert.certify.stream"
    WHAT: ClassVar[str] = ("the render ceiling R1 of a large input, streamed: the items in Parquet shards beside "
                           "the certificate (viewcert certify without --json-certificate)")

    inputs: Inputs = Field(description="what was read (``Inputs``)")
    config: CertifyConfigRecord = Field(description="every setting (``CertifyConfigRecord``)")
    protocol: ViewProtocol | None = Field(None, description="the views, κ and the camera (``ViewProtocol``)")
    observation_model: ObservationRecord | None = Field(None, description="how atoms are observed")
    tolerances: Tolerances | None = Field(None, description="δ, τ (Å), the angle tolerance (degrees)")
    oracle: OracleSettingsRecord | None = Field(None, description="the oracle's settings")
    scoring: Scoring | None = Field(None, description="the scored level, the truth, the rule and the bound")
    libraries: Object | None = Field(None, description="the versions of the libraries that computed it")
    summary: TableSummary = Field(description="R1, its bounds, the census and counts (``TableSummary``)")
    items_table: ItemsTable = Field(description="the item table: its shards and their chain (``ItemsTable``)")
    resolution: Object | None = Field(None, description="the resolution every float is written at")
    digest: Object | None = Field(None, description="the digest: algorithm, scope and value (it covers the chain)")
    location: Location | None = Field(None, description="where the inputs were read (outside the digest)")

    _path: Path = PrivateAttr(default=Path("certificate.json"))

    @classmethod
    def opened(cls, path: str | Path, data: Any) -> StreamedCertificate:
        """The streamed certificate ``data`` read from ``path``: typed, its shards each a regular file inside its
        ``items/`` folder (no symlink out of it); InputError naming the file and the field otherwise."""
        try:
            cert = cls.from_dict(data, "")
        except InputError as exc:
            raise InputError(exc.message, source=str(path), field=exc.field) from None
        cert._path = Path(path)
        shards_inside(path, cert.shards)
        return cert

    @property
    def path(self) -> Path:
        """The certificate's file (``certificate.json``)."""
        return self._path

    @property
    def folder(self) -> Path:
        return self._path.parent / TABLE_DIR

    @property
    def shards(self) -> list[ShardRecord]:
        return self.items_table.shards

    @property
    def offsets(self) -> tuple[int, ...]:
        return self.items_table.offsets

    @property
    def n_items(self) -> int:
        return self.offsets[-1]

    def shard_path(self, k: int) -> Path:
        return self.folder / self.shards[k].name

    def shard(self, k: int) -> list[ItemOutcome]:
        """The items of shard ``k``, read whole and checked (module docstring)."""
        path, rec = self.shard_path(k), self.shards[k]
        meta, items = read_shard(path)  # its schema checked, its rows hashed against its own SHA-256
        _check_meta(path, meta, rec)
        try:
            return outcomes_of(items)
        except InputError as exc:
            raise InputError(exc.message, source=str(path), field=exc.field) from None

    def items(self) -> Iterator[ItemOutcome]:
        """Every item in table order, one shard in memory at a time (``shard``), the chain checked at the end."""
        seen = []
        for k in range(len(self.shards)):
            yield from self.shard(k)
            seen.append(self.shards[k].sha256)
        if chain(seen) != self.items_table.chain:
            raise InputError("the shards do not chain to the certificate's digest", source=str(self._path),
                             field="items_table.chain")

    def iter_items(self) -> Iterator[ItemOutcome]:
        return self.items()

    def visit(self, visitor: CertificateVisitor[T]) -> T:
        return visitor.streamed(self)

    def r1_rows(self) -> Iterator[dict[str, Any]]:
        """{id, correct, reasons, periodic} of every item in table order, reading only those columns, one shard
        at a time; each shard's schema and metadata checked against the certificate's record (module
        docstring)."""
        import pyarrow as pa  # lazy: as _parquet

        for k, rec in enumerate(self.shards):
            path = self.shard_path(k)
            pf = check_schema(path)
            _check_meta(path, _meta(pf, path), rec)
            try:
                check_footer(pf, range(pf.metadata.num_row_groups), list(R1_COLUMNS), name=str(path))
                table = pf.read(columns=list(R1_COLUMNS))
                check_decoded(table, name=str(path))
                cols = table.to_pydict()
            except (pa.ArrowException, OSError, ValueError) as exc:
                raise InputError(f"not a readable item-table shard ({str(exc)[:120]})", source=str(path)) from None
            if len(cols["id"]) != rec.n:
                raise InputError("shard's rows differ from the certificate's record", source=str(path), field="n")
            for j, (iid, ok, why, per) in enumerate(zip(*(cols[c] for c in R1_COLUMNS), strict=True)):
                if not isinstance(iid, str) or not isinstance(ok, bool):
                    raise InputError(f"row {j} has no text id or no true/false 'correct'", source=str(path),
                                     field="id" if not isinstance(iid, str) else "correct")
                try:
                    reasons = json.loads(why) if why is not None else []
                    periodic = json.loads(per) if per is not None else None
                except ValueError:
                    raise InputError(f"row {j} ({iid[:80]!r}): 'reasons' or 'periodic' is not JSON",
                                     source=str(path), field="reasons") from None
                yield {"id": iid, "correct": ok, "reasons": reasons if isinstance(reasons, list) else [],
                       "periodic": periodic}


def is_table(data: Any) -> bool:
    """Whether parsed certificate JSON is a streamed certificate's (format ``viewcert-certificate-table/1``)."""
    return isinstance(data, dict) and data.get("format") == CERTIFICATE_FORMAT


def receive_table(path: str | Path, data: dict[str, Any], *, allow_stale: bool = False) -> tuple[StreamedCertificate, bool]:
    """A streamed certificate checked before any work (its digest: a stale one is a one-line
    ``StaleCertificate`` unless ``allow_stale``; its shape, chain and shards' places): (the certificate, whether
    the digest matches)."""
    ok = check_digest(data, str(path), allow_stale=allow_stale)
    return StreamedCertificate.opened(path, data), ok


def shards_inside(path: str | Path, shards: list[ShardRecord]) -> None:
    """Every shard listed present and a regular file in the certificate's own ``items/`` folder: neither it nor
    the folder a symlink (a link out of the folder, or through another, is refused before anything is read);
    InputError naming the shard otherwise. The names are bare ``part-NNNNNN.parquet`` (``ItemsTable``)."""
    root = os.path.realpath(Path(path).parent)
    for s in shards:
        p = Path(path).parent / TABLE_DIR / s.name
        if not os.path.lexists(p):
            raise InputError("shard listed by the certificate is missing", source=str(p), field="items_table.shards")
        if (os.path.islink(p) or os.path.realpath(p) != os.path.join(root, TABLE_DIR, s.name)
                or not os.path.isfile(p)):
            raise InputError("shard is not a regular file inside the certificate's items/ folder (a symlink or "
                             "another kind of file; nothing read)", source=str(p), field="items_table.shards")


def _check_meta(path: Path, meta: dict[str, Any], rec: ShardRecord) -> None:
    if meta.get("format") != TABLE_FORMAT:
        raise InputError(f"not an item-table shard (format {str(meta.get('format'))[:60]!r})", source=str(path),
                         field="format")
    if meta.get("sha256") != rec.sha256 or meta.get("n") != rec.n:
        raise InputError("shard's SHA-256 or rows differ from the certificate's record (items_table.shards)",
                         source=str(path), field="sha256")


def _parquet(path: Path) -> Any:
    """The Parquet file of a shard, parsed from the bytes of one checked open (a symlink not followed, a FIFO
    never waited on: ``io.received.read_received_bytes``); InputError naming it when it is not one."""
    import pyarrow as pa  # lazy: pyarrow only when an item table is read

    raw = read_received_bytes(path, what="item-table shard", follow_links=False)
    return open_bounded(pa.BufferReader(raw), name=str(path))  # text columns dictionary-encoded: bounded reads


def check_schema(path: Path) -> Any:
    """The shard's Parquet file when its columns are exactly the item table's with their types
    (``schema_types``); InputError naming the shard and the first column that differs otherwise."""
    return _schema_ok(_parquet(path), path)


def _schema_ok(pf: Any, path: Path) -> Any:
    """``pf`` when its columns are exactly the item table's with their types (the file's own types, before any
    read option); InputError naming the shard and the first column that differs otherwise."""
    got = {f.name: str(f.type) for f in pf.schema.to_arrow_schema()}
    want = schema_types()
    for name in sorted(want.keys() | got.keys()):
        if got.get(name) != want.get(name):
            said = (f"has an unknown column {name[:60]!r}" if name not in want
                    else f"has no column {name!r}" if name not in got
                    else f"column {name!r} is {got[name][:40]}, not {want[name]}")
            raise InputError(f"wrong item-table schema: the shard {said}", source=str(path), field=name)
    return pf


def _meta(pf: Any, path: Path) -> dict[str, Any]:
    raw = (pf.schema_arrow.metadata or {}).get(b"viewcert", b"{}")
    try:
        meta = json.loads(raw)
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        raise InputError("shard metadata 'viewcert' is not a JSON object", source=str(path), field="viewcert")
    return meta


