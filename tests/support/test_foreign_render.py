"""The foreign-render helper's truth (tests/support/foreign_render.py) agrees with the pixels the tool drew: each
atom's centre (the tool's own transform, or the probe renders) equals the pixel centroid of its flat colour in a
flat render at full size, wherever that disc is whole (not cut by the border or by another atom). The two are
measured independently (a transform or small probe discs vs the drawn discs), so a wrong flip, half-pixel or
scale in either shows here. Each tool skips, naming why, where it does not render."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.foreign_render import (
    ANTIALIASED,
    TOOLS,
    _colour_stats,
    _read_rgb,
    available,
    example_camera,
    render,
)

# a small molecule-like cloud: 8 atoms, spread so that most discs are whole
XYZ = np.array([[0.0, 0.0, 0.0], [2.6, 0.4, -0.3], [-2.2, 1.9, 0.8], [0.5, -2.8, 1.1], [1.3, 2.4, -2.0],
                [-1.9, -1.6, -1.4], [3.1, -2.2, 1.9], [-3.0, 0.2, -2.5]])
ELEMENTS = ("C", "O", "N", "C", "S", "C", "Cl", "N")
# a perspective sphere's ellipse is off its projected centre by ~(r/d)² × its distance from the principal point
# (up to ~0.3 px for these radii and distances); the rest is the centroid's quantisation
TOLERANCE_PX = 0.45


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("kind", ["orthographic", "perspective"])
def test_truth_matches_the_flat_discs(tool, kind, tmp_path):
    reason = available(tool)
    if reason:
        pytest.skip(reason)
    if tool == "ase" and kind == "perspective":
        pytest.skip("ASE's PNG writer is orthographic only")
    cam = example_camera(tool, XYZ, seed=11, size=(240, 200), kind=kind, radii=np.full(len(XYZ), 0.3))
    r = render(tool, XYZ, ELEMENTS, tmp_path, camera=cam, mode="flat", radii=0.3)
    assert r.size == (240, 200)
    rgb = _read_rgb(r.image)
    assert rgb.shape[:2] == (200, 240)
    centroid, counts, border, other = _colour_stats(rgb, r.colours, rims=tool in ANTIALIASED)
    assert np.array_equal(counts, r.visible)
    whole = (counts >= 12) & ~border & ~other
    if tool == "ase":  # ASE outlines each circle in black, antialiased: whole = no other circle within reach
        reach = (r.radii[:, None] + r.radii[None, :]) * cam["scale"] + 2
        gap = np.linalg.norm(r.centres[:, None] - r.centres[None, :], axis=2) - reach
        np.fill_diagonal(gap, np.inf)
        whole = (counts >= 12) & ~border & (gap.min(axis=1) > 0)
    assert whole.sum() >= 3, f"too few whole discs to compare: {whole.sum()}"
    dev = np.linalg.norm(centroid[whole] - r.centres[whole], axis=1)
    assert dev.max() <= TOLERANCE_PX, (tool, kind, dev.round(3))
    assert r.camera["tool"] == tool and r.camera["width"] == 240 and r.camera["height"] == 200


def test_shaded_has_a_flat_twin_count(tmp_path):
    reason = available("matplotlib")
    if reason:
        pytest.skip(reason)
    r = render("matplotlib", XYZ, ELEMENTS, tmp_path, seed=2, size=(160, 160), mode="shaded")
    assert r.truth == "transform" and r.image.is_file()
    assert (r.visible > 0).sum() >= 6 and r.visible.sum() < 160 * 160
