"""numba kernels of the oracle: contiguous float64/int64 arrays in, arrays out. No Python objects, stable
sorts (mergesort), no fastmath. The per-seed hot loop of ``reconstruct_one`` is written out on scalars:
in numba, every call that passes arrays (even an inlined one) costs an atomic reference-count pair per array,
which dominated the run time; its grid scan and least-squares solve duplicate ``grid_nearest`` and
``triangulate_into`` (tested against the same twins through the whole oracle). The public wrapper is :mod:`viewcert.oracle.triangulate`; every kernel has a
slow twin in ``tests/naive.py``.

Geometry. Every observed 2D point is a ray (origin o, unit direction d) in world Å. Orthographic view:
2D coordinate w = in-plane camera Å (x right, y up), o = centre + w0·R[0] + w1·R[1], d = −R[2].
Perspective view: w = (u, v) px, o = camera position, d = the pinhole ray. The least-squares point of a set
of rays solves (Σ (I − d dᵀ)) x = Σ (I − d dᵀ) o; for orthographic views this is the closed form
x̂ = (K·I − Σ d dᵀ)⁻¹ Σ Rᵀ y (the midpoint of closest approach for two rays).

Residual of a 3D point x against an observed point p of view k ("dmode" of the view):
0 orthographic: |w(x) − w_p| in Å (the exact distance from x to the ray of p);
1 perspective, compared in px: |uv(x) − uv_p| px;
2 perspective, compared in Å at the point's depth: |uv(x) − uv_p| · depth(x) / f.
"""

from __future__ import annotations

import numpy as np
from numba import njit

SQRT2 = np.sqrt(2.0)
SORT_QUANTUM = 1e-7  # Å: output order key of the deterministic merge
MAX_SLACK = 1.0e3
MAX_ITER = 4

# outcome codes of one seed candidate
SKIP = 0
ACCEPT = 1
NEAR = 2
REJECT = 3
DEGENERATE = 4

# layout of the counts vector returned per structure
C_PAIRS = 0  # view pairs used to seed
C_DEGENERATE_PAIRS = 1  # view pairs skipped (parallel directions)
C_SEEDS = 2  # seed pairs of 2D points tested (inside the epipolar band)
C_ACCEPTED = 3  # accepted candidates before merging
C_UNIQUE = 4  # distinct support tuples among them
C_POINTS = 5  # output points
C_TRANSLATE_REJECTED = 6  # clusters rejected by translate consistency (tiled observations)
C_NEAR = 7  # near-miss candidates (rejected, max residual/δ ≤ window)
C_OCCLUDED = 8  # output points supported in K−1 of K views (occlusion)
C_SITES = 9  # distinct 2D sites after collapsing coincident points
N_COUNTS = 10


# --------------------------------------------------------------------------------------- small linear algebra
@njit(cache=True)
def solve3_into(a, b, out):
    """Solve the 3×3 system a x = b in closed form (adjugate) into ``out``. Returns False (out untouched)
    when a is numerically singular (|det| ≤ 1e-12 · max|a|³)."""
    a00, a01, a02 = a[0, 0], a[0, 1], a[0, 2]
    a10, a11, a12 = a[1, 0], a[1, 1], a[1, 2]
    a20, a21, a22 = a[2, 0], a[2, 1], a[2, 2]
    c00 = a11 * a22 - a12 * a21
    c01 = a12 * a20 - a10 * a22
    c02 = a10 * a21 - a11 * a20
    det = a00 * c00 + a01 * c01 + a02 * c02
    m = 0.0
    for i in range(3):
        for j in range(3):
            v = abs(a[i, j])
            if v > m:
                m = v
    if m == 0.0 or abs(det) <= 1e-12 * m * m * m:
        return False
    c10 = a02 * a21 - a01 * a22
    c11 = a00 * a22 - a02 * a20
    c12 = a01 * a20 - a00 * a21
    c20 = a01 * a12 - a02 * a11
    c21 = a02 * a10 - a00 * a12
    c22 = a00 * a11 - a01 * a10
    b0, b1, b2 = b[0], b[1], b[2]
    out[0] = (c00 * b0 + c10 * b1 + c20 * b2) / det
    out[1] = (c01 * b0 + c11 * b1 + c21 * b2) / det
    out[2] = (c02 * b0 + c12 * b1 + c22 * b2) / det
    return True


@njit(cache=True)
def solve3(a, b):
    """Solve the 3×3 system a x = b in closed form. Returns (x, ok)."""
    x = np.zeros(3)
    ok = solve3_into(a, b, x)
    return x, ok


@njit(cache=True)
def _accumulate(ma, mb, origins, dirs, p, s0, s1, s2):
    """ma += I − d dᵀ ; mb += (I − d dᵀ)(o − s) for ray p (origin moved by −s). Element access only: no
    array views (each view costs an atomic reference count in the hot loop)."""
    o0 = origins[p, 0] - s0
    o1 = origins[p, 1] - s1
    o2 = origins[p, 2] - s2
    d0 = dirs[p, 0]
    d1 = dirs[p, 1]
    d2 = dirs[p, 2]
    dd = d0 * o0 + d1 * o1 + d2 * o2
    ma[0, 0] += 1.0 - d0 * d0
    ma[0, 1] -= d0 * d1
    ma[0, 2] -= d0 * d2
    ma[1, 0] -= d1 * d0
    ma[1, 1] += 1.0 - d1 * d1
    ma[1, 2] -= d1 * d2
    ma[2, 0] -= d2 * d0
    ma[2, 1] -= d2 * d1
    ma[2, 2] += 1.0 - d2 * d2
    mb[0] += o0 - d0 * dd
    mb[1] += o1 - d1 * dd
    mb[2] += o2 - d2 * dd


@njit(cache=True)
def triangulate_into(origins, dirs, idx, ma, mb, out):
    """Least-squares point of the rays ``idx`` (indices into origins/dirs, unit directions; negative entries
    are skipped) into ``out``, using ma (3,3) and mb (3,) as scratch. Returns ok (≥ 2 rays, non-singular)."""
    for r in range(3):
        mb[r] = 0.0
        for c in range(3):
            ma[r, c] = 0.0
    n = 0
    for t in range(idx.shape[0]):
        p = idx[t]
        if p < 0:
            continue
        _accumulate(ma, mb, origins, dirs, p, 0.0, 0.0, 0.0)
        n += 1
    if n < 2:
        return False
    return solve3_into(ma, mb, out)


@njit(cache=True)
def triangulate_rays(origins, dirs, idx):
    """Least-squares point of the rays ``idx`` (closed form). Returns (x, ok)."""
    x = np.zeros(3)
    ok = triangulate_into(origins, dirs, idx, np.zeros((3, 3)), np.zeros(3), x)
    return x, ok


@njit(cache=True)
def line_gap(o1, d1, o2, d2):
    """Distance between the lines (o1, d1) and (o2, d2) (unit directions); inf when parallel."""
    nx = d1[1] * d2[2] - d1[2] * d2[1]
    ny = d1[2] * d2[0] - d1[0] * d2[2]
    nz = d1[0] * d2[1] - d1[1] * d2[0]
    nn = np.sqrt(nx * nx + ny * ny + nz * nz)
    if nn < 1e-12:
        return np.inf
    return abs(nx * (o2[0] - o1[0]) + ny * (o2[1] - o1[1]) + nz * (o2[2] - o1[2])) / nn


@njit(cache=True)
def line_gap_idx(origins, dirs, p, q):
    """line_gap of rays p and q (element access only)."""
    nx = dirs[p, 1] * dirs[q, 2] - dirs[p, 2] * dirs[q, 1]
    ny = dirs[p, 2] * dirs[q, 0] - dirs[p, 0] * dirs[q, 2]
    nz = dirs[p, 0] * dirs[q, 1] - dirs[p, 1] * dirs[q, 0]
    nn = np.sqrt(nx * nx + ny * ny + nz * nz)
    if nn < 1e-12:
        return np.inf
    return abs(nx * (origins[q, 0] - origins[p, 0]) + ny * (origins[q, 1] - origins[p, 1])
               + nz * (origins[q, 2] - origins[p, 2])) / nn


# --------------------------------------------------------------------------------------- cameras
@njit(cache=True)
def view_coords(kind, rot, cen, sf, cx, cy, width, height, uv):
    """2D working coordinates (m, 2) of a view from pixels: orthographic → in-plane Å (exactly as
    ``ViewObservation.plane_coordinates``), perspective → px unchanged."""
    m = uv.shape[0]
    w = np.empty((m, 2))
    for p in range(m):
        if kind == 0:
            w[p, 0] = (uv[p, 0] - 0.5 * width) / sf
            w[p, 1] = (0.5 * height - uv[p, 1]) / sf
        else:
            w[p, 0] = uv[p, 0]
            w[p, 1] = uv[p, 1]
    return w


@njit(cache=True)
def view_rays(kind, rot, cen, sf, cx, cy, w, origins, dirs):
    """Fill origins/dirs (m, 3) with the rays of the 2D points w of one view."""
    m = w.shape[0]
    for p in range(m):
        if kind == 0:
            for j in range(3):
                origins[p, j] = cen[j] + w[p, 0] * rot[0, j] + w[p, 1] * rot[1, j]
                dirs[p, j] = -rot[2, j]
        else:
            a0 = (w[p, 0] - cx) / sf
            a1 = (cy - w[p, 1]) / sf
            nrm = 0.0
            for j in range(3):
                v = a0 * rot[0, j] + a1 * rot[1, j] - rot[2, j]
                dirs[p, j] = v
                nrm += v * v
            nrm = np.sqrt(nrm)
            for j in range(3):
                dirs[p, j] /= nrm
                origins[p, j] = cen[j]


@njit(cache=True)
def project_point(kind, rot, cen, sf, cx, cy, x):
    """(w0, w1, depth) of world point x in a view (orthographic: in-plane Å; perspective: px; NaN when the
    point is at or behind a perspective camera)."""
    d0 = x[0] - cen[0]
    d1 = x[1] - cen[1]
    d2 = x[2] - cen[2]
    c0 = rot[0, 0] * d0 + rot[0, 1] * d1 + rot[0, 2] * d2
    c1 = rot[1, 0] * d0 + rot[1, 1] * d1 + rot[1, 2] * d2
    c2 = rot[2, 0] * d0 + rot[2, 1] * d1 + rot[2, 2] * d2
    depth = -c2
    if kind == 0:
        return c0, c1, depth
    if depth <= 0.0:
        return np.nan, np.nan, depth
    return cx + sf * c0 / depth, cy - sf * c1 / depth, depth


@njit(cache=True)
def project_k(kind, rot, cen, sf, cx, cy, k, x):
    """project_point for view k of the per-view arrays (element access only)."""
    d0 = x[0] - cen[k, 0]
    d1 = x[1] - cen[k, 1]
    d2 = x[2] - cen[k, 2]
    c0 = rot[k, 0, 0] * d0 + rot[k, 0, 1] * d1 + rot[k, 0, 2] * d2
    c1 = rot[k, 1, 0] * d0 + rot[k, 1, 1] * d1 + rot[k, 1, 2] * d2
    c2 = rot[k, 2, 0] * d0 + rot[k, 2, 1] * d1 + rot[k, 2, 2] * d2
    depth = -c2
    if kind[k] == 0:
        return c0, c1, depth
    if depth <= 0.0:
        return np.nan, np.nan, depth
    return cx[k] + sf[k] * c0 / depth, cy[k] - sf[k] * c1 / depth, depth


@njit(cache=True)
def to_compare(dmode, sf, depth, r2d):
    """A 2D distance of a view in the unit δ of that view is stated in (see module docstring)."""
    if dmode == 2:
        return r2d * depth / sf
    return r2d


@njit(cache=True)
def to_angstrom(dmode, sf, depth, r2d):
    """A 2D distance of a view in Å (orthographic: unchanged; perspective: at the point's depth)."""
    if dmode == 0:
        return r2d
    return r2d * depth / sf


@njit(cache=True)
def radius_2d(dmode, sf, depth, rcmp):
    """A radius in the compare unit of a view → 2D units of that view."""
    if dmode == 2:
        if depth <= 0.0:
            return 0.0
        return rcmp * sf / depth
    return rcmp


# --------------------------------------------------------------------------------------- sorting helpers
@njit(cache=True)
def lexsort_rows(cols):
    """Stable lexicographic order of the rows of an int64 matrix (n, c): column 0 most significant."""
    n = cols.shape[0]
    order = np.arange(n)
    for c in range(cols.shape[1] - 1, -1, -1):
        key = np.empty(n, dtype=np.int64)
        for i in range(n):
            key[i] = cols[order[i], c]
        sub = np.argsort(key, kind="mergesort")
        order = order[sub]
    return order


@njit(cache=True)
def row_keys(cols):
    """A 62-bit key per row of a non-negative-or-(−1) int64 matrix: two polynomial hashes modulo 2³¹ − 1
    (no overflow). Equal rows have equal keys; unequal rows collide rarely (callers compare rows)."""
    n = cols.shape[0]
    keys = np.empty(n, dtype=np.int64)
    p = 2147483647
    for i in range(n):
        h1 = 17
        h2 = 31
        for c in range(cols.shape[1]):
            v = (cols[i, c] + 2) % p
            h1 = (h1 * 1000003 + v) % p
            h2 = (h2 * 999983 + v * 7 + 1) % p
        keys[i] = h1 * 2147483648 + h2
    return keys


@njit(cache=True)
def label_ranks(labels):
    """(unique sorted labels, rank of each label)."""
    uniq = np.unique(labels)
    rank = np.searchsorted(uniq, labels)
    return uniq, rank.astype(np.int64)


@njit(cache=True)
def collapse_sites(w, lrank, eps):
    """Representatives of coincident 2D points of one view: points with the same label whose coordinates
    fall in the same eps-grid cell are one site; the representative is the lowest index. Returns
    (is_site (m,) bool). eps ≤ 0 keeps every point."""
    m = w.shape[0]
    is_site = np.ones(m, dtype=np.bool_)
    if eps <= 0.0 or m < 2:
        return is_site
    cols = np.empty((m, 3), dtype=np.int64)
    for p in range(m):
        cols[p, 0] = lrank[p]
        cols[p, 1] = np.int64(np.floor(w[p, 0] / eps))
        cols[p, 2] = np.int64(np.floor(w[p, 1] / eps))
    order = lexsort_rows(cols)
    for t in range(1, m):
        a = order[t - 1]
        b = order[t]
        if cols[a, 0] == cols[b, 0] and cols[a, 1] == cols[b, 1] and cols[a, 2] == cols[b, 2]:
            is_site[b] = False  # stable sort: a < b within equal keys
    return is_site


# --------------------------------------------------------------------------------------- 2D grid per view
@njit(cache=True)
def build_grid(w, lrank, sites, h, nlab):
    """Uniform grid (cell size h) over the sites of one view, as a CSR table: cell (label rank l, gx, gy) has
    key (l·nx + gx)·ny + gy and holds gsites[start[key]:start[key+1]] (in site order). nx·ny is at most about
    the number of sites when h ≥ extent/√sites. Returns (ox, oy, nx, ny, start, gsites)."""
    ns = sites.shape[0]
    if ns == 0:
        return 0.0, 0.0, 1, 1, np.zeros(nlab + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ox = np.inf
    oy = np.inf
    mx = -np.inf
    my = -np.inf
    for t in range(ns):
        p = sites[t]
        ox = min(ox, w[p, 0])
        oy = min(oy, w[p, 1])
        mx = max(mx, w[p, 0])
        my = max(my, w[p, 1])
    nx = np.int64(min((mx - ox) / h, 4.0e6)) + 1
    ny = np.int64(min((my - oy) / h, 4.0e6)) + 1
    ncell = nlab * nx * ny
    keys = np.empty(ns, dtype=np.int64)
    start = np.zeros(ncell + 1, dtype=np.int64)
    for t in range(ns):
        p = sites[t]
        gx = min(np.int64((w[p, 0] - ox) / h), nx - 1)
        gy = min(np.int64((w[p, 1] - oy) / h), ny - 1)
        key = (lrank[p] * nx + gx) * ny + gy
        keys[t] = key
        start[key + 1] += 1
    for c in range(ncell):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    gsites = np.empty(ns, dtype=np.int64)
    for t in range(ns):
        gsites[fill[keys[t]]] = sites[t]
        fill[keys[t]] += 1
    return ox, oy, nx, ny, start, gsites


@njit(cache=True)
def grid_nearest(w, start, soff, gsites, goff, ox, oy, nx, ny, h, lr, q0, q1, rad):
    """Nearest site with label rank lr within 2D distance ≤ rad of (q0, q1); ties → lowest point index.
    The grid is start[soff:…], gsites[goff:…] (offsets into concatenated per-view tables).
    Returns (point index or −1, distance)."""
    best = -1
    bestd = np.inf
    if not (rad >= 0.0) or not np.isfinite(q0) or not np.isfinite(q1):
        return best, bestd
    fx = (q0 - ox) / h
    fy = (q1 - oy) / h
    if fx < -1.0e15 or fx > 1.0e15 or fy < -1.0e15 or fy > 1.0e15:
        return best, bestd
    span = np.int64(np.ceil(rad / h))
    if span > nx + ny:
        span = nx + ny
    gx = np.int64(np.floor(fx))
    gy = np.int64(np.floor(fy))
    x0 = max(gx - span, 0)
    x1 = min(gx + span, nx - 1)
    y0 = max(gy - span, 0)
    y1 = min(gy + span, ny - 1)
    if x0 > x1 or y0 > y1:
        return best, bestd
    r2 = rad * rad
    for cx in range(x0, x1 + 1):
        base = soff + (lr * nx + cx) * ny
        lo = start[base + y0]
        hi = start[base + y1 + 1]
        for t in range(lo, hi):
            p = gsites[goff + t]
            e0 = w[p, 0] - q0
            e1 = w[p, 1] - q1
            d2 = e0 * e0 + e1 * e1
            if d2 <= r2 and (d2 < bestd or (d2 == bestd and p < best)):
                bestd = d2
                best = p
    if best < 0:
        return -1, np.inf
    return best, np.sqrt(bestd)


# --------------------------------------------------------------------------------------- periodic helpers
@njit(cache=True)
def min_image(dv, lat, inv):
    """Shortest lattice-equivalent vector of dv (Cartesian) and the integer translation removed."""
    f0 = dv[0] * inv[0, 0] + dv[1] * inv[1, 0] + dv[2] * inv[2, 0]
    f1 = dv[0] * inv[0, 1] + dv[1] * inv[1, 1] + dv[2] * inv[2, 1]
    f2 = dv[0] * inv[0, 2] + dv[1] * inv[1, 2] + dv[2] * inv[2, 2]
    n0 = np.round(f0)
    n1 = np.round(f1)
    n2 = np.round(f2)
    best = np.zeros(3)
    bn = np.zeros(3)
    bestd = np.inf
    for a in range(-1, 2):
        for b in range(-1, 2):
            for c in range(-1, 2):
                m0 = n0 + a
                m1 = n1 + b
                m2 = n2 + c
                v0 = dv[0] - (m0 * lat[0, 0] + m1 * lat[1, 0] + m2 * lat[2, 0])
                v1 = dv[1] - (m0 * lat[0, 1] + m1 * lat[1, 1] + m2 * lat[2, 1])
                v2 = dv[2] - (m0 * lat[0, 2] + m1 * lat[1, 2] + m2 * lat[2, 2])
                d = v0 * v0 + v1 * v1 + v2 * v2
                if d < bestd:
                    bestd = d
                    best[0] = v0
                    best[1] = v1
                    best[2] = v2
                    bn[0] = m0
                    bn[1] = m1
                    bn[2] = m2
    return best, bn


@njit(cache=True)
def min_image_norm(dv, lat, inv):
    """Length of the shortest lattice-equivalent vector of dv (no allocation)."""
    f0 = dv[0] * inv[0, 0] + dv[1] * inv[1, 0] + dv[2] * inv[2, 0]
    f1 = dv[0] * inv[0, 1] + dv[1] * inv[1, 1] + dv[2] * inv[2, 1]
    f2 = dv[0] * inv[0, 2] + dv[1] * inv[1, 2] + dv[2] * inv[2, 2]
    n0 = np.round(f0)
    n1 = np.round(f1)
    n2 = np.round(f2)
    bestd = np.inf
    for a in range(-1, 2):
        for b in range(-1, 2):
            for c in range(-1, 2):
                m0 = n0 + a
                m1 = n1 + b
                m2 = n2 + c
                v0 = dv[0] - (m0 * lat[0, 0] + m1 * lat[1, 0] + m2 * lat[2, 0])
                v1 = dv[1] - (m0 * lat[0, 1] + m1 * lat[1, 1] + m2 * lat[2, 1])
                v2 = dv[2] - (m0 * lat[0, 2] + m1 * lat[1, 2] + m2 * lat[2, 2])
                d = v0 * v0 + v1 * v1 + v2 * v2
                if d < bestd:
                    bestd = d
    return np.sqrt(bestd)


@njit(cache=True)
def wrap_point(x, lat, inv):
    """x moved into the cell: fractional coordinates in [0, 1)."""
    out = np.zeros(3)
    f = np.zeros(3)
    for j in range(3):
        f[j] = x[0] * inv[0, j] + x[1] * inv[1, j] + x[2] * inv[2, j]
        f[j] = f[j] - np.floor(f[j])
        if f[j] >= 1.0:
            f[j] -= 1.0
    for j in range(3):
        out[j] = f[0] * lat[0, j] + f[1] * lat[1, j] + f[2] * lat[2, j]
    return out


@njit(cache=True)
def _grid3_params(pos, periodic, lat, inv, h, n):
    """Cell counts and origin of a 3D grid of cell size ≥ h over pos (periodic: fractional grid); at most
    about n cells in all."""
    cap = max(1, np.int64(np.cbrt(max(n, 1))) + 2)
    cells = np.ones(3, dtype=np.int64)
    orig = np.zeros(3)
    width = np.full(3, h)
    if periodic:
        for j in range(3):
            thick = 1.0 / np.sqrt(inv[0, j] ** 2 + inv[1, j] ** 2 + inv[2, j] ** 2)
            c = np.int64(min(thick / h, 1.0e6)) if h > 0 else 1
            c = min(c, cap)
            if c < 3:
                c = 1
            cells[j] = c
    else:
        hi = np.zeros(3)
        for j in range(3):
            orig[j] = np.inf
            hi[j] = -np.inf
        for i in range(n):
            for j in range(3):
                orig[j] = min(orig[j], pos[i, j])
                hi[j] = max(hi[j], pos[i, j])
        for j in range(3):
            if n == 0:
                orig[j] = 0.0
                continue
            c = np.int64(min((hi[j] - orig[j]) / h, 1.0e6)) + 1 if h > 0 else 1
            cells[j] = max(1, min(c, cap))
            # cell width ≥ h, widened when the count is capped
            width[j] = max(h, (hi[j] - orig[j]) / cells[j]) * (1.0 + 1e-12)
    return cells, orig, width


@njit(cache=True)
def _cell_of(pos, i, periodic, inv, cells, orig, width, g):
    for j in range(3):
        if periodic:
            f = pos[i, 0] * inv[0, j] + pos[i, 1] * inv[1, j] + pos[i, 2] * inv[2, j]
            f = f - np.floor(f)
            c = np.int64(f * cells[j])
        else:
            c = np.int64((pos[i, j] - orig[j]) / width[j])
        if c < 0:
            c = 0
        if c >= cells[j]:
            c = cells[j] - 1
        g[j] = c


@njit(cache=True)
def _cell_table(pos, lrank, periodic, lat, inv, h):
    """CSR table of a 3D grid (cell size ≥ h) over same-label points: (cells, orig, width, keys, start,
    members). members[start[key]:start[key + 1]] are the points of cell key in ascending index order."""
    n = pos.shape[0]
    cells, orig, width = _grid3_params(pos, periodic, lat, inv, h, n)
    nlab = 0
    for i in range(n):
        nlab = max(nlab, lrank[i] + 1)
    ncell = nlab * cells[0] * cells[1] * cells[2]
    keys = np.empty(n, dtype=np.int64)
    start = np.zeros(ncell + 1, dtype=np.int64)
    g = np.zeros(3, dtype=np.int64)
    for i in range(n):
        _cell_of(pos, i, periodic, inv, cells, orig, width, g)
        keys[i] = ((lrank[i] * cells[0] + g[0]) * cells[1] + g[1]) * cells[2] + g[2]
        start[keys[i] + 1] += 1
    for c in range(ncell):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    members = np.empty(n, dtype=np.int64)
    for i in range(n):
        members[fill[keys[i]]] = i
        fill[keys[i]] += 1
    return cells, orig, width, keys, start, members


@njit(cache=True)
def _neighbour_cells(i, pos, lrank, periodic, inv, cells, orig, width, g, out):
    """Keys of the (up to 27, distinct) cells around point i's cell, same label; returns how many."""
    _cell_of(pos, i, periodic, inv, cells, orig, width, g)
    nseen = 0
    for a in range(-1, 2):
        for b in range(-1, 2):
            for c in range(-1, 2):
                q0 = g[0] + a
                q1 = g[1] + b
                q2 = g[2] + c
                if periodic:
                    q0 = q0 % cells[0]
                    q1 = q1 % cells[1]
                    q2 = q2 % cells[2]
                elif q0 < 0 or q0 >= cells[0] or q1 < 0 or q1 >= cells[1] or q2 < 0 or q2 >= cells[2]:
                    continue
                key = ((lrank[i] * cells[0] + q0) * cells[1] + q1) * cells[2] + q2
                dup = False
                for t in range(nseen):
                    if out[t] == key:
                        dup = True
                        break
                if not dup:
                    out[nseen] = key
                    nseen += 1
    return nseen


@njit(cache=True)
def components_within(pos, lrank, periodic, lat, inv, h):
    """Connected components of the graph 'same label and distance ≤ h' (minimum image when periodic): the
    component root (smallest member index) of every point: the connected components of the same-label
    pairs within h (≤ h), without listing the pairs (a cluster of q coincident points would
    give q²/2 of them): a pair already in one component is not measured."""
    n = pos.shape[0]
    parent = np.arange(n)
    if n == 0:
        return parent
    cells, orig, width, keys, start, members = _cell_table(pos, lrank, periodic, lat, inv, h)
    g = np.zeros(3, dtype=np.int64)
    near = np.empty(27, dtype=np.int64)
    dv = np.zeros(3)
    for i in range(n):
        nc = _neighbour_cells(i, pos, lrank, periodic, inv, cells, orig, width, g, near)
        for t in range(nc):
            key = near[t]
            for u in range(start[key], start[key + 1]):
                j = members[u]
                if j <= i:
                    continue
                ri = _find(parent, i)
                rj = _find(parent, j)
                if ri == rj:
                    continue
                for k in range(3):
                    dv[k] = pos[j, k] - pos[i, k]
                if periodic:
                    d = min_image_norm(dv, lat, inv)
                else:
                    d = np.sqrt(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2])
                if d <= h:
                    if ri < rj:
                        parent[rj] = ri
                    else:
                        parent[ri] = rj
    root = np.empty(n, dtype=np.int64)
    for i in range(n):
        root[i] = _find(parent, i)
    return root


@njit(cache=True)
def _find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


# --------------------------------------------------------------------------------------- growable buffers
@njit(cache=True)
def _grow2(a, n):
    b = np.empty((max(2 * a.shape[0], n, 16), a.shape[1]), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _grow1(a, n):
    b = np.empty(max(2 * a.shape[0], n, 16), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


# --------------------------------------------------------------------------------------- one structure
@njit(cache=True)
def _occlusion_excused(k, x, kind, rot, cen, sf, cx, cy, w, depth, radius, pt_off):
    """True when the projection of x in view k falls inside the drawn disc of a nearer observed point."""
    q0, q1, dx = project_k(kind, rot, cen, sf, cx, cy, k, x)
    if not np.isfinite(q0):
        return False
    for p in range(pt_off[k], pt_off[k + 1]):
        if depth[p] < dx:
            e0 = w[p, 0] - q0
            e1 = w[p, 1] - q1
            if e0 * e0 + e1 * e1 < radius[p] * radius[p]:
                return True
    return False


@njit(cache=True)
def _view_residual(k, p, x, kind, rot, cen, sf, cx, cy, dmode, w):
    """(residual in the compare unit, residual in Å) of x against point p of view k."""
    q0, q1, dx = project_k(kind, rot, cen, sf, cx, cy, k, x)
    if not np.isfinite(q0):
        return np.inf, np.inf
    e0 = w[p, 0] - q0
    e1 = w[p, 1] - q1
    r = np.sqrt(e0 * e0 + e1 * e1)
    return to_compare(dmode[k], sf[k], dx, r), to_angstrom(dmode[k], sf[k], dx, r)


@njit(cache=True)
def lattice_inverse(lattice):
    """inv = lattice⁻¹ (so fractional = x @ inv for row-vector lattices). Returns (inv, ok)."""
    inv = np.zeros((3, 3))
    col = np.zeros(3)
    e = np.zeros(3)
    ok = True
    for j in range(3):
        e[:] = 0.0
        e[j] = 1.0
        okj = solve3_into(lattice, e, col)
        ok = ok and okj
        for i in range(3):
            inv[i, j] = col[i]
    return inv, ok


@njit(cache=True)
def _proj_s(kind, r00, r01, r02, r10, r11, r12, r20, r21, r22, c0, c1, c2, sf, cx, cy, x0, x1, x2):
    """project_point on scalars only (no arrays: no reference counting in the hot loop)."""
    d0 = x0 - c0
    d1 = x1 - c1
    d2 = x2 - c2
    e0 = r00 * d0 + r01 * d1 + r02 * d2
    e1 = r10 * d0 + r11 * d1 + r12 * d2
    depth = -(r20 * d0 + r21 * d1 + r22 * d2)
    if kind == 0:
        return e0, e1, depth
    if depth <= 0.0:
        return np.nan, np.nan, depth
    return cx + sf * e0 / depth, cy - sf * e1 / depth, depth


@njit(cache=True)
def _solve3_s(a00, a01, a02, a10, a11, a12, a20, a21, a22, b0, b1, b2):
    """solve3 on scalars: (ok, x0, x1, x2)."""
    c00 = a11 * a22 - a12 * a21
    c01 = a12 * a20 - a10 * a22
    c02 = a10 * a21 - a11 * a20
    det = a00 * c00 + a01 * c01 + a02 * c02
    m = max(abs(a00), abs(a01), abs(a02), abs(a10), abs(a11), abs(a12), abs(a20), abs(a21), abs(a22))
    if m == 0.0 or abs(det) <= 1e-12 * m * m * m:
        return False, 0.0, 0.0, 0.0
    c10 = a02 * a21 - a01 * a22
    c11 = a00 * a22 - a02 * a20
    c12 = a01 * a20 - a00 * a21
    c20 = a01 * a12 - a02 * a11
    c21 = a02 * a10 - a00 * a12
    c22 = a00 * a11 - a01 * a10
    return (True, (c00 * b0 + c10 * b1 + c20 * b2) / det, (c01 * b0 + c11 * b1 + c21 * b2) / det,
            (c02 * b0 + c12 * b1 + c22 * b2) / det)


@njit(cache=True)
def reconstruct_one(kind, rot, cen, sf, cx, cy, width, height, dmode, delta, pt_off, uv, labels, depth,
                    radius, lattice, has_lattice, tiling, delta3d, seed_first, greedy, occlusion, window,
                    collapse):
    """Reconstruct one structure.

    Per view (K): kind (0 ortho, 1 persp), rot (K,3,3) world→camera, cen (K,3) orthographic centre or
    camera position, sf (K,) px/Å scale or focal px, cx, cy (principal point, perspective), width, height,
    dmode (K,) residual mode, delta (K,) tolerance in the view's compare unit, pt_off (K+1,) point offsets.
    Per point (M): uv (M,2) px, labels (M,), depth (M,) Å, radius (M,) drawn disc radius in the view's 2D
    unit (occlusion). lattice (3,3) rows, has_lattice, tiling (3,) cell repetitions drawn, delta3d (Å) merge
    tolerance. seed_first: seed from views (0, 1) only. greedy: the study's single-tolerance semantics
    (midpoint, no refit, first-come merge). occlusion: a point may miss one view when covered by a nearer
    disc. window ≥ 1: near-miss window (rejected candidates with max residual/δ ≤ window are reported).
    collapse: merge coincident 2D points of a view into one site (deterministic mode).

    Returns (points (k,3), labels (k,), support (k,K) point indices local to each view or −1, residual_A
    (k,), ratio (k,) max residual/δ, occluded (k,), near_points (q,3), near_labels (q,), near_ratio (q,),
    counts (N_COUNTS,)).
    """
    nv = kind.shape[0]
    m = uv.shape[0]
    counts = np.zeros(N_COUNTS, dtype=np.int64)
    inv = np.zeros((3, 3))
    if has_lattice:
        inv, _ = lattice_inverse(lattice)
    # ----- 2D coordinates, rays, label ranks
    w = np.empty((m, 2))
    origins = np.empty((m, 3))
    dirs = np.empty((m, 3))
    for k in range(nv):
        a = pt_off[k]
        b = pt_off[k + 1]
        wk = view_coords(kind[k], rot[k], cen[k], sf[k], cx[k], cy[k], width[k], height[k], uv[a:b])
        w[a:b] = wk
        view_rays(kind[k], rot[k], cen[k], sf[k], cx[k], cy[k], wk, origins[a:b], dirs[a:b])
    uniq, lrank = label_ranks(labels)
    # ----- sites (coincident points collapsed) and one grid per view
    is_site = np.ones(m, dtype=np.bool_)
    s_off = np.zeros(nv + 1, dtype=np.int64)
    for k in range(nv):
        a = pt_off[k]
        b = pt_off[k + 1]
        if collapse and b > a:
            eps = 1e-3 * delta[k] if kind[k] == 0 else 1e-6
            is_site[a:b] = collapse_sites(w[a:b], lrank[a:b], eps)
        s_off[k + 1] = s_off[k] + np.sum(is_site[a:b])
    sites = np.flatnonzero(is_site)
    counts[C_SITES] = sites.shape[0]
    g_h = np.empty(nv)
    g_ox = np.empty(nv)
    g_oy = np.empty(nv)
    g_nx = np.empty(nv, dtype=np.int64)
    g_ny = np.empty(nv, dtype=np.int64)
    g_sites = np.empty(sites.shape[0], dtype=np.int64)
    g_soff = np.zeros(nv + 1, dtype=np.int64)
    nlab = uniq.shape[0]
    starts = []
    for k in range(nv):
        lo = s_off[k]
        hi = s_off[k + 1]
        ns = hi - lo
        ext = 0.0
        if ns > 0:
            mn0 = np.inf
            mx0 = -np.inf
            mn1 = np.inf
            mx1 = -np.inf
            for tt in range(lo, hi):
                p = sites[tt]
                mn0 = min(mn0, w[p, 0])
                mx0 = max(mx0, w[p, 0])
                mn1 = min(mn1, w[p, 1])
                mx1 = max(mx1, w[p, 1])
            ext = max(mx0 - mn0, mx1 - mn1)
        # cell size: the typical search radius, but never so small that the grid explodes
        typ = window * delta[k] * 2.5
        if dmode[k] == 2:
            dmean = 0.0
            for p in range(pt_off[k], pt_off[k + 1]):
                dmean += depth[p]
            dmean = dmean / max(1, pt_off[k + 1] - pt_off[k])
            typ = typ * sf[k] / max(dmean, 1e-12)
        # (about 16 cells per site at most: a query scans ~9 cells of the size of its radius)
        h = max(typ, ext / (4.0 * np.sqrt(max(ns, 1))), 1e-12)
        g_h[k] = h
        ox, oy, nx, ny, start, gs = build_grid(w, lrank, sites[lo:hi], h, nlab)
        g_ox[k] = ox
        g_oy[k] = oy
        g_nx[k] = nx
        g_ny[k] = ny
        g_sites[lo:hi] = gs
        starts.append(start)
        g_soff[k + 1] = g_soff[k] + start.shape[0]
    g_start = np.empty(g_soff[nv], dtype=np.int64)
    for k in range(nv):
        g_start[g_soff[k]:g_soff[k + 1]] = starts[k]
    # ----- candidate and near-miss buffers
    c_x = np.empty((64, 3))
    c_lab = np.empty(64, dtype=np.int64)
    c_sup = np.empty((64, nv), dtype=np.int64)
    c_res = np.empty(64)
    c_rat = np.empty(64)
    c_occ = np.empty(64, dtype=np.bool_)
    nc = 0
    n_x = np.empty((64, 3))
    n_lab = np.empty(64, dtype=np.int64)
    n_sup = np.empty((64, nv), dtype=np.int64)
    n_rat = np.empty(64)
    nn = 0
    # ----- scratch
    sup = np.empty(nv, dtype=np.int64)
    prev = np.empty(nv, dtype=np.int64)
    gidx = np.empty(nv, dtype=np.int64)
    rcmp = np.empty(nv)
    rang = np.empty(nv)
    ma = np.zeros((3, 3))
    mb = np.zeros(3)
    x = np.zeros(3)
    xn = np.zeros(3)
    nrm = np.zeros(3)
    jbuf = np.empty(max(m, 1), dtype=np.int64)
    e_b = np.empty(max(m, 1))
    l_b = np.empty(max(m, 1), dtype=np.int64)
    # ----- seed pairs
    for va in range(nv):
        for vb in range(va + 1, nv):
            if seed_first and not (va == 0 and vb == 1):
                continue
            both_ortho = kind[va] == 0 and kind[vb] == 0
            if both_ortho:
                nrm[0] = rot[va, 2, 1] * rot[vb, 2, 2] - rot[va, 2, 2] * rot[vb, 2, 1]
                nrm[1] = rot[va, 2, 2] * rot[vb, 2, 0] - rot[va, 2, 0] * rot[vb, 2, 2]
                nrm[2] = rot[va, 2, 0] * rot[vb, 2, 1] - rot[va, 2, 1] * rot[vb, 2, 0]
                nrn = np.sqrt(nrm[0] ** 2 + nrm[1] ** 2 + nrm[2] ** 2)
                if nrn < 1e-9:
                    counts[C_DEGENERATE_PAIRS] += 1
                    continue
                for j in range(3):
                    nrm[j] /= nrn
            counts[C_PAIRS] += 1
            a0 = s_off[va]
            a1 = s_off[va + 1]
            b0 = s_off[vb]
            b1 = s_off[vb + 1]
            nb = b1 - b0
            bsites = sites[b0:b1]
            if both_ortho:
                # sites of b sorted by (label rank, epipolar coordinate): the line gap of two orthographic
                # rays is exactly the difference of their epipolar coordinates n·o
                for tt in range(nb):
                    p = bsites[tt]
                    e_b[tt] = nrm[0] * origins[p, 0] + nrm[1] * origins[p, 1] + nrm[2] * origins[p, 2]
                o1 = np.argsort(e_b[:nb], kind="mergesort")
                lb1 = lrank[bsites[o1]]
                o2 = np.argsort(lb1, kind="mergesort")
                border = bsites[o1[o2]]
            else:
                border = bsites.copy()
            for tt in range(nb):
                p = border[tt]
                e_b[tt] = nrm[0] * origins[p, 0] + nrm[1] * origins[p, 1] + nrm[2] * origins[p, 2]
                l_b[tt] = lrank[p]
            g_band = window * (delta[va] + delta[vb])
            if greedy:
                g_band = 0.5 * g_band
            for ta in range(a0, a1):
                pa = sites[ta]
                lr = lrank[pa]
                nj = 0
                if both_ortho:
                    ea = nrm[0] * origins[pa, 0] + nrm[1] * origins[pa, 1] + nrm[2] * origins[pa, 2]
                    # label segment [s0, s1) of b's sorted sites, then the band [lo, hi) in it (binary
                    # searches written out: helpers taking arrays cost reference counts)
                    s0 = 0
                    u = nb
                    while s0 < u:
                        mid = (s0 + u) >> 1
                        if l_b[mid] < lr:
                            s0 = mid + 1
                        else:
                            u = mid
                    s1 = s0
                    u = nb
                    while s1 < u:
                        mid = (s1 + u) >> 1
                        if l_b[mid] <= lr:
                            s1 = mid + 1
                        else:
                            u = mid
                    lo = s0
                    u = s1
                    v = ea - g_band
                    while lo < u:
                        mid = (lo + u) >> 1
                        if e_b[mid] < v:
                            lo = mid + 1
                        else:
                            u = mid
                    hi = lo
                    u = s1
                    v = ea + g_band
                    while hi < u:
                        mid = (hi + u) >> 1
                        if e_b[mid] <= v:
                            hi = mid + 1
                        else:
                            u = mid
                    for tt in range(lo, hi):
                        jbuf[nj] = border[tt]
                        nj += 1
                    if greedy:
                        # first-come order: partner points in their observation order (insertion sort)
                        for u in range(1, nj):
                            v = jbuf[u]
                            z = u - 1
                            while z >= 0 and jbuf[z] > v:
                                jbuf[z + 1] = jbuf[z]
                                z -= 1
                            jbuf[z + 1] = v
                else:
                    for tt in range(nb):
                        if l_b[tt] == lr:
                            jbuf[nj] = border[tt]
                            nj += 1
                for tj in range(nj):
                    pb = jbuf[tj]
                    if both_ortho:
                        gap = abs(nrm[0] * (origins[pb, 0] - origins[pa, 0]) + nrm[1] * (origins[pb, 1]
                                  - origins[pa, 1]) + nrm[2] * (origins[pb, 2] - origins[pa, 2]))
                    else:
                        gap = line_gap_idx(origins, dirs, pa, pb)
                        if not np.isfinite(gap):
                            continue
                    # ----- verify the seed. Written out on scalars: in numba every call (even inlined) that
                    # passes arrays costs an atomic reference-count pair per array, which dominated the loop.
                    outcome, maxrat, maxres, occ = REJECT, np.inf, np.inf, False
                    for _once in range(1):
                        # least-squares point of the two seed rays
                        a00 = a01 = a02 = a11 = a12 = a22 = b0 = b1 = b2 = 0.0
                        for q in (pa, pb):
                            d0 = dirs[q, 0]
                            d1 = dirs[q, 1]
                            d2 = dirs[q, 2]
                            dd = d0 * origins[q, 0] + d1 * origins[q, 1] + d2 * origins[q, 2]
                            a00 += 1.0 - d0 * d0
                            a01 -= d0 * d1
                            a02 -= d0 * d2
                            a11 += 1.0 - d1 * d1
                            a12 -= d1 * d2
                            a22 += 1.0 - d2 * d2
                            b0 += origins[q, 0] - d0 * dd
                            b1 += origins[q, 1] - d1 * dd
                            b2 += origins[q, 2] - d2 * dd
                        ok, x0, x1, x2 = _solve3_s(a00, a01, a02, a01, a11, a12, a02, a12, a22, b0, b1, b2)
                        if not ok:
                            outcome = SKIP
                            break
                        _, _, dpa = _proj_s(kind[va], rot[va, 0, 0], rot[va, 0, 1], rot[va, 0, 2], rot[va, 1, 0],
                                            rot[va, 1, 1], rot[va, 1, 2], rot[va, 2, 0], rot[va, 2, 1], rot[va, 2, 2],
                                            cen[va, 0], cen[va, 1], cen[va, 2], sf[va], cx[va], cy[va], x0, x1, x2)
                        _, _, dpb = _proj_s(kind[vb], rot[vb, 0, 0], rot[vb, 0, 1], rot[vb, 0, 2], rot[vb, 1, 0],
                                            rot[vb, 1, 1], rot[vb, 1, 2], rot[vb, 2, 0], rot[vb, 2, 1], rot[vb, 2, 2],
                                            cen[vb, 0], cen[vb, 1], cen[vb, 2], sf[vb], cx[vb], cy[vb], x0, x1, x2)
                        if (kind[va] == 1 and dpa <= 0.0) or (kind[vb] == 1 and dpb <= 0.0):
                            outcome = SKIP
                            break
                        # δ of the two seed views in Å at x: the line gap is ≤ δa + δb for any point within δ
                        # of both rays
                        dA = delta[va] * dpa / sf[va] if dmode[va] == 1 else delta[va]
                        dB = delta[vb] * dpb / sf[vb] if dmode[vb] == 1 else delta[vb]
                        gthr = 0.5 * (dA + dB) if greedy else dA + dB
                        if gap > window * gthr:
                            outcome = SKIP
                            break
                        for k in range(nv):
                            sup[k] = -1
                        sup[va] = pa - pt_off[va]
                        sup[vb] = pb - pt_off[vb]
                        if greedy:
                            slack = 1.0
                            niter = 1
                        else:
                            cosab = abs(dirs[pa, 0] * dirs[pb, 0] + dirs[pa, 1] * dirs[pb, 1]
                                        + dirs[pa, 2] * dirs[pb, 2])
                            # a point within δ of every ray is within √2·δ/√(1 − |cos θ|) of the two-ray point
                            slack = min(1.0 + SQRT2 / np.sqrt(max(1.0 - cosab, 1e-12)), MAX_SLACK)
                            niter = MAX_ITER
                        # associate the nearest same-label point of every other view, refit, repeat to a fixed
                        # point; without occlusion, a view with no point in the search radius rejects the seed
                        for it in range(niter):
                            changed = False
                            missing = False
                            for k in range(nv):
                                if k == va or k == vb:
                                    continue
                                q0, q1, dx = _proj_s(kind[k], rot[k, 0, 0], rot[k, 0, 1], rot[k, 0, 2], rot[k, 1, 0],
                                                     rot[k, 1, 1], rot[k, 1, 2], rot[k, 2, 0], rot[k, 2, 1],
                                                     rot[k, 2, 2], cen[k, 0], cen[k, 1], cen[k, 2], sf[k], cx[k],
                                                     cy[k], x0, x1, x2)
                                best = -1
                                if np.isfinite(q0):
                                    rad = window * delta[k] * slack
                                    if dmode[k] == 2:
                                        rad = rad * sf[k] / dx if dx > 0.0 else 0.0
                                    # grid scan (grid_nearest, written out)
                                    h = g_h[k]
                                    gnx = g_nx[k]
                                    gny = g_ny[k]
                                    fx = (q0 - g_ox[k]) / h
                                    fy = (q1 - g_oy[k]) / h
                                    if -1.0e15 < fx < 1.0e15 and -1.0e15 < fy < 1.0e15:
                                        span = min(np.int64(np.ceil(rad / h)), gnx + gny)
                                        gx = np.int64(np.floor(fx))
                                        gy = np.int64(np.floor(fy))
                                        xa = max(gx - span, 0)
                                        xb = min(gx + span, gnx - 1)
                                        ya = max(gy - span, 0)
                                        yb = min(gy + span, gny - 1)
                                        r2 = rad * rad
                                        bestd = np.inf
                                        if xa <= xb and ya <= yb:
                                            so = g_soff[k]
                                            go = s_off[k]
                                            for cxx in range(xa, xb + 1):
                                                base = so + (lr * gnx + cxx) * gny
                                                for tt in range(g_start[base + ya], g_start[base + yb + 1]):
                                                    p = g_sites[go + tt]
                                                    e0 = w[p, 0] - q0
                                                    e1 = w[p, 1] - q1
                                                    d2 = e0 * e0 + e1 * e1
                                                    if d2 <= r2 and (d2 < bestd or (d2 == bestd and p < best)):
                                                        bestd = d2
                                                        best = p
                                loc = best - pt_off[k] if best >= 0 else -1
                                if loc != sup[k]:
                                    changed = True
                                sup[k] = loc
                                if loc < 0 and not occlusion:
                                    missing = True
                                    break
                            if missing or greedy or (it > 0 and not changed):
                                break
                            # refit on every supporting ray
                            a00 = a01 = a02 = a11 = a12 = a22 = b0 = b1 = b2 = 0.0
                            nrays = 0
                            for k in range(nv):
                                if sup[k] < 0:
                                    continue
                                q = sup[k] + pt_off[k]
                                d0 = dirs[q, 0]
                                d1 = dirs[q, 1]
                                d2 = dirs[q, 2]
                                dd = d0 * origins[q, 0] + d1 * origins[q, 1] + d2 * origins[q, 2]
                                a00 += 1.0 - d0 * d0
                                a01 -= d0 * d1
                                a02 -= d0 * d2
                                a11 += 1.0 - d1 * d1
                                a12 -= d1 * d2
                                a22 += 1.0 - d2 * d2
                                b0 += origins[q, 0] - d0 * dd
                                b1 += origins[q, 1] - d1 * dd
                                b2 += origins[q, 2] - d2 * dd
                                nrays += 1
                            if nrays >= 2:
                                ok, y0, y1, y2 = _solve3_s(a00, a01, a02, a01, a11, a12, a02, a12, a22, b0, b1, b2)
                                if ok:
                                    x0 = y0
                                    x1 = y1
                                    x2 = y2
                        x[0] = x0
                        x[1] = x1
                        x[2] = x2
                        # residuals and acceptance
                        maxrat = 0.0
                        maxres = 0.0
                        nfail = 0
                        fview = -1
                        allsup = True
                        for k in range(nv):
                            if greedy and (k == va or k == vb):
                                rk = gap / gthr
                                rang[k] = 0.5 * gap
                            elif sup[k] < 0:
                                rk = np.inf
                                rang[k] = np.inf
                                allsup = False
                            else:
                                q0, q1, dx = _proj_s(kind[k], rot[k, 0, 0], rot[k, 0, 1], rot[k, 0, 2], rot[k, 1, 0],
                                                     rot[k, 1, 1], rot[k, 1, 2], rot[k, 2, 0], rot[k, 2, 1],
                                                     rot[k, 2, 2], cen[k, 0], cen[k, 1], cen[k, 2], sf[k], cx[k],
                                                     cy[k], x0, x1, x2)
                                if np.isfinite(q0):
                                    q = sup[k] + pt_off[k]
                                    r = np.sqrt((w[q, 0] - q0) ** 2 + (w[q, 1] - q1) ** 2)
                                    rc = r * dx / sf[k] if dmode[k] == 2 else r
                                    rang[k] = r if dmode[k] == 0 else r * dx / sf[k]
                                else:
                                    rc = np.inf
                                    rang[k] = np.inf
                                rk = rc / delta[k]
                            rcmp[k] = rk
                            if rk > 1.0:
                                nfail += 1
                                fview = k
                            maxrat = max(maxrat, rk)
                            maxres = max(maxres, rang[k])
                        if nfail == 0:
                            outcome = ACCEPT
                            break
                        if occlusion and nfail == 1 and nv >= 3 and fview != va and fview != vb:
                            # the one failing view is excused if a nearer atom's disc covers the point there
                            for k in range(nv):
                                prev[k] = sup[k]
                            sup[fview] = -1
                            okn = True
                            if greedy:
                                for j in range(3):
                                    xn[j] = x[j]
                            else:
                                for k in range(nv):
                                    gidx[k] = sup[k] + pt_off[k] if sup[k] >= 0 else -1
                                okn = triangulate_into(origins, dirs, gidx, ma, mb, xn)
                            if okn and _occlusion_excused(fview, xn, kind, rot, cen, sf, cx, cy, w, depth, radius,
                                                          pt_off):
                                good = True
                                mr = 0.0
                                mres = 0.0
                                for k in range(nv):
                                    if sup[k] < 0:
                                        continue
                                    if greedy and (k == va or k == vb):
                                        rk = gap / gthr
                                        ra = 0.5 * gap
                                    else:
                                        rc, ra = _view_residual(k, sup[k] + pt_off[k], xn, kind, rot, cen, sf, cx, cy,
                                                                dmode, w)
                                        rk = rc / delta[k]
                                    if rk > 1.0:
                                        good = False
                                    mr = max(mr, rk)
                                    mres = max(mres, ra)
                                if good:
                                    for j in range(3):
                                        x[j] = xn[j]
                                    outcome, maxrat, maxres, occ = ACCEPT, mr, mres, True
                                    break
                            for k in range(nv):
                                sup[k] = prev[k]
                        if allsup and maxrat <= window:
                            outcome = NEAR
                            break
                        outcome = REJECT
                    if outcome == SKIP:
                        continue
                    counts[C_SEEDS] += 1
                    if outcome == ACCEPT:
                        if nc == c_x.shape[0]:
                            c_x = _grow2(c_x, nc + 1)
                            c_sup = _grow2(c_sup, nc + 1)
                            c_lab = _grow1(c_lab, nc + 1)
                            c_res = _grow1(c_res, nc + 1)
                            c_rat = _grow1(c_rat, nc + 1)
                            c_occ = _grow1(c_occ, nc + 1)
                        for j in range(3):
                            c_x[nc, j] = x[j]
                        c_lab[nc] = labels[pa]
                        for k in range(nv):
                            c_sup[nc, k] = sup[k]
                        c_res[nc] = maxres
                        c_rat[nc] = maxrat
                        c_occ[nc] = occ
                        nc += 1
                    elif outcome == NEAR:
                        if nn == n_x.shape[0]:
                            n_x = _grow2(n_x, nn + 1)
                            n_sup = _grow2(n_sup, nn + 1)
                            n_lab = _grow1(n_lab, nn + 1)
                            n_rat = _grow1(n_rat, nn + 1)
                        for j in range(3):
                            n_x[nn, j] = x[j]
                        n_lab[nn] = labels[pa]
                        for k in range(nv):
                            n_sup[nn, k] = sup[k]
                        n_rat[nn] = maxrat
                        nn += 1
    counts[C_ACCEPTED] = nc
    c_x = c_x[:nc]
    c_lab = c_lab[:nc]
    c_sup = c_sup[:nc]
    c_res = c_res[:nc]
    c_rat = c_rat[:nc]
    c_occ = c_occ[:nc]
    # ----- near misses: one per support tuple, wrapped when periodic
    nsel = unique_tuples(n_lab[:nn], n_sup[:nn])
    near_x = n_x[:nn][nsel].copy()
    near_lab = n_lab[:nn][nsel].copy()
    near_rat = n_rat[:nn][nsel].copy()
    if has_lattice:
        for i in range(near_x.shape[0]):
            near_x[i] = wrap_point(near_x[i], lattice, inv)
    counts[C_NEAR] = near_x.shape[0]
    # ----- merge
    ntile = tiling[0] * tiling[1] * tiling[2] if has_lattice else 1
    if greedy:
        # the study compared Cartesian distances; with tiled observations translates must collapse, so
        # minimum image there
        keep = merge_greedy(c_x, c_lab, delta3d, has_lattice and ntile > 1, lattice, inv)
        px = c_x[keep].copy()
        plab = c_lab[keep].copy()
        psup = c_sup[keep].copy()
        pres = c_res[keep].copy()
        prat = c_rat[keep].copy()
        pocc = c_occ[keep].copy()
        counts[C_UNIQUE] = nc
    else:
        sel = unique_tuples(c_lab, c_sup)
        counts[C_UNIQUE] = sel.shape[0]
        px, plab, psup, pres, prat, pocc, ntr = merge_clusters(
            c_x[sel].copy(), c_lab[sel].copy(), c_sup[sel].copy(), c_res[sel].copy(), c_rat[sel].copy(),
            c_occ[sel].copy(), delta3d, has_lattice, lattice, inv, tiling, ntile, kind, rot, cen, sf, cx, cy,
            dmode, delta, w, lrank, origins, dirs, pt_off, g_h, g_ox, g_oy, g_nx, g_ny, g_start, g_soff, g_sites, s_off,
            uniq, window)
        counts[C_TRANSLATE_REJECTED] = ntr
    if has_lattice:
        for i in range(px.shape[0]):
            px[i] = wrap_point(px[i], lattice, inv)
    if not greedy and px.shape[0] > 1:
        # canonical order: label, then position rounded to SORT_QUANTUM (independent of the input order)
        cols = np.empty((px.shape[0], 4), dtype=np.int64)
        for i in range(px.shape[0]):
            cols[i, 0] = plab[i]
            for j in range(3):
                cols[i, j + 1] = np.int64(np.round(px[i, j] / SORT_QUANTUM))
        o = lexsort_rows(cols)
        px = px[o].copy()
        plab = plab[o].copy()
        psup = psup[o].copy()
        pres = pres[o].copy()
        prat = prat[o].copy()
        pocc = pocc[o].copy()
    counts[C_POINTS] = px.shape[0]
    counts[C_OCCLUDED] = np.sum(pocc)
    return px, plab, psup, pres, prat, pocc, near_x, near_lab, near_rat, counts


@njit(cache=True)
def unique_tuples(lab, sup):
    """Indices of the first occurrence of every distinct (label, support tuple) row, in input order."""
    n = lab.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    nv = sup.shape[1]
    cols = np.empty((n, nv + 1), dtype=np.int64)
    for i in range(n):
        cols[i, 0] = lab[i]
        for k in range(nv):
            cols[i, k + 1] = sup[i, k]
    keys = row_keys(cols)
    order = np.argsort(keys, kind="mergesort")  # stable: ascending index within equal keys
    keep = np.zeros(n, dtype=np.bool_)
    t = 0
    while t < n:
        u = t
        while u < n and keys[order[u]] == keys[order[t]]:
            u += 1
        # inside a run of equal keys, keep each distinct row once (its first occurrence)
        for a in range(t, u):
            i = order[a]
            dup = False
            for b in range(t, a):
                j = order[b]
                if not keep[j]:
                    continue
                same = True
                for c in range(nv + 1):
                    if cols[i, c] != cols[j, c]:
                        same = False
                        break
                if same:
                    dup = True
                    break
            keep[i] = not dup
        t = u
    return np.flatnonzero(keep)


@njit(cache=True)
def merge_greedy(x, lab, tol, has_lattice, lattice, inv):
    """The study's first-come merge: walk candidates in order; keep one unless a kept candidate of the same
    label lies strictly closer than tol (minimum image when has_lattice). Returns kept indices in order."""
    n = x.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    _, lr = label_ranks(lab)
    cells, orig, width, keys, start, members = _cell_table(x, lr, has_lattice, lattice, inv, tol)
    g = np.zeros(3, dtype=np.int64)
    near = np.empty(27, dtype=np.int64)
    dv = np.zeros(3)
    kept = np.zeros(n, dtype=np.bool_)
    for j in range(n):
        dup = False
        nc = _neighbour_cells(j, x, lr, has_lattice, inv, cells, orig, width, g, near)
        for t in range(nc):
            key = near[t]
            for u in range(start[key], start[key + 1]):
                i = members[u]
                if i >= j:
                    break  # members are in ascending order: only earlier candidates count
                if not kept[i]:
                    continue
                for k in range(3):
                    dv[k] = x[j, k] - x[i, k]
                if has_lattice:
                    d = min_image_norm(dv, lattice, inv)
                else:
                    d = np.sqrt(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2])
                if d < tol:
                    dup = True
                    break
            if dup:
                break
        kept[j] = not dup
    return np.flatnonzero(kept)


@njit(cache=True)
def _box_ok(nvec, tiling):
    """True when the integer translations nvec (q, 3) contain a full box of shape tiling."""
    q = nvec.shape[0]
    if q < tiling[0] * tiling[1] * tiling[2]:
        return False
    lo = np.empty(3, dtype=np.int64)
    hi = np.empty(3, dtype=np.int64)
    for j in range(3):
        lo[j] = nvec[0, j]
        hi[j] = nvec[0, j]
        for i in range(q):
            lo[j] = min(lo[j], nvec[i, j])
            hi[j] = max(hi[j], nvec[i, j])
    ext = hi - lo + 1
    for j in range(3):
        if ext[j] < tiling[j]:
            return False
    present = np.zeros((ext[0], ext[1], ext[2]), dtype=np.bool_)
    for i in range(q):
        present[nvec[i, 0] - lo[0], nvec[i, 1] - lo[1], nvec[i, 2] - lo[2]] = True
    for o0 in range(ext[0] - tiling[0] + 1):
        for o1 in range(ext[1] - tiling[1] + 1):
            for o2 in range(ext[2] - tiling[2] + 1):
                full = True
                for a in range(tiling[0]):
                    for b in range(tiling[1]):
                        for c in range(tiling[2]):
                            if not present[o0 + a, o1 + b, o2 + c]:
                                full = False
                                break
                        if not full:
                            break
                    if not full:
                        break
                if full:
                    return True
    return False


@njit(cache=True)
def merge_clusters(x, lab, sup, res, rat, occ, tol, has_lattice, lattice, inv, tiling, ntile, kind, rot, cen,
                   sf, cx, cy, dmode, delta, w, lrank, origins, dirs, pt_off, g_h, g_ox, g_oy, g_nx, g_ny,
                   g_start, g_soff, g_sites, s_off, uniq, window):
    """Deterministic merge of accepted candidates (one per distinct support tuple): same-label candidates
    within tol (minimum image when periodic) form clusters (connected components). A cluster of one keeps
    its candidate; a larger cluster starts from the average of its members (each moved by the lattice
    translation that brings it next to the cluster's first member) and is refitted, in every view, on the
    member's supporting point nearest to the estimate (to a fixed point), so every output point is the
    least-squares point of its reported support. With tiled observations
    (ntile > 1) a cluster is kept only if its members' translations contain a full box of the tiling
    (translate consistency). Returns the merged arrays and the number of clusters rejected."""
    n = x.shape[0]
    nv = sup.shape[1]
    if n == 0:
        return (np.zeros((0, 3)), np.zeros(0, dtype=np.int64), np.zeros((0, nv), dtype=np.int64), np.zeros(0),
                np.zeros(0), np.zeros(0, dtype=np.bool_), 0)
    _, lr = label_ranks(lab)
    root = components_within(x, lr, has_lattice, lattice, inv, tol)
    order = np.argsort(root, kind="mergesort")
    ox = np.empty((n, 3))
    olab = np.empty(n, dtype=np.int64)
    osup = np.empty((n, nv), dtype=np.int64)
    ores = np.empty(n)
    orat = np.empty(n)
    oocc = np.empty(n, dtype=np.bool_)
    nout = 0
    nrej = 0
    t = 0
    dv = np.zeros(3)
    gidx = np.full(nv, -1, dtype=np.int64)
    ma = np.zeros((3, 3))
    mb = np.zeros(3)
    xs = np.zeros(3)
    while t < n:
        u = t
        while u < n and root[order[u]] == root[order[t]]:
            u += 1
        members = order[t:u]  # ascending indices (stable sort); members[0] is the root
        q = u - t
        ref = members[0]
        shifts = np.zeros((q, 3))
        nvec = np.zeros((q, 3), dtype=np.int64)
        for a in range(q):
            mi = members[a]
            if has_lattice and a > 0:
                for j in range(3):
                    dv[j] = x[mi, j] - x[ref, j]
                v, nn = min_image(dv, lattice, inv)
                for j in range(3):
                    nvec[a, j] = np.int64(nn[j])
                    shifts[a, j] = dv[j] - v[j]  # = n·L, the translation removed
        if ntile > 1 and has_lattice:
            # unique translations
            cols = nvec.copy()
            o = lexsort_rows(cols)
            keep = np.ones(q, dtype=np.bool_)
            for s in range(1, q):
                if cols[o[s], 0] == cols[o[s - 1], 0] and cols[o[s], 1] == cols[o[s - 1], 1] and \
                        cols[o[s], 2] == cols[o[s - 1], 2]:
                    keep[o[s]] = False
            if not _box_ok(cols[keep], tiling):
                nrej += 1
                t = u
                continue
        if q == 1:
            ox[nout] = x[ref]
            olab[nout] = lab[ref]
            osup[nout] = sup[ref]
            ores[nout] = res[ref]
            orat[nout] = rat[ref]
            oocc[nout] = occ[ref]
            nout += 1
            t = u
            continue
        # average of the members (moved next to the reference member); then, in every view, choose among
        # the members' supporting points the one nearest to the estimate and refit on those, to a fixed point
        xm = np.zeros(3)
        for a in range(q):
            for j in range(3):
                xm[j] += x[members[a], j] - shifts[a, j]
        for j in range(3):
            xm[j] /= q
        for k in range(nv):
            gidx[k] = -2
        for it in range(MAX_ITER):
            changed = False
            for k in range(nv):
                best = -1
                bestr = np.inf
                for a in range(q):
                    p = sup[members[a], k]
                    if p < 0:
                        continue
                    p += pt_off[k]
                    for j in range(3):
                        xs[j] = xm[j] + shifts[a, j]
                    rc, _ = _view_residual(k, p, xs, kind, rot, cen, sf, cx, cy, dmode, w)
                    if rc < bestr or (rc == bestr and a < best):
                        bestr = rc
                        best = a
                if best != gidx[k]:
                    changed = True
                gidx[k] = best
            if it > 0 and not changed:
                break
            for r in range(3):
                mb[r] = 0.0
                for c in range(3):
                    ma[r, c] = 0.0
            nused = 0
            for k in range(nv):
                a = gidx[k]
                if a < 0:
                    continue
                p = sup[members[a], k] + pt_off[k]
                _accumulate(ma, mb, origins, dirs, p, shifts[a, 0], shifts[a, 1], shifts[a, 2])
                nused += 1
            if nused >= 2:
                solve3_into(ma, mb, xm)
        mr = 0.0
        mres = 0.0
        anyocc = False
        for k in range(nv):
            a = gidx[k]
            if a < 0:
                osup[nout, k] = -1
                anyocc = True
                continue
            p = sup[members[a], k] + pt_off[k]
            for j in range(3):
                xs[j] = xm[j] + shifts[a, j]
            rc, ra = _view_residual(k, p, xs, kind, rot, cen, sf, cx, cy, dmode, w)
            mr = max(mr, rc / delta[k])
            mres = max(mres, ra)
            # the support of view k belongs to the member's translate; report it as is
            osup[nout, k] = sup[members[a], k]
        ox[nout] = xm
        olab[nout] = lab[ref]
        ores[nout] = mres
        orat[nout] = mr
        oocc[nout] = anyocc
        nout += 1
        t = u
    return ox[:nout], olab[:nout], osup[:nout], ores[:nout], orat[:nout], oocc[:nout], nrej


# --------------------------------------------------------------------------------------- batch entry point
@njit(cache=True)
def reconstruct_many(s_view_off, s_lattice, s_has_lattice, s_tiling, s_delta3d, v_kind, v_rot, v_cen, v_sf, v_cx,
                     v_cy, v_width, v_height, v_dmode, v_delta, v_pt_off, p_uv, p_labels, p_depth, p_radius,
                     seed_first, greedy, occlusion, window, collapse):
    """Reconstruct S structures in one call. Views of structure s are s_view_off[s]:s_view_off[s+1] (global
    view indices); points of view v are v_pt_off[v]:v_pt_off[v+1]. Outputs are concatenated with offsets:
    (pt_off (S+1,), points, labels, support (N, Kmax) −1 padded, residual_A, ratio, occluded,
    near_off (S+1,), near_points, near_labels, near_ratio, counts (S, N_COUNTS))."""
    ns = s_delta3d.shape[0]
    kmax = 1
    for s in range(ns):
        kmax = max(kmax, s_view_off[s + 1] - s_view_off[s])
    out_off = np.zeros(ns + 1, dtype=np.int64)
    near_off = np.zeros(ns + 1, dtype=np.int64)
    counts = np.zeros((ns, N_COUNTS), dtype=np.int64)
    cap = 64
    P = np.empty((cap, 3))
    L = np.empty(cap, dtype=np.int64)
    SU = np.empty((cap, kmax), dtype=np.int64)
    RE = np.empty(cap)
    RA = np.empty(cap)
    OC = np.empty(cap, dtype=np.bool_)
    ncap = 64
    NP = np.empty((ncap, 3))
    NL = np.empty(ncap, dtype=np.int64)
    NR = np.empty(ncap)
    for s in range(ns):
        v0 = s_view_off[s]
        v1 = s_view_off[s + 1]
        p0 = v_pt_off[v0]
        pt_off = v_pt_off[v0:v1 + 1] - p0
        p1 = v_pt_off[v1]
        px, plab, psup, pres, prat, pocc, nx, nlab, nrat, cnt = reconstruct_one(
            v_kind[v0:v1], v_rot[v0:v1], v_cen[v0:v1], v_sf[v0:v1], v_cx[v0:v1], v_cy[v0:v1], v_width[v0:v1],
            v_height[v0:v1], v_dmode[v0:v1], v_delta[v0:v1], pt_off, p_uv[p0:p1], p_labels[p0:p1],
            p_depth[p0:p1], p_radius[p0:p1], s_lattice[s], s_has_lattice[s], s_tiling[s], s_delta3d[s],
            seed_first, greedy, occlusion, window, collapse)
        k = px.shape[0]
        a = out_off[s]
        if a + k > P.shape[0]:
            P = _grow2(P, a + k)
            SU = _grow2(SU, a + k)
            L = _grow1(L, a + k)
            RE = _grow1(RE, a + k)
            RA = _grow1(RA, a + k)
            OC = _grow1(OC, a + k)
        P[a:a + k] = px
        L[a:a + k] = plab
        SU[a:a + k] = -1
        SU[a:a + k, : v1 - v0] = psup
        RE[a:a + k] = pres
        RA[a:a + k] = prat
        OC[a:a + k] = pocc
        out_off[s + 1] = a + k
        q = nx.shape[0]
        b = near_off[s]
        if b + q > NP.shape[0]:
            NP = _grow2(NP, b + q)
            NL = _grow1(NL, b + q)
            NR = _grow1(NR, b + q)
        NP[b:b + q] = nx
        NL[b:b + q] = nlab
        NR[b:b + q] = nrat
        near_off[s + 1] = b + q
        counts[s] = cnt
    n = out_off[ns]
    q = near_off[ns]
    return (out_off, P[:n].copy(), L[:n].copy(), SU[:n].copy(), RE[:n].copy(), RA[:n].copy(), OC[:n].copy(),
            near_off, NP[:q].copy(), NL[:q].copy(), NR[:q].copy(), counts)
