"""Search structures of the oracle: stable row sorts and hashes, label ranks, coincident-site collapse, one
CSR grid of 2D sites per view (``build_grid``/``grid_nearest``; ``site_grids`` builds all of a structure),
a 3D CSR cell table for same-label neighbour search (``components_within``), and growable buffers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from viewcert.oracle._geometry import min_image_norm


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


@njit(cache=True)
def _sites(kind, delta, pt_off, w, lrank, collapse):
    """Sites of every view (coincident points collapsed when ``collapse``): (sites (s,) point indices in
    view order, s_off (K+1,) site offsets per view)."""
    nv = kind.shape[0]
    is_site = np.ones(w.shape[0], dtype=np.bool_)
    s_off = np.zeros(nv + 1, dtype=np.int64)
    for k in range(nv):
        a = pt_off[k]
        b = pt_off[k + 1]
        if collapse and b > a:
            eps = 1e-3 * delta[k] if kind[k] == 0 else 1e-6
            is_site[a:b] = collapse_sites(w[a:b], lrank[a:b], eps)
        s_off[k + 1] = s_off[k] + np.sum(is_site[a:b])
    return np.flatnonzero(is_site), s_off


@njit(cache=True)
def _cell_size(k, sites, lo, hi, w, sf, dmode, delta, pt_off, depth, window):
    """Grid cell size of view k (2D units): the typical search radius, but never so small that the grid
    explodes (about 16 cells per site at most: a query scans ~9 cells of the size of its radius)."""
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
    typ = window * delta[k] * 2.5
    if dmode[k] == 2:
        dmean = 0.0
        for p in range(pt_off[k], pt_off[k + 1]):
            dmean += depth[p]
        dmean = dmean / max(1, pt_off[k + 1] - pt_off[k])
        typ = typ * sf[k] / max(dmean, 1e-12)
    return max(typ, ext / (4.0 * np.sqrt(max(ns, 1))), 1e-12)


@njit(cache=True)
def site_grids(kind, sf, dmode, delta, pt_off, w, lrank, nlab, depth, window, collapse):
    """Sites and one ``build_grid`` per view, concatenated: (sites, s_off, g_h, g_ox, g_oy, g_nx, g_ny,
    g_start, g_soff, g_sites). View k's grid is g_start[g_soff[k]:g_soff[k+1]] and g_sites[s_off[k]:…]."""
    nv = kind.shape[0]
    sites, s_off = _sites(kind, delta, pt_off, w, lrank, collapse)
    g_h = np.empty(nv)
    g_ox = np.empty(nv)
    g_oy = np.empty(nv)
    g_nx = np.empty(nv, dtype=np.int64)
    g_ny = np.empty(nv, dtype=np.int64)
    g_sites = np.empty(sites.shape[0], dtype=np.int64)
    g_soff = np.zeros(nv + 1, dtype=np.int64)
    starts = []
    for k in range(nv):
        lo = s_off[k]
        hi = s_off[k + 1]
        h = _cell_size(k, sites, lo, hi, w, sf, dmode, delta, pt_off, depth, window)
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
    return sites, s_off, g_h, g_ox, g_oy, g_nx, g_ny, g_start, g_soff, g_sites
