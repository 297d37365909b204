"""Pass 1 of the renderer (numba): primitives binned per screen tile (for pass 2), the z-buffer of pixel
centres over bands of rows (each primitive visits only the rows/columns it can reach), then atom IDs,
centre colours and the surface class of every pixel. Table layouts: :mod:`viewcert.render._kernels_trace`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from viewcert.render._kernels_trace import (
    _line_t,
    _other_t,
    _shade_batch,
    _sphere_t_ortho,
    _sphere_t_persp,
    _to_byte,
)


@njit(cache=True)
def _tile_keeps(prim, p, tx, ty, tile):
    """Lines are listed only in tiles they pass near (their early-out box is far too large)."""
    if prim[p, 0] != 2.0:
        return True
    uc = (tx + 0.5) * tile
    vc = (ty + 0.5) * tile
    reach = prim[p, 11] + 1.0 + 0.7072 * tile
    return _line_t(uc, vc, False, prim[p, 5], prim[p, 6], 0.0, prim[p, 8], prim[p, 9], 0.0, reach) < np.inf


@njit(cache=True)
def _bin_primitives(prim, tile, n_tx, n_ty):
    """CSR lists of primitives per screen tile (row-major tiles), primitives ascending. A primitive is listed
    in every tile its early-out box, grown by 1 px, touches (so sub-samples near a tile's border are
    covered); a line only in those of them its segment passes within half-width + 1 px of."""
    n_tiles = n_tx * n_ty
    counts = np.zeros(n_tiles + 1, dtype=np.int64)
    npr = prim.shape[0]
    rng = np.empty((npr, 4), dtype=np.int64)
    for p in range(npr):
        tx0 = max(int(math.floor((prim[p, 1] - 1.0) / tile)), 0)
        tx1 = min(int(math.floor((prim[p, 2] + 1.0) / tile)), n_tx - 1)
        ty0 = max(int(math.floor((prim[p, 3] - 1.0) / tile)), 0)
        ty1 = min(int(math.floor((prim[p, 4] + 1.0) / tile)), n_ty - 1)
        rng[p, 0] = tx0
        rng[p, 1] = tx1
        rng[p, 2] = ty0
        rng[p, 3] = ty1
        for ty in range(ty0, ty1 + 1):
            for tx in range(tx0, tx1 + 1):
                if _tile_keeps(prim, p, tx, ty, tile):
                    counts[ty * n_tx + tx + 1] += 1
    for k in range(n_tiles):
        counts[k + 1] += counts[k]
    items = np.empty(counts[n_tiles], dtype=np.int64)
    fill = counts[:n_tiles].copy()
    for p in range(npr):
        for ty in range(rng[p, 2], rng[p, 3] + 1):
            for tx in range(rng[p, 0], rng[p, 1] + 1):
                if _tile_keeps(prim, p, tx, ty, tile):
                    k = ty * n_tx + tx
                    items[fill[k]] = p
                    fill[k] += 1
    return counts, items


@njit(cache=True)
def _tile_bounds(tk, tile, width, height):
    n_tx = (width + tile - 1) // tile
    ty = tk // n_tx
    tx = tk - ty * n_tx
    i0 = ty * tile
    j0 = tx * tile
    return i0, j0, min(i0 + tile, height), min(j0 + tile, width)


@njit(cache=True)
def _capsule_span(v, u0, v0, u1, v1, h, ulo, uhi):
    """A u-interval (lo, hi) containing every point of row v within h of the 2D segment (u0, v0)–(u1, v1),
    clipped to [ulo, uhi]; lo > hi when the row misses it."""
    ev = v1 - v0
    if abs(ev) > 1e-9:
        eu = u1 - u0
        uc = u0 + (v - v0) * eu / ev
        half = h * math.sqrt(eu * eu + ev * ev) / abs(ev)
        return max(uc - half, ulo), min(uc + half, uhi)
    if abs(v - v0) <= h:
        return ulo, uhi
    return 1.0, 0.0


@njit(cache=True)
def _zbuffer_rows(r0, r1, prim, cam, pidx, depth):
    """Pixel centres of rows r0..r1−1, primitive by primitive (ascending, strict depth test, so ties keep
    the lower index exactly as the per-pixel tracer does): pidx = nearest primitive (−1 none), depth.
    Each primitive visits only the pixels of its row spans (spheres: the exact chord ± 1 px; cylinders and
    lines: the strip around their projected axis), and every visited pixel gets the exact ray test."""
    width = int(cam[1])
    height = int(cam[2])
    persp = cam[0] > 0.5
    scale = cam[3]
    inv_scale = 1.0 / scale
    inv_focal = 1.0 / cam[4]
    pcx = cam[5]
    pcy = cam[6]
    for i in range(r0, r1):
        for j in range(width):
            pidx[i, j] = -1
            depth[i, j] = np.inf
    for p in range(prim.shape[0]):
        kind = prim[p, 0]
        ulo = prim[p, 1]
        uhi = prim[p, 2]
        vlo = prim[p, 3]
        vhi = prim[p, 4]
        i_start = max(r0, int(math.ceil(vlo - 0.5)))
        i_stop = min(r1, int(math.floor(vhi - 0.5)) + 1)
        if i_start >= i_stop or uhi < 0.0 or ulo > width:
            continue
        cx = prim[p, 5]
        cy = prim[p, 6]
        for i in range(i_start, i_stop):
            v = i + 0.5
            lo = ulo
            hi = uhi
            if kind == 0.0 and not persp:
                ey = (0.5 * height - v) * inv_scale - cy
                q = prim[p, 8] * prim[p, 8] - ey * ey
                if q < 0.0:
                    continue
                uc = 0.5 * width + cx * scale
                half = math.sqrt(q) * scale + 1.0
                lo = max(lo, uc - half)
                hi = min(hi, uc + half)
            elif kind == 2.0:
                lo, hi = _capsule_span(v, prim[p, 5], prim[p, 6], prim[p, 8], prim[p, 9], prim[p, 11] + 1.0, lo, hi)
            elif kind == 1.0 and not persp:
                h = prim[p, 11] * scale + 1.0
                lo, hi = _capsule_span(v, 0.5 * width + cx * scale, 0.5 * height - cy * scale,
                                       0.5 * width + prim[p, 8] * scale, 0.5 * height - prim[p, 9] * scale, h, lo, hi)
            j_start = max(0, int(math.ceil(lo - 0.5)))
            j_stop = min(width, int(math.floor(hi - 0.5)) + 1)
            for j in range(j_start, j_stop):
                u = j + 0.5
                if u < ulo or u > uhi or v < vlo or v > vhi:
                    continue
                if persp:
                    ox = 0.0
                    oy = 0.0
                    dx = (u - pcx) * inv_focal
                    dy = (pcy - v) * inv_focal
                else:
                    ox = (u - 0.5 * width) * inv_scale
                    oy = (0.5 * height - v) * inv_scale
                    dx = 0.0
                    dy = 0.0
                if kind == 0.0:
                    if persp:
                        t = _sphere_t_persp(dx, dy, dx * dx + dy * dy + 1.0, cx, cy, prim[p, 7], prim[p, 8])
                    else:
                        t = _sphere_t_ortho(ox, oy, cx, cy, prim[p, 7], prim[p, 8])
                else:
                    t = _other_t(u, v, ox, oy, dx, dy, persp, kind, cx, cy, prim[p, 7], prim[p, 8], prim[p, 9],
                                 prim[p, 10], prim[p, 11])
                if t < depth[i, j]:
                    depth[i, j] = t
                    pidx[i, j] = p


@njit(cache=True)
def _shade_rows(r0, r1, prim, code, col, cam, params, want_rgb, pidx, depth, ids, rgb, cls):
    """IDs from primitive indices; with ``want_rgb`` the centre sample's colour and surface class. ``cls``
    may be the same buffer as ``pidx``: a row's primitive indices are read before its classes are written."""
    width = int(cam[1])
    bg0 = _to_byte(params[7])
    bg1 = _to_byte(params[8])
    bg2 = _to_byte(params[9])
    if want_rgb and params[0] > 0.5 and cam[0] < 0.5:
        _shade_rows_flat_ortho(r0, r1, prim, code, col, cam, params, pidx, ids, rgb, cls, bg0, bg1, bg2)
        return
    us = np.empty(width)
    vs = np.empty(width)
    ps = np.empty(width, dtype=np.int64)
    ts = np.empty(width)
    colour = np.empty((width, 3))
    kc = np.empty(width, dtype=np.int64)
    for i in range(r0, r1):
        n = 0
        for j in range(width):
            p = pidx[i, j]
            if p < 0:
                ids[i, j] = -1
                if want_rgb:
                    cls[i, j] = -2
                    rgb[i, j, 0] = bg0
                    rgb[i, j, 1] = bg1
                    rgb[i, j, 2] = bg2
            else:
                ids[i, j] = code[p]
                if want_rgb:
                    us[n] = j + 0.5
                    vs[n] = i + 0.5
                    ps[n] = p
                    ts[n] = depth[i, j]
                    n += 1
        if n == 0:
            continue
        _shade_batch(us, vs, ps, ts, n, prim, col, params, cam, colour, kc)
        for k in range(n):
            j = int(us[k])
            cls[i, j] = kc[k]
            rgb[i, j, 0] = _to_byte(colour[k, 0])
            rgb[i, j, 1] = _to_byte(colour[k, 1])
            rgb[i, j, 2] = _to_byte(colour[k, 2])


@njit(cache=True)
def _shade_rows_flat_ortho(r0, r1, prim, code, col, cam, params, pidx, ids, rgb, cls, bg0, bg1, bg2):
    """``_shade_rows`` for the flat style through an orthographic camera, written out per pixel with each
    primitive's and the outline's bytes converted once: the same arithmetic as ``_shade_batch`` +
    ``_outline_flag`` (ring when (ox − cx)² + (oy − cy)² ≥ r_in², ox = (u − W/2)/s, oy = (H/2 − v)/s), so
    the same bytes and classes."""
    width = int(cam[1])
    height = cam[2]
    scale = cam[3]
    n = prim.shape[0]
    byte = np.empty((n + 1, 3), dtype=np.uint8)  # row n: the outline colour
    for p in range(n):
        for ch in range(3):
            byte[p, ch] = _to_byte(col[p, ch])
    for ch in range(3):
        byte[n, ch] = _to_byte(params[1 + ch])
    for i in range(r0, r1):
        v = i + 0.5
        for j in range(width):
            p = pidx[i, j]
            if p < 0:
                ids[i, j] = -1
                cls[i, j] = -2
                rgb[i, j, 0] = bg0
                rgb[i, j, 1] = bg1
                rgb[i, j, 2] = bg2
                continue
            ids[i, j] = code[p]
            c = 2 * p
            b = p
            if prim[p, 0] == 0.0:
                ex = (j + 0.5 - 0.5 * width) / scale - prim[p, 5]
                ey = (0.5 * height - v) / scale - prim[p, 6]
                if ex * ex + ey * ey >= prim[p, 9]:
                    c += 1
                    b = n
            cls[i, j] = c
            rgb[i, j, 0] = byte[b, 0]
            rgb[i, j, 1] = byte[b, 1]
            rgb[i, j, 2] = byte[b, 2]
