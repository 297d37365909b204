"""MiSI-style transformation task items: structure + before protocol + a transformation drawn from a
discrete answer grid + the after view, under an orthographic or perspective camera, with or without
ChimeraX-like depth cueing.

Frames and units: world Å; cameras as in docs/conventions.md; image 1160×803 px (MiSI) by default. The
after view is the protocol's ``front`` camera, unchanged; the models move (``tasks.transforms``).

Observable per atom in the after view: its labelled image point (u, v) px and, with depth cueing, an
intensity in [0, 1] (1 = own colour, 0 = background). ChimeraX depth cue: the fog runs linearly from
``start`` to ``end`` (fractions, default 0.5 → 1) of the depth range [near, far] of the models' bounding
sphere (centre = bounding-box centre, radius = half its diagonal); intensity = 1 − clip((f − start) /
(end − start), 0, 1) with f = (depth − near)/(far − near). ``depth_cue_range="models"`` (ChimeraX) takes
that sphere where the models are after the move; ``"fixed"`` keeps the before pose's range (a renderer whose
fog planes do not follow the models). An atom is observed when its centre projects inside the image and
(perspective) lies more than ``near_clip`` Å in front of the pinhole.

Handedness (is the after view the molecule S turned, or its mirror image turned?). The before views give
S (taken as known: whether they determine S is what ``viewcert.certify`` measures). Every reflection of S
through a plane at its centre is the same mirror-image object in another orientation (H_n = Q·H_x, Q a
proper rotation), so "the mirror image" is an object plus a reference pose. Two readings:

- the mirror may be in **any** orientation: then Z·R·S (Z = mirror through the image plane) is a proper
  rotation Z·R·H of the mirror H·S that draws exactly the image of R·S under an orthographic camera
  without depth cue (the depth sign is not observed). Same and mirror are always both consistent: 0.5,
  whatever the before views show. This is the **one-view** ceiling (``identify``'s one-view witness).
- the task states the mirror's reference pose A·S (A = reflection through the plane at the centre with
  normal ``mirror_normal``) and both hypotheses are turned by an answer-grid rotation: candidates R_g·S
  and R_g·A·S for **every** grid rotation g (72 for the 36-rotation grid). A mirror candidate draws the
  image of a same candidate R_g'·S iff R_g·A·S and R_g'·S have equal labelled (x, y), i.e. (pairwise
  distances fix the depth differences up to sign) R_g·A·S = Z·R_g'·S up to a shift along z (the + sign
  would make a proper and an improper copy of a chiral S coincide). For S with no symmetry that means
  A = R_gᵀ·Z·R_g' — a finite alias set. The old plane ⟂ screen x is in it (R_y(±90)·H_x = Z·R_y(±90):
  the x-mirror turned a quarter about y is the image-plane mirror), which cost 0.9618 instead of 1.0.
  ``MIRROR_NORMAL`` is at Frobenius distance 2.0 from every member (``mirror_alias_distance``), so for an
  asymmetric S the after view with the known S decides handedness: 1.0. An achiral S (A·S = Q·S) can
  still alias when R_g·Q is a grid rotation: then the question has no answer and the ceiling says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

import numpy as np

from viewcert.cameras.camera import Camera, OrthographicCamera
from viewcert.cameras.policy import FramingPolicy, frame_points
from viewcert.cameras.protocol_files import ProtocolSpec
from viewcert.cameras.resolve import ResolvedProtocol, resolve
from viewcert.errors import InputError
from viewcert.render.image import check_kind_name
from viewcert.render.palette import get_style
from viewcert.render.raster import build_scene, render
from viewcert.render.visibility import visible_pixel_stats
from viewcert.structures import Structure
from viewcert.symmetry.pointgroup import point_group
from viewcert.tasks.transforms import Step, Transformation, bounding_box_centre, rigid_motion

TASKS = ("translation", "rotation", "zoom", "trans-rot", "rot-rot", "handedness")
MISI_SIZE = (1160, 803)
CHIRALITY = ("same", "mirror")
#: unit normal (after-camera screen frame: x right, y up, z toward the viewer) of the plane through the centre
#: that makes the handedness task's mirror image: it contains the view axis, 45° between screen x and y.
#: Chosen so that no grid rotation of the mirror is the image-plane mirror of a grid rotation of the
#: molecule (``mirror_alias_distance`` = 2.0 for the rotation grid; 0 for the plane ⟂ screen x).
MIRROR_NORMAL = (float(np.sqrt(0.5)), float(-np.sqrt(0.5)), 0.0)
#: tasks whose answer grid moves the models in the image plane: framed with room for every answer (``room``)
ROOM_TASKS = ("translation", "trans-rot")
ROOMS = ("grid", "none")
OBSERVE_MODELS = ("ideal", "visible")
#: the after camera is the protocol's first view, which must be named ``AFTER_VIEW`` (``task_protocol``)
AFTER_VIEW = "front"


def task_protocol(value) -> ResolvedProtocol:
    """The protocol of a transformation task from a name, a ``.toml``/``.json`` file, a ``Protocol``, a
    ``ProtocolSpec`` or a ``ResolvedProtocol`` (``viewcert.cameras.resolve``, once), checked by
    ``check_task_protocol``."""
    return check_task_protocol(resolve(value))


def check_task_protocol(rp: ResolvedProtocol) -> ResolvedProtocol:
    """``rp`` when its **first** view is the front camera — the after view, and the screen frame the answers
    are typed in — named ``front`` (axes-3 and axes-6 are; render-ceiling-5 and fibonacci-N are not);
    InputError otherwise. Only the views' rotations are used: kind, field of view and image size come from
    the ``ViewSetup``."""
    spec = rp.spec
    first = spec.protocol.views[0].name
    if first != AFTER_VIEW:
        raise InputError(f"protocol {spec.protocol.name!r}: the first view is the after camera and must be named "
                         f"{AFTER_VIEW!r}, got {first!r}", source=spec.source, field="views[0].name")
    return rp


def protocol_record(rp: ResolvedProtocol) -> dict:
    """The protocol in full for settings and certificates: name, view names, world→camera rotations (rows,
    shortest round-trip floats), where it came from and, for a file, its name and SHA-256 (bytes as read; no
    path, so the record does not depend on where the file sits)."""
    p = rp.protocol
    rec = {"name": p.name, "views": list(p.view_names),
           "rotations": [[[float(x) for x in row] for row in v.rotation.tolist()] for v in p.views],
           "after_view": p.views[0].name,
           "source": {"file": "file", "name": "builtin"}.get(rp.origin, "object")}
    spec = rp.spec
    if spec.sha256 is not None:
        rec["file"] = {"name": PurePath(str(spec.source)).name, "sha256": spec.sha256, "kind": spec.kind}
    return rec


@dataclass(frozen=True)
class AnswerGrid:
    """The discrete answer set of a task: ``answers`` in a fixed order, and per operation the interval of
    magnitudes (lo, hi) the MiSI scorer's default normaliser is taken from."""

    name: str
    answers: tuple[Transformation, ...]
    ranges: tuple[tuple[str, float, float], ...]  # (operation, lo, hi)

    def __len__(self) -> int:
        return len(self.answers)

    def index(self, answer: Transformation) -> int:
        return self.answers.index(answer)

    def range_of(self, operation: str) -> tuple[float, float]:
        for op, lo, hi in self.ranges:
            if op == operation:
                return lo, hi
        raise InputError(f"grid {self.name!r} has no {operation} range", field="operation")

    def to_dict(self) -> dict:
        return {"name": self.name, "n_answers": len(self.answers),
                "ranges": [{"operation": op, "lo": lo, "hi": hi} for op, lo, hi in self.ranges]}


def _mags(lo: int, hi: int, step: int, include_zero: bool) -> list[int]:
    return [m for m in range(lo, hi + 1, step) if include_zero or m != 0]


def translation_grid(axes=("x", "y"), lo=-4, hi=4, step=1, *, include_zero=False) -> AnswerGrid:
    """``move x|y D``, D in lo…hi Å by ``step`` (zero left out by default: it is no motion, and would be the
    same answer on every axis)."""
    ans = tuple(Transformation((Step("move", a, m),)) for a in axes for m in _mags(lo, hi, step, include_zero))
    return AnswerGrid("translation", ans, (("translate", float(lo), float(hi)),))


def rotation_grid(axes=("x", "y", "z"), lo=-90, hi=90, step=15, *, verb="roll", include_zero=False) -> AnswerGrid:
    """``roll x|y|z θ``, θ in lo…hi degrees by ``step`` (zero left out by default)."""
    ans = tuple(Transformation((Step(verb, a, m),)) for a in axes for m in _mags(lo, hi, step, include_zero))
    return AnswerGrid("rotation", ans, (("rotate", float(lo), float(hi)),))


def zoom_grid(lo=40, hi=60, step=1) -> AnswerGrid:
    """``move z D``, D in lo…hi Å (MiSI: 40…60, 21 bins; positive = toward the viewer)."""
    ans = tuple(Transformation((Step("move", "z", m),)) for m in range(lo, hi + 1, step))
    return AnswerGrid("zoom", ans, (("translate", float(lo), float(hi)),))


def composite_grid(name: str, first: AnswerGrid, second: AnswerGrid) -> AnswerGrid:
    """Ordered pairs (first step, then second step) of two grids."""
    ans = tuple(Transformation(a.steps + b.steps) for a in first.answers for b in second.answers)
    ranges = tuple(dict.fromkeys(first.ranges + second.ranges))
    return AnswerGrid(name, ans, ranges)


def task_grid(task: str) -> AnswerGrid:
    """The default answer grid of a task (see the issue's magnitudes).

    Parameters
    ----------
    task : str
        translation, rotation, zoom, trans-rot, rot-rot or handedness.

    Returns
    -------
    AnswerGrid
        The task's answers (magnitudes in Å or degrees).
    """
    if task == "translation":
        return translation_grid()
    if task in ("rotation", "handedness"):
        return rotation_grid()
    if task == "zoom":
        return zoom_grid()
    if task == "trans-rot":
        return composite_grid("trans-rot", translation_grid(), rotation_grid())
    if task == "rot-rot":
        return composite_grid("rot-rot", rotation_grid(), rotation_grid())
    raise InputError(f"task must be one of {TASKS}, got {task!r}", field="task")


@dataclass(frozen=True)
class ViewSetup:
    """Camera and style of the task's images. ``fov_deg``: perspective field of view of the smaller image
    side; ``margin_frac``: framing margin as a fraction of the smaller side (ChimeraX ``view`` pads 5 %);
    ``pad``: Å added around every atom when framing (``pad = 4`` keeps the models in frame after any
    ±4 Å translation answer);
    ``backoff``: Å added to the perspective framing distance (default: the zoom grid's largest move, so the
    models stay in front of the camera after every zoom answer); ``near_clip`` Å.
    ``room``: ``"grid"`` (default) frames the items of tasks whose grid moves the models in the image plane
    (``ROOM_TASKS``: translation, trans-rot) on the atoms in **every** pose of the grid, so no answer takes an
    atom out of the image; ``"none"`` frames on the before pose only (``motion_envelope``).
    ``observe``: ``"ideal"`` (atom centres in the image and in front of the near clip) or ``"visible"`` (also
    at least ``min_pixels`` pixel centres of the atom in the after view's rendered atom-ID buffer, style
    ``observe_style``, ``viewcert.render``; as ``viewcert.render.visibility`` observes for certify)."""

    camera: str = "orthographic"
    protocol: ResolvedProtocol = field(default_factory=lambda: task_protocol("axes-3"))  # views[0]: front
    width: int = MISI_SIZE[0]
    height: int = MISI_SIZE[1]
    fov_deg: float = 30.0
    margin_frac: float = 0.05
    pad: float = 0.0
    backoff: float = 60.0
    near_clip: float = 1.0
    depth_cue: bool = False
    depth_cue_start: float = 0.5
    depth_cue_end: float = 1.0
    depth_cue_range: str = "models"
    room: str = "grid"
    observe: str = "ideal"
    min_pixels: int = 1
    observe_style: str = "ball-and-stick"

    def __post_init__(self) -> None:
        if self.room not in ROOMS:
            raise InputError(f"room must be one of {ROOMS}, got {self.room!r}", field="room")
        if self.observe not in OBSERVE_MODELS:
            raise InputError(f"observe must be one of {OBSERVE_MODELS}, got {self.observe!r}", field="observe")
        if isinstance(self.min_pixels, bool) or int(self.min_pixels) != self.min_pixels or self.min_pixels < 1:
            raise InputError(f"min_pixels must be an integer ≥ 1, got {self.min_pixels!r}", field="min_pixels")
        get_style(self.observe_style)
        check_kind_name(self.camera, field="camera")
        if self.depth_cue_range not in ("models", "fixed"):
            raise InputError(f"depth_cue_range must be 'models' or 'fixed', got {self.depth_cue_range!r}",
                             field="depth_cue_range")
        if not 0.0 <= self.depth_cue_start < self.depth_cue_end <= 1.0:
            raise InputError("need 0 ≤ depth_cue_start < depth_cue_end ≤ 1", field="depth_cue_start")
        if not isinstance(self.protocol, ResolvedProtocol):
            raise TypeError(f"protocol must be a ResolvedProtocol (ViewSetup.from_options resolves the other "
                            f"forms), got {type(self.protocol).__name__}")
        check_task_protocol(self.protocol)

    @classmethod
    def from_options(cls, protocol="axes-3", **options) -> ViewSetup:
        """The boundary: ``protocol`` in any form ``viewcert.cameras.resolve`` accepts, resolved here, once;
        ``options``: the other fields."""
        return cls(protocol=task_protocol(protocol), **options)

    @property
    def resolved(self) -> ResolvedProtocol:
        """The protocol, resolved once (views[0] = the front/after camera)."""
        return self.protocol

    @property
    def protocol_spec(self) -> ProtocolSpec:
        """The resolved protocol's views and camera settings."""
        return self.protocol.spec

    def framing_policy(self) -> FramingPolicy:
        """The before cameras' framing (``viewcert.cameras.policy``): one fit per view at this setup's image
        size, margin ``margin_frac`` × the smaller side, ``pad``; pinholes at ``fov_deg``, ``backoff`` Å back."""
        return FramingPolicy(pad=self.pad, margin_px=self.margin_frac * min(self.width, self.height),
                             molecule_scale="per-view", kind=self.camera, fov_deg=self.fov_deg, backoff=self.backoff,
                             width=self.width, height=self.height)

    def to_dict(self) -> dict:
        """Every field; a protocol given as a file or object is recorded in full (``protocol_record``)."""
        d = dict(self.__dict__)
        rp = self.protocol
        d["protocol"] = rp.label if rp.origin == "name" else protocol_record(rp)
        return d


@dataclass(frozen=True, eq=False)
class Pose:
    """Where the models are: x' = M @ x + t applied to the item's positions (det M = −1 for a mirror)."""

    matrix: np.ndarray
    shift: np.ndarray


@dataclass(frozen=True, eq=False)
class TaskItem:
    """One question: ``positions`` (n, 3) Å and ``numbers`` (n,) before the transformation, the before
    cameras (protocol order; ``front`` is also the after camera), the answer grid and the true answer's
    index; for handedness, ``mirror`` says whether the after view shows the mirror image."""

    structure_id: str
    positions: np.ndarray
    numbers: np.ndarray
    task: str
    grid: AnswerGrid
    truth: int
    cameras: tuple[Camera, ...]
    setup: ViewSetup
    mirror: bool = False
    meta: dict = field(default_factory=dict)
    mirror_normal: tuple[float, float, float] = MIRROR_NORMAL

    @property
    def after_camera(self) -> Camera:
        return self.cameras[0]

    @property
    def centre(self) -> np.ndarray:
        return bounding_box_centre(self.positions)

    @property
    def radius(self) -> float:
        p = self.positions
        return 0.5 * float(np.linalg.norm(p.max(axis=0) - p.min(axis=0)))

    def pose(self, answer: int, mirror: bool | None = None) -> Pose:
        """The rigid motion of grid answer ``answer``; when ``mirror``, the structure is first reflected
        through the plane at the centre with normal ``mirror_normal`` (after-camera screen frame) — the
        mirror image's stated reference pose (module docstring, "Handedness")."""
        m, t = rigid_motion(self.grid.answers[answer], self.after_camera.rotation, self.centre)
        if self.mirror if mirror is None else mirror:
            n = np.asarray(self.mirror_normal, dtype=np.float64) @ self.after_camera.rotation  # world frame
            h = np.eye(3) - 2.0 * np.outer(n, n)
            m, t = m @ h, m @ (self.centre - h @ self.centre) + t
        return Pose(m, t)

    def to_dict(self) -> dict:
        return {"structure_id": self.structure_id, "task": self.task, "truth": self.grid.answers[self.truth].format(),
                "mirror": self.mirror,
                "mirror_normal_screen": [float(x) for x in self.mirror_normal], "n_atoms": int(len(self.numbers)), "grid": self.grid.to_dict(), **self.meta}


def mirror_alias_distance(normal, grid: AnswerGrid) -> float:
    """Smallest Frobenius distance between the reflection H_n (``normal``, screen frame) and the alias set
    {R_gᵀ·Z·R_g'} of the grid's rotations (module docstring, "Handedness"); 0 = some grid rotation of the
    mirror is the image-plane mirror of a grid rotation of the molecule."""
    n = np.asarray(normal, dtype=np.float64)
    n = n / np.linalg.norm(n)
    h = np.eye(3) - 2.0 * np.outer(n, n)
    rs = np.array([rigid_motion(a, np.eye(3), np.zeros(3))[0] for a in grid.answers])
    z = np.diag([1.0, 1.0, -1.0])
    alias = np.einsum("gji,jk,hkl->ghil", rs, z, rs)  # R_gᵀ Z R_h
    return float(np.linalg.norm(alias - h, axis=(2, 3)).min())


def motion_envelope(positions: np.ndarray, task: str, grid: AnswerGrid, setup: ViewSetup) -> np.ndarray:
    """The points the cameras are framed on (Å, world). Rule: with ``setup.room == "grid"`` and a task of
    ``ROOM_TASKS``, the atoms in every pose of the grid (each answer typed at the protocol's front camera,
    rotating about the before bounding-box centre) together with the before pose — the motion envelope, so
    the largest answer keeps every atom in the image; otherwise ``positions`` unchanged."""
    p = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    if setup.room != "grid" or task not in ROOM_TASKS:
        return p
    r = setup.protocol_spec.protocol.views[0].rotation
    c = bounding_box_centre(p)
    posed = [p]
    for a in grid.answers:
        m, t = rigid_motion(a, r, c)
        posed.append(p @ m.T + t)
    return np.concatenate(posed)


def achiral_exclusion(structure_id: str, positions, numbers, tolerance: float) -> dict | None:
    """Why a structure has no handedness question, or None when it has one. A structure whose point group
    within ``tolerance`` (Å; the task's δ) has an improper operation is achiral: its mirror image is the
    structure turned, so "same or mirror?" has no answer (``viewcert.symmetry.pointgroup``)."""
    pg = point_group(np.asarray(positions, dtype=np.float64).reshape(-1, 3), np.asarray(numbers), tolerance)
    if pg.is_chiral:
        return None
    return {"structure_id": structure_id, "point_group": pg.symbol, "tolerance_angstrom": float(tolerance),
            "reason": f"achiral: point group {pg.symbol} within {tolerance:g} Å has an improper operation "
                      "(its mirror image is the molecule turned; the handedness question has no answer)"}


def make_item(structure_id: str, positions, numbers, task: str, truth: int, setup: ViewSetup, *,
              grid: AnswerGrid | None = None, mirror: bool = False,
              mirror_normal=MIRROR_NORMAL) -> TaskItem:
    """A task item; positions are taken as read (Å), numbers are atomic numbers (the labels drawn).

    Parameters
    ----------
    structure_id : str
        The structure's id.
    positions : array_like
        (n, 3) positions before the transformation (Cartesian Å, as read).
    numbers : array_like
        (n,) atomic numbers (the labels drawn).
    task : str
        translation, rotation, zoom, trans-rot, rot-rot or handedness.
    truth : int
        Index of the true answer in the grid.
    setup : ViewSetup
        Cameras and style of the images.
    grid : AnswerGrid, optional
        The answers (default: ``task_grid(task)``).
    mirror : bool
        Handedness: the after view shows the mirror image.
    mirror_normal : tuple of float
        Unit normal of the mirror plane in the after camera's screen frame (x right, y up, z to the viewer).

    Returns
    -------
    TaskItem
        The question.
    """
    p = np.array(positions, dtype=np.float64).reshape(-1, 3)
    z = np.array(numbers, dtype=np.int64).reshape(-1)
    if len(p) == 0 or len(z) != len(p):
        raise InputError(f"{structure_id}: need n ≥ 1 positions and as many numbers", field="positions")
    grid = grid or task_grid(task)
    if not 0 <= truth < len(grid):
        raise InputError(f"truth index {truth} outside the {len(grid)}-answer grid", field="truth")
    p.setflags(write=False)
    z.setflags(write=False)
    n = np.asarray(mirror_normal, dtype=np.float64).reshape(-1)
    if n.shape != (3,) or not np.isfinite(n).all() or np.linalg.norm(n) < 1e-9:
        raise InputError(f"mirror_normal must be a non-zero 3-vector, got {mirror_normal!r}", field="mirror_normal")
    n = tuple(float(x) for x in n / np.linalg.norm(n))
    cams = frame_points(setup.resolved, motion_envelope(p, task, grid, setup), setup.framing_policy())
    return TaskItem(structure_id, p, z, task, grid, int(truth), cams, setup, bool(mirror), mirror_normal=n)


def depth_cue_intensity(depth: np.ndarray, near: float, far: float, start: float = 0.5, end: float = 1.0) -> np.ndarray:
    """ChimeraX-like depth cue: 1 in front of ``start`` of [near, far], falling linearly to 0 at ``end``."""
    span = max(far - near, 1e-12)
    f = (np.asarray(depth, dtype=np.float64) - near) / span
    return 1.0 - np.clip((f - start) / (end - start), 0.0, 1.0)


@dataclass(frozen=True, eq=False)
class AfterView:
    """Observed after view: uv (m, 2) px, labels (m,), intensity (m,) (ones without depth cue), and the
    drawn atom index (m,) — hidden, for explanations only."""

    uv: np.ndarray
    labels: np.ndarray
    intensity: np.ndarray
    atom_index: np.ndarray


def project_pose(item: TaskItem, pose: Pose, camera: Camera | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every atom of the item in ``pose`` through ``camera`` (default the after camera): uv (n, 2) px (0 where
    unobserved), intensity (n,) (ones without depth cue) and keep (n,) bool = observed (module docstring)."""
    cam = camera or item.after_camera
    s = item.setup
    moved = item.positions @ pose.matrix.T + pose.shift
    cam_xyz = cam.to_camera(moved)
    depth = -cam_xyz[:, 2]
    keep = np.ones(len(moved), dtype=bool)
    if isinstance(cam, OrthographicCamera):
        uv = np.stack([0.5 * cam.width + cam.scale * cam_xyz[:, 0], 0.5 * cam.height - cam.scale * cam_xyz[:, 1]], 1)
    else:
        keep &= depth > s.near_clip
        with np.errstate(divide="ignore", invalid="ignore"):
            uv = np.stack([cam.cx + cam.focal * cam_xyz[:, 0] / depth, cam.cy - cam.focal * cam_xyz[:, 1] / depth], 1)
    keep &= np.isfinite(uv).all(axis=1)
    keep &= (uv[:, 0] >= 0) & (uv[:, 0] < cam.width) & (uv[:, 1] >= 0) & (uv[:, 1] < cam.height)
    if s.observe == "visible":
        keep &= visible_atoms(moved, item.numbers, cam, s)
    inten = np.ones(len(moved))
    if s.depth_cue:
        c = item.centre
        if s.depth_cue_range == "models":
            c = pose.matrix @ c + pose.shift
        dc = -cam.to_camera(c)[0, 2]
        inten = depth_cue_intensity(depth, dc - item.radius, dc + item.radius, s.depth_cue_start, s.depth_cue_end)
    uv = np.where(keep[:, None], uv, 0.0)
    return uv, inten, keep


def visible_atoms(moved: np.ndarray, numbers: np.ndarray, camera: Camera, setup: ViewSetup) -> np.ndarray:
    """(n,) bool: atom i shows at least ``setup.min_pixels`` pixel centres in the atom-ID buffer of the
    atoms at ``moved`` (Å, world) rendered through ``camera`` in ``setup.observe_style`` (bonds occlude;
    ``viewcert.render.visibility.visible_pixel_stats`` counts the pixels, as certify's ``visible`` does)."""
    scene = build_scene(Structure(positions=moved, numbers=numbers), get_style(setup.observe_style))
    res = render(scene, camera, rgb=False, supersample=1)
    counts, _ = visible_pixel_stats(res.atom_id, scene.n_atoms)
    out = np.zeros(len(moved), dtype=bool)
    out[scene.atom_index[counts >= setup.min_pixels]] = True
    return out


def observation_model(setup: ViewSetup) -> str:
    """One line naming the after view's observation model (recorded in results and certificates)."""
    base = "exact atom centres; unobserved outside the image or behind the near clip"
    if setup.observe == "ideal":
        return f"ideal: {base}"
    return (f"visible: {base} or with fewer than {setup.min_pixels} pixel centre(s) in the after view's "
            f"rendered atom-ID buffer (style {setup.observe_style}, bonds occlude)")


def observe_pose(item: TaskItem, pose: Pose, camera: Camera | None = None) -> AfterView:
    """What ``camera`` (default the after camera) shows of the item's models in ``pose``."""
    uv, inten, keep = project_pose(item, pose, camera)
    idx = np.flatnonzero(keep)
    return AfterView(np.ascontiguousarray(uv[idx]), item.numbers[idx].copy(), inten[idx], idx)
