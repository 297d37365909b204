"""One cell rule for every table viewcert writes (issue 32): OWASP's CSV-injection rule with control
characters escaped, exactly reversible, applied by ``io.tables`` to the reports, ``items.csv``, the export's
``benchmark.tsv`` and ``ids.csv`` and native result files; the readers that map ids back undo it. Expected
cells below are worked by hand from the rule's definition; the round trip is checked on any text."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.hostile.corpus import GOOD_CIF
from viewcert.io.tables import cell_value, safe_cell

REPO = Path(__file__).resolve().parents[2]
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
#: structure file stems a spreadsheet would read as formulas (and a tab and a CR first, where allowed)
HOSTILE = ("=1+1", "@SUM(1+1)cmd", "+x", "-x", "\tx", "\rx")


@pytest.mark.parametrize("raw, cell", [
    ("=1+1", "'=1+1"), ("@SUM(1+1)cmd", "'@SUM(1+1)cmd"), ("+x", "'+x"), ("-x", "'-x"),
    ("\tx", r"'\x09x"), ("\rx", r"'\x0dx"),  # a leading tab or CR: marked, and escaped
    ("'q", "''q"),  # a leading quote gets one more, so reading back drops exactly one
    ("-0.5", "-0.5"), ("-3", "-3"), ("1e-3", "1e-3"),  # numbers stay numbers
    ("mp-149", "mp-149"), ("a=b", "a=b"),  # only the first character matters
    ("a\tb\nc", r"a\x09b\x0ac"), ("\x1b]0;x\x07", r"\x1b]0;x\x07"), ("\u202eb", r"\u202eb"),
    ("a\\b", "a\\b"),  # a backslash before anything else is itself
    (r"\x41", r"\\x41"), ("\\\x1b", r"\\\x1b"), ("\\\\", "\\\\\\"),  # ... else doubled
])
def test_cell_rule_worked_by_hand(raw, cell):
    assert safe_cell(raw) == cell
    assert cell_value(cell) == raw


def test_cell_rule_keeps_newlines_when_asked_and_leaves_non_strings():
    assert safe_cell("Q?\n- A\n", keep_newlines=True) == "Q?\n- A\n"
    assert safe_cell("-Q\r\n", keep_newlines=True) == r"'-Q\x0d" + "\n"
    for v in (-2.5, 3, None, True):
        assert safe_cell(v) is v and cell_value(v) is v


_TRICKY = st.text(alphabet="\\xu0a9f'=+-@\t\n\r\x1b\x85\u202e\ud800 b")


@given(st.one_of(st.text(), _TRICKY), st.booleans())
def test_cell_rule_round_trips_and_is_safe(text, keep):
    """Property: any text comes back exactly; the cell is no formula and holds no raw control character
    (newlines only when kept)."""
    cell = safe_cell(text, keep_newlines=keep)
    assert cell_value(cell) == text
    assert not cell.startswith(FORMULA_START) or NUMBER.fullmatch(cell)
    raw = [c for c in cell if unicodedata.category(c) in ("Cc", "Cs") or c in "\u2028\u2029\u202e"]
    assert raw == (["\n"] * cell.count("\n") if keep else []), cell


def _viewcert(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from viewcert.cli import app; app()", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(REPO / "src"), COLUMNS="200"))


@pytest.fixture(scope="module")
def hostile_export(tmp_path_factory):
    """A crystal-system export of NaCl under each hostile name the file system takes; (export, names)."""
    d = tmp_path_factory.mktemp("formula_names")
    (d / "in").mkdir()
    names = []
    for stem in HOSTILE:
        try:
            (d / "in" / f"{stem}.cif").write_text(GOOD_CIF)
        except OSError:  # a file system refusing a tab or a CR in a name
            continue
        names.append(stem)
    assert set(HOSTILE[:4]) <= set(names)
    proc = _viewcert(["build-benchmark", "in", "--out", "b", "--size", "64", "--workers", "1"], d)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return d / "b", names


def _cells(path: Path) -> list[list[str]]:
    text = path.read_text(encoding="utf-8")
    return list(csv.reader(io.StringIO(text, newline=""), delimiter="\t" if path.suffix == ".tsv" else ","))


def test_no_cell_of_the_export_is_a_formula(hostile_export):
    out, _ = hostile_export
    tables = sorted(p for p in out.rglob("*") if p.suffix in (".csv", ".tsv"))
    assert {"benchmark.tsv", "ids.csv", "certificate_items.csv"} <= {p.name for p in tables}
    for p in tables:
        for row in _cells(p):
            for cell in row:
                assert not cell.startswith(FORMULA_START) or NUMBER.fullmatch(cell), (p.name, cell)
                assert "\r" not in cell and "\t" not in cell, (p.name, cell)


def test_the_ids_read_back_as_the_file_names(hostile_export):
    from viewcert.attribution.shipped import load_shipped

    out, names = hostile_export
    qs = [json.loads(x) for x in (out / "benchmark.jsonl").read_text().splitlines()]
    assert sorted(q["source_id"] for q in qs) == sorted(names)  # the JSON keeps the names as they are
    shipped = load_shipped(out)
    assert dict(shipped.source_ids) == {q["id"]: q["source_id"] for q in qs}
    for q in qs:
        assert shipped.resolve(q["source_id"]) == q["id"] and shipped.resolve(str(q["index"])) == q["id"]
    tsv = pd.read_csv(out / "benchmark.tsv", sep="\t", keep_default_na=False)  # as VLMEvalKit loads it
    assert [cell_value(s) for s in tsv["source_id"]] == [q["source_id"] for q in qs]
    assert list(tsv["question"]) == [q["question"] for q in qs]  # multi-line text the harness shows as it is


def test_ladder_maps_every_harness_result_to_its_item(hostile_export, tmp_path):
    """VLMEvalKit's result files (the TSV as it loads it, less the image, plus ``prediction``) read back by
    ``viewcert ladder``, once by ``index`` and once by ``source_id``: every row is its item."""
    out, names = hostile_export
    qs = [json.loads(x) for x in (out / "benchmark.jsonl").read_text().splitlines()]
    df = pd.read_csv(out / "benchmark.tsv", sep="\t").drop(columns=["image"])
    df["prediction"] = [q["answer_letter"] for q in qs]
    df.to_excel(tmp_path / "m1_Viewcert.xlsx", index=False)
    df.to_csv(tmp_path / "m2_Viewcert.tsv", sep="\t", index=False)
    (tmp_path / "m.toml").write_text(
        f'[study]\nbenchmark = "{out.as_posix()}"\n\n'
        '[[input]]\npath = "m1_Viewcert.xlsx"\nrung = "R4"\nmodel = "m1"\n\n'
        '[[input]]\npath = "m2_Viewcert.tsv"\nrung = "R4"\nmodel = "m2"\nid_column = "source_id"\n')
    proc = _viewcert(["ladder", "--manifest", "m.toml", "--out", "lad", "--n-boot", "100"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = pd.read_csv(tmp_path / "lad" / "results_table.csv", dtype=str, keep_default_na=False)
    for model in ("m1", "m2"):
        rows = table[table["model"] == model]
        assert sorted(rows["item_id"]) == sorted(q["id"] for q in qs), model
        assert (rows["parsed_answer"] == rows["target"]).all() and (rows["parse_status"] == "ok").all()
    assert len(names) == len(qs)
