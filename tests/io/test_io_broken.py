"""Every file in tests/data/broken/ must raise InputError naming the file and the offending field."""

from __future__ import annotations

from pathlib import Path

import pytest

from viewcert.errors import InputError
from viewcert.io.read import read_structure

BROKEN = Path(__file__).parents[1] / "data" / "broken"

CASES = [
    # (file, substring of the message, field)
    ("cif_truncated.cif", "Wrong number of values in loop", "syntax"),
    ("cif_missing_cell_length.cif", "missing cell parameter", "_cell_length_b"),
    ("cif_unknown_element.cif", "unknown element symbol 'Xx'", "_atom_site_type_symbol"),
    ("cif_partial_occupancy.cif", "site 'Fe0' has partial occupancy 0.5", "_atom_site_occupancy"),
    ("cif_occupancy_over_one.cif", "occupancy 1.5 > 1", "_atom_site_occupancy"),
    ("cif_nan_coordinate.cif", "site 'Cl1': value 'nan' is not finite", "_atom_site_fract_z"),
    ("cif_bad_number.cif", "value '0.5x' is not a number", "_atom_site_fract_y"),
    ("cif_zero_volume.cif", "zero-volume", "_cell_angle_alpha/_cell_angle_beta/_cell_angle_gamma"),
    ("cif_negative_length.cif", "positive", "_cell_length_a"),
    ("cif_same_site.cif", "occupy the same position", "_atom_site_fract_x"),
    ("cif_close_atoms.cif", "0.2000 Å apart", "positions"),
    ("cif_no_atoms.cif", "no atoms", "_atom_site_fract_x"),
    ("cif_bad_symop.cif", "cannot parse symmetry operation 'x, y, q'", "_symmetry_equiv_pos_as_xyz"),
    ("POSCAR_wrong_count", "atom counts sum to 3 but only 2 coordinate lines", "atom counts"),
    ("poscar_bad_lattice.vasp", "lattice vector must be three numbers", "lattice"),
    ("xyz_bad_count.xyz", "must be the atom count", "count"),
    ("xyz_too_few_atoms.xyz", "says 4 atoms but the file has 3", "count"),
    ("xyz_non_numeric.xyz", "coordinate 'abc' is not a number", "coordinates"),
    ("xyz_unknown_element.xyz", "unknown element symbol 'Qq'", "species"),
    ("pdb_no_atoms.pdb", "no atoms", "ATOM/HETATM"),
    ("sdf_malformed.sdf", "Atom line too short", "molblock"),
    ("sdf_2d_depiction.sdf", "2D coordinates", "conformer"),
    ("structure.unknownext", "unknown structure file extension '.unknownext'", "extension"),
]


def test_every_broken_file_has_a_case():
    on_disk = {p.name for p in BROKEN.iterdir() if p.is_file()}
    assert on_disk == {c[0] for c in CASES}
    assert len(on_disk) >= 15


@pytest.mark.parametrize(("name", "message", "field"), CASES, ids=[c[0] for c in CASES])
def test_broken_input_names_file_and_field(name: str, message: str, field: str):
    path = BROKEN / name
    with pytest.raises(InputError) as info:
        read_structure(path)
    err = info.value
    assert err.field == field
    assert err.source is not None and Path(err.source).name == name
    text = str(err)
    assert message in text
    assert name in text and f"field {field}" in text


def test_policies_turn_refusals_into_structures():
    """The refusals above that have a documented policy read once the caller picks it."""
    s = read_structure(BROKEN / "cif_partial_occupancy.cif", occupancy_policy="majority")
    assert s.symbols == ("Fe", "O")  # pymatgen order: electronegativity ascending
    s = read_structure(BROKEN / "cif_partial_occupancy.cif", occupancy_policy="ignore")
    assert s.n_atoms == 2
    # alternate locations are read by a stated rule now, no longer refused (tests/trust/test_trust_altloc.py)
    altloc = Path(__file__).parents[1] / "data" / "altloc"
    s = read_structure(altloc / "pdb_altloc.pdb", altloc_policy="majority")
    assert s.n_atoms == 2 and s.positions[0].tolist() == [0.0, 0.0, 0.0]
    s = read_structure(altloc / "mmcif_altloc.cif", altloc_policy="first")
    assert s.n_atoms == 2
    s = read_structure(BROKEN / "sdf_2d_depiction.sdf", allow_2d=True)
    assert s.n_atoms == 3 and not s.is_periodic
