"""``viewcert ladder`` and ``viewcert audit-extraction``: thin commands over
:mod:`viewcert.attribution.pipeline`. Mount with ``register(app)``."""

from __future__ import annotations

from pathlib import Path

import typer

from viewcert.cli.options import echo, guarded, one_line, safe_console
from viewcert.errors import InputError


def _fail(exc: Exception) -> None:
    typer.secho(f"viewcert: error: {one_line(exc)}", err=True, fg="red")
    raise typer.Exit(2)


def _floats(text: str, what: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise typer.BadParameter(f"{what} must be comma-separated numbers, got {text!r}") from None


def ladder(
    export: Path | None = typer.Argument(None, help="a benchmark export: its harness results found inside it "
                                                    "(or in --results), its certificate as R1"),
    results: list[Path] = typer.Option([], "--results", help="result files or folders of the export's harness "
                                                             "runs (repeatable; default: found inside EXPORT)"),
    manifest: Path | None = typer.Option(None, "--manifest", help="TOML manifest mapping files to model and rung"),
    study_dir: Path | None = typer.Option(
        None, "--study-dir", help="render-ceiling study folder (manifest built from its file names)"
    ),
    certificate: Path | None = typer.Option(None, "--certificate", help="certificate JSON giving R1"),
    r1: list[str] = typer.Option([], "--r1", help="R1 as a number or fraction, optionally @δ in Å (repeatable): 1, 0.9524, 200/210@0.15"),
    out: Path | None = typer.Option(None, "--out", "-o", help="output folder (default: EXPORT/ladder, else out/ladder)"),
    threshold: float = typer.Option(0.05, help="unscored above this share of API errors / unanswered items"),
    tie_rule: str = typer.Option("first", help="majority-vote tie rule: first | alphabetical | none"),
    scoring: str = typer.Option("vote", help="vote (parsed answers) or harness (the harness's own scores)"),
    seed: int = typer.Option(20260601, help="bootstrap seed"),
    n_boot: int = typer.Option(10000, help="bootstrap resamples"),
    alpha: float = typer.Option(0.05, help="1 - confidence level"),
    share_cutoff: float = typer.Option(0.05, help="suppress a share when the bootstrap lower bound of R1 - R4 is below"),
    allow_stale_certificate: bool = typer.Option(False, "--allow-stale-certificate",
                                                 help="read a certificate whose digest does not match its content "
                                                      "(refused by default: exit 2), with a loud warning"),
    ids: Path | None = typer.Option(None, "--ids", help="only the items of this id file (one id per line; an R1 "
                                                        "given as a number is kept as given)"),
    subset: int | None = typer.Option(None, "--subset-size", help="propose N items keeping the models' R4 ranking "
                                                             "(Spearman ρ, Kendall τ); written to OUT/subset_ids.txt"),
    explorer: Path | None = typer.Option(None, "--explorer", help="the explorer's site (viewcert explore --out): the "
                                         "report's counts and item ids link to its filtered index (default with "
                                         "EXPORT: EXPORT/explore)"),
) -> None:
    """Attribution ladder: accuracies per rung, perception share and residual per model, report. Give an
    export folder (its harness results found inside it), --manifest or --study-dir."""
    import pandas as pd
    from rich.table import Table

    from viewcert.attribution.evidence import item_evidence
    from viewcert.attribution.pipeline import ladder_diagnostics, run_ladder, study_diagnostics
    from viewcert.attribution.report import explorer_index, write_report
    from viewcert.attribution.table import RUNGS
    from viewcert.io.idlist import write_ids
    from viewcert.stats import BootstrapSettings

    if sum(x is not None for x in (export, manifest, study_dir)) != 1:
        raise typer.BadParameter("give exactly one of EXPORT, --manifest or --study-dir")
    if results and export is None:
        raise typer.BadParameter("--results needs the EXPORT the results answer")
    out = out if out is not None else (export / "ladder" if export is not None else Path("out/ladder"))
    try:
        boot = BootstrapSettings(seed=seed, n_boot=n_boot, alpha=alpha, share_cutoff=share_cutoff)
        lad, table, m = run_ladder(manifest=manifest, study_dir=study_dir, export=export, results=results, r1=r1,
                                   certificate=certificate,
                                   threshold=threshold, tie_rule=tie_rule, scoring=scoring, bootstrap=boot,
                                   allow_stale_certificate=allow_stale_certificate, ids=ids)
        for c in lad.ceilings:
            if "DIGEST MISMATCH" in c.source:
                typer.secho(f"viewcert: WARNING: {one_line(c.source)}: the certificate was edited after it was "
                            "written; its R1 is not certified", err=True, fg="yellow")
        diag = (study_diagnostics(study_dir, lad, table, bootstrap=boot) if study_dir is not None
                else ladder_diagnostics(lad, table, m, bootstrap=boot))
        evidence = item_evidence(lad, table, giveaway=diag.giveaway, shortcut_tests=diag.shortcut_tests,
                                 text_items=diag.text_items, bootstrap=boot, subset=subset)
        report = write_report(out, ladder=lad, table=table, diagnostics=diag, evidence=evidence,
                              title=f"viewcert ladder: {m.name or m.source}",
                              extra_provenance={"manifest": m.to_dict(), **_task_records(lad)},
                              explorer=explorer_index(site, out) if (site := explorer or (
                                  export / "explore" if export is not None else None)) is not None else None)
        if evidence.subset_ids is not None:
            write_ids(out / "subset_ids.txt", evidence.subset_ids)
    except InputError as exc:
        _fail(exc)
    console = safe_console(width=160)
    counts = Table(title=f"correct of {lad.settings['n_items']} items (unscored arms marked)")
    present = set(lad.arms["rung"])
    rungs = [r for r in RUNGS if r in present]
    counts.add_column("model")
    for r in rungs:
        counts.add_column(r, justify="right")
    for model, sub in lad.arms.groupby("model", sort=True):
        cells = []
        for r in rungs:
            a = sub[sub["rung"] == r]
            cells.append("—" if a.empty else (str(a.iloc[0]["correct"]) if a.iloc[0]["scored"]
                                              else f"unscored ({a.iloc[0]['correct']})"))
        counts.add_row(model, *cells)
    console.print(counts)
    console.print(f"R4 and every rung scored at --threshold {threshold:g}: an arm with a larger share of "
                  "unanswered items or API errors is unscored")
    for c in lad.ceilings:
        t = Table(title=f"perception share (R3 - R4)/(R1 - R4), {c.label}, {int((1 - alpha) * 100)}% bootstrap")
        for col in ("model", "R4", "R3", "share [CI]", "residual-limited"):
            t.add_column(col)
        d = lad.decomposition[lad.decomposition["r1"] == c.label]
        for _, r in d.iterrows():
            r4 = "—" if pd.isna(r["R4"]) else str(r["R4"])
            r3 = "—" if pd.isna(r["R3"]) else str(r["R3"])
            if r["status"] == "ok":
                s = f"{r['share']:.4f} [{r['share_lo']:.4f}, {r['share_hi']:.4f}]"
                t.add_row(r["model"], r4, r3, s, "yes" if r["residual_limited"] else "no")
            else:
                t.add_row(r["model"], r4, r3,
                          r["suppression_reason"] if r["status"] == "suppressed" else r["status"], "—")
        console.print(t)
        srow = lad.summary[lad.summary["r1"] == c.label].iloc[0]
        if "median_share" in srow and srow["models_with_share"]:
            console.print(f"{c.label}: median share {srow['median_share']:.4f} ({srow['median_share_exact']}) "
                          f"[{srow['median_share_lo']:.4f}, {srow['median_share_hi']:.4f}] over "
                          f"{int(srow['models_with_share'])} models; {int(srow['residual_limited'])} of "
                          f"{int(srow['models_decomposed'])} residual-limited")
    _task_tables(console, lad, out)
    _item_lines(evidence, out)
    echo(f"report: {report.html}")


def _item_lines(ev, out: Path) -> None:
    """The item statuses' counts, and the subset's ρ and τ with the file it was written to."""
    counts = ", ".join(f"{r['status']} {r['items']}" for _, r in ev.counts.iterrows())
    echo(f"items by status: {counts} (item_status.csv)")
    if ev.subset is not None:
        s = ev.subset
        echo(f"subset of {s['n']} items: Spearman rho {s['spearman_rho']:.4f}, Kendall tau {s['kendall_tau']:.4f} "
             f"against all {s['items']} ({'meets' if s['met'] else 'best found, below'} rho >= 0.95): "
             f"{out / 'subset_ids.txt'}")


def _task_records(lad) -> dict:
    """The MiSI / list task scores and the harness agreement as records, for the report's provenance."""
    return {k: getattr(lad, k).to_dict("records") for k in ("task_scores", "harness_agreement")
            if getattr(lad, k) is not None}


def _task_tables(console, lad, out: Path) -> None:
    """MiSI partial credit beside the certified ceilings, and the harness's own accuracy beside viewcert's;
    each also written as CSV into ``out``."""
    from rich.table import Table

    from viewcert.io.atomic import write_text_atomic
    from viewcert.io.tables import frame_csv_text

    if lad.task_scores is not None and len(lad.task_scores):
        t = Table(title="MiSI partial credit (voted answers) beside the certified ceilings")
        for col in ("model", "rung", "exact", "MiSI credit", "certified partial ceiling", "certified exact ceiling"):
            t.add_column(col)
        for _, r in lad.task_scores.iterrows():
            t.add_row(r["model"], r["rung"], f"{r['exact_correct']}/{r['n']}", f"{r['misi_credit']:.4f}",
                      f"{r['certified_partial_ceiling']:.4f}", f"{r['certified_exact_ceiling']:.4f}")
        console.print(t)
        write_text_atomic(out / "task_scores.csv", frame_csv_text(lad.task_scores))
    if lad.harness_agreement is not None and len(lad.harness_agreement):
        t = Table(title="the harness's own scores vs viewcert's parse (items right)")
        for col in ("model", "rung", "viewcert", "harness", "disagree on"):
            t.add_column(col)
        for _, r in lad.harness_agreement.iterrows():
            ids = r["disagreeing_ids"].split()
            shown = " ".join(ids[:8]) + (" …" if len(ids) > 8 else "")
            t.add_row(r["model"], r["rung"], f"{r['viewcert_correct']}/{r['n']}",
                      r["harness_correct"] if isinstance(r["harness_correct"], str) else f"{r['harness_correct']}/{r['n']}",
                      f"{r['disagreements']} {shown}".strip())
        console.print(t)
        write_text_atomic(out / "harness_agreement.csv", frame_csv_text(lad.harness_agreement))


def audit_extraction(
    emitted: Path | None = typer.Option(None, "--emitted", help="JSON with emitted atom lists"),
    structures: Path | None = typer.Option(None, "--structures", help="structures.json ({id: {cif}})"),
    sidecar: Path | None = typer.Option(None, "--sidecar", help="labels_sidecar.json for a lattice cross-check"),
    study_dir: Path | None = typer.Option(None, "--study-dir", help="render-ceiling study folder"),
    out: Path = typer.Option(Path("out/extraction"), "--out", "-o", help="output folder"),
    tolerance: float = typer.Option(0.15, help="headline tolerance"),
    sweep: str = typer.Option("0.02,0.05,0.075,0.1,0.15,0.2,0.25,0.3", help="tolerance sweep (comma-separated)"),
    metric: str = typer.Option("fractional", help="fractional (norm of minimum-image fractional difference) | cartesian (Å)"),
    coordinates: str = typer.Option("fractional", help="emitted coordinates: fractional | cartesian"),
    null_draws: int = typer.Option(20, help="random-position null draws per item"),
    seed: int = typer.Option(20260601, help="seed for the null and the bootstrap"),
    n_boot: int = typer.Option(10000, help="bootstrap resamples"),
) -> None:
    """Fabrication audit: one-to-one periodic matching of emitted atoms to the rendered cell."""
    from viewcert.attribution.pipeline import run_extraction, study_paths
    from viewcert.attribution.report import write_report
    from viewcert.stats import BootstrapSettings

    if study_dir is not None:
        p = study_paths(study_dir)
        emitted = emitted or p["emitted"]
        structures = structures or p["structures"]
        sidecar = sidecar or (p["sidecar"] if p["sidecar"].is_file() else None)
    if emitted is None or structures is None:
        raise typer.BadParameter("give --emitted and --structures, or --study-dir")
    try:
        audit, inputs = run_extraction(emitted=emitted, structures=structures, sidecar=sidecar,
                                       coordinates=coordinates, tolerances=_floats(sweep, "--sweep"),
                                       headline_tolerance=tolerance, metric=metric, null_draws=null_draws,
                                       bootstrap=BootstrapSettings(seed=seed, n_boot=n_boot))
        report = write_report(out, extraction=audit, extraction_inputs=inputs, title="viewcert extraction audit")
    except InputError as exc:
        _fail(exc)
    h = audit.headline
    echo(f"items {h['items']} ({h['parseable']} parseable); tolerance {h['tolerance']} ({h['metric']})")
    echo(f"species-aware median recall {h['species_aware_median_recall']:.4f} "
         f"[{h['species_aware_median_recall_ci'][0]:.4f}, {h['species_aware_median_recall_ci'][1]:.4f}]; "
         f"zero matches: {h['zero_match_items_species_aware']} items")
    echo(f"species-blind median recall {h['species_blind_median_recall']:.4f} "
         f"[{h['species_blind_median_recall_ci'][0]:.4f}, {h['species_blind_median_recall_ci'][1]:.4f}]; "
         f"zero matches: {h['zero_match_items_species_blind']} items")
    echo(f"random-position null: species-aware {h['null_median_recall_species_aware']:.4f}, "
         f"species-blind {h['null_median_recall_species_blind']:.4f}")
    echo(f"report: {report.html}")


def register(app: typer.Typer) -> None:
    """Add ``ladder`` and ``audit-extraction`` to a typer app."""
    from viewcert.cli.settings import rarely_changed

    app.command("ladder")(guarded(rarely_changed(ladder, "tie_rule", "share_cutoff")))
    app.command("audit-extraction")(guarded(audit_extraction))
