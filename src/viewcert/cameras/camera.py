"""Exact camera models (frozen value objects).

Frames (docs/conventions.md): ``rotation`` R maps world to camera, ``cam = R @ (x - origin)``; its rows are
the camera axes in world coordinates: x = screen right, y = screen up, z = toward the viewer, so the view
direction (into the scene) is ``-R[2]``. Image (u, v) in pixels: u right, v down, origin at the top-left
corner of the top-left pixel; pixel (row i, col j) has its centre at (j + 0.5, i + 0.5).

Orthographic: ``u = W/2 + s·x_cam``, ``v = H/2 − s·y_cam`` with ``cam = R @ (x − center)``, s in px/Å.
Perspective (pinhole at ``position``): ``u = cx + f·x_cam/d``, ``v = cy − f·y_cam/d`` with depth d = −z_cam.
Depth is in Å along the view direction, larger = farther from the viewer (orthographic: measured from the
plane through ``center``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from viewcert.errors import CameraError

ROTATION_ATOL = 1e-9


def _frozen_array(a, shape: tuple[int, ...], name: str) -> np.ndarray:
    arr = np.array(a, dtype=np.float64)
    if arr.shape != shape:
        raise CameraError(f"{name} must have shape {shape}, got {arr.shape}")
    if not all(map(math.isfinite, arr.ravel().tolist())):  # a handful of entries: cheaper than np.isfinite
        raise CameraError(f"{name} has non-finite entries")
    arr.setflags(write=False)
    return arr


#: (shape, float64 bytes, atol) of rotations ``check_rotation`` passed: its verdict is a pure function of
#: these, and every item's cameras reuse the protocol's few rotations (cleared when full; a refused
#: rotation is never stored, so it is refused with the same message every time)
_PROPER: set[tuple] = set()
_PROPER_MAX = 256


def check_rotation(rotation: np.ndarray, *, name: str = "rotation", atol: float = ROTATION_ATOL) -> None:
    """CameraError unless ``rotation`` is a proper rotation (orthonormal rows, det = +1) within atol."""
    r = np.asarray(rotation, dtype=np.float64)
    key = (r.shape, r.tobytes(), atol)
    if key in _PROPER:
        return
    err = np.abs(r @ r.T - np.eye(3)).max()
    if err > atol:
        raise CameraError(f"{name} is not orthonormal (max |R Rᵀ − I| = {err:.3g} > {atol:g})")
    det = float(np.linalg.det(r))
    if abs(det - 1.0) > atol * 10:
        raise CameraError(f"{name} has det = {det:.6f}; a camera rotation needs det = +1 (no reflection)")
    if len(_PROPER) >= _PROPER_MAX:
        _PROPER.clear()
    _PROPER.add(key)


def _check_image(width: int, height: int) -> None:
    if int(width) != width or int(height) != height or width <= 0 or height <= 0:
        raise CameraError(f"image size must be positive integers, got {width}×{height}")


def _as_points(xyz) -> tuple[np.ndarray, bool]:
    p = np.asarray(xyz, dtype=np.float64)
    single = p.ndim == 1
    p = np.atleast_2d(p)
    if p.shape[-1] != 3 or p.ndim != 2:
        raise CameraError(f"points must have shape (n, 3) or (3,), got {np.shape(xyz)}")
    return p, single


def _as_pixels(uv) -> tuple[np.ndarray, bool]:
    p = np.asarray(uv, dtype=np.float64)
    single = p.ndim == 1
    p = np.atleast_2d(p)
    if p.shape[-1] != 2 or p.ndim != 2:
        raise CameraError(f"pixel coordinates must have shape (n, 2) or (2,), got {np.shape(uv)}")
    return p, single


@dataclass(frozen=True, eq=False)
class OrthographicCamera:
    """Parallel projection. rotation: world→camera (3×3, rows = camera axes); center: world point (Å) that
    maps to the image centre; scale: px per Å; width, height: image size in px."""

    rotation: np.ndarray
    center: np.ndarray
    scale: float
    width: int
    height: int
    name: str = ""

    kind = "orthographic"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rotation", _frozen_array(self.rotation, (3, 3), "rotation"))
        object.__setattr__(self, "center", _frozen_array(self.center, (3,), "center"))
        check_rotation(self.rotation, name=f"rotation of camera {self.name!r}")
        if not (np.isfinite(self.scale) and self.scale > 0):
            raise CameraError(f"scale must be a positive number of px/Å, got {self.scale}")
        _check_image(self.width, self.height)
        object.__setattr__(self, "scale", float(self.scale))
        object.__setattr__(self, "width", int(self.width))
        object.__setattr__(self, "height", int(self.height))

    @property
    def view_direction(self) -> np.ndarray:
        """Unit vector (world) pointing into the scene, −R[2]."""
        return -self.rotation[2]

    def to_camera(self, xyz) -> np.ndarray:
        p, _ = _as_points(xyz)
        return (p - self.center) @ self.rotation.T

    def project(self, xyz) -> tuple[np.ndarray, np.ndarray]:
        """World points (n, 3) Å → (uv (n, 2) px, depth (n,) Å)."""
        p, single = _as_points(xyz)
        cam = (p - self.center) @ self.rotation.T
        # u = W/2 + s·x, v = H/2 + (−s)·y (= H/2 − s·y exactly) for both columns at once
        uv = np.array([0.5 * self.width, 0.5 * self.height]) + cam[:, :2] * np.array([self.scale, -self.scale])
        depth = -cam[:, 2]
        return (uv[0], depth[0]) if single else (uv, depth)

    def ray(self, uv) -> tuple[np.ndarray, np.ndarray]:
        """Pixels (n, 2) → (origins (n, 3) on the plane through ``center``, unit directions (n, 3))."""
        q, single = _as_pixels(uv)
        x = (q[:, 0] - 0.5 * self.width) / self.scale
        y = (0.5 * self.height - q[:, 1]) / self.scale
        origins = self.center + x[:, None] * self.rotation[0] + y[:, None] * self.rotation[1]
        dirs = np.broadcast_to(self.view_direction, origins.shape).copy()
        return (origins[0], dirs[0]) if single else (origins, dirs)

    def pixel_size(self, depth=None) -> float:
        """Å per px (constant for an orthographic camera)."""
        return 1.0 / self.scale

    def projection_matrix(self) -> np.ndarray:
        """The 2×3 linear part mapping world Å to in-plane camera Å (rows = camera x, y)."""
        return np.array(self.rotation[:2])

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "name": self.name,
            "rotation": self.rotation.tolist(),
            "center": self.center.tolist(),
            "scale_px_per_angstrom": self.scale,
            "width": self.width,
            "height": self.height,
        }


@dataclass(frozen=True, eq=False)
class PerspectiveCamera:
    """Pinhole camera. rotation: world→camera (3×3); position: camera centre in world Å; focal: focal
    length in px; principal point (cx, cy) in px, default the image centre."""

    rotation: np.ndarray
    position: np.ndarray
    focal: float
    width: int
    height: int
    cx: float | None = None
    cy: float | None = None
    name: str = ""

    kind = "perspective"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rotation", _frozen_array(self.rotation, (3, 3), "rotation"))
        object.__setattr__(self, "position", _frozen_array(self.position, (3,), "position"))
        check_rotation(self.rotation, name=f"rotation of camera {self.name!r}")
        if not (np.isfinite(self.focal) and self.focal > 0):
            raise CameraError(f"focal length must be a positive number of px, got {self.focal}")
        _check_image(self.width, self.height)
        object.__setattr__(self, "focal", float(self.focal))
        object.__setattr__(self, "width", int(self.width))
        object.__setattr__(self, "height", int(self.height))
        object.__setattr__(self, "cx", 0.5 * self.width if self.cx is None else float(self.cx))
        object.__setattr__(self, "cy", 0.5 * self.height if self.cy is None else float(self.cy))

    @property
    def view_direction(self) -> np.ndarray:
        return -self.rotation[2]

    def to_camera(self, xyz) -> np.ndarray:
        p, _ = _as_points(xyz)
        return (p - self.position) @ self.rotation.T

    def project(self, xyz) -> tuple[np.ndarray, np.ndarray]:
        """World points (n, 3) Å → (uv (n, 2) px, depth (n,) Å). Points at or behind the camera plane
        (depth ≤ 0) get NaN pixel coordinates."""
        p, single = _as_points(xyz)
        cam = (p - self.position) @ self.rotation.T
        depth = -cam[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = np.where(depth > 0, 1.0 / depth, np.nan)
        uv = np.empty((len(p), 2))
        uv[:, 0] = self.cx + self.focal * cam[:, 0] * inv
        uv[:, 1] = self.cy - self.focal * cam[:, 1] * inv
        return (uv[0], depth[0]) if single else (uv, depth)

    def ray(self, uv) -> tuple[np.ndarray, np.ndarray]:
        """Pixels (n, 2) → (origins = camera position (n, 3), unit directions (n, 3) in world)."""
        q, single = _as_pixels(uv)
        d_cam = np.stack(
            [(q[:, 0] - self.cx) / self.focal, (self.cy - q[:, 1]) / self.focal, -np.ones(len(q))], axis=1
        )
        d = d_cam @ self.rotation  # camera → world is Rᵀ, applied to row vectors as @ R
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        origins = np.broadcast_to(self.position, d.shape).copy()
        return (origins[0], d[0]) if single else (origins, d)

    def pixel_size(self, depth) -> np.ndarray | float:
        """Å per px at ``depth`` Å."""
        return np.asarray(depth, dtype=np.float64) / self.focal

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "name": self.name,
            "rotation": self.rotation.tolist(),
            "position": self.position.tolist(),
            "focal_px": self.focal,
            "principal_point": [self.cx, self.cy],
            "width": self.width,
            "height": self.height,
        }


Camera = OrthographicCamera | PerspectiveCamera


def camera_from_dict(d: dict) -> Camera:
    """Inverse of ``to_dict`` for either camera kind.

    Parameters
    ----------
    d : dict
        A camera's ``to_dict()``: ``kind`` (``"orthographic"`` or ``"perspective"``), ``rotation`` (3×3,
        world→camera, rows = the camera's x right, y up, z toward the viewer in world coordinates), ``width``
        and ``height`` (px), ``name``; orthographic: ``center`` (world Å) and ``scale_px_per_angstrom``;
        perspective: ``position`` (pinhole, world Å), ``focal_px`` and ``principal_point`` ((cx, cy), px).

    Returns
    -------
    OrthographicCamera or PerspectiveCamera
        The camera ``d`` describes.

    Raises
    ------
    CameraError
        ``kind`` is neither, or the rotation is not a proper rotation or the image size is not positive.
    """
    if d.get("kind") == "orthographic":
        return OrthographicCamera(
            rotation=d["rotation"], center=d["center"], scale=d["scale_px_per_angstrom"],
            width=d["width"], height=d["height"], name=d.get("name", ""),
        )
    if d.get("kind") == "perspective":
        cx, cy = d.get("principal_point", (None, None))
        return PerspectiveCamera(
            rotation=d["rotation"], position=d["position"], focal=d["focal_px"], width=d["width"],
            height=d["height"], cx=cx, cy=cy, name=d.get("name", ""),
        )
    raise CameraError(f"unknown camera kind {d.get('kind')!r}; expected 'orthographic' or 'perspective'")
