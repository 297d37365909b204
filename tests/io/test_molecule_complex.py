"""MiSI-style complex preparation on the real X-ray complexes of ../shared/data/complexes (skipped when absent).

Checked independently: heavy-atom counts from the ligands' formulas (penicillin G C16H18N2O4S -> 23, haem
C34H32FeN4O4 -> 43, and the SDF's own atom block), and the pocket against a brute-force distance scan of the
file read directly with gemmi.
"""

from __future__ import annotations

from pathlib import Path

import gemmi
import numpy as np
import pytest

from tests.support.complex_data import COMPLEXES as DATA
from tests.support.complex_data import needs_complexes
from viewcert.errors import InputError
from viewcert.io.complex import prepare_complex

pytestmark = needs_complexes


def sdf_heavy_atoms(path: Path) -> int:
    lines = path.read_text().splitlines()
    n = int(lines[3][:3])
    return sum(1 for ln in lines[4 : 4 + n] if ln[31:34].strip() not in ("H", "D"))


def brute_pocket(pdb: Path, lig_xyz: np.ndarray, cutoff: float, skip=None) -> set[str]:
    st = gemmi.read_structure(str(pdb))
    keep = set()
    for ch in st[0]:
        for res in ch:
            if res.name in ("HOH", "WAT", "DOD") or (skip and (ch.name, res.name, res.seqid.num) == skip):
                continue
            for at in res:
                if at.element.name in ("H", "D"):
                    continue
                if np.min(np.linalg.norm(lig_xyz - np.array([at.pos.x, at.pos.y, at.pos.z]), axis=1)) <= cutoff:
                    keep.add(f"{ch.name}/{res.name}{res.seqid.num}")
                    break
    return keep


@pytest.mark.parametrize("entry", ["1ia1", "1uou"])
def test_sdf_ligand_and_pocket(entry):
    c = prepare_complex(DATA / entry)
    s = c.structure
    assert len(c.ligand_atoms) == sdf_heavy_atoms(DATA / entry / "ligand.sdf")
    assert (s.numbers > 1).all()  # hydrogens dropped
    lig = s.positions[list(c.ligand_atoms)]
    assert set(c.residues) == brute_pocket(DATA / entry / "protein.pdb.gz", lig, 8.0)
    assert all(lab.count("/") == 2 for lab in s.site_labels[len(c.ligand_atoms):])  # chain/RESseq/atom kept


def test_whole_entry_ligand_by_name_drops_waters():
    c = prepare_complex(DATA / "1pwc", ligand="PNM")
    assert len(c.ligand_atoms) == 23  # penicillin G, C16H18N2O4S
    assert c.dropped["water_atoms"] > 0
    assert not any("/HOH" in lab for lab in c.structure.site_labels)
    lig = c.structure.positions[list(c.ligand_atoms)]
    assert set(c.residues) == brute_pocket(DATA / "1pwc" / "complex.pdb.gz", lig, 8.0, skip=("A", "PNM", 400))
    assert len(prepare_complex(DATA / "1pwc", ligand="PNM", pocket=0.0).residues) == 0


def test_first_of_many_haems_and_bad_ligands():
    c = prepare_complex(DATA / "19hc", ligand="HEM")
    assert len(c.ligand_atoms) == 43  # haem b, C34H32FeN4O4
    assert c.ligand_instances == 18  # nine haems in each of the two chains
    assert c.structure.site_labels[0].startswith("A/HEM")
    with pytest.raises(InputError, match="ligand 'XYZ' is not in the file"):
        prepare_complex(DATA / "1pwc", ligand="XYZ")
    with pytest.raises(InputError, match="ligand"):
        prepare_complex(DATA / "1pwc")  # a whole entry needs --ligand
