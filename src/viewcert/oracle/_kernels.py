"""numba kernels of the oracle: contiguous float64/int64 arrays in, arrays out. No Python objects, stable
sorts (mergesort), no fastmath. The per-seed hot loop of ``reconstruct_one`` is written out on scalars:
in numba, every call that passes arrays (even an inlined one) costs an atomic reference-count pair per array,
which dominated the run time; its grid scan and least-squares solve duplicate ``grid_nearest`` and
``triangulate_into`` (tested against the same twins through the whole oracle). The public wrapper is :mod:`viewcert.oracle.triangulate`; every kernel has a
slow twin in ``tests/support/naive.py``.

Geometry. Every observed 2D point is a ray (origin o, unit direction d) in world Å. Orthographic view:
2D coordinate w = in-plane camera Å (x right, y up), o = centre + w0·R[0] + w1·R[1], d = −R[2].
Perspective view: w = (u, v) px, o = camera position, d = the pinhole ray. The least-squares point of a set
of rays solves (Σ (I − d dᵀ)) x = Σ (I − d dᵀ) o; for orthographic views this is the closed form
x̂ = (K·I − Σ d dᵀ)⁻¹ Σ Rᵀ y (the midpoint of closest approach for two rays).

Residual of a 3D point x against an observed point p of view k ("dmode" of the view):
0 orthographic: |w(x) − w_p| in Å (the exact distance from x to the ray of p);
1 perspective, compared in px: |uv(x) − uv_p| px;
2 perspective, compared in Å at the point's depth: |uv(x) − uv_p| · depth(x) / f.


Layout (one module per stage; this module re-exports them as the oracle's kernel namespace):
``_codes`` constants and the counts layout; ``_geometry`` solves, rays, projection, minimum image;
``_grids`` sorting, label ranks, site collapse, 2D CSR grids per view, 3D cell tables and components;
``_tuples`` the seeding stage's table of distinct support tuples and its isolated-site test;
``_seeding`` candidate generation and verification (known-tuple pruning); ``_merge`` dedupe, greedy and deterministic merges;
``_batch`` ``reconstruct_one`` (the stages in order) and ``reconstruct_many``.
"""

from __future__ import annotations

from viewcert.oracle._batch import merge_candidates, reconstruct_many, reconstruct_one
from viewcert.oracle._codes import (
    ACCEPT,
    C_ACCEPTED,
    C_DEGENERATE_PAIRS,
    C_NEAR,
    C_OCCLUDED,
    C_PAIRS,
    C_POINTS,
    C_SEEDS,
    C_SITES,
    C_TRANSLATE_REJECTED,
    C_UNIQUE,
    DEGENERATE,
    MAX_ITER,
    MAX_SLACK,
    N_COUNTS,
    NEAR,
    REJECT,
    SKIP,
    SORT_QUANTUM,
    SQRT2,
)
from viewcert.oracle._geometry import (
    lattice_inverse,
    line_gap,
    line_gap_idx,
    min_image,
    min_image_norm,
    project_k,
    project_point,
    radius_2d,
    solve3,
    solve3_into,
    to_angstrom,
    to_compare,
    triangulate_into,
    triangulate_rays,
    view_coords,
    view_rays,
    wrap_point,
)
from viewcert.oracle._grids import (
    build_grid,
    collapse_sites,
    components_within,
    grid_nearest,
    label_ranks,
    lexsort_rows,
    row_keys,
    site_grids,
)
from viewcert.oracle._merge import (
    _box_ok,
    canonical_order,
    merge_clusters,
    merge_greedy,
    near_misses,
    unique_tuples,
)
from viewcert.oracle._seeding import seed_candidates
from viewcert.oracle._tuples import site_isolated, tuple_find, tuple_key, tuple_rehash, tuple_table

__all__ = [
    "ACCEPT", "C_ACCEPTED", "C_DEGENERATE_PAIRS", "C_NEAR", "C_OCCLUDED", "C_PAIRS", "C_POINTS", "C_SEEDS",
    "C_SITES", "C_TRANSLATE_REJECTED", "C_UNIQUE", "DEGENERATE", "MAX_ITER", "MAX_SLACK", "NEAR", "N_COUNTS",
    "REJECT", "SKIP", "SORT_QUANTUM", "SQRT2", "_box_ok", "build_grid", "canonical_order", "collapse_sites",
    "components_within", "grid_nearest", "label_ranks", "lattice_inverse", "lexsort_rows", "line_gap",
    "line_gap_idx", "merge_candidates", "merge_clusters", "merge_greedy", "min_image", "min_image_norm",
    "near_misses", "project_k", "project_point", "radius_2d", "reconstruct_many", "reconstruct_one", "row_keys",
    "seed_candidates", "site_grids", "site_isolated", "solve3", "solve3_into", "to_angstrom", "to_compare",
    "triangulate_into", "triangulate_rays", "tuple_find", "tuple_key", "tuple_rehash", "tuple_table",
    "unique_tuples", "view_coords", "view_rays", "wrap_point",
]
