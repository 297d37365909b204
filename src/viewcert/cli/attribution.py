"""``viewcert ladder`` and ``viewcert audit-extraction``: each prints the report of :mod:`viewcert.api.attribution`.
Mount with ``register(app)``."""

from __future__ import annotations

import typer

from viewcert.cli.options import show, usage
from viewcert.cli.vocabulary import mount


def ladder(o) -> None:
    """Attribution ladder: accuracies per rung, perception share and residual per model, report. Give an
    export folder (its harness results found inside it), --manifest or --study-dir."""
    from viewcert.api.attribution import ladder as run

    if sum(x is not None for x in (o.export, o.manifest, o.study_dir)) != 1:
        raise typer.BadParameter("give exactly one of EXPORT, --manifest or --study-dir")
    if o.results and o.export is None:
        raise typer.BadParameter("--results needs the EXPORT the results answer")
    settings = {**vars(o), "results": tuple(o.results), "r1": tuple(o.r1), "subset_size": o.subset}
    del settings["subset"]
    show(run(settings.pop("export"), **settings))


def audit_extraction(o) -> None:
    """Fabrication audit: one-to-one periodic matching of emitted atoms to the rendered cell."""
    from viewcert.api.attribution import audit_extraction as audit
    from viewcert.api.certification import floats
    from viewcert.attribution.pipeline import study_paths

    emitted, structures, sidecar = o.emitted, o.structures, o.sidecar
    if o.study_dir is not None:
        p = study_paths(o.study_dir)
        emitted = emitted or p["emitted"]
        structures = structures or p["structures"]
        sidecar = sidecar or (p["sidecar"] if p["sidecar"].is_file() else None)
    if emitted is None or structures is None:
        raise typer.BadParameter("give --emitted and --structures, or --study-dir")
    show(audit(emitted, structures, out=o.out, sidecar=sidecar, tolerance=o.tolerance,
               sweep=tuple(usage(floats, o.sweep, "--sweep") or ()), metric=o.metric, coordinates=o.coordinates,
               null_draws=o.null_draws, seed=o.seed, n_boot=o.n_boot, force=o.force))


def register(app: typer.Typer) -> None:
    """Add ``ladder`` and ``audit-extraction`` to a typer app."""
    mount(app, {"ladder": ladder, "audit-extraction": audit_extraction})
