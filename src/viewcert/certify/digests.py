"""Content digests of what an item's outcome depends on: the rendered cell and the framed cameras."""

from __future__ import annotations

import hashlib

import numpy as np

from viewcert.cameras.camera import OrthographicCamera, PerspectiveCamera
from viewcert.structures import Structure


def digest_arrays(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
        h.update(b"|")
    return h.hexdigest()


def cell_digest(s: Structure) -> str:
    """SHA-256 of the cell: lattice and Cartesian positions rounded to 1e-8 Å (little-endian float64 bytes)
    and atomic numbers (int64)."""
    lat = np.zeros((3, 3)) if s.lattice is None else s.lattice
    return digest_arrays(np.round(lat, 8).astype("<f8") + 0.0, np.round(s.positions, 8).astype("<f8") + 0.0,
                          np.asarray(s.numbers, dtype="<i8"))


def _camera_terms(c: OrthographicCamera | PerspectiveCamera) -> tuple:
    """(rotation, centre or position, scale or focal, width, height) of a camera: the fields its ``to_dict``
    writes, read without the list round trip."""
    if isinstance(c, PerspectiveCamera):
        return c.rotation, c.position, c.focal, c.width, c.height
    return c.rotation, c.center, c.scale, c.width, c.height


def cameras_digest(cameras) -> str:
    """SHA-256 of the framed cameras (kind, rotation, centre or position, scale or focal, image size)."""
    parts = []
    for c in cameras:
        rot, pos, scale, width, height = _camera_terms(c)
        parts.append(np.round(np.asarray(rot, dtype=np.float64), 12).ravel())
        parts.append(np.round(np.asarray(pos, dtype=np.float64), 9).ravel())
        parts.append(np.round(np.asarray([scale, width, height], dtype=np.float64), 9))
    return digest_arrays(*[p.astype("<f8") + 0.0 for p in parts])
