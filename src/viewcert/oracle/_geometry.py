"""Geometry kernels of the oracle: 3×3 solves, rays and their least-squares point, line gaps, projection
into a view (orthographic in-plane Å, perspective px), unit conversions of the residual modes, minimum-image
vectors and wrapping. See :mod:`viewcert.oracle._kernels` for the frames and residual modes. ``_proj_s`` and
``_solve3_s`` work on scalars only: the seed loop calls them per candidate without reference-count traffic.
"""

from __future__ import annotations

import numpy as np
from numba import njit


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
