"""viewcert's jobs as Python functions, the path a notebook follows (docs/python-api.md); the ``viewcert``
command is a shell over them (each command parses its options, calls one of these and prints the ``Report`` it
returns).

- ``report``    ``Report``: the lines and tables of a job, its item failures and its result (``value``)
- ``main_job``  ``observe`` a structure source; ``main_job``, what ``make run`` computes
- ``warmup``    compile the numerical kernels into numba's cache (the warm-up workloads)

Names are loaded at first use (PEP 562), so that ``import viewcert.api`` (and ``viewcert --help``) stays fast
and the main job can compile its kernels side by side before any kernel module is imported.
"""

from __future__ import annotations

import importlib

#: public name -> the module of this package that defines it
_WHERE = {
    "Report": "report", "Line": "report", "Table": "report",
    "observe": "main_job", "main_job": "main_job",
    "warm_kernels": "warmup",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'viewcert.api' has no attribute {name!r}")
    return getattr(importlib.import_module(f"viewcert.api.{_WHERE[name]}"), name)


def __dir__() -> list[str]:
    return __all__
