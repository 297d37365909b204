"""Renderer commands for the ``viewcert`` CLI: ``render``, ``build-benchmark``, ``gallery``.

Mounted by ``viewcert.cli`` through ``register(app)``; thin wrappers, the work is in ``viewcert.render``.
"""

from __future__ import annotations

import re
from pathlib import Path

import typer

from viewcert import defaults
from viewcert.cli.options import MOLECULE_SCALE_HELP, WORKERS_HELP, echo, guarded, item_failures, parse_tiling
from viewcert.errors import InputError, ViewcertError, did_you_mean


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "structure"


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
    from viewcert.cameras.placement import check_kind
    from viewcert.cameras.resolve import resolve
    from viewcert.certify.inputs import load_input
    from viewcert.cli.options import check_out, current_limits, one_line
    from viewcert.render.palette import get_style

    limits = current_limits()
    t = parse_tiling(tiling)
    limits.check_tiling(t)
    limits.check_pixels(size, size)
    limits.check_pixels(size * supersample, size * supersample)
    limits.check_protocol_name(protocol)
    check_molecule_scale(molecule_scale)
    get_style(style)  # an unknown style is bad input (exit 2), not an item error
    spec = resolve(protocol)  # resolved once for the run (perspective: its pinholes)
    limits.check_views(len(spec.protocol.views))
    check_kind(spec.spec, kind)  # bad input for the whole run (exit 2), not an item error
    if spec.kind == "perspective":  # its own image size
        limits.check_pixels(spec.width * supersample, spec.height * supersample, source=spec.spec.source)
    check_out(out)
    dataset = load_input(input_spec, subset=subset).with_limits(limits)
    items = dataset.items[:limit] if limit else dataset.items
    n_img, failed = 0, []
    for it in items:
        try:
            s, cams, policy = _item_cameras(it, spec, conventional=conventional, tiling=t, style=style,
                                                size=size, kind=kind, molecule_scale=molecule_scale, limits=limits)
        except (ViewcertError, ValueError, OSError) as exc:  # unreadable, too large, a pinhole inside it
            failed.append(f"item {it.id}: {one_line(exc)}")
            continue
        n_img += _write_views(out, _safe(it.id), s, spec, cams, policy, style=style, supersample=supersample,
                              buffers=buffers)
    echo(f"wrote {n_img} images of {len(items) - len(failed)} structures to {out}")
    item_failures(failed)


def _item_cameras(it, spec, *, conventional: bool, tiling, style: str, size: int, kind, molecule_scale: str,
                  limits):
    """(structure drawn, its cameras, their framing policy: tiling, pad, margin) of one item; ViewcertError
    when it cannot be drawn."""
    from viewcert.benchmark.gallery import rendered_cell
    from viewcert.cameras.policy import frame
    from viewcert.render.raster import drawn_policy

    s = it.read()
    if conventional:
        s = rendered_cell(s)
    tt = tiling if s.is_periodic else (1, 1, 1)
    limits.check_observations(s.n_atoms * tt[0] * tt[1] * tt[2] * len(spec.protocol.views), source=it.id)
    policy = drawn_policy(style, tiling=tt, width=size, height=size, kind=kind, molecule_scale=molecule_scale)
    return s, frame(spec, s, policy), policy


def _write_views(out: Path, stem: str, s, spec, cams, policy, *, style: str, supersample: int,
                 buffers: bool) -> int:
    """Render and write every view of one structure (PNG, sidecar, buffers); the number of images."""
    from viewcert.benchmark.export import view_sidecar
    from viewcert.cameras.framing import framing_record
    from viewcert.io.images import write_buffers, write_png, write_sidecar
    from viewcert.render.raster import build_scene, render

    tt = policy.tiling
    scene = build_scene(s, style, tiling=tt)
    framing = framing_record(policy, s, perspective=spec.kind == "perspective")  # the exporters' record
    for view, cam in zip(spec.protocol.views, cams, strict=True):
        res = render(scene, cam, supersample=supersample)
        name = f"{stem}_{view.name}"
        write_png(out / f"{name}.png", res.rgb)
        write_sidecar(out / f"{name}.json",
                      view_sidecar(res, view_name=view.name, image=f"{name}.png", structure=s, framing=framing))
        if buffers:
            write_buffers(out / name, res.atom_id, res.depth)
    return len(cams)


def check_molecule_scale(value: str) -> None:
    if value not in ("common", "per-view"):
        raise typer.BadParameter(f"--molecule-scale must be common or per-view, got {value!r}")


#: the harness files every export writes beside its data (benchmark.harness_files), lmms-eval's folder apart
HARNESS_FILES = ("benchmark.jsonl", "benchmark.tsv", "ids.csv", "inspect_task.py", "HARNESSES.md")


def harness_files_line(out: Path) -> None:
    """One line naming the harness files the export wrote into ``out`` (the steps are in HARNESSES.md)."""
    lmms = sorted(p.relative_to(out).as_posix() for p in (out / "lmms_eval").glob("*") if p.is_file())
    arms = sorted(p.name for p in out.glob("benchmark_*") if p.is_file())  # the other arms (benchmark.arms)
    names = [n for n in HARNESS_FILES if (out / n).is_file()] + arms + lmms
    if names:
        echo(f"harness files in {out}: {', '.join(names)} (how to run each harness: HARNESSES.md)", one_line=True)


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
    from viewcert.benchmark.export import ExportSettings, build_benchmark, ceiling_lines
    from viewcert.benchmark.interaction_export import INTERACTION_TASKS
    from viewcert.benchmark.molecule_export import MOLECULE_TASKS
    from viewcert.benchmark.settings import TASKS as CRYSTAL_TASKS
    from viewcert.cli.options import check_out, current_limits
    from viewcert.io.idlist import read_ids
    from viewcert.io.outputs import claimed
    from viewcert.tasks.model import TASKS as TRANSFORMATION_TASKS

    limits = current_limits()
    task = task.strip().lower().replace("_", "-")  # one vocabulary: crystal_system is crystal-system (shown so)
    if task not in TRANSFORMATION_TASKS + CRYSTAL_TASKS + MOLECULE_TASKS + INTERACTION_TASKS:
        known = CRYSTAL_TASKS + TRANSFORMATION_TASKS + MOLECULE_TASKS + INTERACTION_TASKS
        raise InputError(f"task must be one of {', '.join(known)}, got {task!r}{did_you_mean(task, known)}",
                         field="task")
    if input_spec.startswith("complex:") and task in CRYSTAL_TASKS:  # a molecule: refused before any file is written
        raise InputError(f"a complex:PATH input is a molecule, not a crystal: an interaction task "
                         f"({' | '.join(INTERACTION_TASKS)}), not {task!r}", field="task")
    if ids is not None and task not in CRYSTAL_TASKS:
        raise InputError(f"--ids applies to the crystal tasks ({', '.join(CRYSTAL_TASKS)}), not {task!r}", field="ids")
    chosen = None if ids is None else list(read_ids(ids))  # a bad id file: one line, before any work
    with claimed(out, "export") as removed:  # locked; an earlier export's files removed, anything else refused
        if removed:
            echo(f"removed the {len(removed)} files of the earlier export in {out} (those its manifest.json listed)",
                 err=True)
        if task in INTERACTION_TASKS:
            _interaction_benchmark(input_spec, check_out(out), task=task, protocol=protocol, seed=seed,
                                   per_structure=per_structure, delta=delta, limits=limits,
                                   constraints=tuple(constraints.split(",")), criterion=criterion)
            return
        if criterion != "baker-hubbard":
            raise InputError(f"--criterion applies to the interaction tasks ({', '.join(INTERACTION_TASKS)}), not {task!r}",
                             field="criterion")
        if task in MOLECULE_TASKS:
            _molecule_benchmark(input_spec, check_out(out), task=task, protocol=protocol, style=style, size=size,
                                delta=delta, certify=certify, workers=workers, limit=limit, limits=limits,
                                constraints=tuple(constraints.split(",")))
            return
        if task in TRANSFORMATION_TASKS:
            _task_benchmark(input_spec, check_out(out), dict(task=task, protocol=protocol, camera=camera,
                                                             depth_cue=depth_cue, per_structure=per_structure, style=style,
                                                             delta=delta, constraints=tuple(constraints.split(","))),
                            seed=seed, limit=limit, limits=limits)
            return
        limits.check_protocol_name(protocol)
        settings = ExportSettings(protocol=protocol, task=task, style=style, tiling=parse_tiling(tiling), size=size,
                                  truth=truth, buffers=buffers, tau=delta, constraints=tuple(constraints.split(",")))
        limits.check_tiling(settings.tiling)
        limits.check_pixels(size * settings.supersample, size * settings.supersample)
        done = build_benchmark(input_spec, check_out(out), settings=settings, subset=subset, limit=limit or None,
                               ids=chosen, certify=certify, delta=delta, n_workers=workers, limits=limits)
        echo(f"{done.n_questions} questions in {out} ({len(done.errors)} skipped, "
             f"{len(done.label_mismatches)} label mismatches)")
        if done.certificate is not None:
            for line in ceiling_lines(done.manifest["details"]["ceilings"], done.certificate.digest_value):
                echo(line, one_line=True)
        elif certify:
            echo("certificate: not written")
        harness_files_line(out)
        item_failures([f"item {e['id']}: {' '.join(str(e['error']).split())[:300]}" for e in done.errors])


def _task_benchmark(input_spec, out, options: dict, *, seed, limit, limits) -> None:
    """The transformation-task branch of ``build-benchmark``; ``options``: the TaskExportSettings fields given on
    the command line (task, protocol, camera, depth_cue, per_structure, style, delta, constraints)."""
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

    if not re.fullmatch(r"[+]?\d{1,19}", seed.strip()):
        raise InputError(f"seed must be an integer ≥ 0, got {seed!r}", field="seed")
    seed = int(seed)
    protocol = options["protocol"]
    settings = TaskExportSettings(**{**options, "protocol": "axes-3" if protocol == "render-ceiling-5" else protocol},
                                  seed=seed)
    limits.check_pixels(settings.width * settings.supersample, settings.height * settings.supersample)
    done = build_task_benchmark(input_spec, out, settings, limits=limits, limit=limit or None)
    s = (done.certificate.summary or {}).get("all", {})
    echo(f"{done.n_questions} {settings.task} questions in {out}; exact ceiling {s['exact_ceiling']['mean']:.4f}, "
         f"unique {s['unique']}/{s['n']}; certificate sha256:{done.certificate.digest_value}")
    harness_files_line(out)
    item_failures([f"item {e['id']}: {e['error']}" for e in done.errors])


def _interaction_benchmark(input_spec, out, *, task, protocol, seed, per_structure, delta, limits,
                           constraints=(), criterion="baker-hubbard") -> None:
    """The interaction branch of ``build-benchmark`` (viewcert.benchmark.interaction_export: pocket-ligand,
    residue-ligand, interaction-location, docking): INPUT is
    ``complex:PATH[#ligand=RES,pocket=8]``, PATH one complex or a folder of complex folders (the ligand name,
    where given, for those without ligand.sdf); the default render-ceiling-5 becomes axes-6 (MiSI's six)."""
    from viewcert.benchmark.interaction_export import InteractionExportSettings, build_interaction_benchmark
    from viewcert.certify.inputs import parse_complex_spec
    from viewcert.interactions.ceiling import CeilingSettings
    from viewcert.interactions.criteria import criterion_named

    criterion_named(criterion)  # an unknown name: one line, before any file is read
    if not input_spec.startswith("complex:"):
        raise InputError("interaction tasks read complex:PATH[#ligand=RES,pocket=8]", source=input_spec, field="INPUT")
    from viewcert.io.complex import ComplexFiles, complexes_in

    path, ligand, pocket = parse_complex_spec(input_spec)
    if not isinstance(path, ComplexFiles) and not path.exists():
        raise InputError(f"complex input {str(path)!r} does not exist", source=input_spec, field="INPUT")
    complexes = complexes_in(path, ligand)
    if not re.fullmatch(r"[+]?\d{1,18}", seed.strip()):
        raise InputError(f"seed must be an integer ≥ 0, got {seed!r}", field="seed")
    proto = "axes-6" if protocol == "render-ceiling-5" else protocol
    limits.check_protocol_name(proto)
    settings = InteractionExportSettings(task=task, protocol=proto, pocket=pocket, seed=int(seed),
                                         per_complex=per_structure, ceiling=CeilingSettings(delta=delta),
                                         constraints=constraints, criterion=criterion)
    limits.check_pixels(settings.width, settings.height)
    done = build_interaction_benchmark(complexes, out, settings)
    s = done.certificate.summary["all"]
    echo(f"{done.n_questions} {task} questions in {out}; ceiling as rendered {s['rendered']['mean']:.4f} "
         f"[{s['rendered']['lo']:.4f}, {s['rendered']['hi']:.4f}], ideal {s['ideal']['mean']:.4f}; "
         f"certificate sha256:{done.certificate.digest_value}")
    harness_files_line(out)


def _molecule_benchmark(input_spec, out, *, task, protocol, style, size, delta, certify, workers, limit,
                        limits, constraints=()) -> None:
    """The molecular branch of ``build-benchmark`` (viewcert.benchmark.molecule_export): the default
    render-ceiling-5 becomes axes-3 (front, top, left), the default study style ball-and-stick."""
    from viewcert.benchmark.molecule_export import LEVEL, MoleculeExportSettings, build_molecule_benchmark

    settings = MoleculeExportSettings(task=task, protocol="axes-3" if protocol == "render-ceiling-5" else protocol,
                                      style="ball-and-stick" if style == "study" else style, size=size,
                                      tau=delta, delta=delta, constraints=constraints)
    limits.check_protocol_name(settings.protocol)
    limits.check_pixels(size * settings.supersample, size * settings.supersample)
    done = build_molecule_benchmark(input_spec, out, settings, limit=limit or None, certify=certify,
                                    n_workers=workers, limits=limits)
    c = done.certificate
    echo(f"{done.n_questions} {task} questions in {out} ({len(done.skipped)} without a question, e.g. "
         f"achiral; {len(done.errors)} unreadable or not molecules)"
         + (f"; ceiling ({LEVEL[task]}) {c.summary.correct}/{c.summary.n}, certificate sha256:{c.digest_value}"
            if c is not None else ""))
    harness_files_line(out)
    item_failures([f"item {e['id']}: {e['error']}" for e in done.errors])


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
