"""Benchmark export: the one place that composes ``render`` and ``certify``.

- ``export``   ``build_benchmark``: images, sidecars, JSONL, VLMEvalKit TSV, R3 prompts, the certificate
- ``gallery``  the contact sheet of built-in crystals and molecules
"""

from viewcert.benchmark.export import ExportSettings, build_benchmark
from viewcert.benchmark.gallery import contact_sheet, write_gallery

__all__ = ["ExportSettings", "build_benchmark", "contact_sheet", "write_gallery"]
