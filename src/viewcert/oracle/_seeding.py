"""Seeding kernels of the oracle: candidate 3D points from pairs of same-label 2D sites in two views, each
verified against every view. For a view pair, ``_pair_order`` sorts the second view's sites by (label,
epipolar coordinate); ``seed_candidates`` band-searches the partners of every site of the first view,
triangulates each seed, associates the nearest same-label site of every other view within the search
radius, refits to a fixed point and classifies the candidate (``ACCEPT`` / ``NEAR`` / ``REJECT`` / ``SKIP``);
``_occlusion_retry`` excuses one view covered by a nearer atom's disc.

Hot loop: per seed, work on scalars and element access; in numba, every call that passes arrays costs an
atomic reference-count pair per array (measured figures in ``seed_candidates``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from viewcert.oracle._codes import (
    ACCEPT,
    C_DEGENERATE_PAIRS,
    C_PAIRS,
    C_SEEDS,
    MAX_ITER,
    MAX_SLACK,
    NEAR,
    REJECT,
    SKIP,
    SQRT2,
)
from viewcert.oracle._geometry import (
    _occlusion_excused,
    _proj_s,
    _solve3_s,
    _view_residual,
    line_gap_idx,
    triangulate_into,
)
from viewcert.oracle._grids import _grow1, _grow2
from viewcert.oracle._tuples import site_isolated, tuple_find, tuple_key, tuple_rehash, tuple_table


@njit(cache=True)
def _pair_order(va, vb, kind, rot, sites, s_off, origins, lrank, nrm, e_b, l_b):
    """Order the sites of view vb for seeding from (va, vb). Both orthographic: nrm = the unit normal of the
    two view directions (the line gap of two such rays is exactly the difference of their epipolar
    coordinates n·o), sites sorted by (label rank, epipolar coordinate). Fills e_b (epipolar coordinate) and
    l_b (label rank) in that order. Returns (usable: False for parallel directions, both_ortho, border)."""
    both_ortho = kind[va] == 0 and kind[vb] == 0
    if both_ortho:
        nrm[0] = rot[va, 2, 1] * rot[vb, 2, 2] - rot[va, 2, 2] * rot[vb, 2, 1]
        nrm[1] = rot[va, 2, 2] * rot[vb, 2, 0] - rot[va, 2, 0] * rot[vb, 2, 2]
        nrm[2] = rot[va, 2, 0] * rot[vb, 2, 1] - rot[va, 2, 1] * rot[vb, 2, 0]
        nrn = np.sqrt(nrm[0] ** 2 + nrm[1] ** 2 + nrm[2] ** 2)
        if nrn < 1e-9:
            return False, both_ortho, np.zeros(0, dtype=np.int64)
        for j in range(3):
            nrm[j] /= nrn
    nb = s_off[vb + 1] - s_off[vb]
    bsites = sites[s_off[vb]:s_off[vb + 1]]
    if both_ortho:
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
    return True, both_ortho, border


@njit(cache=True)
def _occlusion_retry(fview, va, vb, gap, gthr, greedy, x, kind, rot, cen, sf, cx, cy, dmode, delta, pt_off, w,
                     depth, radius, origins, dirs, sup, xn, gidx, ma, mb):
    """The one failing view fview is excused if a nearer atom's disc covers the point there: drop it, refit
    (greedy: keep x) and accept when every other view is within δ. On acceptance x and sup (sup[fview] = −1)
    are updated; otherwise sup is left as it was. Returns (accepted, max residual/δ, max residual Å)."""
    nv = kind.shape[0]
    keep = sup[fview]
    sup[fview] = -1
    okn = True
    if greedy:
        for j in range(3):
            xn[j] = x[j]
    else:
        for k in range(nv):
            gidx[k] = sup[k] + pt_off[k] if sup[k] >= 0 else -1
        okn = triangulate_into(origins, dirs, gidx, ma, mb, xn)
    if okn and _occlusion_excused(fview, xn, kind, rot, cen, sf, cx, cy, w, depth, radius, pt_off):
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
                rc, ra = _view_residual(k, sup[k] + pt_off[k], xn, kind, rot, cen, sf, cx, cy, dmode, w)
                rk = rc / delta[k]
            if rk > 1.0:
                good = False
            mr = max(mr, rk)
            mres = max(mres, ra)
        if good:
            for j in range(3):
                x[j] = xn[j]
            return True, mr, mres
    sup[fview] = keep
    return False, 0.0, 0.0


@njit(cache=True)
def _buffers(nv):
    """Empty growable candidate buffers: (x (·,3), label, support (·,K), residual Å, ratio, occluded)."""
    return (np.empty((64, 3)), np.empty(64, dtype=np.int64), np.empty((64, nv), dtype=np.int64), np.empty(64),
            np.empty(64), np.empty(64, dtype=np.bool_))


@njit(cache=True)
def seed_candidates(kind, rot, cen, sf, cx, cy, dmode, delta, pt_off, w, origins, dirs, lrank, labels, depth, radius,
                    sites, s_off, g_h, g_ox, g_oy, g_nx, g_ny, g_start, g_soff, g_sites, seed_first, greedy,
                    occlusion, window, prune, counts):
    """Every seed of every view pair (seed_first: views (0, 1) only), verified; updates counts. Returns the
    accepted candidates (x, label, support, residual Å, ratio, occluded) with the number of rows held and the
    number of accepted seeds, and the near misses (x, label, support, ratio) with their number of rows:
    (c_x, c_lab, c_sup, c_res, c_rat, c_occ, nc, nacc, n_x, n_lab, n_sup, n_rat, nn).

    Rows held (bounded memory). Candidates are consumed as they are generated: a near miss is held only if
    its (label, support) tuple is new, and so is an accepted candidate under the deterministic merge (the
    greedy merge reads every accepted candidate in order, so there every one is held); the merge keeps the
    first occurrence of a tuple (``_merge.unique_tuples``, ``near_misses``), which is the row held. Memory is
    O(m + (distinct tuples)·K) for m observed points and K views, where it was O(accepted seeds·K), about
    n·K³/2 for n atoms seen in every view.

    Known tuples (``prune``; deterministic merge, strict visibility, orthographic views with δ in Å, K ≥ 3).
    A held tuple T with point x_T is *known* when x_T is the least-squares point of T's rays (the loop's last
    refit), its largest residual r_T ≤ δmin/2 (δmin: the smallest δ of the views), and in every view no other
    same-label site lies within 2δ of T's site. A later seed (pa, pb) of views (a, b) with T[a] = pa and
    T[b] = pb whose two-ray point x0 has |x0 − x_T| + r_T ≤ δmin/2 is then accepted as a repeat of T without
    its verification, because its verification would return exactly T's row: an orthographic projection
    moves a point by at most its 3D displacement, so in every view the projection of x0 lies within δmin/2 of
    T's site, which is then the nearest same-label site (every other is > 2δ − δ/2 away) and inside the
    search radius (≥ δ); the refit on T repeats, operation for operation, the refit that produced x_T; from
    x_T every view again associates T's site (residual ≤ δmin/2), so the loop stops there with T's point,
    residuals and ratio. The seed is counted (seeds, accepted candidates) as before; the row is not held
    again. Anything else (a seed no known tuple covers, a far seed point, a non-isolated site) is verified as
    before.

    View order of the association. A false seed ends at the first view with no same-label site in its search
    radius; the views are visited with the last such view first (move to front), which on tiled cells seen
    from many directions finds it in about one view instead of several. The outcome cannot depend on the
    order: each view's association reads only the current point, the refit sums over the views in index
    order, and a missing view (strict visibility) makes the seed a REJECT whichever view is found first.

    The hot loop, kept whole on purpose: per seed it triangulates the two rays, associates the nearest
    same-label site of every other view (grid scan), refits to a fixed point and classifies, all on scalars
    and element access. Split into per-seed functions taking arrays (seed point, association, refit,
    residuals) it ran 2.4× slower on the e3 batch (0.050 → 0.121 s CPU for 210 structures, all pairs) and
    3.2× slower on a 10,000-atom tiled cell (0.31 → 0.98 s), from reference counting of the array arguments.
    Only per-pair work (``_pair_order``) and the rare occlusion retry are separate functions.
    """
    nv = kind.shape[0]
    m = w.shape[0]
    c_x, c_lab, c_sup, c_res, c_rat, c_occ = _buffers(nv)
    n_x, n_lab, n_sup, _, n_rat, _ = _buffers(nv)
    nc = 0  # rows held (deterministic merge: distinct tuples only)
    nacc = 0  # accepted seeds
    nn = 0
    # distinct (label, support) rows of the accepted candidates (deterministic merge) and of the near misses
    c_table = tuple_table(64)
    c_keys = np.empty(64, dtype=np.int64)
    n_table = tuple_table(64)
    n_keys = np.empty(64, dtype=np.int64)
    # known tuples (see the docstring): owner[p] = the first known tuple supported by site p, or −1
    dmin = np.inf
    all_ortho = True
    for k in range(nv):
        dmin = min(dmin, delta[k])
        if kind[k] != 0 or dmode[k] != 0:
            all_ortho = False
    known_ok = prune and not greedy and not occlusion and all_ortho and nv >= 3 and MAX_ITER >= 2 and dmin > 1e-9
    half_dmin = 0.5 * dmin
    owner = np.full(m if known_ok else 0, -1, dtype=np.int64)
    vorder = np.arange(nv)
    key = np.int64(0)
    slot = np.int64(0)
    sup = np.empty(nv, dtype=np.int64)
    gidx = np.empty(nv, dtype=np.int64)
    rang = np.empty(nv)
    ma = np.zeros((3, 3))
    mb = np.zeros(3)
    x = np.zeros(3)
    xn = np.zeros(3)
    nrm = np.zeros(3)
    jbuf = np.empty(max(m, 1), dtype=np.int64)
    e_b = np.empty(max(m, 1))
    l_b = np.empty(max(m, 1), dtype=np.int64)
    for va in range(nv):
        for vb in range(va + 1, nv):
            if seed_first and not (va == 0 and vb == 1):
                continue
            usable, both_ortho, border = _pair_order(va, vb, kind, rot, sites, s_off, origins, lrank, nrm, e_b, l_b)
            if not usable:
                counts[C_DEGENERATE_PAIRS] += 1
                continue
            counts[C_PAIRS] += 1
            a0 = s_off[va]
            a1 = s_off[va + 1]
            nb = s_off[vb + 1] - s_off[vb]
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
                    known = False
                    x_is_fit = False  # x is the least-squares point of the current support
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
                        if known_ok:
                            u = owner[pa]
                            if u >= 0 and c_sup[u, vb] == pb - pt_off[vb]:
                                e0 = x0 - c_x[u, 0]
                                e1 = x1 - c_x[u, 1]
                                e2 = x2 - c_x[u, 2]
                                if np.sqrt(e0 * e0 + e1 * e1 + e2 * e2) + c_res[u] <= half_dmin:
                                    outcome = ACCEPT
                                    known = True
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
                        # Views are visited in ``vorder``: the view that rejected the last seed comes first (move
                        # to front). Exact: each view's association depends on x alone, and a missing view ends
                        # in REJECT whichever view is found missing first (see the docstring).
                        for it in range(niter):
                            changed = False
                            missing = False
                            for kk in range(nv):
                                k = vorder[kk]
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
                                    x_is_fit = False
                                sup[k] = loc
                                if loc < 0 and not occlusion:
                                    missing = True
                                    for z in range(kk, 0, -1):
                                        vorder[z] = vorder[z - 1]
                                    vorder[0] = k
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
                            x_is_fit = False
                            if nrays >= 2:
                                ok, y0, y1, y2 = _solve3_s(a00, a01, a02, a01, a11, a12, a02, a12, a22, b0, b1, b2)
                                if ok:
                                    x0 = y0
                                    x1 = y1
                                    x2 = y2
                                    x_is_fit = True
                        x[0] = x0
                        x[1] = x1
                        x[2] = x2
                        # residuals and acceptance
                        maxrat = 0.0
                        maxres = 0.0
                        nfail = 0
                        fview = np.int64(-1)  # not the literal -1: numba would compile _occlusion_retry for it too
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
                            if rk > 1.0:
                                nfail += 1
                                fview = k
                            maxrat = max(maxrat, rk)
                            maxres = max(maxres, rang[k])
                        if nfail == 0:
                            outcome = ACCEPT
                            break
                        if occlusion and nfail == 1 and nv >= 3 and fview != va and fview != vb:
                            acc, mr, mres = _occlusion_retry(fview, va, vb, gap, gthr, greedy, x, kind, rot, cen, sf,
                                                             cx, cy, dmode, delta, pt_off, w, depth, radius, origins,
                                                             dirs, sup, xn, gidx, ma, mb)
                            if acc:
                                outcome, maxrat, maxres, occ = ACCEPT, mr, mres, True
                                break
                        if allsup and maxrat <= window:
                            outcome = NEAR
                            break
                        outcome = REJECT
                    if outcome == SKIP:
                        continue
                    counts[C_SEEDS] += 1
                    if outcome == ACCEPT:
                        nacc += 1
                        if known:
                            continue  # the row of a known tuple, held already
                        if not greedy:
                            key = tuple_key(labels[pa], sup)
                            slot, r = tuple_find(c_table, c_keys, c_lab, c_sup, key, labels[pa], sup)
                            if r >= 0:
                                continue  # a repeat of a held row (unique_tuples keeps the first)
                        if nc == c_x.shape[0]:
                            c_x = _grow2(c_x, nc + 1)
                            c_sup = _grow2(c_sup, nc + 1)
                            c_lab = _grow1(c_lab, nc + 1)
                            c_res = _grow1(c_res, nc + 1)
                            c_rat = _grow1(c_rat, nc + 1)
                            c_occ = _grow1(c_occ, nc + 1)
                            c_keys = _grow1(c_keys, nc + 1)
                        for j in range(3):
                            c_x[nc, j] = x[j]
                        c_lab[nc] = labels[pa]
                        for k in range(nv):
                            c_sup[nc, k] = sup[k]
                        c_res[nc] = maxres
                        c_rat[nc] = maxrat
                        c_occ[nc] = occ
                        if not greedy:
                            c_keys[nc] = key
                            c_table[slot] = nc
                            if known_ok and x_is_fit and not occ and maxres <= half_dmin:
                                iso = True
                                for k in range(nv):
                                    p = sup[k] + pt_off[k]
                                    if not site_isolated(w, lrank, p, w[p, 0], w[p, 1], 2.0 * delta[k], g_h[k],
                                                         g_ox[k], g_oy[k], g_nx[k], g_ny[k], g_start, g_soff[k],
                                                         g_sites, s_off[k]):
                                        iso = False
                                        break
                                if iso:
                                    for k in range(nv):
                                        p = sup[k] + pt_off[k]
                                        if owner[p] < 0:
                                            owner[p] = nc
                        nc += 1
                        if not greedy and 2 * nc >= c_table.shape[0]:
                            c_table = tuple_rehash(c_keys, nc, 2 * c_table.shape[0])
                    elif outcome == NEAR:
                        key = tuple_key(labels[pa], sup)
                        slot, r = tuple_find(n_table, n_keys, n_lab, n_sup, key, labels[pa], sup)
                        if r >= 0:
                            continue  # near_misses keeps the first occurrence of a tuple
                        if nn == n_x.shape[0]:
                            n_x = _grow2(n_x, nn + 1)
                            n_sup = _grow2(n_sup, nn + 1)
                            n_lab = _grow1(n_lab, nn + 1)
                            n_rat = _grow1(n_rat, nn + 1)
                            n_keys = _grow1(n_keys, nn + 1)
                        for j in range(3):
                            n_x[nn, j] = x[j]
                        n_lab[nn] = labels[pa]
                        for k in range(nv):
                            n_sup[nn, k] = sup[k]
                        n_rat[nn] = maxrat
                        n_keys[nn] = key
                        n_table[slot] = nn
                        nn += 1
                        if 2 * nn >= n_table.shape[0]:
                            n_table = tuple_rehash(n_keys, nn, 2 * n_table.shape[0])
    return c_x, c_lab, c_sup, c_res, c_rat, c_occ, nc, nacc, n_x, n_lab, n_sup, n_rat, nn
