"""Hydrogen-bond ground truth (``viewcert.interactions``): the criterion on hand-worked D–H···A geometries, the
six X-ray complexes of ../shared/data/complexes (skipped when absent) with every bond listed and its criterion
values recomputed from the coordinates, the ProLIF cross-check's explanations, and hostile inputs.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")
pytest.importorskip("biotite", reason="the interactions extra (biotite) is not installed")

from tests.support.complex_data import COMPLEXES as DATA
from tests.support.complex_data import needs_complexes as needs_data
from tests.support.pdb_lines import BENZENE, ETHANOL, pdb_line
from viewcert.errors import InputError  # noqa: E402
from viewcert.interactions import HBondCriterion, geometry, hbond_truth  # noqa: E402
from viewcert.interactions.hbonds import baker_hubbard  # noqa: E402

CASES = {"1ia1": None, "1of6": None, "1s3v": None, "1uou": None, "1pwc": "PNM", "19hc": "HEM/A/301"}


def triple(d_ha: float, angle_deg: float) -> np.ndarray:
    """D at the origin, H at (1, 0, 0), A at d_ha from H with the D–H···A angle at H = angle_deg (by hand:
    H→D = (−1, 0, 0), H→A = d_ha (−cos θ, sin θ, 0), so cos∠ = cos θ)."""
    t = math.radians(angle_deg)
    return np.array([[0.0, 0, 0], [1.0, 0, 0], [1 - d_ha * math.cos(t), d_ha * math.sin(t), 0]])


def tiny_array(xyz: np.ndarray):
    """N–H (bonded) of residue 1 and an O of residue 2, as a biotite AtomArray."""
    import biotite.structure as struc

    a = struc.AtomArray(3)
    a.coord = xyz
    a.element = np.array(["N", "H", "O"])
    a.atom_name = np.array(["N", "H", "O"])
    a.res_id = np.array([1, 1, 2])
    a.res_name = np.array(["GLY", "GLY", "HOH"])
    a.chain_id = np.array(["A", "A", "A"])
    a.bonds = struc.BondList(3, np.array([[0, 1]]))
    return a


@pytest.mark.parametrize(("d_ha", "angle", "expected"), [
    (2.49, 150.0, True), (2.51, 150.0, False),   # distance just inside / just outside 2.5 Å
    (2.0, 121.0, True), (2.0, 119.0, False),     # angle just inside / just outside 120°
    (2.49, 121.0, True), (2.51, 119.0, False),
])
def test_criterion_on_hand_worked_triples(d_ha, angle, expected):
    xyz = triple(d_ha, angle)
    g = geometry(*xyz)
    assert g.d_ha == pytest.approx(d_ha, abs=1e-12)
    assert g.angle == pytest.approx(angle, abs=1e-9)
    # D···A by the law of cosines: |DA|² = 1 + d² − 2 d cos θ
    assert g.d_da == pytest.approx(math.sqrt(1 + d_ha**2 - 2 * d_ha * math.cos(math.radians(angle))), abs=1e-12)
    crit = HBondCriterion()
    assert crit.holds(g.d_ha, g.angle) is expected
    a = tiny_array(xyz)
    found = baker_hubbard(a, np.array([True, True, False]), np.array([False, False, True]), crit)
    assert (found.tolist() == [[0, 1, 2]]) is expected  # biotite agrees with the hand-worked verdict


def test_criterion_refuses_nonsense():
    with pytest.raises(InputError, match="max_h_acceptor"):
        HBondCriterion(max_h_acceptor=-1)
    with pytest.raises(InputError, match="min_angle"):
        HBondCriterion(min_angle=180)
    assert HBondCriterion().to_dict()["method"].startswith("Baker-Hubbard")


@pytest.fixture(scope="module")
def truths():
    return {k: hbond_truth(DATA / k, ligand=v) for k, v in CASES.items()}


#: regression pin: the bonds found by this code (biotite 1.6, hydride 1.2.3) on the six complexes. Checked by
#: hand against the structures where it is chemistry, not numbers: penicillin's carboxylate O12 to ARG 285 and
#: the oxyanion-hole backbone N–H of SER 62 / THR 301 to O8 in 1pwc are the textbook PBP contacts.
PIN = {
    "1ia1": ["GLU 32 OE2 B, N12", "ILE 112 O B, N7", "ILE 9 O B, N7"],
    "1of6": ["ASP 22 N B, O4", "ASP 22 OD1 B, N1", "GLN 166 OE1 A, N1", "SER 195 N A, O13", "VAL 227 N A, O12"],
    "1s3v": ["GLU 30 OE1 A, N20", "GLU 30 OE2 A, N19", "ILE 7 O A, N22", "VAL 115 O A, N22"],
    "1uou": ["ARG 202 NH1 A, O16", "ARG 202 NH2 A, O16", "HIS 116 NE2 A, N11", "SER 217 OG A, N14"],
    "1pwc": ["ARG 285 NE A, O12", "ARG 285 NH2 A, O12", "ASN 161 ND2 A, O16", "SER 62 N A, O8",
             "THR 301 N A, O8", "THR 301 O A, N14", "TYR 159 OH A, N4"],
    "19hc": [],
}


@needs_data
@pytest.mark.parametrize("name", list(CASES))
def test_six_complexes_every_bond_listed_with_criterion_values(truths, name):
    t = truths[name]
    s = t.protonated.prepared.structure
    print(f"\n{name}: {len(t.bonds)} bonds ({t.protonated.n_hydrogens_added} H added)")
    for b in t.bonds:
        print(f"  {b.entry():24s} D···A {b.d_da:.2f} Å  H···A {b.d_ha:.2f} Å  D–H···A {b.angle:.1f}°  "
              f"ligand {b.ligand_role}")
        # criterion values recomputed from the prepared structure's heavy atoms and the bond's hydrogen
        d, a = s.positions[b.donor.index], s.positions[b.acceptor.index]
        assert b.d_da == pytest.approx(float(np.linalg.norm(d - a)), abs=1e-9)
        assert b.d_ha == pytest.approx(float(np.linalg.norm(np.array(b.hydrogen) - a)), abs=1e-9)
        assert b.d_ha <= 2.5 and b.angle >= 120.0
        assert 0.9 < float(np.linalg.norm(np.array(b.hydrogen) - d)) < 1.1  # a real covalent D–H
        lig = set(t.protonated.prepared.ligand_atoms)
        assert (b.ligand_site.index in lig) and (b.residue_site.index not in lig)
        assert s.site_labels[b.residue_site.index].endswith("/" + b.residue_site.atom)
    assert list(t.entries()) == PIN[name]
    assert t.protonated.n_hydrogens_added > 0  # the X-ray entries carry none: hydride added them


@needs_data
@pytest.mark.parametrize("name", list(CASES))
def test_crosscheck_every_disagreement_explained(truths, name):
    c = truths[name].crosscheck
    assert c["n_primary"] + c["n_crosscheck"] - 2 * c["n_both"] == len(c["disagreements"])
    for d in c["disagreements"]:
        print(f"\n{name}: {d['entry']} only {d['found_by']}: {d['reason']}")
        assert d["reason"]
        if d["reason"].startswith("outside ProLIF"):
            assert d["d_da_A"] > 3.5 or not (130 <= d["angle_deg"] <= 180)
        if d["reason"].startswith("outside Baker-Hubbard"):
            assert d["d_ha_A"] > 2.5 or d["angle_deg"] < 120
    # agreement on the bonds both criteria accept: at most the explained differences
    assert c["n_both"] >= min(c["n_primary"], c["n_crosscheck"]) - 2


@needs_data
def test_certificate_record_names_criterion_and_libraries(truths):
    d = truths["1pwc"].to_dict()
    assert d["criterion"]["max_h_acceptor"] == 2.5 and d["criterion"]["min_angle"] == 120.0
    assert d["protonation"]["tool"] == "hydride"
    assert d["crosscheck"]["criterion"]["max_donor_acceptor_A"] == 3.5
    assert all(v != "absent" for k, v in d["libraries"].items() if k in ("biotite", "hydride"))


# -- hostile inputs --------------------------------------------------------------------------------------------


def write_pdb(tmp_path, residues) -> Path:
    lines, n = [], 1
    for res, seq, atoms in residues:
        for name, xyz in atoms:
            lines.append(pdb_line(n, name, res, "A", seq, xyz, name[0]))
            n += 1
    p = tmp_path / "entry.pdb"
    p.write_text("".join(lines) + "END\n")
    return p


def test_ligand_without_donors_or_acceptors_is_one_line(tmp_path):
    p = write_pdb(tmp_path, [("BNZ", 1, BENZENE), ("EOH", 2, ETHANOL)])
    with pytest.raises(InputError, match="ligand 'BNZ' has no donor or acceptor"):
        hbond_truth(p, ligand="BNZ", crosscheck=False)


def test_pocket_without_donors_or_acceptors_is_one_line(tmp_path):
    p = write_pdb(tmp_path, [("BNZ", 1, BENZENE), ("EOH", 2, ETHANOL)])
    with pytest.raises(InputError, match="pocket .* has no donor or acceptor"):
        hbond_truth(p, ligand="EOH", crosscheck=False)


def test_absent_ligand_is_one_line(tmp_path):
    p = write_pdb(tmp_path, [("BNZ", 1, BENZENE), ("EOH", 2, ETHANOL)])
    with pytest.raises(InputError, match="ligand 'ATP' is not in the file"):
        hbond_truth(p, ligand="ATP", crosscheck=False)


def test_ligand_twice_must_be_named(tmp_path):
    shifted = [(n, (x + 9.0, y, z)) for n, (x, y, z) in ETHANOL]
    p = write_pdb(tmp_path, [("BNZ", 1, BENZENE), ("EOH", 2, ETHANOL), ("EOH", 3, shifted)])
    with pytest.raises(InputError, match="occurs 2 times; name one as RES/CHAIN/SEQ"):
        hbond_truth(p, ligand="EOH", crosscheck=False)
    with pytest.raises(InputError, match="pocket"):  # named: the second copy is then the only pocket residue
        hbond_truth(p, ligand="EOH/A/2", pocket=3.0, crosscheck=False)


@needs_data
def test_ground_truth_is_deterministic(truths):
    again = hbond_truth(DATA / "1s3v", crosscheck=True)
    assert again.to_dict() == truths["1s3v"].to_dict()
