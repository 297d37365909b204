"""The numba kernels of the package: where they are, which are in numba's cache, and how each package warms them.

numba compiles a kernel per argument-type signature at its first call and keeps the result in its on-disk cache
(``NUMBA_CACHE_DIR``, else ``__pycache__`` beside the modules). This unit finds the kernels without a list of
names (every module whose source imports numba at module level, :func:`kernel_module_files`; the ``cache=True``
dispatchers of those imported, :func:`cached_dispatchers`) and holds the registry of warm-up workloads: each
package that owns kernels states, in its own module named ``workloads`` (``viewcert.certify.workloads``,
``viewcert.render.workloads``, ``viewcert.tasks.workloads``), small in-process runs that call its kernels with
the argument types real runs pass, and registers them here (:func:`register`). ``viewcert warmup``
(``viewcert.api.numba_cache``) imports those modules (:func:`workload_modules` finds them by name) and runs what
is registered: adding a kernel package means adding its ``workloads`` module, and no api or CLI code changes.

Standard library only (numba is imported inside the functions that read its dispatchers), so that this unit sits
at the bottom of the layers and every package can register.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["SELECTIONS", "Workload", "cached_dispatchers", "in_cache", "kernel_dispatchers", "kernel_module_files",
           "numba_modules", "register", "registered", "selection", "workload_modules"]

#: the warm-up selections (``viewcert warmup``: ``all``; ``viewcert warmup --main-job``: ``main-job``)
SELECTIONS = ("main-job", "all")
WORKLOADS_MODULE = "workloads"  # the module name a package registers its workloads in

_NUMBA_IMPORT = re.compile(r"^(from numba\b|import numba\b)", re.MULTILINE)  # module level only
_ROOT = os.path.dirname(os.path.abspath(__file__))  # the viewcert package


@dataclass(frozen=True)
class Workload:
    """One warm-up workload: its ``label``, the function that runs it (no arguments, result discarded), the
    :data:`SELECTIONS` it belongs to (none: only a side-by-side lane of ``viewcert.api.prestage`` runs it) and
    its ``order`` among the workloads (lower first)."""

    label: str
    run: Callable[[], None]
    selections: tuple[str, ...]
    order: int


_REGISTRY: dict[str, Workload] = {}  # the registry itself (label → workload), filled by register


def register(label: str, *, selections: tuple[str, ...] = ("all",), order: int = 50):
    """Decorator: register the decorated function as the warm-up workload ``label`` (module docstring).
    Registering a label again replaces it (a module imported twice registers the same workloads).

    Parameters
    ----------
    label : str
        The workload's name (``viewcert warmup`` prints it).
    selections : tuple of str, default ("all",)
        The :data:`SELECTIONS` that run it; empty: only a side-by-side lane of ``viewcert.api.prestage``.
    order : int, default 50
        Its place among the workloads, lower first (ties by label).

    Returns
    -------
    callable
        The decorator: it records the function (no arguments, result discarded) and returns it unchanged.

    Raises
    ------
    ValueError
        A selection is not one of :data:`SELECTIONS`.
    """
    unknown = set(selections) - set(SELECTIONS)
    if unknown:
        raise ValueError(f"warm-up selection {sorted(unknown)!r} is not one of {', '.join(SELECTIONS)}")

    def add(fn: Callable[[], None]) -> Callable[[], None]:
        _REGISTRY[label] = Workload(label, fn, tuple(selections), int(order))
        return fn

    return add


def registered() -> tuple[Workload, ...]:
    """Every workload registered so far, in their order (then by label).

    Returns
    -------
    tuple of Workload
        Sorted by (``order``, ``label``).
    """
    return tuple(sorted(_REGISTRY.values(), key=lambda w: (w.order, w.label)))


def selection(name: str) -> tuple[str, ...]:
    """Labels of the registered workloads of the selection ``name`` (one of :data:`SELECTIONS`), in order.

    Parameters
    ----------
    name : str
        ``"main-job"`` or ``"all"``.

    Returns
    -------
    tuple of str
        Workload labels, in (``order``, ``label``) order.

    Raises
    ------
    ValueError
        ``name`` is not one of :data:`SELECTIONS`.
    """
    if name not in SELECTIONS:
        raise ValueError(f"warm-up selection {name!r} is not one of {', '.join(SELECTIONS)}")
    return tuple(w.label for w in registered() if name in w.selections)


def workload_modules() -> tuple[str, ...]:
    """Dotted names of the packages' workload modules (``viewcert.<package>.workloads``; found on disk, not
    imported).

    Returns
    -------
    tuple of str
        Dotted module names, sorted.
    """
    return tuple(sorted(f"viewcert.{d}.{WORKLOADS_MODULE}" for d in os.listdir(_ROOT)
                        if os.path.isfile(os.path.join(_ROOT, d, f"{WORKLOADS_MODULE}.py"))))


def kernel_module_files() -> list[str]:
    """Source files of the viewcert modules that import numba at module level (read, not imported): every
    module that can hold a cached kernel, whichever of them a run happens to import.

    Returns
    -------
    list of str
        Absolute paths of the ``.py`` files, sorted.
    """
    out = []
    for dirpath, dirnames, filenames in os.walk(_ROOT):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")))
        for f in filenames:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    if _NUMBA_IMPORT.search(fh.read()):
                        out.append(path)
    return sorted(out)


def numba_modules() -> tuple[str, ...]:
    """Dotted names of the viewcert modules whose source imports numba (:func:`kernel_module_files`).

    Returns
    -------
    tuple of str
        Dotted module names (``viewcert.oracle._kernels``), sorted.
    """
    root = os.path.dirname(_ROOT)
    return tuple(sorted(os.path.relpath(os.path.realpath(f), os.path.realpath(root))[:-3].replace(os.sep, ".")
                        for f in kernel_module_files()))


def kernel_dispatchers() -> list:
    """The numba dispatchers of the viewcert modules imported so far.

    Returns
    -------
    list of numba.core.registry.CPUDispatcher
        One entry per module attribute: a dispatcher re-exported by another module appears once per module.
    """
    from numba.core.registry import CPUDispatcher

    out = []
    for name, mod in list(sys.modules.items()):
        if name.startswith("viewcert.") and mod is not None:
            out.extend(v for v in vars(mod).values() if isinstance(v, CPUDispatcher))
    return out


def cached_dispatchers() -> dict[str, object]:
    """``{module.function: dispatcher}`` of every ``cache=True`` numba dispatcher imported so far (each once,
    under the module that defines it).

    Returns
    -------
    dict of str to numba.core.registry.CPUDispatcher
        Keyed by the dotted name of the defining module and function.
    """
    out = {}
    for d in kernel_dispatchers():
        if getattr(d, "_cache", None) is None or type(d._cache).__name__ == "NullCache":
            continue
        out[f"{d.py_func.__module__}.{d.py_func.__name__}"] = d
    return out


def in_cache(dispatcher) -> bool:
    """True when the kernel is compiled in this process or has an index in numba's on-disk cache (a kernel
    called only from other kernels gets no signature of its own when its callers load from the cache).

    Parameters
    ----------
    dispatcher : numba.core.registry.CPUDispatcher
        A numba kernel (``@njit``), as :func:`cached_dispatchers` gives it.

    Returns
    -------
    bool
        Whether it is compiled here or indexed in the on-disk cache.
    """
    if dispatcher.signatures:
        return True
    try:
        return os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:  # numba internals changed: only this process's compilations count
        return False
