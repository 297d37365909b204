"""Structure: validation errors, periodic operations, tiling/wrapping properties."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.strategies import crystals, molecules
from viewcert.errors import InputError
from viewcert.structures import Provenance, Structure, tiling_translations

NACL = Structure(
    positions=np.array([[0, 0, 0], [2.82, 2.82, 2.82]]),
    numbers=[11, 17],
    lattice=np.diag([5.64, 5.64, 5.64]),
    provenance=Provenance("hand", "NaCl-2", ""),
)


@pytest.mark.parametrize(
    "kwargs, message, field",
    [
        (dict(positions=np.zeros((0, 3)), numbers=[]), "no atoms", "positions"),
        (dict(positions=[[0, 0, np.nan]], numbers=[6]), "non-finite", "positions"),
        (dict(positions=[[0, 0, np.inf]], numbers=[6]), "non-finite", "positions"),
        (dict(positions=[[0, 0, 0]], numbers=[0]), "outside 1..118", "numbers"),
        (dict(positions=[[0, 0, 0]], numbers=[119]), "outside 1..118", "numbers"),
        (dict(positions=[[0, 0, 0], [0.3, 0, 0]], numbers=[6, 6]), "0.3000 Å apart", "positions"),
        (dict(positions=[[0, 0, 0]], numbers=[6], lattice=np.diag([1.0, 1.0, 0.0])), "zero volume", "lattice"),
        (dict(positions=[[0, 0, 0]], numbers=[6], lattice=np.diag([3.0, 3.0, -3.0])), "left-handed", "lattice"),
        (dict(positions=[[0, 0, 0]], numbers=[6, 6]), "must have shape (1,)", "numbers"),
        (dict(positions=[0, 0, 0], numbers=[6]), "shape (n, 3)", "positions"),
        (dict(positions=[[0, 0, 0]], numbers=[6], lattice=np.eye(2)), "3x3", "lattice"),
        (dict(positions=[[0, 0, 0]], numbers=[6], site_labels=("a", "b")), "2 site labels", "site_labels"),
        # a non-finite atom is named before an atom too far out, whatever their order
        (dict(positions=[[2e6, 0, 0], [0, np.nan, 0]], numbers=[6, 6]), "atom 1 has a non-finite", "positions"),
        (dict(positions=[[0, 0, 0], [0, -2e6, 0]], numbers=[6, 6]), "atom 1 lies 2e+06 Å", "positions"),
        (dict(positions=[[0, 0, 0]], numbers=[6], lattice=np.diag([2e6, 1.0, np.inf])), "non-finite entries",
         "lattice"),
        (dict(positions=[[0, 0, 0]], numbers=[6], lattice=np.diag([2e6, 1.0, 1.0])), "component 2e+06 Å exceeds",
         "lattice"),
    ],
)
def test_bad_structures_raise_input_error_naming_field(kwargs, message, field):
    with pytest.raises(InputError) as err:
        Structure(provenance=Provenance("bad.cif", "bad", ""), **kwargs)
    assert message in str(err.value)
    assert err.value.field == field
    assert "bad.cif" in str(err.value)


def test_periodic_image_too_close_is_refused():
    # one atom in a 0.4 Å cell sits 0.4 Å from its own image
    with pytest.raises(InputError, match="Å apart"):
        Structure([[0, 0, 0]], [6], np.diag([0.4, 5, 5]))


def test_arrays_are_read_only_and_structure_is_frozen():
    with pytest.raises(ValueError):
        NACL.positions[0, 0] = 1.0
    with pytest.raises(AttributeError):
        NACL.numbers = np.array([1, 1])  # type: ignore[misc]


def test_frac_coords_computed_once_read_only_and_not_pickled():
    f = NACL.frac_coords
    assert f is NACL.frac_coords and not f.flags.writeable
    with pytest.raises(ValueError):
        f[0, 0] = 0.1
    assert NACL.with_provenance(Provenance("other")).frac_coords is f
    back = pickle.loads(pickle.dumps(NACL))
    assert "frac_coords" not in back.__dict__ and np.array_equal(back.frac_coords, f)


def test_fractional_coordinates_hand_worked():
    lat = np.array([[2.0, 0, 0], [1.0, 2.0, 0], [0, 0, 4.0]])
    s = Structure([[1.5, 1.0, 2.0]], [6], lat)
    # Cartesian = frac @ lattice: f = (0.5, 0.5, 0.5) → 0.5·(2,0,0) + 0.5·(1,2,0) + 0.5·(0,0,4) = (1.5, 1, 2)
    np.testing.assert_allclose(s.frac_coords, [[0.5, 0.5, 0.5]], atol=1e-15)


def test_wrap_hand_worked():
    s = Structure([[-1.0, 6.5, 12.0]], [6], np.diag([5.0, 5.0, 5.0]))
    np.testing.assert_allclose(s.wrapped().positions, [[4.0, 1.5, 2.0]], atol=1e-12)


def test_supercell_order_and_lattice():
    sc = NACL.supercell((2, 1, 3))
    assert sc.n_atoms == 12
    np.testing.assert_allclose(sc.lattice, np.diag([11.28, 5.64, 16.92]))
    t = tiling_translations((2, 1, 3))
    # atom t*n + i is atom i shifted by translation t (C order, a slowest)
    np.testing.assert_allclose(sc.positions[2 * 5 + 1], NACL.positions[1] + t[5] @ NACL.lattice)
    assert t[5].tolist() == [1.0, 0.0, 2.0]


def test_molecule_has_no_periodic_operations():
    mol = Structure([[0, 0, 0], [1.1, 0, 0]], [6, 8])
    assert not mol.is_periodic
    with pytest.raises(InputError, match="periodic"):
        mol.frac_coords  # noqa: B018
    with pytest.raises(InputError, match="periodic"):
        mol.supercell((2, 2, 2))


def test_closest_pair_minimum_image():
    s = Structure([[0.2, 0, 0], [4.6, 0, 0]], [6, 6], np.diag([5.0, 5.0, 5.0]))
    i, j, d = s.closest_pair()
    assert {i, j} == {0, 1} and d == pytest.approx(0.6)
    assert s.min_same_label_distance() == pytest.approx(0.6)


def test_min_same_label_distance_ignores_other_elements():
    s = Structure([[0, 0, 0], [1.0, 0, 0], [3.0, 0, 0]], [6, 8, 6])
    assert s.min_same_label_distance() == pytest.approx(3.0)


def test_dict_round_trip():
    back = Structure.from_dict(NACL.to_dict())
    assert back.equals(NACL) and back.provenance == NACL.provenance


@settings(max_examples=40)
@given(crystals(), st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)))
def test_tiling_then_wrapping_returns_the_cell(cell, reps):
    """Every atom of the tiled cell, wrapped back into the original cell, lands on an original atom of the
    same element, and each original atom is hit exactly prod(reps) times."""
    tiled = cell.supercell(reps)
    f_t = np.linalg.solve(cell.lattice.T, tiled.positions.T).T
    f_t -= np.floor(f_t)
    f_c = cell.wrapped().frac_coords
    hits = np.zeros(cell.n_atoms, dtype=int)
    for f, z in zip(f_t, tiled.numbers, strict=True):
        d = f_c - f
        d -= np.round(d)
        k = int(np.argmin(np.linalg.norm(d @ cell.lattice, axis=1)))
        assert np.linalg.norm(d[k] @ cell.lattice) < 1e-9
        assert cell.numbers[k] == z
        hits[k] += 1
    assert (hits == np.prod(reps)).all()
    assert tiled.volume == pytest.approx(cell.volume * np.prod(reps))


@settings(max_examples=30)
@given(molecules(min_atoms=2))
def test_molecule_closest_pair_matches_brute_force(mol):
    p = mol.positions
    d = np.linalg.norm(p[:, None] - p[None], axis=-1) + np.eye(len(p)) * 1e9
    assert mol.closest_pair()[2] == pytest.approx(d.min())
