"""Certification: the render ceiling R1 of a benchmark, its certificate, verification and design sweeps.

Layers below: ``symmetry`` (labels, standardisation), ``stats`` (Clopper–Pearson), ``observe``, ``render``
(ID-buffer visibility), ``oracle``. Modules: ``config`` (CertifyConfig), ``inputs`` (datasets),
``evaluate`` (one item), ``summary`` (R1 and bounds), ``digests``, ``certificate`` (build,
write; its records, digest and reader: ``viewcert.formats``), ``run`` (end to end), ``verify``, ``sweep``, ``plots``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.certify.certificate import build_certificate, write_certificate
    from viewcert.certify.config import DEFAULT_DELTA, CertifyConfig
    from viewcert.certify.evaluate import certify_item, conventional_cell, evaluate, prepare
    from viewcert.certify.inputs import Dataset, Item, load_input
    from viewcert.certify.run import certify, items_table, run_certification, summary_text
    from viewcert.certify.summary import summarize
    from viewcert.certify.sweep import SweepPlan, run_sweep
    from viewcert.certify.verify import VerifyReport, verify_certificate

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "build_certificate": "certificate", "write_certificate": "certificate",
    "CertifyConfig": "config", "DEFAULT_DELTA": "config", "certify_item": "evaluate",
    "conventional_cell": "evaluate", "evaluate": "evaluate", "prepare": "evaluate", "Dataset": "inputs",
    "Item": "inputs", "load_input": "inputs", "certify": "run", "items_table": "run", "run_certification": "run",
    "summary_text": "run", "summarize": "summary", "run_sweep": "sweep", "SweepPlan": "sweep",
    "verify_certificate": "verify", "VerifyReport": "verify",
}
lazy_face(__name__, _FACE)

__all__ = [
    "DEFAULT_DELTA", "CertifyConfig", "Dataset", "Item", "SweepPlan", "VerifyReport", "build_certificate", "certify",
    "certify_item", "conventional_cell", "evaluate", "items_table", "load_input", "prepare",
    "run_certification", "run_sweep", "summarize", "summary_text", "verify_certificate",
    "write_certificate",
]
