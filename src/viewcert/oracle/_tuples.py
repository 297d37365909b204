"""Streaming bookkeeping of the seeding stage (numba): the distinct support tuples seen so far, and which of
them a later seed can be recognised as repeating without verifying it.

``tuple_find`` / ``tuple_insert`` / ``tuple_rehash`` keep an open-addressing hash table (linear probing, −1
empty) over rows (label, support tuple) stored in growable buffers, so that the seeding stage holds one row
per *distinct* tuple (in first-occurrence order, which is all the merge reads: ``_merge.unique_tuples`` keeps
first occurrences) instead of one per accepted seed: with V views every atom is accepted from each of the
V(V−1)/2 view pairs, which at V = 150 held gigabytes of identical rows. The key is ``_grids.row_keys``'s
hash of the row.

``site_isolated``: no other same-label site of a view lies within a radius of a given site (a scan of the
view's grid), the condition under which the nearest-site association of the seeding stage cannot choose
another site for a query point near that site (``_seeding.seed_candidates``, "known tuples").
"""

from __future__ import annotations

import numpy as np
from numba import njit

_P31 = 2147483647  # 2³¹ − 1, the modulus of both row hashes (as ``_grids.row_keys``)


@njit(cache=True)
def tuple_key(lab, sup):
    """``_grids.row_keys`` of the row (lab, sup[0], …, sup[K−1]): equal rows have equal keys."""
    h1 = 17
    h2 = 31
    v = (lab + 2) % _P31
    h1 = (h1 * 1000003 + v) % _P31
    h2 = (h2 * 999983 + v * 7 + 1) % _P31
    for c in range(sup.shape[0]):
        v = (sup[c] + 2) % _P31
        h1 = (h1 * 1000003 + v) % _P31
        h2 = (h2 * 999983 + v * 7 + 1) % _P31
    return h1 * 2147483648 + h2


@njit(cache=True)
def _slot0(key, mask):
    return (key ^ (key >> 29)) & mask


@njit(cache=True)
def tuple_find(table, keys, labs, sups, key, lab, sup):
    """(slot, row): the row of ``table`` equal to (lab, sup) and its slot, or (the empty slot where it would
    go, −1). ``keys``/``labs``/``sups`` hold the stored rows; the table's size is a power of two with at
    least one empty slot."""
    mask = table.shape[0] - 1
    s = _slot0(key, mask)
    nv = sup.shape[0]
    while True:
        r = table[s]
        if r < 0:
            return s, np.int64(-1)
        if keys[r] == key and labs[r] == lab:
            same = True
            for k in range(nv):
                if sups[r, k] != sup[k]:
                    same = False
                    break
            if same:
                return s, r
        s = (s + 1) & mask


@njit(cache=True)
def tuple_rehash(keys, n, size):
    """A table of ``size`` slots (a power of two > n) holding rows 0…n−1 by their keys."""
    table = np.full(size, -1, dtype=np.int64)
    mask = size - 1
    for r in range(n):
        s = _slot0(keys[r], mask)
        while table[s] >= 0:
            s = (s + 1) & mask
        table[s] = r
    return table


@njit(cache=True)
def tuple_table(n):
    """An empty table for about n rows (load ≤ 1/2 until it is grown)."""
    size = 64
    while size < 2 * n:
        size *= 2
    return np.full(size, -1, dtype=np.int64)


@njit(cache=True)
def site_isolated(w, lrank, p, q0, q1, rad, h, ox, oy, nx, ny, start, soff, gsites, goff):
    """True when no site other than p with p's label rank lies within distance ≤ rad of (q0, q1) in one view's
    grid (``_grids.build_grid``: cells start[soff:…], sites gsites[goff:…], cell size h, origin (ox, oy))."""
    lr = lrank[p]
    fx = (q0 - ox) / h
    fy = (q1 - oy) / h
    if not (-1.0e15 < fx < 1.0e15 and -1.0e15 < fy < 1.0e15):
        return False
    span = min(np.int64(np.ceil(rad / h)), nx + ny)
    gx = np.int64(np.floor(fx))
    gy = np.int64(np.floor(fy))
    xa = max(gx - span, 0)
    xb = min(gx + span, nx - 1)
    ya = max(gy - span, 0)
    yb = min(gy + span, ny - 1)
    r2 = rad * rad
    if xa > xb or ya > yb:
        return True
    for cxx in range(xa, xb + 1):
        base = soff + (lr * nx + cxx) * ny
        for t in range(start[base + ya], start[base + yb + 1]):
            s = gsites[goff + t]
            if s == p:
                continue
            e0 = w[s, 0] - q0
            e1 = w[s, 1] - q1
            if e0 * e0 + e1 * e1 <= r2:
                return False
    return True
