"""Merge kernels of the oracle: accepted candidates → output points. ``unique_tuples`` (one candidate per
support tuple), the study's first-come ``merge_greedy``, the deterministic ``merge_clusters`` (components
within tol, translate consistency for tiled observations, refit on the nearest member support), and the
last stages of one structure: ``near_misses``, ``merge_candidates``, ``canonical_order``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from viewcert.oracle._codes import MAX_ITER, SORT_QUANTUM
from viewcert.oracle._geometry import (
    _accumulate,
    _view_residual,
    min_image,
    min_image_norm,
    solve3_into,
    wrap_point,
)
from viewcert.oracle._grids import (
    _cell_table,
    _neighbour_cells,
    components_within,
    label_ranks,
    lexsort_rows,
    row_keys,
)


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
def _cluster_shifts(members, x, has_lattice, lattice, inv):
    """Per member of a cluster, the lattice translation (q, 3) Å removed to bring it next to the first member
    (minimum image) and its integer vector (q, 3); zeros without a lattice."""
    q = members.shape[0]
    ref = members[0]
    shifts = np.zeros((q, 3))
    nvec = np.zeros((q, 3), dtype=np.int64)
    dv = np.zeros(3)
    for a in range(q):
        mi = members[a]
        if has_lattice and a > 0:
            for j in range(3):
                dv[j] = x[mi, j] - x[ref, j]
            v, nn = min_image(dv, lattice, inv)
            for j in range(3):
                nvec[a, j] = np.int64(nn[j])
                shifts[a, j] = dv[j] - v[j]  # = n·L, the translation removed
    return shifts, nvec


@njit(cache=True)
def _translates_ok(nvec, tiling):
    """Translate consistency: the distinct integer translations of a cluster contain a full tiling box."""
    q = nvec.shape[0]
    cols = nvec.copy()
    o = lexsort_rows(cols)
    keep = np.ones(q, dtype=np.bool_)
    for s in range(1, q):
        if cols[o[s], 0] == cols[o[s - 1], 0] and cols[o[s], 1] == cols[o[s - 1], 1] and \
                cols[o[s], 2] == cols[o[s - 1], 2]:
            keep[o[s]] = False
    return _box_ok(cols[keep], tiling)


@njit(cache=True)
def _nearest_members(xm, members, shifts, sup, kind, rot, cen, sf, cx, cy, dmode, w, pt_off, gidx):
    """In every view, the member whose supporting point is nearest to the estimate xm (ties: the lower
    member); writes gidx (−1: no member seen in that view). Returns True when gidx changed."""
    nv = sup.shape[1]
    q = members.shape[0]
    xs = np.zeros(3)
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
    return changed


@njit(cache=True)
def _refit_cluster(x, members, shifts, sup, kind, rot, cen, sf, cx, cy, dmode, w, origins, dirs, pt_off):
    """Start from the average of the members (moved next to the first one); then, in every view, choose the
    member support nearest to the estimate and refit on those, to a fixed point (≤ MAX_ITER rounds).
    Returns (xm (3,), gidx (K,) chosen member per view or −1)."""
    nv = sup.shape[1]
    q = members.shape[0]
    xm = np.zeros(3)
    for a in range(q):
        for j in range(3):
            xm[j] += x[members[a], j] - shifts[a, j]
    for j in range(3):
        xm[j] /= q
    gidx = np.full(nv, -2, dtype=np.int64)
    ma = np.zeros((3, 3))
    mb = np.zeros(3)
    for it in range(MAX_ITER):
        changed = _nearest_members(xm, members, shifts, sup, kind, rot, cen, sf, cx, cy, dmode, w, pt_off, gidx)
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
    return xm, gidx


@njit(cache=True)
def _cluster_support(xm, gidx, members, shifts, sup, kind, rot, cen, sf, cx, cy, dmode, delta, w, pt_off, out_sup):
    """Support of the refitted point (the chosen member's point per view, as is; −1 where none) into out_sup,
    and (max residual/δ, max residual Å, occluded in some view)."""
    nv = sup.shape[1]
    xs = np.zeros(3)
    mr = 0.0
    mres = 0.0
    anyocc = False
    for k in range(nv):
        a = gidx[k]
        if a < 0:
            out_sup[k] = -1
            anyocc = True
            continue
        p = sup[members[a], k] + pt_off[k]
        for j in range(3):
            xs[j] = xm[j] + shifts[a, j]
        rc, ra = _view_residual(k, p, xs, kind, rot, cen, sf, cx, cy, dmode, w)
        mr = max(mr, rc / delta[k])
        mres = max(mres, ra)
        # the support of view k belongs to the member's translate; report it as is
        out_sup[k] = sup[members[a], k]
    return mr, mres, anyocc


@njit(cache=True)
def merge_clusters(x, lab, sup, res, rat, occ, tol, has_lattice, lattice, inv, tiling, ntile, kind, rot, cen,
                   sf, cx, cy, dmode, delta, w, origins, dirs, pt_off):
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
    while t < n:
        u = t
        while u < n and root[order[u]] == root[order[t]]:
            u += 1
        members = order[t:u]  # ascending indices (stable sort); members[0] is the root
        ref = members[0]
        t = u
        shifts, nvec = _cluster_shifts(members, x, has_lattice, lattice, inv)
        if ntile > 1 and has_lattice and not _translates_ok(nvec, tiling):
            nrej += 1
            continue
        olab[nout] = lab[ref]
        if members.shape[0] == 1:
            ox[nout] = x[ref]
            osup[nout] = sup[ref]
            ores[nout] = res[ref]
            orat[nout] = rat[ref]
            oocc[nout] = occ[ref]
        else:
            xm, gidx = _refit_cluster(x, members, shifts, sup, kind, rot, cen, sf, cx, cy, dmode, w, origins, dirs,
                                      pt_off)
            mr, mres, anyocc = _cluster_support(xm, gidx, members, shifts, sup, kind, rot, cen, sf, cx, cy, dmode,
                                                delta, w, pt_off, osup[nout])
            ox[nout] = xm
            ores[nout] = mres
            orat[nout] = mr
            oocc[nout] = anyocc
        nout += 1
    return ox[:nout], olab[:nout], osup[:nout], ores[:nout], orat[:nout], oocc[:nout], nrej


@njit(cache=True)
def near_misses(n_x, n_lab, n_sup, n_rat, has_lattice, lattice, inv):
    """One near-miss candidate per support tuple (first occurrence), wrapped into the cell when periodic:
    (points (q, 3), labels (q,), ratio (q,))."""
    nsel = unique_tuples(n_lab, n_sup)
    near_x = n_x[nsel].copy()
    near_lab = n_lab[nsel].copy()
    near_rat = n_rat[nsel].copy()
    if has_lattice:
        for i in range(near_x.shape[0]):
            near_x[i] = wrap_point(near_x[i], lattice, inv)
    return near_x, near_lab, near_rat


@njit(cache=True)
def canonical_order(px, plab):
    """Order of the output points by label, then position rounded to SORT_QUANTUM (independent of the
    input order)."""
    cols = np.empty((px.shape[0], 4), dtype=np.int64)
    for i in range(px.shape[0]):
        cols[i, 0] = plab[i]
        for j in range(3):
            cols[i, j + 1] = np.int64(np.round(px[i, j] / SORT_QUANTUM))
    return lexsort_rows(cols)
