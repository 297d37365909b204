"""Read harness results back and attribute (``viewcert ladder``, ``viewcert audit-extraction``): the ladder's
accuracies per rung, the perception share (R3 − R4)/(R1 − R4) per model with its bootstrap interval, the
report folder; and the fabrication audit of the atoms a model claims to see.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from viewcert.api.arguments import PATH, PATHS, TEXTS, validated
from viewcert.api.report import Line, Report, Table
from viewcert.attribution.discover import manifest_from_export
from viewcert.attribution.evidence import item_evidence
from viewcert.attribution.pipeline import ladder_diagnostics, run_extraction, run_ladder, study_diagnostics
from viewcert.attribution.readers import manifest_benchmark, read_manifest
from viewcert.attribution.report import explorer_index, write_report
from viewcert.attribution.shipped import task_parser
from viewcert.attribution.table import RUNGS
from viewcert.io.atomic import write_text_atomic
from viewcert.io.idlist import write_ids
from viewcert.io.outputs import claimed
from viewcert.io.tables import frame_csv_text
from viewcert.sanitize import console_text
from viewcert.stats import BootstrapSettings


@dataclass(frozen=True)
class LadderSettings:
    """Where the results are and how they are scored: harness result files or folders (default: found inside the
    export), a TOML manifest or the study folder instead of an export, a certificate or R1 values ("200/210@0.15":
    a number or fraction, optionally at δ in Å) giving the ceiling, the share of API errors / unanswered items
    above which an arm is unscored, the majority-vote tie rule (first | alphabetical | none), scoring (vote |
    harness), the bootstrap's seed, resamples, 1 − confidence level and share cutoff, whether a stale
    certificate is read, an id file, a subset size to propose, the explorer site the report links to and whether
    the hierarchical model is fitted."""

    results: tuple[Path, ...] = ()
    manifest: Path | None = None
    study_dir: Path | None = None
    certificate: Path | None = None
    r1: tuple[str, ...] = field(default=())
    threshold: float = 0.05
    tie_rule: str = "first"
    scoring: str = "vote"
    seed: int = 20260601
    n_boot: int = 10000
    alpha: float = 0.05
    share_cutoff: float = 0.05
    allow_stale_certificate: bool = False
    ids: Path | None = None
    subset_size: int | None = None
    explorer: Path | None = None
    hierarchy: bool = False


@validated("ladder", aliases={"subset_size": "subset"}, results=PATHS, r1=TEXTS)
def ladder(export: str | Path | None = None, *, out: str | Path | None = None, force: bool = False,
           **settings: Any) -> Report:
    """The attribution ladder of an export's harness results (or of ``manifest``/``study_dir``; ``settings``:
    ``LadderSettings`` fields): accuracies per rung, perception share and residual per model, and the report
    (report.html, shares.csv and the other CSVs) in ``out`` (default ``EXPORT/ladder``, else ``out/ladder``).
    The report's value: the ``attribution.ladder.Ladder``.

    Parameters
    ----------
    export : str or Path, optional
        A benchmark export whose harness results are found inside it (or in ``settings['results']``).
    out : str or Path, optional
        Report folder (default ``EXPORT/ladder``, else ``out/ladder``).
    force : bool
        Replace the output of another ladder run in ``out``; without it, refused.
    **settings
        ``LadderSettings`` fields: results, manifest, study_dir, certificate, r1, threshold, tie_rule, scoring,
        seed, n_boot, alpha, share_cutoff, allow_stale_certificate, ids, subset_size, explorer, hierarchy.

    Returns
    -------
    Report
        The ladder's tables; ``value``: the ``attribution.ladder.Ladder``.
    """

    st = LadderSettings(**settings)
    export = None if export is None else Path(export)
    named = out is not None or export is None  # EXPORT/ladder lies in a received folder: a symlink there refused
    out = Path(out) if out is not None else (export / "ladder" if export is not None else Path("out/ladder"))
    identity = {"export": None if export is None else str(export), "settings": vars(st)}
    with claimed(out, "ladder", identity=identity, force=force, named=named) as claim:
        return _ladder(export, claim.shown, st)


def _ladder(export: Path | None, out: Path, st: LadderSettings) -> Report:
    """``ladder`` into the claimed folder ``out``."""
    boot = BootstrapSettings(seed=st.seed, n_boot=st.n_boot, alpha=st.alpha, share_cutoff=st.share_cutoff)
    lad, table, m = run_ladder(manifest=st.manifest, study_dir=st.study_dir, export=export, results=st.results,
                               r1=st.r1, certificate=st.certificate, threshold=st.threshold, tie_rule=st.tie_rule,
                               scoring=st.scoring, bootstrap=boot,
                               allow_stale_certificate=st.allow_stale_certificate, ids=st.ids)
    warnings = [Line(f"viewcert: WARNING: {console_text(c.source, keep_newlines=False)}: the certificate was edited "
                     "after it was written; "
                     "its R1 is not certified", err=True, colour="yellow")
                for c in lad.ceilings if c.digest_ok is False]
    diag = (study_diagnostics(st.study_dir, lad, table, bootstrap=boot) if st.study_dir is not None
            else ladder_diagnostics(lad, table, m, bootstrap=boot))
    evidence = item_evidence(lad, table, giveaway=diag.giveaway, shortcut_tests=diag.shortcut_tests,
                             text_items=diag.text_items, bootstrap=boot, subset=st.subset_size,
                             hierarchy=st.hierarchy)
    site = st.explorer or (export / "explore" if export is not None else None)
    report = write_report(out, ladder=lad, table=table, diagnostics=diag, evidence=evidence,
                          title=f"viewcert ladder: {m.name or m.source}",
                          extra_provenance={"manifest": m.to_dict(), **_task_records(lad)},
                          explorer=explorer_index(site, out) if site is not None else None)
    if evidence.subset_ids is not None:
        write_ids(out / "subset_ids.txt", evidence.subset_ids)
    blocks = (*warnings, _counts(lad), Line(
        f"R4 and every rung scored at --threshold {st.threshold:g}: an arm with a larger share of unanswered items "
        "or API errors is unscored", console=True), *_shares(lad, st.alpha), *_task_tables(lad, out),
        *_item_lines(evidence, out), Line(f"report: {report.html}"))
    return Report(blocks, width=160, value=lad)


def _counts(lad: Any) -> Table:
    """Items right per model and rung (unscored arms marked)."""

    present = set(lad.arms["rung"])
    rungs = [r for r in RUNGS if r in present]
    rows = []
    for model, sub in lad.arms.groupby("model", sort=True):
        cells = []
        for r in rungs:
            a = sub[sub["rung"] == r]
            cells.append("—" if a.empty else (str(a.iloc[0]["correct"]) if a.iloc[0]["scored"]
                                              else f"unscored ({a.iloc[0]['correct']})"))
        rows.append((model, *cells))
    return Table(f"correct of {lad.settings.n_items} items (unscored arms marked)", ("model", *rungs),
                 tuple(rows), right=tuple(rungs))


def _shares(lad: Any, alpha: float) -> list[Any]:
    """Per ceiling: the perception share table and the median share line."""
    out: list[Any] = []
    by_ceiling = lad.summary.set_index("r1", drop=False)  # the across-model rows, one per ceiling label
    for c in lad.ceilings:
        rows = []
        d = lad.decomposition[lad.decomposition["r1"] == c.label]
        for _, r in d.iterrows():
            r4 = "—" if pd.isna(r["R4"]) else str(r["R4"])
            r3 = "—" if pd.isna(r["R3"]) else str(r["R3"])
            if r["status"] == "ok":
                s = f"{r['share']:.4f} [{r['share_lo']:.4f}, {r['share_hi']:.4f}]"
                rows.append((r["model"], r4, r3, s, "yes" if r["residual_limited"] else "no"))
            else:
                rows.append((r["model"], r4, r3,
                             r["suppression_reason"] if r["status"] == "suppressed" else r["status"], "—"))
        out.append(Table(f"perception share (R3 - R4)/(R1 - R4), {c.label}, {int((1 - alpha) * 100)}% bootstrap",
                         ("model", "R4", "R3", "share [CI]", "residual-limited"), tuple(rows)))
        srow = by_ceiling.loc[[c.label]].iloc[0]  # this ceiling's across-model row
        if "median_share" in srow and srow["models_with_share"]:
            out.append(Line(f"{c.label}: median share {srow['median_share']:.4f} ({srow['median_share_exact']}) "
                            f"[{srow['median_share_lo']:.4f}, {srow['median_share_hi']:.4f}] over "
                            f"{int(srow['models_with_share'])} models; {int(srow['residual_limited'])} of "
                            f"{int(srow['models_decomposed'])} residual-limited", console=True))
    return out


def _item_lines(ev: Any, out: Path) -> list[Line]:
    """The item statuses' counts, and the subset's ρ and τ with the file it was written to."""
    counts = ", ".join(f"{r['status']} {r['items']}" for _, r in ev.counts.iterrows())
    said = [Line(f"items by status: {counts} (item_status.csv)")]
    if ev.subset is not None:
        s = ev.subset
        said.append(Line(
            f"subset of {s['n']} items: Spearman rho {s['spearman_rho']:.4f}, Kendall tau {s['kendall_tau']:.4f} "
            f"against all {s['items']} ({'meets' if s['met'] else 'best found, below'} rho >= 0.95): "
            f"{out / 'subset_ids.txt'}"))
    return said


def _task_records(lad: Any) -> dict[str, Any]:
    """The MiSI / list task scores and the harness agreement as records, for the report's provenance."""
    return {k: getattr(lad, k).to_dict("records") for k in ("task_scores", "harness_agreement")
            if getattr(lad, k) is not None}


def _task_tables(lad: Any, out: Path) -> list[Table]:
    """MiSI partial credit beside the certified ceilings, and the harness's own accuracy beside viewcert's;
    each also written as CSV into ``out``."""

    said = []
    if lad.task_scores is not None and len(lad.task_scores):
        said.append(Table("MiSI partial credit (voted answers) beside the certified ceilings", (
            "model", "rung", "exact", "MiSI credit", "certified partial ceiling", "certified exact ceiling"), tuple(
            (r["model"], r["rung"], f"{r['exact_correct']}/{r['n']}", f"{r['misi_credit']:.4f}",
             f"{r['certified_partial_ceiling']:.4f}", f"{r['certified_exact_ceiling']:.4f}")
            for _, r in lad.task_scores.iterrows())))
        write_text_atomic(out / "task_scores.csv", frame_csv_text(lad.task_scores))
    if lad.harness_agreement is not None and len(lad.harness_agreement):
        rows = []
        for _, r in lad.harness_agreement.iterrows():
            ids = r["disagreeing_ids"].split()
            shown = " ".join(ids[:8]) + (" …" if len(ids) > 8 else "")
            rows.append((r["model"], r["rung"], f"{r['viewcert_correct']}/{r['n']}",
                         r["harness_correct"] if isinstance(r["harness_correct"], str)
                         else f"{r['harness_correct']}/{r['n']}", f"{r['disagreements']} {shown}".strip()))
        said.append(Table("the harness's own scores vs viewcert's parse (items right)",
                          ("model", "rung", "viewcert", "harness", "disagree on"), tuple(rows)))
        write_text_atomic(out / "harness_agreement.csv", frame_csv_text(lad.harness_agreement))
    return said


@validated("audit-extraction", sweep=(lambda v: isinstance(v, tuple | list) and all(
    isinstance(x, int | float) and not isinstance(x, bool) for x in v), "a list of numbers"))
def audit_extraction(emitted: Path, structures: Path, *, out: str | Path = "out/audit-extraction",
                     sidecar: Path | None = None, tolerance: float = 0.15,
                     sweep: tuple[float, ...] = (0.02, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3),
                     metric: str = "fractional", coordinates: str = "fractional", null_draws: int = 20,
                     seed: int = 20260601, n_boot: int = 10000, force: bool = False) -> Report:
    """Fabrication audit: one-to-one periodic matching of the emitted atoms to the rendered cell at the headline
    ``tolerance`` and each of ``sweep`` (fractional units or Å by ``metric``), against a random-position null of
    ``null_draws`` per item; the report in ``out``. The report's value: the audit.

    Parameters
    ----------
    emitted : Path
        The model outputs holding the emitted atom lists (JSON/JSONL, one record per item).
    structures : Path
        The study's ``structures.json``: the true cells the emitted atoms are matched against.
    out : str or Path
        Folder the report (HTML, CSVs, provenance) is written into.
    sidecar : Path, optional
        ``labels_sidecar.json``, cross-checking the cells' lattice lengths (Å).
    tolerance : float
        Headline matching tolerance: fractional units (``metric="fractional"``) or Å (``"cartesian"``).
    sweep : tuple of float
        Further tolerances reported (same units as ``tolerance``).
    metric : str
        ``"fractional"`` (distances in fractional coordinates of the cell) or ``"cartesian"`` (Å).
    coordinates : str
        The frame the emitted positions are given in: ``"fractional"`` or ``"cartesian"`` (Å).
    null_draws : int
        Random-position null draws per item.
    seed : int
        Seed of the null draws and the bootstrap.
    n_boot : int
        Bootstrap resamples of the confidence intervals.
    force : bool
        Replace the output of another audit in ``out``; without it, refused.

    Returns
    -------
    Report
        The report's lines; ``value``: the ``attribution.extraction.ExtractionAudit``.
    """
    identity = {"emitted": str(emitted), "structures": str(structures), "sidecar": None if sidecar is None else
                str(sidecar), "tolerance": tolerance, "sweep": list(sweep), "metric": metric,
                "coordinates": coordinates, "null_draws": null_draws, "seed": seed, "n_boot": n_boot}
    with claimed(out, "audit-extraction", identity=identity, force=force) as claim:
        audit, inputs = run_extraction(emitted=emitted, structures=structures, sidecar=sidecar,
                                       coordinates=coordinates, tolerances=list(sweep), headline_tolerance=tolerance,
                                       metric=metric, null_draws=null_draws,
                                       bootstrap=BootstrapSettings(seed=seed, n_boot=n_boot))
        report = write_report(claim.shown, extraction=audit, extraction_inputs=inputs,
                              title="viewcert extraction audit")
    h = audit.headline
    return Report((
        Line(f"items {h['items']} ({h['parseable']} parseable); tolerance {h['tolerance']} ({h['metric']})"),
        Line(f"species-aware median recall {h['species_aware_median_recall']:.4f} "
             f"[{h['species_aware_median_recall_ci'][0]:.4f}, {h['species_aware_median_recall_ci'][1]:.4f}]; "
             f"zero matches: {h['zero_match_items_species_aware']} items"),
        Line(f"species-blind median recall {h['species_blind_median_recall']:.4f} "
             f"[{h['species_blind_median_recall_ci'][0]:.4f}, {h['species_blind_median_recall_ci'][1]:.4f}]; "
             f"zero matches: {h['zero_match_items_species_blind']} items"),
        Line(f"random-position null: species-aware {h['null_median_recall_species_aware']:.4f}, "
             f"species-blind {h['null_median_recall_species_blind']:.4f}"),
        Line(f"report: {report.html}")), value=audit)


@validated(None, export=PATH, results=PATHS)
def read_results(export: str | Path, results: tuple[str | Path, ...] = ()) -> Any:
    """The harness results of an export (found inside it, or in the files and folders ``results`` names) as one
    canonical long table (``attribution.table.ResultTable``: one row per model, rung, item and repeat, the
    harness's ids mapped to the export's item ids and its answers parsed).

    Parameters
    ----------
    export : str or Path
        A benchmark export folder.
    results : tuple of str or Path
        Files and folders holding harness results; empty: found inside ``export``.

    Returns
    -------
    ResultTable
        One row per model, rung, item and repeat.
    """
    m = manifest_from_export(export, results)
    shipped = manifest_benchmark(m)
    table, _ = read_manifest(m, parser=task_parser(m.task, shipped), shipped=shipped)
    return table
