"""The warm-up (``viewcert warmup``): compile the cached numba kernels once, so later runs start warm.

Two selections (``SELECTIONS``): ``main-job`` runs the main job itself (``api.main.main_job``, the very
function ``viewcert run`` calls, into a temporary folder), so it compiles exactly the kernels, with exactly the
type signatures, that ``viewcert run`` compiles (what ``make run`` needs; a test compares the kernels each loads); ``all`` (the
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

from viewcert.api.prestage import PRESTAGE, prestage  # noqa: F401 - PRESTAGE: read here by the tests
from viewcert.api.report import Report, lines


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
    import viewcert  # lazy: loaded when the job runs
    from viewcert.oracle.jit import kernel_module_files

    root = Path(viewcert.__file__).resolve().parent.parent
    return tuple(sorted(".".join(Path(f).resolve().relative_to(root).with_suffix("").parts)
                        for f in kernel_module_files()))


def cached_dispatchers() -> dict[str, object]:
    """``{module.function: dispatcher}`` of every ``cache=True`` numba dispatcher imported so far (each once,
    under the module that defines it)."""
    from viewcert.oracle.jit import kernel_dispatchers  # lazy: loaded when the job runs

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
    from viewcert.certify import CertifyConfig  # lazy: loaded when the job runs
    from viewcert.certify.evaluate import certify_item
    from viewcert.certify.inputs import load_input  # lazy: loaded when the job runs

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
    from viewcert.certify import CertifyConfig  # lazy: loaded when the job runs
    from viewcert.certify.evaluate import certify_item
    from viewcert.certify.inputs import load_input  # lazy: loaded when the job runs

    for spec in ("builtin:prototypes", "builtin:molecules"):
        item = min(load_input(spec).items, key=lambda it: (len(it.read().numbers), it.id))
        certify_item(item, CertifyConfig())


def _oracle_half_workload(half: str):
    """The main job's certification (``_certify_main_workload``) with the oracle's batch kernel interpreted
    and one half of its stages compiled (``viewcert.oracle.jit.compiling_stages``)."""

    def work() -> None:
        from viewcert.oracle.jit import compiling_stages  # lazy: loaded when the job runs

        with compiling_stages(half):
            _certify_main_workload()

    return work


def _render_main_workload() -> None:
    """The renderer's kernels as the main job calls them: serial (its images are small), to RGB and PNG."""
    from viewcert.io.builtin import builtin_prototypes  # lazy: loaded when the job runs
    from viewcert.io.images import encode_render_png
    from viewcert.render import build_scene, frame_cameras, render  # lazy: loaded when the job runs

    s = min(builtin_prototypes(), key=lambda s: (len(s.numbers), s.identifier))
    cam = frame_cameras(s, "render-ceiling-5", width=96, height=96)[0]
    encode_render_png(render(build_scene(s, "study"), cam).rgb)


def _render_workload() -> None:
    from viewcert.io.builtin import builtin_prototypes  # lazy: loaded when the job runs
    from viewcert.io.images import encode_render_png
    from viewcert.render import build_scene, frame_cameras, render  # lazy: loaded when the job runs
    from viewcert.render.raster import silhouette_pixel_counts

    s = min(builtin_prototypes(), key=lambda s: (len(s.numbers), s.identifier))
    scene = build_scene(s, "study")
    for kind in ("orthographic", "perspective"):
        cam = frame_cameras(s, "render-ceiling-5", width=96, height=96, kind=kind)[0]
        for parallel in (False, True):
            encode_render_png(render(scene, cam, parallel=parallel).rgb)
        silhouette_pixel_counts(scene, cam)


def _task_workload() -> None:
    from viewcert.io.builtin import builtin_molecules  # lazy: loaded when the job runs
    from viewcert.tasks.ceiling import run_task
    from viewcert.tasks.model import ViewSetup  # lazy: loaded when the job runs

    m = min(builtin_molecules(), key=lambda s: (len(s.numbers), s.identifier))
    run_task([(m.identifier, m.positions, m.numbers)], "translation", ViewSetup(width=160, height=120),
             per_structure=1)


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


WORKLOADS = (("main job", _main_job_workload), ("certify", _certify_workloads), ("render", _render_workload),
             ("tasks", _task_workload), ("certify main", _certify_main_workload),
             ("oracle seeding", _oracle_half_workload("seeding")), ("oracle rest", _oracle_half_workload("rest")),
             ("render main", _render_main_workload))
#: what each ``viewcert warmup --select`` value runs (workload labels of ``WORKLOADS``; the side-by-side
#: halves of the oracle are ``PRESTAGE``'s alone)
SELECTIONS = {"main-job": ("main job",), "all": ("main job", "certify", "render", "tasks", "certify main")}
def warm_kernels(report=None, selection: str = "all") -> WarmupReport:
    """Import every kernel module, run the workloads of ``selection`` (``SELECTIONS``), mark the cache warm;
    ``report(line)`` gets progress. ``uncovered``: the cached kernels the selection did not reach."""
    from viewcert.oracle.jit import mark_warm  # lazy: loaded when the job runs

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


def run_workloads(labels: str) -> None:
    """Run the workloads of ``WORKLOADS`` named in ``labels`` (comma-separated: a lane of ``PRESTAGE``) in this
    process, in order."""
    for label in labels.split(","):
        dict(WORKLOADS)[label]()


def warmup(*, main_job: bool = False, progress=None) -> Report:
    """Compile the numerical kernels once into numba's cache (what ``make test`` runs after installing): every
    one, or with ``main_job`` those of the main job. A cold cache compiles the oracle's and the renderer's
    kernels side by side first (one process per core). ``progress(line)`` gets the steps."""
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
