"""viewcert.structures._kernels against its plain twin (tests/support/naive.py) and against the vectorised numpy pass
of ``Structure.closest_pair`` it replaces (kept below as the reference), to the last bit."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tests.support import naive
from viewcert.structures import Structure, tiling_translations
from viewcert.structures._kernels import closest_image_pair_nb

SHELL27 = tiling_translations((3, 3, 3)) - 1.0


def numpy_closest_image_pair(cart, shifts):
    """The numpy pass closest_pair ran before the kernel (n ≤ 48 periodic cells), verbatim."""
    n = len(cart)
    d2 = np.zeros((n, n, len(shifts)))
    dc = np.empty_like(d2)
    for c in range(3):
        np.add((cart[None, :, c] - cart[:, None, c])[:, :, None], shifts[None, None, :, c], out=dc)
        np.multiply(dc, dc, out=dc)
        d2 += dc
    d2[np.arange(n), np.arange(n), 13] = np.inf
    flat = int(np.argmin(d2))
    i, j, _ = np.unravel_index(flat, d2.shape)
    return int(i), int(j), float(np.sqrt(d2.ravel()[flat]))


coord = st.floats(-8.0, 8.0, allow_nan=False, allow_infinity=False)
point = st.tuples(coord, coord, coord)


@st.composite
def lattices(draw):
    a, b, c = (draw(st.floats(0.3, 7.0)) for _ in range(3))
    sxy, sxz, syz = (draw(st.floats(-0.6, 0.6)) for _ in range(3))
    return np.array([[a, 0.0, 0.0], [sxy * a, b, 0.0], [sxz * a, syz * b, c]])


@st.composite
def grid_points(draw):
    """Points on a coarse grid, so that equal distances (ties) are common."""
    return [tuple(float(draw(st.integers(-2, 2))) for _ in range(3)) for _ in range(draw(st.integers(1, 6)))]


def _same(a, b) -> bool:
    """Equal (i, j) and distance to the last bit (NaN equal to NaN)."""
    return a[:2] == b[:2] and (a[2] == b[2] or (math.isnan(a[2]) and math.isnan(b[2])))


@given(st.one_of(st.lists(point, min_size=1, max_size=10), grid_points()), lattices())
def test_kernel_equals_naive_twin_and_numpy_pass(points, lat):
    cart = np.array(points, dtype=np.float64).reshape(-1, 3)
    shifts = SHELL27 @ lat
    got = closest_image_pair_nb(cart, shifts, 13)
    assert _same(got, naive.closest_image_pair(cart.tolist(), shifts.tolist(), 13))
    assert _same(got, numpy_closest_image_pair(cart, shifts))


@given(st.lists(point, min_size=2, max_size=6), st.integers(0, 5), st.integers(0, 2), lattices())
def test_first_nan_wins_as_in_numpy(points, k, c, lat):
    cart = np.array(points, dtype=np.float64)
    cart[k % len(cart), c] = np.nan
    shifts = SHELL27 @ lat
    got = closest_image_pair_nb(cart, shifts, 13)
    assert _same(got, naive.closest_image_pair(cart.tolist(), shifts.tolist(), 13))
    assert _same(got, numpy_closest_image_pair(cart, shifts))


@given(st.lists(point, min_size=1, max_size=8), lattices())
def test_structure_closest_pair_equals_numpy_pass(points, lat):
    """Through Structure: the wrapped Cartesian coordinates and shifts closest_pair prepares, then either pass."""
    s = Structure.__new__(Structure)  # unvalidated: closest_pair on any cell, overlapping atoms included
    object.__setattr__(s, "positions", np.array(points, dtype=np.float64))
    object.__setattr__(s, "lattice", lat)
    frac = np.linalg.solve(lat.T, s.positions.T).T
    cart = (frac - np.floor(frac)) @ lat
    assert s.closest_pair() == numpy_closest_image_pair(cart, SHELL27 @ lat)


def test_hand_worked_cases():
    shifts = SHELL27 @ np.diag([3.0, 4.0, 5.0])
    # one atom: its nearest own image is one a-vector away; the first such image in shift order is -a (s = 4)
    assert closest_image_pair_nb(np.zeros((1, 3)), shifts, 13) == (0, 0, 3.0)
    # two atoms 1 Å apart along x: i = 0, j = 1 in the home cell comes before (1, 0)
    cart = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    assert closest_image_pair_nb(cart, shifts, 13) == (0, 1, 1.0)
    # 2.5 Å apart in the home cell, 0.5 Å through the -a image: (2.5 − 0) + (−3) = −0.5
    cart = np.array([[0.0, 0.0, 0.0], [2.5, 0.0, 0.0]])
    assert closest_image_pair_nb(cart, shifts, 13) == (0, 1, 0.5)
    # 3-4-5: (1.5, 2, 0) is √(1.5² + 2²) = 2.5 Å away, closer than any atom's own image (3 Å)
    cart = np.array([[0.0, 0.0, 0.0], [1.5, 2.0, 0.0]])
    assert closest_image_pair_nb(cart, shifts, 13) == (0, 1, 2.5)
    # every candidate +inf (infinite shifts): np.argmin's first entry, atom 0 against itself at shift 0
    inf_shifts = np.full((27, 3), np.inf)
    assert closest_image_pair_nb(np.zeros((2, 3)), inf_shifts, 13) == (0, 0, math.inf)
    assert numpy_closest_image_pair(np.zeros((2, 3)), inf_shifts) == (0, 0, math.inf)
    assert naive.closest_image_pair(np.zeros((2, 3)).tolist(), inf_shifts.tolist(), 13) == (0, 0, math.inf)
