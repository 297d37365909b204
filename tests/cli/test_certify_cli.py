"""``viewcert certify | verify | sweep`` through typer's test runner."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.cli.certify import register


@pytest.fixture(scope="module")
def app():
    a = typer.Typer()
    register(a)
    return a


def test_certify_verify_and_tamper(app, tmp_path):
    r = CliRunner()
    out = tmp_path / "out"
    res = r.invoke(app, ["certify", "builtin:aflow:A_cF4_225_a", "--protocol", "render-ceiling-5", "--delta", "0.01",
                         "--symprec", "0.01", "--workers", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "R1 (crystal_system, truth = dataset): 1/1" in res.output and "lower bound" in res.output
    for name in ("certificate.json", "items.csv", "summary.txt", "run.json", "ceiling_by_system.png",
                 "phantoms.png"):
        assert (out / name).is_file(), name
    res = r.invoke(app, ["verify", str(out / "certificate.json"), "--workers", "1"])
    assert res.exit_code == 0, res.output
    assert "verified: 1 items recomputed, byte-identical" in res.output
    cert = json.loads((out / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    cert["tolerances"]["tau"] = 0.02
    (tmp_path / "bad.json").write_text(json.dumps(cert))
    res = r.invoke(app, ["verify", str(tmp_path / "bad.json"), "--workers", "1"])
    # a stale digest: one line, exit 2 (issue 26); --allow-stale-certificate recomputes and reports it
    assert res.exit_code == 2 and "stale certificate" in res.output and len(res.output.strip().splitlines()) == 1
    res = r.invoke(app, ["verify", str(tmp_path / "bad.json"), "--workers", "1", "--allow-stale-certificate"])
    assert res.exit_code == 1 and "MISMATCH" in res.output and "tolerances.tau" in res.output


def test_certify_rejects_bad_options(app, tmp_path):
    r = CliRunner()
    res = r.invoke(app, ["certify", "builtin:prototypes", "--tiling", "2,2", "--out", str(tmp_path)])
    assert res.exit_code != 0 and "tiling" in res.output
    res = r.invoke(app, ["certify", str(tmp_path / "nope"), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "does not exist" in res.output


def test_sweep_command(app, tmp_path):
    r = CliRunner()
    res = r.invoke(app, ["sweep", "builtin:aflow:A_hP4_194_bc", "--subsets", "--deltas", "0.01,0.1", "--workers", "1",
                         "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "subsets.csv").is_file() and (tmp_path / "deltas.csv").is_file()
    assert "axis_a|axis_b" in res.output
