"""One ceiling per benchmark (issue 39, Build 2): ``certify``, ``render`` and ``build-benchmark`` read one set of
defaults (``viewcert.defaults``), and ``build-benchmark`` states both ceilings of its images, labelled, when they
differ: the geometric one (what ``certify`` reports on the same files with its defaults) and the as-rendered one
(its certificate), with every item that differs and the reason it lost.

The rutile case of the issue: NaCl, CsCl and rutile TiO2 (the certificate fixtures' CIFs). ``certify`` with its
defaults gives 3/3; the export at 128 px loses rutile's hidden atoms as rendered. Expected values are read from the
two certificates the commands write (``certify``'s and the export's), never from the printed lines."""

from __future__ import annotations

import inspect
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from viewcert import defaults
from viewcert.benchmark.settings import ExportSettings
from viewcert.certify import CertifyConfig
from viewcert.cli.main import app

CRYSTALS = Path(__file__).parents[1] / "data" / "certificates" / "v1" / "inputs" / "crystals"


def _option_default(command: str, name: str):
    """The default of a command's option, as Typer declares it."""
    (cmd,) = [c for c in app.registered_commands if (c.name or c.callback.__name__) == command]
    return inspect.signature(cmd.callback).parameters[name].default.default


def test_the_commands_share_one_set_of_defaults():
    assert defaults.TILING == (2, 2, 2) and defaults.TAU == defaults.DELTA == 0.01
    for command in ("build-benchmark", "render"):
        assert _option_default(command, "tiling") == "2,2,2", command
    # certify's: the protocol's (issue 57 item 8): a named study protocol's own, else the 2,2,2 exports draw
    assert _option_default("certify", "tiling") is None
    assert CertifyConfig(protocol="axes-3", tiling=None).observation.tiling == defaults.TILING
    assert CertifyConfig(tiling=None).observation.tiling == (1, 1, 1)  # render-ceiling-5: the study's one cell
    assert _option_default("certify", "delta") == _option_default("build-benchmark", "delta") == defaults.DELTA
    assert _option_default("certify", "angle_tolerance") == defaults.ANGLE_TOLERANCE
    assert _option_default("certify", "observe") == defaults.GEOMETRIC == "ideal"
    s = ExportSettings.from_options()
    assert (s.tiling, s.tau, s.std_angle_tolerance) == (defaults.TILING, defaults.TAU, defaults.ANGLE_TOLERANCE)
    c = CertifyConfig()
    assert (c.symmetry.angle_tolerance, c.symmetry.std_angle_tolerance, c.oracle.delta) == (5.0, 5.0, 0.01)


@pytest.fixture(scope="module")
def rutile_case(tmp_path_factory):
    root = tmp_path_factory.mktemp("rutile")
    (root / "in").mkdir()
    for name in ("NaCl", "CsCl", "TiO2"):
        shutil.copy(CRYSTALS / f"{name}.cif", root / "in" / f"{name}.cif")
    run = CliRunner()
    # the export draws 2,2,2; render-ceiling-5 alone would certify the study's single cell (issue 57 item 8)
    cert = run.invoke(app, ["certify", str(root / "in"), "--tiling", "2,2,2", "--out", str(root / "cert"),
                            "--workers", "1"])
    assert cert.exit_code == 0, cert.output
    bench = run.invoke(app, ["build-benchmark", str(root / "in"), "--out", str(root / "bench"), "--size", "128"])
    assert bench.exit_code == 0, bench.output
    return root, bench.output


def _items(path: Path) -> dict:
    return {it["id"]: it for it in json.loads(path.read_text())["items"]}


def test_build_benchmark_states_both_ceilings_with_the_reason(rutile_case):
    root, out = rutile_case
    geometric = _items(root / "cert" / "certificate.json")  # viewcert certify, default settings
    rendered = _items(root / "bench" / "certificate.json")  # the export's certificate: its images
    g, r = sum(i["correct"] for i in geometric.values()), sum(i["correct"] for i in rendered.values())
    assert (g, r) == (3, 2) and not rendered["TiO2"]["correct"]
    assert "missing_atoms" in rendered["TiO2"]["reasons"]
    lines = out.splitlines()
    assert any(x.startswith("ceiling R1 = 2/3 as rendered (the atoms the shipped images show)") for x in lines)
    assert any(x.startswith("geometric ceiling R1 = 3/3 (every atom, exact projection: what `viewcert certify` "
                            "reports with the same settings); they differ on:") for x in lines)
    assert f"  TiO2: right geometric, lost as rendered ({', '.join(rendered['TiO2']['reasons'])})" in lines
    both = json.loads((root / "bench" / "manifest.json").read_text())["details"]["ceilings"]
    assert (both["geometric"]["correct"], both["as_rendered"]["correct"]) == (g, r)
    assert [d["id"] for d in both["differ"]] == ["TiO2"]
    # the geometric ceiling is certify's, item by item: the same cells, cameras, tiling, δ, τ
    cfg = json.loads((root / "bench" / "certificate.json").read_text())["config"]
    assert (cfg["tiling"], cfg["delta"], cfg["observe"]) == ([2, 2, 2], 0.01, "visible")
    assert json.loads((root / "cert" / "certificate.json").read_text())["config"]["tiling"] == [2, 2, 2]
