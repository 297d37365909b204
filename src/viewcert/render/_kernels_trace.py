"""Ray-casting kernels of the renderer: per-ray primitive tests (sphere, capped cylinder, screen line), batch
trace and shade of samples, byte conversion, and the per-atom silhouette count. Frames and units: see
:mod:`viewcert.render.raster`.

Primitive table ``prim`` (P, 12) float64, camera frame, one row per primitive:
  0 kind (0 sphere, 1 cylinder, 2 line), 1..4 early-out box umin, umax, vmin, vmax (px),
  sphere:   5..7 centre (Å), 8 radius, 9 squared inner radius of the outline ring
  cylinder: 5..7 start, 8..10 end, 11 radius
  line:     5 u0, 6 v0, 7 depth0, 8 u1, 9 v1, 10 depth1, 11 half-width (px)
Camera ``cam`` (7,): persp flag, width, height, scale (px/Å), focal (px), cx, cy (px).
Style ``params`` (13,): flat flag, outline rgb, unused, ambient, diffuse, background rgb, light xyz.

Hot loops call only scalar helpers: passing arrays to a non-inlined numba function costs reference
counting per call, so every routine here that takes arrays works on a whole batch of samples.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def _ray(u, v, persp, width, height, scale, focal, pcx, pcy):
    """Camera-frame ray through image point (u, v): origin, direction with d_z = −1 (so depth = t)."""
    if persp:
        return 0.0, 0.0, 0.0, (u - pcx) / focal, (pcy - v) / focal, -1.0
    return (u - 0.5 * width) / scale, (0.5 * height - v) / scale, 0.0, 0.0, 0.0, -1.0


@njit(cache=True)
def _sphere_t(ox, oy, dx, dy, persp, cx, cy, cz, r):
    """Depth of the front surface of a sphere along the ray, +inf on a miss (strictly inside only)."""
    if not persp:
        ex = ox - cx
        ey = oy - cy
        q = r * r - ex * ex - ey * ey
        if q <= 0.0:
            return np.inf
        return -cz - math.sqrt(q)
    b = dx * cx + dy * cy - cz
    a = dx * dx + dy * dy + 1.0
    cc = cx * cx + cy * cy + cz * cz - r * r
    disc = b * b - a * cc
    if disc <= 0.0:
        return np.inf
    t = (b - math.sqrt(disc)) / a
    if t <= 0.0:
        return np.inf
    return t


@njit(cache=True)
def _cylinder_hit(ox, oy, oz, dx, dy, dz, persp, p0x, p0y, p0z, p1x, p1y, p1z, r):
    """Entry (t, normal xyz) of the ray into a capped cylinder; t = +inf on a miss."""
    bax = p1x - p0x
    bay = p1y - p0y
    baz = p1z - p0z
    ocx = ox - p0x
    ocy = oy - p0y
    ocz = oz - p0z
    baba = bax * bax + bay * bay + baz * baz
    bard = bax * dx + bay * dy + baz * dz
    baoc = bax * ocx + bay * ocy + baz * ocz
    dd = dx * dx + dy * dy + dz * dz
    ocd = ocx * dx + ocy * dy + ocz * dz
    ococ = ocx * ocx + ocy * ocy + ocz * ocz
    best = np.inf
    nx = 0.0
    ny = 0.0
    nz = 0.0
    k2 = baba * dd - bard * bard
    if k2 > 1e-12 * baba * dd:
        k1 = baba * ocd - baoc * bard
        k0 = baba * ococ - baoc * baoc - r * r * baba
        h = k1 * k1 - k2 * k0
        if h > 0.0:
            t = (-k1 - math.sqrt(h)) / k2
            y = baoc + t * bard
            if 0.0 < y < baba and (t > 0.0 or not persp):
                best = t
                f = y / baba
                nx = (ocx + t * dx - bax * f) / r
                ny = (ocy + t * dy - bay * f) / r
                nz = (ocz + t * dz - baz * f) / r
    if abs(bard) > 1e-300:
        inv = 1.0 / math.sqrt(baba)
        for end in range(2):
            target = 0.0 if end == 0 else baba
            t = (target - baoc) / bard
            if t >= best or (persp and t <= 0.0):
                continue
            wx = ocx + t * dx
            wy = ocy + t * dy
            wz = ocz + t * dz
            along = bax * wx + bay * wy + baz * wz
            perp2 = wx * wx + wy * wy + wz * wz - along * along / baba
            if perp2 < r * r:
                best = t
                sgn = -1.0 if end == 0 else 1.0
                nx = sgn * bax * inv
                ny = sgn * bay * inv
                nz = sgn * baz * inv
    return best, nx, ny, nz


@njit(cache=True)
def _line_t(u, v, persp, u0, v0, d0, u1, v1, d1, hw):
    """Depth of a screen-space segment at (u, v) when within hw px of it, else +inf."""
    eu = u1 - u0
    ev = v1 - v0
    l2 = eu * eu + ev * ev
    s = 0.0
    if l2 > 0.0:
        s = ((u - u0) * eu + (v - v0) * ev) / l2
        if s < 0.0:
            s = 0.0
        elif s > 1.0:
            s = 1.0
    pu = u0 + s * eu - u
    pv = v0 + s * ev - v
    if pu * pu + pv * pv >= hw * hw:
        return np.inf
    if persp:
        return 1.0 / ((1.0 - s) / d0 + s / d1)
    return d0 + s * (d1 - d0)


@njit(cache=True)
def _sphere_t_ortho(ox, oy, cx, cy, cz, r):
    """Orthographic ray (origin (ox, oy, 0), direction −z): depth of the sphere's front surface, +inf on a
    miss (strictly inside). The one formula both the tracer and the z-buffer use, so they agree bit for bit."""
    ex = ox - cx
    ey = oy - cy
    qq = r * r - ex * ex - ey * ey
    if qq > 0.0:
        return -cz - math.sqrt(qq)
    return np.inf


@njit(cache=True)
def _sphere_t_persp(dx, dy, a, cx, cy, cz, r):
    """Perspective ray t·(dx, dy, −1) from the pinhole, a = dx² + dy² + 1: depth of the front surface."""
    b = dx * cx + dy * cy - cz
    disc = b * b - a * (cx * cx + cy * cy + cz * cz - r * r)
    if disc > 0.0:
        t = (b - math.sqrt(disc)) / a
        if t > 0.0:
            return t
    return np.inf


@njit(cache=True)
def _other_t(u, v, ox, oy, dx, dy, persp, kind, g0, g1, g2, g3, g4, g5, g6):
    """Depth of a cylinder (kind 1) or screen line (kind 2) at the sample, +inf on a miss."""
    if kind == 1.0:
        return _cylinder_hit(ox, oy, 0.0, dx, dy, -1.0, persp, g0, g1, g2, g3, g4, g5, g6)[0]
    return _line_t(u, v, persp, g0, g1, g2, g3, g4, g5, g6)


@njit(cache=True)
def _trace_batch(us, vs, n, prim, items, c0, c1, cam, out_p, out_t):
    """For samples (us[s], vs[s]), s < n: nearest primitive among items[c0:c1] and its depth (−1, +inf on
    a miss); see ``_trace_groups``."""
    bounds = np.empty(2, dtype=np.int64)
    bounds[0] = c0
    bounds[1] = c1
    _trace_groups(us, vs, n, max(n, 1), prim, items, bounds, cam, out_p, out_t)


@njit(cache=True)
def _trace_groups(us, vs, n, group, prim, items, gstart, cam, out_p, out_t):
    """For samples (us[s], vs[s]), s < n, in groups of ``group`` consecutive samples: nearest primitive
    among the group's candidates items[gstart[g]:gstart[g + 1]] (g = s // group) and its depth (−1, +inf
    on a miss). Ties keep the lower primitive index (candidates ascend and every comparison is strict).
    Spheres (the lowest indices) are tested first in a tight loop, then cylinders and lines."""
    persp = cam[0] > 0.5
    width = cam[1]
    height = cam[2]
    scale = cam[3]
    focal = cam[4]
    pcx = cam[5]
    pcy = cam[6]
    inv_scale = 1.0 / scale
    inv_focal = 1.0 / focal
    g = -1
    left = 0
    c0 = 0
    c1 = 0
    c_split = 0
    for s in range(n):
        if left == 0:
            g += 1
            left = group
            c0 = gstart[g]
            c1 = gstart[g + 1]
            c_split = c0
            while c_split < c1 and prim[items[c_split], 0] == 0.0:
                c_split += 1
        left -= 1
        u = us[s]
        v = vs[s]
        best_t = np.inf
        best_p = -1
        if persp:
            ox = 0.0
            oy = 0.0
            dx = (u - pcx) * inv_focal
            dy = (pcy - v) * inv_focal
            a = dx * dx + dy * dy + 1.0
            for q in range(c0, c_split):
                p = items[q]
                if u < prim[p, 1] or u > prim[p, 2] or v < prim[p, 3] or v > prim[p, 4]:
                    continue
                t = _sphere_t_persp(dx, dy, a, prim[p, 5], prim[p, 6], prim[p, 7], prim[p, 8])
                if t < best_t:
                    best_t = t
                    best_p = p
        else:
            ox = (u - 0.5 * width) * inv_scale
            oy = (0.5 * height - v) * inv_scale
            dx = 0.0
            dy = 0.0
            for q in range(c0, c_split):
                p = items[q]
                if u < prim[p, 1] or u > prim[p, 2] or v < prim[p, 3] or v > prim[p, 4]:
                    continue
                t = _sphere_t_ortho(ox, oy, prim[p, 5], prim[p, 6], prim[p, 7], prim[p, 8])
                if t < best_t:
                    best_t = t
                    best_p = p
        for q in range(c_split, c1):  # cylinders and lines: rare, out of the hot loop above
            p = items[q]
            if u < prim[p, 1] or u > prim[p, 2] or v < prim[p, 3] or v > prim[p, 4]:
                continue
            t = _other_t(u, v, ox, oy, dx, dy, persp, prim[p, 0], prim[p, 5], prim[p, 6], prim[p, 7], prim[p, 8],
                         prim[p, 9], prim[p, 10], prim[p, 11])
            if t < best_t:
                best_t = t
                best_p = p
        out_p[s] = best_p
        out_t[s] = best_t


@njit(cache=True)
def _outline_flag(u, v, persp, width, height, scale, focal, pcx, pcy, cx, cy, cz, r_in2):
    """1 when (u, v) falls in the outline ring of a sphere (perpendicular ray distance ≥ inner radius)."""
    ox, oy, oz, dx, dy, dz = _ray(u, v, persp, width, height, scale, focal, pcx, pcy)
    if persp:
        b = dx * cx + dy * cy + dz * cz
        perp2 = cx * cx + cy * cy + cz * cz - b * b / (dx * dx + dy * dy + dz * dz)
    else:
        ex = ox - cx
        ey = oy - cy
        perp2 = ex * ex + ey * ey
    return 1 if perp2 >= r_in2 else 0


@njit(cache=True)
def _shade_batch(us, vs, ps, ts, n, prim, col, params, cam, out, out_c):
    """Colour (float rgb) of each sample: background, flat (with outline ring) or Lambert + ambient; and its
    surface class for anti-aliasing decisions, 2 × primitive + outline flag (out_c, when it has n rows)."""
    persp = cam[0] > 0.5
    flat = params[0] > 0.5
    want_c = out_c.shape[0] >= n
    for s in range(n):
        p = ps[s]
        if p < 0:
            out[s, 0] = params[7]
            out[s, 1] = params[8]
            out[s, 2] = params[9]
            if want_c:
                out_c[s] = -2
            continue
        k = prim[p, 0]
        r0 = col[p, 0]
        g0 = col[p, 1]
        b0 = col[p, 2]
        if want_c:
            out_c[s] = 2 * p
        if k == 2.0 or (flat and k == 1.0):
            out[s, 0] = r0
            out[s, 1] = g0
            out[s, 2] = b0
            continue
        u = us[s]
        v = vs[s]
        if flat:
            if _outline_flag(u, v, persp, cam[1], cam[2], cam[3], cam[4], cam[5], cam[6], prim[p, 5], prim[p, 6],
                             prim[p, 7], prim[p, 9]) == 1:
                out[s, 0] = params[1]
                out[s, 1] = params[2]
                out[s, 2] = params[3]
                if want_c:
                    out_c[s] = 2 * p + 1
            else:
                out[s, 0] = r0
                out[s, 1] = g0
                out[s, 2] = b0
            continue
        t = ts[s]
        ox, oy, oz, dx, dy, dz = _ray(u, v, persp, cam[1], cam[2], cam[3], cam[4], cam[5], cam[6])
        if k == 0.0:
            rr = prim[p, 8]
            nx = (ox + t * dx - prim[p, 5]) / rr
            ny = (oy + t * dy - prim[p, 6]) / rr
            nz = (oz + t * dz - prim[p, 7]) / rr
        else:
            _, nx, ny, nz = _cylinder_hit(ox, oy, oz, dx, dy, dz, persp, prim[p, 5], prim[p, 6], prim[p, 7],
                                          prim[p, 8], prim[p, 9], prim[p, 10], prim[p, 11])
        lam = nx * params[10] + ny * params[11] + nz * params[12]
        if lam < 0.0:
            lam = 0.0
        inten = params[5] + params[6] * lam
        out[s, 0] = r0 * inten
        out[s, 1] = g0 * inten
        out[s, 2] = b0 * inten


@njit(cache=True)
def _to_byte(x):
    if x <= 0.0:
        return 0
    if x >= 1.0:
        return 255
    return int(math.floor(255.0 * x + 0.5))


@njit(cache=True)
def _silhouette_counts(prim, n_spheres, cam):
    """Pixel centres inside each sphere's silhouette, the sphere alone (the renderer's own ray test)."""
    width = int(cam[1])
    height = int(cam[2])
    out = np.zeros(n_spheres, dtype=np.int64)
    one = np.zeros(1, dtype=np.int64)
    for p in range(n_spheres):
        j0 = max(int(math.floor(prim[p, 1])), 0)
        j1 = min(int(math.ceil(prim[p, 2])), width - 1)
        i0 = max(int(math.floor(prim[p, 3])), 0)
        i1 = min(int(math.ceil(prim[p, 4])), height - 1)
        if j1 < j0 or i1 < i0:
            continue
        nj = j1 - j0 + 1
        n = (i1 - i0 + 1) * nj
        us = np.empty(n)
        vs = np.empty(n)
        for a in range(i1 - i0 + 1):
            for b in range(nj):
                us[a * nj + b] = j0 + b + 0.5
                vs[a * nj + b] = i0 + a + 0.5
        bp = np.empty(n, dtype=np.int64)
        bt = np.empty(n)
        one[0] = p
        _trace_batch(us, vs, n, prim, one, 0, 1, cam, bp, bt)
        c = 0
        for s in range(n):
            if bp[s] == p:
                c += 1
        out[p] = c
    return out


#: squared radius (Å²) a sphere is shrunk by before it is taken to cover a pixel centre for certain
#: (``_visible_counts``): far above the rounding of the ray test, so a pixel it covers is one the tracer gives it
COVER_MARGIN_A2 = 1e-6


@njit(cache=True)
def _visible_counts(prim, n_spheres, cam, starts, items, tile, limit):
    """Per sphere: the pixel centres the ID buffer would give it, counted up to ``limit`` (then the sphere's
    scan stops). Each candidate pixel centre — in the sphere's early-out box and, orthographic, its row chord
    ± 1 px, the superset of its hits the z-buffer visits — is traced through the candidates of its screen tile
    (``starts``/``items``: ``_kernels_pass1._bin_primitives`` with side ``tile`` px) by ``_trace_groups``: the
    nearest surface, ties to the lower index, the per-ray test the z-buffer reproduces bit for bit; the pixel
    counts when that is the sphere. No image-sized buffer: the cost is the spheres' own pixels, and a sphere
    with ``limit`` visible pixels stops at them.

    Orthographic views skip, without tracing, the pixel centres a sphere lying wholly in front of this one
    covers for certain (inside its silhouette shrunk by ``COVER_MARGIN_A2``, its centre's depth + margin nearer
    than this sphere's front point): there the tracer's winner is not this sphere, whatever else is drawn."""
    width = int(cam[1])
    height = int(cam[2])
    persp = cam[0] > 0.5
    scale = cam[3]
    inv_scale = 1.0 / scale
    n_tx = (width + tile - 1) // tile
    out = np.zeros(n_spheres, dtype=np.int64)
    us = np.empty(tile)
    vs = np.empty(tile)
    bp = np.empty(tile, dtype=np.int64)
    bt = np.empty(tile)
    bounds = np.empty(2, dtype=np.int64)
    stamp = np.full(n_spheres, -1, dtype=np.int64)
    front = np.empty(n_spheres, dtype=np.int64)
    ca = np.empty(n_spheres, dtype=np.int64)
    cb = np.empty(n_spheres, dtype=np.int64)
    for p in range(n_spheres):
        j0 = max(int(math.ceil(prim[p, 1] - 0.5)), 0)
        j1 = min(int(math.floor(prim[p, 2] - 0.5)), width - 1)
        i0 = max(int(math.ceil(prim[p, 3] - 0.5)), 0)
        i1 = min(int(math.floor(prim[p, 4] - 0.5)), height - 1)
        if j1 < j0 or i1 < i0:
            continue
        nf = 0
        if not persp:  # the spheres wholly in front of p whose boxes meet p's
            back = -prim[p, 7] - prim[p, 8]  # the depth of p's front point
            for ty in range(i0 // tile, i1 // tile + 1):
                for tx in range(j0 // tile, j1 // tile + 1):
                    tk = ty * n_tx + tx
                    for s in range(starts[tk], starts[tk + 1]):
                        q = items[s]
                        if q >= n_spheres or q == p or stamp[q] == p:
                            continue
                        stamp[q] = p
                        if (-prim[q, 7] + 1e-9 < back and prim[q, 1] <= prim[p, 2] and prim[q, 2] >= prim[p, 1]
                                and prim[q, 3] <= prim[p, 4] and prim[q, 4] >= prim[p, 3]):
                            front[nf] = q
                            nf += 1
        c = 0
        for i in range(i0, i1 + 1):
            v = i + 0.5
            lo = j0
            hi = j1
            nc = 0
            if not persp:  # the row's chord ± 1 px (as _kernels_pass1._zbuffer_rows)
                ey = (0.5 * height - v) * inv_scale - prim[p, 6]
                qq = prim[p, 8] * prim[p, 8] - ey * ey
                if qq < 0.0:
                    continue
                uc = 0.5 * width + prim[p, 5] * scale
                half = math.sqrt(qq) * scale + 1.0
                lo = max(lo, int(math.ceil(uc - half - 0.5)))
                hi = min(hi, int(math.floor(uc + half - 0.5)))
                for f in range(nf):  # the pixel centres of this row each front sphere covers for certain
                    q = front[f]
                    eq = (0.5 * height - v) * inv_scale - prim[q, 6]
                    w2 = prim[q, 8] * prim[q, 8] - eq * eq - COVER_MARGIN_A2
                    if w2 <= 0.0:
                        continue
                    uq = 0.5 * width + prim[q, 5] * scale
                    hq = math.sqrt(w2) * scale
                    a = int(math.floor(uq - hq - 0.5)) + 1
                    b = int(math.ceil(uq + hq - 0.5)) - 1
                    if a <= b:
                        ca[nc] = a
                        cb[nc] = b
                        nc += 1
            j = lo
            while j <= hi:
                moved = True
                while moved:  # past every covered run
                    moved = False
                    for f in range(nc):
                        if ca[f] <= j <= cb[f]:
                            j = cb[f] + 1
                            moved = True
                if j > hi:
                    break
                e = min(hi, (j // tile) * tile + tile - 1)  # the run: to the tile's end or the next covered
                for f in range(nc):
                    if j < ca[f] <= e:
                        e = ca[f] - 1
                n = e - j + 1
                for s in range(n):
                    us[s] = j + s + 0.5
                    vs[s] = v
                tk = (i // tile) * n_tx + j // tile
                bounds[0] = starts[tk]
                bounds[1] = starts[tk + 1]
                _trace_groups(us, vs, n, n, prim, items, bounds, cam, bp, bt)
                for s in range(n):
                    if bp[s] == p:
                        c += 1
                if c >= limit:
                    break
                j = e + 1
            if c >= limit:
                break
        out[p] = min(c, limit)
    return out
