"""The numba on-disk cache of viewcert's kernels: is it warm, and where is it.

A first run with an empty cache compiles every kernel the certification touches (tens of seconds of CPU on
a small machine); later runs load them from the cache (``NUMBA_CACHE_DIR``, else ``__pycache__`` beside
the modules). ``cache_is_cold()`` lets the CLI say so once, before the compilation starts; the certify run
compiles in the parent before forking workers (``viewcert.certify.run``), so the work is not repeated in
every worker. A marker file in numba's cache folder, keyed by the numba and Python versions and the files
(path, mtime, size) of every kernel module of the package, is written after a completed run or
``viewcert warmup`` (``mark_warm``): numba writes index files only for the kernels a run calls, so their
presence cannot tell a first run from a later one.

``interpreted`` runs a kernel's Python body with only some of the kernels below it compiled: numba compiles
a kernel together with every kernel it calls, on one core, so two processes that each run the oracle's batch
kernel this way, each compiling one half of its stages, fill the cache with the stages in half the time;
the batch kernel compiled afterwards loads them (``viewcert.api.prestage.prestage``).
"""

from __future__ import annotations

import os
import sys
import types
from contextlib import contextmanager

from viewcert.kernels import kernel_dispatchers, kernel_module_files

__all__ = ["SEEDING_STAGES", "cache_is_cold", "callees", "compiling_stages", "interpreted", "kernel_dispatchers",
           "kernel_module_files", "mark_warm"]

#: the stages of ``reconstruct_one`` that ``compiling_stages("seeding")`` compiles (about 35 s of CPU here,
#: the shape-mismatch message every process compiles once included); ``"rest"`` compiles the others (about
#: 50 s): with the renderer's kernels after the first half, two processes take about equal time
SEEDING_STAGES = frozenset({"seed_candidates", "_rays"})


def _global_names(code: types.CodeType) -> set[str]:
    """Global names a code object (and the code objects nested in it) refers to."""
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _global_names(c)
    return out


def callees(dispatcher) -> dict[str, object]:
    """``{name: dispatcher}`` of the numba kernels a kernel's body calls (its module-level names)."""
    from numba.core.registry import CPUDispatcher

    f = dispatcher.py_func
    return {n: f.__globals__[n] for n in sorted(_global_names(f.__code__))
            if isinstance(f.__globals__.get(n), CPUDispatcher) and f.__globals__[n] is not dispatcher}


def interpreted(dispatcher, compiled: frozenset[str], _memo: dict | None = None):
    """``dispatcher``'s Python function, run by the interpreter, in which a called kernel named in
    ``compiled`` is the numba kernel (compiled at its first call, for the types the interpreted caller passes
    it, which are the types the compiled caller would pass) and every other called kernel is interpreted
    the same way. Same results as the kernel (the kernels have no behaviour of their own under numba that
    the interpreter lacks: the test suite runs them with ``NUMBA_DISABLE_JIT``); slow on large inputs."""
    memo = {} if _memo is None else _memo
    if dispatcher in memo:
        return memo[dispatcher]
    f = dispatcher.py_func
    env = dict(f.__globals__)
    memo[dispatcher] = fn = types.FunctionType(f.__code__, env, f.__name__, f.__defaults__, f.__closure__)
    for name, callee in callees(dispatcher).items():
        env[name] = callee if name in compiled else interpreted(callee, compiled, memo)
    return fn


@contextmanager
def compiling_stages(half: str):
    """While active, the oracle's batch kernel (``reconstruct_many``, as ``viewcert.oracle.triangulate`` calls
    it) runs :func:`interpreted` with one half of ``reconstruct_one``'s stages compiled: ``"seeding"``
    (:data:`SEEDING_STAGES`) or ``"rest"`` (every other stage it calls). For a warm-up process only."""
    from viewcert.oracle import _kernels  # lazy: the kernels (and numba) only in a warm-up process

    stages = frozenset(callees(_kernels.reconstruct_one))
    if half not in ("seeding", "rest"):
        raise ValueError(f"half must be 'seeding' or 'rest', got {half!r}")
    kernel = _kernels.reconstruct_many
    _kernels.reconstruct_many = interpreted(kernel, SEEDING_STAGES if half == "seeding" else stages - SEEDING_STAGES)
    try:
        yield
    finally:
        _kernels.reconstruct_many = kernel


def _stamp_path() -> str | None:
    """A marker in numba's cache folder (``NUMBA_CACHE_DIR``, else the oracle's ``__pycache__``), keyed by
    numba/Python versions and every kernel module's file (so ``viewcert warmup``, which imports them all,
    and a certify run, which imports some, agree)."""
    import hashlib

    import numba
    from numba.core import config

    cache_dir = config.CACHE_DIR or os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")
    key = [numba.__version__, sys.version]
    for f in kernel_module_files():
        st = os.stat(f)
        key.append(f"{f}:{st.st_mtime_ns}:{st.st_size}")
    digest = hashlib.sha256("\n".join(key).encode()).hexdigest()[:16]
    return os.path.join(cache_dir, f"viewcert-warm-{digest}")


def cache_is_cold() -> bool:
    """True when no run has completed with these kernel sources and this cache yet (a first run compiles
    every kernel it touches). Unknown (numba internals changed) counts as warm."""
    path = _stamp_path()
    return path is not None and not os.path.exists(path)


def mark_warm() -> None:
    """Record that the kernels of the imported modules are compiled into the cache (after a run)."""
    path = _stamp_path()
    if path is not None and not os.path.exists(path):
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as fh:
                fh.write("compiled\n")
        except OSError:  # a read-only cache: say "first run" again next time, nothing worse
            pass
