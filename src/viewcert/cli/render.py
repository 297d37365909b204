"""Renderer commands for the ``viewcert`` CLI: ``render``, ``build-benchmark``, ``gallery``.

Mounted by ``viewcert.cli`` through ``register(app)``; each parses its options and prints the report of
``viewcert.api.export``.
"""

from __future__ import annotations

from pathlib import Path

import typer

from viewcert import defaults
from viewcert.cli.options import MOLECULE_SCALE_HELP, WORKERS_HELP, echo, guarded, parse_tiling, show


def render_cmd(
    input_spec: str = typer.Argument(..., metavar="INPUT",
                                     help="structure file, folder of files, study layout or builtin:NAME"),
    out: Path = typer.Option(Path("out/render"), "--out", "-o", help="output folder"),
    protocol: str = typer.Option("render-ceiling-5", help="named view protocol or a .toml/.json protocol file"),
    style: str = typer.Option("study", help="study | ball-and-stick | spacefill"),
    tiling: str = typer.Option(defaults.TILING_TEXT, help="cell repetitions a,b,c for crystals (molecules: 1,1,1)"),
    size: int = typer.Option(768, help="image width = height, px"),
    kind: str = typer.Option(None, help="orthographic | perspective (default: the protocol's own; names are "
                                        "orthographic, a perspective protocol file places its pinholes)"),
    conventional: bool = typer.Option(True, help="draw the conventional standard cell (0.01 Å, 5°)"),
    supersample: int = typer.Option(3, help="anti-aliasing samples per axis on edge pixels"),
    buffers: bool = typer.Option(False, help="also write <view>.ids.npy and <view>.depth.npy"),
    subset: str = typer.Option("eval", help="study layout: eval | all"),
    limit: int = typer.Option(0, help="render only the first N items (0 = all)"),
    molecule_scale: str = typer.Option("common", help=MOLECULE_SCALE_HELP),
) -> None:
    """Render every structure of INPUT in every view: PNG + JSON sidecar (+ ID/depth buffers)."""
    from viewcert.api.export import render
    from viewcert.cli.options import current_limits

    check_molecule_scale(molecule_scale)
    show(render(input_spec, out, protocol=protocol, style=style, tiling=parse_tiling(tiling), size=size, kind=kind,
                conventional=conventional, supersample=supersample, buffers=buffers, subset=subset, limit=limit,
                molecule_scale=molecule_scale, limits=current_limits()))


def check_molecule_scale(value: str) -> None:
    if value not in ("common", "per-view"):
        raise typer.BadParameter(f"--molecule-scale must be common or per-view, got {value!r}")


def build_benchmark_cmd(
    input_spec: str = typer.Argument(..., metavar="INPUT",
                                     help="study layout (structures.json + eval.jsonl), folder, file or builtin:NAME"),
    protocol: str = typer.Option("render-ceiling-5", help="named view protocol or a .toml/.json protocol file"),
    task: str = typer.Option("crystal-system", help="question task (- or _): crystal-system (crystals) | "
                              "translation | rotation | zoom | trans-rot | rot-rot | handedness "
                              "(transformations) | point-group | molecule-handedness (molecules) | "
                              "pocket-ligand | residue-ligand | interaction-location | docking (complexes)"),
    out: Path = typer.Option(..., "--out", "-o", help="benchmark folder"),
    style: str = typer.Option("study", help="study | ball-and-stick | spacefill"),
    tiling: str = typer.Option(defaults.TILING_TEXT, help="cell repetitions a,b,c"),
    size: int = typer.Option(768, help="image width = height, px"),
    subset: str = typer.Option("eval", help="study layout: eval | all"),
    limit: int = typer.Option(0, help="first N questions in the (label-blind) SHA-256 order; 0 = all"),
    ids: Path | None = typer.Option(None, "--ids", help="crystal tasks: only the items of this id file (one id per line, "
                                                 "e.g. `viewcert ladder --subset-size N`'s subset_ids.txt)"),
    truth: str = typer.Option("dataset", help="answer: the dataset's label (dataset) or the rendered cell's"),
    certify: bool = typer.Option(True, help="certify the benchmark's ceiling (viewcert.certify)"),
    delta: float = typer.Option(defaults.DELTA, help="oracle tolerance δ for the certificate, Å (τ = δ)"),
    workers: int = typer.Option(None, help=WORKERS_HELP),
    buffers: bool = typer.Option(False, help="also write ID/depth buffers (.npy) per view"),
    camera: str = typer.Option(None, help="transformation tasks: orthographic | perspective (default: the "
                                          "protocol's own; names are orthographic)"),
    depth_cue: bool = typer.Option(False, "--depth-cue", help="transformation tasks: ChimeraX-like depth cueing"),
    seed: str = typer.Option("0", help="transformation tasks: seed of the answer sampling (integer ≥ 0)"),
    per_structure: int = typer.Option(1, help="transformation tasks: questions per molecule"),
    criterion: str = typer.Option("baker-hubbard", help="interaction tasks: the hydrogen-bond criterion, "
                                                        "baker-hubbard | plip | chimerax (docs/interactions.md)"),
    constraints: str = typer.Option("", help="response constraints appended to every prompt, comma-separated: "
                                             "format,letter,precision,unit,structure,count,case (those that fit "
                                             "the answer; the rest are recorded as skipped)"),
) -> None:
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

    if is_protocol_file(protocol):  # a bad protocol file: one line, exit 2, before the exporters (numba) load
        resolve(protocol)
    from viewcert.api.export import build_benchmark
    from viewcert.cli.options import current_limits, progress

    show(build_benchmark(input_spec, out, task=task, limits=current_limits(), progress=progress, protocol=protocol,
                         style=style, tiling=parse_tiling(tiling), size=size, subset=subset, limit=limit, ids=ids,
                         truth=truth, certify=certify, delta=delta, workers=workers, buffers=buffers, camera=camera,
                         depth_cue=depth_cue, seed=seed, per_structure=per_structure, criterion=criterion,
                         constraints=tuple(constraints.split(","))))



def gallery_cmd(
    out: Path = typer.Option(Path("out/gallery.png"), "--out", "-o", help="PNG to write"),
    tile_px: int = typer.Option(170, help="size of one view, px"),
    molecule_scale: str = typer.Option("common", help=MOLECULE_SCALE_HELP),
) -> None:
    """Contact sheet of built-in crystals and molecules in every view of the study's protocol."""
    from viewcert.benchmark.gallery import write_gallery
    from viewcert.cli.options import current_limits

    current_limits().check_pixels(tile_px, tile_px)
    check_molecule_scale(molecule_scale)
    path = write_gallery(out, tile_px=tile_px, molecule_scale=molecule_scale)
    echo(f"wrote {path} ({Path(path).stat().st_size // 1024} KB)")


def register(app: typer.Typer) -> None:
    """Add ``render``, ``build-benchmark`` and ``gallery`` to ``app``."""
    app.command("render")(guarded(render_cmd))
    from viewcert.cli.settings import rarely_changed

    app.command("build-benchmark")(guarded(rarely_changed(
        build_benchmark_cmd, "subset", "buffers", "depth_cue", "seed", "per_structure")))
    app.command("gallery")(guarded(gallery_cmd))
