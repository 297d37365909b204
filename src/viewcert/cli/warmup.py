"""``viewcert warmup``: compile the cached numba kernels once, so later runs start warm (``viewcert.api.numba_cache``)."""

from __future__ import annotations

import typer

from viewcert.cli.options import guarded, progress, show


def warmup_cmd(
    main_job: bool = typer.Option(False, "--main-job", help="only the kernels `viewcert run` calls, by running it "
                                                          "into a temporary folder"),
    workload: str = typer.Option("", "--workload", hidden=True, help="run registered workloads in this "
                                                                     "process, in order (comma-separated: a lane "
                                                                     "of PRESTAGE)"),
) -> None:
    """Compile the numerical kernels once into numba's cache (what ``make test`` runs after installing): every
    one, or with ``--main-job`` those of the main job. A cold cache compiles the oracle's and the renderer's
    kernels side by side first (one process per core)."""
    from viewcert.api.numba_cache import run_workloads, warmup

    if workload:
        run_workloads(workload)
        return
    show(warmup(main_job=main_job, progress=progress))


def register(app: typer.Typer) -> None:
    """Add ``warmup`` to ``app``."""
    app.command("warmup")(guarded(warmup_cmd))
