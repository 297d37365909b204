"""Camera hypotheses with no correspondences given: triples of detected atoms matched to same-element atoms, each
triple solved exactly (``minimal``), and every hypothesis scored against the whole picture at once.

Which triples. The outline of a picture is the outline of the structure: a vertex of the detections' 2D convex
hull is the drawn image of a vertex of the atoms' 3D convex hull (a projection, orthographic or perspective from a
point outside the hull, maps the hull onto the hull of the images; an atom at a 2D hull vertex hides the atoms
behind it, so the one drawn is the column's nearest end, itself a 3D hull vertex). Hypotheses pair large
triangles of 2D hull vertices with same-element triples of 3D hull vertices (``outline`` candidates); when that
finds nothing good, atoms within ``near`` Å of the hull surface widen the atoms' set, and the outline of the
detections without each of its vertices in turn (``robust_detection_triples``) survives one spurious or missed
outline detection.

Score (``score_batch``), with no occlusion model (occlusion only removes atoms): the detections explained (a
projected atom of the same element within ``tol`` px; each detection counted once), minus the atoms projected
inside the image that lie farther than ``cover`` px from every detection (a hidden atom lies under the disc of
the atom hiding it, near that atom's detection; an atom far from every detection should have been seen), as
fractions of the detections and of the atoms inside the image. Lookups use per-element images of the nearest
detection (``scipy.ndimage.distance_transform_edt``), so a hypothesis costs one projection and one array lookup
per atom.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import cast

import numpy as np
from scipy import ndimage
from scipy.spatial import ConvexHull, QhullError

__all__ = ["ScoreGrids", "atom_outline", "detection_outline", "detection_triples", "hypothesis_triples",
           "robust_detection_triples", "score_batch"]

_BLOCK = 4096  # hypotheses scored per block (memory: block × atoms × 3 floats)


@dataclass(frozen=True, eq=False)
class ScoreGrids:
    """Per element, the index of the nearest detection within ``tol`` px of each pixel (−1: none), and whether
    a pixel lies within ``cover`` px of any detection; pixels are the image's (row v, column u)."""

    nearest: dict
    covered: np.ndarray
    n_detections: int
    tol: float
    cover: float

    @classmethod
    def build(cls, det_uv: np.ndarray, det_labels: np.ndarray, atom_labels: np.ndarray, width: int, height: int,
              tol: float, cover: float) -> ScoreGrids:
        """Rasterise the detections (centres rounded to their pixel) into the lookup images."""
        col = np.clip(np.floor(det_uv[:, 0]).astype(np.int64), 0, width - 1)
        row = np.clip(np.floor(det_uv[:, 1]).astype(np.int64), 0, height - 1)
        nearest = {}
        for z in np.unique(atom_labels):
            sel = np.flatnonzero((det_labels == z) | (det_labels == 0))
            grid = np.full((height, width), -1, dtype=np.int32)
            if len(sel):
                mark = np.ones((height, width), dtype=bool)
                ident = np.full((height, width), -1, dtype=np.int32)
                mark[row[sel], col[sel]] = False
                ident[row[sel], col[sel]] = sel
                dist, (ri, ci) = ndimage.distance_transform_edt(mark, return_indices=True)
                grid = np.where(dist <= tol, ident[ri, ci], -1).astype(np.int32)
            nearest[int(z)] = grid
        mark = np.ones((height, width), dtype=bool)
        mark[row, col] = False
        covered = ndimage.distance_transform_edt(mark) <= cover if len(det_uv) else np.zeros((height, width), bool)
        return cls(nearest, covered, len(det_uv), float(tol), float(cover))


def score_batch(matrices: np.ndarray, xyz: np.ndarray, labels: np.ndarray, grids: ScoreGrids,
                perspective: bool) -> np.ndarray:
    """Score (h,) of h 3×4 matrices (module docstring): explained fraction − uncovered fraction; −inf where a
    perspective hypothesis puts an atom at or behind the pinhole or fewer than 3 atoms land in the image."""
    height, width = grids.covered.shape
    out = np.full(len(matrices), -np.inf)
    groups = [(np.flatnonzero(labels == z), grid) for z, grid in grids.nearest.items()]
    for start in range(0, len(matrices), _BLOCK):
        p = matrices[start:start + _BLOCK]
        h = p[:, :, :3] @ xyz.T + p[:, :, 3:]  # (block, 3, atoms)
        if perspective:
            w = h[:, 2]
            ok = (w > 0).all(1)
            w = np.where(w > 0, w, 1.0)
            u = np.floor(h[:, 0] / w).astype(np.int64)
            v = np.floor(h[:, 1] / w).astype(np.int64)
        else:
            ok = np.ones(len(p), dtype=bool)
            u = np.floor(h[:, 0]).astype(np.int64)
            v = np.floor(h[:, 1]).astype(np.int64)
        inside = (u >= 0) & (u < width) & (v >= 0) & (v < height)
        uc = np.clip(u, 0, width - 1)
        vc = np.clip(v, 0, height - 1)
        n_in = inside.sum(1)
        hit = np.zeros((len(p), grids.n_detections + 1), dtype=bool)
        rows = np.arange(len(p))[:, None]
        for atoms, grid in groups:
            ids = np.where(inside[:, atoms], grid[vc[:, atoms], uc[:, atoms]], -1)
            hit[np.broadcast_to(rows, ids.shape), ids + 1] = True
        explained = hit[:, 1:].sum(1) / max(grids.n_detections, 1)
        uncovered = (inside & ~grids.covered[vc, uc]).sum(1) / np.maximum(n_in, 1)
        score = explained - uncovered
        out[start:start + len(p)] = np.where(ok & (n_in >= 3), score, -np.inf)
    return out


def _hull_vertices(points: np.ndarray) -> np.ndarray:
    """Indices of the convex hull's vertices of 3D points; of the hull in their plane when they are coplanar;
    of the two ends when collinear."""
    c = points - points.mean(0)
    if len(points) < 4:
        return np.arange(len(points))
    try:
        return np.sort(ConvexHull(points).vertices)
    except QhullError:
        _, sv, vt = np.linalg.svd(c, full_matrices=False)
        if sv[1] <= 1e-9 * max(sv[0], 1e-300):
            t = c @ vt[0]
            return np.unique([int(np.argmin(t)), int(np.argmax(t))])
        try:
            return np.sort(ConvexHull(c @ vt[:2].T).vertices)
        except QhullError:
            return np.arange(len(points))


def atom_outline(xyz: np.ndarray, near: float = 0.0) -> np.ndarray:
    """Indices of the atoms on the outline: the 3D hull's vertices, plus (near > 0) every atom within ``near``
    Å of a hull facet."""
    verts = _hull_vertices(xyz)
    if near <= 0 or len(xyz) < 5:
        return verts
    try:
        hull = ConvexHull(xyz)
    except QhullError:
        return np.arange(len(xyz))
    # facet equations: n·x + d ≤ 0 inside; distance to the surface = −max over facets
    dist = -(xyz @ hull.equations[:, :3].T + hull.equations[:, 3]).max(1)
    return np.unique(np.concatenate([verts, np.flatnonzero(dist <= near)]))


def detection_outline(uv: np.ndarray, near: float = 0.0) -> np.ndarray:
    """Indices of the detections on the 2D outline: hull vertices, plus (near > 0) those within ``near`` px of
    the hull's boundary."""
    if len(uv) < 3:
        return np.arange(len(uv))
    try:
        hull = ConvexHull(uv)
    except QhullError:
        return np.arange(len(uv))
    verts = hull.vertices
    if near <= 0:
        return np.sort(verts)
    dist = -(uv @ hull.equations[:, :2].T + hull.equations[:, 2]).max(1)
    return np.unique(np.concatenate([verts, np.flatnonzero(dist <= near)]))


def detection_triples(uv: np.ndarray, members: np.ndarray, count: int) -> list[tuple[int, int, int]]:
    """Up to ``count`` triples of ``members`` with the largest triangles, no two sharing two members, so that one
    bad detection spoils few of them."""
    if len(members) < 3:
        return []
    combos = np.array(list(itertools.combinations(members.tolist(), 3)), dtype=np.int64)
    a, b, c = uv[combos[:, 0]], uv[combos[:, 1]], uv[combos[:, 2]]
    area = 0.5 * np.abs((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0]))
    order = np.argsort(-area, kind="stable")
    chosen: list[tuple[int, int, int]] = []
    used_pairs: set[tuple[int, int]] = set()
    top = area[order[0]] if len(order) else 0.0
    for k in order:
        if area[k] < 0.05 * top or len(chosen) >= count:
            break
        tri = cast("tuple[int, int, int]", tuple(int(x) for x in combos[k]))
        pairs = {cast("tuple[int, int]", tuple(sorted(p))) for p in itertools.combinations(tri, 2)}
        if pairs & used_pairs:
            continue
        chosen.append(tri)
        used_pairs |= pairs
    if len(chosen) < count:  # allow shared pairs rather than too few triples
        for k in order:
            tri = cast("tuple[int, int, int]", tuple(int(x) for x in combos[k]))
            if tri not in chosen and area[k] >= 0.05 * top:
                chosen.append(tri)
            if len(chosen) >= count:
                break
    return chosen


def robust_detection_triples(uv: np.ndarray, count: int) -> list[tuple[int, int, int]]:
    """Triples that survive one bad outline detection (a spurious point outside the structure, an outline atom
    missed): the largest triangles of the outline and, for each outline vertex, of the outline without it."""
    first = detection_outline(uv)
    chosen = detection_triples(uv, first, max(2, count // 4))
    for v in first:
        rest = np.setdiff1d(np.arange(len(uv)), [v])
        if len(rest) < 3:
            continue
        for tri in detection_triples(uv, rest[detection_outline(uv[rest])], 2):
            if tri not in chosen:
                chosen.append(tri)
    return chosen[: max(count, len(first) * 2)]


def hypothesis_triples(det_triple: tuple[int, int, int], det_labels: np.ndarray, atom_labels: np.ndarray,
                       candidates: np.ndarray) -> np.ndarray:
    """Ordered triples (k, 3) of distinct candidate atoms whose elements match the detections' (0: any)."""
    pools = []
    for j in det_triple:
        z = det_labels[j]
        pools.append(candidates if z == 0 else candidates[atom_labels[candidates] == z])
    if any(len(p) == 0 for p in pools):
        return np.zeros((0, 3), dtype=np.int64)
    grid = np.stack(np.meshgrid(*pools, indexing="ij"), axis=-1).reshape(-1, 3)
    distinct = (grid[:, 0] != grid[:, 1]) & (grid[:, 0] != grid[:, 2]) & (grid[:, 1] != grid[:, 2])
    return grid[distinct]
