"""viewcert.symmetry.reuse against the full path (a fresh spglib call every time).

Shortcut 1 (rendered cell's label from the standardisation's dataset) is compared field by field with a
fresh ``analyse_cell`` on the conventional cell for one e3 structure of each space group e3 holds (all 1,820 under
`make bench`, marker ``bench``); on one structure of each of the 230 space groups (pyxtal, the recipes of
tests/support/pyxtal_recipes.py) that comparison is in tests/symmetry/test_reuse_switch.py, which generates them once. Both shortcuts
end to end (the reuse switch ``label_shortcuts`` on and off, every certificate record byte for byte, on the 230
space groups and e3) are tests/symmetry/test_reuse_switch.py. ``same_cell`` (the guard of shortcut 2) is checked on
hand-built cells.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.shortcut_checks import _full_and_short
from viewcert.structures import Structure
from viewcert.symmetry import reuse
from viewcert.symmetry.standardize import conventional_standard_cell, standardize_with_dataset

LAT = np.diag([4.0, 5.0, 6.0])


# ----------------------------------------------------------------------------- guard and identity, hand cases

def test_standardize_with_dataset_returns_the_same_cell_as_conventional_standard_cell():
    s = Structure(np.array([[0, 0, 0], [2.0, 2.0, 2.0]]), np.array([11, 17]), np.eye(3) * 4.0)
    conv, std = standardize_with_dataset(s)
    ref = conventional_standard_cell(s)
    assert np.array_equal(conv.lattice, ref.lattice) and np.array_equal(conv.positions, ref.positions)
    # CsCl-type (two species at the cube corner and centre): Pm-3m, 221, 48 operations, 2 atoms
    assert (std["number"], std["engine"], std["symprec"], std["angle_tolerance"]) == (221, "spglib", 0.01, 5.0)


def test_fcc_conventional_cell_counts_its_centring_operations():
    """Cu given as its 1-atom primitive cell: the conventional cell has 4 atoms and 48 · 4 = 192 operations
    (hand-worked: Fm-3m, point group m-3m of order 48, four lattice points per F cell)."""
    a = 3.6
    prim = np.array([[0, a / 2, a / 2], [a / 2, 0, a / 2], [a / 2, a / 2, 0]])
    s = Structure(np.zeros((1, 3)), np.array([29]), prim)
    conv, std, full, short = _full_and_short(s)
    assert conv.n_atoms == 4 and std["n_rotations"] == 48
    assert short.spglib.n_operations == 192 == full.spglib.n_operations
    assert short.spglib == full.spglib and short.spglib.space_group == 225
    assert short.moyo == full.moyo


@pytest.mark.parametrize("tau, angle", [(0.02, 5.0), (0.01, 3.0)])
def test_guard_refuses_other_tolerances(tau, angle):
    s = Structure(np.array([[0, 0, 0], [2.0, 2.0, 2.0]]), np.array([11, 17]), np.eye(3) * 4.0)
    _, std = standardize_with_dataset(s, symprec=0.01, angle_tolerance=5.0)
    assert reuse.applies(std, symprec=0.01, angle_tolerance=5.0)
    assert not reuse.applies(std, symprec=tau, angle_tolerance=angle)
    assert not reuse.applies({**std, "engine": "moyopy"}, symprec=0.01, angle_tolerance=5.0)
    assert not reuse.applies(None, symprec=0.01, angle_tolerance=5.0)


def test_same_cell_matches_one_to_one_within_tolerance():
    f = np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.25, 0.0, 0.5]])
    z = np.array([8, 8, 14])
    perm = [2, 0, 1]
    assert reuse.same_cell(LAT, f, z, f[perm], z[perm])
    wrapped = f.copy()
    wrapped[0] = [1.0 - 1e-12, 1.0, 1e-13]  # the same atom across the cell faces: 4e-12 Å away
    assert reuse.same_cell(LAT, f, z, wrapped, z)
    moved = f.copy()
    moved[1, 0] += 2e-9 / 4.0  # 2e-9 Å along a (|a| = 4 Å): beyond 1e-9 Å
    assert not reuse.same_cell(LAT, f, z, moved, z)
    moved[1, 0] = 0.5 + 0.5e-9 / 4.0  # 0.5e-9 Å: within
    assert reuse.same_cell(LAT, f, z, moved, z)
    assert not reuse.same_cell(LAT, f, z, f, np.array([8, 14, 8]))  # labels swapped
    assert not reuse.same_cell(LAT, f, z, f[:2], z[:2])  # an atom missing
    dup = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.25, 0.0, 0.5]])
    assert not reuse.same_cell(LAT, f, z, dup, z)  # two on one, none on the other: not one to one
    assert not reuse.same_cell(LAT, f[:0], z[:0], f[:0], z[:0])  # empty is never "the same cell"


# ----------------------------------------------------------------------------- against the full path

def _shortcut_1_differences(cifs: dict[str, str]) -> list:
    from viewcert.io.cif import read_cif_text

    bad = []
    for mid, cif in cifs.items():
        _, _, full, short = _full_and_short(read_cif_text(cif, source=mid))
        if full.spglib != short.spglib:
            bad.append((mid, full.spglib, short.spglib))
    return bad


@pytest.mark.shared_data
def test_shortcut_1_equals_fresh_spglib_on_one_e3_structure_per_space_group(e3_one_per_space_group):
    """The in-suite cover of the whole-set check below: every space group e3 holds, once."""
    assert len(e3_one_per_space_group) > 100  # e3 spans well over a hundred groups
    bad = _shortcut_1_differences(e3_one_per_space_group)
    assert not bad, bad[:5]


@pytest.mark.shared_data
@pytest.mark.bench
def test_shortcut_1_equals_fresh_spglib_on_all_1820_e3_structures(e3_cifs):
    bad = _shortcut_1_differences(e3_cifs)
    assert len(e3_cifs) == 1820 and not bad, bad[:5]


def test_with_provenance_is_the_validated_structure_under_a_new_provenance():
    from viewcert.structures import Provenance

    s = Structure(np.array([[0, 0, 0], [2.0, 2.0, 2.0]]), np.array([11, 17]), np.eye(3) * 4.0, site_labels=("Na1", "Cl1"))
    p = Provenance(source="x.cif", identifier="NaCl-test")
    t = s.with_provenance(p)
    assert t.provenance == p and s.provenance != p
    assert t.positions is s.positions and t.numbers is s.numbers and t.lattice is s.lattice
    assert t.site_labels == ("Na1", "Cl1") and not t.positions.flags.writeable
    assert t.to_dict() == {**s.to_dict(), "provenance": p.to_dict()}
