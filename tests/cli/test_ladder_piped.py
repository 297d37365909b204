"""Ladder tables are never cut when piped (issue 57, item 10): ``viewcert ladder ... | cat`` drew its tables at the
report's fixed width (160 columns; a bare console at 80), so a long model name was cut with "…" and a long share
reason wrapped over three lines. Piped (stdout not a terminal), every table is drawn at its natural width.

Input: the committed harness samples (tests/data/harness, two fictitious models), one model renamed to a 71-character
name; expected: the name whole on every row that names it, no ellipsis, and each share row one line holding the
whole reason the ladder writes to shares.csv."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).parents[1] / "data" / "harness"
LONG = "acme-research-laboratories/vision-language-model-7b-instruct-2025-06-11"


def test_piped_ladder_tables_are_whole(tmp_path):
    folder = tmp_path / "h"
    shutil.copytree(HARNESS, folder)
    m = folder / "manifest_example.toml"
    m.write_text(m.read_text().replace('model = "acme/vlm-7b"', f'model = "{LONG}"'))
    r = subprocess.run([str(Path(sys.executable).parent / "viewcert"), "ladder", "--manifest", str(m), "--out",
                        str(tmp_path / "out")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "…" not in r.stdout
    rows = [x for x in r.stdout.splitlines() if x.startswith("│")]
    named = [x for x in rows if "acme-research" in x]
    assert len(named) >= 5 and all(LONG in x for x in named)
    for share in csv.DictReader((tmp_path / "out" / "shares.csv").open()):
        (row,) = [x for x in rows if x.startswith(f"│ {share['model']} ") and "not computed" in x]
        assert share["status"] in row  # the whole reason on the model's one line
