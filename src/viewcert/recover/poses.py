"""Several cameras can draw the same picture: the admissible poses, and how far apart they are.

A symmetry operation g of the drawn atoms (an orthogonal map about their centroid taking the labelled set onto
itself within τ, ``symmetry.pointgroup.symmetry_operations``) turns a camera P into P∘g, which projects the set to
the same points with the atoms' identities exchanged. Every proper g gives such a camera; an improper one (a mirror,
an inversion) does too for an orthographic camera, whose picture forgets depth (P∘g is then the camera seen from the
mirrored side, the Necker twin), never for a perspective one (its pinhole would see the atoms behind it). Each
candidate is refitted and kept when it passes the thresholds and draws the picture as well as the best camera.

Distances between poses: the angle (degrees) of the rotation taking one camera's frame to the other's
(``rotation_angle``), and the largest displacement (px) of one atom between the two pictures
(``displacement_px``: identities kept, so a symmetric pose that draws the same picture still moves atoms).
"""

from __future__ import annotations

import math

import numpy as np

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.errors import CameraError, InputError
from viewcert.symmetry.pointgroup import symmetry_operations

__all__ = ["displacement_px", "rotation_angle", "symmetry_candidates"]


def symmetry_candidates(matrix: np.ndarray, kind: str, xyz: np.ndarray, labels: np.ndarray,
                        tolerance: float) -> list[np.ndarray]:
    """The matrices P∘g (world → px) for every symmetry operation g ≠ identity of the labelled atoms within
    ``tolerance`` Å (improper g only for an orthographic P), g acting about the atoms' centroid; empty for a set
    with no symmetry or a collinear one."""
    if len(xyz) < 3:
        return []
    try:
        ops, centre, _, _ = symmetry_operations(xyz, labels, tolerance)
    except InputError:
        return []
    out = []
    for g in ops:
        if np.allclose(g, np.eye(3), atol=1e-6):
            continue
        if kind == "perspective" and np.linalg.det(g) < 0:
            continue
        # X → g (X − c) + c, composed after P
        lin = matrix[:, :3] @ g
        off = matrix[:, :3] @ (centre - g @ centre) + matrix[:, 3]
        out.append(np.column_stack([lin, off]))
    return out


def _rotation(matrix: np.ndarray, kind: str, width: int, height: int) -> np.ndarray | None:
    try:
        cam, _ = PixelProjection(matrix, width, height, kind).equivalent()
    except CameraError:
        return None
    return np.asarray(cam.rotation)


def rotation_angle(a: np.ndarray, b: np.ndarray, kind_a: str, kind_b: str, width: int, height: int) -> float:
    """Angle (degrees) of the rotation between the camera frames of two 3×4 matrices (world → px)."""
    ra, rb = _rotation(a, kind_a, width, height), _rotation(b, kind_b, width, height)
    if ra is None or rb is None:
        return float("nan")
    c = (np.trace(ra @ rb.T) - 1.0) / 2.0
    return math.degrees(math.acos(min(1.0, max(-1.0, c))))


def displacement_px(a: np.ndarray, b: np.ndarray, xyz: np.ndarray) -> float:
    """Largest distance (px) between an atom's image under ``a`` and under ``b`` (identities kept)."""
    def proj(m):
        h = xyz @ m[:, :3].T + m[:, 3]
        return h[:, :2] / h[:, 2:3]

    d = np.linalg.norm(proj(a) - proj(b), axis=1)
    return float(np.nanmax(d)) if len(d) else 0.0
