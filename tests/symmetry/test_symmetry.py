"""Symmetry at τ (spglib, moyopy cross-check) and the 230-space-group certification."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from viewcert.errors import InputError
from viewcert.structures import Structure
from viewcert.symmetry import _moyo
from viewcert.symmetry import labels as symmetry
from viewcert.symmetry.labels import CRYSTAL_SYSTEMS, analyse_cell, crystal_system_of, symmetry_of

FCC = (np.eye(3) * 3.6, [[0, 0, 0], [0, 0.5, 0.5], [0.5, 0, 0.5], [0.5, 0.5, 0]], [29] * 4)
HCP = (np.array([[2.5, 0, 0], [-1.25, 2.5 * math.sqrt(3) / 2, 0], [0, 0, 4.0]]),
       [[1 / 3, 2 / 3, 0.25], [2 / 3, 1 / 3, 0.75]], [12, 12])


@pytest.mark.parametrize(("number", "system"), [
    (1, "triclinic"), (2, "triclinic"), (3, "monoclinic"), (15, "monoclinic"), (16, "orthorhombic"),
    (74, "orthorhombic"), (75, "tetragonal"), (142, "tetragonal"), (143, "trigonal"), (167, "trigonal"),
    (168, "hexagonal"), (194, "hexagonal"), (195, "cubic"), (230, "cubic")])
def test_crystal_system_boundaries(number, system):
    assert crystal_system_of(number) == system


@pytest.mark.parametrize("bad", [0, 231, -5])
def test_crystal_system_refuses_out_of_range(bad):
    with pytest.raises(InputError, match="1..230"):
        crystal_system_of(bad)


def test_moyopy_tables_agree_with_ours_on_all_230():
    for n in range(1, 231):
        _, _, system = _moyo.space_group_type(n)
        assert system == crystal_system_of(n), n


def test_known_cells_both_engines_agree():
    fcc = analyse_cell(*FCC, symprec=0.01)
    assert fcc.agree and fcc.label.space_group == 225 and fcc.label.point_group == "m-3m"
    assert fcc.moyo.space_group == 225 and fcc.label.crystal_system == "cubic"
    hcp = analyse_cell(*HCP, symprec=0.01)
    assert hcp.agree and hcp.label.space_group == 194 and hcp.label.crystal_system == "hexagonal"
    assert hcp.to_dict()["disagreements"] == []


def test_tolerance_changes_the_label():
    # an fcc cell stretched by 0.02 Å along c: cubic at τ = 0.05, tetragonal at τ = 0.001
    lat = np.diag([3.6, 3.6, 3.62])
    loose = analyse_cell(lat, FCC[1], FCC[2], symprec=0.05)
    tight = analyse_cell(lat, FCC[1], FCC[2], symprec=0.001)
    assert loose.label.crystal_system == "cubic"
    assert tight.label.crystal_system == "tetragonal"
    assert loose.agree and tight.agree


def test_moyo_angle_is_converted_to_radians(monkeypatch):
    seen = {}
    real = _moyo.moyopy.MoyoDataset

    def spy(cell, *, symprec, angle_tolerance):
        seen["angle"] = angle_tolerance
        return real(cell, symprec=symprec, angle_tolerance=angle_tolerance)

    monkeypatch.setattr(_moyo.moyopy, "MoyoDataset", spy)
    _moyo.moyo_dataset(*FCC, symprec=0.01, angle_tolerance=5.0)
    assert seen["angle"] == pytest.approx(math.radians(5.0))
    _moyo.moyo_dataset(*FCC, symprec=0.01, angle_tolerance=-1.0)
    assert seen["angle"] is None
    # the cross-check leaves moyopy's own angle handling unless asked (see analyse_cell)
    chk = analyse_cell(*FCC, symprec=0.01, angle_tolerance=5.0)
    assert seen["angle"] is None and chk.moyo_angle_tolerance is None
    chk = analyse_cell(*FCC, symprec=0.01, angle_tolerance=5.0, moyo_angle_tolerance=5.0)
    assert seen["angle"] == pytest.approx(math.radians(5.0)) and chk.moyo_angle_tolerance == 5.0


def test_disagreement_is_flagged_not_hidden(monkeypatch):
    real = symmetry._moyo_label

    def lying(*args):
        lab = real(*args)
        return symmetry.SymmetryLabel(221, "Pm-3m", lab.point_group, lab.crystal_system, 517, 48)

    monkeypatch.setattr(symmetry, "_moyo_label", lying)
    chk = analyse_cell(*FCC, symprec=0.01)
    assert chk.disagreements == ("space_group",)
    assert "spglib 225 vs moyopy 221" in chk.describe_disagreement()
    assert chk.label.space_group == 225  # spglib stays the reference


def test_engine_failure_is_a_value():
    # two atoms 0.001 Å apart: spglib refuses; the check records it instead of raising
    lat = np.eye(3) * 4.0
    chk = analyse_cell(lat, [[0, 0, 0], [0.00025, 0, 0]], [1, 1], symprec=0.01)
    assert chk.spglib is None and chk.spglib_error
    assert "spglib" in chk.spglib_error


def test_symmetry_of_structure_and_molecule():
    s = Structure(np.asarray(FCC[1]) @ FCC[0], FCC[2], FCC[0])
    assert symmetry_of(s, symprec=0.01).label.space_group == 225
    with pytest.raises(InputError, match="periodic"):
        symmetry_of(Structure(np.eye(3) * 2, [1, 1, 1]), symprec=0.01)
    with pytest.raises(InputError, match="symprec"):
        analyse_cell(*FCC, symprec=0.0)


def test_crystal_systems_listed_in_order():
    assert CRYSTAL_SYSTEMS[0] == "triclinic" and CRYSTAL_SYSTEMS[-1] == "cubic" and len(CRYSTAL_SYSTEMS) == 7


# ----------------------------------------------------------------------------- all 230 space groups
# One pyxtal structure per space group: (atoms per species, random_state), found once by searching the
# smallest Wyckoff compositions whose generated cell, standardized like the study (0.01 Å, 5°), spglib and
# moyopy (τ = 0.01 Å, 5°) both assign exactly that group, with no two atoms closer than 0.8 Å. Species: Si,
# O, Mg in that order; at most 96 atoms per cell.
RECIPES = {
    1: ((1, 1), 1000), 2: ((1,), 2000), 3: ((1, 1), 3000), 4: ((2, 2), 4000), 5: ((2, 2), 5000),
    6: ((1, 1), 6000), 7: ((2, 2), 7000), 8: ((2, 2), 8000), 9: ((4, 4), 9000), 10: ((1,), 10000),
    11: ((2,), 11001), 12: ((2,), 12001), 13: ((4,), 13002), 14: ((4,), 14002), 15: ((8,), 15000),
    16: ((1, 4), 16002), 17: ((4,), 17000), 18: ((4,), 18002), 19: ((4,), 19000), 20: ((8,), 20000),
    21: ((8,), 21001), 22: ((4, 4), 22001), 23: ((2, 8), 23002), 24: ((8,), 24000), 25: ((1, 1), 25000),
    26: ((4,), 26000), 27: ((2, 4), 27000), 28: ((4,), 28000), 29: ((4, 4), 29000), 30: ((2, 4), 30000),
    31: ((4,), 31000), 32: ((2, 4), 32001), 33: ((4, 4), 33000), 34: ((2, 4), 34001), 35: ((2, 2), 35001),
    36: ((8,), 36000), 37: ((4, 4), 37001), 38: ((2, 2), 38000), 39: ((8,), 39000), 40: ((8,), 40001),
    41: ((4, 8), 41000), 42: ((4, 4), 42000), 43: ((8, 8), 43000), 44: ((2, 2), 44000), 45: ((4, 8), 45000),
    46: ((8,), 46000), 47: ((1,), 47000), 48: ((2, 4), 48000), 49: ((4,), 49002), 50: ((8,), 50000),
    51: ((4,), 51000), 52: ((8,), 52000), 53: ((8,), 53000), 54: ((8,), 54000), 55: ((4,), 55002),
    56: ((8,), 56000), 57: ((4,), 57000), 58: ((2, 4), 58000), 59: ((2,), 59000), 60: ((8,), 60000),
    61: ((8,), 61001), 62: ((4,), 62001), 63: ((8,), 63000), 64: ((8,), 64000), 65: ((2,), 65000),
    66: ((4, 8), 66003), 67: ((4, 8), 67001), 68: ((4, 8), 68000), 69: ((4,), 69000), 70: ((8,), 70000),
    71: ((2,), 71000), 72: ((8,), 72000), 73: ((16,), 73002), 74: ((4,), 74001), 75: ((1, 4), 75002),
    76: ((4,), 76000), 77: ((2, 4), 77002), 78: ((4,), 78000), 79: ((2, 8), 79000), 80: ((8,), 80000),
    81: ((4,), 81001), 82: ((8,), 82000), 83: ((4,), 83001), 84: ((4,), 84001), 85: ((8,), 85000),
    86: ((8,), 86002), 87: ((8,), 87000), 88: ((16,), 88000), 89: ((2, 8), 89000), 90: ((8,), 90000),
    91: ((4,), 91000), 92: ((4,), 92001), 93: ((8,), 93000), 94: ((8,), 94003), 95: ((4,), 95000),
    96: ((4,), 96003), 97: ((2, 8), 97001), 98: ((8,), 98000), 99: ((1, 1), 99000), 100: ((2, 4), 100000),
    101: ((2, 4), 101000), 102: ((8,), 102000), 103: ((2, 8), 103001), 104: ((4, 8), 104000),
    105: ((2, 2), 105000), 106: ((4, 8), 106000), 107: ((2, 2), 107000), 108: ((4, 8), 108000),
    109: ((8,), 109000), 110: ((16,), 110001), 111: ((8,), 111000), 112: ((2, 8), 112001),
    113: ((2, 4), 113000), 114: ((2, 8), 114000), 115: ((1, 2), 115000), 116: ((8,), 116000),
    117: ((8,), 117001), 118: ((4, 4), 118001), 119: ((2, 2), 119000), 120: ((16,), 120001),
    121: ((8,), 121000), 122: ((4, 8), 122000), 123: ((1,), 123000), 124: ((2, 16), 124000),
    125: ((2, 8), 125001), 126: ((16,), 126001), 127: ((2, 4), 127002), 128: ((2, 8), 128001),
    129: ((4,), 129000), 130: ((16,), 130002), 131: ((4,), 131001), 132: ((4,), 132000), 133: ((16,), 133001),
    134: ((2, 4), 134001), 135: ((8,), 135002), 136: ((2, 8), 136000), 137: ((2, 4), 137000),
    138: ((4, 4), 138000), 139: ((2,), 139000), 140: ((8, 16), 140000), 141: ((4,), 141000),
    142: ((16,), 142001), 143: ((1, 3), 143000), 144: ((3,), 144000), 145: ((3,), 145000),
    146: ((3, 9), 146000), 147: ((6,), 147000), 148: ((18,), 148000), 149: ((6,), 149001), 150: ((6,), 150000),
    151: ((3,), 151000), 152: ((3,), 152000), 153: ((3,), 153000), 154: ((3,), 154000), 155: ((9,), 155001),
    156: ((1, 1), 156000), 157: ((1, 3), 157002), 158: ((2, 6), 158000), 159: ((2, 6), 159001),
    160: ((3, 3), 160000), 161: ((18,), 161001), 162: ((3, 6), 162000), 163: ((12,), 163001),
    164: ((2,), 164000), 165: ((12,), 165000), 166: ((3,), 166000), 167: ((18,), 167000),
    168: ((1, 6), 168000), 169: ((6,), 169000), 170: ((6,), 170000), 171: ((6,), 171000), 172: ((6,), 172000),
    173: ((2, 6), 173001), 174: ((1, 3), 174000), 175: ((1, 2, 6), 175001), 176: ((12,), 176002),
    177: ((1, 12), 177001), 178: ((6,), 178000), 179: ((6,), 179000), 180: ((3,), 180000), 181: ((3,), 181000),
    182: ((2, 6), 182000), 183: ((1, 1), 183000), 184: ((2, 12), 184002), 185: ((4, 6), 185000),
    186: ((2, 2), 186000), 187: ((1, 1), 187000), 188: ((6,), 188002), 189: ((3,), 189001),
    190: ((6,), 190002), 191: ((1,), 191000), 192: ((12,), 192000), 193: ((6,), 193001), 194: ((2,), 194000),
    195: ((4, 6), 195003), 196: ((48,), 196002), 197: ((8, 12), 197001), 198: ((4,), 198000),
    199: ((8,), 199000), 200: ((6,), 200000), 201: ((2, 4, 12), 201001), 202: ((4, 48), 202000),
    203: ((96,), 203000), 204: ((12,), 204000), 205: ((8,), 205000), 206: ((16,), 206000),
    207: ((24,), 207001), 208: ((4, 6), 208000), 209: ((96,), 209000), 210: ((8, 48), 210000),
    211: ((24,), 211001), 212: ((4,), 212000), 213: ((4,), 213000), 214: ((8,), 214000), 215: ((4,), 215000),
    216: ((4, 4), 216000), 217: ((8,), 217000), 218: ((6, 8), 218001), 219: ((96,), 219000),
    220: ((12,), 220000), 221: ((1,), 221000), 222: ((48,), 222000), 223: ((6,), 223001),
    224: ((2, 4), 224000), 225: ((4,), 225000), 226: ((96,), 226003), 227: ((8,), 227000),
    228: ((96,), 228000), 229: ((2,), 229000), 230: ((16,), 230000),
}


def _pyxtal_structure(group: int) -> Structure:
    from pyxtal import pyxtal

    counts, state = RECIPES[group]
    c = pyxtal()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c.from_random(3, group, ["Si", "O", "Mg"][: len(counts)], list(counts), random_state=state)
    a = c.to_ase()
    return Structure(a.positions, a.numbers, np.array(a.cell[:]))


def test_all_230_space_groups_certified_with_five_views():
    """Every space group, one generated structure each, five views at δ = τ = 0.01 Å: correct at the
    space-group level, or the failure is explained by its phantom set (or a label mismatch of the
    generated cell itself, which is reported)."""
    pytest.importorskip("pyxtal")
    from viewcert.certify import CertifyConfig
    from viewcert.certify.inputs import Dataset, Item
    from viewcert.certify.run import run_certification

    items = []
    for g in range(1, 231):
        s = _pyxtal_structure(g)
        items.append(Item(f"sg{g:03d}", "structure", s, f"pyxtal:{g}:{RECIPES[g][1]}",
                          {"space_group": g, "crystal_system": crystal_system_of(g)}, "pyxtal"))
    ds = Dataset("pyxtal:230", "generated", tuple(items), {})
    cert, _ = run_certification(ds, CertifyConfig(delta=0.01, tau=0.01, score="space_group"), n_workers=1,
                                progress=False)
    assert len(cert["items"]) == 230
    unexplained = []
    for it in cert["items"]:
        assert it["outcome"] != "error", it
        if it["correct"]:
            assert it["label_reconstructed"]["space_group"] == int(it["id"][2:])
            continue
        if "phantoms" in it["reasons"]:
            assert it["oracle"]["n_phantoms"] > 0 and it["phantoms"], it
        elif "label_mismatch" in it["reasons"]:
            assert it["label_mismatch"], it
        else:
            unexplained.append((it["id"], it["reasons"]))
    assert not unexplained, unexplained
    s = cert["summary"]
    # docs/certify_results.md claims 230/230: the explanations above are for a regression, not an allowance
    # (issue 11: any number of phantom failures used to pass)
    assert (s["n"], s["correct"], s["phantom_census"]["items_with_phantoms"]) == (230, 230, 0)
    # the recipes were chosen so that spglib and moyopy agree on every generated cell; a disagreement
    # would be listed here, never resolved silently
    assert s["cross_check_disagreements"] == [], s["cross_check_disagreements"]
    assert s["label_mismatches"] == [], s["label_mismatches"]
    # every crystal system is represented and the ceiling is reported with its bound
    assert set(s["by_crystal_system"]) == set(CRYSTAL_SYSTEMS)
    assert 0 < s["bound"]["lower"] <= s["R1"]
