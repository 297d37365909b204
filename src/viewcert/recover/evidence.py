"""The evidence for one camera: project every drawn atom, decide which the picture shows, match every detection to
the nearest shown atom of its element, and count what is explained and what is missing.

Occlusion (docs/conventions.md's analytic rule, with radii from the picture): an atom is hidden when its projected
centre lies inside the drawn disc of a strictly nearer atom. Drawn radii are measured in Å per element: from the
detected radii where the detector gives them (each detected radius over the camera's local scale at the atom it
was matched to, the median per element), else ``DEFAULT_RADIUS_SCALE`` × the covalent radius. A detection is
matched to the nearest projected atom of its element whatever the occlusion (a detection marks a drawn atom; an
atom hidden right behind it projects to nearly the same point, so the residual does not depend on which of the two
is taken); occlusion decides which atoms the picture must show: an atom plainly in view (its drawn radius at least
``MIN_PLAIN_PX``, its centre farther from every nearer atom's centre than that atom's radius plus ``MISSING_MARGIN``
× its own, so that most of its disc shows) must have a detection, except the atoms of a small element the detector
mostly missed (drawn below ``SMALL_ELEMENT`` × the median radius of the other elements' plain atoms, more than
half of its plain atoms undetected: hydrogens a few px across).

Frames: world Cartesian Å; pixels in the image's frame (u right, v down); depth in Å, larger = farther.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree

from viewcert.elements import covalent_radii

__all__ = ["chance_log10", "DEFAULT_RADIUS_SCALE", "MIN_PLAIN_PX", "MISSING_MARGIN", "Evidence", "assess", "local_scale",
           "nearest_matches", "project", "shown"]

DEFAULT_RADIUS_SCALE = 0.75
MISSING_MARGIN = 0.5
MIN_PLAIN_PX = 2.0
SMALL_ELEMENT = 0.75
_DEPTH_EPS = 1e-6


def project(matrix: np.ndarray, xyz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(uv (n, 2) px, w (n,)) of world points through a 3×4 matrix; w is 1 for an affine matrix, the depth
    (Å) for a canonical perspective one; points with w ≤ 0 get NaN pixels."""
    h = xyz @ matrix[:, :3].T + matrix[:, 3]
    w = h[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        uv = h[:, :2] / np.where(w > 0, w, np.nan)[:, None]
    return uv, w


def depth_of(matrix: np.ndarray, kind: str, xyz: np.ndarray) -> np.ndarray:
    """Depth (n,) in Å, larger = farther: w for a perspective matrix; along the view direction for an affine one
    (the direction the 2×3 block annihilates, oriented so that the image is not mirrored)."""
    if kind == "perspective":
        return xyz @ matrix[2, :3] + matrix[2, 3]
    a = matrix[:2, :3]
    # the image is (u, v) with v down: camera z toward the viewer is a₀ × (−a₁) normalised; depth = −z
    toward = np.cross(a[0], -a[1])
    toward /= np.linalg.norm(toward)
    return -(xyz @ toward)


def local_scale(matrix: np.ndarray, kind: str, xyz: np.ndarray) -> np.ndarray:
    """px per Å (n,) at each point: the square root of the area scale of the projection's Jacobian there."""
    if kind == "perspective":
        uv, w = project(matrix, xyz)
        jac = (matrix[None, :2, :3] - uv[:, :, None] * matrix[None, 2:3, :3]) / w[:, None, None]
    else:
        jac = np.broadcast_to(matrix[:2, :3], (len(xyz), 2, 3))
    g = np.einsum("nij,nkj->nik", jac, jac)
    det = g[:, 0, 0] * g[:, 1, 1] - g[:, 0, 1] * g[:, 1, 0]
    return np.sqrt(np.sqrt(np.maximum(det, 0.0)))


def shown(uv: np.ndarray, depth: np.ndarray, rho: np.ndarray, margin: np.ndarray | float = 0.0) -> np.ndarray:
    """Bool (n,): the atom's centre lies farther than ``rho + margin`` px from every strictly nearer atom's centre
    (``rho``: each atom's drawn disc radius, px; ``margin``: each atom's own, px, so that most of its disc shows)."""
    n = len(uv)
    out = np.isfinite(uv).all(1)
    if n < 2:
        return out
    margin = np.broadcast_to(np.asarray(margin, dtype=np.float64), (n,))
    finite = np.flatnonzero(out)
    tree = cKDTree(uv[finite])
    reach = float(np.max(rho[finite]) + np.max(margin[finite])) if len(finite) else 0.0
    pairs = tree.query_pairs(reach, output_type="ndarray")
    if len(pairs) == 0:
        return out
    a, b = finite[pairs[:, 0]], finite[pairs[:, 1]]
    d = np.linalg.norm(uv[a] - uv[b], axis=1)
    # b hidden by a when a is nearer and b's centre is within a's disc (+ b's margin); and the other way round
    hb = (depth[a] < depth[b] - _DEPTH_EPS) & (d < rho[a] + margin[b])
    ha = (depth[b] < depth[a] - _DEPTH_EPS) & (d < rho[b] + margin[a])
    out[b[hb]] = False
    out[a[ha]] = False
    return out


def nearest_matches(det_uv: np.ndarray, det_labels: np.ndarray, atom_uv: np.ndarray, atom_labels: np.ndarray,
                    candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per detection, the nearest candidate atom of its element (label 0: any element) and the distance (px);
    (−1, inf) when there is none."""
    m = len(det_uv)
    idx = np.full(m, -1, dtype=np.int64)
    dist = np.full(m, np.inf)
    cand = np.flatnonzero(candidates)
    if len(cand) == 0 or m == 0:
        return idx, dist
    groups = {0: cand}
    for z in np.unique(det_labels):
        if z != 0:
            groups[int(z)] = cand[atom_labels[cand] == z]
    for z, atoms in groups.items():
        sel = np.flatnonzero(det_labels == z)
        if len(sel) == 0 or len(atoms) == 0:
            continue
        d, j = cKDTree(atom_uv[atoms]).query(det_uv[sel])
        idx[sel] = atoms[j]
        dist[sel] = d
    return idx, dist


class Evidence:
    """The quantities ``assess`` computes for one camera, kept for the fit and the pose comparison."""

    __slots__ = ("matched_atom", "residual", "n_missing", "n_plain", "n_behind", "radii_angstrom", "uv", "depth")

    def __init__(self, matched_atom, residual, n_missing, n_plain, n_behind, radii_angstrom, uv, depth):
        self.matched_atom, self.residual = matched_atom, residual
        self.n_missing, self.n_plain, self.n_behind = n_missing, n_plain, n_behind
        self.radii_angstrom, self.uv, self.depth = radii_angstrom, uv, depth


def chance_log10(atom_uv: np.ndarray, atom_labels: np.ndarray, det_labels: np.ndarray, n_explained: int,
                 match_px: float) -> float:
    """log10 of the probability that ``n_explained`` of the detections or more land within ``match_px`` of an
    atom of their element by chance: each detection explained with probability p = min(1, n_z π match_px² / A),
    n_z the projected atoms of its element (all atoms for an unknown element), A the area of the projected atoms'
    convex hull (px², at least one disc); the binomial tail at the detections' mean p (scipy.stats.binom)."""
    from scipy.spatial import ConvexHull, QhullError
    from scipy.stats import binom

    m = len(det_labels)
    finite = np.isfinite(atom_uv).all(1)
    if m == 0 or n_explained == 0 or finite.sum() == 0:
        return 0.0
    disc = math.pi * match_px ** 2
    try:
        area = ConvexHull(atom_uv[finite]).volume if finite.sum() >= 3 else disc
    except QhullError:
        area = disc
    area = max(area, disc)
    counts = {int(z): int((atom_labels[finite] == z).sum()) for z in np.unique(atom_labels[finite])}
    n_all = int(finite.sum())
    p = np.array([min(1.0, (counts.get(int(z), 0) if z else n_all) * disc / area) for z in det_labels])
    return float(binom.logsf(n_explained - 1, m, float(p.mean())) / math.log(10))


def drawn_radii(matrix: np.ndarray, kind: str, xyz: np.ndarray, labels: np.ndarray, det_labels: np.ndarray,
                det_radii: np.ndarray | None, matched_atom: np.ndarray | None) -> np.ndarray:
    """Drawn radius (n,) in Å per atom: the median over its element's matched detections of radius / local
    scale, else DEFAULT_RADIUS_SCALE × covalent radius."""
    radii = DEFAULT_RADIUS_SCALE * covalent_radii(labels)
    if det_radii is None or matched_atom is None:
        return radii
    ok = matched_atom >= 0
    if not ok.any():
        return radii
    scale = local_scale(matrix, kind, xyz[matched_atom[ok]])
    ratio = det_radii[ok] / np.maximum(scale, 1e-12)
    elem = labels[matched_atom[ok]]
    for z in np.unique(elem):
        radii[labels == z] = float(np.median(ratio[elem == z]))
    return radii


def assess(matrix: np.ndarray, kind: str, xyz: np.ndarray, labels: np.ndarray, det_uv: np.ndarray,
           det_labels: np.ndarray, det_radii: np.ndarray | None, width: int, height: int, match_px: float,
           radii_angstrom: np.ndarray | None = None) -> Evidence:
    """Project, decide what is shown, match and count (see the module docstring)."""
    uv, _ = project(matrix, xyz)
    depth = depth_of(matrix, kind, xyz)
    scale = local_scale(matrix, kind, xyz)
    finite = np.isfinite(uv).all(1)
    matched, dist = nearest_matches(det_uv, det_labels, uv, labels, finite)
    ok = dist <= match_px
    if det_radii is not None and radii_angstrom is None:
        radii_angstrom = drawn_radii(matrix, kind, xyz, labels, det_labels, det_radii, np.where(ok, matched, -1))
    elif radii_angstrom is None:
        radii_angstrom = DEFAULT_RADIUS_SCALE * covalent_radii(labels)
    rho = radii_angstrom * scale
    inside = finite.copy()
    inside[finite] = ((uv[finite] >= 0) & (uv[finite] < [width, height])).all(1)
    matched = np.where(ok, matched, -1)
    residual = np.where(ok, dist, np.nan)
    plain = shown(uv, depth, rho, MISSING_MARGIN * rho) & inside & (rho >= MIN_PLAIN_PX)
    missing = np.zeros(len(uv), dtype=bool)
    if plain.any():
        # an atom shown plainly is missing when no detection of its element (or of unknown element) lies near it
        d = np.full(int(plain.sum()), np.inf)
        if len(det_uv):
            _, d = nearest_matches(uv[plain], labels[plain], det_uv, det_labels, np.ones(len(det_uv), dtype=bool))
            unknown = det_labels == 0
            if unknown.any():
                d = np.minimum(d, cKDTree(det_uv[unknown]).query(uv[plain])[0])
        missing[np.flatnonzero(plain)] = d > match_px
        # a small element the detector mostly missed (hydrogens drawn a few px across) is no evidence against the
        # camera: left out of the count when most of its plain atoms are missing and it is drawn smaller than
        # SMALL_ELEMENT × the median plain atom of the other elements
        for z in np.unique(labels[plain]):
            sel = plain & (labels == z)
            others = plain & (labels != z)
            if (others.any() and missing[sel].mean() > 0.5
                    and float(np.median(rho[sel])) < SMALL_ELEMENT * float(np.median(rho[others]))):
                plain &= labels != z
                missing &= labels != z
    n_missing = int(missing.sum())
    n_behind = int((~np.isfinite(uv).all(1)).sum())
    return Evidence(matched, residual, n_missing, int(plain.sum()), n_behind, radii_angstrom, uv, depth)
