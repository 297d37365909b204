"""Numba kernels: labelled 2D point sets (with an optional intensity) matched without correspondence.

Two sets A and B are **consistent** within (δ px, ε) when they hold the same number of points of every
label and every point of each has a same-label point of the other within δ in the image plane whose
intensity differs by at most ε (a symmetric labelled Hausdorff test). Points are stored sorted by
(label, u) with ``start[l]:start[l+1]`` the segment of label l. Twin: ``tests/tasks/test_tasks_identify.py``.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _covered(au, av, ai, a_start, bu, bv, bi, b_start, n_labels, delta, eps):
    d2 = delta * delta
    for lab in range(n_labels):
        b0 = b_start[lab]
        b1 = b_start[lab + 1]
        for p in range(a_start[lab], a_start[lab + 1]):
            lo = b0
            hi = b1
            target = au[p] - delta
            while lo < hi:
                mid = (lo + hi) >> 1
                if bu[mid] < target:
                    lo = mid + 1
                else:
                    hi = mid
            found = False
            q = lo
            limit = au[p] + delta
            while q < b1 and bu[q] <= limit:
                dx = bu[q] - au[p]
                dy = bv[q] - av[p]
                if dx * dx + dy * dy <= d2 and abs(bi[q] - ai[p]) <= eps:
                    found = True
                    break
                q += 1
            if not found:
                return False
    return True


@njit(cache=True)
def _sort_view(u, v, inten, lab, keep, n_labels):
    """Kept points sorted by (label, u): (u, v, intensity, start (n_labels + 1,))."""
    idx = np.flatnonzero(keep)
    m = idx.size
    order = np.argsort(u[idx], kind="mergesort")
    counts = np.zeros(n_labels + 1, dtype=np.int64)
    for k in range(m):
        counts[lab[idx[k]] + 1] += 1
    start = np.cumsum(counts)
    fill = start[:-1].copy()
    su = np.empty(m)
    sv = np.empty(m)
    si = np.empty(m)
    for k in range(m):
        j = idx[order[k]]
        slot = fill[lab[j]]
        su[slot] = u[j]
        sv[slot] = v[j]
        si[slot] = inten[j]
        fill[lab[j]] += 1
    return su, sv, si, start


@njit(cache=True)
def consistent_many(uv, inten, keep, lab, truth, n_labels, delta, eps):
    """uv (K, n, 2) px, inten (K, n), keep (K, n) bool: the K candidate views of the same n atoms with
    compact labels ``lab`` (n,) in 0..n_labels-1; ``truth`` the index of the reference view. Returns (K,)
    bool: candidate k is consistent with the reference (module docstring)."""
    n_cand = uv.shape[0]
    out = np.zeros(n_cand, dtype=np.bool_)
    tu, tv, ti, ts = _sort_view(uv[truth, :, 0].copy(), uv[truth, :, 1].copy(), inten[truth], lab, keep[truth],
                                n_labels)
    for k in range(n_cand):
        cu, cv, ci, cs = _sort_view(uv[k, :, 0].copy(), uv[k, :, 1].copy(), inten[k], lab, keep[k], n_labels)
        same = True
        for lab_i in range(n_labels + 1):
            if cs[lab_i] != ts[lab_i]:
                same = False
                break
        if not same:
            continue
        if not _covered(tu, tv, ti, ts, cu, cv, ci, cs, n_labels, delta, eps):
            continue
        out[k] = _covered(cu, cv, ci, cs, tu, tv, ti, ts, n_labels, delta, eps)
    return out


def consistent_with(uv: np.ndarray, inten: np.ndarray, keep: np.ndarray, lab: np.ndarray, truth: int,
                    n_labels: int, delta: float, eps: float) -> np.ndarray:
    """Contiguous-array wrapper of :func:`consistent_many`."""
    return consistent_many(np.ascontiguousarray(uv, dtype=np.float64), np.ascontiguousarray(inten, dtype=np.float64),
                           np.ascontiguousarray(keep, dtype=np.bool_), np.ascontiguousarray(lab, dtype=np.int64),
                           int(truth), int(n_labels), float(delta), float(eps))
