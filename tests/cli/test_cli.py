"""The main CLI: observe writes one JSON per structure; bad options are clear errors."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from viewcert.cli import app
from viewcert.observe.project import ViewObservation

runner = CliRunner()


def test_observe_builtin_sample_writes_observations(tmp_path):
    result = runner.invoke(app, ["observe", "builtin:sample", "--tiling", "1,1,1", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    files = sorted((tmp_path / "observations").glob("*.json"))
    assert len(files) == 9  # 7 prototypes (one per crystal system) + 2 molecules
    doc = json.loads(files[0].read_text())
    assert doc["protocol"]["name"] == "render-ceiling-5"
    assert round(doc["kappa"]["max"], 4) == 2.7321
    view = ViewObservation.from_dict(doc["observations"]["views"][0])
    n = len(doc["structure"]["numbers"])
    assert len(view) == n  # single cell, ideal centroids: every atom in every view
    assert np.isfinite(view.uv).all()
    assert "wrote 9 observation files" in result.output


def test_observe_is_deterministic(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert runner.invoke(app, ["observe", "builtin:sample", "--out", str(out)]).exit_code == 0
    for fa in sorted((a / "observations").glob("*.json")):
        assert fa.read_bytes() == (b / "observations" / fa.name).read_bytes()


def test_observe_tiled_counts(tmp_path):
    result = runner.invoke(app, ["observe", "builtin:sample", "--tiling", "2,2,2", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "observations" / "000.json").read_text())
    assert len(doc["observations"]["views"][0]["uv"]) == 8 * len(doc["structure"]["numbers"])


def test_observe_bad_tiling_is_a_clear_error(tmp_path):
    result = runner.invoke(app, ["observe", "builtin:sample", "--tiling", "2,2", "--out", str(tmp_path)])
    assert result.exit_code != 0
    assert "three positive integers" in result.output
