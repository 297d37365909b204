"""The six X-ray protein–ligand complexes (wwPDB, CC0) beside the checkout, the mark that skips a test, with
its reason, when they are absent, and the PDBbind-style folders made from them at test time (nothing of
../shared is committed)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

COMPLEXES = Path(__file__).resolve().parents[3] / "shared" / "data" / "complexes"
needs_complexes = pytest.mark.skipif(not COMPLEXES.is_dir(), reason=f"complexes not found at {COMPLEXES}")
#: ligand of each complex: None for the PoseBusters folders (ligand.sdf), the residue of a whole entry
CASES = {"1ia1": None, "1of6": None, "1s3v": None, "1uou": None, "1pwc": "PNM", "19hc": "HEM/A/301"}
POCKET_FILE_A = 10.0  # Å: PDBbind's pocket files hold the residues within 10 Å of the ligand


def _entry_ligand_molblock(entry: Path, ligand: str) -> str:
    """The ligand residue of a whole entry as a MOL block with the CCD's bond orders and charges (biotite →
    RDKit), heavy atoms only, atom names lost as in a PDBbind SDF."""
    import biotite.structure as struc
    import biotite.structure.info as info
    import biotite.structure.io.pdb as pdb
    from biotite.interface import rdkit as bir
    from rdkit import Chem

    with gzip.open(entry, "rt") as fh:
        a = pdb.get_structure(pdb.PDBFile.read(fh), model=1, altloc="occupancy", include_bonds=True)
    name, chain, seq = (ligand.split("/") + [None, None])[:3]
    sel = (a.res_name == name) & (a.element != "H")
    if chain:
        sel &= (a.chain_id == chain) & (a.res_id == int(seq))
    res = a[sel]
    res.bonds = struc.connect_via_residue_names(res)
    ref = info.residue(name)
    charge = dict(zip(ref.atom_name.tolist(), ref.charge.tolist(), strict=True))
    res.set_annotation("charge", np.array([charge.get(n, 0) for n in res.atom_name], dtype=int))
    mol = bir.to_mol(res, explicit_hydrogen=False)
    mol.UpdatePropertyCache(strict=False)
    return Chem.MolToMolBlock(mol, kekulize=False)


def _without_residue(entry: Path, ligand: str | None) -> str:
    """The entry's PDB text without the ligand residue (``ligand`` None: as it is)."""
    import gemmi

    st = gemmi.read_structure(str(entry))
    if ligand is not None:
        name, chain, seq = (ligand.split("/") + [None, None])[:3]
        for ch in st[0]:
            for i in reversed(range(len(ch))):
                r = ch[i]
                if r.name == name and (chain is None or (ch.name == chain and str(r.seqid.num) == seq)):
                    del ch[i]
    st.remove_empty_chains()
    return st.make_pdb_string()


def pdbbind_folder(key: str, root: Path, *, mol2: bool = True, sdf: bool = True) -> Path:
    """``root/key`` in PDBbind's layout made from ../shared/data/complexes/key: ``key_protein.pdb`` (the protein
    without the ligand), ``key_pocket.pdb`` (residues within 10 Å, by gemmi), ``key_ligand.sdf`` (RDKit) and
    ``key_ligand.mol2`` (Open Babel from that SDF)."""
    import gemmi
    from rdkit import Chem

    src, ligand = COMPLEXES / key, CASES[key]
    out = root / key
    out.mkdir(parents=True, exist_ok=True)
    if ligand is None:
        protein_text = _without_residue(src / "protein.pdb.gz", None)
        mol = Chem.MolFromMolFile(str(src / "ligand.sdf"), removeHs=False)
        block = Chem.MolToMolBlock(mol)
    else:
        protein_text = _without_residue(src / "complex.pdb.gz", ligand)
        block = _entry_ligand_molblock(src / "complex.pdb.gz", ligand)
    (out / f"{key}_protein.pdb").write_text(protein_text)
    lig_pos = Chem.MolFromMolBlock(block, sanitize=False).GetConformer().GetPositions()
    st = gemmi.read_pdb_string(protein_text)
    ns = gemmi.NeighborSearch(st[0], st.cell, 6).populate()
    keep = set()
    for p in lig_pos:
        for m in ns.find_atoms(gemmi.Position(*p), "\0", radius=POCKET_FILE_A):
            cra = m.to_cra(st[0])
            keep.add((cra.chain.name, cra.residue.seqid.num, cra.residue.seqid.icode))
    for ch in st[0]:
        for i in reversed(range(len(ch))):
            if (ch.name, ch[i].seqid.num, ch[i].seqid.icode) not in keep:
                del ch[i]
    st.remove_empty_chains()
    (out / f"{key}_pocket.pdb").write_text(st.make_pdb_string())
    if sdf:
        (out / f"{key}_ligand.sdf").write_text(block + "$$$$\n")
    if mol2:
        from openbabel import pybel

        h = Chem.AddHs(Chem.MolFromMolBlock(block), addCoords=True)  # PDBbind's mol2 files carry hydrogens
        m = pybel.readstring("mol", Chem.MolToMolBlock(h))
        (out / f"{key}_ligand.mol2").write_text(m.write("mol2"))
    return out
