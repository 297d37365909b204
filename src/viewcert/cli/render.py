"""Renderer commands for the ``viewcert`` CLI: ``render``, ``build-benchmark``, ``gallery``.

Mounted by ``viewcert.cli`` through ``register(app)``; each parses its options and prints the report of
``viewcert.api.export``.
"""

from __future__ import annotations

import typer

from viewcert.cli.options import parse_tiling, progress, show
from viewcert.cli.vocabulary import mount


def render_cmd(o) -> None:
    """Render every structure of INPUT in every view: PNG + JSON sidecar (+ ID/depth buffers)."""
    from viewcert.api.export import render

    settings = {**vars(o), "tiling": parse_tiling(o.tiling)}
    show(render(settings.pop("input_spec"), settings.pop("out"), **settings))


def build_benchmark_cmd(o) -> None:
    """Export a benchmark: images, sidecars, JSONL, VLMEvalKit TSV, R3 prompts, certificate. With --task
    translation|rotation|zoom|trans-rot|rot-rot|handedness: a MiSI-style transformation benchmark
    (viewcert.benchmark.tasks_export; --protocol axes-3|axes-6|FILE.toml|FILE.json whose first view is 'front', the
    after camera; the default render-ceiling-5 becomes axes-3).
    With --task point-group|molecule-handedness: a molecular benchmark at one common scale
    (viewcert.benchmark.molecule_export; default axes-3, ball-and-stick).
    With --task pocket-ligand|residue-ligand|interaction-location|docking and INPUT complex:PATH[#ligand=RES,pocket=8]:
    a hydrogen-bond benchmark with labelled views (viewcert.benchmark.interaction_export; default axes-6)."""
    from viewcert.cameras.protocol_files import is_protocol_file
    from viewcert.cameras.resolve import resolve

    if is_protocol_file(o.protocol):  # a bad protocol file: one line, exit 2, before the exporters (numba) load
        resolve(o.protocol)
    from viewcert.api.export import build_benchmark

    settings = {**vars(o), "tiling": parse_tiling(o.tiling), "constraints": tuple(o.constraints.split(","))}
    show(build_benchmark(settings.pop("input_spec"), settings.pop("out"), progress=progress,
                         **settings))


def gallery_cmd(o) -> None:
    """Contact sheet of built-in crystals and molecules in every view of the study's protocol."""
    from viewcert.api.export import gallery

    show(gallery(o.out, tile_px=o.tile_px, molecule_scale=o.molecule_scale))


def register(app: typer.Typer) -> None:
    """Add ``render``, ``build-benchmark`` and ``gallery`` to ``app``."""
    mount(app, {"render": render_cmd, "build-benchmark": build_benchmark_cmd, "gallery": gallery_cmd})
