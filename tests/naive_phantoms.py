"""Plain twins of viewcert.oracle.phantom_kernels, written from the definitions (no numba, no trees).

Minimum-image distance between a query q and a target t (Cartesian Å) over the given image shifts:
min over shifts s of |(s + t) − q|; with shifts = {0} for a molecule.
"""

from __future__ import annotations

import math


def nearest_same_label(q, qlab, t, tlab, shifts):
    """[(distance, index)] per query: nearest same-label target image; (inf, -1) when the label is absent."""
    out = []
    for i in range(len(q)):
        best, bj = math.inf, -1
        for k in range(len(shifts)):
            for j in range(len(t)):
                if tlab[j] != qlab[i]:
                    continue
                d = [(shifts[k][c] + t[j][c]) - q[i][c] for c in range(3)]
                d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
                if d2 < best:
                    best, bj = d2, j
        out.append((math.sqrt(best) if bj >= 0 else math.inf, bj))
    return out


def min_same_label_distance(p, lab, shifts, home):
    """Smallest same-label image distance, excluding an atom against itself at shift index ``home``."""
    best = math.inf
    for i in range(len(p)):
        for k in range(len(shifts)):
            for j in range(len(p)):
                if lab[j] != lab[i] or (i == j and k == home):
                    continue
                d = [(shifts[k][c] + p[j][c]) - p[i][c] for c in range(3)]
                best = min(best, d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    return math.sqrt(best)
