"""The numba on-disk cache of viewcert's kernels: is it warm, and where is it.

A first run with an empty cache compiles every kernel the certification touches (tens of seconds of CPU on
a small machine); later runs load them from the cache (``NUMBA_CACHE_DIR``, else ``__pycache__`` beside
the modules). ``cache_is_cold()`` lets the CLI say so once, before the compilation starts; the certify run
compiles in the parent before forking workers (``viewcert.certify.run``), so the work is not repeated in
every worker. Reads numba's cache bookkeeping (``FunctionCache``'s index file), so it answers "unknown =
warm" (False) when numba's internals change.
"""

from __future__ import annotations

import os
import sys

__all__ = ["cache_is_cold", "kernel_dispatchers"]


def kernel_dispatchers() -> list:
    """The numba dispatchers (``cache=True``) of the viewcert modules imported so far."""
    from numba.core.registry import CPUDispatcher

    out = []
    for name, mod in list(sys.modules.items()):
        if name.startswith("viewcert.") and mod is not None:
            out.extend(v for v in vars(mod).values() if isinstance(v, CPUDispatcher))
    return out


def cache_is_cold() -> bool:
    """True when some imported kernel has no index file in numba's on-disk cache (it will compile)."""
    for d in kernel_dispatchers():
        try:
            path = d._cache._cache_file._index_path  # numba's FunctionCache → IndexDataCacheFile
        except AttributeError:
            continue
        if not os.path.exists(path):
            return True
    return False
