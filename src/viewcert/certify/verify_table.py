"""Verify a streamed certificate (``certify.stream``: an item table beside a small ``certificate.json``).

Before any work: the small certificate's shape, its digest (a stale one refused unless asked, as ``verify``), the
chain of its recorded shard digests and every shard a regular file in the certificate's own ``items/`` folder
(``shards_inside``: a name reaching out, an absolute one, a symlink, all refused in one line). Then the inputs are re-read (hashes compared)
and recomputed shard by shard with the recorded settings and shard size: each stored shard is read (its rows
checked against its SHA-256) and compared item by item with its recomputation, so one shard of records of each is in
memory at a time. The small certificate recomputed from those shards (summary, settings, chain) is compared section
by section. The report is ``verify.VerifyReport``'s."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viewcert.cameras.protocol_files import is_protocol_file
from viewcert.certify import stream as T
from viewcert.certify.config import CertifyConfig
from viewcert.certify.records import STALE_HINT, StaleCertificate, compute_digest, digest_value, outcomes_of
from viewcert.certify.run import fingerprint
from viewcert.certify.trust import trusted_input, trusted_root
from viewcert.certify.verify import VerifyReport, _protocol_file, compare, compare_items, reload_inputs
from viewcert.errors import InputError
from viewcert.io.received import loads_json_strict, read_received_bytes
from viewcert.limits import DEFAULT_LIMITS, Limits

SHARD_NAME = re.compile(r"part-\d{6}\.parquet")
SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Named:
    """What ``certify.trust`` reads of a certificate: its inputs, settings and recorded location."""

    inputs: dict
    config: dict
    location: dict | None


def read_received(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> tuple[Any, str]:
    """(parsed JSON, SHA-256 of the bytes) of a received certificate file, read once within ``limits``."""
    raw = read_received_bytes(path, what="certificate", limits=limits)
    try:
        return loads_json_strict(raw.decode("utf-8"), source=str(path)), hashlib.sha256(raw).hexdigest()
    except InputError:
        raise
    except (ValueError, RecursionError) as exc:
        raise InputError(f"cannot read certificate: {str(exc)[:200]}", source=str(path)) from None


def is_table(data: Any) -> bool:
    """Whether parsed certificate JSON is a streamed certificate's (format ``viewcert-certificate-table/1``)."""
    return isinstance(data, dict) and data.get("format") == T.CERTIFICATE_FORMAT


def _need(ok: bool, what: str, source: str, fld: str) -> None:
    if not ok:
        raise InputError(what, source=source, field=fld)


def check_table_shape(data: dict, source: str) -> None:
    """The sections a table certificate must hold, with the types the reader relies on (InputError naming the
    field otherwise); the shard names bare ``part-NNNNNN.parquet`` in ``items/``."""
    for key in ("inputs", "config", "summary", "items_table"):
        _need(isinstance(data.get(key), dict), f"{key} must be a JSON object", source, key)
    inputs, rec = data["inputs"], data["items_table"]
    _need(isinstance(inputs.get("spec"), str), "must be text", source, "inputs.spec")
    _need(isinstance(inputs.get("files"), dict), "must be a JSON object", source, "inputs.files")
    _need(rec.get("format") == T.TABLE_FORMAT, f"must be {T.TABLE_FORMAT!r}", source, "items_table.format")
    _need(rec.get("folder") == T.TABLE_DIR, f"must be {T.TABLE_DIR!r}", source, "items_table.folder")
    size = rec.get("shard_items")
    _need(type(size) is int and size >= 1, "must be a whole number >= 1", source, "items_table.shard_items")
    shards = rec.get("shards")
    _need(isinstance(shards, list), "must be a list", source, "items_table.shards")
    for k, s in enumerate(shards):
        ok = (isinstance(s, dict) and s.get("name") == f"part-{k:06d}.parquet" and type(s.get("n")) is int
              and 0 <= s["n"] <= size and isinstance(s.get("sha256"), str) and SHA256.fullmatch(s["sha256"]))
        _need(bool(ok), f"shard {k} must be {{name: part-{k:06d}.parquet, n: 0..{size}, sha256: 64 hex digits}}",
              source, "items_table.shards")
    _need(isinstance(rec.get("chain"), str) and rec["chain"] == T.chain(s["sha256"] for s in shards),
          "the recorded shard digests do not chain to items_table.chain", source, "items_table.chain")


def receive_table(path: str | Path, data: dict, *, allow_stale: bool = False) -> bool:
    """Check a table certificate before any work (shape, chain; its digest: a stale one is a one-line
    ``StaleCertificate`` unless ``allow_stale``); True when the digest matches."""
    src = str(path)
    try:
        stored, actual = digest_value(data), compute_digest(data)
    except (TypeError, ValueError) as exc:
        raise InputError(f"cannot digest certificate: {str(exc)[:200]}", source=src, field="digest") from None
    if stored != actual and not allow_stale:
        said = "no digest" if stored is None else f"digest {str(stored)[:16]}…"
        raise StaleCertificate(f"stale certificate: it records {said} but its content hashes to {actual[:16]}… "
                               f"(edited after it was written; {STALE_HINT})", source=src, field="digest")
    check_table_shape(data, src)
    shards_inside(path, data["items_table"]["shards"])
    return stored == actual


def shards_inside(path: str | Path, shards: list[dict]) -> None:
    """Every shard listed present and a regular file in the certificate's own ``items/`` folder: neither it nor
    the folder a symlink (a link out of the folder, or through another, is refused before anything is read);
    InputError naming the shard otherwise. The names are bare ``part-NNNNNN.parquet`` (``check_table_shape``)."""
    root = os.path.realpath(Path(path).parent)
    for s in shards:
        p = Path(path).parent / T.TABLE_DIR / s["name"]
        if not os.path.lexists(p):
            raise InputError("shard listed by the certificate is missing", source=str(p), field="items_table.shards")
        if (os.path.islink(p) or os.path.realpath(p) != os.path.join(root, T.TABLE_DIR, s["name"])
                or not os.path.isfile(p)):
            raise InputError("shard is not a regular file inside the certificate's items/ folder (a symlink or "
                             "another kind of file; nothing read)", source=str(p), field="items_table.shards")


def _stored_shard(folder: Path, s: dict) -> list[dict]:
    meta, items = T.read_shard(folder / s["name"])  # rows checked against the shard's own SHA-256
    if not all(isinstance(it.get("id"), str) for it in items):
        raise InputError("a row has no text id", source=str(folder / s["name"]), field="id")
    if meta.get("sha256") != s["sha256"] or len(items) != s["n"]:
        raise InputError("shard differs from the certificate's record", source=str(folder / s["name"]),
                         field="sha256")
    return items


def verify_table(path: str | Path, data: dict, *, input_spec: str | None = None, n_workers: int | None = None,
                 scheduler: Any = None, inputs_root: str | Path | None = None, limits: Limits = DEFAULT_LIMITS,
                 allow_stale: bool = False, progress: bool | None = None) -> VerifyReport:
    """Recompute a streamed certificate at ``path`` (``data``: its parsed JSON) shard by shard and compare (module
    docstring); the trust boundary and limits are ``verify.verify_certificate``'s."""
    path = Path(path)
    digest_ok = receive_table(path, data, allow_stale=allow_stale)
    rep = VerifyReport(digest_ok=digest_ok, stored_digest=str(digest_value(data) or ""))
    loc = data.get("location")
    named = Named(data["inputs"], dict(data["config"]), loc if isinstance(loc, dict) else None)
    root = trusted_root(Path.cwd() if inputs_root is None else inputs_root)
    config = named.config
    if bool(config.get("protocol_sha256")) or is_protocol_file(config.get("protocol")):
        changed = _protocol_file(named, config, root, path)
        if changed:
            rep.input_changes.append(changed)
            return rep
    try:
        cfg = CertifyConfig.from_dict(config)
    except (TypeError, ValueError, KeyError) as exc:
        raise InputError(f"unreadable settings ({str(exc)[:120]})", source=str(path), field="config") from None
    cfg.check_limits(limits)
    spec = input_spec or trusted_input(named, root, str(path))
    inputs = named.inputs
    dataset = reload_inputs(spec, inputs, cfg, limits, path, rep)
    if dataset is None:
        return rep
    recomputed, n_items = _recompute(path.parent / T.TABLE_DIR, data["items_table"], dataset, cfg, rep,
                                     n_workers=n_workers, scheduler=scheduler, progress=progress)
    if recomputed["inputs"]["spec"] != inputs["spec"]:  # the location is not part of what is verified
        recomputed["inputs"]["spec"] = inputs["spec"]
        recomputed["digest"]["value"] = compute_digest(recomputed)
    compare(data, recomputed, rep)  # the sections (no items: those were compared shard by shard)
    rep.n_items = n_items
    return rep


def _recompute(folder: Path, rec: dict, dataset, cfg: CertifyConfig, rep: VerifyReport, **run) -> tuple[dict, int]:
    """The table certificate recomputed shard by shard, each shard compared with the stored one as it is made;
    (recomputed small certificate, items stored)."""
    size, stored_shards = rec["shard_items"], rec["shards"]
    fp = fingerprint(dataset, cfg, task="verify-table")
    tally, shards, n_items = T.Tally(), [], 0
    for k, chunk in T.iter_shards(dataset, size):
        stored = _stored_shard(folder, stored_shards[k]) if k < len(stored_shards) else []
        new = T.compute_shard(chunk, cfg, fingerprint=fp, description=f"verify shard {k}", **run)
        compare_items(stored, new, rep)  # noise-only values of the recomputation take the stored ones
        n_items += len(stored)
        tally = tally.merge(T.Tally.of(outcomes_of(new), cfg.molecules.molecule_levels))
        shards.append({"name": f"part-{k:06d}.parquet", "n": len(new), "sha256": T.shard_sha256(new)})
    for s in stored_shards[len(shards):]:  # stored shards past the recomputed items
        stored = _stored_shard(folder, s)
        compare_items(stored, [], rep)
        n_items += len(stored)
    return T.table_certificate(dataset, cfg, tally, shards, size), n_items
