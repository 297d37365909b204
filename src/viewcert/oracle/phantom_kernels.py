"""numba kernels of the phantom analysis (``viewcert.oracle.phantoms``): nearest same-label distances and
the smallest same-label separation, brute force over the 27 neighbouring cells.

Replaces a ``scipy.spatial.cKDTree`` built per label over 27 images of the targets (the tree build dominated
for the small cells of the study: ~24 ms per structure, five times the oracle itself). The arithmetic is the
tree's: an image is ``shift + wrapped target`` (Cartesian Å), the distance ``sqrt(dx² + dy² + dz²)`` of
``image − query`` summed in x, y, z order, so the distances are the same numbers; ties between equally near
targets keep the lowest (image, target) order, where the tree's order is unspecified — only the distances
are used by the analysis. Inputs are wrapped by the caller (``phantoms._wrap``). The plain twin is
``tests/support/naive.py`` (``phantom_*``); ``tests/oracle/test_phantom_kernels.py`` compares them with hypothesis.
Explicit signatures: compiled once at import from the on-disk cache (``cache=True``), no type inference
per call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["min_same_label_distance_nb", "nearest_same_label_nb"]


@njit("Tuple((float64[:], int64[:]))(float64[:, ::1], int64[::1], float64[:, ::1], int64[::1], float64[:, ::1])",
      cache=True, nogil=True)
def nearest_same_label_nb(q, qlab, t, tlab, shifts):
    """For each query row of ``q`` (Å), the distance to the nearest ``shift + t[j]`` with ``tlab[j] ==
    qlab[i]`` over the rows of ``shifts`` (Å; one zero row for a molecule), and that j; inf / −1 when none."""
    m, n, ns = q.shape[0], t.shape[0], shifts.shape[0]
    dist = np.full(m, np.inf)
    idx = np.full(m, -1, dtype=np.int64)
    for i in range(m):
        best = np.inf
        bj = -1
        for k in range(ns):
            for j in range(n):
                if tlab[j] != qlab[i]:
                    continue
                dx = (shifts[k, 0] + t[j, 0]) - q[i, 0]
                dy = (shifts[k, 1] + t[j, 1]) - q[i, 1]
                dz = (shifts[k, 2] + t[j, 2]) - q[i, 2]
                d2 = dx * dx + dy * dy + dz * dz
                if d2 < best:
                    best = d2
                    bj = j
        if bj >= 0:
            dist[i] = np.sqrt(best)
            idx[i] = bj
    return dist, idx


@njit("float64(float64[:, ::1], int64[::1], float64[:, ::1], int64)", cache=True, nogil=True)
def min_same_label_distance_nb(p, lab, shifts, home):
    """Smallest ``|shift + p[j] − p[i]|`` over same-label pairs, an atom against its own images included
    (the pair i == j with the zero shift at row ``home`` excluded); inf when no pair exists. Å."""
    n, ns = p.shape[0], shifts.shape[0]
    best = np.inf
    for i in range(n):
        for k in range(ns):
            for j in range(n):
                if lab[j] != lab[i] or (j == i and k == home):
                    continue
                dx = (shifts[k, 0] + p[j, 0]) - p[i, 0]
                dy = (shifts[k, 1] + p[j, 1]) - p[i, 1]
                dz = (shifts[k, 2] + p[j, 2]) - p[i, 2]
                d2 = dx * dx + dy * dy + dz * dz
                if d2 < best:
                    best = d2
    return np.sqrt(best)
