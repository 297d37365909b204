"""Drawn discs in one element's mask: candidate centres, circle fits and the explaining-away rule.

A drawn atom (a disc, or a sphere's silhouette) shows in its element's mask as a region whose *own* rim is an arc
of a circle: the rest of its visible region is bounded by nearer atoms (arcs of *their* circles, concave from this
side), by bonds and lines drawn over it, or by the image's edge. The steps, all on the mask (pixel frame: u right,
v down, pixel (i, j) centred at (j + ½, i + ½)):

1. **Rim points.** ``skimage.measure.find_contours`` at level ½ gives sub-pixel points on the mask's boundary;
   the inward normal at each is the gradient of the Gaussian-smoothed mask (σ = 1 px).
2. **Centre votes.** Each rim point votes along its inward normal at every radius of the element's range (the
   gradient Hough transform: one vote per radius, where ``skimage.transform.hough_circle`` votes on a full circle
   per radius); a rim arc of a circle puts its votes on its centre, an occluding arc (normals diverging) spreads
   them. Candidates are the vote peaks (``skimage.feature.peak_local_max``).
3. **Fit.** Around a candidate, the rim points whose normal points at it and whose distance is the radius (±2 px,
   then ±1 px) are its support; a geometric least-squares circle fit (Gauss–Newton on the distances) refines
   centre and radius, four rounds. With less than ``FREE_RADIUS_COVER`` of the rim seen, the radius is held at
   the element's reference radius (a short arc determines a centre only for a known radius).
4. **Keep.** A fit is kept when its rim support covers at least ``MIN_COVER`` of the circumference, the disc holds
   no background (a drawn disc is opaque), and, taking fits in order of support, it explains at least
   ``min_pixels`` mask pixels no kept disc of the element already explains (two fits of one disc, or a circle
   through the rims of several discs, explain nothing new).
5. **Slivers.** Mask pixels no kept disc explains form regions; a region of at least ``min_pixels`` is the
   visible part of a disc not yet found: its rim points that lie on no kept disc's rim are fitted with the
   reference radius.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import ndimage as ndi

#: a fit that sees at least this share of its rim fits its radius too; below, the element's reference radius
FREE_RADIUS_COVER = 0.5
#: the least share of the circumference a kept disc's rim support covers (36 bins of 10°)
MIN_COVER = 0.1
#: the largest share of a kept disc's inside (beyond 1.5 px of its rim) that may be background
MAX_BACKGROUND_INSIDE = 0.02
#: a rim point supports a circle when its inward normal is within acos(0.9) ≈ 26° of the direction to the centre
NORMAL_COS = 0.9
#: the pixels a disc explains are counted this many px inside its rim (the main pass; slivers count to the rim)
INNER_RIM = 2.0
#: the new pixels a disc explains (main pass) are at least this thick somewhere (largest inscribed radius, px):
#: a thin line of the element's colour across another disc (an antialiased line or outline) is no disc
MIN_THICKNESS = 1.5
#: a sliver's disc holds at least this share of the sliver's pixels
SLIVER_INSIDE = 0.8
#: the scale of the robust fit's weights (px): rim points farther than this from the circle do not count
ROBUST_SCALE = 1.5
#: a rim point lies on a kept disc's rim when its distance from the centre is within these px of the radius
#: (inside, outside: outlines and antialiasing put an occluder's rim up to ~2 px outside its fitted fill radius)
KEPT_RIM_BAND = (1.0, 2.2)
_BINS = 36


@dataclass(frozen=True)
class Circle:
    """A fitted disc: centre (u, v) px, radius px, rim support (points), cover (share of 10° bins of the rim
    with support), and whether the radius was fitted (False: the reference radius)."""

    u: float
    v: float
    r: float
    support: int
    cover: float
    radius_fitted: bool

    @property
    def score(self) -> float:
        return self.cover * math.sqrt(self.support)


def rim_points(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(points (n, 2) (u, v) px, inward unit normals (n, 2)) on the boundary of ``mask`` (step 1)."""
    from skimage.measure import find_contours  # lazy: skimage is the [images] extra

    if not mask.any():
        return np.zeros((0, 2)), np.zeros((0, 2))
    f = mask.astype(np.float64)
    # pad so that regions touching the image edge get a closed contour (its edge part is cut out below)
    conts = find_contours(np.pad(f, 1), 0.5)
    if not conts:
        return np.zeros((0, 2)), np.zeros((0, 2))
    rc = np.concatenate(conts) - 1.0  # (row, col) of the unpadded mask
    h, w = mask.shape
    inside = (rc[:, 0] > 0) & (rc[:, 0] < h - 1) & (rc[:, 1] > 0) & (rc[:, 1] < w - 1)
    rc = rc[inside]
    sm = ndi.gaussian_filter(f, 1.0)
    g = np.stack([ndi.map_coordinates(ndi.sobel(sm, axis=1), rc.T, order=1),
                  ndi.map_coordinates(ndi.sobel(sm, axis=0), rc.T, order=1)], axis=1)  # (d/du, d/dv)
    norm = np.linalg.norm(g, axis=1)
    ok = norm > 1e-6
    uv = rc[ok][:, ::-1] + 0.5  # pixel centres at +½
    return uv, g[ok] / norm[ok, None]


def shading_edges(level: np.ndarray, mask: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    """(points (n, 2) (u, v) px, normals (n, 2)) where the lighting jumps inside a shaded element's mask: the rim of
    a nearer sphere over a farther one of the same colour, which no colour boundary shows. A pixel pair (4-connected,
    both in the mask) whose lighting levels differ by more than ``step`` is an edge at its midpoint; the nearer
    sphere is on the darker side (its limb), so the inward normal points there."""
    pts, nrm = [], []
    k = np.where(mask, level, np.nan)
    for axis, (du, dv) in ((1, (1.0, 0.0)), (0, (0.0, 1.0))):
        a = k[:, :-1] if axis == 1 else k[:-1, :]
        b = k[:, 1:] if axis == 1 else k[1:, :]
        jump = b - a
        hit = np.isfinite(jump) & (np.abs(jump) > step)
        ii, jj = np.nonzero(hit)
        sign = np.sign(jump[ii, jj])  # > 0: the second pixel brighter, the first (darker) side is the nearer sphere
        u = jj + 0.5 + 0.5 * du
        v = ii + 0.5 + 0.5 * dv
        pts.append(np.stack([u, v], axis=1))
        nrm.append(np.stack([-sign * du, -sign * dv], axis=1))
    if not pts:
        return np.zeros((0, 2)), np.zeros((0, 2))
    return np.concatenate(pts), np.concatenate(nrm)


def centre_votes(points: np.ndarray, normals: np.ndarray, shape: tuple[int, int], r_lo: float, r_hi: float) -> np.ndarray:
    """Votes (H, W) for disc centres: each rim point votes once per whole-pixel radius in [r_lo, r_hi] along its
    inward normal; summed over 3×3 pixels (step 2)."""
    h, w = shape
    radii = np.arange(max(r_lo, 0.5), r_hi + 0.5, 1.0)
    if not len(points) or not len(radii):
        return np.zeros(shape)
    at = points[:, None, :] + radii[None, :, None] * normals[:, None, :]
    col = np.floor(at[..., 0]).astype(np.int64)
    row = np.floor(at[..., 1]).astype(np.int64)
    ok = (row >= 0) & (row < h) & (col >= 0) & (col < w)
    acc = np.bincount(row[ok] * w + col[ok], minlength=h * w).reshape(h, w).astype(np.float64)
    return ndi.uniform_filter(acc, 3, mode="constant") * 9.0


def fit_circle(points: np.ndarray, centre: np.ndarray, radius: float | None, *, rounds: int = 10) -> tuple[np.ndarray, float]:
    """Geometric least-squares circle through ``points`` (n, 2), robust: iteratively reweighted Gauss–Newton on
    the distances to the circle from ``centre`` (Tukey's biweight, scale ``ROBUST_SCALE`` px, so that a few rim
    points of another disc do not pull the fit); the radius held at ``radius`` when given, else fitted (its
    start: the median distance)."""
    c = np.asarray(centre, dtype=np.float64).copy()
    r = float(np.median(np.linalg.norm(points - c, axis=1))) if radius is None else float(radius)
    free = radius is None
    for _ in range(rounds):
        d = points - c
        dist = np.maximum(np.sqrt((d * d).sum(axis=1)), 1e-9)
        res = dist - r
        wgt = np.clip(1.0 - (res / ROBUST_SCALE) ** 2, 0.0, None) ** 2
        if wgt.sum() < 3:
            wgt = np.ones_like(res)
        jac = -d / dist[:, None]
        if free:
            jac = np.column_stack([jac, -np.ones(len(points))])
        jw = jac * wgt[:, None]
        try:  # the normal equations of the weighted problem (2×2 or 3×3)
            step = np.linalg.solve(jw.T @ jac, -(jw.T @ res))
        except np.linalg.LinAlgError:
            break
        c += step[:2]
        if free:
            r += float(step[2])
        if float(np.abs(step).max()) < 1e-4:
            break
    return c, r


def _support(points, normals, c, r, band) -> tuple[np.ndarray, float]:
    d = points - c
    dist = np.maximum(np.linalg.norm(d, axis=1), 1e-9)
    facing = -(d * normals).sum(axis=1) / dist
    sup = (np.abs(dist - r) < band) & (facing > NORMAL_COS)
    ang = np.arctan2(d[sup, 1], d[sup, 0])
    cover = len(np.unique(np.floor((ang + np.pi) / (2 * np.pi) * _BINS).astype(np.int64) % _BINS)) / _BINS
    return sup, cover


def refine(points: np.ndarray, normals: np.ndarray, start: np.ndarray, r_lo: float, r_hi: float,
           r_ref: float, r_tol: float, free_cover: float = FREE_RADIUS_COVER) -> Circle | None:
    """The circle a candidate centre ``start`` (u, v) stands for, or None (step 3): the radius fitted when the
    support covers at least ``free_cover`` of the rim and the fit stays within ``r_tol`` (relative) of the
    reference radius ``r_ref``, else held at ``r_ref``."""
    d = points - start
    dist = np.maximum(np.linalg.norm(d, axis=1), 1e-9)
    facing = -(d * normals).sum(axis=1) / dist
    sel = (facing > NORMAL_COS) & (dist >= r_lo - 1.0) & (dist <= r_hi + 1.0)
    if sel.sum() < 6:
        return None
    r = float(np.median(dist[sel]))
    c = np.asarray(start, dtype=np.float64)
    fitted = False
    for band in (2.0, 2.0, 1.0, 1.0):
        sup, cover = _support(points, normals, c, r, band)
        if sup.sum() < 6:
            return None
        c, r, fitted = _fit_bounded(points[sup], c, cover, r_ref, r_tol, free_cover)
    sup, cover = _support(points, normals, c, r, 1.0)
    if not np.isfinite(c).all() or sup.sum() < 6:
        return None
    return Circle(float(c[0]), float(c[1]), float(r), int(sup.sum()), float(cover), fitted)


def _fit_bounded(points: np.ndarray, c: np.ndarray, cover: float, r_ref: float, r_tol: float,
                 free_cover: float = FREE_RADIUS_COVER) -> tuple[np.ndarray, float, bool]:
    """(centre, radius, fitted): the radius fitted when ``cover`` ≥ ``free_cover`` and the fit stays within
    ``r_tol`` of ``r_ref``, else held at ``r_ref``."""
    if cover >= free_cover:
        new, r = fit_circle(points, c, None)
        if np.isfinite(new).all() and abs(r - r_ref) <= r_tol * r_ref:
            return new, r, True
    return fit_circle(points, c, r_ref)[0], r_ref, False


def disc_pixels(shape: tuple[int, int], c: Circle, grow: float = 0.0, core: float | None = None) -> tuple[
        tuple[slice, slice], np.ndarray]:
    """(window, inside (h, w) bool) of the pixel centres within ``c.r + grow`` of the disc's centre; with
    ``core``, within ``c.r - core`` instead (the same window)."""
    h, w = shape
    r = max(c.r + grow, 0.0)
    i0, i1 = max(0, int(math.floor(c.v - r - 1))), min(h, int(math.ceil(c.v + r + 1)))
    j0, j1 = max(0, int(math.floor(c.u - r - 1))), min(w, int(math.ceil(c.u + r + 1)))
    ii, jj = np.mgrid[i0:i1, j0:j1]
    d2 = (jj + 0.5 - c.u) ** 2 + (ii + 0.5 - c.v) ** 2
    if core is not None:
        r = max(c.r - core, 0.0)
    return (slice(i0, i1), slice(j0, j1)), d2 <= r * r


def opaque(c: Circle, background: np.ndarray) -> bool:
    """The disc, beyond 1.5 px of its rim, holds at most MAX_BACKGROUND_INSIDE background (step 4)."""
    win, inside = disc_pixels(background.shape, c, grow=-1.5)
    n = int(inside.sum())
    return n == 0 or float(background[win][inside].mean()) <= MAX_BACKGROUND_INSIDE


def explain(circles: list[Circle], mask: np.ndarray, min_pixels: int, *, rim: float = INNER_RIM) -> tuple[
        list[Circle], np.ndarray]:
    """(kept circles, explained (H, W) bool): circles in order of score, each kept when it explains at least
    ``min_pixels`` mask pixels no kept circle explains, more than ``rim`` px inside its rim (a disc's colour
    fills it; a thin arc of colour along a rim is an outline's antialiasing), and its centre is not within half a
    radius of a kept one's, and (main pass) those pixels are at least MIN_THICKNESS thick somewhere (step 4)."""
    explained = np.zeros(mask.shape, dtype=bool)
    kept: list[Circle] = []
    for c in sorted(circles, key=lambda x: -x.score):
        if any(math.hypot(c.u - k.u, c.v - k.v) < 0.5 * min(c.r, k.r) for k in kept):
            continue
        win, inside = disc_pixels(mask.shape, c, grow=0.5)
        _, core = disc_pixels(mask.shape, c, grow=0.5, core=min(rim, 0.5 * c.r))
        new = core & mask[win] & ~explained[win]
        if int(new.sum()) < min_pixels or (rim > 0 and ndi.distance_transform_edt(new).max() < MIN_THICKNESS):
            continue
        explained[win] |= inside
        kept.append(c)
    return kept, explained


def on_kept_rims(points: np.ndarray, kept: list[Circle]) -> np.ndarray:
    """True for the points on a kept circle's rim (``KEPT_RIM_BAND``: occluding arcs of found discs)."""
    out = np.zeros(len(points), dtype=bool)
    lo, hi = KEPT_RIM_BAND
    for c in kept:
        gap = np.hypot(points[:, 0] - c.u, points[:, 1] - c.v) - c.r
        out |= (gap > -lo) & (gap < hi)
    return out


def slivers(mask: np.ndarray, explained: np.ndarray, points: np.ndarray, normals: np.ndarray, others: list[Circle],
            r_ref: float, min_pixels: int) -> list[Circle]:
    """Circles of the reference radius for the mask regions no kept circle explains (step 5). ``others``: every
    kept circle of every element (their rims are occluding arcs, not this disc's)."""
    rest = mask & ~explained
    labels, n = ndi.label(rest)
    if n == 0:
        return []
    sizes = np.bincount(labels.ravel())
    found = []
    free = ~on_kept_rims(points, others) if len(points) else np.zeros(0, dtype=bool)
    pi = np.clip(np.floor(points[:, 1]).astype(np.int64), 0, mask.shape[0] - 1) if len(points) else None
    pj = np.clip(np.floor(points[:, 0]).astype(np.int64), 0, mask.shape[1] - 1) if len(points) else None
    grown = ndi.grey_dilation(labels, size=3)
    for lab in np.flatnonzero(sizes >= min_pixels):
        if lab == 0:
            continue
        own = free & (grown[pi, pj] == lab)
        if own.sum() < 6:
            continue
        pts, nrm = points[own], normals[own]
        # start: the region's rim points pushed inward by the radius, their median (the own arc's points agree)
        start = np.median(pts + r_ref * nrm, axis=0)
        c, _ = fit_circle(pts, start, r_ref)
        sup, cover = _support(pts, nrm, c, r_ref, 1.0)
        if sup.sum() < 6 or not np.isfinite(c).all():
            continue
        c, _ = fit_circle(pts[sup], c, r_ref)
        sup, cover = _support(pts, nrm, c, r_ref, 1.0)
        if sup.sum() < 6:
            continue
        ii, jj = np.nonzero(labels == lab)
        if np.mean(np.hypot(jj + 0.5 - c[0], ii + 0.5 - c[1]) <= r_ref + 0.5) < SLIVER_INSIDE:
            continue
        found.append(Circle(float(c[0]), float(c[1]), float(r_ref), int(sup.sum()), float(cover), False))
    return found


def polish(c: Circle, points: np.ndarray, normals: np.ndarray, others: list[Circle], r_ref: float,
           r_tol: float) -> Circle:
    """``c`` refitted on its rim points that lie on no other kept disc's rim (the last step: an occluder's outline
    near the intersection of two rims no longer pulls the fit), three rounds, the radius bounded as in
    :func:`refine`; ``c`` itself when too few points are left."""
    if not len(points):
        return c
    near = np.hypot(points[:, 0] - c.u, points[:, 1] - c.v) < c.r + 4.0
    points, normals = points[near], normals[near]
    free = ~on_kept_rims(points, [o for o in others if o is not c
                                  and math.hypot(o.u - c.u, o.v - c.v) < o.r + c.r + 4.0])
    centre, r, fitted = np.array([c.u, c.v]), c.r, c.radius_fitted
    for band in (2.0, 1.0, 1.0):
        sup, cover = _support(points, normals, centre, r, band)
        sup &= free
        if sup.sum() < 6:
            return c
        new, r_new, fitted = _fit_bounded(points[sup], centre, cover, r_ref, r_tol)
        if not np.isfinite(new).all() or math.hypot(*(new - np.array([c.u, c.v]))) > 0.5 * c.r:
            return c
        centre, r = new, r_new
    sup, cover = _support(points, normals, centre, r, 1.0)
    return Circle(float(centre[0]), float(centre[1]), float(r), int(sup.sum()), float(cover), fitted)
