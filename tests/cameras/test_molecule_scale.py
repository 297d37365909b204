"""Molecules are framed at one common Å-per-pixel scale by default (certify, render, gallery); a flag keeps
the per-view fit; crystals are always fitted per view (their camera digests do not move)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.cameras import get_protocol
from viewcert.cameras.policy import FramingPolicy, frame
from viewcert.certify import CertifyConfig
from viewcert.certify.digests import cameras_digest
from viewcert.certify.run import certify
from viewcert.errors import InputError
from viewcert.io.builtin import builtin
from viewcert.render.raster import frame_cameras
from viewcert.structures import Structure

# an elongated, non-planar molecule: per-view fits would give different scales
POS = np.array([[0.0, 0.0, 0.0], [1.5, 0.0, 0.0], [3.0, 0.4, 0.0], [4.5, 0.4, 0.9], [6.0, 0.0, 1.2]])
Z = np.array([6, 6, 8, 6, 7])


def molecule() -> Structure:
    return Structure(POS, Z)


def write_xyz(path) -> str:
    sym = {6: "C", 7: "N", 8: "O"}
    rows = [f"{sym[z]} {x:.6f} {y:.6f} {w:.6f}" for z, (x, y, w) in zip(Z, POS, strict=True)]
    lines = [str(len(Z)), "test molecule", *rows]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_frame_cameras_molecule_default_is_one_common_scale():
    s = molecule()
    common = frame_cameras(s, "axes-3", style="ball-and-stick", width=200, height=200)
    per_view = frame_cameras(s, "axes-3", style="ball-and-stick", width=200, height=200, molecule_scale="per-view")
    # axis-aligned views: each view's projected bounding box is centred on the projected 3D bounding-box
    # centre, so the common scale is the smallest per-view scale, and every view shares the 3D centre (3, 0.2, 0.6)
    scales = [c.scale for c in per_view]
    assert len(set(np.round(scales, 9))) > 1  # the per-view fit really differs between views
    assert all(c.scale == pytest.approx(min(scales), rel=1e-12) for c in common)
    for c in common:
        np.testing.assert_allclose(c.center, [3.0, 0.2, 0.6], atol=1e-12)


def test_crystal_cameras_do_not_move():
    (nacl,) = builtin("builtin:aflow:AB_cF8_225_a_b")
    a = frame_cameras(nacl, "render-ceiling-5", tiling=(2, 2, 2), width=256, height=256)
    b = frame_cameras(nacl, "render-ceiling-5", tiling=(2, 2, 2), width=256, height=256, molecule_scale="per-view")
    pad = 0.5 * 1.66  # study style: 0.5 × the largest covalent radius drawn (Na 1.66 Å)
    c = frame(get_protocol("render-ceiling-5"), nacl, FramingPolicy(width=256, height=256, tiling=(2, 2, 2), pad=pad))
    assert cameras_digest(a) == cameras_digest(b) == cameras_digest(c)


def test_certify_molecule_common_by_default_per_view_on_request(tmp_path):
    spec = write_xyz(tmp_path / "m.xyz")
    s = molecule()
    proto = get_protocol("axes-3")
    out = {}
    for scale in ("common", "per-view"):
        cfg = CertifyConfig(protocol="axes-3", molecule_cross_check=False, molecule_scale=scale)
        cert = certify(spec, cfg, out=tmp_path / scale, n_workers=1, plots=False, progress=False)
        assert_certificate_consistent(cert)
        (item,) = cert.items
        out[scale] = item.cameras_sha256
        assert out[scale] == cameras_digest(frame(proto, s, FramingPolicy(molecule_scale=scale)))
        assert ("molecule_scale" in cert.to_dict()["config"]) == (scale == "per-view")  # the default is left out
    assert out["common"] != out["per-view"]
    assert CertifyConfig().molecules.molecule_scale == "common"
    with pytest.raises(InputError, match="molecule_scale"):
        CertifyConfig(molecule_scale="zoom")


def test_certify_crystal_ignores_molecule_scale(tmp_path):
    digests = []
    for scale in ("common", "per-view"):
        cfg = CertifyConfig(protocol="axes-3", molecule_scale=scale)
        cert = certify("builtin:aflow:AB_cF8_225_a_b", cfg, out=tmp_path / scale, n_workers=1, plots=False,
                       progress=False)
        assert_certificate_consistent(cert)
        digests.append([it.cameras_sha256 for it in cert.items])
    assert digests[0] == digests[1]


def test_render_cli_molecule_scale(tmp_path):
    from viewcert.cli import app

    spec = write_xyz(tmp_path / "m.xyz")
    runner = CliRunner()
    scales = {}
    for flag in ("common", "per-view"):
        r = runner.invoke(app, ["render", spec, "-o", str(tmp_path / flag), "--protocol", "axes-3", "--size", "96",
                                "--supersample", "1", "--molecule-scale", flag])
        assert r.exit_code == 0, r.output
        sides = [json.loads((tmp_path / flag / f"m_{v}.json").read_text()) for v in ("front", "top", "left")]
        assert {sd["framing"]["scale"] for sd in sides} == {flag}
        scales[flag] = [sd["camera"]["scale_px_per_angstrom"] for sd in sides]
    assert len(set(scales["common"])) == 1 and len(set(scales["per-view"])) > 1  # front, top: x-limited
    assert scales["common"][0] == pytest.approx(min(scales["per-view"]), rel=1e-9)
    r = runner.invoke(app, ["render", spec, "-o", str(tmp_path / "bad"), "--molecule-scale", "zoom"])
    assert r.exit_code == 2 and "molecule-scale" in r.output and "Traceback" not in r.output
