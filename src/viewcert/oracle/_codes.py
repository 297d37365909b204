"""Constants shared by the oracle's numba kernels: tolerances of the deterministic merge and the seed
search, the outcome codes of one seed candidate, and the layout of the per-structure counts vector."""

from __future__ import annotations

import numpy as np

SQRT2 = np.sqrt(2.0)
SORT_QUANTUM = 1e-7  # Å: output order key of the deterministic merge
MAX_SLACK = 1.0e3
MAX_ITER = 4

# outcome codes of one seed candidate
SKIP = 0
ACCEPT = 1
NEAR = 2
REJECT = 3
DEGENERATE = 4

# layout of the counts vector returned per structure
C_PAIRS = 0  # view pairs used to seed
C_DEGENERATE_PAIRS = 1  # view pairs skipped (parallel directions)
C_SEEDS = 2  # seed pairs of 2D points tested (inside the epipolar band)
C_ACCEPTED = 3  # accepted candidates before merging
C_UNIQUE = 4  # distinct support tuples among them
C_POINTS = 5  # output points
C_TRANSLATE_REJECTED = 6  # clusters rejected by translate consistency (tiled observations)
C_NEAR = 7  # near-miss candidates (rejected, max residual/δ ≤ window)
C_OCCLUDED = 8  # output points supported in K−1 of K views (occlusion)
C_SITES = 9  # distinct 2D sites after collapsing coincident points
N_COUNTS = 10
