"""Alternate locations are read by a stated rule, not refused (issue 23, item 7).

The rule (``viewcert.io.altloc``, biotite's ``altloc="occupancy"``): per residue (chain, sequence number,
insertion code) the altloc id whose atoms' occupancies sum highest, ties → the alphabetically first id;
atoms without an altloc are kept. Every expected coordinate below is worked out by hand from the PDB text;
for the real complexes the expected counts come from a twin reading the PDB columns directly.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import gemmi
import pytest

from tests.support.complex_data import COMPLEXES
from viewcert.certify import CertifyConfig
from viewcert.certify.evaluate import certify_item
from viewcert.certify.inputs import Item
from viewcert.errors import InputError
from viewcert.io.altloc import AltlocRow, choose_altlocs
from viewcert.io.pdb import read_pdb_text
from viewcert.io.read import read_structure


def atom(serial, name, alt, res, seq, x, y, z, occ, element, icode=" "):
    return (f"ATOM  {serial:5d} {name:<4s}{alt}{res:>3s} A{seq:4d}{icode}   {x:8.3f}{y:8.3f}{z:8.3f}"
            f"{occ:6.2f} 10.00          {element:>2s}")


#: residue 1: CA/CB in A (0.6) and B (0.4) → A. Residue 2: a tie (0.5/0.5) with B listed first → A.
#: Residue 3: CA prefers A (0.6) but CB prefers B (0.7): sums A 0.9 < B 1.1 → B for both atoms.
#: Residues 4 and 4A (insertion code): A wins in 4 (0.8), B wins in 4A (0.9) — two residues.
PDB = "\n".join([
    atom(1, "N", " ", "SER", 1, 0.0, 0.0, 0.0, 1.0, "N"),
    atom(2, "CA", "A", "SER", 1, 1.0, 0.0, 0.0, 0.6, "C"),
    atom(3, "CA", "B", "SER", 1, 1.0, 0.5, 0.0, 0.4, "C"),
    atom(4, "CB", "A", "SER", 1, 2.0, 0.0, 0.0, 0.6, "C"),
    atom(5, "CB", "B", "SER", 1, 2.0, 0.5, 0.0, 0.4, "C"),
    atom(6, "CA", "B", "GLY", 2, 5.0, 0.5, 0.0, 0.5, "C"),
    atom(7, "CA", "A", "GLY", 2, 5.0, 0.0, 0.0, 0.5, "C"),
    atom(8, "CA", "A", "ALA", 3, 8.0, 0.0, 0.0, 0.6, "C"),
    atom(9, "CA", "B", "ALA", 3, 8.0, 0.5, 0.0, 0.4, "C"),
    atom(10, "CB", "A", "ALA", 3, 9.0, 0.0, 0.0, 0.3, "C"),
    atom(11, "CB", "B", "ALA", 3, 9.0, 0.5, 0.0, 0.7, "C"),
    atom(12, "CA", "A", "VAL", 4, 12.0, 0.0, 0.0, 0.8, "C"),
    atom(13, "CA", "B", "VAL", 4, 12.0, 0.5, 0.0, 0.2, "C"),
    atom(14, "CA", "A", "VAL", 4, 15.0, 0.0, 0.0, 0.1, "C", icode="A"),
    atom(15, "CA", "B", "VAL", 4, 15.0, 0.5, 0.0, 0.9, "C", icode="A"),
    "END",
]) + "\n"

KEPT = {  # site label → position, by hand
    "A:SER1:N": (0.0, 0.0, 0.0), "A:SER1:CA": (1.0, 0.0, 0.0), "A:SER1:CB": (2.0, 0.0, 0.0),
    "A:GLY2:CA": (5.0, 0.0, 0.0),
    "A:ALA3:CA": (8.0, 0.5, 0.0), "A:ALA3:CB": (9.0, 0.5, 0.0),
    "A:VAL4:CA": (12.0, 0.0, 0.0), "A:VAL4A:CA": (15.0, 0.5, 0.0),
}


def _by_label(s):
    return {lab: tuple(p) for lab, p in zip(s.site_labels, s.positions.tolist(), strict=True)}


def test_default_keeps_the_highest_total_occupancy_per_residue():
    s = read_pdb_text(PDB, source="alt.pdb")
    assert _by_label(s) == KEPT  # 0.6 over 0.4; the tie → A; ALA3 whole residue B; 4 and 4A apart


def test_the_choice_is_recorded_in_the_provenance():
    s = read_pdb_text(PDB, source="alt.pdb")
    # kept: A in SER1, GLY2, VAL4; B in ALA3, VAL4A; 15 atoms read, 8 kept
    assert dict(s.provenance.choices) == {"altloc_policy": "occupancy", "altloc_kept": "A:3,B:2",
                                          "altloc_residues": "5", "altloc_dropped_atoms": "7"}
    assert s.provenance.to_dict()["choices"]["altloc_kept"] == "A:3,B:2"


def test_first_policy_takes_the_first_id_in_file_order():
    s = read_pdb_text(PDB, source="alt.pdb", altloc_policy="first")
    lab = _by_label(s)
    assert lab["A:GLY2:CA"] == (5.0, 0.5, 0.0)  # B is listed first in residue 2
    assert lab["A:ALA3:CB"] == (9.0, 0.0, 0.0) and lab["A:VAL4A:CA"] == (15.0, 0.0, 0.0)


def test_majority_is_per_atom_and_can_mix_conformers():
    lab = _by_label(read_pdb_text(PDB, source="alt.pdb", altloc_policy="majority"))
    assert lab["A:ALA3:CA"] == (8.0, 0.0, 0.0) and lab["A:ALA3:CB"] == (9.0, 0.5, 0.0)  # A's CA, B's CB


def test_refuse_still_refuses_in_one_line():
    with pytest.raises(InputError) as exc:
        read_pdb_text(PDB, source="alt.pdb", altloc_policy="refuse")
    assert exc.value.field == "altLoc" and "alternate location 'A'" in str(exc.value)
    with pytest.raises(InputError) as exc:
        read_pdb_text(PDB, source="alt.pdb", altloc_policy="best")
    assert exc.value.field == "altloc_policy"


def test_mmcif_reads_the_same_atoms():
    doc = gemmi.read_pdb_string(PDB).make_mmcif_document()
    s = read_pdb_text(doc.as_string(), source="alt.cif", mmcif=True)
    assert _by_label(s) == KEPT
    assert dict(s.provenance.choices)["altloc_kept"] == "A:3,B:2"


def test_checked_in_altloc_files_read():
    root = Path(__file__).parents[1] / "data" / "altloc"
    for name in ("pdb_altloc.pdb", "mmcif_altloc.cif"):  # C1 in A (0.60) and B (0.40), O1 without altloc
        s = read_structure(root / name)
        assert s.n_atoms == 2 and s.positions[0].tolist() == [0.0, 0.0, 0.0]
        assert dict(s.provenance.choices)["altloc_dropped_atoms"] == "1"


def test_rule_on_rows_ties_and_no_altlocs():
    rows = [AltlocRow(("A", "1"), "CA", "B", 0.5), AltlocRow(("A", "1"), "CA", "A", 0.5),
            AltlocRow(("A", "1"), "N", " ", 1.0)]
    keep, rec = choose_altlocs(rows, "occupancy")
    assert keep == [False, True, True] and rec.kept == (("A", 1),) and rec.dropped_atoms == 1
    keep, rec = choose_altlocs([AltlocRow(("A", "1"), "N", "\0", 1.0)], "occupancy")
    assert keep == [True] and rec is None


def test_certificate_records_the_altlocs_kept():
    s = read_pdb_text(PDB, source="alt.pdb")
    rec = certify_item(Item("alt", "structure", s, "x"), CertifyConfig(delta=0.01)).to_dict()
    assert rec["outcome"] != "error", rec
    assert rec["reading"] == dict(s.provenance.choices)


# ----------------------------------------------------------------------------- real complexes
def _twin_dropped(path: Path) -> int:
    """Atoms the rule drops, from the PDB columns (first model): per (chain, resSeq, iCode) the altLoc whose
    occupancies sum highest, ties alphabetical."""
    sums: dict[tuple, dict[str, float]] = {}
    alt_atoms = []
    for line in gzip.open(path, "rt"):
        if line.startswith("ENDMDL"):
            break
        if not line.startswith(("ATOM", "HETATM")) or line[16] == " ":
            continue
        key = (line[21], line[22:27])
        sums.setdefault(key, {}).setdefault(line[16], 0.0)
        sums[key][line[16]] += float(line[54:60])
        alt_atoms.append((key, line[16]))
    pick = {k: min(v, key=lambda a, v=v: (-round(v[a], 6), a)) for k, v in sums.items()}
    return sum(1 for k, a in alt_atoms if pick[k] != a)


@pytest.mark.parametrize("entry, ligand", [("19hc", "HEM"), ("1pwc", "PNM")])
def test_complexes_with_altlocs(entry, ligand):
    path = COMPLEXES / entry / "complex.pdb.gz"
    if not path.is_file():
        pytest.skip(f"the complexes data is absent ({path})")
    from viewcert.io.complex import prepare_complex

    prep = prepare_complex(COMPLEXES / entry, ligand=ligand)
    expected = _twin_dropped(path)
    assert expected > 0  # both entries have alternate locations (checked in the files)
    assert prep.dropped["altloc_atoms"] == expected
    assert dict(prep.structure.provenance.choices)["altloc_dropped_atoms"] == str(expected)
    labels = prep.structure.site_labels
    assert len(labels) == len(set(labels))  # one conformer: no atom twice
