"""spglib/moyopy disagreements in a run's summary (issue 32): one readable line per item, the first ten, a
count of the rest, and every one in ``disagreements.csv`` (by the table rule). The disagreeing cell is
the sheared monoclinic cell of tests/support/sheared_cell.py: at a 5° angle tolerance spglib squares it to
Pmm2 (25), moyopy at its own angle rule keeps P2 (3); both numbers are asked of the libraries directly here.
"""

from __future__ import annotations

import csv
import io

import moyopy
import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from tests.support.sheared_cell import FRAC, Z, _cif, _lattice, _spglib_direct
from viewcert.cli.certify import register
from viewcert.io.tables import cell_value
from viewcert.symmetry.labels import disagreement_levels

#: crystal system and point group of the two space groups, from the International Tables
BY_NUMBER = {25: ("orthorhombic", "mm2"), 3: ("monoclinic", "2")}
N = 12


def _moyopy_direct() -> int:
    cell = moyopy.Cell(_lattice().tolist(), FRAC.tolist(), [int(z) for z in Z])
    return int(moyopy.MoyoDataset(cell, symprec=0.01).number)


@pytest.mark.parametrize("text, levels", [
    ("crystal_system: spglib orthorhombic vs moyopy monoclinic; space_group: spglib 25 vs moyopy 3",
     [("crystal_system", "orthorhombic", "monoclinic"), ("space_group", "25", "3")]),
    ("point_group: spglib -3m vs moyopy 32", [("point_group", "-3m", "32")]),
    ("moyopy failed", [("all", "labelled", "failed")]),
    ("spglib failed", [("all", "failed", "labelled")]),
    ("something else", [("?", "something else", "")]),
])
def test_disagreement_levels_read_the_recorded_line(text, levels):
    assert disagreement_levels(text) == levels


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("disagree")
    (d / "in").mkdir()
    ids = ["=x"] + [f"sheared{k:02d}" for k in range(N - 1)]  # one name a spreadsheet would read as a formula
    for i in ids:
        (d / "in" / f"{i}.cif").write_text(_cif())
    app = typer.Typer()
    register(app)
    res = CliRunner().invoke(app, ["certify", str(d / "in"), "--workers", "1", "--no-plots", "--out", str(d / "o")])
    assert res.exit_code == 0, res.output
    return d / "o", res.output, sorted(ids)


def _expected_line(item_id: str) -> str:
    sp, mo = _spglib_direct(5.0), _moyopy_direct()
    assert (sp, mo) == (25, 3)
    (sc, sg), (mc, mg) = BY_NUMBER[sp], BY_NUMBER[mo]
    return (f"    {item_id}: input cell: crystal_system: spglib {sc} vs moyopy {mc}; "
            f"point_group: spglib {sg} vs moyopy {mg}; space_group: spglib {sp} vs moyopy {mo}")


def test_summary_lists_ten_items_one_line_each_and_counts_the_rest(run):
    out, console, ids = run
    text = (out / "summary.txt").read_text()
    assert not {"{", "}", "'"} & set(text), "a Python repr in summary.txt"
    lines = text.splitlines()
    # the input cell's disagreements: its label is not what R1 compares (no item's symmetry was raised)
    k = lines.index(f"spglib/moyopy disagreements: {N} items (every one in disagreements.csv); 0 touch R1 "
                    f"(crystal_system of a cell it compares), {N} do not")
    assert lines[k + 1:k + 11] == [_expected_line(i) + " [R1 unaffected]" for i in ids[:10]]  # sorted names
    assert lines[k + 11] == f"    ... and {N - 10} more, see disagreements.csv"
    assert text in console  # the console prints the same summary


def test_disagreements_csv_holds_every_one(run):
    out, _, ids = run
    rows = list(csv.reader(io.StringIO((out / "disagreements.csv").read_text(), newline="")))
    assert rows[0] == ["id", "cell", "level", "spglib", "moyopy"]
    assert rows[1][0] == "'=x"  # the table rule: no formula
    sp, mo = _spglib_direct(5.0), _moyopy_direct()
    expected = [[i, "input", lv, str(a), str(b)] for i in ids
                for lv, a, b in zip(("crystal_system", "point_group", "space_group"),
                                    (*BY_NUMBER[sp], sp), (*BY_NUMBER[mo], mo), strict=True)]
    assert [[cell_value(c) for c in r] for r in rows[1:]] == expected
    assert np.unique([r[0] for r in rows[1:]]).size == N
