"""``camera = { tool = "unknown", ... }``: the hints it gives, its bad fields one line each, and a recovered camera
written back in the renderer's terms reads back to the same projection."""

from __future__ import annotations

import math

import numpy as np
import pytest

from viewcert.cameras import OrthographicCamera, PerspectiveCamera, PixelProjection, resolve_tool_camera
from viewcert.errors import InputError
from viewcert.recover import hints_from_table, is_unknown, written_back


def test_hints_read_from_the_table():
    h = hints_from_table({"tool": "Unknown", "kind": "perspective", "fov": 20, "zone_axis": [0, 0, 2],
                          "zone_tol": 3, "drawn_by": "matplotlib"}, "images.toml, image[0]")
    assert (h.kind, h.fov_deg, h.zone_axis, h.zone_tolerance_deg, h.tool) == ("perspective", 20.0, (0.0, 0.0, 1.0),
                                                                                3.0, "matplotlib")
    assert h.axes_scaled  # matplotlib scales each axis on its own
    assert not hints_from_table({"tool": "unknown", "drawn_by": "matplotlib", "per_axis": False}).axes_scaled
    assert hints_from_table({"tool": "unknown"}).kind is None
    assert is_unknown({"tool": " UNKNOWN "}) and not is_unknown({"tool": "pymol"}) and not is_unknown([1])


@pytest.mark.parametrize("table, field", [
    ({"tool": "unknown", "elev": 30}, "camera.elev"),
    ({"tool": "unknown", "kind": "fisheye"}, "camera.kind"),
    ({"tool": "unknown", "fov": float("nan")}, "camera.fov"),
    ({"tool": "unknown", "fov": 200}, "camera.fov"),
    ({"tool": "unknown", "zone_axis": [0, 0, 0]}, "camera.zone_axis"),
    ({"tool": "unknown", "zone_axis": [1, 2]}, "camera.zone_axis"),
    ({"tool": "unknown", "drawn_by": "blender"}, "camera.drawn_by"),
    ({"tool": "unknown", "per_axis": "yes"}, "camera.per_axis"),
    ({"tool": "pymol"}, "camera.tool"),
])
def test_bad_fields_name_the_field(table, field):
    with pytest.raises(InputError) as exc:
        hints_from_table(table, "images.toml, image[2]")
    assert exc.value.field == field
    assert "\n" not in str(exc.value)


def test_written_back_in_pymol_terms_reads_back():
    r = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    ortho = PixelProjection.from_camera(OrthographicCamera(rotation=r, center=[1.0, 2.0, 3.0], scale=25.0,
                                                           width=320, height=240))
    persp = PixelProjection.from_camera(PerspectiveCamera(rotation=r, position=[1.0, 42.0, 3.0], focal=600.0,
                                                          width=320, height=240))
    pts = np.random.default_rng(0).normal(size=(20, 3)) * 3 + [1.0, 2.0, 3.0]
    for proj in (ortho, persp):
        table, why = written_back(proj, "pymol", centre=[1.0, 2.0, 3.0])
        assert why == "" and table["tool"] == "pymol"
        back = resolve_tool_camera(table)
        assert np.abs(back.project(pts)[0] - proj.project(pts)[0]).max() < 1e-3
    table, why = written_back(ortho, "ase")
    assert table is None and "no writer" in why
    assert not math.isnan(ortho.matrix[0, 0])
