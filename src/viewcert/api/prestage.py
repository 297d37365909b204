"""A cold numba cache compiled side by side: lanes of warm-up workloads (``viewcert.kernels``, by label), one
subprocess each, before a job imports its kernel modules (``viewcert run``, ``viewcert warmup``)."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

#: what a cold cache compiles side by side first: lanes, one subprocess each (numba compiles on one core),
#: running their workloads in order. The oracle's kernel tree (about 105 s of CPU here) is compiled as two
#: halves of its stages, one per lane (``oracle seeding``, ``oracle rest``); the second lane then compiles
#: the batch kernel above them, loading both halves from the cache (the first half, the shorter, is done by
#: then), while the first compiles the renderer's kernels. A 2-core machine waits about 70 s instead of 110 s.
PRESTAGE = {"main-job": (("oracle seeding", "render main"), ("oracle rest", "certify main")),
            "all": (("oracle seeding", "render"), ("oracle rest", "certify"))}


def prestage(selection: str, report: Any = None, jobs: int | None = None) -> float:
    """On a cold cache, run the :data:`PRESTAGE` groups of ``selection`` in parallel subprocesses (each compiles
    its kernels into numba's cache); returns the wall time (s), 0 when the cache is warm or one core is all
    there is. A group that fails is left to the in-process pass (which compiles what it needs)."""
    import subprocess

    from viewcert.oracle.jit import cache_is_cold  # lazy: loaded when the job runs

    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    lanes = PRESTAGE[selection]
    if jobs < 2 or not cache_is_cold():
        return 0.0
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", "import sys; from viewcert.api.numba_cache import run_workloads; "
                               "run_workloads(sys.argv[1])", ",".join(lane)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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


