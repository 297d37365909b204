"""The rotatable-hydrogen rule in the rotamer direction (issue 28 item 3): a donor–acceptor pair that hydride's
placement of a hydroxyl hydrogen does not bond, but another rotamer of that hydrogen would, is ``uncertain``
(reason ``rotatable_hydrogen``), not absent. Hand-built geometry: an ethanol (EOH) hydroxyl O at the origin,
its carbon C1 on −x, an aspartate's OD1 at (1.0, −2.4, 0) Å (D···A 2.6 Å); the rest of the Asp is placed
rigidly beyond OD1 (its N 3.94 Å from O, out of reach). The hydroxyl hydrogen is put by hand at |OH| =
0.96 Å, C1–O–H = 109.5°, in the +y half-plane: pointing away from OD1."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")

from viewcert.interactions.ceiling import (  # noqa: E402
    pocket_ligand_ceiling,
    rotamer_pairs,
    rotamers,
    uncertainty,
)
from viewcert.interactions.criterion import HBondCriterion, geometry  # noqa: E402
from viewcert.interactions.hbonds import find_hbonds  # noqa: E402
from viewcert.interactions.protonate import protonated_complex  # noqa: E402
from viewcert.interactions.truth import HBondTruth  # noqa: E402
from viewcert.render import frame_cameras  # noqa: E402

OH_O, C1, OD1 = np.zeros(3), np.array([-1.43, 0.0, 0.0]), np.array([1.0, -2.4, 0.0])
AWAY = np.array([0.96 * math.cos(math.radians(70.5)), 0.96 * math.sin(math.radians(70.5)), 0.0])  # (0.32046, 0.90494, 0)
# the Asp (CCD ideal coordinates, heavy atoms) turned so OD1→CG points away from the hydroxyl, OD1 at (1, −2.4, 0)
ASP = {"N": (-1.020, -3.462, 1.568), "CA": (-0.887, -4.232, 0.325), "C": (-1.806, -5.426, 0.373),
       "O": (-2.220, -5.828, 1.435), "CB": (0.559, -4.708, 0.171), "CG": (1.465, -3.515, 0.0),
       "OD1": (1.0, -2.4, 0.0), "OD2": (2.785, -3.692, -0.153), "OXT": (-2.165, -6.043, -0.764)}
EOH = {"C2": (-1.94, 1.43, 0.0), "C1": tuple(C1), "O": tuple(OH_O)}


def test_rotamers_turn_the_hydrogen_about_the_bond_by_hand():
    rows = rotamers(C1, OH_O, AWAY)
    assert rows.shape == (72, 3)  # 5° steps
    np.testing.assert_allclose(rows[0], AWAY, rtol=0, atol=1e-12)
    # 180° about the x axis through O: y → −y
    np.testing.assert_allclose(rows[36], [AWAY[0], -AWAY[1], 0.0], rtol=0, atol=1e-12)
    # 90°: (x, y, 0) → (x, 0, y)
    np.testing.assert_allclose(rows[18], [AWAY[0], 0.0, AWAY[1]], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 0.96, rtol=0, atol=1e-12)  # |OH| kept
    cos = rows @ (C1 - OH_O) / (0.96 * 1.43)
    np.testing.assert_allclose(np.degrees(np.arccos(cos)), 109.5, rtol=0, atol=1e-9)  # C1–O–H kept


def test_only_the_turned_rotamer_bonds_by_hand():
    crit = HBondCriterion()
    placed = geometry(OH_O, AWAY, OD1)
    # H···A = |(1 − 0.32046, −2.4 − 0.90494)| = √(0.46178 + 10.92263) = 3.3741 Å > 2.5 Å: no bond as placed
    assert placed.d_ha == pytest.approx(3.3741, abs=1e-4)
    assert not crit.holds(placed.d_ha, placed.angle)
    turned = geometry(OH_O, rotamers(C1, OH_O, AWAY)[36], OD1)
    # H···A = |(0.67954, −1.49506)| = 1.64225 Å; cos∠DHA = (−0.21777 − 1.35294) / (0.96 × 1.64225) = −0.99629
    assert turned.d_ha == pytest.approx(1.64225, abs=1e-4)
    assert turned.angle == pytest.approx(175.06, abs=1e-2)
    assert crit.holds(turned.d_ha, turned.angle)


@pytest.fixture(scope="module")
def hand_complex(tmp_path_factory):
    lines = []
    for n, (name, c) in enumerate(ASP.items(), start=1):
        lines.append(f"ATOM  {n:5d} {name:<4s} ASP A   1    {c[0]:8.3f}{c[1]:8.3f}{c[2]:8.3f}  1.00  0.00"
                     f"          {name[0]:>2s}")
    for n, (name, c) in enumerate(EOH.items(), start=len(ASP) + 1):
        lines.append(f"HETATM{n:5d} {name:<4s} EOH A 101    {c[0]:8.3f}{c[1]:8.3f}{c[2]:8.3f}  1.00  0.00"
                     f"          {name[0]:>2s}")
    path = tmp_path_factory.mktemp("rotamer") / "complex.pdb"
    path.write_text("\n".join(lines) + "\nEND\n")
    return protonated_complex(path, ligand="EOH", pocket=8.0, ph=7.0)


def _prepared(prot, label: str) -> int:
    return prot.prepared.structure.site_labels.index(label)


def test_a_pair_only_another_rotamer_bonds_is_uncertain(hand_complex):
    prot, crit = hand_complex, HBondCriterion()
    o, od1 = _prepared(prot, "A/EOH101/O"), _prepared(prot, "A/ASP1/OD1")
    atoms = prot.atoms.copy()
    h = [j for j in atoms.bonds.get_bonds(int(prot.index[o]))[0].tolist() if atoms.element[j] == "H"]
    assert len(h) == 1  # ethanol's hydroxyl hydrogen, as hydride added it
    atoms.coord[h[0]] = AWAY  # pointing away from OD1, as in the ribose–Glu case
    away = dataclasses.replace(prot, atoms=atoms)
    truth = HBondTruth(away, find_hbonds(away, crit), crit, None)
    assert truth.bonds == ()  # no bond as placed
    assert rotamer_pairs(truth) == [(o, od1)]
    cams = frame_cameras(prot.prepared.structure, "axes-6", style="ball-and-stick", width=320, height=240)
    c = pocket_ligand_ceiling(truth, cams, mode="ideal")
    assert (c["n_true"], c["ceiling"]) == (0, 1.0)  # only an uncertain entry: the answer "no" is right
    assert c["uncertain"] == [{"entry": "ASP 1 OD1 A, O", "residue": "A/ASP1", "bond": False,
                               "reason": "rotatable_hydrogen"}]


def test_with_one_reachable_acceptor_the_placed_bond_is_certain(hand_complex):
    # hydride's own placement (relaxed) points the hydrogen at OD1: a bond, and no other acceptor is in reach,
    # so the heavy atoms decide it (the rule's other direction does not fire)
    crit = HBondCriterion()
    truth = HBondTruth(hand_complex, find_hbonds(hand_complex, crit), crit, None)
    assert [b.entry() for b in truth.bonds] == ["ASP 1 OD1 A, O"]
    assert uncertainty(truth, truth.bonds[0], 0.01) is None
    assert rotamer_pairs(truth) == []
