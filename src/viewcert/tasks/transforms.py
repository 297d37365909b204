"""ChimeraX screen-axis transformations (``move``, ``turn``, ``roll``) as value objects.

Semantics (ChimeraX ``move``/``turn``/``roll`` without a ``models`` option; the camera stays put and the
models move, which is the same picture as ChimeraX moving its camera the opposite way):

- Axes are **screen** axes of the camera the command is typed at (docs/conventions.md): x = right,
  y = up, z = toward the viewer; in world coordinates they are the rows R[0], R[1], R[2] of the camera's
  world→camera rotation R. The camera does not move, so every step of a composite uses the same axes.
- ``move AXIS D``: translate the models by D Å along the screen axis (``move z 45`` brings them 45 Å
  toward the viewer: larger under a perspective camera, unchanged under an orthographic one).
- ``turn AXIS θ`` (= ``roll AXIS θ`` for one frame; MiSI writes ``roll``): rotate by θ degrees about the
  screen axis through the **centre of rotation**, right-hand rule (``turn z 90`` takes (1, 0, 0) about the
  origin to (0, 1, 0)). The centre is body-fixed: MiSI's bounding-box centre of the models before the
  command, carried along by every earlier step of a composite (ChimeraX's "center of models" is computed in
  scene coordinates, which a camera motion does not change).
- A composite is an ordered sequence of steps, written comma-separated: ``move x -2, roll y 30``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from viewcert.errors import InputError

AXES = ("x", "y", "z")
VERBS = ("move", "turn", "roll")
_STEP = re.compile(r"^\s*(move|turn|roll)\s+([xyz])\s+([-+]?(?:\d+\.?\d*|\.\d+))\s*$", re.IGNORECASE)


@dataclass(frozen=True, order=True)
class Step:
    """One command: verb ``move`` (translation, Å) or ``turn``/``roll`` (rotation, degrees) about or along
    screen axis ``axis`` by ``magnitude``."""

    verb: str
    axis: str
    magnitude: float

    def __post_init__(self) -> None:
        verb, axis = str(self.verb).lower(), str(self.axis).lower()
        if verb not in VERBS:
            raise InputError(f"verb must be one of {VERBS}, got {self.verb!r}", field="verb")
        if axis not in AXES:
            raise InputError(f"axis must be one of {AXES}, got {self.axis!r}", field="axis")
        if not math.isfinite(self.magnitude):
            raise InputError(f"magnitude must be finite, got {self.magnitude!r}", field="magnitude")
        object.__setattr__(self, "verb", verb)
        object.__setattr__(self, "axis", axis)
        object.__setattr__(self, "magnitude", float(self.magnitude))

    @property
    def operation(self) -> str:
        """``"translate"`` or ``"rotate"`` (turn and roll are the same rotation)."""
        return "translate" if self.verb == "move" else "rotate"

    def format(self) -> str:
        m = self.magnitude
        num = f"{int(m)}" if m == int(m) else f"{m:g}"
        return f"{self.verb} {self.axis} {num}"


@dataclass(frozen=True, order=True)
class Transformation:
    """An ordered sequence of steps (a single command is a one-step sequence)."""

    steps: tuple[Step, ...]

    def __post_init__(self) -> None:
        steps = tuple(self.steps)
        if not steps or not all(isinstance(s, Step) for s in steps):
            raise InputError("a transformation needs at least one Step", field="steps")
        object.__setattr__(self, "steps", steps)

    def format(self) -> str:
        return ", ".join(s.format() for s in self.steps)

    def __str__(self) -> str:
        return self.format()


def parse_step(text: str) -> Step:
    """``"move x 3"`` → Step; InputError naming the text otherwise."""
    m = _STEP.match(text)
    if m is None:
        raise InputError(f"cannot read {text!r} as 'move|turn|roll x|y|z NUMBER'", field="command")
    return Step(m.group(1), m.group(2), float(m.group(3)))


def parse_command(text: str) -> Transformation:
    """A comma-separated composite, e.g. ``"move x -2, roll y 30"``, in order.

    Parameters
    ----------
    text : str
        Commands such as ``move x -2`` (Å) or ``turn y 30`` (degrees), comma-separated.

    Returns
    -------
    Transformation
        The steps in order.
    """
    if not isinstance(text, str) or not text.strip():
        raise InputError("empty transformation command", field="command")
    return Transformation(tuple(parse_step(part) for part in text.split(",")))


def axis_angle_matrix(axis: np.ndarray, degrees: float) -> np.ndarray:
    """3×3 right-hand rotation by ``degrees`` about the unit vector ``axis`` (Rodrigues), acting on column
    vectors: x' = M @ x."""
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    t = math.radians(degrees)
    c, s = math.cos(t), math.sin(t)
    k = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return c * np.eye(3) + s * k + (1.0 - c) * np.outer(a, a)


def bounding_box_centre(positions: np.ndarray) -> np.ndarray:
    """Centre (Å, world) of the axis-aligned bounding box of ``positions`` (n, 3)."""
    p = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    return 0.5 * (p.min(axis=0) + p.max(axis=0))


def rigid_motion(transformation: Transformation, camera_rotation: np.ndarray, centre) -> tuple[np.ndarray, np.ndarray]:
    """The world-frame rigid motion (M, t) with x' = M @ x + t that ``transformation`` applies when typed at
    a camera with world→camera rotation ``camera_rotation``, rotating about the body-fixed ``centre`` (Å).

    Parameters
    ----------
    transformation : Transformation
        The commands, typed at the camera.
    camera_rotation : numpy.ndarray
        (3, 3) world→camera rotation (screen axes x right, y up, z toward the viewer).
    centre : array_like
        (3,) rotation centre (world Å).

    Returns
    -------
    tuple of numpy.ndarray
        M (3, 3) and t (3,) in Å, world frame.
    """
    r = np.asarray(camera_rotation, dtype=np.float64)
    m = np.eye(3)
    t = np.zeros(3)
    c = np.asarray(centre, dtype=np.float64).copy()
    for step in transformation.steps:
        axis = r[AXES.index(step.axis)]
        if step.operation == "translate":
            t = t + step.magnitude * axis
            c = c + step.magnitude * axis
        else:
            q = axis_angle_matrix(axis, step.magnitude)
            m = q @ m
            t = q @ t + c - q @ c
    return m, t


def apply(transformation: Transformation, positions, camera_rotation, centre=None) -> np.ndarray:
    """Positions (n, 3) Å after ``transformation`` typed at a camera with world→camera ``camera_rotation``;
    ``centre`` defaults to the bounding-box centre of ``positions`` (MiSI's centre of rotation)."""
    p = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    c = bounding_box_centre(p) if centre is None else centre
    m, t = rigid_motion(transformation, camera_rotation, c)
    return p @ m.T + t
