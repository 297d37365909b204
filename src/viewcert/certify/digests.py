"""Content digests of what an item's outcome depends on: the rendered cell and the framed cameras."""

from __future__ import annotations

import hashlib

import numpy as np

from viewcert.cameras.camera import OrthographicCamera, PerspectiveCamera
from viewcert.resolution import quantize_array
from viewcert.structures import Structure


def digest_arrays(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
        h.update(b"|")
    return h.hexdigest()


def cell_digest(s: Structure) -> str:
    """SHA-256 of the cell: lattice and Cartesian positions rounded to 1e-8 Å (snapped first, so the rounding
    noise of the CPU that computed them never decides a tie: ``viewcert.resolution.quantize_array``;
    little-endian float64 bytes) and atomic numbers (int64)."""
    lat = np.zeros((3, 3)) if s.lattice is None else s.lattice
    return digest_arrays(quantize_array(lat, 8), quantize_array(s.positions, 8), np.asarray(s.numbers, dtype="<i8"))


def _camera_terms(c: OrthographicCamera | PerspectiveCamera) -> tuple:
    """(rotation, centre or position, scale or focal, width, height) of a camera: the fields its ``to_dict``
    writes, read without the list round trip."""
    if isinstance(c, PerspectiveCamera):
        return c.rotation, c.position, c.focal, c.width, c.height
    return c.rotation, c.center, c.scale, c.width, c.height


def _rounded(rows: list, decimals: int) -> np.ndarray:
    """``rows`` stacked as float64, rounded to ``decimals`` (snapped first: ``resolution.quantize_array``),
    little-endian, −0.0 → 0.0 (one row per camera)."""
    return quantize_array(rows, decimals)


def cameras_digest(cameras) -> str:
    """SHA-256 of the framed cameras (kind, rotation, centre or position, scale or focal, image size): per
    camera, its rotation (12 decimals), centre or position and (scale or focal, width, height) (9 decimals)."""
    terms = [_camera_terms(c) for c in cameras]
    rot = _rounded([t[0] for t in terms], 12)
    pos = _rounded([t[1] for t in terms], 9)
    size = _rounded([t[2:] for t in terms], 9)
    return digest_arrays(*[a for parts in zip(rot, pos, size, strict=True) for a in parts])
