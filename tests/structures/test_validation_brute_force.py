"""The validation of periodic cells of 49 to ``BRUTE_FORCE_MAX_ATOMS`` atoms decides by the brute-force kernel
(``Structure._clearly_separated``) and asks the tree (``Structure.closest_pair``, scipy's cKDTree over the 27
images) only near the 0.5 Å limit: every verdict and message is the tree's (issue 59: the tree's import,
0.25-0.9 s, was paid in every worker process that met one cell above 48 atoms)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viewcert.errors import InputError
from viewcert.structures import BRUTE_FORCE_MAX_ATOMS, MIN_INTERATOMIC_DISTANCE, Structure


def _tree_verdict(pos, num, lat):
    """What the validation said before the kernel pre-check: ``closest_pair`` (the tree above 48 atoms) on the
    same arrays, the message built as ``Structure`` builds it (None: valid)."""
    s = object.__new__(Structure)  # the arrays without the validation under test
    object.__setattr__(s, "positions", np.asarray(pos, dtype=np.float64))
    object.__setattr__(s, "numbers", np.asarray(num, dtype=np.int64))
    object.__setattr__(s, "lattice", np.asarray(lat, dtype=np.float64))
    i, j, d = s.closest_pair()
    if d < MIN_INTERATOMIC_DISTANCE:
        return f"atoms {i} and {j} are {d:.4f} Å apart"
    return None


def _verdict(pos, num, lat):
    try:
        Structure(pos, num, lat)
    except InputError as exc:
        return exc.message.split(" (< ")[0]
    return None


@st.composite
def crowded_cells(draw):
    """A cell of 49..BRUTE_FORCE_MAX_ATOMS atoms on a jittered grid, with one pair set at a distance drawn around
    0.5 Å (within 1e-15 Å of it, or farther), so both verdicts and the boundary are reached."""
    n = draw(st.integers(49, min(BRUTE_FORCE_MAX_ATOMS, 130)))
    side = int(np.ceil(n ** (1 / 3)))
    a = side * draw(st.floats(1.05, 1.6))
    skew = draw(st.floats(-0.2, 0.2))
    lat = np.array([[a, 0, 0], [a * skew, a, 0], [0, a * skew, a]])
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    grid = np.stack(np.meshgrid(*(np.arange(side),) * 3, indexing="ij"), -1).reshape(-1, 3)[:n]
    frac = (grid + 0.5 + rng.uniform(-0.05, 0.05, (n, 3))) / side
    pos = frac @ lat
    gap = draw(st.one_of(st.floats(0.5 - 1e-15, 0.5 + 1e-15), st.floats(0.3, 0.7)))
    direction = rng.normal(size=3)
    pos[1] = pos[0] + gap * direction / np.linalg.norm(direction)
    return pos, rng.integers(1, 90, n), lat


@settings(max_examples=60, deadline=None)
@given(crowded_cells())
def test_verdict_and_message_are_the_trees(cell):
    pos, num, lat = cell
    assert _verdict(pos, num, lat) == _tree_verdict(pos, num, lat)


def test_a_pair_just_under_the_limit_is_refused_with_the_trees_numbers():
    # a hand-made cubic cell of 64 atoms 2 Å apart, one pair 0.4999 Å apart: atoms 0 and 1
    g = np.stack(np.meshgrid(*(np.arange(4),) * 3, indexing="ij"), -1).reshape(-1, 3) * 2.0 + 0.5
    g[1] = g[0] + [0.4999, 0, 0]
    with pytest.raises(InputError, match=r"atoms 0 and 1 are 0\.4999 Å apart"):
        Structure(g.copy(), np.full(64, 6), np.eye(3) * 8.0)
    g[1] = g[0] + [0.5001, 0, 0]
    assert Structure(g, np.full(64, 6), np.eye(3) * 8.0).n_atoms == 64


def test_a_cell_of_80_atoms_does_not_import_scipy_spatial():
    # fails on main at 042deea: Structure's validation built a cKDTree for every cell above 48 atoms
    code = ("import sys, numpy as np\n"
            "from viewcert.structures import Structure\n"
            "g = np.stack(np.meshgrid(np.arange(5), np.arange(4), np.arange(4), indexing='ij'), -1).reshape(-1, 3)\n"
            "s = Structure(g * 2.0 + 0.5, np.full(80, 8), np.diag([10.0, 8.0, 8.0]))\n"
            "print(s.n_atoms, 'scipy.spatial' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["80", "False"]
