"""Readers, writers, adapters and built-ins of viewcert.io on real and constructed files."""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from viewcert.errors import InputError
from viewcert.io.ase_adapter import from_ase, to_ase
from viewcert.io.atomic import (
    json_dumps,
    write_bytes_atomic,
    write_json_atomic,
    write_parquet_atomic,
    write_png_atomic,
    write_text_atomic,
)
from viewcert.io.cell import cell_parameters, lattice_from_parameters
from viewcert.io.cif import read_cif, read_cif_text
from viewcert.io.pymatgen_adapter import from_pymatgen, to_pymatgen
from viewcert.io.read import format_of, read_structure, read_structures
from viewcert.structures import Provenance, Structure

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:spglib.*")


def _pmg_from_cif(text: str):
    from pymatgen.core import Structure as PmgStructure

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PmgStructure.from_str(text, fmt="cif")


def _assert_same_as_pymatgen(s: Structure, p, atol: float = 1e-6) -> None:
    assert s.n_atoms == len(p)
    assert s.numbers.tolist() == [site.specie.Z for site in p]
    np.testing.assert_allclose(s.lattice, p.lattice.matrix, rtol=0, atol=atol)
    np.testing.assert_allclose(s.positions, p.cart_coords, rtol=0, atol=atol)


# ----------------------------------------------------------------------------- CIF on the e3 data
@pytest.mark.shared_data
def test_all_e3_cifs_match_pymatgen(e3_cifs: dict[str, str]):
    """Every one of the 1,820 e3 CIFs: same atoms, same order, lattice and positions within 1e-6 Å of
    pymatgen's Structure.from_str(cif, fmt='cif'); site labels equal pymatgen's."""
    assert len(e3_cifs) == 1820
    t_ours = 0.0
    for mid, text in e3_cifs.items():
        t0 = time.perf_counter()
        s = read_cif_text(text, source=f"e3:{mid}", identifier=mid)
        t_ours += time.perf_counter() - t0
        p = _pmg_from_cif(text)
        _assert_same_as_pymatgen(s, p)
        assert list(s.site_labels) == [site.label for site in p]
        assert s.identifier == mid
        assert s.provenance.sha256 == hashlib.sha256(text.encode()).hexdigest()
    # a loose guard against a pathological slowdown; the benchmark measures it properly
    assert t_ours / len(e3_cifs) < 5e-3


@pytest.mark.shared_data
def test_symmetrized_e3_cifs_match_pymatgen(e3_cifs: dict[str, str]):
    """Non-P1 CIFs (every 10th e3 structure rewritten by pymatgen's CifWriter with symprec=0.01, so with
    symmetry operations and only the asymmetric unit): the symmetry expansion, deduplication and site
    order equal pymatgen's."""
    import gemmi
    from pymatgen.io.cif import CifWriter

    n_sym = 0
    for mid in list(e3_cifs)[::10]:
        text = str(CifWriter(_pmg_from_cif(e3_cifs[mid]), symprec=0.01))
        n_sym += len(gemmi.cif.read_string(text).sole_block().find_values("_symmetry_equiv_pos_as_xyz")) > 1
        p = _pmg_from_cif(text)
        s = read_cif_text(text, source=mid)
        _assert_same_as_pymatgen(s, p)
    assert n_sym > 100  # most of them really carry symmetry


# ----------------------------------------------------------------------------- CIF, constructed cases
NACL_FM3M = """data_NaCl_symbol_only
_cell_length_a 5.6402(3)
_cell_length_b 5.6402(3)
_cell_length_c 5.6402(3)
_cell_angle_alpha 90
_cell_angle_beta 90
_cell_angle_gamma 90
_symmetry_space_group_name_H-M 'F m -3 m'
loop_
_atom_site_label
_atom_site_type_symbol
_atom_site_fract_x
_atom_site_fract_y
_atom_site_fract_z
Na1 Na+ 0 0 0
Cl1 Cl- 0.5 0.5 0.5
"""


def test_lattice_from_parameters_matches_pymatgen_orientation():
    """pymatgen's convention is c along z and a in the xz plane (not gemmi's a along x)."""
    from pymatgen.core import Lattice

    rng = np.random.default_rng(7)
    for _ in range(200):
        abc = rng.uniform(2, 20, 3)
        ang = rng.uniform(60, 120, 3)
        try:
            ours = lattice_from_parameters(*abc, *ang)
        except InputError:
            continue
        ref = Lattice.from_parameters(*abc, *ang).matrix
        np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)
        assert ours[2, 0] == 0 and ours[2, 1] == 0 and ours[0, 1] == 0
        np.testing.assert_allclose(cell_parameters(ours), [*abc, *ang], rtol=1e-10)


def test_gemmi_orthogonalisation_is_a_rotation_of_pymatgens():
    """gemmi (PDB convention) puts a along x and b in the xy plane; pymatgen puts c along z. Same metric,
    different orientation: the CIF reader therefore builds the lattice itself, in pymatgen's frame."""
    import gemmi

    params = (4.1, 5.3, 6.7, 80.0, 95.0, 105.0)
    g = np.array(gemmi.UnitCell(*params).orth.mat.tolist()).T  # rows a, b, c
    p = lattice_from_parameters(*params)
    np.testing.assert_allclose(g @ g.T, p @ p.T, atol=1e-10)  # same metric tensor
    assert abs(g[0, 1]) < 1e-12 and abs(g[0, 2]) < 1e-12  # gemmi: a along x
    assert not np.allclose(g, p, atol=1e-3)
    rot = np.linalg.solve(g, p)  # p = g @ rot
    np.testing.assert_allclose(rot @ rot.T, np.eye(3), atol=1e-10)
    assert np.linalg.det(rot) == pytest.approx(1.0)


def test_space_group_symbol_without_operations():
    """No symmetry operations in the file: they come from the H-M symbol (gemmi); the uncertainty in
    5.6402(3) is dropped; charges in type symbols are ignored."""
    s = read_cif_text(NACL_FM3M)
    assert s.n_atoms == 8 and s.formula == "Cl4Na4"
    assert s.symbols == ("Na",) * 4 + ("Cl",) * 4  # Na (0.93) before Cl (3.16)
    np.testing.assert_allclose(np.diag(s.lattice), [5.6402] * 3, atol=1e-12)
    p = _pmg_from_cif(NACL_FM3M)
    ours = sorted(map(tuple, np.round(s.frac_coords, 9).tolist()))
    theirs = sorted(map(tuple, np.round(p.frac_coords, 9).tolist()))
    assert ours == theirs
    assert s.identifier == "NaCl_symbol_only"


def test_special_positions_deduplicated_and_order_file():
    text = NACL_FM3M.replace("'F m -3 m'", "'F m -3 m'\n_space_group_IT_number 225")
    s = read_cif_text(text, order="file")
    assert s.symbols == ("Na",) * 4 + ("Cl",) * 4
    assert s.site_labels == ("Na1",) * 4 + ("Cl1",) * 4
    assert s.closest_pair()[2] == pytest.approx(5.6402 / 2)


def _p1_cif(rows: str, name: str = "x", cell: str = "4 4 4 90 90 90") -> str:
    a, b, c, al, be, ga = cell.split()
    return f"""data_{name}
_cell_length_a {a}
_cell_length_b {b}
_cell_length_c {c}
_cell_angle_alpha {al}
_cell_angle_beta {be}
_cell_angle_gamma {ga}
loop_
_symmetry_equiv_pos_as_xyz
'x, y, z'
loop_
_atom_site_type_symbol
_atom_site_label
_atom_site_fract_x
_atom_site_fract_y
_atom_site_fract_z
_atom_site_occupancy
{rows}"""


def test_occupancy_policies_on_a_mixed_site():
    text = _p1_cif("Fe Fe1 0 0 0 0.6\nNi Ni1 0 0 0 0.4\nO O1 0.5 0.5 0.5 1.0\n")
    with pytest.raises(InputError) as info:
        read_cif_text(text)
    assert (
        info.value.field == "_atom_site_occupancy" and "Fe1" in str(info.value) and "Ni1" in str(info.value)
    )
    s = read_cif_text(text, occupancy_policy="majority")
    assert s.symbols == ("Fe", "O") and s.site_labels == ("Fe1", "O1")
    with pytest.raises(InputError, match="same position"):
        read_cif_text(text, occupancy_policy="ignore")
    with pytest.raises(InputError) as info:
        read_cif_text(text, occupancy_policy="best")  # type: ignore[arg-type]
    assert info.value.field == "occupancy_policy"


def test_majority_drops_zero_occupancy_and_keeps_lone_partial_rows():
    text = _p1_cif("Fe Fe1 0 0 0 0.3\nO O1 0.5 0.5 0.5 1.0\nH H1 0.25 0.25 0.25 0.0\n")
    s = read_cif_text(text, occupancy_policy="majority")
    assert s.symbols == ("Fe", "O")


def test_nan_electronegativity_order_matches_pymatgen():
    """Ar has no Pauling electronegativity in pymatgen (NaN): the replayed sort reproduces its order."""
    rows = "Ar Ar1 0 0 0 1\nNa Na1 0.5 0 0 1\nAr Ar2 0 0.5 0 1\nCl Cl1 0 0 0.5 1\nHe He1 0.5 0.5 0.5 1\n"
    text = _p1_cif(rows, cell="6 6 6 90 90 90")
    _assert_same_as_pymatgen(read_cif_text(text), _pmg_from_cif(text))


@pytest.mark.parametrize(("rows", "message", "field"), [
    ("Fe Fe1 0 2e7 0 1\nO O1 0.5 nan 0.5 1\n", "site 'O1': value 'nan' is not finite", "_atom_site_fract_y"),
    ("Fe Fe1 0 0 0 1\nO O1 0.5 1e7 0.5 1\n", "site 'O1': value '1e7' is beyond 1e6", "_atom_site_fract_y"),
    ("Fe Fe1 0 0 0 1\nO O1 0.5 0.5 0.5 inf\n", "site 'O1': value 'inf' is not finite", "_atom_site_occupancy"),
    ("Fe Fe1 0 0 0 -2e6\nO O1 0.5 0.5 0.5 1\n", "site 'Fe1': value '-2e6' is beyond 1e6", "_atom_site_occupancy"),
    ("Fe Fe1 0 0 0 1\nQq O1 0.5 0.5 0.5 1\n", "site 'O1': unknown element symbol 'Qq'", "_atom_site_type_symbol"),
])
def test_bad_site_values_name_the_first_bad_site(rows, message, field):
    """Columns in order x, y, z; within a column a non-finite value before an overflowing one."""
    with pytest.raises(InputError) as info:
        read_cif_text(_p1_cif(rows))
    assert message in str(info.value) and info.value.field == field


def test_one_third_rounding_like_pymatgen():
    text = _p1_cif("Al Al1 0.333333 0.666667 0 1\nNi Ni1 0 0 0.5 1\n", cell="4 4 5 90 90 120")
    s = read_cif_text(text)
    assert s.frac_coords[0, 0] == 1 / 3 and s.frac_coords[0, 1] == 2 / 3  # Al first (X 1.61 < 1.91)
    _assert_same_as_pymatgen(s, _pmg_from_cif(text), atol=1e-12)


def test_read_cif_file_provenance_and_blocks(tmp_path: Path):
    two = _p1_cif("Na Na1 0 0 0 1\n", name="first") + "\n" + _p1_cif("Cl Cl1 0 0 0 1\n", name="second")
    f = tmp_path / "two.cif"
    f.write_text(two)
    with pytest.raises(InputError) as info:  # issue 11: a second structure is never dropped silently
        read_cif(f)
    assert info.value.field == "data_" and "2 data blocks with atoms (first, second)" in str(info.value)
    s = read_cif(f, block="first")
    assert s.symbols == ("Na",) and s.identifier == "first"
    assert s.provenance.source == str(f)
    assert s.provenance.sha256 == hashlib.sha256(f.read_bytes()).hexdigest()
    assert read_cif(f, block="second").symbols == ("Cl",)
    assert read_cif(f, block="first", identifier="mp-1").identifier == "mp-1"
    with pytest.raises(InputError) as info:
        read_cif(f, block="third")
    assert info.value.field == "block"
    with pytest.raises(InputError) as info:
        read_cif(tmp_path / "missing.cif")
    assert info.value.field == "path"


def test_pymatgen_fallback_for_what_gemmi_rejects():
    """gemmi refuses a duplicated tag; pymatgen tolerates it, so the fallback reads it."""
    text = _p1_cif("Na Na1 0 0 0 1\nCl Cl1 0.5 0.5 0.5 1\n").replace(
        "_cell_length_a 4\n", "_cell_length_a 4\n_cell_length_a 4\n"
    )
    s = read_cif_text(text)
    _assert_same_as_pymatgen(s, _pmg_from_cif(text))


def test_cif_column_without_loop_single_atom():
    text = """data_po
_cell_length_a 3.35
_cell_length_b 3.35
_cell_length_c 3.35
_cell_angle_alpha 90
_cell_angle_beta 90
_cell_angle_gamma 90
_atom_site_label Po1
_atom_site_fract_x 0
_atom_site_fract_y 0
_atom_site_fract_z 0
"""
    s = read_cif_text(text)
    assert s.symbols == ("Po",) and s.is_periodic


# ----------------------------------------------------------------------------- adapters
def _sample_crystal() -> Structure:
    lat = lattice_from_parameters(4.1, 4.3, 5.2, 88.0, 95.0, 101.0)
    frac = np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.25, 0.1, 0.7]])
    return Structure(frac @ lat, np.array([26, 8, 1]), lat, site_labels=("Fe1", "O1", "H1"))


def _sample_molecule() -> Structure:
    pos = np.array([[0.0, 0.0, 0.0], [0.957, 0.0, 0.0], [-0.240, 0.927, 0.0]])
    return Structure(pos, np.array([8, 1, 1]), None, site_labels=("O", "H1", "H2"))


@pytest.mark.parametrize("make", [_sample_crystal, _sample_molecule])
def test_pymatgen_round_trip(make):
    s = make()
    p = to_pymatgen(s)
    assert type(p).__name__ == ("Structure" if s.is_periodic else "Molecule")
    back = from_pymatgen(p)
    assert back.equals(s, atol=1e-12) and back.site_labels == s.site_labels
    # and from the pymatgen side: pymatgen -> viewcert -> pymatgen
    again = to_pymatgen(back)
    np.testing.assert_allclose(again.cart_coords, p.cart_coords, atol=1e-12)


def test_pymatgen_disordered_sites_follow_the_policy():
    from pymatgen.core import Lattice
    from pymatgen.core import Structure as PmgStructure

    p = PmgStructure(Lattice.cubic(4.0), [{"Fe": 0.7, "Ni": 0.3}, "O"], [[0, 0, 0], [0.5, 0.5, 0.5]])
    with pytest.raises(InputError, match="disordered"):
        from_pymatgen(p)
    assert from_pymatgen(p, occupancy_policy="majority").symbols == ("Fe", "O")
    with pytest.raises(InputError, match="several species"):
        from_pymatgen(p, occupancy_policy="ignore")
    with pytest.raises(InputError) as info:
        from_pymatgen("not a structure")
    assert info.value.field == "obj"


@pytest.mark.parametrize("make", [_sample_crystal, _sample_molecule])
def test_ase_round_trip(make):
    s = make()
    a = to_ase(s)
    assert bool(a.pbc.all()) == s.is_periodic
    back = from_ase(a)
    assert back.equals(s, atol=0.0) and back.site_labels == s.site_labels


def test_ase_pbc_handling():
    from ase import Atoms
    from ase.build import bulk

    si = bulk("Si", "diamond", a=5.43)
    s = from_ase(si)
    assert s.is_periodic and s.n_atoms == 2
    np.testing.assert_allclose(s.lattice, si.cell[:], atol=0)
    slab = si.copy()
    slab.pbc = [True, True, False]
    with pytest.raises(InputError) as info:
        from_ase(slab)
    assert info.value.field == "pbc"
    assert from_ase(slab, partial_pbc="periodic").is_periodic
    assert not from_ase(slab, partial_pbc="molecule").is_periodic
    mol = Atoms("CO", positions=[[0, 0, 0], [1.13, 0, 0]], cell=[5, 5, 5], pbc=False)
    assert not from_ase(mol).is_periodic
    flat = Atoms("CO", positions=[[0, 0, 0], [1.13, 0, 0]], pbc=True)  # no cell
    with pytest.raises(InputError) as info:
        from_ase(flat)
    assert info.value.field == "cell"


# ----------------------------------------------------------------------------- XYZ, POSCAR
def test_extended_xyz_round_trip(tmp_path: Path):
    from viewcert.io.xyz import read_xyz, write_xyz

    s = _sample_crystal()
    f = write_xyz(tmp_path / "crystal.xyz", s)
    assert 'Lattice="' in f.read_text().splitlines()[1]
    back = read_xyz(f)
    assert back.is_periodic and back.equals(s, atol=1e-7) and back.site_labels == s.site_labels
    assert back.provenance.sha256 == hashlib.sha256(f.read_bytes()).hexdigest()
    m = _sample_molecule()
    back = read_structure(write_xyz(tmp_path / "water.extxyz", m))
    assert not back.is_periodic and back.equals(m, atol=1e-7)


def test_plain_xyz_is_a_molecule_and_frames_are_indexed(tmp_path: Path):
    from viewcert.io.xyz import read_xyz

    f = tmp_path / "two.xyz"
    f.write_text("2\nfirst\nC 0 0 0\nO 1.13 0 0\n2\nsecond\nN 0 0 0\nN 1.10 0 0\n")
    s = read_xyz(f)
    assert not s.is_periodic and s.symbols == ("C", "O") and s.identifier == "two"
    assert read_xyz(f, index=1).symbols == ("N", "N")


def test_poscar_round_trip(tmp_path: Path):
    from viewcert.io.poscar import read_poscar, write_poscar

    s = _sample_crystal()
    f = write_poscar(tmp_path / "POSCAR", s, comment="sample")
    back = read_poscar(f)
    assert back.is_periodic and back.identifier == "sample"
    np.testing.assert_allclose(back.lattice, s.lattice, atol=1e-8)
    assert sorted(back.numbers.tolist()) == sorted(s.numbers.tolist())
    for z, p in zip(s.numbers, s.positions, strict=True):
        d = np.linalg.norm(back.positions[back.numbers == z] - p, axis=1)
        assert d.min() < 1e-7
    assert format_of(tmp_path / "CONTCAR_relaxed") == "poscar"
    with pytest.raises(InputError):
        write_poscar(tmp_path / "m.vasp", _sample_molecule())


# ----------------------------------------------------------------------------- PDB / mmCIF
def _gemmi_peptide_like():
    import gemmi

    st = gemmi.Structure()
    st.name = "TEST"
    model = gemmi.Model(1)
    chain = gemmi.Chain("A")
    coords = {"N": (1.0, 2.0, 3.0), "CA": (2.2, 2.6, 3.4), "C": (3.4, 1.8, 3.0), "O": (3.5, 0.6, 3.2)}
    res = gemmi.Residue()
    res.name = "GLY"
    res.seqid = gemmi.SeqId(1, " ")
    for name, xyz in coords.items():
        at = gemmi.Atom()
        at.name = name
        at.element = gemmi.Element(name[0])
        at.pos = gemmi.Position(*xyz)
        at.occ = 1.0
        res.add_atom(at)
    chain.add_residue(res)
    model.add_chain(chain)
    st.add_model(model)
    st.cell = gemmi.UnitCell(10.0, 11.0, 12.0, 90.0, 90.0, 90.0)
    st.spacegroup_hm = "P 21 21 21"
    st.setup_entities()
    return st, coords


def test_pdb_and_mmcif_written_by_gemmi(tmp_path: Path):
    st, coords = _gemmi_peptide_like()
    pdb = tmp_path / "gly.pdb"
    pdb.write_text(st.make_pdb_string())
    cif = tmp_path / "gly.cif"
    st.make_mmcif_document().write_file(str(cif))
    expected = np.array(list(coords.values()))
    for f in (pdb, cif):
        s = read_structure(f)
        assert not s.is_periodic and s.symbols == ("N", "C", "C", "O")
        np.testing.assert_allclose(s.positions, expected, atol=1e-3)
        assert s.site_labels[1] == "A:GLY1:CA"
        c = read_structure(f, periodic=True)
        assert c.is_periodic and c.n_atoms == 16  # P 21 21 21: four copies of a general position
        np.testing.assert_allclose(np.diag(c.lattice), [10, 11, 12], atol=1e-9)
        frac = c.frac_coords
        assert ((frac >= 0) & (frac < 1)).all()
        # the -x+1/2, -y, z+1/2 image of N
        n = np.array(coords["N"]) / [10, 11, 12]
        img = np.array([-n[0] + 0.5, -n[1], n[2] + 0.5]) % 1.0
        assert np.abs(frac - img).max(axis=1).min() < 1e-6
        assert read_structure(f, periodic=True, expand_symmetry=False).n_atoms == 4


def test_pdb_special_position_and_fake_cell(tmp_path: Path):
    import gemmi

    st, _ = _gemmi_peptide_like()
    st.spacegroup_hm = "P 1 2 1"
    at = st[0][0][0][0]
    at.pos = gemmi.Position(0.0, 5.0, 0.0)  # on the 2-fold axis x = z = 0
    f = tmp_path / "p2.pdb"
    f.write_text(st.make_pdb_string())
    c = read_structure(f, periodic=True)
    assert c.n_atoms == 7
    st.cell = gemmi.UnitCell(1, 1, 1, 90, 90, 90)
    f.write_text(st.make_pdb_string())
    with pytest.raises(InputError) as info:
        read_structure(f, periodic=True)
    assert info.value.field == "CRYST1"


def test_pdb_writer_round_trip(tmp_path: Path):
    from viewcert.io.pdb import pdb_text

    m = _sample_molecule()
    f = tmp_path / "w.pdb"
    f.write_text(pdb_text(m))
    back = read_structure(f)
    assert back.symbols == m.symbols
    np.testing.assert_allclose(back.positions, m.positions, atol=1e-3)
    s = _sample_crystal()
    f.write_text(pdb_text(s))
    back = read_structure(f, periodic=True)
    np.testing.assert_allclose(cell_parameters(back.lattice), cell_parameters(s.lattice), atol=1e-3)
    np.testing.assert_allclose(back.frac_coords, s.frac_coords, atol=1e-3)


# ----------------------------------------------------------------------------- SDF
def test_sdf_via_rdkit(tmp_path: Path):
    Chem = pytest.importorskip("rdkit.Chem")
    from rdkit.Chem import AllChem

    f = tmp_path / "two.sdf"
    w = Chem.SDWriter(str(f))
    mols = []
    for name, smi in (("ethanol", "CCO"), ("acetonitrile", "CC#N")):
        m = Chem.AddHs(Chem.MolFromSmiles(smi))
        m.SetProp("_Name", name)
        assert AllChem.EmbedMolecule(m, randomSeed=11) == 0
        w.write(m)
        mols.append(m)
    w.close()
    s = read_structure(f)
    assert s.identifier == "ethanol" and not s.is_periodic and s.n_atoms == 9
    np.testing.assert_allclose(s.positions, mols[0].GetConformer().GetPositions(), atol=1e-4)
    assert s.numbers.tolist() == [a.GetAtomicNum() for a in mols[0].GetAtoms()]
    second = read_structure(f, index=1)
    assert second.identifier == "acetonitrile" and second.n_atoms == 6
    assert read_structure(f, index=1, remove_hs=True).n_atoms == 3
    mol = tmp_path / "one.mol"
    mol.write_text(Chem.MolToMolBlock(mols[1]))
    assert read_structure(mol).n_atoms == 6


def test_sdf_without_rdkit_is_a_clear_error(tmp_path: Path, monkeypatch):
    import sys

    from viewcert.io.sdf import read_sdf

    monkeypatch.setitem(sys.modules, "rdkit", None)
    f = tmp_path / "x.sdf"
    f.write_text("x\n")
    with pytest.raises(InputError) as info:
        read_sdf(f)
    assert info.value.field == "rdkit" and "viewcert[molecules]" in str(info.value)


# ----------------------------------------------------------------------------- dispatch
def test_read_structure_dispatch(tmp_path: Path):
    assert format_of("a.CIF") == "cif" and format_of("x/POSCAR") == "poscar" and format_of("m.mol") == "sdf"
    f = tmp_path / "nacl.cif"
    f.write_text(NACL_FM3M)
    assert read_structure(f, occupancy_policy="refuse").n_atoms == 8
    (tmp_path / "notes.txt").write_text("not a structure")
    got = read_structures(tmp_path)
    assert [s.n_atoms for s in got] == [8]
    with pytest.raises(InputError) as info:
        read_structure(tmp_path / "notes.txt")
    assert info.value.field == "extension"


# ----------------------------------------------------------------------------- built-ins
def test_builtin_prototypes_cover_seven_crystal_systems():
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    from viewcert.io.builtin import PROTOTYPES, builtin_prototypes

    protos = builtin_prototypes()
    assert [s.identifier for s in protos] == [f"aflow:{label}" for label, _, _ in PROTOTYPES]
    assert 14 <= len(protos) <= 21
    seen: dict[str, int] = {}
    for s, (label, system, _) in zip(protos, PROTOTYPES, strict=True):
        assert s.is_periodic and s.closest_pair()[2] >= 0.5
        got = SpacegroupAnalyzer(to_pymatgen(s), symprec=0.01).get_crystal_system()
        assert got == system, label
        seen[got] = seen.get(got, 0) + 1
        # pymatgen orientation: c along z
        assert s.lattice[2, 0] == 0 and s.lattice[2, 1] == 0
    assert set(seen) == {
        "triclinic",
        "monoclinic",
        "orthorhombic",
        "tetragonal",
        "trigonal",
        "hexagonal",
        "cubic",
    }
    assert min(seen.values()) >= 2
    assert [s.identifier for s in builtin_prototypes()] == [s.identifier for s in protos]  # deterministic


def test_builtin_molecules_and_sample():
    from viewcert.io.builtin import SAMPLE_PROTOTYPES, builtin, builtin_molecules

    mols = builtin_molecules()
    assert [m.identifier for m in mols] == ["ccd:ATP", "ccd:IBP", "ccd:CLR"]
    assert [m.formula for m in mols] == ["C10H16N5O13P3", "C13H18O2", "C27H46O"]
    for m in mols:
        assert not m.is_periodic and m.closest_pair()[2] >= 0.5
        assert np.ptp(m.positions, axis=0).min() > 1.0  # really 3D
    sample = builtin("builtin:sample")
    assert [s.identifier for s in sample] == [f"aflow:{x}" for x in SAMPLE_PROTOTYPES] + [
        "ccd:ATP",
        "ccd:IBP",
    ]
    assert [s.identifier for s in read_structures("builtin:ccd:clr")] == ["ccd:CLR"]
    assert builtin("sample")[-1] is sample[-1]  # cached
    with pytest.raises(InputError) as info:
        builtin("builtin:nothing")
    assert info.value.field == "name"


def test_bundled_ccd_molecules_equal_biotite():
    """The bundled copy (data/ccd_molecules.json) is biotite's CCD, rounded to 1e-4 Å."""
    pytest.importorskip("biotite")
    from viewcert.io.builtin import MOLECULES, _bundled_ccd, ccd_record_from_biotite

    bundled = _bundled_ccd()["molecules"]
    for code, _ in MOLECULES:
        ref = ccd_record_from_biotite(code)
        assert bundled[code]["atom_name"] == ref["atom_name"]
        assert bundled[code]["element"] == ref["element"]
        np.testing.assert_allclose(bundled[code]["coord"], ref["coord"], atol=1e-4)


# ----------------------------------------------------------------------------- atomic writers
def test_json_is_deterministic_and_typed(tmp_path: Path):
    a = {"b": np.float64(0.1), "a": [np.int32(3), -0.0, (1, 2)], "c": np.arange(3), "p": tmp_path / "x"}
    b = dict(reversed(list(a.items())))
    assert json_dumps(a) == json_dumps(b)
    out = json.loads(json_dumps(a))
    assert out == {"a": [3, 0.0, [1, 2]], "b": 0.1, "c": [0, 1, 2], "p": str(tmp_path / "x")}
    assert json_dumps({"x": 1}).endswith("}\n")
    assert "0.30000000000000004" in json_dumps({"x": 0.1 + 0.2})
    with pytest.raises(InputError, match="non-finite"):
        json_dumps({"x": float("nan")})
    assert "NaN" in json_dumps({"x": float("nan")}, allow_nan=True)
    f = write_json_atomic(tmp_path / "sub" / "r.json", {"prov": Provenance("s", "i", "h")})
    assert json.loads(f.read_text()) == {"prov": {"source": "s", "identifier": "i", "sha256": "h", "choices": []}}


class _Boom:
    def to_dict(self):
        raise RuntimeError("interrupted during serialisation")


def _leftovers(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def test_atomic_json_leaves_no_partial_file(tmp_path: Path):
    target = tmp_path / "result.json"
    with pytest.raises(RuntimeError, match="interrupted"):
        write_json_atomic(target, {"ok": 1, "bad": _Boom()})
    assert _leftovers(tmp_path) == []
    write_json_atomic(target, {"version": 1})
    with pytest.raises(RuntimeError):
        write_json_atomic(target, {"version": 2, "bad": _Boom()})
    assert json.loads(target.read_text()) == {"version": 1}  # previous version intact
    assert _leftovers(tmp_path) == ["result.json"]


def test_atomic_writer_interrupted_mid_write(tmp_path: Path, monkeypatch):
    """An exception after bytes have reached the temporary file: the temporary file is removed and the
    target keeps its old content."""
    import pandas as pd

    target = tmp_path / "table.parquet"
    df = pd.DataFrame({"x": [1.0, 2.0], "y": ["a", "b"]})
    write_parquet_atomic(target, df)
    pd.testing.assert_frame_equal(pd.read_parquet(target), df)
    before = target.read_bytes()

    def partial_then_fail(self, path, **kw):  # path: the temporary file's object (io.confine.write_inside)
        path.write(b"PAR1 partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_parquet", partial_then_fail)
    with pytest.raises(KeyboardInterrupt):
        write_parquet_atomic(target, df)
    assert target.read_bytes() == before
    assert _leftovers(tmp_path) == ["table.parquet"]


def test_bytes_text_png_writers(tmp_path: Path):
    from PIL import Image

    assert write_bytes_atomic(tmp_path / "b.bin", b"\x00\x01").read_bytes() == b"\x00\x01"
    assert write_text_atomic(tmp_path / "t.txt", "é\n").read_bytes() == "é\n".encode()
    img = np.zeros((4, 5, 3), dtype=np.uint8)
    img[1, 2] = (255, 0, 0)
    f = write_png_atomic(tmp_path / "i.png", img)
    assert np.array_equal(np.asarray(Image.open(f)), img)
    with pytest.raises(InputError):
        write_png_atomic(tmp_path / "bad.png", img.astype(float))
    with pytest.raises(InputError):
        write_text_atomic(tmp_path / "t2.txt", b"bytes")  # type: ignore[arg-type]
    assert sorted(_leftovers(tmp_path)) == ["b.bin", "i.png", "t.txt"]
