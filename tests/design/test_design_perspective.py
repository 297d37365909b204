"""``viewcert design --camera perspective`` (``viewcert.design.perspective``): camera positions looking at
the molecule's bounding-box centre, the framing-rule distance worked by hand, file round-trip, and the
designed perspective cameras certify the molecule (Φ_δ = ∅, every atom, point group, handedness)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.export_fixtures import CHFCLBR_XYZ
from viewcert.cameras.protocol_files import read_protocol_file, write_protocol_file
from viewcert.certify.molecule import molecule_outcome
from viewcert.design.designer import DesignConfig, design_views
from viewcert.design.perspective import focal_px, perspective_spec, placed_cameras
from viewcert.errors import InputError
from viewcert.oracle.phantoms import analyse
from viewcert.oracle.triangulate import reconstruct
from viewcert.render.visibility import observe_as
from viewcert.structures import Structure

# a chiral 5-atom molecule (C with H, F, Cl, Br on a distorted tetrahedron), Å
POS = np.array([[0, 0, 0], [0.9, 0.7, 0.6], [-1.0, -0.8, 0.7], [-0.9, 1.1, -0.8], [1.0, -0.9, -1.1]], dtype=float)
Z = np.array([6, 1, 9, 17, 35])
XYZ = CHFCLBR_XYZ


def _mol() -> Structure:
    return Structure(positions=POS, numbers=Z)


@pytest.fixture(scope="module")
def designed():
    return design_views([_mol()], DesignConfig(views=3, candidates=24)).protocol


def test_positions_look_at_the_centre_at_the_framing_distance(designed, tmp_path):
    spec = perspective_spec(designed, _mol(), fov_deg=30.0, width=768, height=768, margin_px=16.0)
    # hand-worked: bounding-box centre (0, 0.1, -0.2); radius = farthest atom from it
    c = np.array([0.0, 0.1, -0.2])
    r = max(math.dist(p, c) for p in POS)
    t = (384 - 16) / (384 / math.tan(math.radians(15)))  # usable half-side / focal = tan of the half angle
    dist = r * math.sqrt(1 + 1 / t**2)  # sphere of radius r subtends exactly t at this distance
    for v, p in zip(designed.views, spec.positions, strict=True):
        off = np.asarray(p) - c
        assert np.linalg.norm(off) == pytest.approx(dist, rel=1e-12)
        assert off / np.linalg.norm(off) == pytest.approx(v.rotation[2], abs=1e-12)  # looks along −R[2] at c
    for cam in placed_cameras(spec):  # the centre projects to the image centre
        x = cam.rotation @ (c - cam.position)
        assert -x[2] > 0
        assert (cam.focal * x[0] / -x[2], cam.focal * x[1] / -x[2]) == pytest.approx((0.0, 0.0), abs=1e-9)
    assert placed_cameras(spec)[0].focal == pytest.approx(384 / math.tan(math.radians(15)), rel=1e-12)
    assert focal_px(90.0, 200, 100) == pytest.approx(50.0, rel=1e-12)
    spec20 = perspective_spec(designed, _mol(), distance=20.0)
    assert [np.linalg.norm(np.asarray(p) - c) for p in spec20.positions] == pytest.approx([20.0] * 3, rel=1e-12)
    with pytest.raises(InputError, match="field distance: must exceed"):
        perspective_spec(designed, _mol(), distance=r * 0.99)


def test_round_trip_and_certifies(designed, tmp_path):
    spec = perspective_spec(designed, _mol(), distance=25.0, fov_deg=25.0, width=320, height=240)
    back = read_protocol_file(write_protocol_file(spec, tmp_path / "p.toml"))
    assert back.kind == "perspective" and back.fov_deg == 25.0 and (back.width, back.height) == (320, 240)
    for a, b in zip(spec.protocol.views, back.protocol.views, strict=True):
        assert a.name == b.name and np.array_equal(a.rotation, b.rotation)  # bit-identical
    assert all(np.array_equal(np.asarray(p), np.asarray(q)) for p, q in zip(spec.positions, back.positions,
                                                                               strict=True))
    cams = placed_cameras(back)
    assert {c.kind for c in cams} == {"perspective"}
    s = _mol()
    obs = observe_as(s, cams, "ideal")
    rec = reconstruct(obs, delta=0.01, delta_unit="angstrom")
    rep = analyse(rec, s, 0.01)
    assert rec.status == "ok" and rep.unique and rep.exact and rep.n_points == 5
    out = molecule_outcome(s, obs, rec, rep, delta=0.01, tau=0.01, ideal=True)
    assert out.correct_by_level == {"uniqueness": True, "point_group": True, "handedness": True}
    assert out.point_group.input == "C1"  # no symmetry: four different substituents


def test_cli_perspective_design(tmp_path):
    (tmp_path / "m.xyz").write_text(XYZ)
    exe = Path(sys.executable).parent / "viewcert"
    run = [str(exe), "design", "m.xyz", "--views", "3", "--candidates", "fibonacci-24", "--camera", "perspective"]
    r = subprocess.run([*run, "-o", "d"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    spec = read_protocol_file(tmp_path / "d" / "protocol.toml")
    assert spec.kind == "perspective" and len(spec.protocol) == 3 and all(p is not None for p in spec.positions)
    r = subprocess.run([*run, "--distance", "1", "-o", "e"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=300)
    assert r.returncode != 0 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert r.stderr.startswith("viewcert: error:") and "distance" in r.stderr
