"""``--criterion baker-hubbard|plip|chimerax`` (``viewcert.interactions.criteria``): each criterion on hand-built
geometries whose verdicts follow from its published thresholds (PLIP 3.0.1 ``plip/basic/config.py``: D···A
< 4.1 Å, D–H···A > 100°, salt-bridge groups excluded, one bond per donor; ChimeraX ``hbonds``: Mills & Dean's
hydroxyl-donor and amide-acceptor rows + 0.4 Å / 20°), the margin rule on every criterion's checks, the
record, the settings field and the CLI option. Nothing from ../shared is needed (PLIP's own opinion on the six
complexes: ``test_interactions_criteria_plip.py``)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("biotite", reason="the interactions extra (biotite) is not installed")

import biotite.structure as struc  # noqa: E402

from tests.support.complex_data import COMPLEXES, needs_complexes  # noqa: E402
from viewcert.cli import app  # noqa: E402
from viewcert.errors import InputError  # noqa: E402
from viewcert.interactions.ceiling import stable, uncertainty  # noqa: E402
from viewcert.interactions.criteria import (  # noqa: E402
    Check,
    Chemistry,
    ChimeraXCriterion,
    PLIPCriterion,
    criterion_named,
)
from viewcert.interactions.criterion import HBondCriterion, angle_margin, geometry  # noqa: E402
from viewcert.interactions.hbonds import HBond, Site, typed_margin_pairs  # noqa: E402
from viewcert.interactions.truth import hbond_truth  # noqa: E402


def molecule(atoms, bonds, ligand_residue="LIG"):
    """A biotite AtomArray from (name, element, residue name, residue id, xyz) rows and (i, j, order) bonds;
    with the masks ``criteria`` reads (ligand: the ``ligand_residue`` rows, pocket: the rest) and the identity
    as the prepared index."""
    a = struc.AtomArray(len(atoms))
    a.atom_name = np.array([r[0] for r in atoms])
    a.element = np.array([r[1] for r in atoms])
    a.res_name = np.array([r[2] for r in atoms])
    a.res_id = np.array([r[3] for r in atoms])
    a.chain_id = np.array(["L" if r[2] == ligand_residue else "A" for r in atoms])
    a.coord = np.array([r[4] for r in atoms], dtype=np.float32)
    a.set_annotation("charge", np.zeros(len(atoms), dtype=int))
    a.bonds = struc.BondList(len(atoms), np.array(bonds, dtype=np.int64).reshape(-1, 3))
    lig = a.res_name == ligand_residue
    return SimpleNamespace(atoms=a, ligand=lig, pocket=~lig, index=np.arange(len(atoms)))


def bonds_of(crit, prot) -> set[tuple[str, str]]:
    chem = Chemistry(prot.atoms)
    chosen = [x for x in crit.select(prot, chem, [x for x in crit.decisions(prot, chem) if x.holds()]) if x.holds()]
    n = prot.atoms.atom_name
    return {(str(n[x.donor]), str(n[x.acceptor])) for x in chosen}


def at(d_ha: float, theta_deg: float, side: float = 1.0) -> tuple[float, float, float]:
    """The acceptor d_ha Å from H = (1, 0, 0) with D–H···A = theta at H, D at the origin (by hand: H→D is −x,
    H→A = d_ha (−cos θ, ±sin θ, 0))."""
    t = math.radians(theta_deg)
    return (1 - d_ha * math.cos(t), side * d_ha * math.sin(t), 0.0)


# --- the Check and the published thresholds ------------------------------------------------------------------

def test_check_strict_bounds_and_margins_by_hand():
    d = Check("D···A", 4.09, 4.1, upper=True, strict=True)
    assert d.passes() and not Check("D···A", 4.1, 4.1, True, True).passes()  # PLIP: dist < 4.1, not ≤
    assert not d.passes(0.01, -1)  # 4.09 + 2δ = 4.11 ≥ 4.1: not stable at δ = 0.01 Å
    assert Check("D···A", 4.11, 4.1, True, True).passes(0.01, +1)  # 4.11 − 0.02 < 4.1: a margin pair
    ang = Check("D–H···A", 101.0, 100.0, upper=False, strict=True, arms=(1.0, 2.0))
    m = math.degrees(math.asin(0.02) + math.asin(0.01))  # Δ at |DH| = 1 Å, |HA| = 2 Å, δ = 0.01 Å
    assert ang.margin(0.01) == pytest.approx(m, abs=1e-12) == pytest.approx(angle_margin(1.0, 2.0, 0.01))
    assert ang.passes(0.01, -1) is (101.0 - m > 100.0)  # Δ = 1.72°: 99.28 < 100, not stable
    assert not ang.passes(0.01, -1) and ang.passes()


@pytest.mark.parametrize(("d_ha", "theta", "expected"), [
    (2.0, 101.0, True), (2.0, 99.0, False),     # PLIP's HBOND_DON_ANGLE_MIN = 100°, strict
    (3.0, 160.0, True),                          # D···A = 3.954 Å < 4.1
    (3.2, 160.0, False),                         # D···A = 4.154 Å ≥ 4.1 (HBOND_DIST_MAX)
])
def test_plip_thresholds_on_hand_worked_triples(d_ha, theta, expected):
    g = geometry((0, 0, 0), (1, 0, 0), at(d_ha, theta))
    # D···A by the law of cosines in D–H–A (|DH| = 1, angle θ at H): |DA|² = 1 + d² − 2 d cos θ
    assert g.d_da == pytest.approx(math.sqrt(1 + d_ha**2 - 2 * d_ha * math.cos(math.radians(theta))), abs=1e-12)
    assert PLIPCriterion().accepts(g) is expected


def test_published_thresholds_are_recorded_with_their_source():
    p, c, b = criterion_named("plip").to_dict(), criterion_named("chimerax").to_dict(), criterion_named(
        "baker-hubbard").to_dict()
    assert (p["name"], p["max_donor_acceptor"], p["min_angle"], p["min_donor_acceptor"], p["max_salt_bridge"]) == \
        ("plip", 4.1, 100.0, 0.5, 5.5)
    assert "plip/basic/config.py" in p["source"] and "HBOND_DIST_MAX" in p["source"]
    assert (c["name"], c["dist_slop"], c["angle_slop"]) == ("chimerax", 0.4, 20.0)
    assert c["upsilon_donors"]["hydroxyl"][0] == [3.17, 90, 141] and c["acceptors"]["amide O"] == 3.30
    assert "hbond.py" in c["source"] and "Mills & Dean 1996" in c["source"]
    # Baker–Hubbard's record is the one existing certificates carry: no name key added
    assert "name" not in b and (b["max_h_acceptor"], b["min_angle"]) == (2.5, 120.0)
    with pytest.raises(InputError, match="criterion must be one of baker-hubbard, plip, chimerax"):
        criterion_named("mills-dean")


# --- PLIP's refinement rules ---------------------------------------------------------------------------------

def _one_donor_two_acceptors(second: float = 130.0):
    """Ligand C–N–H (N at the origin, H at +x) and two pocket carbonyl O: O1 at H···A 2.0 Å, 170°; O2 at 2.0 Å,
    ``second``° on the other side. Both pass PLIP's thresholds (and Baker–Hubbard's)."""
    o1, o2 = at(2.0, 170.0), at(2.0, second, side=-1.0)
    rows = [("C1", "C", "LIG", 1, (-1.47, 0, 0)), ("N1", "N", "LIG", 1, (0, 0, 0)), ("H1", "H", "LIG", 1, (1, 0, 0)),
            ("O1", "O", "ALA", 5, o1), ("C5", "C", "ALA", 5, (o1[0] + 1.23, o1[1], 0)),
            ("O2", "O", "ALA", 6, o2), ("C6", "C", "ALA", 6, (o2[0] + 1.23, o2[1], 0))]
    return molecule(rows, [(0, 1, 1), (1, 2, 1), (3, 4, 2), (5, 6, 2)])


def test_plip_keeps_one_bond_per_donor_the_largest_angle():
    prot = _one_donor_two_acceptors()
    a = prot.atoms
    bh = HBondCriterion()
    assert all(bh.accepts(geometry(a.coord[1], a.coord[2], a.coord[k])) for k in (3, 5))  # both bond by B–H
    assert bonds_of(PLIPCriterion(), prot) == {("N1", "O1")}  # refine_hbonds_ldon: 170° beats 130°
    assert bonds_of(PLIPCriterion(one_bond_per_donor=False), prot) == {("N1", "O1"), ("N1", "O2")}


def test_plip_one_bond_per_donor_choice_within_delta_is_uncertain():
    """170° against 169.9°: each angle moves by up to Δ = asin(2δ/|DH|) + asin(2δ/|HA|) = asin(0.02) +
    asin(0.01) = 1.72° at δ = 0.01 Å (|DH| 1 Å, |HA| 2 Å), so the 0.1° lead can flip: the winner is not stable
    and the runner-up is a margin pair; against 130° the choice stands."""
    crit, site = PLIPCriterion(), Site(0, "L", "LIG", "1", "N1", "N")
    for second, flips in ((169.9, True), (130.0, False)):
        prot = _one_donor_two_acceptors(second)
        chem = Chemistry(prot.atoms)
        judged = crit.select(prot, chem, [x for x in crit.decisions(prot, chem) if x.holds()])
        (win,) = [x for x in judged if x.holds()]
        assert prot.atoms.atom_name[win.acceptor] == "O1"
        lead = win.checks[-1]
        assert lead.value == pytest.approx(170.0 - second, abs=1e-4)  # float32 coordinates
        assert lead.margin(0.01) == pytest.approx(2 * math.degrees(math.asin(0.02) + math.asin(0.01)), abs=1e-4)
        bond = HBond(site, site, "donor", 0.0, 2.0, 170.0, (1.0, 0.0, 0.0), win.checks)
        assert stable(bond, None, crit, 0.01) is not flips
        assert typed_margin_pairs(prot, crit, (), 0.01) == ([(1, 5)] if flips else [])  # N1 → O2


def test_plip_drops_a_bond_inside_a_salt_bridge():
    """Lys NZ–H···O of a ligand carboxylate at H···A 1.8 Å, 170°: PLIP's charged groups (Lys side-chain N,
    carboxylate O pair) have centres < 5.5 Å apart, so refine_hbonds_pdon drops the hydrogen bond; an alcohol
    O at the same place keeps it."""
    def build(carboxylate: bool):
        o = at(1.8, 170.0)
        rows = [("CE", "C", "LYS", 9, (-1.47, 0, 0)), ("NZ", "N", "LYS", 9, (0, 0, 0)),
                ("HZ1", "H", "LYS", 9, (1, 0, 0)), ("HZ2", "H", "LYS", 9, (-0.34, 0.94, 0)),
                ("HZ3", "H", "LYS", 9, (-0.34, -0.47, 0.82)),
                ("O1", "O", "LIG", 1, o), ("C1", "C", "LIG", 1, (o[0] + 1.25, o[1], 0)),
                ("C2", "C", "LIG", 1, (o[0] + 2.0, o[1] + 1.2, 0))]
        bonds = [(0, 1, 1), (1, 2, 1), (1, 3, 1), (1, 4, 1), (5, 6, 2 if carboxylate else 1), (6, 7, 1)]
        if carboxylate:
            rows.append(("O2", "O", "LIG", 1, (o[0] + 1.9, o[1] - 1.1, 0)))
            bonds.append((6, 8, 1))
        return molecule(rows, bonds)

    assert bonds_of(PLIPCriterion(), build(carboxylate=True)) == set()
    assert bonds_of(PLIPCriterion(), build(carboxylate=False)) == {("NZ", "O1")}


# --- ChimeraX: heavy atoms decide a rotatable hydrogen's bond --------------------------------------------------

def _hydroxyl_to_amide_o(r: float, upsilon: float, h_away: bool):
    """Ligand C1–C2–O1–H (hydroxyl, O1 at the origin, C2 on −x) and a pocket backbone O (C bonded to O and N)
    r Å from O1 with ∠C2–O1···O = upsilon. H either toward the acceptor or turned away from it."""
    u = math.radians(upsilon)
    acc = np.array([-r * math.cos(u), r * math.sin(u), 0.0])
    toward = acc / np.linalg.norm(acc) * 0.96
    h = (0.0, -0.35, 0.9) if h_away else tuple(toward)
    c = acc + acc / np.linalg.norm(acc) * 1.23
    rows = [("C1", "C", "LIG", 1, (-2.0, 1.3, 0)), ("C2", "C", "LIG", 1, (-1.43, 0, 0)), ("O1", "O", "LIG", 1, (0, 0, 0)),
            ("H1", "H", "LIG", 1, h), ("O", "O", "GLY", 7, tuple(acc)), ("C", "C", "GLY", 7, tuple(c)),
            ("N", "N", "GLY", 8, tuple(c + np.array([0.0, 0.0, 1.33])))]
    return molecule(rows, [(0, 1, 1), (1, 2, 1), (2, 3, 1), (4, 5, 2), (5, 6, 1)])


@pytest.mark.parametrize(("r", "upsilon", "expected"), [
    (3.5, 110.0, True),    # hydroxyl donor → planar O: D···A ≤ 3.17 + 0.4 = 3.57, upsilon 90−20 … 141+20
    (3.6, 110.0, False),   # 3.6 > 3.57 (the amide-O acceptor's own limit, 3.30 + 0.4 = 3.70, is looser)
    (3.5, 65.0, False),    # upsilon 65° < 70°
    (3.5, 165.0, False),   # upsilon 165° > 161°
])
def test_chimerax_hydroxyl_donor_is_decided_by_heavy_atoms(r, upsilon, expected):
    crit = ChimeraXCriterion()
    for h_away in (False, True):  # the placed hydrogen never decides
        prot = _hydroxyl_to_amide_o(r, upsilon, h_away)
        assert bonds_of(crit, prot) == ({("O1", "O")} if expected else set())
    a = _hydroxyl_to_amide_o(3.5, 110.0, True).atoms
    assert not HBondCriterion().accepts(geometry(a.coord[2], a.coord[3], a.coord[4]))  # B–H: H turned away


def test_margin_rule_reads_every_criterion_check():
    """δ = 0.01 Å: a ChimeraX bond at D···A 3.565 Å (limit 3.57) is not stable; a non-bond at 3.58 Å is a
    margin pair (3.58 − 2δ ≤ 3.57); at 3.5 Å the bond is stable (upsilon 110° is far from 70°/161°)."""
    crit = ChimeraXCriterion()
    site = Site(0, "L", "LIG", "1", "O1", "O")
    for r, is_stable in ((3.565, False), (3.5, True)):
        prot = _hydroxyl_to_amide_o(r, 110.0, False)
        chem = Chemistry(prot.atoms)
        (dec,) = [x for x in crit.decisions(prot, chem) if x.holds()]
        bond = HBond(site, site, "donor", r, 0.0, 0.0, (0.0, 0.0, 0.0), dec.checks)
        assert stable(bond, None, crit, 0.01) is is_stable
    near = _hydroxyl_to_amide_o(3.58, 110.0, False)
    assert bonds_of(crit, near) == set()
    assert typed_margin_pairs(near, crit, (), 0.01) == [(2, 4)]
    assert typed_margin_pairs(_hydroxyl_to_amide_o(3.62, 110.0, False), crit, (), 0.01) == []


# --- settings and CLI ------------------------------------------------------------------------------------------

def test_export_settings_record_the_criterion_only_when_not_the_default():
    from viewcert.benchmark.interaction_export import InteractionExportSettings

    assert "criterion" not in InteractionExportSettings.from_options().to_dict()  # existing certificates keep their bytes
    assert InteractionExportSettings.from_options(criterion="plip").to_dict()["criterion"] == "plip"
    with pytest.raises(InputError, match="criterion must be one of"):
        InteractionExportSettings.from_options(criterion="nope")


@pytest.mark.parametrize(("args", "needle"), [
    (["builtin:nacl", "--task", "pocket-ligand", "--criterion", "mills\x1b[31m"], "criterion must be one of"),
    (["builtin:nacl", "--task", "crystal-system", "--criterion", "plip"], "--criterion applies to the interaction"),
])
def test_cli_bad_criterion_is_one_line_exit_2(tmp_path, args, needle):
    res = CliRunner().invoke(app, ["build-benchmark", *args, "--out", str(tmp_path / "out")])
    out = res.output.strip()
    assert res.exit_code == 2, out
    assert needle in out and "Traceback" not in out and "\x1b" not in out and len(out.splitlines()) == 1


# --- ChimeraX on a real complex --------------------------------------------------------------------------------

@needs_complexes
def test_chimerax_on_1pwc_tyr159_phenol_is_decided_by_heavy_atoms_and_within_the_margin():
    """1pwc, Tyr 159 OH → PNM O12 (a carbonyl O): ChimeraX's phenol row against a planar O allows D···A
    ≤ 3.03 + 0.4 = 3.43 Å and upsilon (CZ–OH···O12) 103 − 20 … 136 + 20°; the D···A measured from the file's
    coordinates decides it, hydride's hydrogen (turned away from O12) does not; and the bond is uncertain
    exactly when D···A + 2δ exceeds 3.43 Å (δ = 0.01 Å)."""
    pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")
    t = hbond_truth(COMPLEXES / "1pwc" / "complex.pdb.gz", ligand="PNM", criterion=criterion_named("chimerax"),
                    crosscheck=False)
    (b,) = [b for b in t.bonds if b.entry() == "TYR 159 OH A, O12"]
    s = t.protonated.prepared.structure
    d_da = float(np.linalg.norm(s.positions[b.donor.index] - s.positions[b.acceptor.index]))
    assert b.d_da == pytest.approx(d_da, abs=1e-9) and d_da <= 3.43
    (what1, bound1), (what2, bound2) = [(c.what, c.bound) for c in b.checks][:2]
    assert (what1, what2) == ("D···A (carboxylic acid C=O)", "D···A (phenol)")  # hydride left O13 the acid H
    assert (bound1, bound2) == (pytest.approx(3.17 + 0.4, abs=1e-12), pytest.approx(3.03 + 0.4, abs=1e-12))
    assert b.angle < 100  # through hydride's hydrogen: no bond by Baker–Hubbard, PLIP or ProLIF
    assert (uncertainty(t, b, 0.01) == "criterion_margin") is (d_da + 0.02 > 3.03 + 0.4)
