"""The design commands: protocol show → file → margin/occlusion/design, and one-line errors."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from viewcert.cameras.protocol_files import read_protocol_file
from viewcert.cameras.protocols import get_protocol
from viewcert.cli import app

runner = CliRunner()


def test_protocol_show_round_trips(tmp_path):
    for fmt in ("toml", "json"):
        r = runner.invoke(app, ["protocol", "show", "render-ceiling-5", "--format", fmt])
        assert r.exit_code == 0, r.output
        f = tmp_path / f"p.{fmt}"
        f.write_text(r.output)
        back = read_protocol_file(f).protocol
        ref = get_protocol("render-ceiling-5")
        assert all(np.array_equal(a.rotation, b.rotation) for a, b in zip(back.views, ref.views, strict=True))
    r = runner.invoke(app, ["protocol", "show", "render-ceiling-5", "--format", "yaml"])
    assert r.exit_code == 2 and "format" in r.output and "Traceback" not in r.output


def test_margin_and_design_commands(tmp_path):
    r = runner.invoke(app, ["protocol", "show", "axes-3"])
    f = tmp_path / "a3.toml"
    f.write_text(r.output)
    r = runner.invoke(app, ["margin", "builtin:prototypes", "--protocol", str(f), "--out", str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((tmp_path / "m" / "margins.csv").open()))
    assert len(rows) == 20 and {row["bound"] for row in rows} <= {"candidate", "separation", "dependent"}
    r = runner.invoke(app, ["design", "builtin:prototypes", "--views", "2", "--candidates", "fibonacci-10",
                            "--out", str(tmp_path / "d"), "--occlusion-budget", "1"])
    assert r.exit_code == 0, r.output
    spec = read_protocol_file(tmp_path / "d" / "protocol.toml")
    d = json.loads((tmp_path / "d" / "design.json").read_text())
    assert len(spec.protocol) == 2 and d["config"]["views"] == 2
    assert (tmp_path / "d" / "directions.png").stat().st_size > 0
    r = runner.invoke(app, ["design", "builtin:prototypes", "--objective", "best", "--out", str(tmp_path / "e")])
    assert r.exit_code == 2 and "objective" in r.output and "Traceback" not in r.output


def test_design_compares_with_the_current_protocol_names_views_by_direction_and_says_when_at_cap(tmp_path):
    import re
    import shutil
    from pathlib import Path

    crystals = Path(__file__).parents[1] / "data" / "certificates" / "v1" / "inputs" / "crystals"
    (tmp_path / "in").mkdir()
    for name in ("NaCl", "Mg", "TiO2"):
        shutil.copy(crystals / f"{name}.cif", tmp_path / "in" / f"{name}.cif")
    r = runner.invoke(app, ["margin", str(tmp_path / "in"), "--protocol", "axes-3", "-o", str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    # the baseline as the margin command measures it: δ_exact (the design's default margin), capped at 0.6
    base = {row["id"]: min(float(row["delta_exact"]), float(row["delta_star"]), 0.6)
            for row in csv.DictReader((tmp_path / "m" / "margins.csv").open())}
    r = runner.invoke(app, ["design", str(tmp_path / "in"), "--views", "2", "--candidates", "fibonacci-10",
                            "--against", "axes-3", "-o", str(tmp_path / "d")])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((tmp_path / "d" / "comparison.csv").open()))
    assert sorted(row["id"] for row in rows) == sorted(base)
    def value(cell: str) -> float:  # a cell at the 0.6 cap reads >=0.6 (a lower bound), never a bare 0.6
        assert cell != "0.6"
        return 0.6 if cell == ">=0.6" else float(cell)

    for row in rows:
        assert value(row["delta_exact axes-3"]) == pytest.approx(base[row["id"]], abs=1e-8)
        if not row["delta_exact axes-3"].startswith(">=") and not row["delta_exact designed-2"].startswith(">="):
            assert float(row["delta_exact change"]) == pytest.approx(
                float(row["delta_exact designed-2"]) - float(row["delta_exact axes-3"]), abs=1e-8)
    at = sum(row["delta_exact axes-3"] == row["delta_exact designed-2"] == ">=0.6" for row in rows)
    diffs = [value(row["delta_exact designed-2"]) - value(row["delta_exact axes-3"]) for row in rows
             if not row["delta_exact axes-3"] == row["delta_exact designed-2"] == ">=0.6"]
    better, worse = sum(x > 1e-9 for x in diffs), sum(x < -1e-9 for x in diffs)
    assert "δ_exact (exactness margin): worst" in r.output
    assert (f"per structure {better} better, {3 - better - worse - at} the same, {worse} worse, {at} at --cap "
            "under both") in " ".join(r.output.split())
    # views named by the direction they look along: the file's rotation, third row negated, two decimals
    spec = read_protocol_file(tmp_path / "d" / "protocol.toml")
    for v in spec.protocol.views:
        d = -np.asarray(v.rotation)[2]
        assert v.name == "along" + "".join(f"{x:+.2f}".replace("-0.00", "+0.00") for x in d)
        assert re.fullmatch(r"along([+-]\d\.\d\d){3}", v.name)
    # a cap below every margin: every figure sits at it, and the line says so
    r = runner.invoke(app, ["design", str(tmp_path / "in"), "--views", "2", "--candidates", "fibonacci-10",
                            "--cap", "0.001", "-o", str(tmp_path / "e")])
    assert r.exit_code == 0, r.output
    said = " ".join(r.output.split())
    assert "δ_exact (exactness margin), the objective: worst 0.0010 Å (at --cap 0.001: at least this)" in said
    assert "per structure 0 better, 0 the same, 0 worse, 3 at --cap under both" in said
    assert {row["delta_exact designed-2"] for row in csv.DictReader((tmp_path / "e" / "comparison.csv").open())} == {
        ">=0.001"}  # marked as lower bounds, never a bare cap
