"""A perspective protocol file draws the images through the same pinholes certify places (issue 14): the
render command, build-benchmark, observe and the sweep's noise cross-check honour the file's kind, fov, size
and positions; an explicit orthographic kind with such a file is one line, exit 2.

Hand-worked positions: axes-3 pinholes 20 Å from the origin along each camera's +z (rows of R: front from +z,
top from +y, left from −x; docs/conventions.md) sit at (0, 0, 20), (0, 20, 0) and (−20, 0, 0)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.molecule_geometries import methane
from tests.support.perspective_files import NACL_CIF, _axes3_file, _toml
from viewcert.api.main import observe_sample
from viewcert.benchmark.settings import ExportSettings
from viewcert.certify import CertifyConfig
from viewcert.certify.evaluate import item_cameras
from viewcert.cli import app
from viewcert.errors import InputError
from viewcert.io.cif import read_cif_text
from viewcert.render.raster import frame_cameras
from viewcert.structures import Structure
from viewcert.symmetry.standardize import conventional_standard_cell

POSITIONS = {"front": (0.0, 0.0, 20.0), "top": (0.0, 20.0, 0.0), "left": (-20.0, 0.0, 0.0)}


def _methane() -> Structure:
    pos, z = methane()
    return Structure(pos, z)


def _same_cameras(a, b) -> None:
    assert [c.name for c in a] == [c.name for c in b]
    for x, y in zip(a, b, strict=True):
        assert x.kind == y.kind == "perspective"
        assert np.array_equal(x.rotation, y.rotation) and np.array_equal(x.position, y.position)
        assert x.focal == y.focal and (x.width, x.height) == (y.width, y.height)


def test_render_cameras_are_the_certified_pinholes_at_the_files_positions(tmp_path):
    p = _axes3_file(tmp_path)
    s = _methane()
    cams = frame_cameras(s, str(p))
    _same_cameras(cams, item_cameras(s, CertifyConfig(protocol=str(p))))
    assert {c.name: tuple(c.position) for c in cams} == POSITIONS
    assert frame_cameras(s, str(p), kind="perspective")[0].focal == cams[0].focal  # agreeing kind accepted
    with pytest.raises(InputError, match="kind = 'orthographic' disagrees") as exc:
        frame_cameras(s, str(p), kind="orthographic")
    assert exc.value.field == "kind"


def test_framed_pinholes_of_a_crystal_equal_certifys(tmp_path):
    """No positions: the framing rule on the drawn points of the 2×2×2 tiling, in render and certify alike."""
    from tests.support.perspective_files import FRONT, LEFT, TOP

    p = tmp_path / "framed.toml"
    p.write_text(_toml([("front", FRONT, None), ("top", TOP, None), ("left", LEFT, None)]))
    cell = conventional_standard_cell(read_cif_text(NACL_CIF, identifier="nacl"))
    cams = frame_cameras(cell, str(p), tiling=(2, 2, 2))
    _same_cameras(cams, item_cameras(cell, CertifyConfig(protocol=str(p), tiling=(2, 2, 2))))
    centre = 0.5 * np.array([2 * 5.64] * 3)  # the 2×2×2 drawing's bounding-box centre, Å
    for c in cams:  # each pinhole looks at the centre along its own view direction
        d = centre - c.position
        assert np.allclose(d / np.linalg.norm(d), -c.rotation[2], atol=1e-12)


def _xyz(tmp_path) -> str:
    pos, z = methane()
    sym = {1: "H", 6: "C"}
    f = tmp_path / "methane.xyz"
    f.write_text(f"{len(z)}\nmethane\n" + "".join(f"{sym[int(k)]} {x:.10f} {y:.10f} {w:.10f}\n"
                                                  for k, (x, y, w) in zip(z, pos, strict=True)))
    return str(f)


def test_render_command_draws_through_the_file(tmp_path):
    p = _axes3_file(tmp_path)
    runner = CliRunner()
    res = runner.invoke(app, ["render", _xyz(tmp_path), "--protocol", str(p), "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    side = {v: json.loads((tmp_path / "r" / f"methane_{v}.json").read_text()) for v in POSITIONS}
    for v, pos in POSITIONS.items():
        cam = side[v]["camera"]
        assert cam["kind"] == "perspective" and tuple(cam["position"]) == pos
        assert (cam["width"], cam["height"]) == (768, 768)  # the file's size
        assert side[v]["framing"]["method"].startswith("perspective protocol file")
    res = runner.invoke(app, ["render", _xyz(tmp_path), "--protocol", str(p), "--kind", "orthographic",
                              "--out", str(tmp_path / "r2")])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "kind = 'orthographic' disagrees" in res.output and len(res.output.strip().splitlines()) == 1


def test_build_benchmark_images_use_the_certified_pinholes(tmp_path):
    p = _axes3_file(tmp_path)
    out = tmp_path / "b"
    res = CliRunner().invoke(app, ["build-benchmark", _xyz(tmp_path), "--task", "point-group", "--protocol", str(p),
                                   "--out", str(out), "--workers", "1"])
    assert res.exit_code == 0, res.output
    sides = sorted((out / "sidecars").glob("*.json"))
    assert len(sides) == 3
    got = {json.loads(f.read_text())["view"]: json.loads(f.read_text())["camera"] for f in sides}
    assert {v: tuple(c["position"]) for v, c in got.items()} == POSITIONS
    cert = json.loads((out / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert cert["protocol"]["camera"]["kind"] == "perspective"
    assert {v["name"]: tuple(v["position"]) for v in cert["protocol"]["views"]} == POSITIONS
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["details"]["protocol"]["protocol"]["kind"] == "perspective"  # the spec as the file states it
    assert {v["name"]: tuple(v["position"]) for v in manifest["details"]["protocol"]["views"]} == POSITIONS


def test_export_settings_refuse_a_kind_the_protocol_does_not_certify(tmp_path):
    p = _axes3_file(tmp_path)
    assert ExportSettings.from_options(protocol=str(p)).image.kind == "perspective"
    assert ExportSettings.from_options().image.kind == "orthographic"  # a name: orthographic, as certify frames it
    with pytest.raises(InputError, match="disagrees"):
        ExportSettings.from_options(protocol=str(p), kind="orthographic")
    with pytest.raises(InputError, match="perspective images need a perspective protocol file"):
        ExportSettings.from_options(protocol="axes-3", kind="perspective")


def test_observe_writes_the_files_pinholes(tmp_path):
    p = _axes3_file(tmp_path)
    observe_sample([_methane()], tmp_path / "o", protocol_name=str(p))
    d = json.loads((tmp_path / "o" / "observations" / "000.json").read_text())
    cams = [v["camera"] for v in d["observations"]["views"]]
    assert {c["name"]: (c["kind"], tuple(c["position"])) for c in cams} == {
        v: ("perspective", pos) for v, pos in POSITIONS.items()}
    assert {v["name"]: tuple(v["position"]) for v in d["protocol"]["views"]} == POSITIONS
