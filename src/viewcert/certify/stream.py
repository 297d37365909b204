"""The streamed certificate: item records written as they finish into a columnar item table beside a small
``certificate.json``, so the coordinator holds one shard of records at a time, whatever the number of items.

Layout of ``OUT``:

- ``items/part-NNNNNN.parquet``: one row per item, ``SHARD_ITEMS`` items per shard in input order. Columns: ``id``,
  ``outcome`` (text), ``correct`` (bool) and every other field of ``records.ItemOutcome`` as the canonical compact
  JSON of its value (null where the record has none); ``extra`` holds fields the record does not name. A shard's
  key-value metadata ``viewcert`` records the table format, the run's fingerprint, its item count and its SHA-256.
- ``certificate.json`` (format ``viewcert-certificate-table/1``): the settings sections of the JSON certificate
  (``certify.certificate``), the summary computed from mergeable counts (``Tally``: no second pass over the items;
  lists by id live in the table) and ``items_table``: the shards (name, items, SHA-256) and their chain. Its digest
  is the one digest of every certificate (``records.digest_record``), so it covers the chain.

**Canonical bytes.** A shard's SHA-256 hashes its items' canonical lines (``json_dumps(item, indent=None)``, the line
a JSON certificate writes for the item), not the Parquet bytes (which depend on pyarrow's version); the chain is
c₀ = SHA-256("viewcert-item-table/1"), cₖ = SHA-256(cₖ₋₁ ":" sha256ₖ) in hex.

**Resume.** A shard on disk is reused when its metadata's fingerprint is the run's, its ids are the shard's and its
rows hash to its recorded SHA-256; otherwise it is recomputed. Shards are written atomically, so a run killed at any
moment (SIGKILL included) leaves only whole shards and the rerun computes only what is missing.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viewcert.certify.certificate import (
    library_versions,
)
from viewcert.certify.config import CertifyConfig
from viewcert.certify.evaluate import REASON_ORDER, CertifyRecords
from viewcert.certify.inputs import Dataset
from viewcert.certify.summary import NO_BOUND, crystal_system_of, rate_bound, truth_counts
from viewcert.errors import InputError
from viewcert.formats.item_sections import OracleReport
from viewcert.formats.records import ABSENT, ItemOutcome, compute_digest, digest_record, outcomes_of
from viewcert.formats.summary_sections import Kinds, LevelCount, PhantomCensus, TableSummary
from viewcert.formats.table import (
    CERTIFICATE_FORMAT,
    TABLE_DIR,
    TABLE_FORMAT,
    StreamedCertificate,
    chain,
    read_shard,
    shard_bytes,
    shard_sha256,
)
from viewcert.io.atomic import json_dumps, write_bytes_atomic, write_text_atomic
from viewcert.io.confine import inner_folder, names_inside, remove_inside
from viewcert.numeric import sig
from viewcert.parallel import map_items
from viewcert.resolution import quantize_tree, resolution_record
from viewcert.sanitize import console_fields, console_text
from viewcert.stats import clopper_pearson_interval, clopper_pearson_lower
from viewcert.symmetry.labels import CRYSTAL_SYSTEMS, LEVELS

SHARD_ITEMS = 5000  # items per shard: the coordinator's records in memory at a time
THRESHOLD = 50_000  # items: above it ``certify`` writes the item table (below, one readable JSON certificate)


# --- mergeable counts ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Tally:
    """Counts a summary is made of, additive over items: ``Tally.of(a + b) == Tally.of(a).merge(Tally.of(b))``.
    Keys: "crystals", "molecules", "errors", "correct:<kind>", "level:<kind>:<level>", "system:<cs>:n|correct",
    "census:<name>", "reason:<reason>", "failures", "label_mismatches", "cross_check", "symmetry_raised"."""

    counts: dict = field(default_factory=dict)

    @classmethod
    def of(cls, items: Iterable[ItemOutcome], molecule_levels: tuple = ()) -> Tally:
        c: dict[str, int] = {}

        def add(key: str, n: int = 1) -> None:
            c[key] = c.get(key, 0) + int(n)
        for o in items:
            if o.is_error:
                add("errors")
                continue
            kind = "molecules" if o.is_molecule else "crystals"
            add(kind)
            add(f"correct:{kind}", bool(o.correct))
            for lv in (molecule_levels if o.is_molecule else LEVELS):
                add(f"level:{kind}:{lv}", o.correct_at(lv))
            if not o.is_molecule:
                cs = crystal_system_of(o)
                add(f"system:{cs}:n")
                add(f"system:{cs}:correct", bool(o.correct))
            _census(o, add)
        return cls(c)

    def merge(self, other: Tally) -> Tally:
        keys = self.counts.keys() | other.counts.keys()
        return Tally({k: self.counts.get(k, 0) + other.counts.get(k, 0) for k in sorted(keys)})

    def get(self, key: str) -> int:
        return self.counts.get(key, 0)


def _census(o: ItemOutcome, add) -> None:
    """The phantom census, failure reasons and the listed kinds of one certified item."""
    orc = o.oracle or OracleReport()
    add("census:items_with_phantoms", bool(orc.n_phantoms))
    add("census:total_phantoms", orc.n_phantoms or 0)
    add("census:items_with_missing_atoms", bool(orc.n_missing))
    add("census:total_missing_atoms", orc.n_missing or 0)
    add("census:items_oracle_failed", orc.status not in (ABSENT, None, "ok"))
    for name in ("unique", "exact", "certified"):
        add(f"census:items_{name}", bool(getattr(o, name) not in (ABSENT, None, False)))
    if not o.correct:
        add("failures")
        for r in o.reasons or []:
            add(f"reason:{r}")
    add("label_mismatches", bool(o.label_mismatch))
    add("cross_check", bool(o.cross_check))
    add("symmetry_raised", o.symmetry_raised not in (ABSENT, None))


CENSUS = ("items_with_phantoms", "total_phantoms", "items_with_missing_atoms", "total_missing_atoms",
          "items_oracle_failed", "items_unique", "items_exact", "items_certified")


def tally_summary(t: Tally, cfg: CertifyConfig) -> dict:
    """:func:`table_summary_of` as the JSON object written (the small certificate's ``summary``)."""
    return table_summary_of(t, cfg).to_dict()


def table_summary_of(t: Tally, cfg: CertifyConfig) -> TableSummary:
    """The summary of a tally: the figures ``summary.summary_of`` gives (R1, its exact bounds, by level and crystal
    system, the phantom census, failure reasons) and the counts of what it lists by id (the table holds those)."""
    crystals, mols = t.get("crystals"), t.get("molecules")
    kind = "crystals" if crystals or not mols else "molecules"
    levels = LEVELS if kind == "crystals" else cfg.molecules.molecule_levels
    n, k = t.get(kind), t.get(f"correct:{kind}")
    conf = cfg.scoring.confidence
    systems = sorted({key.split(":")[1] for key in t.counts if key.startswith("system:")},
                     key=lambda cs: (CRYSTAL_SYSTEMS.index(cs) if cs in CRYSTAL_SYSTEMS else 99, cs))
    return TableSummary(
        n=n, n_errors=t.get("errors"), kinds=Kinds(crystals=crystals, molecules=mols),
        score=cfg.scoring.score if kind == "crystals" else "+".join(cfg.molecules.molecule_levels),
        truth=cfg.scoring.truth if kind == "crystals" else "input", correct=k,
        R1=sig(k / n) if n else None,
        bound=rate_bound(clopper_pearson_lower(k, n, conf)) if n else NO_BOUND,
        interval=rate_bound(clopper_pearson_interval(k, n, conf)) if n else NO_BOUND,
        by_level={lv: LevelCount(correct=t.get(f"level:{kind}:{lv}"),
                                 R1=sig(t.get(f"level:{kind}:{lv}") / n) if n else None) for lv in levels},
        by_crystal_system={cs: LevelCount(n=t.get(f"system:{cs}:n"), correct=t.get(f"system:{cs}:correct"))
                           for cs in systems},
        phantom_census=PhantomCensus(**{name: t.get(f"census:{name}") for name in CENSUS}),
        failure_reasons={r: t.get(f"reason:{r}") for r in REASON_ORDER if t.get(f"reason:{r}")},
        n_failures=t.get("failures"), n_label_mismatches=t.get("label_mismatches"),
        n_cross_check_disagreements=t.get("cross_check"), n_symmetry_raised=t.get("symmetry_raised"),
        lists=f"failures, label mismatches, disagreements, raised symmetry and errors by id: the item table "
              f"({TABLE_DIR}/)",
    )


# --- shards ------------------------------------------------------------------------------------------------------

def _reused(path: Path, fingerprint: str, ids: list[str]) -> list[dict] | None:
    """The shard's records when it can be reused for exactly ``ids`` under ``fingerprint``, else None."""
    if not path.is_file():
        return None
    try:
        meta, items = read_shard(path)
    except InputError:
        return None
    return items if meta.get("fingerprint") == fingerprint and [it["id"] for it in items] == ids else None


# --- the run -----------------------------------------------------------------------------------------------------

@dataclass
class StreamRun:
    """What a streamed run did: shards (name, n, sha256), items computed and resumed (run.json's counts)."""

    shards: list = field(default_factory=list)
    n_computed: int = 0
    n_resumed: int = 0
    truth: dict = field(default_factory=dict)  # ``summary.truth_counts`` of every item (the R1 line's truth)


def iter_shards(dataset: Dataset, shard_items: int) -> Iterator[tuple[int, tuple]]:
    for k, start in enumerate(range(0, len(dataset.items), shard_items)):
        yield k, dataset.items[start:start + shard_items]


def compute_shard(chunk: tuple, cfg: CertifyConfig, *, fingerprint: str, n_workers: int | None = None,
                  scheduler: Any = None, progress: bool | None = None, description: str = "certify") -> list[dict]:
    """The item records of one shard's items, certified (quantized, as a shard stores them)."""
    res = map_items(CertifyRecords(cfg), chunk, keys=[it.id for it in chunk], n_workers=n_workers,
                    scheduler=scheduler, fingerprint=fingerprint, progress=progress, description=description)
    return [o.to_dict() for o in outcomes_of(quantize_tree(res.results))]


def certify_table(dataset: Dataset, cfg: CertifyConfig, out: str | Path, *, fingerprint: str,
                  shard_items: int = SHARD_ITEMS, n_workers: int | None = None, scheduler: Any = None,
                  progress: bool | None = None, on_shard=None) -> tuple[dict, StreamRun]:
    """Certify ``dataset`` into ``OUT/items/`` shard by shard (resuming each whole shard found) and return the small
    certificate (written by ``write_table_certificate``) and what was done; ``on_shard(records)`` sees each shard's
    records once (the label audit)."""
    folder = inner_folder(Path(out) / TABLE_DIR)  # no symlink on the way: refused (one line) before any shard
    for name in names_inside(folder):  # listed and removed through real folders, never through a link
        if fnmatch.fnmatchcase(name, ".part-*.parquet.*.tmp"):  # a temporary of a run killed while writing a shard
            remove_inside(folder / name)
    tally, run = Tally(), StreamRun()
    levels = cfg.molecules.molecule_levels
    for k, chunk in iter_shards(dataset, shard_items):
        name, ids = f"part-{k:06d}.parquet", [it.id for it in chunk]
        items = _reused(folder / name, fingerprint, ids)
        if items is None:
            items = compute_shard(chunk, cfg, fingerprint=fingerprint, n_workers=n_workers, scheduler=scheduler,
                                  progress=progress, description=f"certify shard {k}")
            write_bytes_atomic(folder / name, shard_bytes(items, fingerprint))
            run.n_computed += len(items)
        else:
            run.n_resumed += len(items)
        outcomes = outcomes_of(items)
        tally = tally.merge(Tally.of(outcomes, levels))
        for key, n in truth_counts(outcomes).items():
            run.truth[key] = run.truth.get(key, 0) + n
        if on_shard is not None:
            on_shard(outcomes)
        run.shards.append({"name": name, "n": len(items), "sha256": shard_sha256(items)})
    for extra in sorted(set(fnmatch.filter(names_inside(folder), "part-*.parquet")) - {s["name"] for s in run.shards}):
        remove_inside(folder / extra)  # a shard of an earlier run with more items: not part of this table
    return table_certificate(dataset, cfg, tally, run.shards, shard_items), run


def table_certificate(dataset: Dataset, cfg: CertifyConfig, tally: Tally, shards: list[dict],
                      shard_items: int) -> dict:
    """The small certificate of an item table (module docstring), digested."""
    sections = {"inputs": dataset.record(), **cfg.sections(), "summary": table_summary_of(tally, cfg)}
    body = {"format": CERTIFICATE_FORMAT, "libraries": library_versions(),
            **{name: sec.to_dict() for name, sec in sections.items()},  # written: the sections' JSON objects
            "items_table": {"format": TABLE_FORMAT, "folder": TABLE_DIR, "shard_items": shard_items,
                            "n_items": sum(s["n"] for s in shards), "shards": shards,
                            "chain": chain(s["sha256"] for s in shards)}}
    body = {**quantize_tree(body), "resolution": resolution_record()}
    loc = cfg.location(dataset)
    if loc is not ABSENT:
        body["location"] = loc.to_dict()
    return {**body, "digest": digest_record(body)}


def write_table_certificate(out: str | Path, cert: dict) -> Path:
    return write_text_atomic(Path(out) / "certificate.json", json_dumps(cert, indent=1))


def read_table(out: str | Path, cert: dict) -> Iterator[ItemOutcome]:
    """The items of the item table beside ``cert`` in ``out``, shard by shard (lazily), read by the format's one
    reader (``formats.table.StreamedCertificate.items``: each shard's schema, rows and record checked, the chain at
    the end). The certificate's table record is received first, as ``verify`` receives it
    (``formats.table.check_table_record``: the folder ``items``, bare shard names, each shard a regular file there,
    no symlink); InputError naming the certificate or the shard on any difference."""
    src = Path(out) / "certificate.json"
    return StreamedCertificate.opened(src, cert).items()


def error_items(out: str | Path, cert: dict, *, limit: int) -> list[ItemOutcome]:
    """The first ``limit`` items of a table that could not be read or certified (read lazily, shard by shard)."""
    found: list[ItemOutcome] = []
    for it in read_table(out, cert):
        if it.is_error:
            found.append(it)
            if len(found) >= limit:
                break
    return found


def check_table(out: str | Path, cert: dict, cfg: CertifyConfig) -> list[str]:
    """Differences between a table certificate and its table: the digest, every shard, the chain, and the summary
    recomputed from the items (an empty list: consistent)."""
    diffs, head = [], StreamedCertificate.from_dict(cert, "")
    if compute_digest(cert) != head.digest_value:
        diffs.append("digest: certificate.json does not match its digest")
    tally = Tally.of(read_table(out, cert), cfg.molecules.molecule_levels)
    again, recorded = quantize_tree(tally_summary(tally, cfg)), head.summary.to_dict()
    for key, value in again.items():
        if recorded.get(key) != value:
            diffs.append(f"summary.{key}: recorded {recorded.get(key)!r}, table gives {value!r}")
    return diffs


def console_section(sec):
    """A typed settings section (``formats.settings_sections``) with every received string made one line
    (``sanitize.console_fields``), typed again; ABSENT or None as they are."""
    return type(sec).from_dict(console_fields(sec.to_dict())) if sec else sec


def summary_text(cert: dict, truth: str | None = None) -> str:
    """The human summary of a table certificate (summary.txt, the console); received text escaped. ``truth``: the
    truth R1 was scored against in words (``summary.truth_text`` of the run's items), else the rule's name."""
    head = StreamedCertificate.from_dict(cert, "")
    s, inputs = head.summary, console_section(head.inputs)
    tol, table = head.tolerances, head.items_table
    lines = [f"inputs: {inputs.spec} ({inputs.kind}), {s.n} items certified"
             + (f", {s.n_errors} unreadable or uncertifiable (not counted in R1)" if s.n_errors else ""),
             f"protocol: {console_section(head.protocol).name}; delta = {tol.delta:g} Å, "
             f"tau = {tol.tau:g} Å, angle tolerance = {tol.angle_tolerance:g}°",
             f"R1 ({s.score}, truth = {truth or s.truth}): {s.bound.text}", f"    {s.interval.text}",
             "    by level: " + ", ".join(f"{k} {v.correct}/{s.n}" for k, v in s.by_level.items()),
             "    by crystal system: " + ", ".join(f"{console_text(k, keep_newlines=False)} {v.correct}/{v.n}"
                                              for k, v in s.by_crystal_system.items())]
    c = s.phantom_census
    lines += [f"phantoms: {c.items_with_phantoms} items ({c.total_phantoms} points); missing atoms: "
              f"{c.items_with_missing_atoms} items; certified by the theorem: {c.items_certified}",
              f"failures {s.n_failures}, label mismatches {s.n_label_mismatches}, spglib/moyopy disagreements "
              f"{s.n_cross_check_disagreements}, raised symmetry {s.n_symmetry_raised}: listed by id in the "
              f"item table",
              f"item table: {table.n_items} items in {len(table.shards)} shards ({table.folder}/), chain "
              f"sha256:{table.chain}",
              f"certificate digest: sha256:{console_text(str(head.digest_value), keep_newlines=False)}"]
    return "\n".join(lines) + "\n"
