"""Detected atoms matched to the atoms they project from, and turned into the oracle's observations.

``match_detections(detections, projection, positions, numbers)``: every drawn atom is projected by the image's
resolved camera, and every detected disc's centre corrected under a perspective camera for the offset of a sphere's
silhouette (:func:`sphere_centres`) (``cameras.PixelProjection``: pixel frame u right, v down, origin top-left); a detection is
matched to one atom whose projected centre lies within its gate (``max(MIN_GATE_PX, GATE_SHARE × its radius)``),
one-to-one (``scipy.optimize.linear_sum_assignment`` on the centre distance, a detection of another element
costing ``ELEMENT_COST_PX`` more, and among atoms drawn at one place the nearest to the camera first: it is the one
drawn). A detection with no atom in its gate is **unmatched**: reported (its residual to the nearest projected
atom), never assigned to a guess. Per image, the atoms **expected visible** are those inside the image whose
projected centre no nearer atom's drawn disc covers (``observe.centre_visibility``), with drawn radii estimated
from the matched detections (one radius per element in an orthographic view; radius × depth per element in a
perspective one).

``published_view(...)`` turns an image's detections into one ``ViewObservation`` of the view's equivalent camera
(``PixelProjection.equivalent``): centres mapped into that camera's pixels (``to_camera_pixels``), labels the
detected elements, depth and the hidden atom index and tile from the match (scoring only; an unmatched detection
gets the view's largest depth and index −1). A detection whose element is ambiguous is left out: an atom whose
element the pixels do not settle cannot be observed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.detect.detector import Detections
from viewcert.elements import SYMBOLS, atomic_number
from viewcert.numeric import readonly
from viewcert.observe.project import ViewObservation

#: a detection's gate: at least this many px, or this share of its radius
MIN_GATE_PX, GATE_SHARE = 2.0, 0.5
#: a detection of another element than the atom costs this many px more in the assignment
ELEMENT_COST_PX = 1.0
#: atoms drawn within this many px of each other count as drawn at one place (the nearest one is seen)
SAME_PLACE_PX = 0.5

__all__ = ["GATE_SHARE", "MIN_GATE_PX", "Matching", "match_detections", "painted_pixels", "published_view",
           "sphere_centres"]


@dataclass(frozen=True, eq=False)
class Matching:
    """One image's detections matched to the drawn atoms (pixel frame of the image).

    atom (n_det,): the drawn atom each detection is matched to, −1 when unmatched; residual (n_det,) px: distance
    to that atom's projected centre (unmatched: to the nearest projected atom); element_ok (n_det,): the detected
    element is the atom's; projected (n_atoms, 2) px and depth (n_atoms,) Å of every drawn atom; expected
    (n_atoms,) bool: showing at least ``min_pixels`` pixels when the drawn discs are painted farthest first;
    drawn_radius (n_atoms,) px used for ``expected`` (NaN when nothing was detected to estimate it)."""

    atom: np.ndarray
    residual: np.ndarray
    element_ok: np.ndarray
    projected: np.ndarray
    depth: np.ndarray
    expected: np.ndarray
    drawn_radius: np.ndarray

    @property
    def n_matched(self) -> int:
        return int((self.atom >= 0).sum())

    @property
    def n_unmatched(self) -> int:
        return int((self.atom < 0).sum())

    def centre_rms(self) -> float | None:
        """RMS of the matched detections' residuals (px); None when none is matched."""
        r = self.residual[self.atom >= 0]
        return float(np.sqrt(np.mean(r * r))) if len(r) else None

    def centre_max(self) -> float | None:
        """Largest matched residual (px); None when none is matched."""
        r = self.residual[self.atom >= 0]
        return float(r.max()) if len(r) else None


def _drawn_radii(det: Detections, atom: np.ndarray, numbers: np.ndarray, depth: np.ndarray, perspective: bool) -> np.ndarray:
    """Per drawn atom its drawn radius (px) estimated from the matched detections of its element (NaN when none
    of its element was matched: then the median over every element)."""
    out = np.full(len(numbers), np.nan)
    ok = atom >= 0
    if not ok.any():
        return out
    z_det = numbers[atom[ok]]
    r_det = det.radii[ok]
    d_det = depth[atom[ok]]
    all_k = float(np.median(r_det * d_det)) if perspective else float(np.median(r_det))
    for z in np.unique(numbers):
        sel = z_det == z
        k = (float(np.median(r_det[sel] * d_det[sel])) if perspective else float(np.median(r_det[sel]))) \
            if sel.any() else all_k
        mine = numbers == z
        out[mine] = k / np.maximum(depth[mine], 1e-9) if perspective else k
    return out


def painted_pixels(uv: np.ndarray, depth: np.ndarray, radii: np.ndarray, width: int, height: int) -> np.ndarray:
    """Per disc the pixels (centres) it shows when every disc is painted in the image, farthest first.

    Parameters
    ----------
    uv : numpy.ndarray, shape (n, 2)
        Disc centres, px (the image's frame; NaN: not drawn).
    depth : numpy.ndarray, shape (n,)
        Depths, Å (larger = farther).
    radii : numpy.ndarray, shape (n,)
        Disc radii, px.
    width, height : int
        The image's size, px.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        The pixels each disc shows.
    """
    owner = np.full((height, width), -1, dtype=np.int64)
    ok = np.isfinite(uv).all(axis=1) & np.isfinite(radii) & np.isfinite(depth)
    for k in sorted(np.flatnonzero(ok), key=lambda i: -depth[i]):
        (u, v), r = uv[k], radii[k]
        i0, i1 = max(0, int(np.floor(v - r))), min(height, int(np.ceil(v + r)) + 1)
        j0, j1 = max(0, int(np.floor(u - r))), min(width, int(np.ceil(u + r)) + 1)
        if i0 >= i1 or j0 >= j1:
            continue
        ii, jj = np.mgrid[i0:i1, j0:j1]
        inside = (jj + 0.5 - u) ** 2 + (ii + 0.5 - v) ** 2 <= r * r
        owner[i0:i1, j0:j1][inside] = k
    return np.bincount(owner[owner >= 0].ravel(), minlength=len(uv))[: len(uv)].astype(np.int64)


def sphere_centres(det: Detections, projection: PixelProjection) -> np.ndarray:
    """Where each detected atom's centre projects (n, 2) px: the detected disc's centre, corrected under a
    perspective camera for the offset of a sphere's silhouette.

    A pinhole draws a sphere as the section of its tangent cone: along the line through the principal point the
    silhouette spans the angles θ ± α (θ the direction of the sphere's centre, sin α its radius over its
    distance), so its middle lies at (tan(θ + α) + tan(θ − α)) / 2, outward of the centre's own projection tan θ
    (by (r/d)² × its distance from the principal point, to first order). From the detected centre m and radius a
    (focal units, in the equivalent camera's pixels), θ = (atan(m + a) + atan(m − a)) / 2. Orthographic views
    need no correction.

    Parameters
    ----------
    det : Detections
        Detected discs: centres and radii, px in the image's frame.
    projection : PixelProjection
        The image's camera.

    Returns
    -------
    numpy.ndarray, shape (n, 2)
        The projections of the spheres' centres, px in the image's frame.
    """
    if projection.kind != "perspective" or not len(det):
        return np.array(det.centres, dtype=np.float64).reshape(-1, 2)
    cam: Any
    cam, warp = projection.equivalent()
    lin = warp[:, :2]
    c = projection.to_camera_pixels(det.centres)
    rho = np.asarray(det.radii, dtype=np.float64) / np.sqrt(abs(np.linalg.det(lin)))
    pp = np.array([cam.cx, cam.cy])
    q = c - pp
    dist = np.linalg.norm(q, axis=1)
    m, a = dist / cam.focal, rho / cam.focal
    theta = 0.5 * (np.arctan(m + a) + np.arctan(m - a))
    scale = np.where(dist > 1e-9, np.tan(theta) * cam.focal / np.maximum(dist, 1e-9), 1.0)
    fixed = pp + q * scale[:, None]
    return fixed @ lin.T + warp[:, 2]


def match_detections(det: Detections, projection: PixelProjection, positions, numbers) -> Matching:
    """Match an image's detections to the drawn atoms (module docstring).

    Parameters
    ----------
    det : Detections
        The atoms found in the image (centres px, radii px, elements).
    projection : PixelProjection
        The image's camera, resolved (world Å → the image's pixels).
    positions : array_like, shape (n, 3)
        The drawn atoms, Cartesian Å (a crystal's tiling already applied).
    numbers : array_like of int, shape (n,)
        Their atomic numbers.

    Returns
    -------
    Matching
        Per detection its atom (−1: unmatched) and residual (px); per atom its projection, depth and whether it is
        expected visible.
    """
    from scipy.optimize import linear_sum_assignment  # lazy: start-up time (scipy.optimize)

    pos = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    z = np.asarray(numbers, dtype=np.int64).reshape(-1)
    uv, depth = projection.project(pos)
    n_det, n_at = len(det), len(pos)
    atom = np.full(n_det, -1, dtype=np.int64)
    residual = np.full(n_det, np.nan)
    finite = np.isfinite(uv).all(axis=1)
    centres = sphere_centres(det, projection)
    if n_det and n_at:
        d = np.linalg.norm(centres[:, None, :] - uv[None, :, :], axis=2)
        d[:, ~finite] = np.inf
        residual = d.min(axis=1)
        gate = np.maximum(MIN_GATE_PX, GATE_SHARE * det.radii)
        det_z = np.array([atomic_number(e) if e else -1 for e in det.elements], dtype=np.int64)
        rank = np.argsort(np.argsort(depth, kind="stable"), kind="stable").astype(np.float64)
        cost = d + ELEMENT_COST_PX * (det_z[:, None] != z[None, :]) + 1e-6 * rank[None, :]
        big = 1e6
        cost = np.where(d <= gate[:, None], cost, big)
        rows, cols = linear_sum_assignment(cost)
        for i, j in zip(rows, cols, strict=True):
            if cost[i, j] < big:
                atom[i] = j
                residual[i] = d[i, j]
    det_z = np.array([atomic_number(e) if e else -1 for e in det.elements], dtype=np.int64)
    element_ok = np.array([a >= 0 and det_z[k] == z[a] for k, a in enumerate(atom)], dtype=bool)
    radii = _drawn_radii(det, atom, z, depth, projection.kind == "perspective")
    if n_at and np.isfinite(radii).all():
        # a disc smaller than min_pixels (a marker of a few px) is expected when half of it shows
        need = np.minimum(det.settings.min_pixels, 0.5 * np.pi * radii * radii)
        expected = painted_pixels(uv, depth, radii, projection.width, projection.height) >= np.maximum(need, 1.0)
    else:  # nothing detected to size the discs: every atom inside the image
        expected = finite & (uv[:, 0] >= 0) & (uv[:, 0] <= projection.width) & (uv[:, 1] >= 0) \
            & (uv[:, 1] <= projection.height)
    return Matching(readonly(atom, np.int64), readonly(residual, np.float64), readonly(element_ok, bool),
                    readonly(uv, np.float64), readonly(depth, np.float64), readonly(expected, bool),
                    readonly(radii, np.float64))


def published_view(det: Detections, matching: Matching, projection: PixelProjection, cell_index, tiles,
                   *, name: str = "") -> ViewObservation:
    """One view's observations from the pixels (module docstring): the detections with an element, in the
    equivalent camera's pixel frame.

    Parameters
    ----------
    det : Detections
        The image's detections.
    matching : Matching
        Their match to the drawn atoms (``match_detections``).
    projection : PixelProjection
        The image's resolved camera.
    cell_index, tiles : array_like of int, shape (n_atoms,)
        Per drawn atom its cell atom index and tile (``observe.drawn_atoms``; scoring only).
    name : str
        The view's name.

    Returns
    -------
    ViewObservation
        uv (m, 2) px of the equivalent camera, depth (m,) Å, labels (m,) atomic numbers; hidden atom index and tile.
    """
    import dataclasses

    cam, _ = projection.equivalent()
    if name and cam.name != name:
        cam = dataclasses.replace(cam, name=name)
    keep = np.array([bool(e) for e in det.elements], dtype=bool)
    atom = matching.atom[keep]
    uv = projection.to_camera_pixels(sphere_centres(det, projection)[keep]) if keep.any() else np.zeros((0, 2))
    far = float(np.nanmax(matching.depth)) + 1.0 if len(matching.depth) else 0.0
    depth = np.where(atom >= 0, matching.depth[np.maximum(atom, 0)], far) if len(atom) else np.zeros(0)
    labels = np.array([SYMBOLS.index(e) for e in np.asarray(det.elements)[keep]], dtype=np.int64)
    cell_index = np.asarray(cell_index, dtype=np.int64)
    tiles = np.asarray(tiles, dtype=np.int64)
    idx = np.where(atom >= 0, cell_index[np.maximum(atom, 0)], -1) if len(atom) else np.zeros(0, dtype=np.int64)
    tile = np.where(atom >= 0, tiles[np.maximum(atom, 0)], 0) if len(atom) else np.zeros(0, dtype=np.int64)
    return ViewObservation(cam, uv.reshape(-1, 2), depth, labels, idx, tile)
