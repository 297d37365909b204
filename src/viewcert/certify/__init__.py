"""Certification: the render ceiling R1 of a benchmark, its certificate, verification and design sweeps.

Layers below: ``symmetry`` (labels, standardisation), ``stats`` (Clopper–Pearson), ``observe``, ``render``
(ID-buffer visibility), ``oracle``. Modules: ``config`` (CertifyConfig), ``inputs`` (datasets),
``evaluate`` (one item), ``summary`` (R1 and bounds), ``digests``, ``certificate`` (build, digest, read,
write), ``run`` (end to end), ``verify``, ``sweep``, ``plots``.
"""

from viewcert.certify.certificate import build_certificate, read_certificate, write_certificate
from viewcert.certify.config import DEFAULT_DELTA, CertifyConfig
from viewcert.certify.evaluate import certify_item, conventional_cell, evaluate, prepare
from viewcert.certify.inputs import Dataset, Item, load_input
from viewcert.certify.run import certify, items_table, run_certification, summary_text
from viewcert.certify.summary import summarize
from viewcert.certify.sweep import SweepPlan, run_sweep
from viewcert.certify.verify import VerifyReport, verify_certificate

__all__ = [
    "DEFAULT_DELTA", "CertifyConfig", "Dataset", "Item", "SweepPlan", "VerifyReport", "build_certificate", "certify",
    "certify_item", "conventional_cell", "evaluate", "items_table", "load_input", "prepare",
    "read_certificate", "run_certification", "run_sweep", "summarize", "summary_text", "verify_certificate",
    "write_certificate",
]
