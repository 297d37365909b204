"""``viewcert warmup``: compile the cached numba kernels once, so later runs start warm.

Two selections (``SELECTIONS``): ``main-job`` runs the main job itself (``viewcert run``, the very command
function, into a temporary folder), so it compiles exactly the kernels, with exactly the type signatures, that
``viewcert run`` compiles (what ``make run`` needs; a test compares the kernels each loads); ``all`` (the
default) adds the workloads below, which reach every cached kernel (what ``make test`` needs).

Discovery is generic: every viewcert module whose source imports numba is imported (so a kernel module added
by a split is found without a list of names), then a few tiny in-process workloads call the kernels with the
argument types real runs use (numba compiles per type signature, lazily, at the first call):

- certify one small built-in prototype and one built-in molecule (default configuration; the study's
  first-pair Cartesian greedy merge; noisy observations; observations from the rendered ID buffer);
- render one prototype to RGB, serial and on numba's threads, orthographic and perspective, and its
  silhouette pixel counts (the anti-aliasing, shading and visibility kernels);
- one MiSI-style task item (``tasks``' matching kernels).

A dispatcher neither compiled in this process nor indexed in numba's cache afterwards is reported by name
(``WarmupReport.uncovered``): a kernel no run of the package calls (the tests' twins call a few), or a new
kernel that needs a workload here. The compiled code goes to numba's on-disk cache (``NUMBA_CACHE_DIR``,
else ``__pycache__`` beside the modules); ``viewcert.oracle.jit.mark_warm`` records the warm cache so the
CLI's first-run message is not shown again.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import typer


@dataclass(frozen=True)
class WarmupReport:
    """What a warm-up did: kernel modules imported, dispatchers found/compiled (names ``module.function``),
    the ones no workload reached, and the wall time (s)."""

    modules: tuple[str, ...]
    n_dispatchers: int
    compiled: tuple[str, ...]
    uncovered: tuple[str, ...]
    seconds: float


def numba_modules() -> tuple[str, ...]:
    """Dotted names of the viewcert modules whose source imports numba (``oracle.jit.kernel_module_files``)."""
    import viewcert
    from viewcert.oracle.jit import kernel_module_files

    root = Path(viewcert.__file__).resolve().parent.parent
    return tuple(sorted(".".join(Path(f).resolve().relative_to(root).with_suffix("").parts)
                        for f in kernel_module_files()))


def cached_dispatchers() -> dict[str, object]:
    """``{module.function: dispatcher}`` of every ``cache=True`` numba dispatcher imported so far (each once,
    under the module that defines it)."""
    from viewcert.oracle.jit import kernel_dispatchers

    out = {}
    for d in kernel_dispatchers():
        if getattr(d, "_cache", None) is None or type(d._cache).__name__ == "NullCache":
            continue
        out[f"{d.py_func.__module__}.{d.py_func.__name__}"] = d
    return out


def in_cache(dispatcher) -> bool:
    """True when the kernel is compiled in this process or has an index in numba's on-disk cache (a kernel
    called only from other kernels gets no signature of its own when its callers load from the cache)."""
    if dispatcher.signatures:
        return True
    try:
        return os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:  # numba internals changed: only this process's compilations count
        return False


def _certify_workloads() -> None:
    from viewcert.certify import CertifyConfig
    from viewcert.certify.evaluate import certify_item
    from viewcert.certify.inputs import load_input

    crystals = load_input("builtin:prototypes").items
    crystal = min(crystals, key=lambda it: (len(it.read().numbers), it.id))
    molecule = min(load_input("builtin:molecules").items, key=lambda it: (len(it.read().numbers), it.id))
    configs = (
        CertifyConfig(),
        CertifyConfig(pairs="first", periodic_merge=False, merge="greedy", delta=0.15),
        CertifyConfig(sigma=0.3, seed=1, delta=0.05),
        CertifyConfig(observe="pixel-centroid", image_size=128),
        CertifyConfig(occlusion=True),
    )
    for cfg in configs:
        for item in (crystal, molecule):
            certify_item(item, cfg)


def _certify_main_workload() -> None:
    """The main job's certification kernels: one small built-in crystal and molecule at the default settings."""
    from viewcert.certify import CertifyConfig
    from viewcert.certify.evaluate import certify_item
    from viewcert.certify.inputs import load_input

    for spec in ("builtin:prototypes", "builtin:molecules"):
        item = min(load_input(spec).items, key=lambda it: (len(it.read().numbers), it.id))
        certify_item(item, CertifyConfig())


def _oracle_half_workload(half: str):
    """The main job's certification (``_certify_main_workload``) with the oracle's batch kernel interpreted
    and one half of its stages compiled (``viewcert.oracle.jit.compiling_stages``)."""

    def work() -> None:
        from viewcert.oracle.jit import compiling_stages

        with compiling_stages(half):
            _certify_main_workload()

    return work


def _render_main_workload() -> None:
    """The renderer's kernels as the main job calls them: serial (its images are small), to RGB and PNG."""
    from viewcert.io.builtin import builtin_prototypes
    from viewcert.io.images import encode_render_png
    from viewcert.render import build_scene, frame_cameras, render

    s = min(builtin_prototypes(), key=lambda s: (len(s.numbers), s.identifier))
    cam = frame_cameras(s, "render-ceiling-5", width=96, height=96)[0]
    encode_render_png(render(build_scene(s, "study"), cam).rgb)


def _render_workload() -> None:
    from viewcert.io.builtin import builtin_prototypes
    from viewcert.io.images import encode_render_png
    from viewcert.render import build_scene, frame_cameras, render
    from viewcert.render.raster import silhouette_pixel_counts

    s = min(builtin_prototypes(), key=lambda s: (len(s.numbers), s.identifier))
    scene = build_scene(s, "study")
    for kind in ("orthographic", "perspective"):
        cam = frame_cameras(s, "render-ceiling-5", width=96, height=96, kind=kind)[0]
        for parallel in (False, True):
            encode_render_png(render(scene, cam, parallel=parallel).rgb)
        silhouette_pixel_counts(scene, cam)


def _task_workload() -> None:
    from viewcert.io.builtin import builtin_molecules
    from viewcert.tasks.ceiling import run_task
    from viewcert.tasks.model import ViewSetup

    m = min(builtin_molecules(), key=lambda s: (len(s.numbers), s.identifier))
    run_task([(m.identifier, m.positions, m.numbers)], "translation", ViewSetup(width=160, height=120),
             per_structure=1)


#: the application ``register`` added ``warmup`` to; its ``run`` command is the main job (looked up there, not
#: imported: ``viewcert.cli.main`` mounts this module, so importing it back would be a cycle)
_APP: list[typer.Typer] = []


def _main_job_command():
    """The callback the application registers as ``run`` (``viewcert run``)."""
    # importing this module imports the package viewcert.cli first, whose application registers warmup
    for command in (_APP[-1].registered_commands if _APP else ()):
        name = command.name or command.callback.__name__
        if name == "run":
            return command.callback
    raise RuntimeError("the viewcert application has no 'run' command")


def _main_job_workload() -> None:
    """``viewcert run`` itself (the command function ``make run`` calls), into a temporary folder, its output
    discarded: the main job's kernels and signatures by construction, not by a list that could drift."""
    import contextlib
    import io
    import tempfile

    run = _main_job_command()
    buf = io.StringIO()
    try:
        with tempfile.TemporaryDirectory(prefix="viewcert-warmup-") as tmp, contextlib.redirect_stdout(buf):
            run(out=Path(tmp) / "out", workers=1)
    finally:  # numba's own cache log (NUMBA_DEBUG_CACHE=1) passes through; the job's tables do not
        sys.stdout.write("".join(x for x in buf.getvalue().splitlines(keepends=True) if x.startswith("[cache]")))


WORKLOADS = (("main job", _main_job_workload), ("certify", _certify_workloads), ("render", _render_workload),
             ("tasks", _task_workload), ("certify main", _certify_main_workload),
             ("oracle seeding", _oracle_half_workload("seeding")), ("oracle rest", _oracle_half_workload("rest")),
             ("render main", _render_main_workload))
#: what each ``viewcert warmup --select`` value runs (workload labels of ``WORKLOADS``; the side-by-side
#: halves of the oracle are ``PRESTAGE``'s alone)
SELECTIONS = {"main-job": ("main job",), "all": ("main job", "certify", "render", "tasks", "certify main")}
#: what a cold cache compiles side by side first: lanes, one subprocess each (numba compiles on one core),
#: running their workloads in order. The oracle's kernel tree (about 105 s of CPU here) is compiled as two
#: halves of its stages, one per lane (``oracle seeding``, ``oracle rest``); the second lane then compiles
#: the batch kernel above them, loading both halves from the cache (the first half, the shorter, is done by
#: then), while the first compiles the renderer's kernels. A 2-core machine waits about 70 s instead of 110 s.
PRESTAGE = {"main-job": (("oracle seeding", "render main"), ("oracle rest", "certify main")),
            "all": (("oracle seeding", "render"), ("oracle rest", "certify"))}


def prestage(selection: str, report=None, jobs: int | None = None) -> float:
    """On a cold cache, run the :data:`PRESTAGE` groups of ``selection`` in parallel subprocesses (each compiles
    its kernels into numba's cache); returns the wall time (s), 0 when the cache is warm or one core is all
    there is. A group that fails is left to the in-process pass (which compiles what it needs)."""
    import subprocess

    from viewcert.oracle.jit import cache_is_cold

    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    lanes = PRESTAGE[selection]
    if jobs < 2 or not cache_is_cold():
        return 0.0
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", "from viewcert.cli import app; app()", "warmup", "--workload",
                               ",".join(lane)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for lane in lanes[:jobs]]
    for lane, p in zip(lanes, procs, strict=False):
        cpu0 = _children_cpu()
        p.wait()
        if report is not None:  # CPU (user + sys) of the lane just reaped: the figure load does not inflate
            report(f"  {' then '.join(lane)} (side by side): "
                   f"{'done' if p.returncode == 0 else 'failed, compiled in-process'}, "
                   f"{_children_cpu() - cpu0:.1f} s CPU")
    return time.perf_counter() - t0


def _children_cpu() -> float:
    """User + sys CPU seconds of this process's reaped children so far."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def warm_kernels(report=None, selection: str = "all") -> WarmupReport:
    """Import every kernel module, run the workloads of ``selection`` (``SELECTIONS``), mark the cache warm;
    ``report(line)`` gets progress. ``uncovered``: the cached kernels the selection did not reach."""
    from viewcert.oracle.jit import mark_warm

    if selection not in SELECTIONS:
        raise ValueError(f"warm-up selection {selection!r} is not one of {', '.join(SELECTIONS)}")
    t0 = time.perf_counter()
    modules = numba_modules()
    for name in modules:
        importlib.import_module(name)
    for label, work in WORKLOADS:
        if label not in SELECTIONS[selection]:
            continue
        t = time.perf_counter()
        work()
        if report is not None:
            report(f"  {label}: {time.perf_counter() - t:.1f} s")
    ds = cached_dispatchers()
    compiled = tuple(sorted(k for k, d in ds.items() if in_cache(d)))
    uncovered = tuple(sorted(k for k, d in ds.items() if not in_cache(d)))
    mark_warm()
    return WarmupReport(modules, len(ds), compiled, uncovered, time.perf_counter() - t0)


def warmup_cmd(
    main_job: bool = typer.Option(False, "--main-job", help="only the kernels `viewcert run` calls, by running it "
                                                          "into a temporary folder"),
    workload: str = typer.Option("", "--workload", hidden=True, help="run workloads of WORKLOADS in this "
                                                                     "process, in order (comma-separated: a lane "
                                                                     "of PRESTAGE)"),
) -> None:
    """Compile the numerical kernels once into numba's cache (what ``make test`` runs after installing): every
    one, or with ``--main-job`` those of the main job. A cold cache compiles the oracle's and the renderer's
    kernels side by side first (one process per core)."""
    if workload:
        for label in workload.split(","):
            dict(WORKLOADS)[label]()
        return
    selection = "main-job" if main_job else "all"
    say = lambda line: typer.echo(line, err=True)  # noqa: E731
    if not main_job:  # the main job's own command (``viewcert run``) prestages its kernels
        prestage(selection, say)
    say(f"viewcert: compiling the numerical kernels ({selection}) into numba's cache (minutes the first time; "
        "seconds when warm) ...")
    rep = warm_kernels(say, selection)
    typer.echo(f"warm ({selection}): {len(rep.compiled)}/{rep.n_dispatchers} cached kernels compiled in "
               f"{len(rep.modules)} modules ({rep.seconds:.1f} s)")
    if main_job:
        if rep.uncovered:
            typer.echo(f"left to their first use ({len(rep.uncovered)}; `viewcert warmup` compiles them all)")
    elif rep.uncovered:
        typer.echo(f"not reached by a workload (compiled at their first real call): {', '.join(rep.uncovered)}")


def register(app: typer.Typer) -> None:
    """Add ``warmup`` to ``app``."""
    from viewcert.cli.options import guarded

    _APP.append(app)
    app.command("warmup")(guarded(warmup_cmd))
