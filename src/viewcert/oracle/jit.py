"""The numba on-disk cache of viewcert's kernels: is it warm, and where is it.

A first run with an empty cache compiles every kernel the certification touches (tens of seconds of CPU on
a small machine); later runs load them from the cache (``NUMBA_CACHE_DIR``, else ``__pycache__`` beside
the modules). ``cache_is_cold()`` lets the CLI say so once, before the compilation starts; the certify run
compiles in the parent before forking workers (``viewcert.certify.run``), so the work is not repeated in
every worker. A marker file beside numba's cache, keyed by the numba and Python versions and the kernel modules'
files (path, mtime, size), is written after a completed run (``mark_warm``): numba writes index files
only for the kernels a run calls, so their presence cannot tell a first run from a later one.
"""

from __future__ import annotations

import os
import sys

__all__ = ["cache_is_cold", "kernel_dispatchers", "mark_warm"]


def kernel_dispatchers() -> list:
    """The numba dispatchers (``cache=True``) of the viewcert modules imported so far."""
    from numba.core.registry import CPUDispatcher

    out = []
    for name, mod in list(sys.modules.items()):
        if name.startswith("viewcert.") and mod is not None:
            out.extend(v for v in vars(mod).values() if isinstance(v, CPUDispatcher))
    return out


def _stamp_path() -> str | None:
    """A marker beside numba's cache, keyed by numba/Python versions and the kernel modules' files."""
    import hashlib

    import numba

    ds = kernel_dispatchers()
    files = sorted({d.py_func.__code__.co_filename for d in ds})
    try:
        cache_dir = ds[0]._cache._cache_path  # numba's FunctionCache: NUMBA_CACHE_DIR or __pycache__
    except (IndexError, AttributeError):
        return None
    key = [numba.__version__, sys.version]
    for f in files:
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
