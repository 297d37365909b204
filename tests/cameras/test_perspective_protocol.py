"""Perspective protocol files, end to end (issue 14): ``viewcert.cameras.placement`` worked by hand, certify of
molecules and crystals through pinholes at the file's positions (or framed on the drawn points), the
independence criterion, certificates that verify (and report an edited file), and hostile files on the CLI."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.molecule_geometries import ammonia, bromochlorofluoromethane, methane, water
from tests.support.perspective_files import A_NACL, FRONT, LEFT, NACL_CIF, TOP, _axes3_file, _toml
from viewcert.cameras.camera import OrthographicCamera, PerspectiveCamera
from viewcert.cameras.placement import (
    check_placement,
    focal_px,
    framed_cameras,
    placed_cameras,
    spec_cameras,
)
from viewcert.cameras.protocol_files import ProtocolSpec, read_protocol_file
from viewcert.cameras.protocols import Protocol, View, get_protocol
from viewcert.certify import CertifyConfig
from viewcert.certify.digests import cell_digest
from viewcert.certify.evaluate import certify_item, independent_views, item_cameras
from viewcert.certify.inputs import Item
from viewcert.errors import InputError
from viewcert.structures import Structure


def _rc5_file(tmp_path, centre, distance, name="rc5p.toml", positions=True):
    """The study's five directions as pinholes ``distance`` Å from ``centre`` (or without positions)."""
    c = np.asarray(centre, dtype=float)
    views = [(v.name, v.rotation, tuple(c + distance * v.rotation[2]) if positions else None)
             for v in get_protocol("render-ceiling-5").views]
    p = tmp_path / name
    p.write_text(_toml(views))
    return p


def _mol(builder) -> Structure:
    pos, z = builder()
    return Structure(positions=pos, numbers=z)


def _item(name: str, s: Structure) -> Item:
    return Item(name, "structure", s, cell_digest(s))


# ----------------------------------------------------------------------------- placement, by hand
def test_pinhole_on_the_z_axis_projects_to_the_hand_worked_pixel():
    """fov 90° over 200 px: f = 100 / tan 45° = 100 px. Camera at (0, 0, 10), R = I: (1, 2, 0) has depth
    10, u = 100 + 100·1/10 = 110, v = 100 − 100·2/10 = 80."""
    spec = ProtocolSpec(Protocol("z", (View("front", FRONT), View("top", TOP))), kind="perspective", fov_deg=90.0,
                        width=200, height=200, positions=((0.0, 0.0, 10.0), (0.0, 10.0, 0.0)))
    cam = placed_cameras(spec)[0]
    assert cam.focal == pytest.approx(100.0, rel=1e-12)
    uv, depth = cam.project(np.array([1.0, 2.0, 0.0]))
    assert uv == pytest.approx([110.0, 80.0], abs=1e-9) and depth == pytest.approx(10.0, abs=1e-12)
    # fov 60° over the smaller side (200 of 300×200): f = 100·√3 = 173.2050808 px; camera at (0, 0, 20):
    # (2, −1, 5) at depth 15 → u = 150 + f·2/15 = 173.0940108, v = 100 + f·1/15 = 111.5470054
    spec60 = ProtocolSpec(spec.protocol, kind="perspective", fov_deg=60.0, width=300, height=200,
                          positions=((0.0, 0.0, 20.0), (0.0, 20.0, 0.0)))
    assert focal_px(60.0, 300, 200) == pytest.approx(173.2050808, abs=1e-7)
    uv, depth = placed_cameras(spec60)[0].project(np.array([2.0, -1.0, 5.0]))
    assert uv == pytest.approx([173.0940108, 111.5470054], abs=1e-6) and depth == pytest.approx(15.0)
    # the top camera at (0, 10, 0) looks down −y: (1, 2, 0) at depth 8, screen y = −z = 0 → v = 100
    uv, depth = placed_cameras(spec)[1].project(np.array([1.0, 2.0, 0.0]))
    assert uv == pytest.approx([100.0 + 100.0 / 8.0, 100.0], abs=1e-9) and depth == pytest.approx(8.0)


def test_framing_rule_distance_by_hand_and_the_same_for_every_view():
    """Points (±1, 0, 0) and (0, 0, ±0.5): box centre 0, sphere radius 1. fov 90°, 200 px, margin 0: f = 100,
    usable half side 100 px, tan = 1, so the sphere fits at D = r·√(1 + 1/1²) = √2 Å from the centre."""
    pts = np.array([[1.0, 0, 0], [-1.0, 0, 0], [0, 0, 0.5], [0, 0, -0.5]])
    spec = ProtocolSpec(Protocol("z", (View("front", FRONT), View("top", TOP), View("left", LEFT))),
                        kind="perspective", fov_deg=90.0, width=200, height=200)
    cams = framed_cameras(spec, pts, margin_px=0.0)
    for cam, r in zip(cams, (FRONT, TOP, LEFT), strict=True):
        assert cam.position == pytest.approx(math.sqrt(2.0) * r[2], abs=1e-12)
        assert cam.project(np.zeros(3))[0] == pytest.approx([100.0, 100.0], abs=1e-9)  # centre → image centre
    # with the default 16 px margin: usable 84 px, tan = 0.84, D = √(1 + 1/0.84²)
    d16 = math.sqrt(1.0 + 1.0 / 0.84**2)
    assert [float(np.linalg.norm(c.position)) for c in spec_cameras(spec, pts)] == pytest.approx([d16] * 3, rel=1e-12)


def test_placement_refuses_a_camera_inside_or_a_point_behind():
    pts = np.array([[2.0, 0, 0], [-2.0, 0, 0]])  # sphere: centre 0, radius 2
    inside = PerspectiveCamera(rotation=FRONT, position=[0.0, 0.0, 1.99], focal=100.0, width=64, height=64,
                               name="front")
    with pytest.raises(InputError, match=r"field views\[front\]\.position: camera 'front' .* inside"):
        check_placement([inside], pts)
    # outside the sphere but looking away from it (view direction +z from z = 5): every point is behind
    away = PerspectiveCamera(rotation=np.diag([-1.0, 1.0, -1.0]), position=[0.0, 0.0, 5.0], focal=100.0, width=64,
                             height=64, name="away")
    with pytest.raises(InputError, match=r"views\[away\]\.position: .*depth -5 Å, at or behind"):
        check_placement([away], pts)
    check_placement([inside.__class__(rotation=FRONT, position=[0.0, 0.0, 2.01], focal=100.0, width=64,
                                      height=64, name="front")], pts)  # just outside: accepted


def test_positions_for_some_views_only_are_refused_naming_the_view():
    spec = ProtocolSpec(Protocol("z", (View("front", FRONT), View("top", TOP))), kind="perspective",
                        positions=((0.0, 0.0, 10.0), None))
    with pytest.raises(InputError, match=r"views\[top\]\.position: view 'top' has no camera position"):
        spec_cameras(spec, np.zeros((1, 3)))
    with pytest.raises(InputError, match=r"views\[top\]\.position"):
        CertifyConfig(protocol=spec)


# ----------------------------------------------------------------------------- independence
def _pin(pos, name="c"):
    return PerspectiveCamera(rotation=FRONT, position=pos, focal=100.0, width=64, height=64, name=name)


def test_independent_views_perspective_criterion_by_hand():
    a, b, c = _pin([0.0, 0, 10]), _pin([10.0, 0, 0]), _pin([0.0, 10, 0])
    # two pinholes: the baseline from (0, 0, 10) to (10, 0, 0) holds (5, 0, 5); a point there is undetermined
    assert independent_views([a, b], np.array([[0.0, 0, 0]]))
    assert not independent_views([a, b], np.array([[0.0, 0, 0], [5.0, 0, 5.0]]))
    assert not independent_views([a, b])  # collinear centres and no points: not claimed
    assert independent_views([a, b, c])  # three non-collinear centres determine every point
    assert not independent_views([a, _pin([0.0, 0, 10])], np.array([[1.0, 2, 3]]))  # one centre twice
    # three collinear centres (on the x axis) and an atom on that axis
    line = [_pin([-10.0, 0, 0]), _pin([10.0, 0, 0]), _pin([20.0, 0, 0])]
    assert not independent_views(line, np.array([[0.0, 0, 0]]))
    assert independent_views(line, np.array([[0.0, 1e-3, 0]]))
    # orthographic: rank of the stacked 2×3 projections (unchanged), mixing kinds is never independent
    o = [OrthographicCamera(rotation=r, center=np.zeros(3), scale=10.0, width=64, height=64) for r in (FRONT, TOP)]
    assert independent_views(o) and not independent_views(o[:1]) and not independent_views([o[0], a])


# ----------------------------------------------------------------------------- certify molecules
@pytest.mark.parametrize("builder, group", [(bromochlorofluoromethane, "C1"), (water, "C2v"), (ammonia, "C3v")])
def test_molecule_from_a_perspective_file_same_point_group_as_orthographic(builder, group, tmp_path):
    s = _mol(builder)
    persp = certify_item(_item("m", s), CertifyConfig(protocol=str(_axes3_file(tmp_path)))).to_dict()
    ortho = certify_item(_item("m", s), CertifyConfig(protocol="axes-3")).to_dict()
    assert persp["outcome"] == "correct" and ortho["outcome"] == "correct", (persp.get("reasons"), persp.get("error"))
    assert persp["oracle"]["n_phantoms"] == 0 and persp["oracle"]["n_recovered"] == len(s.numbers)
    pg_p, pg_o = persp["molecule"]["point_group"], ortho["molecule"]["point_group"]
    assert pg_p["input"] == pg_o["input"] == group  # the chemistry's point group
    assert pg_p["reconstructed"] == pg_o["reconstructed"] == group
    assert persp["independent_views"] is True and persp["certified"] is True
    # the file's positions, recorded per view: front at (0, 0, 20), top (0, 20, 0), left (−20, 0, 0)
    assert persp["camera_positions"] == {"front": [0.0, 0.0, 20.0], "top": [0.0, 20.0, 0.0], "left": [-20.0, 0.0, 0.0]}


def test_methane_through_axis_pinholes_has_the_one_hand_worked_phantom(tmp_path):
    """Methane's H at a·(s1, s2, s3) with s1·s2·s3 = +1, a = 1.09/√3 Å. A point t·(s1, s2, s3) of the other
    tetrahedron (product −1) meets an H's ray from the front pinhole (0, 0, 20) when t/(20 − s3·t) =
    a/(20 + s3·a), from the top pinhole (0, 20, 0) when t/(20 − s2·t) = a/(20 + s2·a), from the left pinhole
    (−20, 0, 0) when t/(20 + s1·t) = a/(20 − s1·a). All three with one t only for (s1, s2, s3) = (−, +, +):
    one phantom at t·(−1, 1, 1), t = 20a/(20 + 2a). Orthographic axis views (no parallax) admit all four
    vertices of the other tetrahedron."""
    s = _mol(methane)
    persp = certify_item(_item("ch4", s), CertifyConfig(protocol=str(_axes3_file(tmp_path)))).to_dict()
    a = 1.09 / math.sqrt(3.0)
    t = 20.0 * a / (20.0 + 2.0 * a)
    assert persp["oracle"]["n_phantoms"] == 1 and persp["phantoms"][0][0] == 1  # a hydrogen
    assert persp["phantoms"][0][1:] == pytest.approx([-t, t, t], abs=1e-6)
    ortho = certify_item(_item("ch4", s), CertifyConfig(protocol="axes-3")).to_dict()
    assert ortho["oracle"]["n_phantoms"] == 4
    assert sorted(np.sign(np.array(ortho["phantoms"])[:, 1:]).prod(axis=1).tolist()) == [-1.0] * 4


def test_the_file_cameras_are_exactly_the_file(tmp_path):
    s = _mol(bromochlorofluoromethane)
    cams = item_cameras(s, CertifyConfig(protocol=str(_axes3_file(tmp_path, distance=12.5)), image_size=64))
    f = 384.0 / math.tan(math.radians(15.0))  # fov 30° over 768 px (the file's size, not image_size)
    for cam, r in zip(cams, (FRONT, TOP, LEFT), strict=True):
        assert isinstance(cam, PerspectiveCamera) and (cam.width, cam.height) == (768, 768)
        assert np.array_equal(cam.rotation, r) and cam.position == pytest.approx(12.5 * r[2], abs=0)
        assert cam.focal == pytest.approx(f, rel=1e-12)


def test_views_subset_keeps_each_views_position(tmp_path):
    cfg = CertifyConfig(protocol=str(_axes3_file(tmp_path)), views=("left", "front"))
    cams = item_cameras(_mol(water), cfg)
    assert [c.name for c in cams] == ["front", "left"]  # protocol order
    assert cams[1].position == pytest.approx([-20.0, 0.0, 0.0], abs=0)


# ----------------------------------------------------------------------------- certify crystals
def _nacl(tmp_path):
    p = tmp_path / "nacl.cif"
    p.write_text(NACL_CIF)
    return p


def test_crystal_from_a_perspective_file_gets_the_rendered_cubic_system(tmp_path):
    """NaCl's conventional cell (a = 5.64 Å) drawn 2×2×2: cameras 40 Å from the drawn box's centre
    (a, a, a) along the study's five directions; every atom recovered, no phantom, cubic as rendered."""
    f = _rc5_file(tmp_path, centre=(A_NACL,) * 3, distance=40.0)
    cfg = CertifyConfig(protocol=str(f), tiling=(2, 2, 2))
    rec = certify_item(Item("nacl", "file", str(_nacl(tmp_path)), "x"), cfg).to_dict()
    assert rec["outcome"] == "correct", rec.get("error") or rec.get("reasons")
    assert rec["label_rendered"]["crystal_system"] == rec["label_reconstructed"]["crystal_system"] == "cubic"
    assert rec["label_reconstructed"]["space_group"] == 225  # Fm-3m, the rock salt's group
    assert rec["oracle"]["n_phantoms"] == 0 and rec["oracle"]["n_recovered"] == 8
    assert rec["camera_positions"]["axis_c"] == pytest.approx([A_NACL, A_NACL, A_NACL + 40.0], abs=1e-6)


def test_simple_cubic_framed_by_the_rule_is_cubic():
    """Simple cubic (one atom, a = 3.35 Å) drawn 2×2×2, no positions in the protocol: the framing rule."""
    s = Structure(positions=[[0.0, 0.0, 0.0]], numbers=[84], lattice=np.eye(3) * 3.35)
    rc5 = get_protocol("render-ceiling-5")
    spec = ProtocolSpec(rc5, kind="perspective", fov_deg=30.0)
    rec = certify_item(_item("po", s), CertifyConfig(protocol=spec, tiling=(2, 2, 2))).to_dict()
    assert rec["outcome"] == "correct" and rec["label_reconstructed"]["crystal_system"] == "cubic"
    assert rec["label_reconstructed"]["space_group"] == 221  # Pm-3m
    # framed: all five cameras the same distance from the drawn box's centre (3.35, 3.35, 3.35)
    d = [np.linalg.norm(np.asarray(p) - 3.35) for p in rec["camera_positions"].values()]
    assert max(d) - min(d) < 1e-6 and min(d) > 3.35 * math.sqrt(3)  # outside the sphere of the 2×2×2 box


def test_margin_is_recorded_as_orthographic_only(tmp_path):
    rec = certify_item(_item("m", _mol(water)), CertifyConfig(protocol=str(_axes3_file(tmp_path)), margin=True)).to_dict()
    assert rec["uniqueness_margin"]["delta_star"] is None
    assert "orthographic views only" in rec["uniqueness_margin"]["error"]


# ----------------------------------------------------------------------------- certificates
def test_certificate_records_the_cameras_verifies_and_reports_an_edited_file(tmp_path):
    from viewcert.certify.run import certify
    from viewcert.certify.verify import verify_certificate

    nacl = _nacl(tmp_path)
    f = _rc5_file(tmp_path, centre=(A_NACL / 2,) * 3, distance=30.0)
    cert = certify(str(nacl), CertifyConfig(protocol=str(f)), out=tmp_path / "o", n_workers=1, plots=False,
                   progress=False).to_dict()  # the JSON object: the test is about what is written
    assert_certificate_consistent(cert)
    cam = cert["protocol"]["camera"]
    assert (cam["kind"], cam["fov_deg"], cam["width"], cam["height"]) == ("perspective", 30.0, 768, 768)
    # written at its stated resolution, 1e-9 px (viewcert.resolution)
    assert cam["focal_px"] == pytest.approx(384.0 / math.tan(math.radians(15.0)), abs=0.5e-9)
    views = {v["name"]: v for v in cert["protocol"]["views"]}
    assert views["axis_c"]["rotation"] == FRONT.tolist()  # ASE "0x,0y,0z"
    assert views["axis_c"]["position"] == pytest.approx([2.82, 2.82, 32.82], abs=1e-12)
    assert cert["protocol"]["file"]["sha256"] == read_protocol_file(f).sha256
    assert cert["summary"]["correct"] == 1
    rep = verify_certificate(tmp_path / "o" / "certificate.json", input_spec=str(nacl), n_workers=1, progress=False,
                             inputs_root=tmp_path)  # the protocol file is found inside the trusted folder only
    assert rep.ok and rep.byte_identical
    f.write_text(f.read_text().replace("32.82", "32.5"))  # the axis_c camera moved by 0.32 Å
    rep = verify_certificate(tmp_path / "o" / "certificate.json", input_spec=str(nacl), n_workers=1, progress=False,
                             inputs_root=tmp_path)  # the protocol file is found inside the trusted folder only
    # the edited file is not parsed (issue 38: its recorded SHA-256 is checked before anything reads the bytes):
    # an input change naming both digests, nothing recomputed
    assert not rep.ok and not rep.section_diffs and not rep.item_diffs
    new_sha = hashlib.sha256(f.read_bytes()).hexdigest()
    assert [c for c in rep.input_changes if c.startswith("protocol file:") and new_sha in c
            and cert["protocol"]["file"]["sha256"] in c]


def test_config_round_trips_a_perspective_spec_object():
    spec = ProtocolSpec(Protocol("z", (View("front", FRONT), View("top", TOP))), kind="perspective", fov_deg=45.0,
                        width=320, height=240, positions=((0.0, 0.0, 9.0), (0.0, 9.0, 0.0)))
    cfg = CertifyConfig(protocol=spec)
    back = CertifyConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert back.to_dict() == cfg.to_dict()
    s = _mol(water)
    for a, b in zip(item_cameras(s, cfg), item_cameras(s, back), strict=True):
        assert a.to_dict() == b.to_dict()
    ortho = CertifyConfig(protocol=ProtocolSpec(spec.protocol))  # orthographic spec: recorded as its Protocol
    assert ortho.protocol.protocol is spec.protocol and ortho.protocol.kind == "orthographic"
    assert ortho.to_dict()["protocol"] == CertifyConfig(protocol=spec.protocol).to_dict()["protocol"]


# ----------------------------------------------------------------------------- hostile files on the CLI
def _cli(argv):
    from viewcert.cli import app

    res = CliRunner().invoke(app, argv)
    return res, res.output


CHFCLBR = "5\nchfclbr\nC 0 0 0\nH 0.9 0.7 0.6\nF -1.0 -0.8 0.7\nCl -0.9 1.1 -0.8\nBr 1.0 -0.9 -1.1\n"


@pytest.mark.parametrize("name, text, fragment", [
    ("inside", _toml([("front", FRONT, (0, 0, 0.5)), ("top", TOP, (0, 20, 0))]),
     "field views[front].position: camera 'front' at (0, 0, 0.5) Å lies inside"),
    ("behind", _toml([("front", np.diag([-1.0, 1, -1]), (0, 0, 20)), ("top", TOP, (0, 20, 0))]),
     "field views[front].position: camera 'front': the drawn point"),
    ("fov0", _toml([("front", FRONT, None), ("top", TOP, None)], fov="0"), "field protocol.fov_deg"),
    ("fov180", _toml([("front", FRONT, None), ("top", TOP, None)], fov="180"), "field protocol.fov_deg"),
    ("fovnan", _toml([("front", FRONT, None), ("top", TOP, None)], fov="nan"), "fov_deg must be in (0, 180)"),
    ("missing", _toml([("front", FRONT, (0, 0, 20)), ("top", TOP, None)]),
     "field views[top].position: view 'top' has no camera position"),
    ("oneview", _toml([("front", FRONT, (0, 0, 20))]), "needs at least two views"),
    ("position2", _toml([("front", FRONT, None), ("top", TOP, None)]).replace(
        'name = "top"\n', 'name = "top"\nposition = [1, 2]\n'), "views[top].position: needs 3 numbers"),
])
def test_hostile_perspective_files_are_one_line_exit_2(name, text, fragment, tmp_path):
    (tmp_path / "m.xyz").write_text(CHFCLBR)
    (tmp_path / "p.toml").write_text(text)
    res, out = _cli(["certify", str(tmp_path / "m.xyz"), "--protocol", str(tmp_path / "p.toml"), "--workers", "1",
                     "--no-plots", "--out", str(tmp_path / "o")])
    assert "Traceback" not in out and res.exit_code == 2, out
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("viewcert: error:") and fragment in lines[0], out
    assert not (tmp_path / "o" / "certificate.json").exists()  # refused before the work


def test_cli_views_naming_a_view_the_file_lacks(tmp_path):
    (tmp_path / "m.xyz").write_text(CHFCLBR)
    f = _axes3_file(tmp_path)
    res, out = _cli(["certify", str(tmp_path / "m.xyz"), "--protocol", str(f), "--only-views", "front,back",
                     "--workers", "1", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "Traceback" not in out and "has no view 'back'" in out


def test_cli_certifies_a_molecule_and_a_crystal_from_one_perspective_file(tmp_path):
    (tmp_path / "m.xyz").write_text(CHFCLBR)
    f = _rc5_file(tmp_path, (0, 0, 0), 0.0, positions=False)  # no positions: framed on each structure
    for k, inp in enumerate((str(tmp_path / "m.xyz"), str(_nacl(tmp_path)))):  # one output folder per run
        res, out = _cli(["certify", inp, "--protocol", str(f), "--workers", "1", "--no-plots", "--truth", "rendered",
                         "--out", str(tmp_path / f"o{k}")])
        assert res.exit_code == 0, out
        cert = json.loads((tmp_path / f"o{k}" / "certificate.json").read_text())
        assert_certificate_consistent(cert)
        assert cert["protocol"]["camera"]["kind"] == "perspective" and cert["summary"]["correct"] == 1


# ----------------------------------------------------------------------------- transformation-task export
def _task_settings(protocol, **kw):
    from viewcert.benchmark.tasks_export import TaskExportSettings

    return TaskExportSettings.from_options(protocol=str(protocol), width=240, height=180, supersample=1, **kw)


def test_task_export_takes_kind_fov_and_positions_from_a_perspective_file(tmp_path):
    from viewcert.benchmark.tasks_export import sample_questions

    f = _axes3_file(tmp_path, distance=20.0, fov="90.0")
    st = _task_settings(f, task="rotation", seed=2)
    assert st.image.kind == "perspective" and st.view_setup().fov_deg == 90.0
    s = _mol(bromochlorofluoromethane)
    ((item, _),) = sample_questions([("m", s.positions, s.numbers)], st)
    # fov 90° over the smaller side (180 px): f = 90 / tan 45° = 90 px; the file's positions, unchanged
    for cam, r in zip(item.cameras, (FRONT, TOP, LEFT), strict=True):
        assert isinstance(cam, PerspectiveCamera) and cam.focal == pytest.approx(90.0, rel=1e-12)
        assert np.array_equal(cam.rotation, r) and cam.position == pytest.approx(20.0 * r[2], abs=0)
    assert item.after_camera.name == "front"
    # the carbon at the origin: front pinhole at (0, 0, 20) → the image centre (120, 90)
    assert item.after_camera.project(np.zeros(3))[0] == pytest.approx([120.0, 90.0], abs=1e-12)


def test_task_export_framed_perspective_file_uses_its_fov(tmp_path):
    from viewcert.benchmark.tasks_export import sample_questions

    f = tmp_path / "framed.toml"
    f.write_text(_toml([(n, r, None) for n, r in (("front", FRONT), ("top", TOP), ("left", LEFT))], fov="50.0"))
    st = _task_settings(f, task="rotation")
    s = _mol(bromochlorofluoromethane)
    ((item, _),) = sample_questions([("m", s.positions, s.numbers)], st)
    assert st.image.kind == "perspective"
    f50 = 90.0 / math.tan(math.radians(25.0))  # fov 50° over the 180 px side
    assert [c.focal for c in item.cameras] == pytest.approx([f50] * 3, rel=1e-12)


def test_task_export_conflicts_and_bad_placements_are_one_line_errors(tmp_path):
    f = _axes3_file(tmp_path, distance=20.0)
    with pytest.raises(InputError, match=r"field camera: the protocol file says kind = 'perspective' but the "
                                         r"camera option says 'orthographic'"):
        _task_settings(f, camera="orthographic")
    assert _task_settings(f, camera="perspective").image.kind == "perspective"  # agreeing options are fine
    ortho = tmp_path / "o.toml"
    ortho.write_text(f.read_text().replace('kind = "perspective"', 'kind = "orthographic"'))
    assert _task_settings(ortho).image.kind == "orthographic" and _task_settings(ortho, camera="perspective")
    from viewcert.benchmark.tasks_export import build_task_benchmark

    (tmp_path / "m.xyz").write_text(CHFCLBR)
    # zoom answers move the molecule 40…60 Å toward the viewer: from 20 Å the atoms end up behind the pinhole
    with pytest.raises(InputError, match=r"views\[front\]\.position: camera 'front': the answer 'move z 40'"):
        build_task_benchmark(tmp_path / "m.xyz", tmp_path / "z", _task_settings(f, task="zoom"))
    inside = _axes3_file(tmp_path, distance=1.0, name="in.toml")
    with pytest.raises(InputError, match=r"views\[front\]\.position: camera 'front' .* inside"):
        build_task_benchmark(tmp_path / "m.xyz", tmp_path / "i", _task_settings(inside, task="rotation"))
    nofront = tmp_path / "nf.toml"
    nofront.write_text(f.read_text().replace('name = "front"', 'name = "axis"'))
    with pytest.raises(InputError, match=r"views\[0\]\.name"):
        _task_settings(nofront)


def test_task_export_from_a_perspective_file_writes_its_placement(tmp_path):
    from viewcert.benchmark.tasks_export import build_task_benchmark

    (tmp_path / "m.xyz").write_text(CHFCLBR)
    f = _axes3_file(tmp_path, distance=80.0)  # beyond the zoom grid's 60 Å
    m = build_task_benchmark(tmp_path / "m.xyz", tmp_path / "o", _task_settings(f, task="zoom", seed=4))
    cert = m.certificate.to_dict()
    assert cert["camera"] == "perspective" and cert["view_setup"]["fov_deg"] == 30.0
    assert cert["placement"]["positions"] == {"front": [0.0, 0.0, 80.0], "top": [0.0, 80.0, 0.0],
                                              "left": [-80.0, 0.0, 0.0]}
    q = json.loads((tmp_path / "o" / "benchmark.jsonl").read_text().splitlines()[0])
    assert "(perspective camera)" in q["question"]
    assert q["answer"] in cert["items"][0]["consistent"]  # the truth is always consistent with its images


def test_cli_task_benchmark_with_a_perspective_file(tmp_path):
    """``build-benchmark --task rotation --protocol FILE``: the CLI's --camera defaults to the protocol's own
    kind, so a perspective file's pinholes are used as they are; --camera orthographic conflicts with it
    (one line, exit 2)."""
    (tmp_path / "m.xyz").write_text(CHFCLBR)
    f = _axes3_file(tmp_path, distance=20.0)
    argv = ["build-benchmark", str(tmp_path / "m.xyz"), "--task", "rotation", "--protocol", str(f)]
    res, out = _cli([*argv, "--camera", "orthographic", "--out", str(tmp_path / "a")])
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert res.exit_code == 2 and "Traceback" not in out and len(lines) == 1
    assert "field camera: the protocol file says kind = 'perspective'" in lines[0]
    for flag, folder in (([], "b"), (["--camera", "perspective"], "c")):
        res, out = _cli([*argv, *flag, "--out", str(tmp_path / folder)])
        assert res.exit_code == 0, out
        cert = json.loads((tmp_path / folder / "certificate.json").read_text())
        assert_certificate_consistent(cert)
        assert cert["placement"]["positions"]["front"] == [0.0, 0.0, 20.0]


# ----------------------------------------------------------------------------- design --camera perspective
def test_design_measure_reports_the_hand_worked_methane_phantoms():
    """``design.perspective.measure``: methane through axes-3 pinholes 20 Å away has the one phantom worked
    out above; the same directions as orthographic views the four of the other tetrahedron."""
    from viewcert.design.perspective import measure, measure_line

    p = get_protocol("axes-3")
    spec = ProtocolSpec(p, kind="perspective", positions=tuple(tuple(20.0 * v.rotation[2]) for v in p.views))
    s = _mol(methane)
    mp, mo = measure(spec, s, delta=0.01), measure(ProtocolSpec(p), s, delta=0.01)
    assert (mp["camera"], mp["n_phantoms"], mp["n_recovered"], mp["n_atoms"]) == ("perspective", 1, 5, 5)
    assert (mo["camera"], mo["n_phantoms"], mo["n_recovered"]) == ("orthographic", 4, 5)
    assert mp["correct_by_level"]["uniqueness"] is False and mp["error"] is None
    assert measure_line(mp).startswith("perspective: 1 phantoms, 5/5 atoms recovered at δ = 0.01 Å (uniqueness NO")


def test_cli_design_perspective_reports_what_the_placed_cameras_achieve(tmp_path):
    (tmp_path / "m.xyz").write_text(CHFCLBR)
    res, out = _cli(["design", str(tmp_path / "m.xyz"), "--views", "3", "--candidates", "fibonacci-24", "--camera",
                     "perspective", "-o", str(tmp_path / "d")])
    assert res.exit_code == 0, out
    assert ("measured on the molecule (certify): perspective: 0 phantoms, 5/5 atoms recovered at δ = 0.01 Å "
            "(uniqueness yes, point_group yes, handedness yes); orthographic: 0 phantoms, 5/5 atoms") in out
    measured = json.loads((tmp_path / "d" / "design.json").read_text())["camera"]["measured"]
    assert measured["perspective"]["n_phantoms"] == 0 and measured["orthographic"]["n_recovered"] == 5
    # and certify takes the written perspective file as it stands: the same outcome
    res, out = _cli(["certify", str(tmp_path / "m.xyz"), "--protocol", str(tmp_path / "d" / "protocol.toml"),
                     "--workers", "1", "--no-plots", "--out", str(tmp_path / "c")])
    assert res.exit_code == 0, out
    cert = json.loads((tmp_path / "c" / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert cert["protocol"]["camera"]["kind"] == "perspective" and cert["items"][0]["oracle"]["n_phantoms"] == 0
