"""numba kernel of ``Structure.closest_pair`` for small periodic cells: brute force over atom pairs and the 27
neighbouring cells.

Replaces one vectorised numpy pass that built the (n, n, 27) array of squared distances and took its
``argmin`` (that pass, ~40 µs per structure, was most of the validation a Structure does at construction).
The arithmetic is numpy's: ``d = (cart[j] − cart[i]) + shift`` per component, ``d2 = dx² + dy² + dz²`` summed
in x, y, z order; the atom against itself in the home cell counts as +inf; the first minimum in C order of
(i, j, shift) wins, a NaN as soon as it appears (``np.argmin``'s rules). So (i, j, distance) are the same
numbers. The plain twin is ``tests/support/naive.py`` (``closest_image_pair``); ``tests/structures/test_structure_kernels.py``
compares the kernel with it and with the numpy pass. Explicit signature: compiled once at import from the
on-disk cache (``cache=True``), no type inference per call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["closest_image_pair_nb"]


@njit("Tuple((int64, int64, float64))(float64[:, :], float64[:, :], int64)", cache=True, nogil=True)
def closest_image_pair_nb(cart, shifts, home):
    """(i, j, distance Å) minimising ``|(cart[j] − cart[i]) + shifts[s]|`` over i, j and the rows s of
    ``shifts`` (Cartesian Å), the pair i == j at row ``home`` (the zero shift) counting as +inf."""
    n, ns = cart.shape[0], shifts.shape[0]
    best, bi, bj = np.inf, -1, -1
    for i in range(n):
        for j in range(n):
            bx = cart[j, 0] - cart[i, 0]
            by = cart[j, 1] - cart[i, 1]
            bz = cart[j, 2] - cart[i, 2]
            for s in range(ns):
                if i == j and s == home:
                    continue
                dx = bx + shifts[s, 0]
                dy = by + shifts[s, 1]
                dz = bz + shifts[s, 2]
                d2 = dx * dx + dy * dy + dz * dz
                if not d2 >= best:  # smaller, or NaN
                    if d2 != d2:  # np.argmin returns the first NaN
                        return i, j, d2
                    best, bi, bj = d2, i, j
    if bi < 0:  # every candidate is +inf: np.argmin returns the first one, (0, 0, shift 0)
        return 0, 0, np.inf
    return bi, bj, np.sqrt(best)
