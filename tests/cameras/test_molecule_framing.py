"""Molecular framing: one Å-per-pixel scale across views, centred on the 3D bounding box (hand-worked)."""

from __future__ import annotations

import numpy as np
import pytest

from viewcert.cameras import get_protocol
from viewcert.cameras.policy import FramingPolicy, frame
from viewcert.errors import CameraError
from viewcert.structures import Structure


def two_atoms() -> Structure:
    return Structure(np.array([[0.0, 0.0, 0.0], [4.0, 2.0, 0.0]]), np.array([6, 8]))


def test_common_scale_hand_worked_pixel():
    # Bounding-box centre (2, 1, 0). 100×100 px, margin 10 px -> 80 px usable.
    # front (from +z): x_cam = x − 2, y_cam = y − 1 -> half extents (2, 1) -> 80/4 = 20 px/Å.
    # top (from +y, up = −z): x_cam = x − 2, y_cam = −z -> (2, 0) -> 20 px/Å.
    # left (from −x, up = +y): x_cam = +z, y_cam = y − 1 -> (0, 1) -> 40 px/Å alone; common = min = 20.
    # The O atom (4, 2, 0) in the left view: u = 50 + 20·0 = 50, v = 50 − 20·1 = 30 (per-view fit: v = 10).
    s = two_atoms()
    cams = frame(get_protocol("axes-3"), s, FramingPolicy(width=100, height=100, margin_px=10))
    assert [c.name for c in cams] == ["front", "top", "left"]
    assert all(c.scale == pytest.approx(20.0, abs=1e-12) for c in cams)
    np.testing.assert_allclose(cams[2].project(np.array([4.0, 2.0, 0.0]))[0], [50.0, 30.0], atol=1e-9)
    np.testing.assert_allclose(cams[0].project(np.array([4.0, 2.0, 0.0]))[0], [90.0, 30.0], atol=1e-9)
    per_view = frame(get_protocol("axes-3"), s, FramingPolicy(width=100, height=100, margin_px=10,
                                                                     molecule_scale="per-view"))
    assert per_view[2].scale == pytest.approx(40.0)
    np.testing.assert_allclose(per_view[2].project(np.array([4.0, 2.0, 0.0]))[0], [50.0, 10.0], atol=1e-9)


def test_common_scale_keeps_every_atom_inside_every_view():
    k = np.arange(30)
    pos = np.column_stack([1.1 * k - 16, 3 * np.sin(k), 1.5 * np.cos(2.3 * k)])  # ≥ 1.1 Å apart along x
    s = Structure(pos, np.full(30, 6))
    for c in frame(get_protocol("render-ceiling-5"), s, FramingPolicy(width=200, height=150, margin_px=8)):
        uv, _ = c.project(pos)
        assert uv.min() >= 8 - 1e-9 and uv[:, 0].max() <= 192 + 1e-9 and uv[:, 1].max() <= 142 + 1e-9
    with pytest.raises(CameraError, match="scale"):
        frame(get_protocol("axes-3"), s, FramingPolicy(crystal_scale="zoom", molecule_scale="zoom"))


def test_axes_views_are_chimerax_front_top_left():
    """Rows of R = screen x (right), y (up), z (toward the viewer) in world coordinates (ChimeraX's screen
    frame). front: the default view, R = I. top: looking down −y, front (+z) at the bottom of the screen.
    left: looking along +x from −x, front (+z) on the screen's right. axes-6 adds the antipodes."""
    front = np.eye(3)
    top = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]], float)
    left = np.array([[0, 0, 1], [0, 1, 0], [-1, 0, 0]], float)
    p3 = get_protocol("axes-3")
    assert p3.view_names == ("front", "top", "left")
    for v, r in zip(p3.views, (front, top, left), strict=True):
        np.testing.assert_array_equal(np.round(v.rotation, 12) + 0.0, r)
    p6 = get_protocol("axes-6")
    assert p6.view_names == ("front", "top", "left", "back", "right", "bottom")
    for a, b in (("front", "back"), ("top", "bottom"), ("left", "right")):
        va, vb = (p6.views[p6.view_names.index(n)] for n in (a, b))
        np.testing.assert_allclose(va.direction, -vb.direction, atol=1e-12)
    np.testing.assert_allclose(p6.views[4].direction, [-1.0, 0.0, 0.0], atol=1e-12)  # right: from +x


def test_left_view_hand_worked_pixel():
    # C (0, 0, 0), O (1, 2, 3); bounding-box centre (0.5, 1, 1.5); 100×100 px, margin 10 -> half-width 40 px.
    # Half extents: front (0.5, 1) -> 40 px/Å; top (x − 0.5, −(z − 1.5)) = (0.5, 1.5) -> 80/3;
    # left (z − 1.5, y − 1) = (1.5, 1) -> 80/3. Common scale 80/3 px/Å.
    # O in the left view: u = 50 + (80/3)·1.5 = 90 (the front, +z, on the right), v = 50 − (80/3)·1 = 70/3.
    # (A camera from +x, "right", would put it at u = 10.)
    # O in the top view: u = 50 + (80/3)·0.5 = 190/3, v = 50 + (80/3)·1.5 = 90 (the front at the bottom).
    s = Structure(np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]), np.array([6, 8]))
    front, top, left = frame(get_protocol("axes-3"), s, FramingPolicy(width=100, height=100, margin_px=10))
    o = np.array([1.0, 2.0, 3.0])
    assert left.scale == pytest.approx(80 / 3, abs=1e-12)
    np.testing.assert_allclose(left.project(o)[0], [90.0, 70 / 3], atol=1e-9)
    np.testing.assert_allclose(top.project(o)[0], [190 / 3, 90.0], atol=1e-9)
    np.testing.assert_allclose(front.project(o)[0], [50 + (80 / 3) * 0.5, 50 - 80 / 3], atol=1e-9)
