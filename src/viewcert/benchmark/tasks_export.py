"""Export of a MiSI-style transformation benchmark (issue 13, item 3): images, questions, harness files and
the certificate of which answers the images determine.

``build_task_benchmark(INPUT, out, TaskExportSettings(task=..., protocol=..., camera=..., seed=...))`` writes

| file | what |
|---|---|
| ``images/qNNNN_vK.png`` | K = 0…k−1: the before views (protocol order, front first); K = k: the after view (front camera) |
| ``sidecars/qNNNN_vK.json`` | the after view's (``after_sidecar``): its camera and, per consistent answer, the pose's atoms it observes projected (u, v px, Z): what the explorer draws |
| ``benchmark.jsonl`` | id, source_id, index, images, question (choice tasks: no options, each harness adds its own), answer_format (``command`` or ``choice``), answer, choices and answer_letter (choice), task, category (the true command's axes) |
| ``benchmark.tsv``, ``ids.csv``, ``inspect_task.py``, ``lmms_eval/``, ``HARNESSES.md`` | the harness files (``benchmark.harness_files``): VLMEvalKit MCQ (A…D, answer letter) or VQA (answer text) TSV, id table, Inspect and lmms-eval tasks, the steps |
| ``benchmark_r3.jsonl``, ``benchmark_no_image.jsonl``, ``benchmark_choices_only.jsonl`` (+ ``.tsv``, choice tasks) | the other arms (``benchmark.arms``); R3: the molecule before and after as text in the after view's screen frame (``r3_text``); choices-only of a command task: the answer's form (``answer_form``) |
| ``certificate.json`` | format/version, every tolerance, protocol, camera, seed, library versions, per item the consistent-answer set and ceilings, the summary, a sha256 digest (as ``certify/certificate.py``) |
| ``manifest.json`` | ``viewcert.export/1`` (``formats.export``): settings, per question id and answer, errors, the certificate's digest, SHA-256 of every other file |

Images: every view of a question shares one Å-per-pixel scale (orthographic: one scale and centre for all
views, ``fit_orthographic_common``; perspective: every camera at the same distance from the bounding-box
centre with the same focal length). A perspective protocol file sets the camera kind and field of view and,
when its views have positions, the pinholes themselves (``file_camera``, ``placed_item``; docs/protocols.md).
The oracle (``viewcert.tasks.identify``) runs on exactly these cameras.
Rendered with ``viewcert.render`` (style ``ball-and-stick`` by default); with ``depth_cue`` each pixel's
colour is blended toward the background by the ChimeraX-like intensity of its depth (``tasks.model``).

Answer formats (MiSI): translation ``move x|y D`` (D in −4…4 Å), rotation ``roll x|y|z θ`` (θ in −90…90°,
15° steps), zoom ``move z D`` (40…60 Å): command answers (cloze). trans-rot / rot-rot: multiple choice among
4 command sequences, the truth and three perturbations (magnitude, sign, axis of one component); MiSI shows
the after views of a second complex as options, here the options are the commands. Handedness: multiple
choice, ``same`` or ``mirror`` (the mirror image's reference pose is stated in the question). Sampling:
``numpy.random.default_rng(seed)`` draws, per structure in input order and ``per_structure`` times, the
true answer index, then (handedness) the mirror flag, then (choice tasks) distractors and option order.

Ceilings recorded per item: command tasks exact = 1/|consistent set| and the MiSI partial-credit ceiling;
choice tasks 1/|options in the consistent set| (handedness: 1/|{same, mirror} consistent|).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import numpy as np

from viewcert.benchmark.harness_files import question_record, write_harness_files
from viewcert.benchmark.settings import check_constraints
from viewcert.cameras.placement import check_placement, check_positions, placed_cameras
from viewcert.cameras.policy import common_pinholes, frame_points
from viewcert.cameras.protocol_files import ProtocolSpec
from viewcert.certify.certificate import library_versions
from viewcert.certify.inputs import load_input
from viewcert.constraints import parse_names, with_constraints
from viewcert.elements import symbol
from viewcert.errors import InputError
from viewcert.formats.export import Export, question_items, write_export
from viewcert.formats.records import (
    ABSENT,
    TASK_FORMAT,
    TASK_VERSION,
    TaskCertificate,
    TaskItemRecord,
    sealed,
)
from viewcert.formats.settings_sections import ExportSettingsRecord, TaskTolerances
from viewcert.io.atomic import json_dumps, write_text_atomic
from viewcert.io.images import write_png
from viewcert.limits import active_limits
from viewcert.render.image import ImageSettings
from viewcert.render.palette import get_style
from viewcert.render.raster import build_scene, render
from viewcert.resolution import quantize_tree
from viewcert.structures import Structure
from viewcert.tasks.ceiling import handedness_exclusions, summarise
from viewcert.tasks.credit import default_normalisers
from viewcert.tasks.identify import DEFAULT_DELTA, DEFAULT_EPS, DEFAULT_EXPLAIN_TOL, ItemResult, identify_all
from viewcert.tasks.model import (
    MISI_SIZE,
    TASKS,
    TaskItem,
    ViewSetup,
    depth_cue_intensity,
    make_item,
    motion_envelope,
    observation_model,
    protocol_record,
    task_grid,
)
from viewcert.tasks.transforms import AXES, Step, Transformation

FORMAT = TASK_FORMAT
VERSION = TASK_VERSION
CHOICE_TASKS = ("trans-rot", "rot-rot", "handedness")
HANDEDNESS_CHOICES = ("same", "mirror")


def _default_image() -> ImageSettings:
    return ImageSettings.from_options("axes-3", style="ball-and-stick", width=MISI_SIZE[0], height=MISI_SIZE[1],
                                      supersample=2)


@dataclass(frozen=True)
class TaskExportSettings:
    """What a transformation export depends on (all recorded in the certificate): ``image`` (the protocol,
    views[0] = front (``tasks.model``); style; width × height px; supersample; the camera kind: a perspective
    protocol file's, else given, default orthographic, ``file_camera``) and the task's own settings. δ and
    ``explain_tol`` in Å, ``eps`` an intensity (0–1). ``from_options`` builds it from the flat options."""

    #: the flat options ``from_options`` takes, the keys ``to_dict`` records
    OPTIONS: ClassVar[tuple[str, ...]] = (
        "task", "protocol", "camera", "depth_cue", "seed", "per_structure", "style", "width", "height", "supersample",
        "delta", "eps", "explain_tol", "observe", "min_pixels", "chiral_only", "constraints")

    image: ImageSettings = field(default_factory=_default_image)
    task: str = "rotation"
    depth_cue: bool = False
    seed: int = 0
    per_structure: int = 1
    delta: float = DEFAULT_DELTA
    eps: float = DEFAULT_EPS
    explain_tol: float = DEFAULT_EXPLAIN_TOL
    observe: str = "ideal"
    min_pixels: int = 1
    chiral_only: bool = True
    constraints: tuple[str, ...] = ()  # response constraints appended to every prompt (viewcert.constraints)

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise InputError(f"task must be one of {', '.join(TASKS)}, got {self.task!r}", field="task")
        for name in ("seed", "per_structure"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer):
                raise InputError(f"{name} must be an integer, got {v!r}", field=name)
        if not 0 <= self.seed < 2**63:
            raise InputError(f"seed must be an integer in 0…2^63−1, got {self.seed}", field="seed")
        if self.per_structure < 1:
            raise InputError("per_structure must be ≥ 1", field="per_structure")
        if not (self.delta > 0 and self.eps >= 0 and self.explain_tol > 0):
            raise InputError(f"need δ > 0, ε ≥ 0, explain_tol > 0, got {self.delta}, {self.eps}, {self.explain_tol}",
                             field="delta")
        check_constraints(self.constraints)
        file_camera(self.image.protocol.spec, self.image.kind)  # a perspective file's kind is the camera's
        self.view_setup()  # the camera / protocol checks of the setup (views[0] = front, observe, min_pixels)

    @classmethod
    def from_options(cls, *, protocol="axes-3", camera: str | None = None, style: str = "ball-and-stick",
                     width: int = MISI_SIZE[0], height: int = MISI_SIZE[1], supersample: int = 2, constraints=(),
                     **settings) -> TaskExportSettings:
        """The settings from the flat options: the protocol in any form the resolver accepts (resolved once,
        ``ImageSettings.from_options``), ``camera`` None = a perspective protocol file's kind, else
        orthographic; ``settings``: the other fields."""
        image = ImageSettings.from_options(protocol, style=style, width=width, height=height, supersample=supersample)
        kind, _ = file_camera(image.protocol.spec, camera)
        return cls(image=replace(image, kind=kind), constraints=parse_names(constraints), **settings)

    def view_setup(self) -> ViewSetup:
        """The task's camera and style (``tasks.model.ViewSetup``) from these settings."""
        im = self.image
        _, fov = file_camera(im.protocol.spec, im.kind)
        return ViewSetup(camera=im.kind, protocol=im.protocol, width=im.width, height=im.height,
                         depth_cue=self.depth_cue, observe=self.observe, min_pixels=self.min_pixels,
                         observe_style=im.style, **({} if fov is None else {"fov_deg": fov}))

    def protocol_record(self) -> dict:
        """The protocol in full: name, view names, rotations, and a file's path and SHA-256."""
        return protocol_record(self.image.protocol)

    def record(self) -> ExportSettingsRecord:
        """Every setting (flat), typed; a protocol given as a name or a file by what was given, else its full
        record (``formats.settings_sections.TaskProtocol``)."""
        im = self.image
        rp = im.protocol
        return ExportSettingsRecord(
            task=self.task, protocol=rp.label if rp.origin in ("name", "file") else self.protocol_record(),
            camera=im.kind, depth_cue=self.depth_cue, seed=self.seed, per_structure=self.per_structure,
            style=im.style, width=im.width, height=im.height, supersample=im.supersample, delta=self.delta,
            eps=self.eps, explain_tol=self.explain_tol, observe=self.observe, min_pixels=self.min_pixels,
            chiral_only=self.chiral_only, constraints=list(self.constraints))

    def to_dict(self) -> dict:
        """The JSON object of :meth:`record` (its keys: :attr:`OPTIONS`)."""
        return self.record().to_dict()


def file_camera(spec: ProtocolSpec, camera: str | None) -> tuple[str, float | None]:
    """(camera kind, field of view or None) of a task. A perspective protocol file (or ProtocolSpec) gives
    kind = perspective and its fov_deg; ``camera`` given as anything else is a conflict (InputError). Names,
    Protocol objects and orthographic files give rotations only: ``camera`` decides (default orthographic)."""
    if camera is not None and camera not in ("orthographic", "perspective"):
        raise InputError(f"camera must be 'orthographic' or 'perspective', got {camera!r}", field="camera")
    if spec.kind != "perspective":
        return camera or "orthographic", None
    if camera not in (None, "perspective"):
        raise InputError(f"the protocol file says kind = 'perspective' but the camera option says {camera!r} "
                         "(pass --camera perspective, or an orthographic protocol)", source=spec.source,
                         field="camera")
    return "perspective", spec.fov_deg


def placed_item(item: TaskItem, spec: ProtocolSpec) -> TaskItem:
    """The item through the protocol file's own pinholes: rotation and position per view as the file states
    (world Å, the molecule's frame as read), focal from its fov over the smaller side of the task's image
    (``viewcert.cameras.placement``). InputError naming ``views[NAME].position`` when a camera lies inside
    the molecule's bounding sphere or an atom at or behind a camera plane, or when an answer of the grid
    brings an atom within ``near_clip`` Å of the after (front) camera (the framed cameras' ``backoff`` rule)."""
    s = item.setup
    cams = placed_cameras(dataclasses.replace(spec, width=s.width, height=s.height))
    check_placement(cams, item.positions, source=spec.source)
    after = cams[0]
    for k, answer in enumerate(item.grid.answers):
        pose = item.pose(k)
        depth = -(item.positions @ pose.matrix.T + pose.shift - after.position) @ after.rotation[2]
        if depth.min() <= s.near_clip:
            raise InputError(f"camera {after.name!r}: the answer '{answer.format()}' brings an atom of "
                             f"{item.structure_id} to depth {depth.min():.4g} Å (near clip {s.near_clip:g} Å); "
                             "place the after camera farther away", source=spec.source,
                             field=f"views[{after.name}].position")
    return dataclasses.replace(item, cameras=cams)


def common_scale(item: TaskItem) -> TaskItem:
    """The item with every camera at one Å-per-pixel scale (module docstring)."""
    s = item.setup
    if s.camera == "orthographic":
        pts = motion_envelope(item.positions, item.task, item.grid, s)
        new = frame_points(s.resolved, pts, dataclasses.replace(s.framing_policy(), molecule_scale="common"))
    else:
        new = common_pinholes(item.cameras, item.centre)
    return dataclasses.replace(item, cameras=tuple(new))


def _depth_of(cam, point) -> float:
    return float(-cam.to_camera(np.asarray(point, dtype=np.float64))[0, 2])


def _render_view(positions, numbers, cam, centre, radius, settings: TaskExportSettings, setup: ViewSetup):
    """RGB (H, W, 3) uint8 of the atoms through ``cam``; with depth cue, blended toward the background."""
    st = get_style(settings.image.style)
    scene = build_scene(Structure(positions=positions, numbers=numbers), st)
    res = render(scene, cam, supersample=settings.image.supersample)
    rgb = res.rgb
    if not setup.depth_cue:
        return rgb
    dc = _depth_of(cam, centre)
    depth = res.depth  # Å along the view axis, as tasks.model's depth (orthographic: from cam.center's plane)
    inten = np.where(np.isfinite(depth), depth_cue_intensity(np.where(np.isfinite(depth), depth, 0.0),
                                                             dc - radius, dc + radius, setup.depth_cue_start,
                                                             setup.depth_cue_end), 1.0)
    bg = 255.0 * np.asarray(st.background)
    out = bg + (rgb.astype(np.float64) - bg) * inten[..., None]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def render_item(item: TaskItem, settings: TaskExportSettings, out: Path, index: int) -> list[str]:
    """Write the before views and the after view of one question; their relative paths."""
    paths = []
    for k, cam in enumerate(item.cameras):
        rgb = _render_view(item.positions, item.numbers, cam, item.centre, item.radius, settings, item.setup)
        paths.append(f"images/q{index:04d}_v{k}.png")
        write_png(out / paths[-1], rgb)
    pose = item.pose(item.truth)
    moved = item.positions @ pose.matrix.T + pose.shift
    centre = pose.matrix @ item.centre + pose.shift if item.setup.depth_cue_range == "models" else item.centre
    rgb = _render_view(moved, item.numbers, item.after_camera, centre, item.radius, settings, item.setup)
    paths.append(f"images/q{index:04d}_v{len(item.cameras)}.png")
    write_png(out / paths[-1], rgb)
    return paths


def _perturb(t: Transformation, grid_answers: set, rng: np.random.Generator) -> list[Transformation]:
    """Three distinct grid distractors of ``t``: one component's magnitude, sign and axis changed."""
    out: list[Transformation] = []
    for kind in ("magnitude", "sign", "axis"):
        tries = []
        for i, st in enumerate(t.steps):
            axes = AXES if st.operation == "rotate" else ("x", "y")
            if kind == "magnitude":
                alts = [Step(st.verb, st.axis, st.magnitude + d) for d in (-30, -15, 15, 30, -2, -1, 1, 2)]
            elif kind == "sign":
                alts = [Step(st.verb, st.axis, -st.magnitude)]
            else:
                alts = [Step(st.verb, a, st.magnitude) for a in axes if a != st.axis]
            tries += [Transformation(t.steps[:i] + (a,) + t.steps[i + 1:]) for a in alts]
        tries = [c for c in tries if c in grid_answers and c != t and c not in out]
        if not tries:
            tries = sorted(a for a in grid_answers if a != t and a not in out)
        out.append(tries[int(rng.integers(len(tries)))])
    return out


def sample_questions(structures, settings: TaskExportSettings, exclude=()) -> list[tuple[TaskItem, tuple[str, ...]]]:
    """(item, choices) per question: seeded truths, mirror flags and options (module docstring); structures
    in ``exclude`` (ids) give no question, their draws are still made."""
    grid = task_grid(settings.task)
    answers = set(grid.answers)
    rng = np.random.default_rng(settings.seed)
    setup = settings.view_setup()
    spec = setup.protocol_spec
    placed = spec.kind == "perspective" and spec.positions[0] is not None
    if spec.kind == "perspective":
        check_positions(spec)  # a position for every view or for none
    out = []
    for sid, pos, num in structures:
        for _ in range(settings.per_structure):
            truth = int(rng.integers(len(grid)))
            mirror = settings.task == "handedness" and bool(rng.integers(2))
            if sid in exclude:
                continue
            item = make_item(sid, pos, num, settings.task, truth, setup, grid=grid, mirror=mirror)
            item = placed_item(item, spec) if placed else common_scale(item)
            choices: tuple[str, ...] = ()
            if settings.task == "handedness":
                choices = HANDEDNESS_CHOICES
            elif settings.task in CHOICE_TASKS:
                opts = [grid.answers[truth], *_perturb(grid.answers[truth], answers, rng)]
                choices = tuple(opts[i].format() for i in rng.permutation(len(opts)))
            out.append((item, choices))
    return out


_RANGES = {"translation": "`move AXIS DISTANCE` with AXIS x or y and DISTANCE a whole number of Å from -4 to 4 "
                          "(not 0)", "rotation": "`roll AXIS ANGLE` with AXIS x, y or z and ANGLE a multiple of 15 "
                          "degrees from -90 to 90 (not 0)",
           "zoom": "`move z DISTANCE` with DISTANCE a whole number of Å from 40 to 60 (positive brings the "
                   "molecule toward the viewer and makes atoms appear larger)"}


def _ask(settings: TaskExportSettings) -> str:
    """The question of a task after its description of the views (answer formats: module docstring)."""
    t = settings.task
    if t in _RANGES:
        ex = {"translation": "move x 3", "rotation": "roll y 15", "zoom": "move z 45"}[t]
        return f"Which single command {_RANGES[t]} was applied? Answer with the command only, e.g. `{ex}`."
    # choice tasks: no options in the text, every harness adds its own lettered options (harness_files)
    if t == "handedness":
        return ("Is the after view the same molecule turned by one `roll` command (axis x, y or z, a multiple "
                "of 15 degrees from -90 to 90, not 0), or its mirror image — the reflection through the plane "
                "that contains the view axis and bisects the screen x and -y axes, through the centre — "
                "turned by such a command?")
    return "Which sequence of commands, applied in order, was used?"


_MOVES = ("`move` translates along a screen axis, `roll` rotates about a screen axis through the molecule's "
          "bounding-box centre (right-hand rule). ")


def question_text(settings: TaskExportSettings, view_names) -> str:
    """MiSI-style question of a task (answer formats: module docstring)."""
    k = len(view_names)
    head = (f"The first {k} images show a molecule before a transformation, in the {', '.join(view_names)} views "
            f"({settings.image.kind} camera); the last image is the {view_names[0]} view after it. Screen axes of the "
            f"{view_names[0]} view: x to the right, y up, z toward the viewer; " + _MOVES)
    return head + _ask(settings)


def _atoms_text(positions: np.ndarray, numbers: np.ndarray) -> str:
    return "\n".join(f"  {symbol(int(z))} {x:.4f} {y:.4f} {w:.4f}" for z, (x, y, w) in zip(numbers, positions,
                                                                                            strict=True))


def r3_text(item: TaskItem, settings: TaskExportSettings) -> str:
    """The R3 arm's question (``benchmark.arms``): the molecule before and after the transformation as text, in
    the after (front) view's screen frame (x right, y up, z toward the viewer; Å, origin at the bounding-box
    centre before it), and the task's question."""
    rot = np.asarray(item.after_camera.rotation)
    pose = item.pose(item.truth)
    before = (item.positions - item.centre) @ rot.T
    after = (item.positions @ pose.matrix.T + pose.shift - item.centre) @ rot.T
    head = ("You are given the geometry of a molecule before and after a transformation as text: Cartesian "
            f"coordinates in Å (element x y z) in the {item.cameras[0].name} view's screen frame (x to the right, "
            "y up, z toward the viewer), origin at the molecule's bounding-box centre before it; " + _MOVES)
    return (head + _ask(settings) + "\nBefore:\n" + _atoms_text(before, item.numbers) + "\nAfter:\n"
            + _atoms_text(after, item.numbers))


def answer_form(settings: TaskExportSettings) -> str:
    """The choices-only arm's question of a command task: the answer's form alone, no views, no geometry."""
    return f"Give one command {_RANGES[settings.task]}. Answer with the command only."


def item_ceilings(qid: str, item: TaskItem, result: ItemResult, choices) -> TaskItemRecord:
    """The certificate's record of one question ``qid``: the item, the consistent set and ceilings (module
    docstring); what the oracle records of the item beyond the record's fields (the mirror normal, the grid)
    kept as its ``extra`` keys."""
    kw = {"id": qid, **result.to_dict(item.grid.answers)}  # keys the record does not name kept as extras
    if item.task == "handedness":
        names = [HANDEDNESS_CHOICES[int(m)] for m in sorted({c.mirror for c in result.consistent})]
        kw.update(consistent_choices=names, choice_ceiling=1.0 / len(names))
    elif choices:
        cons = {item.grid.answers[c.answer].format() for c in result.consistent}
        kw["consistent_choices"] = [c for c in choices if c in cons]
        kw["choice_ceiling"] = 1.0 / len(kw["consistent_choices"])
    return TaskItemRecord(**kw)


def _records(questions, paths, settings: TaskExportSettings, view_names) -> list[dict]:
    """The question records (``benchmark.harness_files``); category: the true command's axes."""
    recs = []
    for k, ((item, choices), imgs) in enumerate(zip(questions, paths, strict=True)):
        truth = item.grid.answers[item.truth]
        ans = HANDEDNESS_CHOICES[int(item.mirror)] if settings.task == "handedness" else truth.format()
        recs.append(with_constraints(question_record(k, item.structure_id, imgs,
                                                     question_text(settings, view_names), settings.task,
                                                     ans, choices=choices or None,
                                                     category="+".join(s.axis for s in truth.steps)),
                                     settings.constraints))
    return recs


def task_certificate(input_spec: str, settings: TaskExportSettings, questions, results, errors,
                     excluded=(), limit: int | None = None) -> TaskCertificate:
    """The certificate with its digest (module docstring), typed; ``excluded``: structures left out
    (handedness: achiral, ``tasks.ceiling.handedness_exclusions``), never in a denominator."""
    items = [q[0] for q in questions]
    grid = task_grid(settings.task)
    rows = tuple(item_ceilings(f"q{k:04d}", it, r, ch)
                 for k, ((it, ch), r) in enumerate(zip(questions, results, strict=True)))
    # fields written only when they apply (ABSENT otherwise: certificates without them keep their bytes)
    choice_mean = (float(np.mean([r.choice_ceiling for r in rows])) if items and items[0].task in CHOICE_TASKS
                   else ABSENT)
    spec = settings.view_setup().protocol_spec
    placement = ABSENT
    if spec.kind == "perspective":  # a perspective protocol file: where its cameras are (absent otherwise)
        placed = spec.positions[0] is not None
        placement = {
            "kind": "perspective", "fov_deg": spec.fov_deg, "source": spec.source,
            "rule": "pinholes at the file's positions (world Å, the molecule's frame as read)" if placed else
                    "framing rule of the task (every camera at one distance from the bounding-box centre, plus "
                    "backoff)",
            "positions": {v.name: [float(x) for x in p] for v, p in zip(spec.protocol.views, spec.positions,
                                                                        strict=True)} if placed else None}
    draft = TaskCertificate(
        format=FORMAT, version=VERSION, input=str(input_spec), task=settings.task,
        protocol=settings.protocol_record(), camera=settings.image.kind, depth_cue=settings.depth_cue,
        seed=settings.seed, settings=settings.record(), view_setup=settings.view_setup().to_dict(),
        tolerances=TaskTolerances(delta_angstrom=settings.delta, intensity_eps=settings.eps,
                                  explain_tol_angstrom=settings.explain_tol,
                                  delta_meaning="image-plane Å, to px with the after camera's scale (perspective: "
                                                "at the before bounding-box centre's depth)"),
        observation_model=observation_model(settings.view_setup()),
        answer_grid=grid.to_dict(), normalisers=default_normalisers(grid.ranges),
        mirror_normal_screen=list(items[0].mirror_normal) if items else None,
        libraries=library_versions(), items=rows,
        summary=summarise(items, list(results), seed=settings.seed, excluded=excluded) if items else None,
        excluded=[dict(e) for e in excluded], errors=errors, choice_ceiling_mean=choice_mean,
        placement=placement,
        limit=ABSENT if limit is None else int(limit))  # the first N molecules only: verify reads the same ones
    # every float at its stated resolution and the digest, over the JSON written (formats.records.sealed)
    return TaskCertificate.from_dict(sealed(draft.to_dict()))


def read_molecules(input_spec: str, limit: int | None = None) -> tuple[list[tuple], list[dict]]:
    """(id, positions, numbers) of every readable molecule of INPUT (the first ``limit`` items) in input
    order, and the failures."""
    dataset = load_input(str(input_spec))
    good, errors = [], []
    for it in dataset.items[:limit]:
        try:
            s = it.read()
            if s.is_periodic:
                raise InputError("a transformation task needs a molecule (this structure is periodic)")
        except Exception as exc:  # noqa: BLE001 - an unreadable item is reported, not fatal
            errors.append({"id": it.id, "error": " ".join(f"{type(exc).__name__}: {exc}".split())[:300]})
            continue
        good.append((it.id, np.asarray(s.positions), np.asarray(s.numbers)))
    return good, errors


def after_sidecar(item: TaskItem, consistent: list) -> dict:
    """The after view's sidecar (``sidecars/qNNNN_vK.json``, K the after view): its camera and, per answer of the
    consistent-answer set (a ``[mirror]`` answer: the mirror image turned), each atom of the answer's pose the
    after camera observes, projected (u, v px; ``tasks.model.project_pose``) with its atomic number: what the
    explorer draws over the after view, so it never rebuilds the question. Floats at the stated resolution."""
    from viewcert.tasks.model import project_pose  # lazy: as identify_all

    answers = [a.format() for a in item.grid.answers]
    candidates = []
    for text in consistent:
        answer, mirror = (text[: -len(" [mirror]")], True) if text.endswith(" [mirror]") else (text, False)
        uv, _, keep = project_pose(item, item.pose(answers.index(answer), mirror))
        candidates.append({"answer": text, "atoms": [{"atom": j, "Z": int(item.numbers[j]), "u": float(uv[j, 0]),
                                                      "v": float(uv[j, 1])} for j in np.flatnonzero(keep).tolist()]})
    cam = item.after_camera
    return quantize_tree({"width": int(cam.width), "height": int(cam.height), "camera": cam.to_dict(),
                          "candidates": candidates})


def build_task_benchmark(input_spec: str | os.PathLike, out: str | os.PathLike, settings: TaskExportSettings, *,
                         limit: int | None = None) -> Export:
    """Export a transformation benchmark (module docstring); returns it (``formats.export.Export``)."""
    out = Path(out)
    limits = active_limits()
    limits.check_questions(settings.per_structure, field="per_structure")  # before anything is read
    structures, errors = read_molecules(str(input_spec), limit)
    limits.check_questions(settings.per_structure * len(structures), field="per_structure")
    if not structures:
        raise InputError(f"no readable molecule in {input_spec}" + (f" ({errors[0]['error']})" if errors else ""),
                         source=str(input_spec))
    excl = (handedness_exclusions(structures, settings.delta)
            if settings.task == "handedness" and settings.chiral_only else {})
    questions = sample_questions(structures, settings, exclude=excl)
    if not questions:
        raise InputError(f"no question: every molecule of {input_spec} was excluded ({excl[next(iter(excl))]['reason']})",
                         source=str(input_spec))
    view_names = tuple(c.name for c in questions[0][0].cameras)
    paths = [render_item(it, settings, out, k) for k, (it, _) in enumerate(questions)]
    results = identify_all([it for it, _ in questions], delta=settings.delta, eps=settings.eps,
                           explain_tol=settings.explain_tol)
    records = _records(questions, paths, settings, view_names)
    harness = write_harness_files(records, out, settings.task, r3=[r3_text(it, settings) for it, _ in questions],
                                  choices_only=None if settings.task in CHOICE_TASKS else
                                  [answer_form(settings)] * len(records))
    cert = task_certificate(str(input_spec), settings, questions, results, errors, list(excl.values()), limit)
    write_text_atomic(out / "certificate.json", json_dumps(cert.to_dict()))
    for k, ((it, _), rec) in enumerate(zip(questions, cert.items, strict=True)):  # what the explorer draws
        write_text_atomic(out / "sidecars" / f"{Path(paths[k][-1]).stem}.json",
                          json_dumps(after_sidecar(it, rec.consistent or [])))
    return write_export(out, "task", {"task": settings.task, "input": str(input_spec), "settings": settings.record(),
                                      "n_questions": len(records), "items": question_items(records),
                                      "errors": errors, "harness_files": harness,
                                      "skipped": [{"id": e["structure_id"], "reason": e["reason"]}
                                                  for e in excl.values()]},
                        cert)
