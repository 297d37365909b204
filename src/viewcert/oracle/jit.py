"""The numba on-disk cache of viewcert's kernels: is it warm, and where is it.

A first run with an empty cache compiles every kernel the certification touches (tens of seconds of CPU on
a small machine); later runs load them from the cache (``NUMBA_CACHE_DIR``, else ``__pycache__`` beside
the modules). ``cache_is_cold()`` lets the CLI say so once, before the compilation starts; the certify run
compiles in the parent before forking workers (``viewcert.certify.run``), so the work is not repeated in
every worker. A marker file in numba's cache folder, keyed by the numba and Python versions and the files
(path, mtime, size) of every kernel module of the package, is written after a completed run or
``viewcert warmup`` (``mark_warm``): numba writes index files only for the kernels a run calls, so their
presence cannot tell a first run from a later one.
"""

from __future__ import annotations

import os
import re
import sys

__all__ = ["cache_is_cold", "kernel_dispatchers", "kernel_module_files", "mark_warm"]

_NUMBA_IMPORT = re.compile(r"^(from numba\b|import numba\b)", re.MULTILINE)  # module level only


def kernel_dispatchers() -> list:
    """The numba dispatchers (``cache=True``) of the viewcert modules imported so far."""
    from numba.core.registry import CPUDispatcher

    out = []
    for name, mod in list(sys.modules.items()):
        if name.startswith("viewcert.") and mod is not None:
            out.extend(v for v in vars(mod).values() if isinstance(v, CPUDispatcher))
    return out


def kernel_module_files() -> list[str]:
    """Source files of the viewcert modules that import numba at module level (read, not imported): every
    module that can hold a cached kernel, whichever of them a run happens to import."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")))
        for f in filenames:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    if _NUMBA_IMPORT.search(fh.read()):
                        out.append(path)
    return sorted(out)


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
