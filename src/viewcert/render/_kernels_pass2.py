"""Pass 2 of the renderer (numba): adaptive anti-aliasing per screen tile, and the two drivers (bands and
tiles in parallel, or serial). A pixel whose surface class differs from a 4-neighbour's where that boundary
can cross it (``_may_cross``), or that lies within half-width + 0.75 px of an edge line, is an edge pixel and
gets the mean colour of an ss × ss sample grid. Per tile: ``_edge_pixels`` → ``_edge_candidates`` →
``_aa_fast`` (orthographic: trace and shade written out per sample) or ``_aa_slow`` (batch
trace + shade). Table layouts: :mod:`viewcert.render._kernels_trace`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from viewcert.render._kernels_pass1 import _shade_rows, _tile_bounds, _zbuffer_rows
from viewcert.render._kernels_trace import (
    _cylinder_hit,
    _line_t,
    _other_t,
    _shade_batch,
    _sphere_t_ortho,
    _to_byte,
    _trace_groups,
)

ROWS_PER_BAND = 16


@njit(cache=True)
def _circle_near(ox, oy, cx, cy, r, r_in2, flat, scale):
    """True when an orthographic sample (camera-plane ox, oy) lies within half a pixel diagonal of a
    sphere's silhouette circle or, in the flat style, of its outline-ring circle."""
    rho = math.sqrt((ox - cx) * (ox - cx) + (oy - cy) * (oy - cy)) * scale
    if abs(rho - r * scale) < 0.7072:
        return True
    return flat and abs(rho - math.sqrt(r_in2) * scale) < 0.7072


@njit(cache=True)
def _may_cross(ox, oy, flat, scale, k1, a1, b1, c1, r1, q1, k2, a2, b2, c2, r2, q2):
    """Can the boundary between the surfaces seen at two neighbouring pixel centres cross the pixel whose
    centre is (ox, oy)? Exact "no" only for orthographic views where both sides are spheres (kind 0) or
    background (kind −1) and the two spheres do not intersect in 3D: the boundary is then one of their
    silhouette or outline circles, and it must pass within half a pixel diagonal of the centre."""
    if k1 > 0.0 or k2 > 0.0:
        return True
    if k1 == 0.0 and k2 == 0.0 and (a1 != a2 or b1 != b2 or c1 != c2):
        d2 = (a1 - a2) * (a1 - a2) + (b1 - b2) * (b1 - b2) + (c1 - c2) * (c1 - c2)
        if d2 < (r1 + r2) * (r1 + r2):
            return True
    if k1 == 0.0 and _circle_near(ox, oy, a1, b1, r1, q1, flat, scale):
        return True
    return k2 == 0.0 and _circle_near(ox, oy, a2, b2, r2, q2, flat, scale)


@njit(cache=True)
def _tile_lines(c0, c1, prim, items):
    """The edge lines among a tile's candidates items[c0:c1]: (primitive indices, count)."""
    lines = np.empty(c1 - c0, dtype=np.int64)
    n_lines = 0
    for q in range(c0, c1):
        if prim[items[q], 0] == 2.0:
            lines[n_lines] = items[q]
            n_lines += 1
    return lines, n_lines


@njit(cache=True)
def _edge_pixels(i0, j0, i1, j1, cls, prim, lines, n_lines, width, height, persp, flat, scale, full, edge):
    """Edge pixels of the tile rows i0:i1, columns j0:j1 (every pixel when ``full``), as tile-local indices
    (i − i0)·nj + (j − j0) into edge; returns how many. A pixel is an edge pixel when a 4-neighbour has
    another surface class and the boundary between the two can cross it (perspective: always), or when it
    lies within half-width + 0.75 px of a line. Kept whole (per-tile loop, no per-pixel calls taking arrays):
    with the neighbour and line tests as per-pixel functions the study-style 768 px render took ~17 % more
    CPU (0.544 → 0.636 s for 30 views, best of 8, together with ``_aa_fast`` split per pixel)."""
    nj = j1 - j0
    n_edge = 0
    for i in range(i0, i1):
        for j in range(j0, j1):
            c = cls[i, j]
            e = full
            if not e and ((i > 0 and cls[i - 1, j] != c) or (i + 1 < height and cls[i + 1, j] != c)
                          or (j > 0 and cls[i, j - 1] != c) or (j + 1 < width and cls[i, j + 1] != c)):
                p1 = c // 2 if c >= 0 else -1
                k1 = -1.0 if p1 < 0 else prim[p1, 0]
                a1 = 0.0 if p1 < 0 else prim[p1, 5]
                b1 = 0.0 if p1 < 0 else prim[p1, 6]
                z1 = 0.0 if p1 < 0 else prim[p1, 7]
                r1 = 0.0 if p1 < 0 else prim[p1, 8]
                q1 = 0.0 if p1 < 0 else prim[p1, 9]
                ox = (j + 0.5 - 0.5 * width) / scale
                oy = (0.5 * height - i - 0.5) / scale
                for nb in range(4):
                    ii = i + (-1 if nb == 0 else (1 if nb == 1 else 0))
                    jj = j + (-1 if nb == 2 else (1 if nb == 3 else 0))
                    if ii < 0 or ii >= height or jj < 0 or jj >= width or cls[ii, jj] == c:
                        continue
                    if persp:
                        e = True
                        break
                    p2 = cls[ii, jj] // 2 if cls[ii, jj] >= 0 else -1
                    if p2 < 0:
                        e = _may_cross(ox, oy, flat, scale, k1, a1, b1, z1, r1, q1, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
                    else:
                        e = _may_cross(ox, oy, flat, scale, k1, a1, b1, z1, r1, q1, prim[p2, 0], prim[p2, 5],
                                       prim[p2, 6], prim[p2, 7], prim[p2, 8], prim[p2, 9])
                    if e:
                        break
            if not e:
                for q in range(n_lines):
                    pl = lines[q]
                    if _line_t(j + 0.5, i + 0.5, False, prim[pl, 5], prim[pl, 6], 0.0, prim[pl, 8], prim[pl, 9], 0.0,
                               prim[pl, 11] + 0.75) < np.inf:
                        e = True
                        break
            if e:
                edge[n_edge] = (i - i0) * nj + (j - j0)
                n_edge += 1
    return n_edge


@njit(cache=True)
def _edge_candidates(edge, n_edge, nj, i0, j0, c0, c1, prim, items):
    """Per edge pixel, the tile's candidates whose early-out box meets the pixel square (lines: only those
    reaching it), as CSR (gstart (n_edge + 1,), loc)."""
    gstart = np.empty(n_edge + 1, dtype=np.int64)
    loc = np.empty(n_edge * (c1 - c0), dtype=np.int64)
    nl = 0
    for e in range(n_edge):
        a = edge[e] // nj
        b = edge[e] - a * nj
        gstart[e] = nl
        u_lo = float(j0 + b)
        v_lo = float(i0 + a)
        for q in range(c0, c1):
            p = items[q]
            if prim[p, 2] >= u_lo and prim[p, 1] <= u_lo + 1.0 and prim[p, 4] >= v_lo and prim[p, 3] <= v_lo + 1.0:
                if prim[p, 0] == 2.0 and _line_t(u_lo + 0.5, v_lo + 0.5, False, prim[p, 5], prim[p, 6], 0.0,
                                                 prim[p, 8], prim[p, 9], 0.0, prim[p, 11] + 0.71) == np.inf:
                    continue  # a line's box meets the square but the line does not reach it
                loc[nl] = p
                nl += 1
    gstart[n_edge] = nl
    return gstart, loc[:nl]


@njit(cache=True)
def _aa_fast(edge, n_edge, nj, i0, j0, ss, width, height, scale, flat, gstart, loc, prim, col, params, rgb):
    """Orthographic path: each edge pixel (candidates loc[gstart[e]:gstart[e+1]]) gets the mean colour of its
    ss × ss samples, the tracer's per-primitive tests and the shading written out per sample; writes rgb.
    Per pixel the sample coordinates are computed once and the candidates are the outer loop (each one's
    row loaded once, its box tested per sample row and column); per sample the candidates are still met in
    ascending order with a strict depth test, so every byte equals the sample-outer loop's (~15 % less CPU
    here on 768² e3 renders). Kept whole (one call per tile): as a per-pixel function taking arrays it cost
    ~17 % of the study-style 768 px render (see ``_edge_pixels``)."""
    inv_scale = 1.0 / scale
    inv = 1.0 / (ss * ss)
    su = np.empty(ss)
    sox = np.empty(ss)
    sv = np.empty(ss)
    soy = np.empty(ss)
    best_t = np.empty(ss * ss)
    best_p = np.empty(ss * ss, dtype=np.int64)
    for e in range(n_edge):
        a = edge[e] // nj
        b = edge[e] - a * nj
        i = i0 + a
        j = j0 + b
        for k in range(ss):
            sv[k] = i + (k + 0.5) / ss
            soy[k] = (0.5 * height - sv[k]) * inv_scale
            su[k] = j + (k + 0.5) / ss
            sox[k] = (su[k] - 0.5 * width) * inv_scale
        for s in range(ss * ss):
            best_t[s] = np.inf
            best_p[s] = -1
        for q in range(gstart[e], gstart[e + 1]):
            r = loc[q]
            kind = prim[r, 0]
            for aa in range(ss):
                v = sv[aa]
                if v < prim[r, 3] or v > prim[r, 4]:
                    continue
                for bb in range(ss):
                    u = su[bb]
                    if u < prim[r, 1] or u > prim[r, 2]:
                        continue
                    if kind == 0.0:
                        t = _sphere_t_ortho(sox[bb], soy[aa], prim[r, 5], prim[r, 6], prim[r, 7], prim[r, 8])
                    else:
                        t = _other_t(u, v, sox[bb], soy[aa], 0.0, 0.0, False, kind, prim[r, 5], prim[r, 6],
                                     prim[r, 7], prim[r, 8], prim[r, 9], prim[r, 10], prim[r, 11])
                    s = aa * ss + bb
                    if t < best_t[s]:
                        best_t[s] = t
                        best_p[s] = r
        acc0 = 0.0
        acc1 = 0.0
        acc2 = 0.0
        s = -1
        for aa in range(ss):
            for bb in range(ss):
                s += 1
                p = best_p[s]
                if p < 0:
                    acc0 += params[7]
                    acc1 += params[8]
                    acc2 += params[9]
                    continue
                ox = sox[bb]
                oy = soy[aa]
                kind = prim[p, 0]
                ex = ox - prim[p, 5]
                ey = oy - prim[p, 6]
                if kind == 2.0 or (flat and kind == 1.0) or (flat and kind == 0.0 and ex * ex + ey * ey < prim[p, 9]):
                    acc0 += col[p, 0]
                    acc1 += col[p, 1]
                    acc2 += col[p, 2]
                    continue
                if flat:  # outline ring of a sphere
                    acc0 += params[1]
                    acc1 += params[2]
                    acc2 += params[3]
                    continue
                if kind == 1.0:
                    _, nx, ny, nz = _cylinder_hit(ox, oy, 0.0, 0.0, 0.0, -1.0, False, prim[p, 5], prim[p, 6],
                                                  prim[p, 7], prim[p, 8], prim[p, 9], prim[p, 10], prim[p, 11])
                    lam = nx * params[10] + ny * params[11] + nz * params[12]
                else:
                    lam = (ex * params[10] + ey * params[11] + (-best_t[s] - prim[p, 7]) * params[12]) / prim[p, 8]
                if lam < 0.0:
                    lam = 0.0
                inten = params[5] + params[6] * lam
                acc0 += col[p, 0] * inten
                acc1 += col[p, 1] * inten
                acc2 += col[p, 2] * inten
        rgb[i, j, 0] = _to_byte(acc0 * inv)
        rgb[i, j, 1] = _to_byte(acc1 * inv)
        rgb[i, j, 2] = _to_byte(acc2 * inv)


@njit(cache=True)
def _aa_slow(edge, n_edge, nj, i0, j0, ss, gstart, loc, prim, col, params, cam, rgb):
    """General path (perspective): batch trace + shade of every sub-sample of the edge pixels; writes rgb."""
    m = n_edge * ss * ss
    su = np.empty(m)
    sv = np.empty(m)
    for e in range(n_edge):
        a = edge[e] // nj
        b = edge[e] - a * nj
        for aa in range(ss):
            for bb in range(ss):
                r = (e * ss + aa) * ss + bb
                su[r] = j0 + b + (bb + 0.5) / ss
                sv[r] = i0 + a + (aa + 0.5) / ss
    sp = np.empty(m, dtype=np.int64)
    st = np.empty(m)
    sc = np.empty((m, 3))
    _trace_groups(su, sv, m, ss * ss, prim, loc, gstart, cam, sp, st)
    _shade_batch(su, sv, sp, st, m, prim, col, params, cam, sc, np.empty(0, dtype=np.int64))
    inv = 1.0 / (ss * ss)
    for e in range(n_edge):
        a = edge[e] // nj
        b = edge[e] - a * nj
        for ch in range(3):
            acc = 0.0
            for r in range(e * ss * ss, (e + 1) * ss * ss):
                acc += sc[r, ch]
            rgb[i0 + a, j0 + b, ch] = _to_byte(acc * inv)


@njit(cache=True)
def _aa_tile(tk, prim, col, cam, params, ss, tile, starts, items, rgb, cls, full):
    """Pass 2 for one screen tile: every edge pixel (see the module docstring) gets the mean colour of an
    ss × ss sample grid."""
    width = int(cam[1])
    height = int(cam[2])
    i0, j0, i1, j1 = _tile_bounds(tk, tile, width, height)
    nj = j1 - j0
    c0 = starts[tk]
    c1 = starts[tk + 1]
    if c0 == c1:
        return
    persp = cam[0] > 0.5
    flat = params[0] > 0.5
    scale = cam[3]
    lines, n_lines = _tile_lines(c0, c1, prim, items)
    edge = np.empty((i1 - i0) * nj, dtype=np.int64)
    n_edge = _edge_pixels(i0, j0, i1, j1, cls, prim, lines, n_lines, width, height, persp, flat, scale, full, edge)
    if n_edge == 0:
        return
    gstart, loc = _edge_candidates(edge, n_edge, nj, i0, j0, c0, c1, prim, items)
    if persp:
        _aa_slow(edge, n_edge, nj, i0, j0, ss, gstart, loc, prim, col, params, cam, rgb)
        return
    _aa_fast(edge, n_edge, nj, i0, j0, ss, width, height, scale, flat, gstart, loc, prim, col, params, rgb)


@njit(cache=True, parallel=True)
def _render_kernel(prim, code, col, cam, params, ss, tile, want_rgb, starts, items, rgb, ids, depth, cls, pidx,
                   full):
    """Pass 1 (bands of rows in parallel): z-buffer of pixel centres, then IDs and centre colours; pass 2
    (screen tiles in parallel): anti-aliasing of edge pixels. Every pixel is written by one band/tile."""
    height = int(cam[2])
    n_bands = (height + ROWS_PER_BAND - 1) // ROWS_PER_BAND
    for b in prange(n_bands):
        r0 = b * ROWS_PER_BAND
        r1 = min(r0 + ROWS_PER_BAND, height)
        _zbuffer_rows(r0, r1, prim, cam, pidx, depth)
        _shade_rows(r0, r1, prim, code, col, cam, params, want_rgb, pidx, depth, ids, rgb, cls)
    if want_rgb and ss > 1:
        for tk in prange(len(starts) - 1):
            _aa_tile(tk, prim, col, cam, params, ss, tile, starts, items, rgb, cls, full)


@njit(cache=True)
def _render_serial(prim, code, col, cam, params, ss, tile, want_rgb, starts, items, rgb, ids, depth, cls, pidx,
                   full):
    height = int(cam[2])
    _zbuffer_rows(0, height, prim, cam, pidx, depth)
    _shade_rows(0, height, prim, code, col, cam, params, want_rgb, pidx, depth, ids, rgb, cls)
    if want_rgb and ss > 1:
        for tk in range(len(starts) - 1):
            _aa_tile(tk, prim, col, cam, params, ss, tile, starts, items, rgb, cls, full)
