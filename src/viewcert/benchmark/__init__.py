"""Benchmark export: the one place that composes ``render`` and ``certify``.

- ``export``      ``build_benchmark``: images, sidecars, manifest, the certificate
- ``settings``    ``ExportSettings`` (what an export depends on)
- ``prompts``     the image question, R3 geometry-as-text prompts, the JSONL question files
- ``record``    ``Export``: what every exporter returns and ``read_export`` reads back; ``write_export``, the
  one manifest writer (one shape, ``viewcert.export/1``; older shapes read through its version table)
- ``harness_files``  the files every export shares: JSONL, VLMEvalKit TSV, id table, Inspect and lmms-eval
  tasks, the steps (one writer for the three exporters) and the file digests
- ``gallery``     the contact sheet of built-in crystals and molecules
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.benchmark.export import ExportSettings, build_benchmark
    from viewcert.benchmark.gallery import contact_sheet, write_gallery

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "build_benchmark": "export", "ExportSettings": "export", "contact_sheet": "gallery", "write_gallery": "gallery",
}
lazy_face(__name__, _FACE)

__all__ = ["ExportSettings", "build_benchmark", "contact_sheet", "write_gallery"]
