"""``viewcert certify | verify | sweep``: options parsed into a ``CertifyConfig``, the report of ``viewcert.api.certification`` printed.

Mounted by ``viewcert.cli`` through ``register(app)``.
"""

from __future__ import annotations

from pathlib import Path

import typer

from viewcert import defaults
from viewcert.cli.options import MOLECULE_SCALE_HELP, WORKERS_HELP, guarded, show

LIGAND_HELP = ("complex:PATH inputs: the ligand's residue name in a whole entry (e.g. PNM, or HEM/A/201); "
               "default: the folder's ligand.sdf")
POCKET_HELP = "complex:PATH inputs: keep whole residues within this many Å of the ligand (default 8)"
LEVEL_HELP = defaults.LEVEL_HELP


def _usage(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` of ``api.certification``; its bad value a usage error (``Invalid value: ...``)."""
    from viewcert.errors import InputError

    try:
        return fn(*args, **kwargs)
    except InputError as exc:
        raise typer.BadParameter(exc.message) from None


def _config(protocol, **options):
    from viewcert.api.certification import certify_config

    return _usage(certify_config, protocol, **options)


def complex_spec(spec: str, ligand: str | None, pocket: float | None) -> str:
    from viewcert.api.certification import complex_spec as fold

    return _usage(fold, spec, ligand, pocket)


def certify_cmd(
    input: str = typer.Argument(..., help="folder of structure files, the study layout (structures.json + "
                                          "eval.jsonl), a structure file, or builtin:prototypes"),
    protocol: str = typer.Option("render-ceiling-5", help="named view protocol or a .toml/.json protocol file "
                                                          "(orthographic or perspective: docs/protocols.md)"),
    views: str = typer.Option(None, "--only-views", help="comma-separated subset of the protocol's views"),
    delta: float = typer.Option(defaults.DELTA, help="oracle tolerance δ (Å)"),
    symprec: float = typer.Option(None, help="symmetry tolerance τ (Å) for spglib/moyopy; default = δ"),
    angle_tolerance: float = typer.Option(defaults.ANGLE_TOLERANCE, help="angle tolerance (degrees) for spglib/moyopy and the "
                                                    "standardisation; -1 = spglib's own rule"),
    tiling: str = typer.Option(defaults.TILING_TEXT, help="observation model: cell repetitions observed (the "
                                                          "cells build-benchmark draws by default)"),
    pairs: str = typer.Option("all", help="oracle candidate pairs: all | first (the study's released oracle)"),
    merge: str = typer.Option(None, help="oracle merge rule: deterministic | greedy (default: the oracle's)"),
    cartesian_merge: bool = typer.Option(False, "--cartesian-merge",
                                         help="merge in Cartesian space like the study's oracle (single cell)"),
    supercell: str = typer.Option("1,1,1", help="treat this repetition of the cell as the cell (the study's "
                                               "tiled arm: 2,2,2 with --cartesian-merge --pairs first)"),
    score: str = typer.Option("crystal_system", help=LEVEL_HELP),
    truth: str = typer.Option("dataset", help="reference label: dataset (where present) | rendered"),
    sigma: float = typer.Option(0.0, help="observation noise σ (0 = ideal centroids)"),
    sigma_unit: str = typer.Option("px", help="unit of σ: px | angstrom"),
    seed: int = typer.Option(0, help="noise seed"),
    occlusion: bool = typer.Option(False, help="drop atoms hidden behind nearer atoms (visibility)"),
    observe: str = typer.Option(defaults.GEOMETRIC, help="observations: ideal (every atom, exact projection) | visible "
                                              "(atoms visible in the rendered ID buffer) | pixel-centroid "
                                              "(centroid of their visible pixels)"),
    min_pixels: int = typer.Option(1, help="with --observe visible|pixel-centroid: visible pixels an atom needs"),
    subset: str = typer.Option("eval", help="study layout: eval (eval.jsonl items) | all (every structure)"),
    no_standardize: bool = typer.Option(False, "--no-standardize", help="render the cell as read"),
    no_cross_check: bool = typer.Option(False, "--no-cross-check", help="skip the moyopy cross-check"),
    cross_check_angle: bool = typer.Option(False, "--cross-check-angle",
                                           help="give moyopy spglib's angle tolerance too (default: moyopy's own; "
                                                "moyopy 0.21 can exhaust memory on long rhombohedral cells)"),
    margin: bool = typer.Option(False, "--margin",
                                help="uniqueness margin δ* per item (items.csv, certificate, delta_star.png); "
                                     "makes certify about 3x slower"),
    ligand: str = typer.Option(None, help=LIGAND_HELP),
    pocket: float = typer.Option(None, help=POCKET_HELP),
    molecule_scale: str = typer.Option("common", help=MOLECULE_SCALE_HELP),
    label_column: list[str] = typer.Option(None, "--label-column",
                                           help="database inputs: a column of published labels, COLUMN[:LEVEL] "
                                                "(repeatable); audited in label_audit.csv/.md"),
    item_table: bool = typer.Option(None, "--item-table/--json-certificate",
                                    help="write the items as a sharded Parquet item table beside a small "
                                         "certificate.json (flat memory; docs/formats.md); default: above "
                                         "50,000 items"),
    scheduler: str = typer.Option(None, help="Dask scheduler address (tcp://host:8786); default local processes"),
    workers: int = typer.Option(None, help=WORKERS_HELP),
    out: Path = typer.Option(Path("out"), "--out", "-o", help="output folder"),
    plots: bool = typer.Option(True, help="write plots"),
    resume: bool = typer.Option(True, help="checkpoint shards in OUT/.shards and resume from them"),
    keep_going: bool = typer.Option(True, "--keep-going/--fail-fast",
                                    help="keep going (default): an item that cannot be read or certified is "
                                         "reported apart (summary and stderr, one line naming item, file and "
                                         "field), left out of R1's denominator, and the run exits 1 after "
                                         "writing everything; --fail-fast reads every item first and stops at "
                                         "the first unreadable one (exit 2, nothing certified)"),
) -> None:
    """Certify the render ceiling of INPUT: certificate.json, items.csv, summary.txt and plots in OUT.

    Exit codes: 0 all items certified; 1 outputs written but some items unreadable/uncertifiable; 2 bad
    input or option, or a resource limit (``viewcert --help`` lists the --max-* options)."""
    from viewcert.api.certification import certify, label_spec, views_of
    from viewcert.cameras.protocol_files import is_protocol_file
    from viewcert.cameras.resolve import resolve
    from viewcert.certify.config import check_protocol_spec
    from viewcert.cli.options import current_limits, progress

    # a protocol file is read once, here (the config takes the resolved value); a bad one is one line, exit 2
    # (names are checked by the limits)
    given = resolve(protocol) if is_protocol_file(protocol) else protocol
    if is_protocol_file(protocol):
        check_protocol_spec(given.select(views_of(views)).spec)
    cfg = _config(given, views=views, symprec=symprec, angle_tolerance=angle_tolerance, tiling=tiling,
                  supercell=supercell, score=score, merge=merge, standardize=not no_standardize,
                  cross_check=not no_cross_check, cartesian_merge=cartesian_merge, delta=delta, pairs=pairs,
                  truth=truth, sigma=sigma, sigma_unit=sigma_unit, seed=seed, occlusion=occlusion, observe=observe,
                  min_pixels=min_pixels, cross_check_angle=cross_check_angle, margin=margin,
                  molecule_scale=molecule_scale)
    show(certify(_usage(label_spec, complex_spec(input, ligand, pocket), label_column), cfg, out, subset=subset,
                 workers=workers, scheduler=scheduler, plots=plots, resume=resume, item_table=item_table,
                 keep_going=keep_going, limits=current_limits(), progress=progress))


def verify_cmd(
    cert: Path = typer.Argument(..., help="certificate.json to recompute (or the certify output holding it)"),
    input: str = typer.Option(None, help="where the inputs are now (you vouch for this path)"),
    inputs: Path = typer.Option(None, "--inputs", help="the folder to trust (default: the current folder): every "
                                                      "path a certificate names (inputs, protocol file) must resolve "
                                                      "inside it, symlinks followed; one outside is refused before "
                                                      "anything is read"),
    ligand: str = typer.Option(None, help=LIGAND_HELP),
    pocket: float = typer.Option(None, help=POCKET_HELP),
    molecule_scale: str = typer.Option("common", help=MOLECULE_SCALE_HELP),
    scheduler: str = typer.Option(None, help="Dask scheduler address"),
    workers: int = typer.Option(None, help=WORKERS_HELP),
    allow_stale_certificate: bool = typer.Option(False, "--allow-stale-certificate",
                                                 help="recompute a certificate whose digest does not match its "
                                                      "content (refused by default: exit 2) and report it"),
) -> None:
    """Recompute CERT (any kind: crystal/molecule, transformation task, interaction) from its recorded inputs
    and settings; report every difference (exit 1 if any); a stale digest is one line, exit 2.
    The resource limits (``viewcert --max-*``) apply to what the certificate asks to recompute."""
    from viewcert.api.certification import verify
    from viewcert.cli.options import current_limits

    show(verify(cert, input_spec=input, inputs=inputs, workers=workers, scheduler=scheduler, limits=current_limits(),
                allow_stale=allow_stale_certificate))


def sweep_cmd(
    input: str = typer.Argument(..., help="same INPUT forms as certify"),
    protocol: str = typer.Option("render-ceiling-5", help="comma-separated protocol names"),
    subsets: bool = typer.Option(False, help="every subset (≥ 2 views) of each protocol"),
    deltas: str = typer.Option(None, help="comma-separated δ values (Å) for a δ sweep"),
    sigmas: str = typer.Option(None, help="comma-separated noise σ values for a noise sweep"),
    sigma_unit: str = typer.Option("angstrom", help="unit of σ: angstrom (the noise sweep's δ = max(δ, 4·√2·κ·σ) "
                                                    "needs Å; px is refused)"),
    seeds: int = typer.Option(3, help="noise seeds per σ"),
    delta: float = typer.Option(0.01, help="δ for the subset and noise studies (Å)"),
    symprec: float = typer.Option(None, help="τ (Å); default = δ of the base configuration"),
    tie_tau: bool = typer.Option(False, help="δ sweep with τ = δ (default: τ fixed)"),
    pairs: str = typer.Option("all", help="oracle candidate pairs: all | first"),
    merge: str = typer.Option(None, help="oracle merge rule: deterministic | greedy"),
    cartesian_merge: bool = typer.Option(False, "--cartesian-merge", help="merge in Cartesian space (study)"),
    supercell: str = typer.Option("1,1,1", help="treat this repetition of the cell as the cell"),
    tiling: str = typer.Option("1,1,1", help="observation model tiling"),
    score: str = typer.Option("crystal_system", help=LEVEL_HELP),
    subset: str = typer.Option("eval", help="study layout: eval | all"),
    ligand: str = typer.Option(None, help=LIGAND_HELP),
    pocket: float = typer.Option(None, help=POCKET_HELP),
    molecule_scale: str = typer.Option("common", help=MOLECULE_SCALE_HELP),
    scheduler: str = typer.Option(None, help="Dask scheduler address"),
    workers: int = typer.Option(None, help=WORKERS_HELP),
    out: Path = typer.Option(Path("out/sweep"), "--out", "-o", help="output folder"),
) -> None:
    """Design studies: view subsets, δ sweeps, noise sweeps, κ: CSV tables and plots in OUT."""
    from viewcert.api.certification import floats, sweep
    from viewcert.certify.sweep import SweepPlan
    from viewcert.cli.options import current_limits, progress

    protocols = [p.strip() for p in protocol.split(",") if p.strip()]
    if not protocols:
        raise typer.BadParameter("give at least one protocol name", param_hint="--protocol")
    cfg = _config(protocols[0], symprec=symprec, tiling=tiling, supercell=supercell, score=score, merge=merge,
                  cartesian_merge=cartesian_merge, delta=delta, pairs=pairs, sigma_unit=sigma_unit,
                  molecule_scale=molecule_scale)
    limits = current_limits()
    for name in protocols:
        cfg.with_(protocol=name).check_limits(limits)
    sig = _usage(floats, sigmas, "sigmas")
    if sig is not None and not all(s >= 0 and s == s and s != float("inf") for s in sig):
        raise typer.BadParameter(f"sigmas must be finite numbers ≥ 0, got {sigmas!r}", param_hint="--sigmas")
    dl = _usage(floats, deltas, "deltas")
    if dl is not None and not all(d > 0 and d != float("inf") for d in dl):
        raise typer.BadParameter(f"deltas must be finite numbers > 0 (Å), got {deltas!r}", param_hint="--deltas")
    if seeds < 1:
        raise typer.BadParameter(f"seeds must be ≥ 1, got {seeds}", param_hint="--seeds")
    plan = SweepPlan(protocols=tuple(protocols), subsets=subsets, deltas=tuple(dl or ()), sigmas=tuple(sig or ()),
                     sigma_unit=sigma_unit, seeds=seeds, tie_tau=tie_tau)
    show(sweep(complex_spec(input, ligand, pocket), cfg, plan, out, subset=subset, workers=workers,
               scheduler=scheduler, progress=progress))


def register(app: typer.Typer) -> None:
    """Add ``certify``, ``verify`` and ``sweep`` to ``app``."""
    from viewcert.cli.settings import rarely_changed

    app.command("certify")(guarded(rarely_changed(
        certify_cmd, "angle_tolerance", "pairs", "merge", "cartesian_merge", "supercell", "sigma", "sigma_unit",
        "seed", "occlusion", "min_pixels", "subset", "no_standardize", "no_cross_check", "cross_check_angle",
        "molecule_scale", "scheduler", "plots", "resume", "item_table")))
    app.command("verify")(guarded(verify_cmd))
    app.command("sweep")(guarded(rarely_changed(
        sweep_cmd, "sigma_unit", "pairs", "merge", "cartesian_merge", "supercell", "subset", "molecule_scale",
        "scheduler")))
