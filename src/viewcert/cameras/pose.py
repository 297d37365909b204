"""Pose builders: every function returns R, the world→camera rotation (rows = camera x right, y up, z toward
the viewer). Conventions pinned in docs/conventions.md.

- ASE rotation strings ``"-60x,-30y,-15z"``: ASE computes M = rotate(s) and draws ``screen = pos @ M``, so
  R = Mᵀ. ``ase_rotation_matrix`` returns M exactly as ``ase.utils.rotate``; ``from_ase_string`` returns R.
- ChimeraX ``view matrix camera m00,…,m23``: 12 numbers, row-major 3×4 camera→scene transform; its 3×3 part
  is Rᵀ (columns = camera axes in the scene) and its fourth column is the camera position (Å).
"""

from __future__ import annotations

import math
import re

import numpy as np

from viewcert.cameras.camera import check_rotation
from viewcert.errors import CameraError

_ASE_TERM = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([xyzXYZ])\s*$")


def ase_rotation_matrix(rotations: str) -> np.ndarray:
    """The matrix M that ``ase.utils.rotate(rotations)`` returns (screen = pos @ M); angles in degrees,
    applied left to right as ASE does."""
    m = np.eye(3)
    if rotations.strip() == "":
        return m
    for term in rotations.split(","):
        match = _ASE_TERM.match(term)
        if match is None:
            raise CameraError(f"bad rotation term {term!r} in {rotations!r}; expected e.g. '-60x,-30y,-15z'")
        a = math.radians(float(match.group(1)))
        axis = match.group(2).lower()
        c, s = math.cos(a), math.sin(a)
        if axis == "x":
            step = [(1, 0, 0), (0, c, s), (0, -s, c)]
        elif axis == "y":
            step = [(c, 0, -s), (0, 1, 0), (s, 0, c)]
        else:
            step = [(c, s, 0), (-s, c, 0), (0, 0, 1)]
        m = m @ np.array(step, dtype=np.float64)
    return m


def from_ase_string(rotations: str) -> np.ndarray:
    """World→camera R for an ASE rotation string (R = rotate(s)ᵀ)."""
    return np.ascontiguousarray(ase_rotation_matrix(rotations).T)


def from_chimerax(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Parse ``view matrix camera m00,m01,m02,m03,m10,…,m23`` (the prefix is optional) into (R, position).
    R is world→camera; position is the camera origin in world Å."""
    body = text.strip()
    body = re.sub(r"^\s*view\s+matrix\s+camera\s+", "", body, flags=re.IGNORECASE)
    body = re.sub(r"^#\d+(\.\d+)*\s*,?", "", body).strip()  # tolerate a model spec like "#1,"
    parts = [p for p in re.split(r"[,\s]+", body) if p]
    if len(parts) != 12:
        raise CameraError(f"ChimeraX camera matrix needs 12 numbers, got {len(parts)} in {text!r}")
    try:
        m = np.array([float(p) for p in parts], dtype=np.float64).reshape(3, 4)
    except ValueError as exc:
        raise CameraError(f"ChimeraX camera matrix has a non-number: {exc}") from None
    cam_to_world = m[:, :3]
    check_rotation(cam_to_world, name="ChimeraX camera rotation", atol=1e-5)
    return np.ascontiguousarray(cam_to_world.T), m[:, 3].copy()


def to_chimerax(rotation: np.ndarray, position=(0.0, 0.0, 0.0), *, digits: int = 8) -> str:
    """``view matrix camera …`` command for a world→camera R and a camera position (Å)."""
    check_rotation(rotation)
    m = np.concatenate([np.asarray(rotation, dtype=np.float64).T, np.asarray(position, float)[:, None]], axis=1)
    nums = ",".join(f"{v:.{digits}g}" if v != 0 else "0" for v in m.ravel())
    return f"view matrix camera {nums}"


def look_at(direction, up=(0.0, 1.0, 0.0)) -> np.ndarray:
    """R for a camera looking along ``direction`` (world, into the scene) with ``up`` projected to screen up.
    When ``up`` is parallel to the direction, world z (or x) is used instead."""
    d = np.asarray(direction, dtype=np.float64)
    n = np.linalg.norm(d)
    if not np.isfinite(n) or n == 0:
        raise CameraError(f"view direction must be a non-zero finite vector, got {direction}")
    z = -d / n
    u = np.asarray(up, dtype=np.float64)
    for cand in (u, np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])):
        x = np.cross(cand, z)
        if np.linalg.norm(x) > 1e-8 * max(np.linalg.norm(cand), 1e-300):
            break
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return np.ascontiguousarray(np.stack([x, y, z]))


def from_azimuth_elevation(azimuth: float, elevation: float, *, roll: float = 0.0) -> np.ndarray:
    """R for a camera placed at azimuth (deg, about world z from +x toward +y) and elevation (deg above the
    xy plane), looking at the origin, world z up on screen, then rolled by ``roll`` deg about the view axis.
    Elevation ±90 is allowed (screen up falls back to world y)."""
    az, el = math.radians(azimuth), math.radians(elevation)
    eye = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    r = look_at(-eye, up=(0.0, 0.0, 1.0) if abs(elevation) < 89.999999 else (0.0, 1.0, 0.0))
    if roll:
        c, s = math.cos(math.radians(roll)), math.sin(math.radians(roll))
        r = np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]]) @ r
    return r
