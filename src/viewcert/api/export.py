"""Render a structure source view by view (``viewcert render``) and export a benchmark (``viewcert
build-benchmark``): the task sent to one of the four exporters, each export's report (questions, ceilings, the
harness files written, the items that could not be used).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from viewcert import defaults
from viewcert.api.arguments import LIMITS, OPTIONAL_CALLABLE, TEXTS, TILING, validated
from viewcert.api.report import Line, Report, check_out, one_line
from viewcert.errors import InputError, ViewcertError, did_you_mean
from viewcert.io.outputs import claimed
from viewcert.limits import Limits, active_limits, using_limits

if TYPE_CHECKING:  # names for the type checker only (the exporters stay lazy)
    import numpy as np

    from viewcert.formats.records import CeilingCertificate, InteractionCertificate, TaskCertificate

#: the harness files every export writes beside its data (benchmark.harness_files), lmms-eval's folder apart
HARNESS_FILES = ("benchmark.jsonl", "benchmark.tsv", "ids.csv", "inspect_task.py", "HARNESSES.md")


@dataclass(frozen=True)
class RenderSettings:
    """How ``render`` draws: protocol (name or file), style, cell repetitions of crystals, image side (px), camera
    kind (None: the protocol's own), the conventional standard cell or the cell as read, anti-aliasing samples
    per axis, ID/depth buffers, the study layout's subset, the first ``limit`` items (0 = all), molecule scale."""

    protocol: str = "render-ceiling-5"
    style: str = "study"
    tiling: tuple[int, int, int] = defaults.TILING
    size: int = 768
    kind: str | None = None
    conventional: bool = True
    supersample: int = 3
    buffers: bool = False
    subset: str = "eval"
    limit: int = 0
    molecule_scale: str = "common"

    def __post_init__(self) -> None:
        check_molecule_scale(self.molecule_scale)


def check_molecule_scale(value: str) -> None:
    """A molecule scale is common or per-view; InputError otherwise."""
    if value not in ("common", "per-view"):
        raise InputError(f"--molecule-scale must be common or per-view, got {value!r}")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "structure"


@validated("render", inputs=("input_spec",), tiling=TILING, limits=LIMITS)
def render(input_spec: str, out: str | Path = "out/render", *, force: bool = False, limits: Limits | None = None,
           **settings: Any) -> Report:
    """Render every structure of ``input_spec`` in every view of the protocol into ``out``: PNG + JSON sidecar
    (+ ID/depth buffers); ``settings`` are ``RenderSettings`` fields. Bad settings raise before any image.

    Parameters
    ----------
    input_spec : str
        INPUT: the structures drawn.
    out : str or Path
        Output folder.
    force : bool
        Replace the output of another render run in ``out``; without it, refused.
    limits : Limits, optional
        Resource limits in force for the call, checked before any work (default: those in force).
    **settings
        ``RenderSettings`` fields: protocol, style, tiling, image side (px), camera kind, conventional cell,
        anti-aliasing samples per axis, buffers, subset, limit, molecule scale.

    Returns
    -------
    Report
        The files written and the failed structures; ``value``: the number of images.
    """
    with using_limits(limits) as limits:  # in force for the call and below
        from viewcert.cameras.placement import check_kind  # lazy: loaded when the job runs
        from viewcert.cameras.resolve import resolve  # lazy: loaded when the job runs
        from viewcert.certify.inputs import load_input  # lazy: loaded when the job runs
        from viewcert.render.palette import get_style  # lazy: loaded when the job runs

        st = RenderSettings(**settings)
        limits.check_tiling(st.tiling)
        limits.check_pixels(st.size, st.size)
        limits.check_pixels(st.size * st.supersample, st.size * st.supersample)
        limits.check_protocol_name(st.protocol)
        get_style(st.style)  # an unknown style is bad input (exit 2), not an item error
        spec = resolve(st.protocol)  # resolved once for the run (perspective: its pinholes)
        limits.check_views(len(spec.protocol.views))
        check_kind(spec.spec, st.kind)  # bad input for the whole run (exit 2), not an item error
        if spec.kind == "perspective":  # its own image size
            limits.check_pixels(spec.width * st.supersample, spec.height * st.supersample, source=spec.spec.source)
        with claimed(check_out(out), "render", identity={"input": str(input_spec), "settings": vars(st)},
                     force=force) as claim:
            out = claim.shown
            dataset = load_input(input_spec, subset=st.subset)
            items = dataset.items[:st.limit] if st.limit else dataset.items
            n_img, failed = 0, []
            for it in items:
                try:
                    s, cams, policy = _item_cameras(it, spec, st)
                except (ViewcertError, ValueError, OSError) as exc:  # unreadable, too large, a pinhole inside it
                    failed.append(f"item {it.id}: {one_line(exc)}")
                    continue
                n_img += _write_views(out, _safe(it.id), s, spec, cams, policy, st)
        return Report((Line(f"wrote {n_img} images of {len(items) - len(failed)} structures to {out}"),),
                      failures=tuple(failed), value=n_img)


@validated("gallery", limits=LIMITS)
def gallery(out: str | Path = "out/gallery.png", *, tile_px: int = 170, molecule_scale: str = "common",
            limits: Limits | None = None) -> Report:
    """A contact sheet of built-in crystals and molecules in every view of the study's protocol (``tile_px`` px a
    view), written as PNG to ``out``.

    Parameters
    ----------
    out : str or Path
        PNG path written.
    tile_px : int
        Side of one view's tile (px).
    molecule_scale : str
        ``"common"``: one Å-per-pixel scale across a molecule's views; ``"per-view"``: each view framed alone.
    limits : Limits, optional
        Resource limits in force for the call, checked before any work (default: those in force).

    Returns
    -------
    Report
        A line naming the file written; ``value``: its path.
    """
    with using_limits(limits) as limits:  # in force for the call and below
        from viewcert.benchmark.gallery import write_gallery  # lazy: loaded when the job runs

        limits.check_pixels(tile_px, tile_px)
        check_molecule_scale(molecule_scale)
        path = write_gallery(out, tile_px=tile_px, molecule_scale=molecule_scale)
        return Report((Line(f"wrote {path} ({Path(path).stat().st_size // 1024} KB)"),), value=Path(path))


def _item_cameras(it: Any, spec: Any, st: RenderSettings) -> Any:
    """(structure drawn, its cameras, their framing policy: tiling, pad, margin) of one item; ViewcertError
    when it cannot be drawn."""
    from viewcert.benchmark.gallery import rendered_cell  # lazy: loaded when the job runs
    from viewcert.cameras.policy import frame  # lazy: loaded when the job runs
    from viewcert.render.raster import drawn_policy  # lazy: loaded when the job runs

    s = it.read()
    if st.conventional:
        s = rendered_cell(s)
    tt = st.tiling if s.is_periodic else (1, 1, 1)
    active_limits().check_observations(s.n_atoms * tt[0] * tt[1] * tt[2] * len(spec.protocol.views), source=it.id)
    policy = drawn_policy(st.style, tiling=tt, width=st.size, height=st.size, kind=st.kind,
                          molecule_scale=st.molecule_scale)
    return s, frame(spec, s, policy), policy


def _write_views(out: Path, stem: str, s: Any, spec: Any, cams: Any, policy: Any, st: RenderSettings) -> int:
    """Render and write every view of one structure (PNG, sidecar, buffers); the number of images."""
    from viewcert.benchmark.export import view_sidecar  # lazy: loaded when the job runs
    from viewcert.cameras.framing import framing_record  # lazy: loaded when the job runs
    from viewcert.io.images import write_buffers, write_png, write_sidecar  # lazy: loaded when the job runs
    from viewcert.render.raster import build_scene  # lazy: loaded when the job runs
    from viewcert.render.raster import render as draw  # lazy: loaded when the job runs

    scene = build_scene(s, st.style, tiling=policy.tiling)
    framing = framing_record(policy, s, perspective=spec.kind == "perspective")  # the exporters' record
    for view, cam in zip(spec.protocol.views, cams, strict=True):
        res = draw(scene, cam, supersample=st.supersample)
        name = f"{stem}_{view.name}"
        write_png(out / f"{name}.png", cast("np.ndarray", res.rgb))  # drawn with its RGB (the default)
        write_sidecar(out / f"{name}.json",
                      view_sidecar(res, view_name=view.name, image=f"{name}.png", structure=s, framing=framing))
        if st.buffers:
            write_buffers(out / name, res.atom_id, res.depth)
    return len(cams)


@dataclass(frozen=True)
class BenchmarkSettings:
    """How ``build_benchmark`` exports: protocol (name or file; the default becomes axes-3 for transformation
    and molecule tasks, axes-6 for interaction tasks), style, cell repetitions, image side (px), the study
    layout's subset, the first ``limit`` questions (0 = all), an id file (crystal tasks), the answer's truth,
    whether to certify, δ (Å; τ = δ), worker processes, ID/depth buffers, the transformation tasks' camera, depth
    cue, seed (an integer ≥ 0, as text) and questions per molecule, the interaction tasks' hydrogen-bond
    criterion, and the response constraints appended to every prompt."""

    protocol: str = "render-ceiling-5"
    style: str = "study"
    tiling: tuple[int, int, int] = defaults.TILING
    size: int = 768
    subset: str = "eval"
    limit: int = 0
    ids: Path | None = None
    truth: str = "dataset"
    certify: bool = True
    delta: float = defaults.DELTA
    workers: int | None = None
    buffers: bool = False
    camera: str | None = None
    depth_cue: bool = False
    seed: str = "0"
    per_structure: int = 1
    criterion: str = "baker-hubbard"
    constraints: tuple[str, ...] = field(default=())


def task_name(task: str) -> str:
    """``task`` in the one spelling shown (``crystal_system`` is ``crystal-system``); InputError naming the
    tasks when unknown."""
    from viewcert.benchmark.interaction_export import INTERACTION_TASKS  # lazy: loaded when the job runs
    from viewcert.benchmark.molecule_export import MOLECULE_TASKS  # lazy: loaded when the job runs
    from viewcert.benchmark.settings import TASKS as CRYSTAL_TASKS  # lazy: loaded when the job runs
    from viewcert.tasks.model import TASKS as TRANSFORMATION_TASKS  # lazy: loaded when the job runs

    task = task.strip().lower().replace("_", "-")
    if task not in TRANSFORMATION_TASKS + CRYSTAL_TASKS + MOLECULE_TASKS + INTERACTION_TASKS:
        known = CRYSTAL_TASKS + TRANSFORMATION_TASKS + MOLECULE_TASKS + INTERACTION_TASKS
        raise InputError(f"task must be one of {', '.join(known)}, got {task!r}{did_you_mean(task, known)}",
                         field="task")
    return task


@validated("build-benchmark", inputs=("input_spec",), tiling=TILING, constraints=TEXTS, limits=LIMITS,
           progress=OPTIONAL_CALLABLE)
def build_benchmark(input_spec: str, out: str | Path, *, task: str = "crystal-system", force: bool = False,
                    limits: Limits | None = None, progress: Callable[[str], None] | None = None,
                    **settings: Any) -> Report:
    """Export a benchmark of ``input_spec`` into ``out`` (``settings``: ``BenchmarkSettings`` fields): images,
    sidecars, JSONL, VLMEvalKit TSV, the harness files of every arm, the certificate of its ceiling and
    ``manifest.json``. ``task`` picks the exporter: crystal-system (crystals); translation, rotation, zoom,
    trans-rot, rot-rot, handedness (transformations); point-group, molecule-handedness (molecules);
    pocket-ligand, residue-ligand, interaction-location, docking (complexes, INPUT ``complex:PATH``). The
    report's value: the ``formats.export.Export``.

    Parameters
    ----------
    input_spec : str
        INPUT: a folder of structure files, a file, the study layout, ``builtin:NAME``, a database, or
        ``complex:PATH`` for the interaction tasks.
    out : str or Path
        The export folder written.
    task : str
        The question asked (``--task``); it picks the exporter.
    force : bool
        Replace another export in ``out`` (exactly the files its manifest lists are removed); without it, refused.
    limits : Limits, optional
        Resource limits in force for the call, checked before any work (default: those in force).
    progress : callable, optional
        Called with each progress line (text).
    **settings
        ``BenchmarkSettings`` fields (protocol, style, tiling, image side in px, subset, limit, ids, certify,
        δ in Å, workers, buffers, the task options, constraints); an unknown name or a bad value raises
        before any image is drawn.

    Returns
    -------
    Report
        The export's lines; ``value``: the ``formats.export.Export``.
    """
    with using_limits(limits) as limits:  # in force for the call and below
        from viewcert.benchmark.interaction_export import INTERACTION_TASKS  # lazy: loaded when the job runs
        from viewcert.benchmark.molecule_export import MOLECULE_TASKS  # lazy: loaded when the job runs
        from viewcert.benchmark.settings import TASKS as CRYSTAL_TASKS  # lazy: loaded when the job runs
        from viewcert.io.idlist import read_ids  # lazy: loaded when the job runs
        from viewcert.tasks.model import TASKS as TRANSFORMATION_TASKS  # lazy: loaded when the job runs

        given: dict[str, Any] = {k: tuple(v) if k == "constraints" else v for k, v in settings.items()}
        st = BenchmarkSettings(**given)
        task = task_name(task)
        if input_spec.startswith("complex:") and task in CRYSTAL_TASKS:  # a molecule: refused before any file is written
            raise InputError(f"a complex:PATH input is a molecule, not a crystal: an interaction task "
                             f"({' | '.join(INTERACTION_TASKS)}), not {task!r}", field="task")
        if st.ids is not None and task not in CRYSTAL_TASKS:
            raise InputError(f"--ids applies to the crystal tasks ({', '.join(CRYSTAL_TASKS)}), not {task!r}", field="ids")
        chosen = None if st.ids is None else list(read_ids(st.ids))  # a bad id file: one line, before any work
        if st.criterion != "baker-hubbard" and task not in INTERACTION_TASKS:
            raise InputError(f"--criterion applies to the interaction tasks ({', '.join(INTERACTION_TASKS)}), not "
                             f"{task!r}", field="criterion")
        identity = {"input": str(input_spec), "task": task, "settings": vars(st)}
        with claimed(check_out(out), "export", identity=identity, force=force) as claim:  # locked; one export
            if claim.removed and progress is not None:
                progress(f"removed the {len(claim.removed)} files of the earlier export in {claim.shown} (those its "
                         "record or manifest.json listed)")
            out = claim.shown
            if task in INTERACTION_TASKS:
                return _interaction_benchmark(input_spec, out, task, st)
            if task in MOLECULE_TASKS:
                return _molecule_benchmark(input_spec, out, task, st)
            if task in TRANSFORMATION_TASKS:
                return _task_benchmark(input_spec, out, task, st)
            return _crystal_benchmark(input_spec, out, task, st, chosen)


def _crystal_benchmark(input_spec: Any, out: Path, task: str, st: BenchmarkSettings, chosen: Any) -> Report:
    """The crystal branch of ``build_benchmark`` (viewcert.benchmark.export)."""
    from viewcert.benchmark.export import ExportSettings, ceiling_lines  # lazy: loaded when the job runs
    from viewcert.benchmark.export import build_benchmark as export  # lazy: loaded when the job runs

    limits = active_limits()
    limits.check_protocol_name(st.protocol)
    settings = ExportSettings.from_options(protocol=st.protocol, task=task, style=st.style, tiling=st.tiling,
                                           size=st.size, truth=st.truth, buffers=st.buffers, tau=st.delta,
                                           constraints=st.constraints)
    limits.check_tiling(settings.tiling)
    limits.check_pixels(st.size * settings.image.supersample, st.size * settings.image.supersample)
    done = export(input_spec, out, settings=settings, subset=st.subset, limit=st.limit or None, ids=chosen,
                  certify=st.certify, delta=st.delta, n_workers=st.workers)
    said = [Line(f"{done.n_questions} questions in {out} ({len(done.errors)} skipped, "
                 f"{len(done.label_mismatches)} label mismatches)")]
    if done.certificate is not None:
        said += [Line(x, one_line=True) for x in ceiling_lines(done.manifest["details"]["ceilings"],
                                                               done.certificate.digest_value)]
    elif st.certify:
        said.append(Line("certificate: not written"))
    return Report(tuple(said) + harness_files_line(out), value=done, failures=tuple(
        f"item {e['id']}: {' '.join(str(e['error']).split())[:300]}" for e in done.errors))


def harness_files_line(out: Path) -> tuple[Line, ...]:
    """One line naming the harness files the export wrote into ``out`` (the steps are in HARNESSES.md)."""
    lmms = sorted(p.relative_to(out).as_posix() for p in (out / "lmms_eval").glob("*") if p.is_file())
    arms = sorted(p.name for p in out.glob("benchmark_*") if p.is_file())  # the other arms (benchmark.arms)
    names = [n for n in HARNESS_FILES if (out / n).is_file()] + arms + lmms
    return (Line(f"harness files in {out}: {', '.join(names)} (how to run each harness: HARNESSES.md)",
                 one_line=True),) if names else ()


def _seed(text: str, digits: int) -> int:
    if not re.fullmatch(rf"[+]?\d{{1,{digits}}}", str(text).strip()):
        raise InputError(f"seed must be an integer ≥ 0, got {text!r}", field="seed")
    return int(text)


def _task_benchmark(input_spec: Any, out: Path, task: str, st: BenchmarkSettings) -> Report:
    """The transformation-task branch of ``build_benchmark`` (viewcert.benchmark.tasks_export)."""
    from viewcert.benchmark.tasks_export import (  # lazy: when the job runs
        TaskExportSettings,
        build_task_benchmark,
    )

    seed = _seed(st.seed, 19)
    settings = TaskExportSettings.from_options(
        task=task, protocol="axes-3" if st.protocol == "render-ceiling-5" else st.protocol, camera=st.camera,
        depth_cue=st.depth_cue, per_structure=st.per_structure, style=st.style, delta=st.delta,
        constraints=st.constraints, seed=seed)
    im = settings.image
    active_limits().check_pixels(im.width * im.supersample, im.height * im.supersample)
    done = build_task_benchmark(input_spec, out, settings, limit=st.limit or None)
    cert = cast("TaskCertificate", done.certificate)  # what the task exporter writes
    s: Any = cast(Any, cert.summary).all  # the exporter just run wrote it: its items, so a summary with its group "all"
    return Report((Line(f"{done.n_questions} {settings.task} questions in {out}; exact ceiling "
                        f"{s.exact_ceiling.mean:.4f}, unique {s.unique}/{s.n}; certificate "
                        f"sha256:{cert.digest_value}"),) + harness_files_line(out),
                  failures=tuple(f"item {e['id']}: {e['error']}" for e in done.errors), value=done)


def _interaction_benchmark(input_spec: Any, out: Path, task: str, st: BenchmarkSettings) -> Report:
    """The interaction branch of ``build_benchmark`` (viewcert.benchmark.interaction_export: pocket-ligand,
    residue-ligand, interaction-location, docking): INPUT is ``complex:PATH[#ligand=RES,pocket=8]``, PATH one
    complex or a folder of complex folders (the ligand name, where given, for those without ligand.sdf); the
    default render-ceiling-5 becomes axes-6 (MiSI's six)."""
    from viewcert.benchmark.interaction_export import (  # lazy: loaded when the job runs
        InteractionExportSettings,
        build_interaction_benchmark,
    )
    from viewcert.certify.inputs import parse_complex_spec  # lazy: loaded when the job runs
    from viewcert.interactions.ceiling import CeilingSettings  # lazy: loaded when the job runs
    from viewcert.interactions.criteria import criterion_named  # lazy: loaded when the job runs
    from viewcert.io.complex import ComplexFiles, complexes_in  # lazy: loaded when the job runs

    criterion_named(st.criterion)  # an unknown name: one line, before any file is read
    if not input_spec.startswith("complex:"):
        raise InputError("interaction tasks read complex:PATH[#ligand=RES,pocket=8]", source=input_spec, field="INPUT")
    path, ligand, pocket = parse_complex_spec(input_spec)
    if not isinstance(path, ComplexFiles) and not path.exists():
        raise InputError(f"complex input {str(path)!r} does not exist", source=input_spec, field="INPUT")
    complexes = complexes_in(path, ligand)
    seed = _seed(st.seed, 18)
    proto = "axes-6" if st.protocol == "render-ceiling-5" else st.protocol
    limits = active_limits()
    limits.check_protocol_name(proto)
    settings = InteractionExportSettings.from_options(task=task, protocol=proto, pocket=pocket, seed=seed,
                                                      per_complex=st.per_structure,
                                                      ceiling=CeilingSettings(delta=st.delta),
                                                      constraints=st.constraints, criterion=st.criterion)
    limits.check_pixels(settings.image.width, settings.image.height)
    done = build_interaction_benchmark(complexes, out, settings)
    cert = cast("InteractionCertificate", done.certificate)  # what the interaction exporter writes
    s: Any = cast(Any, cert.summary).all  # the exporter just run wrote it
    return Report((Line(f"{done.n_questions} {task} questions in {out}; ceiling as rendered "
                        f"{s.rendered.mean:.4f} [{s.rendered.lo:.4f}, {s.rendered.hi:.4f}], ideal "
                        f"{s.ideal.mean:.4f}; certificate sha256:{cert.digest_value}"),)
                  + harness_files_line(out), value=done)


def _molecule_benchmark(input_spec: Any, out: Path, task: str, st: BenchmarkSettings) -> Report:
    """The molecular branch of ``build_benchmark`` (viewcert.benchmark.molecule_export): the default
    render-ceiling-5 becomes axes-3 (front, top, left), the default study style ball-and-stick."""
    from viewcert.benchmark.molecule_export import (  # lazy: loaded when the job runs
        LEVEL,
        MoleculeExportSettings,
        build_molecule_benchmark,
    )

    proto = "axes-3" if st.protocol == "render-ceiling-5" else st.protocol
    settings = MoleculeExportSettings.from_options(task=task, protocol=proto, size=st.size, tau=st.delta,
                                                   style="ball-and-stick" if st.style == "study" else st.style,
                                                   delta=st.delta, constraints=st.constraints)
    limits = active_limits()
    limits.check_protocol_name(proto)
    limits.check_pixels(st.size * settings.image.supersample, st.size * settings.image.supersample)
    done = build_molecule_benchmark(input_spec, out, settings, limit=st.limit or None, certify=st.certify,
                                    n_workers=st.workers)
    c = cast("CeilingCertificate | None", done.certificate)  # what the molecule exporter writes, if it certified
    return Report((Line(f"{done.n_questions} {task} questions in {out} ({len(done.skipped)} without a question, "
                        f"e.g. achiral; {len(done.errors)} unreadable or not molecules)"
                        + (f"; ceiling ({LEVEL[task]}) {c.summary.correct}/{c.summary.n}, certificate "
                           f"sha256:{c.digest_value}" if c is not None else "")),) + harness_files_line(out),
                  failures=tuple(f"item {e['id']}: {e['error']}" for e in done.errors), value=done)


__all__ = ["BenchmarkSettings", "RenderSettings", "build_benchmark", "render", "task_name"]
