"""The oracle's per-structure pipeline and batch entry point (numba). ``reconstruct_one`` runs the stages:
rays and label ranks, sites and grids (``_grids.site_grids``), seeding and verification
(``_seeding.seed_candidates``), near misses, merge (``_merge``), wrapping and canonical order.
``reconstruct_many`` runs it over S structures packed into flat arrays (the wrapper is
:mod:`viewcert.oracle.triangulate`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from viewcert.oracle._codes import (
    C_ACCEPTED,
    C_NEAR,
    C_OCCLUDED,
    C_POINTS,
    C_SITES,
    C_TRANSLATE_REJECTED,
    C_UNIQUE,
    N_COUNTS,
)
from viewcert.oracle._geometry import lattice_inverse, view_coords, view_rays, wrap_point
from viewcert.oracle._grids import _grow1, _grow2, label_ranks, site_grids
from viewcert.oracle._merge import canonical_order, merge_clusters, merge_greedy, near_misses, unique_tuples
from viewcert.oracle._seeding import seed_candidates


@njit(cache=True)
def _rays(kind, rot, cen, sf, cx, cy, width, height, pt_off, uv):
    """2D working coordinates (M, 2) and rays (origins, unit directions (M, 3), world Å) of every point."""
    m = uv.shape[0]
    w = np.empty((m, 2))
    origins = np.empty((m, 3))
    dirs = np.empty((m, 3))
    for k in range(kind.shape[0]):
        a = pt_off[k]
        b = pt_off[k + 1]
        wk = view_coords(kind[k], rot[k], cen[k], sf[k], cx[k], cy[k], width[k], height[k], uv[a:b])
        w[a:b] = wk
        view_rays(kind[k], rot[k], cen[k], sf[k], cx[k], cy[k], wk, origins[a:b], dirs[a:b])
    return w, origins, dirs


@njit(cache=True)
def merge_candidates(c_x, c_lab, c_sup, c_res, c_rat, c_occ, greedy, delta3d, has_lattice, lattice, inv, tiling,
                     kind, rot, cen, sf, cx, cy, dmode, delta, w, origins, dirs, pt_off, counts):
    """Accepted candidates → output points (x, label, support, residual Å, ratio, occluded), wrapped into
    the cell when periodic and (deterministic merge) in canonical order. Greedy: the study compared
    Cartesian distances; with tiled observations translates must collapse, so minimum image there."""
    ntile = tiling[0] * tiling[1] * tiling[2] if has_lattice else 1
    if greedy:
        keep = merge_greedy(c_x, c_lab, delta3d, has_lattice and ntile > 1, lattice, inv)
        px = c_x[keep].copy()
        plab = c_lab[keep].copy()
        psup = c_sup[keep].copy()
        pres = c_res[keep].copy()
        prat = c_rat[keep].copy()
        pocc = c_occ[keep].copy()
        counts[C_UNIQUE] = c_x.shape[0]
    else:
        sel = unique_tuples(c_lab, c_sup)
        counts[C_UNIQUE] = sel.shape[0]
        px, plab, psup, pres, prat, pocc, ntr = merge_clusters(
            c_x[sel].copy(), c_lab[sel].copy(), c_sup[sel].copy(), c_res[sel].copy(), c_rat[sel].copy(),
            c_occ[sel].copy(), delta3d, has_lattice, lattice, inv, tiling, ntile, kind, rot, cen, sf, cx, cy,
            dmode, delta, w, origins, dirs, pt_off)
        counts[C_TRANSLATE_REJECTED] = ntr
    if has_lattice:
        for i in range(px.shape[0]):
            px[i] = wrap_point(px[i], lattice, inv)
    if not greedy and px.shape[0] > 1:
        o = canonical_order(px, plab)
        px = px[o].copy()
        plab = plab[o].copy()
        psup = psup[o].copy()
        pres = pres[o].copy()
        prat = prat[o].copy()
        pocc = pocc[o].copy()
    return px, plab, psup, pres, prat, pocc


@njit(cache=True, inline="always")  # in reconstruct_many's body: one LLVM pass over the stages, not two
def reconstruct_one(kind, rot, cen, sf, cx, cy, width, height, dmode, delta, pt_off, uv, labels, depth,
                    radius, lattice, has_lattice, tiling, delta3d, seed_first, greedy, occlusion, window,
                    collapse, prune):
    """Reconstruct one structure.

    Per view (K): kind (0 ortho, 1 persp), rot (K,3,3) world→camera, cen (K,3) orthographic centre or
    camera position, sf (K,) px/Å scale or focal px, cx, cy (principal point, perspective), width, height,
    dmode (K,) residual mode, delta (K,) tolerance in the view's compare unit, pt_off (K+1,) point offsets.
    Per point (M): uv (M,2) px, labels (M,), depth (M,) Å, radius (M,) drawn disc radius in the view's 2D
    unit (occlusion). lattice (3,3) rows, has_lattice, tiling (3,) cell repetitions drawn, delta3d (Å) merge
    tolerance. seed_first: seed from views (0, 1) only. greedy: the study's single-tolerance semantics
    (midpoint, no refit, first-come merge). occlusion: a point may miss one view when covered by a nearer
    disc. window ≥ 1: near-miss window (rejected candidates with max residual/δ ≤ window are reported).
    collapse: merge coincident 2D points of a view into one site (deterministic mode). prune: accept repeats
    of known tuples without verifying them (``_seeding.seed_candidates``; the same results either way).

    Returns (points (k,3), labels (k,), support (k,K) point indices local to each view or −1, residual_A
    (k,), ratio (k,) max residual/δ, occluded (k,), near_points (q,3), near_labels (q,), near_ratio (q,),
    counts (N_COUNTS,)).
    """
    counts = np.zeros(N_COUNTS, dtype=np.int64)
    inv = np.zeros((3, 3))
    if has_lattice:
        inv, _ = lattice_inverse(lattice)
    w, origins, dirs = _rays(kind, rot, cen, sf, cx, cy, width, height, pt_off, uv)
    uniq, lrank = label_ranks(labels)
    sites, s_off, g_h, g_ox, g_oy, g_nx, g_ny, g_start, g_soff, g_sites = site_grids(
        kind, sf, dmode, delta, pt_off, w, lrank, uniq.shape[0], depth, window, collapse)
    counts[C_SITES] = sites.shape[0]
    (c_x, c_lab, c_sup, c_res, c_rat, c_occ, nc, nacc, n_x, n_lab, n_sup, n_rat, nn) = seed_candidates(
        kind, rot, cen, sf, cx, cy, dmode, delta, pt_off, w, origins, dirs, lrank, labels, depth, radius, sites,
        s_off, g_h, g_ox, g_oy, g_nx, g_ny, g_start, g_soff, g_sites, seed_first, greedy, occlusion, window, prune,
        counts)
    counts[C_ACCEPTED] = nacc
    near_x, near_lab, near_rat = near_misses(n_x[:nn], n_lab[:nn], n_sup[:nn], n_rat[:nn], has_lattice, lattice,
                                             inv)
    counts[C_NEAR] = near_x.shape[0]
    px, plab, psup, pres, prat, pocc = merge_candidates(
        c_x[:nc], c_lab[:nc], c_sup[:nc], c_res[:nc], c_rat[:nc], c_occ[:nc], greedy, delta3d, has_lattice,
        lattice, inv, tiling, kind, rot, cen, sf, cx, cy, dmode, delta, w, origins, dirs, pt_off, counts)
    counts[C_POINTS] = px.shape[0]
    counts[C_OCCLUDED] = np.sum(pocc)
    return px, plab, psup, pres, prat, pocc, near_x, near_lab, near_rat, counts


# --------------------------------------------------------------------------------------- batch entry point
@njit(cache=True)
def reconstruct_many(s_view_off, s_lattice, s_has_lattice, s_tiling, s_delta3d, v_kind, v_rot, v_cen, v_sf, v_cx,
                     v_cy, v_width, v_height, v_dmode, v_delta, v_pt_off, p_uv, p_labels, p_depth, p_radius,
                     seed_first, greedy, occlusion, window, collapse, prune):
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
            seed_first, greedy, occlusion, window, collapse, prune)
        k = px.shape[0]
        a = out_off[s]
        if a + k > P.shape[0]:
            P = _grow2(P, a + k)
            SU = _grow2(SU, a + k)
            L = _grow1(L, a + k)
            RE = _grow1(RE, a + k)
            RA = _grow1(RA, a + k)
            OC = _grow1(OC, a + k)
        # element copies, not slice assignments: each of those makes numba compile its shape-mismatch message
        # (string formatting, ~7 s of CPU in every process that compiles this kernel)
        nvs = v1 - v0
        for i in range(k):
            for j in range(3):
                P[a + i, j] = px[i, j]
            for j in range(kmax):
                SU[a + i, j] = psup[i, j] if j < nvs else -1
            L[a + i] = plab[i]
            RE[a + i] = pres[i]
            RA[a + i] = prat[i]
            OC[a + i] = pocc[i]
        out_off[s + 1] = a + k
        q = nx.shape[0]
        b = near_off[s]
        if b + q > NP.shape[0]:
            NP = _grow2(NP, b + q)
            NL = _grow1(NL, b + q)
            NR = _grow1(NR, b + q)
        for i in range(q):
            for j in range(3):
                NP[b + i, j] = nx[i, j]
            NL[b + i] = nlab[i]
            NR[b + i] = nrat[i]
        near_off[s + 1] = b + q
        for j in range(N_COUNTS):
            counts[s, j] = cnt[j]
    n = out_off[ns]
    q = near_off[ns]
    return (out_off, P[:n].copy(), L[:n].copy(), SU[:n].copy(), RE[:n].copy(), RA[:n].copy(), OC[:n].copy(),
            near_off, NP[:q].copy(), NL[:q].copy(), NR[:q].copy(), counts)
