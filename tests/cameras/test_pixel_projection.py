"""PixelProjection: a tool's camera as one 3×4 matrix onto its pixels, and the viewcert camera with the same rays.

Truths: hand-worked matrices (a tool that stretches one world axis, a skewed sensor) and viewcert's own cameras,
whose projection formulas are pinned in docs/conventions.md."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viewcert.cameras.camera import OrthographicCamera, PerspectiveCamera
from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.cameras.pose import from_azimuth_elevation
from viewcert.errors import CameraError


def test_hand_worked_orthographic_matrix_with_a_stretched_axis():
    # u = 10 x + 50, v = −5 y + 40 (the tool draws world y at half the px/Å of world x), world z along the view
    p = [[10, 0, 0, 50], [0, -5, 0, 40], [0, 0, 0, 1]]
    proj = PixelProjection(p, 100, 80, "orthographic", tool="matrix")
    uv, _ = proj.project([[1.0, 2.0, 3.0]])
    assert uv.tolist() == [[60.0, 30.0]]
    cam, warp = proj.equivalent()
    # square pixels of sqrt(10·5) px/Å; the camera looks along −z (x right, y up: not mirrored)
    assert cam.scale == pytest.approx(math.sqrt(50.0))
    np.testing.assert_allclose(cam.rotation, np.eye(3), atol=1e-15)
    np.testing.assert_allclose(warp[:, :2], [[10 / math.sqrt(50), 0], [0, 5 / math.sqrt(50)]], atol=1e-15)
    uv_cam, _ = cam.project([[1.0, 2.0, 3.0]])
    np.testing.assert_allclose(uv_cam @ warp[:, :2].T + warp[:, 2], [[60.0, 30.0]], atol=1e-12)
    np.testing.assert_allclose(proj.to_camera_pixels([[60.0, 30.0]]), uv_cam, atol=1e-12)


def test_hand_worked_pinhole_with_a_skewed_sensor_and_any_scale():
    # K = [[100, 20, 64], [0, −80, 48], [0, 0, 1]], camera at (0, 0, 10) looking down −z (R = I):
    # X = (1, 2, 0): camera (1, 2, −10), depth 10 → u = 64 + (100·1 + 20·2)/10 = 78, v = 48 − 80·2/10 = 32
    k = np.array([[100.0, 20.0, 64.0], [0.0, -80.0, 48.0], [0.0, 0.0, 1.0]])
    m = k @ np.diag([1.0, 1.0, -1.0])
    p = np.column_stack([m, -m @ np.array([0.0, 0.0, 10.0])])
    for factor in (1.0, -3.0, 1e-3):  # a projection matrix is defined up to scale, sign included
        proj = PixelProjection(p * factor, 128, 96, "perspective")
        uv, depth = proj.project([[1.0, 2.0, 0.0]])
        np.testing.assert_allclose(uv, [[78.0, 32.0]], atol=1e-12)
        np.testing.assert_allclose(depth, [10.0], atol=1e-12)
        cam, warp = proj.equivalent()
        np.testing.assert_allclose(cam.position, [0.0, 0.0, 10.0], atol=1e-12)
        np.testing.assert_allclose(cam.rotation, np.eye(3), atol=1e-12)
        assert cam.focal == pytest.approx(math.sqrt(100.0 * 80.0))
        assert (cam.cx, cam.cy) == pytest.approx((64.0, 48.0))


def test_a_viewcert_camera_round_trips_with_an_identity_warp():
    r = from_azimuth_elevation(30.0, 20.0)
    ortho = OrthographicCamera(r, [1.0, 2.0, 3.0], 12.5, 300, 200, name="o")
    persp = PerspectiveCamera(r, [5.0, 6.0, 40.0], 800.0, 320, 240, cx=150.0, cy=130.0, name="p")
    pts = np.random.default_rng(1).normal(size=(7, 3)) * 3
    for camera in (ortho, persp):
        proj = PixelProjection.from_camera(camera)
        np.testing.assert_allclose(proj.project(pts)[0], camera.project(pts)[0], atol=1e-9)
        same, warp = proj.equivalent()
        np.testing.assert_allclose(same.rotation, r, atol=1e-12)
        np.testing.assert_allclose(warp, [[1, 0, 0], [0, 1, 0]], atol=1e-9)
        assert PixelProjection.from_dict(proj.to_dict()).matrix.tolist() == proj.matrix.tolist()
    assert PixelProjection.from_camera(persp).project(pts)[1] == pytest.approx(persp.project(pts)[1])


@pytest.mark.parametrize(("matrix", "kind", "size", "words"), [
    ([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, float("nan")]], "orthographic", (10, 10), "non-finite"),
    ([[1, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 1]], "orthographic", (10, 10), "singular"),
    ([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1]], "orthographic", (10, 10), "last row"),
    ([[1, 0, 0, 0], [0, 1, 0, 0], [1, 1, 0, 1]], "perspective", (10, 10), "singular"),
    ([[1, 0, 0, 0], [0, 1, 0, 0]], "perspective", (10, 10), "3×4"),
    ([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]], "fisheye", (10, 10), "kind"),
    ([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]], "orthographic", (0, 10), "image size"),
    ([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]], "orthographic", (10.5, 10), "image size"),
])
def test_bad_projections_are_camera_errors(matrix, kind, size, words):
    with pytest.raises(CameraError, match=words):
        PixelProjection(matrix, *size, kind)


_angles = st.floats(-180, 180)
_pos = st.floats(0.3, 3.0)


@settings(max_examples=60, deadline=None)
@given(az=_angles, el=st.floats(-80, 80), roll=_angles, sx=_pos, sy=_pos, sz=_pos, skew=st.floats(-0.5, 0.5),
       factor=st.sampled_from([1.0, -2.5, 0.01]), perspective=st.booleans())
def test_any_finite_camera_has_an_equivalent_viewcert_camera_with_the_same_rays(
        az, el, roll, sx, sy, sz, skew, factor, perspective):
    """Definition: a tool's camera = a viewcert camera seen through a 2D affine map of pixels, with a scaling of
    each world axis on its own (matplotlib) and a skewed sensor folded in. The equivalent camera's projection
    followed by the warp reproduces the tool's pixels, and every point on a camera ray of a pixel projects
    back to that pixel."""
    r = from_azimuth_elevation(az, el, roll=roll)
    stretch = np.diag([sx, sy, sz])
    if perspective:
        k = np.array([[900.0, 900.0 * skew, 310.0], [0.0, -700.0, 250.0], [0.0, 0.0, 1.0]])
        m = k @ np.diag([1.0, 1.0, -1.0]) @ r @ stretch
        centre_scaled = r.T @ np.array([0.0, 0.0, 60.0])  # the pinhole 60 Å from the origin, in stretched units
        p = np.column_stack([m, -m @ np.linalg.solve(stretch, centre_scaled)])
    else:
        a2 = np.array([[20.0, 20.0 * skew], [0.0, -14.0]]) @ r[:2] @ stretch
        p = np.vstack([np.column_stack([a2, [300.0, 220.0]]), [0.0, 0.0, 0.0, 1.0]])
    proj = PixelProjection(p * factor, 620, 500, "perspective" if perspective else "orthographic")
    pts = np.random.default_rng(7).uniform(-4, 4, size=(9, 3))
    h = np.column_stack([pts, np.ones(len(pts))]) @ (p * factor).T
    truth = h[:, :2] / h[:, 2:3]
    uv, depth = proj.project(pts)
    np.testing.assert_allclose(uv, truth, atol=1e-8)
    cam, warp = proj.equivalent()
    uv_cam, depth_cam = cam.project(pts)
    np.testing.assert_allclose(uv_cam @ warp[:, :2].T + warp[:, 2], truth, atol=1e-8)
    np.testing.assert_allclose(depth_cam, depth, atol=1e-8)
    if perspective:
        assert (depth > 0).all()  # the points lie in front of a camera whose image is not mirrored
    origins, dirs = cam.ray(proj.to_camera_pixels(truth))
    np.testing.assert_allclose(proj.project(origins + 3.0 * dirs)[0], truth, atol=1e-7)
