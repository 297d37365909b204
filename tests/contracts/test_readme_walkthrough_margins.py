"""One word, one quantity (issue 57, item 1): the README walkthrough's first three steps, run as printed (certify
--margin, design, certify through the designed views), on five AFLOW prototypes written as CIFs, some of whose
margins sit at design's --cap and some below it. design and certify must state the same δ* (the uniqueness margin,
the phantom margin) and the same δ_exact (the exactness margin) for the same views and items, each under its own
name, and every value at the cap is marked as a lower bound.

On the main of session 52 design called the exact margin δ* (``margins.csv``: ``margin_exact``), never reported
δ*, printed ``comparison.csv`` values at the cap as a bare ``0.6``, and took the 5th percentile as an order
statistic where certify interpolated."""

from __future__ import annotations

import csv
import re
import subprocess

import pytest

from tests.support.harness_roundtrip import offline_env
from tests.support.walkthrough import walkthrough
from viewcert.io.builtin import builtin
from viewcert.io.pymatgen_adapter import to_pymatgen
from viewcert.stats import empirical_percentile

#: margins under render-ceiling-5 and a designed three below the cap, at it, and both
PROTOTYPES = ("A_cF8_227_a", "A_hP4_194_bc", "AB3C_hR10_148_c_f_c", "AB_cF8_225_a_b", "A_aP4_2_aci")
CAP = 0.6  # design's default --cap (Å)


def _rows(path) -> list[dict]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _agrees(design_cell: str, certified: float) -> bool:
    """design's cell (Å, ``>=0.6`` at the cap) states certify's value: equal at the resolution the certificate
    writes margins at (1e-6 Å, ``viewcert.resolution``), or a lower bound it meets."""
    if design_cell.startswith(">="):
        return float(design_cell[2:]) == CAP and certified >= CAP - 1e-9
    return certified == pytest.approx(float(design_cell), abs=0.5e-6 + 1e-12)  # the certificate's resolution


def test_design_and_certify_state_the_same_margins_by_their_names(tmp_path):
    from pymatgen.io.cif import CifWriter

    (tmp_path / "mycifs").mkdir()
    for label in PROTOTYPES:
        (s,) = builtin(f"builtin:aflow:{label}")
        CifWriter(to_pymatgen(s)).write_file(tmp_path / "mycifs" / f"{label}.cif")
    script = "set -euo pipefail\n" + "\n".join(walkthrough()[:3]) + "\n"
    assert [c.split()[:2] for c in walkthrough()[:3]] == [["viewcert", "certify"], ["viewcert", "design"],
                                                          ["viewcert", "certify"]]
    r = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=offline_env(), capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    design = {row["id"]: row for row in _rows(tmp_path / "mydesign" / "margins.csv")}
    compared = {row["id"]: row for row in _rows(tmp_path / "mydesign" / "comparison.csv")}
    before = {row["id"]: row for row in _rows(tmp_path / "mycert" / "items.csv")}  # render-ceiling-5
    after = {row["id"]: row for row in _rows(tmp_path / "mycert3" / "items.csv")}  # the designed views
    assert set(design) == set(compared) == set(before) == set(after) == set(PROTOTYPES)
    name = next(k for k in next(iter(compared.values())) if k.startswith("delta_star designed")).split(" ", 1)[1]
    capped = below = 0
    for i in PROTOTYPES:
        for key in ("delta_star", "delta_exact"):
            # the designed views: design's margins.csv and comparison.csv against certify through the file
            for cell in (design[i][key], compared[i][f"{key} {name}"]):
                assert _agrees(cell, float(after[i][key])), (i, key, cell, after[i][key])
            # the protocol compared with (render-ceiling-5): comparison.csv against the first certify
            cell = compared[i][f"{key} render-ceiling-5"]
            assert _agrees(cell, float(before[i][key])), (i, key, cell, before[i][key])
            for c in (design[i][key], compared[i][f"{key} {name}"], cell):
                capped += c.startswith(">=")
                below += not c.startswith(">=")
                assert c != f"{CAP:g}" and c != str(CAP)  # never a bare cap
            if compared[i][f"{key} {name}"].startswith(">=") and cell.startswith(">="):
                assert compared[i][f"{key} change"] == ""  # unknown: both are lower bounds
    assert capped and below  # the set exercises both
    # the printed worst cases and 5th percentiles: design's lines equal certify's summary (same definition)
    out = r.stdout
    for key, label in (("delta_star", "δ* (uniqueness margin)"), ("delta_exact", "δ_exact (exactness margin)")):
        values = [float(after[i][key]) for i in PROTOTYPES]
        m = re.search(re.escape(f"    {label}") + r"(?:, the objective)?: worst (\S+) Å.*?, 5th percentile (\S+) Å",
                      out)
        assert m, (label, out)
        worst, p5 = float(m.group(1)), float(m.group(2))
        if min(values) < CAP:
            assert worst == pytest.approx(min(values), abs=5e-5)
            assert p5 == pytest.approx(empirical_percentile(values, 5), abs=5e-5)
        summary = (tmp_path / "mycert3" / "summary.txt").read_text()
        line = next(x for x in summary.splitlines() if x.startswith(label.replace(")", ", Å")))
        assert f"minimum {min(values):.4g} " in line and f"5th percentile {empirical_percentile(values, 5):.4g}," in line
