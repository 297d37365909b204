"""``viewcert ladder`` and ``viewcert audit-extraction``: each prints the report of :mod:`viewcert.api.attribution`.
Mount with ``register(app)``."""

from __future__ import annotations

from pathlib import Path

import typer

from viewcert.cli.options import guarded, show


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
    from viewcert.api.attribution import ladder as run

    if sum(x is not None for x in (export, manifest, study_dir)) != 1:
        raise typer.BadParameter("give exactly one of EXPORT, --manifest or --study-dir")
    if results and export is None:
        raise typer.BadParameter("--results needs the EXPORT the results answer")
    show(run(export, out=out, results=tuple(results), manifest=manifest, study_dir=study_dir, certificate=certificate,
             r1=tuple(r1), threshold=threshold, tie_rule=tie_rule, scoring=scoring, seed=seed, n_boot=n_boot,
             alpha=alpha, share_cutoff=share_cutoff, allow_stale_certificate=allow_stale_certificate, ids=ids,
             subset_size=subset, explorer=explorer))


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
    from viewcert.api.attribution import audit_extraction as audit
    from viewcert.attribution.pipeline import study_paths

    if study_dir is not None:
        p = study_paths(study_dir)
        emitted = emitted or p["emitted"]
        structures = structures or p["structures"]
        sidecar = sidecar or (p["sidecar"] if p["sidecar"].is_file() else None)
    if emitted is None or structures is None:
        raise typer.BadParameter("give --emitted and --structures, or --study-dir")
    show(audit(emitted, structures, out=out, sidecar=sidecar, tolerance=tolerance, sweep=tuple(_floats(sweep, "--sweep")),
               metric=metric, coordinates=coordinates, null_draws=null_draws, seed=seed, n_boot=n_boot))


def register(app: typer.Typer) -> None:
    """Add ``ladder`` and ``audit-extraction`` to a typer app."""
    from viewcert.cli.settings import rarely_changed

    app.command("ladder")(guarded(rarely_changed(ladder, "tie_rule", "share_cutoff")))
    app.command("audit-extraction")(guarded(audit_extraction))
