"""Cameras, poses, framing, protocols, conditioning — hand-worked pixels and properties."""

from __future__ import annotations

import ase.utils
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.naive import project_orthographic_loop, project_perspective_loop, rotation_about
from tests.support.strategies import rotations
from viewcert.cameras import OrthographicCamera, PerspectiveCamera, camera_from_dict, get_protocol
from viewcert.cameras.conditioning import (
    pair_kappa,
    protocol_kappa,
    short_lattice_vectors,
    zone_axis_warnings,
)
from viewcert.cameras.framing import fit_orthographic, fit_perspective
from viewcert.cameras.policy import FramingPolicy, frame
from viewcert.cameras.pose import (
    ase_rotation_matrix,
    from_ase_string,
    from_azimuth_elevation,
    from_chimerax,
    look_at,
    to_chimerax,
)
from viewcert.cameras.protocols import Protocol, View
from viewcert.errors import CameraError
from viewcert.structures import Structure

# ------------------------------------------------------------------ hand-worked pixels (docs/conventions.md)


def test_orthographic_one_atom_one_pixel():
    cam = OrthographicCamera(np.eye(3), center=[0, 0, 0], scale=10.0, width=100, height=80)
    uv, depth = cam.project([1.0, 2.0, 3.0])
    # u = W/2 + s·x = 50 + 10, v = H/2 − s·y = 40 − 20, depth = −z = −3 (in front of the centre plane)
    assert uv.tolist() == [60.0, 20.0]
    assert depth == -3.0
    # the atom lies in pixel (row 19, col 59)? no: u = 60.0 is the border between col 59 and 60;
    # move it by half a pixel to hit the centre of (row 20, col 60): centre (60.5, 20.5)
    uv, _ = cam.project([1.05, 1.95, 0.0])
    assert np.allclose(uv, [60.5, 20.5])
    assert (int(np.floor(uv[1])), int(np.floor(uv[0]))) == (20, 60)


def test_orthographic_screen_axes():
    cam = OrthographicCamera(np.eye(3), [0, 0, 0], 1.0, 10, 10)
    (u0, v0), _ = cam.project([0, 0, 0])
    (u1, _), _ = cam.project([1, 0, 0])
    (_, v1), _ = cam.project([0, 1, 0])
    assert u1 > u0  # world +x of an identity camera is screen right
    assert v1 < v0  # world +y is screen up, and v grows downward
    _, d_near = cam.project([0, 0, 1])
    _, d_far = cam.project([0, 0, -1])
    assert d_near < d_far  # camera z points toward the viewer; depth grows into the scene
    assert np.allclose(cam.view_direction, [0, 0, -1])


def test_perspective_one_atom_one_pixel():
    cam = PerspectiveCamera(np.eye(3), position=[0, 0, 10], focal=100.0, width=200, height=200)
    uv, depth = cam.project([1.0, 2.0, 0.0])
    # cam = (1, 2, −10): depth 10, u = 100 + 100·1/10, v = 100 − 100·2/10
    assert np.allclose(uv, [110.0, 80.0]) and depth == 10.0
    uv_b, d_b = cam.project([0.0, 0.0, 20.0])  # behind the camera
    assert np.isnan(uv_b).all() and d_b == -10.0


@settings(max_examples=30)
@given(rotations(), st.floats(0.5, 50), st.lists(st.floats(-5, 5), min_size=3, max_size=3))
def test_orthographic_matches_loop_and_ray_round_trips(r, scale, center):
    cam = OrthographicCamera(r, center, scale, 64, 48)
    pts = np.random.default_rng(0).uniform(-6, 6, size=(7, 3))
    uv, depth = cam.project(pts)
    uv_n, depth_n = project_orthographic_loop(pts, r, center, scale, 64, 48)
    np.testing.assert_allclose(uv, uv_n, atol=1e-9)
    np.testing.assert_allclose(depth, depth_n, atol=1e-9)
    o, d = cam.ray(uv)
    # each point lies on its ray: p − o is parallel to d
    np.testing.assert_allclose(np.cross(pts - o, d), 0, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(d, axis=1), 1.0)


@settings(max_examples=30)
@given(rotations(), st.floats(50, 500))
def test_perspective_matches_loop_and_ray_round_trips(r, focal):
    pos = np.array([0.3, -0.2, 0.1])
    cam = PerspectiveCamera(r, pos, focal, 64, 48)
    pts = pos + (np.random.default_rng(1).uniform(-1, 1, size=(6, 3)) - 20 * r[2])  # in front of the camera
    uv, depth = cam.project(pts)
    uv_n, depth_n = project_perspective_loop(pts, r, pos, focal, 32.0, 24.0)
    np.testing.assert_allclose(uv, uv_n, atol=1e-8)
    np.testing.assert_allclose(depth, depth_n, atol=1e-9)
    o, d = cam.ray(uv)
    np.testing.assert_allclose(np.cross(pts - o, d), 0, atol=1e-8)


@settings(max_examples=40)
@given(rotations(), rotations(), st.lists(st.floats(-10, 10), min_size=3, max_size=3))
def test_projection_commutes_with_rigid_motion(r, q, t):
    """Moving structure and camera together by (Q, t) changes no pixel and no depth."""
    t = np.asarray(t)
    pts = np.random.default_rng(2).uniform(-5, 5, size=(9, 3))
    ortho = OrthographicCamera(r, [1.0, 2.0, 3.0], 7.5, 100, 100)
    moved = OrthographicCamera(r @ q.T, q @ ortho.center + t, 7.5, 100, 100)
    for a, b in zip(ortho.project(pts), moved.project(pts @ q.T + t), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-9)
    persp = PerspectiveCamera(r, [0.0, 0.0, 0.0] + 30 * r[2], 300.0, 100, 100)
    pmoved = PerspectiveCamera(r @ q.T, q @ persp.position + t, 300.0, 100, 100)
    for a, b in zip(persp.project(pts), pmoved.project(pts @ q.T + t), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-8)


# ------------------------------------------------------------------ degenerate cameras


@pytest.mark.parametrize(
    "rotation, message",
    [
        (np.diag([1.0, 1.0, -1.0]), "det"),
        (2 * np.eye(3), "orthonormal"),
        (np.array([[1, 0, 0], [1, 0, 0], [0, 0, 1.0]]), "orthonormal"),
        (np.full((3, 3), np.nan), "non-finite"),
    ],
)
def test_non_rotation_is_a_camera_error(rotation, message):
    with pytest.raises(CameraError, match=message):
        OrthographicCamera(rotation, [0, 0, 0], 1.0, 10, 10)


@pytest.mark.parametrize("w, h", [(0, 10), (10, 0), (-5, 5), (10.5, 10)])
def test_zero_size_image_is_a_camera_error(w, h):
    with pytest.raises(CameraError, match="image size"):
        OrthographicCamera(np.eye(3), [0, 0, 0], 1.0, w, h)
    with pytest.raises(CameraError, match="image size"):
        PerspectiveCamera(np.eye(3), [0, 0, 5], 10.0, w, h)


def test_bad_scale_and_focal():
    with pytest.raises(CameraError, match="scale"):
        OrthographicCamera(np.eye(3), [0, 0, 0], 0.0, 10, 10)
    with pytest.raises(CameraError, match="focal"):
        PerspectiveCamera(np.eye(3), [0, 0, 5], -1.0, 10, 10)


def test_identical_view_directions_in_a_protocol():
    with pytest.raises(CameraError, match="same direction"):
        Protocol("dup", (View("a", np.eye(3)), View("b", rotation_about([0, 0, 1], 30))))
    # a view and its antipode are different directions
    Protocol("ok", (View("a", np.eye(3)), View("b", rotation_about([0, 1, 0], 180))))


def test_unknown_protocol_lists_names():
    with pytest.raises(CameraError, match="render-ceiling-5"):
        get_protocol("nope")


def test_camera_dict_round_trip():
    for cam in (
        OrthographicCamera(from_ase_string("-60x,-30y,-15z"), [1, 2, 3], 12.5, 768, 768, name="v"),
        PerspectiveCamera(look_at([1, 1, -1]), [4, 5, 6], 500.0, 640, 480, cx=300.0, cy=250.0, name="p"),
    ):
        back = camera_from_dict(cam.to_dict())
        pts = np.random.default_rng(3).uniform(-2, 2, (4, 3))
        for a, b in zip(cam.project(pts), back.project(pts), strict=True):
            np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------ poses


@settings(max_examples=60)
@given(st.lists(st.tuples(st.floats(-360, 360, allow_nan=False), st.sampled_from("xyz")), min_size=0, max_size=4))
def test_ase_rotation_strings_match_ase(terms):
    s = ",".join(f"{a!r}{ax}" for a, ax in terms)
    np.testing.assert_allclose(ase_rotation_matrix(s), ase.utils.rotate(s), atol=1e-12)


def test_ase_drawing_convention_screen_equals_pos_times_m():
    """ASE draws screen = pos @ rotate(s); our camera x, y are those screen coordinates."""
    s = "-60x,-30y,-15z"
    pos = np.random.default_rng(4).normal(size=(5, 3))
    screen = pos @ ase.utils.rotate(s)
    cam = pos @ from_ase_string(s).T
    np.testing.assert_allclose(cam, screen, atol=1e-12)


def test_study_axis_views_look_along_world_axes():
    p = get_protocol("render-ceiling-5")
    d = {v.name: v.direction for v in p.views}
    np.testing.assert_allclose(np.abs(d["axis_a"]), [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(np.abs(d["axis_b"]), [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(d["axis_c"], [0, 0, -1], atol=1e-12)


def test_bad_rotation_string():
    with pytest.raises(CameraError, match="bad rotation term"):
        from_ase_string("10x,foo")


def test_chimerax_hand_worked_and_round_trip():
    r, pos = from_chimerax("view matrix camera 1,0,0,0,0,1,0,0,0,0,1,50")
    np.testing.assert_array_equal(r, np.eye(3))
    np.testing.assert_array_equal(pos, [0, 0, 50])
    rot = from_ase_string("-30x,-60y,-45z")
    text = to_chimerax(rot, [1.5, -2.0, 30.0])
    r2, p2 = from_chimerax(text)
    np.testing.assert_allclose(r2, rot, atol=1e-7)
    np.testing.assert_allclose(p2, [1.5, -2.0, 30.0])
    # the 3×3 part is the same matrix as ASE's rotate(s) (camera axes as columns)
    m = np.array([float(x) for x in text.split()[-1].split(",")]).reshape(3, 4)[:, :3]
    np.testing.assert_allclose(m, ase.utils.rotate("-30x,-60y,-45z"), atol=1e-7)


@pytest.mark.parametrize("text", ["view matrix camera 1,0,0", "view matrix camera " + ",".join(["x"] * 12)])
def test_chimerax_malformed(text):
    with pytest.raises(CameraError):
        from_chimerax(text)


def test_chimerax_reflection_rejected():
    with pytest.raises(CameraError, match="det"):
        from_chimerax("view matrix camera 1,0,0,0,0,1,0,0,0,0,-1,50")


@settings(max_examples=40)
@given(st.lists(st.floats(-1, 1), min_size=3, max_size=3).filter(lambda v: np.linalg.norm(v) > 1e-3))
def test_look_at_points_camera_along_direction(d):
    r = look_at(d)
    np.testing.assert_allclose(-r[2], np.asarray(d) / np.linalg.norm(d), atol=1e-12)
    assert np.linalg.det(r) == pytest.approx(1.0)


def test_azimuth_elevation_hand_worked():
    r = from_azimuth_elevation(0.0, 0.0)  # camera on +x looking at the origin, z up
    np.testing.assert_allclose(-r[2], [-1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(r[1], [0, 0, 1], atol=1e-12)
    r = from_azimuth_elevation(90.0, 90.0)  # straight down from +z
    np.testing.assert_allclose(-r[2], [0, 0, -1], atol=1e-12)


# ------------------------------------------------------------------ framing


def test_orthographic_letterbox_fits_points_with_margin():
    pts = np.random.default_rng(5).uniform(-3, 7, size=(40, 3))
    r = from_ase_string("-60x,-30y,-15z")
    cam = fit_orthographic(r, pts, width=300, height=200, margin_px=10)
    uv, _ = cam.project(pts)
    assert uv[:, 0].min() >= 10 - 1e-9 and uv[:, 0].max() <= 290 + 1e-9
    assert uv[:, 1].min() >= 10 - 1e-9 and uv[:, 1].max() <= 190 + 1e-9
    # one axis touches the margin on both sides; the other is centred
    span_u = (uv[:, 0].min() - 10, 290 - uv[:, 0].max())
    span_v = (uv[:, 1].min() - 10, 190 - uv[:, 1].max())
    assert min(max(span_u), max(span_v)) < 1e-9
    assert span_u[0] == pytest.approx(span_u[1]) and span_v[0] == pytest.approx(span_v[1])


def test_perspective_framing_keeps_points_inside():
    pts = np.random.default_rng(6).uniform(-3, 3, size=(30, 3))
    cam = fit_perspective(look_at([1, -1, -1]), pts, width=256, height=256, margin_px=8)
    uv, depth = cam.project(pts)
    assert (depth > 0).all()
    assert (uv >= 8 - 1e-9).all() and (uv <= 248 + 1e-9).all()


def test_protocol_cameras_frame_tiled_cell_and_box():
    s = Structure([[0, 0, 0]], [26], np.diag([2.87, 2.87, 2.87]))
    cams = frame(get_protocol("render-ceiling-5"), s, FramingPolicy(tiling=(2, 2, 2), margin_px=20))
    assert [c.name for c in cams] == ["axis_a", "axis_b", "axis_c", "body_diagonal", "oblique2"]
    corner = np.array([5.74, 5.74, 5.74])
    for c in cams:
        (u, v), _ = c.project(corner)
        assert 20 - 1e-9 <= u <= 748 + 1e-9 and 20 - 1e-9 <= v <= 748 + 1e-9


# ------------------------------------------------------------------ conditioning


STUDY_KAPPA = {
    "axis_a|axis_b": 1.0, "axis_a|axis_c": 1.0, "axis_a|body_diagonal": 1.4142, "axis_a|oblique2": 2.7321,
    "axis_b|axis_c": 1.0, "axis_b|body_diagonal": 2.0, "axis_b|oblique2": 1.1547,
    "axis_c|body_diagonal": 1.328, "axis_c|oblique2": 1.328, "body_diagonal|oblique2": 2.2823,
}


def test_kappa_reproduces_study_values():
    k = protocol_kappa(get_protocol("render-ceiling-5"))
    for pair, value in STUDY_KAPPA.items():
        assert round(k[pair], 4) == value, pair
    assert round(k["max"], 4) == 2.7321
    assert round(protocol_kappa(get_protocol("render-ceiling-5-offaxis"))["max"], 4) == 8.4258


def test_kappa_closed_form_against_angle():
    # views θ apart about a shared screen axis y: the stacked 4×3 projection M has MᵀM with eigenvalues
    # 2 and 1 ± |cos θ|, so κ = 1/σ_min = 1/sqrt(1 − |cos θ|); θ = 90° → 1, parallel → ∞
    assert pair_kappa(np.eye(3), rotation_about([0, 1, 0], 90)) == pytest.approx(1.0)
    assert pair_kappa(np.eye(3), rotation_about([0, 1, 0], 180)) == float("inf")
    for theta in (10, 45, 120):
        expect = 1.0 / np.sqrt(1 - abs(np.cos(np.radians(theta))))
        assert pair_kappa(np.eye(3), rotation_about([0, 1, 0], theta)) == pytest.approx(expect)
    # the study's κ-vs-separation table (results.json ck_1_1_kappa): 45° → 1.8478, 10° → 8.1131, 1° → 81.0295
    for theta, study in ((45, 1.8478), (10, 8.1131), (5, 16.2108), (2, 40.5163), (1, 81.0295)):
        assert round(pair_kappa(np.eye(3), rotation_about([0, 1, 0], theta)), 4) == study


def test_zone_axis_warnings_on_cubic_cell():
    s = Structure([[0, 0, 0]], [26], np.diag([2.87, 2.87, 2.87]))
    warns = zone_axis_warnings(s, get_protocol("render-ceiling-5"))
    flagged = {w.view for w in warns}
    assert flagged == {"axis_a", "axis_b", "axis_c"}
    assert all(w.length == pytest.approx(2.87) for w in warns)
    assert "[1 0 0]" in next(w for w in warns if w.view == "axis_a").message()
    # the same cell seen off-axis is not flagged at 2°
    assert zone_axis_warnings(s, get_protocol("render-ceiling-5-offaxis")) == []
    assert zone_axis_warnings(Structure([[0, 0, 0]], [6]), get_protocol("axes-3")) == []


def test_short_lattice_vectors_of_skewed_cell():
    lat = np.array([[3.0, 0, 0], [30.0, 3.0, 0], [0, 0, 4.0]])  # b is a long, non-reduced vector
    idx, vec = short_lattice_vectors(lat)
    lengths = sorted(np.linalg.norm(vec, axis=1))
    assert lengths[0] == pytest.approx(3.0)  # both a and b − 10a have length 3
    assert lengths[1] == pytest.approx(3.0)


def test_named_protocols():
    assert len(get_protocol("axes-3")) == 3 and len(get_protocol("axes-6")) == 6
    fib = get_protocol("fibonacci-12")
    assert len(fib) == 12 and fib.name == "fibonacci-12"
    dirs = np.array([v.direction for v in fib.views])
    assert (dirs[:, 2] > 0).all()  # a hemisphere
    sub = get_protocol("render-ceiling-5").subset(["oblique2", "axis_a"])
    assert sub.view_names == ("axis_a", "oblique2")
