"""Run a certification end to end: items → ``parallel.map_items`` → certificate, table, plots.

    from viewcert.certify import certify
    cert = certify("builtin:prototypes", CertifyConfig(protocol="render-ceiling-5"), out="out")

Outputs in ``out``: ``certificate.json`` (deterministic, digested), ``items.csv`` (one row per item),
``summary.txt`` (what the CLI prints), ``disagreements.csv`` (every spglib/moyopy disagreement, one row per
item, cell and level; the summary lists the first 10), ``ceiling_by_system.png``, ``phantoms.png`` and (with
``margin=True``) ``delta_star.png``, and ``run.json``
(wall time, workers, executor: the only non-deterministic file, deliberately outside the certificate).
Shards live in ``out/.shards/<fingerprint>/``; re-running the same command resumes.
"""

from __future__ import annotations

import functools
import hashlib
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from viewcert.cameras.protocols import study_settings
from viewcert.certify import audit as A
from viewcert.certify import ceilings as C
from viewcert.certify import plots as P
from viewcert.certify import stream as T
from viewcert.certify.certificate import (
    certificate_of,
    library_versions,
    write_certificate,
)
from viewcert.certify.config import CertifyConfig
from viewcert.certify.evaluate import CertifyRecords, certify_item
from viewcert.certify.inputs import Dataset, database_format, load_input, parse_database_spec
from viewcert.certify.molecule import molecule_summary_lines
from viewcert.certify.summary import truth_counts, truth_text
from viewcert.errors import InputError
from viewcert.formats.item_sections import MoleculeOutcome, OracleReport, PointGroupOutcome, UniquenessMargin
from viewcert.formats.records import ABSENT, CeilingCertificate, ItemOutcome, Summary, digest_value
from viewcert.io.atomic import json_dumps, write_json_atomic, write_text_atomic
from viewcert.io.tables import csv_text
from viewcert.oracle.jit import cache_is_cold, mark_warm
from viewcert.oracle.margin import exactness_margin
from viewcert.parallel import MapResult, killed_by_signals, map_items
from viewcert.sanitize import console_fields, console_text
from viewcert.stats import empirical_percentile
from viewcert.symmetry.labels import disagreement_levels


@functools.lru_cache(maxsize=1)
def source_digest() -> str:
    """SHA-256 of viewcert's own source files (relative path and bytes, sorted): shards computed by other code
    are never resumed, even when the version number did not change."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def fingerprint(dataset: Dataset, cfg: CertifyConfig, task: str = "certify") -> str:
    """What a shard's results depend on: task, settings (a protocol file's content included), input hashes,
    library versions and viewcert's source (a named protocol's cameras or a kernel can change while the
    version number does not)."""
    sel = {} if dataset.selection is None else {"selection": dataset.selection.to_dict()}  # how items are shown
    blob = json_dumps({"task": task, "config": cfg.to_dict(), "files": dataset.files, **sel,
                       "libraries": library_versions(), "source": source_digest()}, indent=None)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def run_certification(dataset: Dataset, cfg: CertifyConfig, *, n_workers: int | None = None,
                      scheduler: Any = None, workdir: str | Path | None = None,
                      progress: bool | None = None, chunk_size: int | None = None) -> tuple[CeilingCertificate, MapResult]:
    """Certify every item of ``dataset`` under ``cfg``; returns (the typed certificate, MapResult).

    Parameters
    ----------
    dataset : Dataset
        The items.
    cfg : CertifyConfig
        The certification's settings (protocol, δ and τ in Å, observation model, levels).
    n_workers : int, optional
        Worker processes (None: every core).
    scheduler : optional
        A Dask scheduler (address or client); None: local processes.
    workdir : str or Path, optional
        Folder of the checkpointed shards (under a subfolder named by the run's fingerprint); None: none.
    progress : bool, optional
        Show a progress bar (None: when the console is a terminal).
    chunk_size : int, optional
        Items per shard (default: chosen from the item count and workers; a resumed run keeps its own).

    Returns
    -------
    tuple of (CeilingCertificate, MapResult)
        The certificate (typed; ``to_dict`` is its JSON object) and the map's record (resumed and computed
        shards).
    """
    run = _mapped(dataset, cfg, CertifyRecords(cfg), "certify", n_workers=n_workers, scheduler=scheduler,
                  workdir=workdir, progress=progress, chunk_size=chunk_size)
    return certificate_of(dataset, cfg, run.results), run


def run_with_as_rendered(dataset: Dataset, cfg: CertifyConfig, *, n_workers: int | None = None,
                         scheduler: Any = None, workdir: str | Path | None = None, progress: bool | None = None,
                         chunk_size: int | None = None) -> tuple[CeilingCertificate, CeilingCertificate, MapResult]:
    """``run_certification`` that also certifies the same views as rendered in the same pass over the items
    (``certify.ceilings.CeilingRecords``: observations ``visible``, no margins; each item read, standardised,
    labelled and framed once): the certificate, the as-rendered one (in memory; the one a separate run under
    ``ceilings.as_rendered_config(cfg)`` gives) and the map's record. Arguments as ``run_certification``'s.

    Returns
    -------
    tuple of (CeilingCertificate, CeilingCertificate, MapResult)
        The certificate under ``cfg``, the as-rendered certificate of the same views, the map's record.
    """
    run = _mapped(dataset, cfg, C.CeilingRecords(cfg), "certify+as-rendered", n_workers=n_workers,
                  scheduler=scheduler, workdir=workdir, progress=progress, chunk_size=chunk_size)
    parts = [[r[key] for r in run.results] for key in (C.GEOMETRIC_KEY, C.AS_RENDERED_KEY)]
    return (certificate_of(dataset, cfg, parts[0]),
            certificate_of(dataset, C.as_rendered_config(cfg), parts[1]), run)


def _mapped(dataset: Dataset, cfg: CertifyConfig, fn, task: str, *, n_workers, scheduler, workdir, progress,
            chunk_size) -> MapResult:
    """``fn`` mapped over the items (``parallel.map_items``), its shards under ``workdir``/the fingerprint of
    ``task``, the kernels compiled once first."""
    fp = fingerprint(dataset, cfg, task)
    wd = None if workdir is None else Path(workdir) / fp
    if progress is not False and cache_is_cold():
        print("viewcert: first run — compiling the numerical kernels once (cached for later runs) ...",
              file=sys.stderr, flush=True)
    if scheduler is None and n_workers != 1 and len(dataset.items) > 1:
        # compile (or load) the kernels here, once: forked workers inherit them instead of each compiling;
        # a signal meanwhile ends the process at once (nothing is lost: no shard is written yet)
        with killed_by_signals():
            fn(dataset.items[0])
    run = map_items(fn, dataset.items, keys=[it.id for it in dataset.items],
                    workdir=wd, n_workers=n_workers, scheduler=scheduler, chunk_size=chunk_size, fingerprint=fp,
                    progress=progress, description=f"certify {len(dataset)} items")
    mark_warm()
    return run


TABLE_COLUMNS = (
    "id", "formula", "n_atoms", "dataset_crystal_system", "dataset_point_group", "dataset_space_group",
    "rendered_crystal_system", "rendered_point_group", "rendered_space_group",
    "reconstructed_crystal_system", "reconstructed_point_group", "reconstructed_space_group",
    "correct", "outcome", "reasons", "n_phantoms", "n_missing", "n_points", "max_position_error",
    "min_same_label_distance", "separation_ok", "unique", "exact", "certified", "label_mismatch", "cross_check",
    "oracle_warnings", "kind", "molecule_point_group", "molecule_point_group_reconstructed",
    "molecule_point_group_pymatgen", "handedness", "delta_star", "delta_star_bound",
)
#: the exactness margin δ_exact (Å, ``oracle.margin.exactness_margin``), a last column only when margins were
#: computed (``--margin``), so the tables of runs without margins keep their bytes
EXACT_COLUMN = "delta_exact"


def items_table(cert: CeilingCertificate) -> str:
    """One CSV row per item (deterministic; string cells neutralised against CSV injection).

    Parameters
    ----------
    cert : CeilingCertificate
        A crystal/molecule certificate.

    Returns
    -------
    str
        CSV text, a header and one row per item.
    """
    rows = [_item_row(it) for it in cert.items]
    if any(r[-1] != "" for r in rows):
        return csv_text((*TABLE_COLUMNS, EXACT_COLUMN), rows)
    return csv_text(TABLE_COLUMNS, [r[:-1] for r in rows])


def _item_row(it: ItemOutcome) -> list:
    """The ``TABLE_COLUMNS`` of one item, then its δ_exact (``EXACT_COLUMN``; "" without a margin)."""
    ds, rl, rc = it.label("dataset"), it.label("rendered"), it.label("reconstructed")
    orc = it.oracle or OracleReport()
    xc = it.cross_check or {}
    row = [it.id, _blank(it.formula), _blank(it.n_atoms)]
    for lab in (ds, rl, rc):
        row += [lab.get("crystal_system", ""), lab.get("point_group", ""), lab.get("space_group", "")]
    row += [int(bool(it.correct)), it.outcome, ";".join(it.reasons or []),
            _blank(orc.n_phantoms), _blank(orc.n_missing), _blank(orc.n_points),
            _blank(orc.max_position_error), _blank(orc.min_same_label_distance),
            _blank(orc.separation_ok), _blank(it.unique), _blank(it.exact),
            _blank(it.certified), ";".join(it.label_mismatch or []),
            "; ".join(f"{k}: {v}" for k, v in xc.items()), " | ".join(orc.warnings or [])]
    mol = it.molecule or MoleculeOutcome()
    mpg = mol.point_group or PointGroupOutcome()
    row += ["" if it.is_error else ("molecule" if mol else "crystal"), _text(mpg.input),
            _blank(mpg.reconstructed), _text(mpg.cross_check.pymatgen if mpg.cross_check else ABSENT),
            _text(mol.handedness.status if mol.handedness else ABSENT)]
    um = it.uniqueness_margin or UniquenessMargin()  # with CertifyConfig(margin=True)
    exact = "" if um.delta_star in (ABSENT, None) else exactness_margin(
        um.delta_star, None if um.delta_exact is ABSENT else um.delta_exact)
    return row + [_blank(um.delta_star), _text(um.bound), exact]


def _text(x):
    """A text cell: "" for a key the record does not have (what ``dict.get(key, "")`` gave)."""
    return "" if x is ABSENT else x


def _blank(x):
    if x is None or x is ABSENT:
        return ""
    if isinstance(x, bool):
        return int(x)
    return x


def summary_text(cert: CeilingCertificate, *, max_list: int = 30, ceilings: Sequence[str] = ()) -> str:
    """The human summary (summary.txt, the console): every received string in it is one line, controls
    escaped (``sanitize.console_fields``), so an item id cannot break or forge a line.

    Parameters
    ----------
    cert : CeilingCertificate
        A crystal/molecule certificate.
    max_list : int
        Ids listed at most per list (failures, errors, disagreements).
    ceilings : sequence of str
        The geometric and as-rendered ceilings of the same views (``certify.ceilings.ceiling_lines``), stated
        right after R1 (received ids escaped here).

    Returns
    -------
    str
        The summary's lines.
    """
    s = Summary.from_dict(console_fields(cert.summary.to_dict()))
    tol, inputs, proto = cert.tolerances, T.console_section(cert.inputs), T.console_section(cert.protocol)
    oracle, obs = T.console_section(cert.oracle), T.console_section(cert.observation_model)
    lines = [
        f"inputs: {inputs.spec} ({inputs.kind}"
        + (f", {inputs.subset}" if inputs.subset else "") + f"), {s.n} items"
        + (f" certified, {len(s.errors)} unreadable or uncertifiable (not counted in R1)" if s.errors else ""),
        f"protocol: {proto.name} ({len(proto.views)} views); oracle pairs={oracle.pairs}, "
        f"merge={oracle.merge}; tiling {'x'.join(map(str, obs.tiling))}; observations "
        f"{'ideal' if obs.observe is ABSENT else obs.observe}",
        f"delta = {tol.delta:g} Å, tau = {tol.tau:g} Å, angle tolerance = {tol.angle_tolerance:g}°",
    ]
    lines += study_departure_lines(cert)
    n_crystals, n_molecules = (s.kinds.crystals or 0, s.kinds.molecules or 0) if s.kinds else (s.n, 0)
    mixed = bool(n_crystals and n_molecules)
    if n_crystals or not n_molecules:  # molecules are never given a crystal system
        truth = truth_text(truth_counts(cert.items), s.score, s.truth, label_columns(cert))
        lines += [
            ("crystals: " if mixed else "") + f"R1 ({s.score}, truth = {truth}): {s.bound.text}",
            f"    {s.interval.text}",
            "    by level: " + ", ".join(f"{k} {v.correct}/{s.n}" for k, v in s.by_level.items()),
            "    by crystal system: " + ", ".join(f"{k} {v.correct}/{v.n}" for k, v in s.by_crystal_system.items()),
        ]
    else:
        lines += [f"R1 (all of {s.score}, truth = the input molecule): {s.bound.text}"]
    lines += [console_text(x, keep_newlines=False) for x in ceilings]
    lines += molecule_summary_lines(s.molecules)
    c = s.phantom_census
    n_all = n_crystals + n_molecules or s.n
    lines += margin_lines(cert)
    lines.append(f"phantoms: {c.items_with_phantoms} items ({c.total_phantoms} points); missing atoms: "
                 f"{c.items_with_missing_atoms} items; unique (Φ = ∅, all atoms recovered): {c.items_unique}/{n_all}; "
                 f"certified by the theorem: {c.items_certified}/{n_all}")
    if s.failures:
        lines.append(f"failures ({len(s.failures)}): " + ", ".join(
            f"{f['id']} [{'+'.join(f['reasons']) or '?'}: {f['predicted']} vs {f['reference']}]"
            for f in s.failures[:max_list]) + (" ..." if len(s.failures) > max_list else ""))
    if n_crystals or not n_molecules:
        lines += _crystal_check_lines(s, max_list)
    if s.errors:
        lines.append(f"not counted in R1: {len(s.errors)} items could not be read or certified:")
        lines += ["    " + error_line(e) for e in s.errors[:max_list]]
        if len(s.errors) > max_list:
            lines.append(f"    ... and {len(s.errors) - max_list} more (items.csv lists every one)")
    if A.applies(cert):  # a database's published labels (certify.audit)
        lines += A.audit_lines(A.audit(cert.items))
    digest = digest_value({"format": cert.format, "digest": cert.digest})  # the stored digest, without the whole JSON
    lines.append(f"certificate digest: sha256:{console_text(str(digest), keep_newlines=False)}")
    return "\n".join(lines) + "\n"


def label_columns(cert: CeilingCertificate) -> tuple[str, ...]:
    """The label columns a database input was read with (its recorded spec's ``#label=``), else ()."""
    return label_columns_of(cert.inputs.spec if cert.inputs else None)


def label_columns_of(spec) -> tuple[str, ...]:
    """The label columns of a database INPUT ``spec`` (its ``#label=``; one line each), else ()."""
    if not isinstance(spec, str) or database_format(spec) is None:
        return ()
    try:
        return tuple(console_text(lc.column, keep_newlines=False) for lc in parse_database_spec(spec)[2] or ())
    except InputError:  # a received certificate's spec that does not parse: no column named
        return ()


def study_departure_lines(cert: CeilingCertificate) -> list[str]:
    """A line when a named study protocol was certified with settings other than its study's (tiling, τ): its
    figures then differ from the study's for that reason, not the views'. Empty otherwise (a file, a protocol
    no study stands behind, or the study's own settings)."""
    name = cert.config.protocol
    study = study_settings(name) if isinstance(name, str) and cert.config.protocol_sha256 is ABSENT else None
    if study is None:
        return []
    tiling, tau = cert.observation_model.tiling, cert.tolerances.tau
    said = []
    if tiling is not ABSENT and tuple(tiling) != study.tiling:
        said.append(f"tiling {'x'.join(map(str, tiling))} (the study's: {'x'.join(map(str, study.tiling))}; omit "
                    "--tiling for it)")
    if tau is not ABSENT and tau != study.tau:
        said.append(f"tau {tau:g} Å (the study's: {study.tau:g} Å; omit --symprec for it)")
    if not said:
        return []
    return [f"settings other than the protocol's: {name} carries the settings of {study.study}; this run used "
            f"{', '.join(said)}: R1 and the phantom census may differ from the study's figures for that reason"]


def margin_lines(cert: CeilingCertificate) -> list[str]:
    """The margin lines whenever margins were computed: δ* (the uniqueness margin, the phantom margin) and δ_exact
    (the exactness margin, ``oracle.margin.exactness_margin``), each its minimum with the tightest item and its 5th
    percentile (``stats.empirical_percentile``: the ⌈0.05·n⌉-th smallest, the one definition design uses too),
    over the items that have one, and how many have none (with the first reason)."""
    recs = [(it.id, it.uniqueness_margin) for it in cert.items
            if it.uniqueness_margin not in (ABSENT, None)]
    if not recs:
        return []
    have = sorted((float(m.delta_star), i) for i, m in recs if m.delta_star not in (ABSENT, None))
    none = [None if m.error is ABSENT else m.error for _, m in recs if m.delta_star in (ABSENT, None)]
    tail = f"; {len(none)} without one ({console_text(str(none[0])[:120], keep_newlines=False)})" if none else ""
    if not have:
        return [f"δ* (uniqueness margin): not computed for any item{tail}"]
    exact = sorted((exactness_margin(m.delta_star, None if m.delta_exact is ABSENT else m.delta_exact), i)
                   for i, m in recs if m.delta_star not in (ABSENT, None))

    def line(name: str, pairs) -> str:
        p5 = empirical_percentile([v for v, _ in pairs], 5)
        return (f"{name}: minimum {pairs[0][0]:.4g} ({console_text(pairs[0][1], keep_newlines=False)}, the tightest "
                f"item), 5th percentile {p5:.4g}, over {len(pairs)} items")

    return [line("δ* (uniqueness margin, Å)", have) + tail,
            line("δ_exact (exactness margin, Å: no false candidate at all; what design maximises by default)", exact)]


def _crystal_check_lines(s: Summary | dict, max_list: int) -> list[str]:
    """The crystal-only lines: label mismatches with the dataset, spglib/moyopy disagreements and raised
    symmetry."""
    s = s if isinstance(s, Summary) else Summary.from_dict(s)
    lines: list[str] = []
    lines.append(f"label mismatches (rendered cell vs dataset): {len(s.label_mismatches)}" + (
        ": " + ", ".join(f"{m['id']} ({', '.join(map(str, m['levels']))})" for m in s.label_mismatches[:max_list])
        if s.label_mismatches else ""))
    lines += disagreement_lines(s.cross_check_disagreements, scored=s.score,
                                input_truth=frozenset(r["id"] for r in s.symmetry_raised or ()))
    if s.symmetry_raised:  # flagged items: the truth is the input's label (evaluate.symmetry_raised)
        lines.append(f"standardisation raised the symmetry (scored against the input's label): "
                     f"{len(s.symmetry_raised)}: " + ", ".join(
                         f"{r['id']} {r['input']['space_group']} -> {r['rendered']['space_group']}"
                         for r in s.symmetry_raised[:max_list]))
    return lines


#: spglib/moyopy disagreements listed in the summary; disagreements.csv holds every one
MAX_DISAGREEMENTS_SHOWN = 10
CELLS = ("input", "rendered", "reconstructed")  # the cells a record's cross_check may name, in this order
DISAGREEMENT_COLUMNS = ("id", "cell", "level", "spglib", "moyopy")


def _cells_of(d: dict) -> list[tuple[str, str]]:
    """(cell, disagreement line) of one summary entry, in ``CELLS`` order (then any other key)."""
    keys = [k for k in CELLS if k in d] + sorted(k for k in d if k != "id" and k not in CELLS)
    return [(k, str(d[k])) for k in keys]


def touches(d: dict, level: str | None, input_truth: frozenset = frozenset()) -> bool:
    """Whether an item's spglib/moyopy disagreement could have changed its score: the scored ``level`` (or a
    failed engine) on a cell R1 compares, the rendered or reconstructed cell, or the input cell of an item
    scored against it (``input_truth``: the ids whose standardisation raised the symmetry)."""
    cells = ("rendered", "reconstructed", *(("input",) if d["id"] in input_truth else ()))
    return level is not None and any(lv[0] in (level, "all") for cell, text in _cells_of(d) if cell in cells
                                     for lv in disagreement_levels(text))


def disagreement_lines(disagreements: list[dict], *, limit: int = MAX_DISAGREEMENTS_SHOWN,
                       scored: str | None = None, input_truth: frozenset = frozenset()) -> list[str]:
    """The summary's spglib/moyopy lines: the count (with ``scored``, how many touch R1: ``touches``), then one
    line per item (id, then per cell each level with what spglib and moyopy said, and whether it touches R1),
    the first ``limit`` items and how many more disagreements.csv lists."""
    hit = sum(touches(d, scored, input_truth) for d in disagreements)
    lines = [f"spglib/moyopy disagreements: {len(disagreements)}"
             + (" items (every one in disagreements.csv)" if disagreements else "")
             + (f"; {hit} touch R1 ({scored} of a cell it compares), {len(disagreements) - hit} do not"
                if disagreements and scored else "")]
    for d in disagreements[:limit]:
        mark = "" if not scored else (" [touches R1]" if touches(d, scored, input_truth) else " [R1 unaffected]")
        lines.append(f"    {d['id']}: " + " | ".join(f"{cell} cell: {text}" for cell, text in _cells_of(d)) + mark)
    if len(disagreements) > limit:
        lines.append(f"    ... and {len(disagreements) - limit} more, see disagreements.csv")
    return lines


def disagreements_table(cert: CeilingCertificate) -> str:
    """``disagreements.csv``: one row per item, cell and level on which spglib and moyopy differ (``id, cell,
    level, spglib, moyopy``; a failed engine is level ``all``), every one; cells by the table rule."""
    rows = [[d["id"], cell, *lv] for d in cert.summary.cross_check_disagreements or []
            for cell, text in _cells_of(d) for lv in disagreement_levels(text)]
    return csv_text(DISAGREEMENT_COLUMNS, rows)


def error_line(e: dict) -> str:
    """One line for an item that could not be read or certified: item id, then what failed (file, field)."""
    msg = " ".join(str(e.get("error") or "unknown error").split())
    return console_text(f"item {e['id']}: {msg[:300]}", keep_newlines=False)


def write_outputs(out: str | Path, cert: CeilingCertificate, *, plots: bool = True, run: MapResult | None = None,
                  wall_seconds: float | None = None, workers: Any = None, ceilings: Sequence[str] = ()) -> dict[str, Path]:
    out = Path(out)
    paths = {"certificate": write_certificate(out / "certificate.json", cert.to_dict()),
             "table": write_text_atomic(out / "items.csv", items_table(cert)),
             "summary": write_text_atomic(out / "summary.txt", summary_text(cert, ceilings=ceilings)),  # escaped there
             "disagreements": write_text_atomic(out / "disagreements.csv", disagreements_table(cert))}
    if A.applies(cert):
        audit = A.audit(cert.items)
        paths["audit"] = write_text_atomic(out / A.CSV_NAME, A.audit_csv(audit))
        paths["audit_md"] = write_text_atomic(out / A.MARKDOWN_NAME, A.audit_markdown(audit))
    kinds = cert.summary.kinds  # no kinds, or no count of crystals: plotted as before kinds were written
    if plots and cert.summary.n and (1 if not kinds or kinds.crystals is ABSENT else kinds.crystals):
        paths["plot_systems"] = P.plot_ceiling_by_system(cert, out / "ceiling_by_system.png")
        paths["plot_phantoms"] = P.plot_phantoms(cert, out / "phantoms.png")
    if plots and any(it.uniqueness_margin and it.uniqueness_margin.delta_star not in (ABSENT, None)
                     for it in cert.items):
        paths["plot_delta_star"] = P.plot_delta_star(cert, out / "delta_star.png")
    if run is not None:
        meta = {"wall_seconds": round(wall_seconds or 0.0, 3), "executor": run.executor, "workers": workers,
                "n_items": run.n_items, "n_resumed": run.n_resumed, "n_computed": run.n_computed,
                "items_per_second": round(run.n_items / wall_seconds, 3) if wall_seconds else None}
        paths["run"] = write_json_atomic(out / "run.json", meta)
    return paths


def resume_lines(run: MapResult, workdir: Path | None) -> list[str]:
    """Console lines about a resumed run: one warning per shard present but not reused (it was recomputed),
    then "resumed N of M items" with the count of recomputed shards."""
    lines = [f"viewcert: warning: shard {(run.workdir or Path()) / name} {why}; not reused, recomputed"
             for name, why in sorted(run.shards_recomputed.items())]
    k = len(run.shards_recomputed)
    if run.n_resumed or k:
        lines.append(f"resumed {run.n_resumed} of {run.n_items} items from {workdir}"
                     + (f" ({k} shard{'s' if k != 1 else ''} recomputed: digest or content did not match)"
                        if k else ""))
    return lines


def certify(input_spec: str | Path | Dataset, cfg: CertifyConfig | None = None, *, out: str | Path | None = None,
            subset: str = "eval", n_workers: int | None = None, scheduler: Any = None, plots: bool = True,
            progress: bool | None = None, resume: bool = True,
            report: Callable[[str], None] | None = None, before: Callable[[Dataset], None] | None = None) -> CeilingCertificate:
    """Certify INPUT (see ``certify.inputs``) and, with ``out``, write every output. Returns the
    typed certificate. The limits in force are checked before any work (settings here, the one check of a run;
    atoms as each item is read); ``before`` is called with the dataset after that check and before any item is
    certified (the CLI's --fail-fast reads and placement checks); ``report`` receives console lines
    ("resumed N of M items"). The streamed certificate (an item table beside a small certificate.json) is
    ``certify_streamed``'s.

    Parameters
    ----------
    input_spec : str, Path or Dataset
        INPUT (see ``certify.inputs``) or a loaded dataset.
    cfg : CertifyConfig, optional
        The certification's settings; default ``CertifyConfig()``.
    out : str or Path, optional
        Output folder; None: nothing written.
    subset : str
        The study layout's subset (``eval`` or ``all``).
    n_workers : int, optional
        Worker processes (None: every core).
    scheduler : optional
        A Dask scheduler (address or client); None: local processes.
    plots : bool
        Write the PNG plots.
    progress : bool, optional
        Show a progress bar (None: when the console is a terminal).
    resume : bool
        Resume from the shards of an identical earlier run under ``out/.shards``.
    report : callable, optional
        Called with console lines.
    before : callable, optional
        Called with the dataset after the limits check, before any item is certified.

    Returns
    -------
    CeilingCertificate
        The certificate (typed; ``to_dict`` is its JSON object, as written to ``certificate.json``).
    """
    cfg = cfg or CertifyConfig()
    dataset = prepared(input_spec, cfg, subset=subset, before=before)
    return certify_dataset(dataset, cfg, out=out, n_workers=n_workers, scheduler=scheduler, plots=plots,
                           progress=progress, resume=resume, report=report)[0]


def certify_dataset(dataset: Dataset, cfg: CertifyConfig, *, out: str | Path | None = None,
                    n_workers: int | None = None, scheduler: Any = None, plots: bool = True,
                    progress: bool | None = None, resume: bool = True, report: Callable[[str], None] | None = None,
                    as_rendered: bool = False) -> tuple[CeilingCertificate, CeilingCertificate | None]:
    """``certify`` of a prepared dataset (``prepared``); with ``as_rendered`` also the as-rendered certificate of
    the same views, in the same pass (``run_with_as_rendered``), and summary.txt states both ceilings with the
    items that differ (``certify.ceilings``). Arguments as ``certify``'s.

    Returns
    -------
    tuple of (CeilingCertificate, CeilingCertificate or None)
        The certificate written, and the as-rendered one (in memory; None without ``as_rendered``).
    """
    workdir = Path(out) / ".shards" if (out is not None and resume) else None
    t0 = time.perf_counter()
    kw = dict(n_workers=n_workers, scheduler=scheduler, workdir=workdir, progress=progress)
    if as_rendered:
        cert, rendered, run = run_with_as_rendered(dataset, cfg, **kw)
    else:
        (cert, run), rendered = run_certification(dataset, cfg, **kw), None
    wall = time.perf_counter() - t0
    if report is not None:
        for line in resume_lines(run, workdir):
            report(line)
    if out is not None:
        write_outputs(out, cert, plots=plots, run=run, wall_seconds=wall,
                      workers=str(scheduler) if scheduler else n_workers, ceilings=ceiling_lines_of(cert, rendered, cfg))
    return cert, rendered


def ceiling_lines_of(cert: CeilingCertificate, rendered: CeilingCertificate | None, cfg: CertifyConfig) -> list[str]:
    """The summary's lines of both ceilings (``certify.ceilings.ceiling_lines``), or none (no as-rendered
    certificate, or no item certified)."""
    if rendered is None or not cert.summary.n:
        return []
    return C.ceiling_lines(C.both_ceilings(rendered, cert), image_size=cfg.observation.image_size)


def prepared(input_spec: str | Path | Dataset, cfg: CertifyConfig, *, subset: str = "eval",
             before: Callable[[Dataset], None] | None = None) -> Dataset:
    """The dataset a run certifies: ``cfg`` checked against the limits in force (before any work), INPUT loaded,
    items checked against those limits when read (observations: ``cfg``'s points per atom), then
    ``before(dataset)``."""
    cfg.check_limits()
    dataset = input_spec if isinstance(input_spec, Dataset) else load_input(input_spec, subset=subset)
    dataset = dataset.with_points_per_atom(cfg.points_per_atom())
    if before is not None:
        before(dataset)
    return dataset


def use_item_table(dataset: Dataset, item_table: bool | None) -> bool:
    """Whether a run writes the streamed certificate: as asked, or (None) above ``stream.THRESHOLD`` items."""
    return bool(item_table) if item_table is not None else len(dataset) > T.THRESHOLD


def certify_streamed(dataset: Dataset, cfg: CertifyConfig, out: str | Path, *, n_workers: int | None = None,
                     scheduler: Any = None, progress: bool | None = None, report: Callable[[str], None] | None = None,
                     shard_items: int = T.SHARD_ITEMS) -> dict:
    """``certify`` into an item table (``certify.stream``): shards resumed whole, the small certificate, summary.txt,
    the label audit of a database and run.json; returns the small certificate."""
    fp = fingerprint(dataset, cfg, task="certify-table")
    if scheduler is None and n_workers != 1 and len(dataset.items) > 1:
        with killed_by_signals():  # the kernels compiled once, here (run_certification's reason)
            certify_item(dataset.items[0], cfg)
    audit = A.StreamedAudit(out) if dataset.kind in A.FORMATS else None  # rows written as each shard finishes
    t0 = time.perf_counter()
    with _client(scheduler) as client:
        cert, srun = T.certify_table(dataset, cfg, out, fingerprint=fp, shard_items=shard_items, n_workers=n_workers,
                                     scheduler=client, progress=progress,
                                     on_shard=None if audit is None else audit.add)
    wall = time.perf_counter() - t0
    mark_warm()
    if report is not None and srun.n_resumed:
        report(f"resumed {srun.n_resumed} of {srun.n_resumed + srun.n_computed} items from {Path(out) / T.TABLE_DIR}")
    out = Path(out)
    T.write_table_certificate(out, cert)
    text = T.summary_text(cert, truth=truth_text(srun.truth, cfg.scoring.score, cfg.scoring.truth,
                                                 label_columns_of(dataset.spec)))
    if audit is not None:
        counts = audit.finish()
        text = text.replace("certificate digest", "\n".join(A.audit_lines(counts)) + "\ncertificate digest")
    write_text_atomic(out / "summary.txt", text)
    write_json_atomic(out / "run.json", {"wall_seconds": round(wall, 3), "executor": "item-table",
                                         "workers": str(scheduler) if scheduler else n_workers,
                                         "n_items": len(dataset), "n_resumed": srun.n_resumed,
                                         "n_computed": srun.n_computed})
    return cert


class _client:
    """One Dask client for every shard when ``scheduler`` is an address (closed at the end); else ``scheduler``."""

    def __init__(self, scheduler: Any):
        self.scheduler, self.own = scheduler, None

    def __enter__(self):
        if isinstance(self.scheduler, str):
            from distributed import Client  # lazy: Dask only with --scheduler

            self.own = Client(self.scheduler, set_as_default=False)
            return self.own
        return self.scheduler

    def __exit__(self, *exc) -> None:
        if self.own is not None:
            self.own.close()
