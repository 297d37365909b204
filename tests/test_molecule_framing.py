"""Molecular framing: one Å-per-pixel scale across views, centred on the 3D bounding box (hand-worked)."""

from __future__ import annotations

import numpy as np
import pytest

from viewcert.cameras import get_protocol
from viewcert.errors import CameraError
from viewcert.structures import Structure


def two_atoms() -> Structure:
    return Structure(np.array([[0.0, 0.0, 0.0], [4.0, 2.0, 0.0]]), np.array([6, 8]))


def test_common_scale_hand_worked_pixel():
    # Bounding-box centre (2, 1, 0). 100×100 px, margin 10 px -> 80 px usable.
    # front (from +z): x_cam = x − 2, y_cam = y − 1 -> half extents (2, 1) -> 80/4 = 20 px/Å.
    # top (from +y, up = −z): x_cam = x − 2, y_cam = −z -> (2, 0) -> 20 px/Å.
    # right (from +x, up = +y): x_cam = −z, y_cam = y − 1 -> (0, 1) -> 40 px/Å alone; common = min = 20.
    # The O atom (4, 2, 0) in the right view: u = 50 + 20·0 = 50, v = 50 − 20·1 = 30 (per-view fit: v = 10).
    s = two_atoms()
    cams = get_protocol("axes-3").cameras(s, width=100, height=100, margin_px=10, scale="common")
    assert [c.name for c in cams] == ["front", "top", "right"]
    assert all(c.scale == pytest.approx(20.0, abs=1e-12) for c in cams)
    np.testing.assert_allclose(cams[2].project(np.array([4.0, 2.0, 0.0]))[0], [50.0, 30.0], atol=1e-9)
    np.testing.assert_allclose(cams[0].project(np.array([4.0, 2.0, 0.0]))[0], [90.0, 30.0], atol=1e-9)
    per_view = get_protocol("axes-3").cameras(s, width=100, height=100, margin_px=10)
    assert per_view[2].scale == pytest.approx(40.0)
    np.testing.assert_allclose(per_view[2].project(np.array([4.0, 2.0, 0.0]))[0], [50.0, 10.0], atol=1e-9)


def test_common_scale_keeps_every_atom_inside_every_view():
    k = np.arange(30)
    pos = np.column_stack([1.1 * k - 16, 3 * np.sin(k), 1.5 * np.cos(2.3 * k)])  # ≥ 1.1 Å apart along x
    s = Structure(pos, np.full(30, 6))
    for c in get_protocol("render-ceiling-5").cameras(s, width=200, height=150, margin_px=8, scale="common"):
        uv, _ = c.project(pos)
        assert uv.min() >= 8 - 1e-9 and uv[:, 0].max() <= 192 + 1e-9 and uv[:, 1].max() <= 142 + 1e-9
    with pytest.raises(CameraError, match="scale"):
        get_protocol("axes-3").cameras(s, scale="zoom")
