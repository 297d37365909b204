"""Verify a streamed certificate (``certify.stream``: an item table beside a small ``certificate.json``).

Before any work: the small certificate's shape, its digest (a stale one refused unless asked, as ``verify``), the
chain of its recorded shard digests and every shard a regular file in the certificate's own ``items/`` folder
(``shards_inside``: a name reaching out, an absolute one, a symlink, all refused in one line). Then the inputs are re-read (hashes compared)
and recomputed shard by shard with the recorded settings and shard size: each stored shard is read (its rows
checked against its SHA-256) and compared item by item with its recomputation, so one shard of records of each is in
memory at a time. The small certificate recomputed from those shards (summary, settings, chain) is compared section
by section. The report is ``verify.VerifyReport``'s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from viewcert.cameras.protocol_files import is_protocol_file
from viewcert.certify import stream as T
from viewcert.certify.config import CertifyConfig
from viewcert.certify.run import fingerprint
from viewcert.certify.trust import trusted_input, trusted_root
from viewcert.certify.verify import VerifyReport, _protocol_file, compare, compare_items, reload_inputs
from viewcert.errors import InputError
from viewcert.formats.reader import Received
from viewcert.formats.records import compute_digest, digest_value, outcomes_of
from viewcert.formats.table import TABLE_DIR, read_shard, shard_sha256


def _stored_shard(folder: Path, s: dict) -> list[dict]:
    meta, items = read_shard(folder / s["name"])  # rows checked against the shard's own SHA-256
    if not all(isinstance(it.get("id"), str) for it in items):
        raise InputError("a row has no text id", source=str(folder / s["name"]), field="id")
    if meta.get("sha256") != s["sha256"] or len(items) != s["n"]:
        raise InputError("shard differs from the certificate's record", source=str(folder / s["name"]),
                         field="sha256")
    return items


def verify_table(path: str | Path, received: Received, *, input_spec: str | None = None, n_workers: int | None = None,
                 scheduler: Any = None, inputs_root: str | Path | None = None,
                 progress: bool | None = None) -> VerifyReport:
    """Recompute a streamed certificate at ``path`` (``received``: as ``formats.reader.receive`` read it: digest,
    shape, chain and shards checked) shard by shard and compare (module docstring); the trust boundary and limits
    are ``verify.verify_certificate``'s."""
    path, data = Path(path), received.data
    rep = VerifyReport(digest_ok=received.digest_ok, stored_digest=str(digest_value(data) or ""))
    named = received.certificate  # typed by the reader: inputs, settings, recorded location
    root = trusted_root(Path.cwd() if inputs_root is None else inputs_root)
    config = named.config.to_dict()  # the settings CertifyConfig reads (a protocol file: its real path, below)
    if bool(named.config.protocol_sha256) or is_protocol_file(named.config.protocol or None):
        changed = _protocol_file(named, config, root, path)
        if changed:
            rep.input_changes.append(changed)
            return rep
    try:
        cfg = CertifyConfig.from_dict(config)
    except (TypeError, ValueError, KeyError) as exc:
        raise InputError(f"unreadable settings ({str(exc)[:120]})", source=str(path), field="config") from None
    cfg.check_limits()
    spec = input_spec or trusted_input(named, root, str(path))
    inputs = named.inputs
    dataset = reload_inputs(spec, inputs, cfg, path, rep)
    if dataset is None:
        return rep
    recomputed, n_items = _recompute(path.parent / TABLE_DIR, data["items_table"], dataset, cfg, rep,
                                     n_workers=n_workers, scheduler=scheduler, progress=progress)
    if recomputed["inputs"]["spec"] != inputs.spec:  # the location is not part of what is verified
        recomputed["inputs"]["spec"] = inputs.spec
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
        shards.append({"name": f"part-{k:06d}.parquet", "n": len(new), "sha256": shard_sha256(new)})
    for s in stored_shards[len(shards):]:  # stored shards past the recomputed items
        stored = _stored_shard(folder, s)
        compare_items(stored, [], rep)
        n_items += len(stored)
    return T.table_certificate(dataset, cfg, tally, shards, size), n_items
