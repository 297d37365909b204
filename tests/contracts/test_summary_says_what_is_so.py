"""Summaries say what is so, and one vocabulary of task and level names (issue 39, Build 4 and 5): the truth
source as it is (a folder of CIFs without labels is scored against the input's own symmetry, not "dataset"),
a δ* line whenever margins were computed (its minimum, 5th percentile and tightest item, recomputed here from
the certificate's per-item margins), whether each spglib/moyopy disagreement touched the scored level (worked
by hand on constructed entries), and ``crystal-system`` / ``crystal_system`` accepted by every command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from viewcert.api.certification import levels as _levels
from viewcert.certify.run import disagreement_lines, touches
from viewcert.cli.main import app

CRYSTALS = Path(__file__).parents[1] / "data" / "certificates" / "v1" / "inputs" / "crystals"


@pytest.fixture(scope="module")
def unlabelled_margins(tmp_path_factory):
    root = tmp_path_factory.mktemp("sum")
    (root / "in").mkdir()
    for name in ("NaCl", "CsCl", "TiO2"):
        shutil.copy(CRYSTALS / f"{name}.cif", root / "in" / f"{name}.cif")
    res = CliRunner().invoke(app, ["certify", str(root / "in"), "--out", str(root / "c"), "--workers", "1",
                                   "--margin", "--no-plots"])
    assert res.exit_code == 0, res.output
    return root, (root / "c" / "summary.txt").read_text()


def test_unlabelled_inputs_are_scored_against_their_own_symmetry(unlabelled_margins):
    root, summary = unlabelled_margins
    items = json.loads((root / "c" / "certificate.json").read_text())["items"]
    assert {it["reference_source"] for it in items} == {"rendered"}  # no CIF carries a dataset label
    assert "R1 (crystal_system, truth = the symmetry of the input itself (no dataset label)): 3/3" in summary
    assert "truth = dataset" not in summary


def test_a_delta_star_line_whenever_margins_were_computed(unlabelled_margins):
    root, summary = unlabelled_margins
    items = json.loads((root / "c" / "certificate.json").read_text())["items"]
    v = sorted((it["uniqueness_margin"]["delta_star"], it["id"]) for it in items)
    # the 5th percentile: the smallest value with at least 5 % of the items at or below it (issue 57 item 1: one
    # definition in certify and design), here with n = 3 the smallest: the ⌈0.15⌉ = 1st
    assert (f"δ* (uniqueness margin, Å): minimum {v[0][0]:.4g} ({v[0][1]}, the tightest item), 5th percentile "
            f"{v[0][0]:.4g}, over 3 items") in summary
    # δ_exact, the exactness margin, under its own name: min(δ_exact, δ*) per item
    e = sorted((min(it["uniqueness_margin"]["delta_exact"] or float("inf"), it["uniqueness_margin"]["delta_star"]),
                it["id"]) for it in items)
    assert (f"δ_exact (exactness margin, Å: no false candidate at all; what design maximises by default): minimum "
            f"{e[0][0]:.4g} ({e[0][1]}, the tightest item), 5th percentile {e[0][0]:.4g}, over 3 items") in summary


def test_each_disagreement_says_whether_it_touched_the_scored_level():
    on = {"id": "a", "rendered": "crystal_system: spglib cubic vs moyopy tetragonal"}
    off = {"id": "b", "reconstructed": "space_group: spglib 225 vs moyopy 221"}
    failed = {"id": "c", "reconstructed": "moyopy failed"}
    inp = {"id": "d", "input": "crystal_system: spglib cubic vs moyopy tetragonal"}  # the input cell: not scored
    assert [touches(d, "crystal_system") for d in (on, off, failed, inp)] == [True, False, True, False]
    assert touches(inp, "crystal_system", frozenset({"d"}))  # unless the input's label is the truth (raised)
    lines = disagreement_lines([on, off, failed, inp], scored="crystal_system")
    assert lines[0] == ("spglib/moyopy disagreements: 4 items (every one in disagreements.csv); 2 touch R1 "
                        "(crystal_system of a cell it compares), 2 do not")
    assert [x.rsplit(" [", 1)[1] for x in lines[1:]] == ["touches R1]", "R1 unaffected]", "touches R1]",
                                                          "R1 unaffected]"]


def test_both_spellings_of_a_level_and_a_task_are_one_name(tmp_path):
    assert _levels("crystal-system") == _levels("crystal_system") == {"score": "crystal_system"}
    assert _levels("space-group,point-group") == _levels("space_group,point_group")
    (tmp_path / "in").mkdir()
    shutil.copy(CRYSTALS / "NaCl.cif", tmp_path / "in" / "NaCl.cif")
    res = CliRunner().invoke(app, ["build-benchmark", str(tmp_path / "in"), "--task", "crystal_system", "--out",
                                   str(tmp_path / "b"), "--size", "64", "--no-certify"])
    assert res.exit_code == 0, res.output
    (q,) = [json.loads(x) for x in (tmp_path / "b" / "benchmark.jsonl").read_text().splitlines()]
    assert q["task"] == "crystal-system"  # shown in one spelling
