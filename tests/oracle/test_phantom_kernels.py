"""viewcert.oracle.phantom_kernels against its plain twin (tests/support/naive.py) and against the cKDTree
path of viewcert.oracle.phantoms it replaces for small inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support import naive
from viewcert.oracle import phantoms
from viewcert.oracle.phantom_kernels import min_same_label_distance_nb, nearest_same_label_nb
from viewcert.structures import tiling_translations

coord = st.floats(-6.0, 6.0, allow_nan=False, allow_infinity=False)
point = st.tuples(coord, coord, coord)
label = st.integers(1, 3)


def _shifts(lat):
    return np.ascontiguousarray((tiling_translations((3, 3, 3)) - 1.0) @ lat)


@st.composite
def lattices(draw):
    a, b, c = (draw(st.floats(2.5, 7.0)) for _ in range(3))
    sxy, sxz, syz = (draw(st.floats(-0.4, 0.4)) for _ in range(3))
    return np.array([[a, 0.0, 0.0], [sxy * a, b, 0.0], [sxz * a, syz * b, c]])


@given(st.lists(st.tuples(point, label), max_size=12), st.lists(st.tuples(point, label), max_size=12),
       st.booleans(), lattices())
def test_nearest_same_label_equals_naive_twin(qs, ts, periodic, lat):
    q = np.array([p for p, _ in qs], dtype=np.float64).reshape(-1, 3)
    ql = np.array([z for _, z in qs], dtype=np.int64)
    t = np.array([p for p, _ in ts], dtype=np.float64).reshape(-1, 3)
    tl = np.array([z for _, z in ts], dtype=np.int64)
    sh = _shifts(lat) if periodic else np.zeros((1, 3))
    dist, idx = nearest_same_label_nb(q, ql, t, tl, sh)
    ref = naive.phantom_nearest_same_label(q.tolist(), ql.tolist(), t.tolist(), tl.tolist(), sh.tolist())
    assert dist.tolist() == [d for d, _ in ref]  # the same arithmetic: equal to the last bit
    assert idx.tolist() == [j for _, j in ref]


@given(st.lists(st.tuples(point, label), min_size=1, max_size=14), st.booleans(), lattices())
def test_min_same_label_distance_equals_naive_twin(ps, periodic, lat):
    p = np.array([x for x, _ in ps], dtype=np.float64).reshape(-1, 3)
    lab = np.array([z for _, z in ps], dtype=np.int64)
    sh, home = (_shifts(lat), 13) if periodic else (np.zeros((1, 3)), 0)
    assert min_same_label_distance_nb(p, lab, sh, home) == naive.phantom_min_same_label_distance(p.tolist(), lab.tolist(),
                                                                                        sh.tolist(), home)


def test_hand_worked_cases():
    lat = np.diag([3.0, 4.0, 5.0])
    # one O at the origin: its nearest own image is one a-vector away (3 Å)
    assert min_same_label_distance_nb(np.zeros((1, 3)), np.array([8]), _shifts(lat), 13) == 3.0
    assert math.isinf(min_same_label_distance_nb(np.zeros((1, 3)), np.array([8]), np.zeros((1, 3)), 0))
    # a query at x = 2.9 Å finds the atom at 0 through the +a image: 0.1 Å (to rounding of 3.0 - 2.9)
    d, j = nearest_same_label_nb(np.array([[2.9, 0.0, 0.0]]), np.array([8]), np.zeros((1, 3)), np.array([8]),
                                 _shifts(lat))
    assert j.tolist() == [0] and d[0] == (3.0 - 2.9)
    d, j = nearest_same_label_nb(np.array([[0.0, 0.0, 0.0]]), np.array([6]), np.zeros((1, 3)), np.array([8]),
                                 _shifts(lat))
    assert math.isinf(d[0]) and j.tolist() == [-1]  # no carbon among the targets


@pytest.mark.parametrize("periodic", [True, False])
@given(st.lists(st.tuples(point, label), min_size=1, max_size=10), st.lists(st.tuples(point, label), min_size=1,
       max_size=10), lattices())
def test_phantoms_kernel_path_equals_tree_path(periodic, qs, ts, lat):
    """The numba path and the cKDTree path of phantoms.nearest_same_label / min_same_label_distance give the
    same distances (the tree path is forced by a zero work limit)."""
    q = np.array([p for p, _ in qs]).reshape(-1, 3)
    ql = np.array([z for _, z in qs])
    t = np.array([p for p, _ in ts]).reshape(-1, 3)
    tl = np.array([z for _, z in ts])
    L = lat if periodic else None
    fast = phantoms.nearest_same_label(q, ql, t, tl, L)[0]
    fast_min = phantoms.min_same_label_distance(t, tl, L)
    old = phantoms.KERNEL_MAX_WORK
    try:
        phantoms.KERNEL_MAX_WORK = -1
        tree = phantoms.nearest_same_label(q, ql, t, tl, L)[0]
        tree_min = phantoms.min_same_label_distance(t, tl, L)
    finally:
        phantoms.KERNEL_MAX_WORK = old
    # the same distances to rounding: the kernel's compiled arithmetic may fuse multiply-adds where numpy's
    # does not (seen on an AMD EPYC: 3.5937499999999996 vs 3.59375), so equal to 1e-12 relative, inf to inf
    np.testing.assert_allclose(fast, tree, rtol=1e-12, atol=0)
    np.testing.assert_allclose(fast_min, tree_min, rtol=1e-12, atol=0)
