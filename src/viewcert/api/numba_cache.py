"""The warm-up (``viewcert warmup``): compile the cached numba kernels once, so later runs start warm.

Two selections (``viewcert.kernels.SELECTIONS``): ``main-job`` runs the main job itself (``api.main.main_job``,
the very function ``viewcert run`` calls, into a temporary folder), so it compiles exactly the kernels, with
exactly the type signatures, that ``viewcert run`` compiles (what ``make run`` needs; a test compares the kernels
each loads); ``all`` (the default) adds the workloads the kernel packages register (``viewcert.kernels``: certify,
render and tasks each state theirs in their own ``workloads`` module), which reach every cached kernel (what
``make test`` needs). This module iterates that registry and names no kernel package: adding a kernel touches
no api or CLI code.

Discovery is generic: every viewcert module whose source imports numba is imported (so a kernel module added
by a split is found without a list of names), then every package's ``workloads`` module, then the workloads of
the selection run in their order (numba compiles per type signature, lazily, at the first call).

A dispatcher neither compiled in this process nor indexed in numba's cache afterwards is reported by name
(``WarmupReport.uncovered``): a kernel no run of the package calls (the tests' twins call a few), or a new
kernel that needs a workload in its package. The compiled code goes to numba's on-disk cache
(``NUMBA_CACHE_DIR``, else ``__pycache__`` beside the modules); ``viewcert.oracle.jit.mark_warm`` records the
warm cache so the CLI's first-run message is not shown again.
"""

from __future__ import annotations

import importlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viewcert.api.arguments import OPTIONAL_CALLABLE, validated
from viewcert.api.prestage import PRESTAGE, prestage  # noqa: F401 - PRESTAGE: read here by the tests
from viewcert.api.report import Report, lines
from viewcert.kernels import (
    SELECTIONS,
    Workload,
    cached_dispatchers,
    in_cache,
    numba_modules,
    register,
    registered,
    workload_modules,
)
from viewcert.kernels import selection as selected


@dataclass(frozen=True)
class WarmupReport:
    """What a warm-up did: kernel modules imported, dispatchers found/compiled (names ``module.function``),
    the ones no workload reached, and the wall time (s)."""

    modules: tuple[str, ...]
    n_dispatchers: int
    compiled: tuple[str, ...]
    uncovered: tuple[str, ...]
    seconds: float


def _main_job_workload() -> None:
    """The main job itself (``api.main.main_job``, what ``viewcert run`` and ``make run`` call), into a
    temporary folder, its report discarded: the main job's kernels and signatures by construction, not by a list
    that could drift."""
    import contextlib
    import io
    import tempfile

    from viewcert.api.main import main_job  # lazy: the main job prestages before its kernel modules load

    buf = io.StringIO()
    try:
        with tempfile.TemporaryDirectory(prefix="viewcert-warmup-") as tmp, contextlib.redirect_stdout(buf):
            main_job(Path(tmp) / "out", workers=1)
    finally:  # numba's own cache log (NUMBA_DEBUG_CACHE=1) passes through; the job's tables do not
        sys.stdout.write("".join(x for x in buf.getvalue().splitlines(keepends=True) if x.startswith("[cache]")))


register("main job", selections=("main-job", "all"), order=0)(_main_job_workload)


def workloads() -> tuple[Workload, ...]:
    """Every registered warm-up workload (``viewcert.kernels.registered``), after importing each kernel
    package's ``workloads`` module (found by name: ``viewcert.kernels.workload_modules``)."""
    for name in workload_modules():
        importlib.import_module(name)
    return registered()


def warm_kernels(report: Any = None, selection: str = "all") -> WarmupReport:
    """Import every kernel module, run the registered workloads of ``selection`` (one of
    ``viewcert.kernels.SELECTIONS``), mark the cache warm; ``report(line)`` gets progress. ``uncovered``: the
    cached kernels the selection did not reach."""
    from viewcert.oracle.jit import mark_warm  # lazy: loaded when the job runs

    if selection not in SELECTIONS:
        raise ValueError(f"warm-up selection {selection!r} is not one of {', '.join(SELECTIONS)}")
    t0 = time.perf_counter()
    modules = numba_modules()
    for name in modules:
        importlib.import_module(name)
    run = {w.label: w.run for w in workloads()}
    for label in selected(selection):
        t = time.perf_counter()
        run[label]()
        if report is not None:
            report(f"  {label}: {time.perf_counter() - t:.1f} s")
    ds = cached_dispatchers()
    compiled = tuple(sorted(k for k, d in ds.items() if in_cache(d)))
    uncovered = tuple(sorted(k for k, d in ds.items() if not in_cache(d)))
    mark_warm()
    return WarmupReport(modules, len(ds), compiled, uncovered, time.perf_counter() - t0)


def run_workloads(labels: str) -> None:
    """Run the registered workloads named in ``labels`` (comma-separated: a lane of ``PRESTAGE``) in this
    process, in order."""
    run = {w.label: w.run for w in workloads()}
    for label in labels.split(","):
        run[label]()


@validated(None, main_job=bool, progress=OPTIONAL_CALLABLE)
def warmup(*, main_job: bool = False, progress: Any = None) -> Report:
    """Compile the numerical kernels once into numba's cache (what ``make test`` runs after installing): every
    one, or with ``main_job`` those of the main job. A cold cache compiles the oracle's and the renderer's
    kernels side by side first (one process per core). ``progress(line)`` gets the steps.

    Parameters
    ----------
    main_job : bool
        Only the kernels of the main job (``make run``).
    progress : callable, optional
        Called with each step (text).

    Returns
    -------
    Report
        How many cached kernels were compiled in how many modules (wall seconds); ``value``: the warm-up's record.
    """
    selection = "main-job" if main_job else "all"
    say = progress or (lambda line: None)
    if not main_job:  # the main job itself prestages its kernels
        prestage(selection, say)
    say(f"viewcert: compiling the numerical kernels ({selection}) into numba's cache (minutes the first time; "
        "seconds when warm) ...")
    rep = warm_kernels(say, selection)
    out = [f"warm ({selection}): {len(rep.compiled)}/{rep.n_dispatchers} cached kernels compiled in "
           f"{len(rep.modules)} modules ({rep.seconds:.1f} s)"]
    if main_job:
        if rep.uncovered:
            out.append(f"left to their first use ({len(rep.uncovered)}; `viewcert warmup` compiles them all)")
    elif rep.uncovered:
        out.append(f"not reached by a workload (compiled at their first real call): {', '.join(rep.uncovered)}")
    return Report(lines(*out), value=rep)
