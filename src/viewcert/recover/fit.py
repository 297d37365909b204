"""Refine a camera hypothesis by least squares on the atoms it matches, re-matching as it improves (ICP).

Models (parameters; the fitted frame is the world after a fixed affine pre-transform, ``Frame``):

- orthographic: rotation (a rotation vector applied to the start rotation), log scale (px/Å), 2D offset (px);
- perspective: the same and κ, the inverse distance (1/Å) from the pinhole to the frame's origin (κ = 0 is the
  orthographic limit; the focal length is s/κ px), and the principal point (px) when ``free_principal``;
- either with ``per_axis``: the y and z axes of the frame each scaled on their own (log factors), as matplotlib's
  3D axes scale each data axis to its limits.

The matrix P maps the frame's points X to pixels, with (x, y, z) = R D X (camera x right, y up, z toward the viewer;
docs/conventions.md) and the frame's origin drawn at (u₀, v₀): orthographic ``u = u₀ + s x``, ``v = v₀ − s y``;
perspective ``u = cx + s (x + tx)/(1 − κz)``, ``v = cy − s (y + ty)/(1 − κz)`` with tx = (u₀ − cx)/s, ty = −(v₀ − cy)/s
(the weak-perspective limit as κ → 0, which keeps the fit well conditioned for distant cameras).

Each round matches every detection to the nearest atom of its element the camera shows (``evidence.assess`` with a
gate that shrinks from the hypothesis tolerance to ``match_px``) and solves ``scipy.optimize.least_squares`` (a soft
L1 loss of scale 1 px, so one bad match cannot drag the camera) on the matched pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.errors import CameraError
from viewcert.recover.evidence import Evidence, assess, project
from viewcert.recover.model import DetectedAtoms

__all__ = ["FitModel", "Frame", "FitResult", "initial_parameters", "matrix_of", "refine"]

_FLIP = np.diag([1.0, -1.0, -1.0])
_ROUNDS = 8
_LOG_SCALE = 30.0  # |log scale| bound: keeps exp() finite while the solver searches
_LOG_AXIS = 5.0  # |log| of a per-axis scale: an axis drawn at most e⁵ ≈ 150× longer than another


@dataclass(frozen=True, eq=False)
class Frame:
    """A fixed affine pre-transform X_fit = A X + b of the world (Å) in which cameras are fitted, and its name
    (``"world"`` or ``"axes"``: each axis scaled to the data's extent, matplotlib's autoscale)."""

    name: str
    a: np.ndarray
    b: np.ndarray

    def apply(self, xyz: np.ndarray) -> np.ndarray:
        """The frame's coordinates of world points (n, 3)."""
        return xyz @ self.a.T + self.b

    def from_world(self, matrix: np.ndarray) -> np.ndarray:
        """The 3×4 matrix acting on the frame's points of one acting on world points."""
        inv = np.linalg.inv(self.a)
        out = np.empty((3, 4))
        out[:, :3] = matrix[:, :3] @ inv
        out[:, 3] = matrix[:, 3] - out[:, :3] @ self.b
        return out

    def to_world(self, matrix: np.ndarray) -> np.ndarray:
        """The 3×4 matrix acting on world points of one acting on the frame's."""
        out = np.empty((3, 4))
        out[:, :3] = matrix[:, :3] @ self.a
        out[:, 3] = matrix[:, :3] @ self.b + matrix[:, 3]
        return out


@dataclass(frozen=True)
class FitModel:
    """What is fitted: kind (``"orthographic"`` | ``"perspective"``), per_axis scales, a free principal point."""

    kind: str
    per_axis: bool = False
    free_principal: bool = False

    @property
    def name(self) -> str:
        """The model's name in reports."""
        return self.kind + (", per-axis" if self.per_axis else "")

    @property
    def n_params(self) -> int:
        """Number of free parameters."""
        base = 6 if self.kind == "orthographic" else 7 + 2 * self.free_principal
        return base + 2 * self.per_axis


def rotation_matrix(rotvec: np.ndarray) -> np.ndarray:
    """Rodrigues' formula: the rotation (3×3) by |rotvec| radians about rotvec."""
    theta = math.sqrt(float(rotvec @ rotvec))
    if theta < 1e-12:
        x, y, z = rotvec
        return np.array([[1.0, -z, y], [z, 1.0, -x], [-y, x, 1.0]])
    k = rotvec / theta
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + math.sin(theta) * kx + (1.0 - math.cos(theta)) * (kx @ kx)


def matrix_of(params: np.ndarray, model: FitModel, r0: np.ndarray, principal: tuple[float, float]) -> np.ndarray:
    """The 3×4 matrix (frame → px) of a parameter vector (module docstring)."""
    rot = rotation_matrix(params[:3]) @ r0
    rd = rot * np.array([1.0, math.exp(params[-2]), math.exp(params[-1])]) if model.per_axis else rot
    s = math.exp(params[3])
    u0, v0 = params[4], params[5]
    p = np.zeros((3, 4))
    if model.kind == "orthographic":
        p[0, :3], p[0, 3] = s * rd[0], u0
        p[1, :3], p[1, 3] = -s * rd[1], v0
        p[2, 3] = 1.0
        return p
    kappa = params[6]
    cx, cy = (params[7], params[8]) if model.free_principal else principal
    # u = cx + s (x + tx) / (1 − κ z), v = cy − s (y + ty) / (1 − κ z), with (x, y, z) = R D X and the frame's
    # origin drawn at (u0, v0): tx = (u0 − cx)/s, ty = −(v0 − cy)/s; w = 1 − κ z (the depth over 1/κ)
    tx, ty = (u0 - cx) / s, -(v0 - cy) / s
    p[0, :3] = s * rd[0] - cx * kappa * rd[2]
    p[0, 3] = s * tx + cx
    p[1, :3] = -s * rd[1] - cy * kappa * rd[2]
    p[1, 3] = -s * ty + cy
    p[2, :3] = -kappa * rd[2]
    p[2, 3] = 1.0
    return p


def initial_parameters(matrix: np.ndarray, kind: str, model: FitModel, width: int, height: int,
                       focal: float | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """(params, r0) starting ``model`` from a 3×4 hypothesis of kind ``kind`` (in the frame whose origin the
    parameters draw at (u0, v0)); a perspective model started from an orthographic hypothesis starts at the
    inverse distance s/focal (``focal`` px; none: 0, the orthographic limit); None when the matrix is not a
    camera."""
    try:
        proj = PixelProjection(matrix, width, height, kind)
        cam: Any
        cam, _ = proj.equivalent()
    except CameraError:
        return None
    matrix = proj.matrix  # canonical: w is the depth for a perspective camera
    r0 = np.array(cam.rotation)
    extra = [0.0, 0.0] if model.per_axis else []
    origin = np.zeros(3)
    uv = project(matrix, origin[None])[0][0]
    if kind == "orthographic":
        s, kappa = cam.scale, (0.0 if focal is None else cam.scale / focal)
        principal = [0.5 * width, 0.5 * height]
    else:
        depth = float(matrix[2, :3] @ origin + matrix[2, 3])
        if depth <= 0:
            return None
        s, kappa = cam.focal / depth, 1.0 / depth
        principal = [cam.cx, cam.cy]
    head = [0.0, 0.0, 0.0, math.log(max(s, 1e-12)), uv[0], uv[1]]
    if model.kind == "orthographic":
        return np.array(head + extra), r0
    pp = principal if model.free_principal else []
    return np.array(head + [kappa] + pp + extra), r0


@dataclass(frozen=True, eq=False)
class FitResult:
    """A refined camera: matrix (frame → px), its model, the evidence at ``match_px``, the fitted parameters and
    the singular values of the final Jacobian (relative to the largest; a near-zero one: not determined)."""

    matrix: np.ndarray
    model: FitModel
    evidence: Evidence
    params: np.ndarray
    r0: np.ndarray
    conditioning: float


def _conditioning(jac: np.ndarray) -> float:
    """How well the picture fixes the camera's rotation: the smallest singular value of the rotation columns of
    the Jacobian (unit columns) after removing what the other parameters (scale, offset, κ, principal point,
    per-axis scales) can do. 0: a family of rotations draws the same picture; nuisance parameters the drawn atoms
    leave loose (the principal point of a nearly orthographic camera) do not count."""
    if jac.size == 0 or jac.shape[0] < 3:
        return 0.0
    rot = jac[:, :3]
    norms = np.linalg.norm(rot, axis=0)
    if norms.min() <= 1e-12 * max(float(norms.max()), 1e-300):
        return 0.0
    rot = rot / norms
    other = jac[:, 3:]
    if other.size:
        u, sv, _ = np.linalg.svd(other, full_matrices=False)
        q = u[:, sv > 1e-9 * max(float(sv[0]), 1e-300)]
        rot = rot - q @ (q.T @ rot)
    return float(np.linalg.svd(rot, compute_uv=False)[-1])


def _residuals(params, model, r0, principal, xyz, target):
    p = matrix_of(params, model, r0, principal)
    uv, w = project(p, xyz)
    res = (uv - target).ravel()
    return np.where(np.isfinite(res), res, 1e3)


def _solve(params, model, r0, principal, xyz, target):
    """One robust least-squares solve; κ ≥ 0 (a perspective camera in front of the atoms, never the inverted
    perspective that draws far atoms larger)."""
    lower = np.full(len(params), -np.inf)
    upper = np.full(len(params), np.inf)
    lower[3], upper[3] = -_LOG_SCALE, _LOG_SCALE  # log px per frame unit
    if model.kind == "perspective":
        lower[6] = 0.0
    if model.per_axis:
        lower[-2:], upper[-2:] = -_LOG_AXIS, _LOG_AXIS
    params = np.clip(params, lower, upper)
    return least_squares(_residuals, params, args=(model, r0, principal, xyz, target), loss="soft_l1",
                         f_scale=1.0, x_scale="jac", max_nfev=200, bounds=(lower, upper))


def refine(matrix: np.ndarray, kind: str, model: FitModel, frame: Frame, world: np.ndarray, labels: np.ndarray,
           det: DetectedAtoms, width: int, height: int, gate: float, match_px: float,
           focal: float | None = None) -> FitResult | None:
    """ICP refinement of one hypothesis ``matrix`` (acting on the frame's points; ``world``: the atoms, Å) (module
    docstring); None when it loses too many matches to be fitted. The evidence is judged in the world (drawn
    radii in Å), the parameters fitted in the frame."""
    xyz = frame.apply(world)
    det_uv, det_labels, det_radii = det.uv, det.labels, det.radii

    def judge(p, g, radii):
        return assess(frame.to_world(p), model.kind, world, labels, det_uv, det_labels, det_radii, width, height,
                      float(g), radii_angstrom=radii)

    start = initial_parameters(matrix, kind, model, width, height, focal)
    if start is None:
        return None
    params, r0 = start
    principal = (0.5 * width, 0.5 * height)
    gates = np.geomspace(max(gate, match_px), match_px, 3) if gate > match_px else [match_px]
    need = max(4, (model.n_params + 3) // 2)
    previous = None
    radii = None
    for g in gates:
        for _ in range(_ROUNDS):
            p = matrix_of(params, model, r0, principal)
            ev = judge(p, g, radii)
            radii = ev.radii_angstrom
            ok = ev.matched_atom >= 0
            if ok.sum() < need:
                return None
            key = ev.matched_atom.tobytes()
            if key == previous:
                break
            previous = key
            params = _solve(params, model, r0, principal, xyz[ev.matched_atom[ok]], det_uv[ok]).x
        previous = None
    p = matrix_of(params, model, r0, principal)
    ev = judge(p, match_px, None)
    ok = ev.matched_atom >= 0
    cond = 0.0
    if ok.sum() * 2 >= model.n_params:
        fit = _solve(params, model, r0, principal, xyz[ev.matched_atom[ok]], det_uv[ok])
        params = fit.x
        p = matrix_of(params, model, r0, principal)
        ev = judge(p, match_px, None)
        cond = _conditioning(fit.jac)
    return FitResult(p, model, ev, params, r0, cond)
