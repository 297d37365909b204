"""The design commands: protocol show → file → margin/occlusion/design, and one-line errors."""

from __future__ import annotations

import csv
import json

import numpy as np
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
