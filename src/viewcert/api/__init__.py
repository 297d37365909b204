"""viewcert's jobs as Python functions, the path a notebook follows (docs/python-api.md); the ``viewcert``
command is a shell over them (each command parses its options, calls one of these and prints the ``Report`` it
returns).

- ``report``    ``Report``: the lines and tables of a job, its item failures and its result (``value``)
- ``certification`` ``certify`` a folder of structures (R1 and its certificate), ``verify`` one, ``sweep`` designs;
  ``certify_config``: a configuration from ``viewcert certify``'s options (the rest at the command's defaults)
- ``arguments`` every argument checked as the command line checks its option (types, bounds, unknown keywords)
- ``views``     ``design`` views (δ* in Å, compared with your protocol), ``margins``, ``occlusion``
- ``export``    ``render`` views; ``build_benchmark``: the export a harness reads (every arm, its ceiling); ``gallery``
- ``attribution`` ``read_results`` of the harnesses; the attribution ``ladder``; ``audit_extraction``
- ``site``      ``explore``: the static site of a certificate
- ``main``      ``observe`` a structure source; ``main_job``, what ``make run`` computes
- ``learned``   ``learn``: train a learned reader, its eval predictions a rung of the ladder
- ``vocabulary`` every command's options as data (name, type, default, help); ``settings`` the settings file
- ``numba_cache`` ``warmup``: compile the numerical kernels into numba's cache (the warm-up workloads)
- ``prestage``  a cold cache compiled side by side before a job loads its kernels

``CertifyConfig`` (the settings of a certification) and ``read_export`` (an export folder read back as one
``Export``) are re-exported from ``viewcert.certify`` and ``viewcert.formats.export``.

Modules are named apart from the functions they hold (an imported submodule would hide a function of its
name). Names are loaded at first use (PEP 562), so that ``import viewcert.api`` (and ``viewcert --help``) stays fast
and the main job can compile its kernels side by side before any kernel module is imported.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module of this package that defines it
_WHERE = {
    "Report": "api.report", "Line": "api.report", "Table": "api.report",
    "certify": "api.certification", "verify": "api.certification", "sweep": "api.certification",
    "certify_config": "api.certification",
    "design": "api.views", "margins": "api.views", "occlusion": "api.views",
    "render": "api.export", "build_benchmark": "api.export", "gallery": "api.export",
    "read_results": "api.attribution", "ladder": "api.attribution", "audit_extraction": "api.attribution",
    "explore": "api.site",
    "observe": "api.main", "main_job": "api.main", "learn": "api.learned",
    "warmup": "api.numba_cache",
    "CertifyConfig": "certify", "read_export": "formats.export",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'viewcert.api' has no attribute {name!r}")
    return getattr(importlib.import_module(f"viewcert.{_WHERE[name]}"), name)


def __dir__() -> list[str]:
    return __all__
