"""Hostile inputs to the interaction tasks, through the CLI: one line naming what is wrong and where, exit 2,
never a traceback; and the inputs that are not errors (no hydrogens, alternate locations, insertion codes)
handled by a stated rule. Synthetic PDB files written here; nothing from ../shared is needed."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")

from tests.support.pdb_lines import BENZENE, ETHANOL, pdb_line  # noqa: E402
from viewcert.cli import app  # noqa: E402
from viewcert.interactions import hbond_truth  # noqa: E402

GLY = [("N", (0.0, 0.0, 0.0)), ("CA", (1.45, 0.0, 0.0)), ("C", (2.0, 1.42, 0.0)), ("O", (1.3, 2.42, 0.0)),
       ("OXT", (3.25, 1.5, 0.0))]
EOH_NEAR_GLY_O = [("C1", (1.3, 6.5, 1.2)), ("C2", (1.3, 5.9, -0.2)), ("O", (1.3, 5.17, 0.0))]  # O···O 2.75 Å


def write(tmp_path: Path, residues, name="entry.pdb") -> Path:
    """residues: (resname, seq, icode, atoms, altloc_shift or None, hetero)."""
    lines, n = [], 1
    for res, seq, icode, atoms, shift, het in residues:
        for atom, xyz in atoms:
            for alt, dx in ((" ", 0.0),) if shift is None else (("A", 0.0), ("B", shift)):
                lines.append(pdb_line(n, atom, res, "A", seq, (xyz[0] + dx, xyz[1] + dx, xyz[2]), atom[0],
                                      icode=icode, altloc=alt, het=het))
                n += 1
    p = tmp_path / name
    p.write_text("".join(lines) + "END\n")
    return p


def run(tmp_path, spec: str, task="pocket-ligand"):
    res = CliRunner().invoke(app, ["build-benchmark", spec, "--task", task, "--out", str(tmp_path / "out")])
    return res, res.output


def one_line_error(res, out: str, message: str) -> None:
    assert "Traceback" not in out, out
    assert res.exit_code == 2, out
    errors = [ln for ln in out.splitlines() if ln.startswith("viewcert: error:")]
    assert len(errors) == 1 and message in errors[0], out
    assert not [ln for ln in out.splitlines() if "Warning" in ln], out


def test_no_ligand_of_that_name(tmp_path):
    p = write(tmp_path, [("BNZ", 1, " ", BENZENE, None, True), ("EOH", 2, " ", ETHANOL, None, True)])
    one_line_error(*run(tmp_path, f"complex:{p}#ligand=ATP"), "ligand 'ATP' is not in the file (hetero residues: BNZ, EOH)")


def test_a_ligand_twice(tmp_path):
    shifted = [(n, (x + 9.0, y, z)) for n, (x, y, z) in ETHANOL]
    p = write(tmp_path, [("BNZ", 1, " ", BENZENE, None, True), ("EOH", 2, " ", ETHANOL, None, True),
                         ("EOH", 3, " ", shifted, None, True)])
    one_line_error(*run(tmp_path, f"complex:{p}#ligand=EOH"), "ligand 'EOH' occurs 2 times; name one as RES/CHAIN/SEQ")


def test_a_pocket_with_no_donors(tmp_path):
    p = write(tmp_path, [("BNZ", 1, " ", BENZENE, None, True), ("EOH", 2, " ", ETHANOL, None, True)])
    one_line_error(*run(tmp_path, f"complex:{p}#ligand=EOH"), "pocket (8 Å) has no donor or acceptor atom")
    one_line_error(*run(tmp_path, f"complex:{p}#ligand=BNZ", "residue-ligand"), "ligand 'BNZ' has no donor or acceptor")


def test_no_bond_anywhere_is_one_line(tmp_path):
    far = [(n, (x, y + 30.0, z)) for n, (x, y, z) in EOH_NEAR_GLY_O]
    p = write(tmp_path, [("GLY", 52, " ", GLY, None, False), ("EOH", 90, " ", far, None, True)])
    one_line_error(*run(tmp_path, f"complex:{p}#ligand=EOH,pocket=40"), "no complex has a hydrogen bond")
    # residue-ligand as documented: the same one line, not a lone negative item
    one_line_error(*run(tmp_path, f"complex:{p}#ligand=EOH,pocket=40", "residue-ligand"),
                   "no complex has a hydrogen bond")
    assert not (tmp_path / "out").exists()  # the failed export left no (empty) images/ folder


def test_bad_files_name_the_file(tmp_path):
    import gzip

    p = write(tmp_path, [("GLY", 52, " ", GLY, None, False), ("EOH", 90, " ", EOH_NEAR_GLY_O, None, True)])
    data = gzip.compress(p.read_bytes())
    (tmp_path / "cut.pdb.gz").write_bytes(data[: len(data) - 12])  # the gzip trailer cut off
    one_line_error(*run(tmp_path, f"complex:{tmp_path / 'cut.pdb.gz'}#ligand=EOH"),
                   "cut.pdb.gz, field gzip: the gzip file is truncated or corrupt")
    one_line_error(*run(tmp_path, f"complex:{p}#ligand=EOH,pocket=1000"), "pocket must be a distance in [0, 50]")
    assert not (tmp_path / "out").exists()


def test_missing_hydrogens_altlocs_and_insertion_codes_are_handled(tmp_path):
    # the file has no hydrogen at all (hydride adds them), an insertion code on the residue (kept in the
    # entry: 52A) and two conformers of the ligand at equal occupancy (complex:'s rule keeps the highest summed
    # occupancy, ties alphabetically: A; conformer B, 3 Å away, has no bond)
    p = write(tmp_path, [("GLY", 52, "A", GLY, None, False), ("EOH", 90, " ", EOH_NEAR_GLY_O, 3.0, True)])
    t = hbond_truth(p, ligand="EOH", crosscheck=False)
    assert t.protonated.n_hydrogens_added > 0
    o = t.protonated.prepared.structure.positions[t.protonated.prepared.structure.site_labels.index("A/EOH90/O")]
    assert o.tolist() == [1.3, 5.17, 0.0]  # conformer A
    assert t.entries() == ("GLY 52A O A, O",)
    res, out = run(tmp_path, f"complex:{p}#ligand=EOH")
    assert res.exit_code == 0 and "Traceback" not in out, out
    assert "1 pocket-ligand questions" in out


def test_docking_without_a_pocket_is_one_line(tmp_path):
    p = write(tmp_path, [("EOH", 90, " ", EOH_NEAR_GLY_O, None, True), ("GLY", 52, " ", GLY, None, False)])
    one_line_error(*run(tmp_path, f"complex:{p}#ligand=EOH,pocket=0.5", "docking"), "docking needs a pocket")


def test_atom_serials_out_of_order_name_the_file(tmp_path):
    # biotite's InvalidFileError ("Atom IDs are not strictly increasing", with a CONECT record) is one line
    # naming the file
    p = write(tmp_path, [("GLY", 52, " ", GLY, None, False), ("EOH", 90, " ", EOH_NEAR_GLY_O, None, True)])
    atoms = [ln for ln in p.read_text().splitlines() if ln.startswith(("ATOM", "HETATM"))]
    p.write_text("\n".join([ln[:6] + str(100 - i).rjust(5) + ln[11:] for i, ln in enumerate(atoms)]
                           + ["CONECT   99   98", "END"]) + "\n")
    one_line_error(*run(tmp_path, f"complex:{p}#ligand=EOH"), "entry.pdb: biotite cannot read the entry: Atom IDs")
    assert not (tmp_path / "out").exists()
