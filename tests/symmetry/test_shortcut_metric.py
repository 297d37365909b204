"""viewcert.symmetry.reuse.holohedral_metric and orthogonal_metric: where the doubt guard's lattice-only
spglib call can be skipped, the call itself must give the metric's system (cubic or hexagonal; orthorhombic or
tetragonal), and ``doubtful`` must answer as it does with the call (the one-point spglib dataset on the
lattice, written out here from the definition)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viewcert.symmetry import _spglib, reuse
from viewcert.symmetry.labels import SymmetryCheck, SymmetryLabel


def _lattice_only_system(lattice, tau, angle) -> str:
    """The definition the guard skips: spglib on one point of the lattice, its lattice system."""
    ds = _spglib.symmetry_dataset(lattice, np.zeros((1, 3)), np.ones(1, dtype=np.intc), symprec=tau,
                                  angle_tolerance=angle)
    return reuse.lattice_system(int(ds.number), str(ds.international))


def _rotation(q) -> np.ndarray:
    """A proper rotation from four numbers (a quaternion, normalised)."""
    w, x, y, z = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _cubic(a):
    return np.eye(3) * a


def _hexagonal(a, c):
    return np.array([[a / 2, -a * np.sqrt(3) / 2, 0], [a / 2, a * np.sqrt(3) / 2, 0], [0, 0, c]])


quat = st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(lambda q: np.linalg.norm(q) > 0.1)
angles = st.sampled_from([-1.0, 1.0, 5.0, 10.0])


@settings(max_examples=60, deadline=None)
@given(a=st.floats(1.5, 30.0), frac=st.floats(1e-4, 0.999), angle=angles, q=quat)
def test_cubic_metric_is_cubic_for_spglib(a, frac, angle, q):
    lat = _cubic(a) @ _rotation(q).T  # any orientation: the metric is what counts
    tau = frac * reuse.METRIC_MAX_TAU * a
    assert reuse.holohedral_metric(lat, "cubic", tau)
    assert _lattice_only_system(lat, tau, angle) == "cubic"


@settings(max_examples=120, deadline=None)
@given(a=st.floats(1.5, 30.0), c_over_a=st.floats(0.2, 8.0), frac=st.floats(1e-4, 0.999), angle=angles, q=quat)
def test_hexagonal_metric_is_hexagonal_for_spglib(a, c_over_a, frac, angle, q):
    lat = _hexagonal(a, a * c_over_a) @ _rotation(q).T
    tau = frac * reuse.METRIC_MAX_TAU * min(a, a * c_over_a)
    assert reuse.holohedral_metric(lat, "hexagonal", tau)
    assert _lattice_only_system(lat, tau, angle) == "hexagonal"


def test_metric_guard_refuses_what_it_cannot_decide():
    tet = np.diag([4.0, 4.0, 4.0 + 0.005])  # within τ = 0.01 Å of cubic: spglib decides (cubic), not the guard
    assert not reuse.holohedral_metric(tet, "tetragonal", 0.01)
    assert not reuse.holohedral_metric(tet, "cubic", 0.01)  # not an exact cubic metric
    assert _lattice_only_system(tet, 0.01, 5.0) == "cubic"
    assert not reuse.holohedral_metric(_cubic(4.0), "cubic", 0.1)  # τ above 2 % of the 4 Å edge
    assert reuse.holohedral_metric(_cubic(4.0), "cubic", 0.08)  # exactly 2 %
    sixty = np.array([[4.0, 0, 0], [2.0, 2 * np.sqrt(3), 0], [0, 0, 6.0]])  # γ = 60°: hexagonal, other basis
    assert not reuse.holohedral_metric(sixty, "hexagonal", 0.01)
    assert not reuse.holohedral_metric(_hexagonal(4.0, 6.0), "cubic", 0.01)
    bent = _hexagonal(4.0, 6.0)
    bent[2, 0] = 1e-6  # 1e-6 Å off the ideal metric: beyond METRIC_RTOL, so the call runs
    assert not reuse.holohedral_metric(bent, "hexagonal", 0.01)


near = st.sampled_from([None, -3.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 3.0])


@settings(max_examples=300, deadline=None)
@given(a=st.floats(1.5, 30.0), b_over_a=st.floats(0.3, 3.0), c_over_a=st.floats(0.2, 5.0), tetragonal=st.booleans(),
       coincide=near, tau=st.sampled_from([0.001, 0.01, 0.05, 0.2]), angle=angles, q=quat)
def test_orthogonal_metric_is_that_system_for_spglib(a, b_over_a, c_over_a, tetragonal, coincide, tau, angle, q):
    """Where orthogonal_metric decides, the call agrees; ``coincide`` puts c at |a + b| + k·τ (lengths spglib
    may confuse), or b at a + k·τ for an orthorhombic cell."""
    b = a if tetragonal else a * b_over_a
    c = a * c_over_a
    if coincide is not None:
        if tetragonal or c_over_a < 1:
            c = float(np.hypot(a, b)) + coincide * tau
        else:
            b = a + coincide * tau
    if min(b, c) <= 0.5:
        return
    system = "tetragonal" if tetragonal else "orthorhombic"
    lat = np.diag([a, b, c]) @ _rotation(q).T
    if reuse.orthogonal_metric(lat, system, tau, angle):
        assert _lattice_only_system(lat, tau, angle) == system


def test_orthogonal_metric_hand_cases():
    assert reuse.orthogonal_metric(np.diag([3.0, 4.0, 6.0]), "orthorhombic", 0.01, 5.0)
    assert _lattice_only_system(np.diag([3.0, 4.0, 6.0]), 0.01, 5.0) == "orthorhombic"
    assert reuse.orthogonal_metric(np.diag([4.0, 4.0, 5.0]), "tetragonal", 0.01, -1.0)
    # |a + b| = 5 = c: a candidate image of c that is not ±c; spglib decides (angles rule it out: orthorhombic)
    assert not reuse.orthogonal_metric(np.diag([3.0, 4.0, 5.0]), "orthorhombic", 0.01, 5.0)
    assert not reuse.orthogonal_metric(np.diag([4.0, 4.0, 4.005]), "tetragonal", 0.01, 5.0)  # ~cubic
    assert not reuse.orthogonal_metric(np.diag([4.0, 4.0, 5.0]), "orthorhombic", 0.01, 5.0)  # a = b
    assert not reuse.orthogonal_metric(np.diag([4.0, 4.001, 5.0]), "tetragonal", 0.01, 5.0)  # a ≠ b
    assert not reuse.orthogonal_metric(np.diag([3.0, 4.0, 6.0]), "orthorhombic", 0.01, 1e-9)  # angle too small
    assert not reuse.orthogonal_metric(np.diag([3.0, 4.0, 6.0]), "monoclinic", 0.01, 5.0)
    sheared = np.diag([3.0, 4.0, 6.0])
    sheared[2, 0] = 1e-6  # |cos| above METRIC_RTOL: the call runs
    assert not reuse.orthogonal_metric(sheared, "orthorhombic", 0.01, 5.0)


def _check(number: int, symbol: str, tau: float = 0.01) -> SymmetryCheck:
    lab = SymmetryLabel(number, symbol, "", "", 0, 0)
    return SymmetryCheck(tau, 5.0, lab, lab)


@pytest.mark.parametrize("number, symbol, lat", [
    (225, "Fm-3m", _cubic(4.05)), (221, "Pm-3m", _cubic(3.0)), (194, "P6_3/mmc", _hexagonal(3.2, 5.2)),
    (166, "R-3m", _hexagonal(3.0, 20.0)), (191, "P6/mmm", _hexagonal(2.5, 2.5)),
    (123, "P4/mmm", np.diag([4.0, 4.0, 4.005])),  # metric within τ of cubic: doubtful, spglib says cubic
    (123, "P4/mmm", np.diag([4.0, 4.0, 5.0])), (47, "Pmmm", np.diag([3.0, 4.0, 5.0])),
    (47, "Pmmm", np.diag([3.0, 4.0, 6.0])), (47, "Pmmm", np.diag([3.0, 3.005, 6.0])),  # the last: tetragonal
])
def test_doubtful_answers_as_with_the_lattice_call(number, symbol, lat):
    chk = _check(number, symbol)
    own = reuse.lattice_system(number, symbol)
    by_definition = _lattice_only_system(lat, 0.01, 5.0) != ("hexagonal" if own == "rhombohedral" else own)
    assert reuse.doubtful(chk, None, lat) == by_definition
    # hand-worked: only the near-cubic and the near-tetragonal cells
    assert by_definition == ((symbol == "P4/mmm" and lat[2, 2] < 4.01) or (symbol == "Pmmm" and lat[1, 1] < 3.01))
