"""Complexes as users have them (``viewcert.io.complex.locate``): PDBbind folders (protein + pocket PDB, ligand
SDF and mol2), separate protein/ligand/water files with the ligand as ATOM records, mmCIF proteins. Made at test
time from ../shared/data/complexes (skipped when absent) by gemmi, RDKit and Open Babel; each must give the
bonds of the single-file complex (compared by residue atom, ligand atom position and direction, since an SDF
has no atom names)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")

from tests.support.complex_data import CASES, COMPLEXES, needs_complexes, pdbbind_folder  # noqa: E402
from viewcert.certify.inputs import parse_complex_spec  # noqa: E402
from viewcert.errors import InputError  # noqa: E402
from viewcert.interactions import hbond_truth  # noqa: E402
from viewcert.io.complex import ComplexFiles, locate, prepare_complex  # noqa: E402


def bond_set(t) -> set:
    s = t.protonated.prepared.structure
    return {(f"{b.residue_site.residue} {b.residue_site.seq} {b.residue_site.atom} {b.residue_site.chain}",
             tuple(np.round(s.positions[b.ligand_site.index], 2).tolist()), b.ligand_role) for b in t.bonds}


@pytest.fixture(scope="module")
def single():
    return {k: bond_set(hbond_truth(COMPLEXES / k, ligand=v, crosscheck=False)) for k, v in CASES.items()}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("pdbbind")
    return {k: pdbbind_folder(k, root) for k in CASES}


@needs_complexes
@pytest.mark.parametrize("key", list(CASES))
def test_pdbbind_folder_gives_the_single_file_bonds(key, single, folders):
    files = locate(folders[key])
    assert (files.layout, files.protein.name, files.ligand.name) == ("pdbbind", f"{key}_protein.pdb",
                                                                    f"{key}_ligand.sdf")
    assert bond_set(hbond_truth(folders[key], crosscheck=False)) == single[key]


@needs_complexes
@pytest.mark.parametrize("key", list(CASES))
def test_mol2_ligand_gives_the_single_file_bonds(key, single, folders):
    # 1uou included: Open Babel types its uracil ring 'ar'; the reader retries with the ring's N–H neutral
    # (test_mol2_aromatic_nh_ring_is_kekulized_by_hand)
    f = folders[key]
    files = ComplexFiles(f / f"{key}_protein.pdb", f / f"{key}_ligand.mol2", None, key)
    assert bond_set(hbond_truth(files, crosscheck=False)) == single[key]


@needs_complexes
def test_separate_files_ligand_as_atom_records_and_mmcif_protein(tmp_path, single):
    import gemmi

    st = gemmi.read_structure(str(COMPLEXES / "1pwc" / "complex.pdb.gz"))
    lig, wat = gemmi.Structure(), gemmi.Structure()
    for s in (lig, wat):
        s.add_model(gemmi.Model("1"))
        s[0].add_chain(gemmi.Chain("A"))
    ch = st[0]["A"]
    for i in reversed(range(len(ch))):
        r = ch[i]
        if r.name in ("PNM", "HOH"):
            r.het_flag = "A"  # written as ATOM records, as some tools do
            (lig if r.name == "PNM" else wat)[0]["A"].add_residue(r)
            del ch[i]
    (tmp_path / "lig.pdb").write_text(lig.make_pdb_string())
    (tmp_path / "wat.pdb").write_text(wat.make_pdb_string())
    assert "HETATM" not in (tmp_path / "lig.pdb").read_text()
    st.setup_entities()
    st.make_mmcif_document().write_file(str(tmp_path / "prot.cif"))
    path, ligand, pocket = parse_complex_spec(f"complex:protein={tmp_path}/prot.cif,ligand={tmp_path}/lig.pdb,"
                                              f"water={tmp_path}/wat.pdb#pocket=8")
    assert isinstance(path, ComplexFiles) and ligand is None and pocket == 8.0
    t = hbond_truth(path, crosscheck=False)
    assert bond_set(t) == single["1pwc"]
    n_water = sum(len(r) for r in wat[0]["A"])
    assert t.protonated.prepared.dropped["water_atoms"] == n_water > 0  # the water file read and dropped
    assert t.protonated.prepared.to_dict()["files"] == {"layout": "files", "protein": "prot.cif",
                                                        "ligand": "lig.pdb", "water": "wat.pdb"}


def test_truncated_gzip_and_bad_specs_name_the_file(tmp_path):
    good = gzip.compress(b"ATOM      1  N   GLY A   1       0.000   0.000   0.000  1.00  0.00           N\n" * 200)
    (tmp_path / "complex.pdb.gz").write_bytes(good[: len(good) // 2])
    with pytest.raises(InputError, match="gzip file is truncated or corrupt") as e:
        prepare_complex(tmp_path, ligand="PNM")
    assert "complex.pdb.gz" in str(e.value)
    with pytest.raises(InputError, match=r"pocket must be a distance in \[0, 50\] Å"):
        parse_complex_spec(f"complex:{tmp_path}#ligand=PNM,pocket=1000")
    with pytest.raises(InputError, match="the ligand file does not exist"):
        parse_complex_spec(f"complex:protein={tmp_path}/complex.pdb.gz,ligand={tmp_path}/nope.sdf")
    with pytest.raises(InputError, match="protein=P,ligand=L"):
        parse_complex_spec(f"complex:protein={tmp_path}/complex.pdb.gz,ligands=x")


def test_mol2_aromatic_nh_ring_is_kekulized_by_hand():
    # uracil as Open Babel writes it (tests/data/mol2/uracil_ar.mol2: every ring bond 'ar', N.ar with H):
    # RDKit's mol2 reader charges both ring N +1 and cannot kekulize; the retry with them neutral gives the
    # Kekulé structure by hand: O1=C2, C3=C4 (C5=C6 of uracil), C6=O7, every other bond single, no charge
    from rdkit import Chem

    from viewcert.io.complex import ligand_molblock

    path = Path(__file__).parents[1] / "data" / "mol2" / "uracil_ar.mol2"
    raw = Chem.MolFromMol2Block(path.read_text(), sanitize=False, removeHs=False)
    assert [a.GetFormalCharge() for a in raw.GetAtoms() if a.GetSymbol() == "N"] == [1, 1]  # RDKit's guess
    block, names = ligand_molblock(path)
    mol = Chem.MolFromMolBlock(block, sanitize=False, removeHs=False)
    double = {tuple(sorted((b.GetBeginAtomIdx() + 1, b.GetEndAtomIdx() + 1))) for b in mol.GetBonds()
              if b.GetBondType() == Chem.BondType.DOUBLE}
    assert double == {(1, 2), (3, 4), (6, 7)}
    assert all(b.GetBondType() in (Chem.BondType.SINGLE, Chem.BondType.DOUBLE) for b in mol.GetBonds())
    assert [a.GetFormalCharge() for a in mol.GetAtoms()] == [0] * 12
    assert names is None  # Open Babel's names (O, C, C, ...) are not unique
