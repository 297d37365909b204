"""render.visibility: observations read off the ID buffer, against plain scans and the analytic
observations of observe.project."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.naive import visible_pixels_loop
from tests.support.strategies import crystals, molecules, render_scenes
from viewcert.cameras import get_protocol
from viewcert.cameras.camera import OrthographicCamera
from viewcert.cameras.policy import FramingPolicy, frame
from viewcert.errors import InputError
from viewcert.observe.project import ObservationModel, Observations, observe
from viewcert.render.raster import build_scene, render, silhouette_pixel_counts, visible_pixel_counts
from viewcert.render.visibility import (
    RenderedObservationModel,
    observations_from_renders,
    observe_rendered,
    view_atom_table,
    visible_pixel_stats,
)
from viewcert.structures import Structure


@pytest.mark.nojit
def test_pixel_stats_match_a_plain_scan():
    rng = np.random.default_rng(3)
    ids = rng.integers(-3, 5, size=(9, 13)).astype(np.int32)
    counts, centroid = visible_pixel_stats(ids, 6)
    ref = visible_pixels_loop(ids, 6)
    assert counts.tolist() == [r[0] for r in ref]
    np.testing.assert_allclose(centroid[:5], np.array([[r[1], r[2]] for r in ref])[:5], rtol=0, atol=1e-12)
    assert counts[5] == 0 and np.isnan(centroid[5]).all()


@settings(max_examples=20)
@given(crystals(max_atoms=5))
def test_rendered_projection_observations_are_the_ideal_ones_minus_hidden_atoms(cell):
    tiling = (2, 2, 2)
    cams = frame(get_protocol("render-ceiling-5"), cell, FramingPolicy(tiling=tiling, width=256, height=256, pad=1.0))
    ideal = observe(cell, cams, ObservationModel(tiling=tiling))
    vis = observe_rendered(cell, cams, tiling=tiling, min_pixels=1)
    assert isinstance(vis, Observations) and isinstance(vis.model, RenderedObservationModel)
    n_cell = cell.n_atoms
    for v_ideal, v in zip(ideal.views, vis.views, strict=True):
        k_ideal = v_ideal.tile * n_cell + v_ideal.atom_index
        k = v.tile * n_cell + v.atom_index
        assert set(k.tolist()) <= set(k_ideal.tolist())
        pos = {int(a): i for i, a in enumerate(k_ideal)}
        idx = [pos[int(a)] for a in k]
        np.testing.assert_array_equal(v.uv, v_ideal.uv[idx])
        np.testing.assert_array_equal(v.labels, v_ideal.labels[idx])
        np.testing.assert_array_equal(v.depth, v_ideal.depth[idx])


@settings(max_examples=15)
@given(molecules(max_atoms=8))
def test_centroids_and_thresholds(mol):
    cams = frame(get_protocol("axes-3"), mol, FramingPolicy(width=200, height=160, pad=0.8, molecule_scale="per-view"))
    cen = observe_rendered(mol, cams, min_pixels=1, position="pixel-centroid")
    strict = observe_rendered(mol, cams, min_pixels=30)
    scene = build_scene(mol, "study", radius_scale=0.5)
    for cam, v, vs in zip(cams, cen.views, strict.views, strict=True):
        res = render(scene, cam, rgb=False)
        ref = visible_pixels_loop(res.atom_id, mol.n_atoms)
        for row, a in zip(v.uv, v.atom_index, strict=True):
            assert ref[a][0] >= 1
            np.testing.assert_allclose(row, ref[a][1:], atol=1e-9)
        assert all(ref[a][0] >= 30 for a in vs.atom_index)
        assert len(vs) <= len(v)


def test_partly_hidden_atom_centroid_moves_away_from_the_occluder():
    # O in front at x = 0, Fe behind at x = 0.5 Å: Fe's visible pixels lie right of its centre
    s = Structure(np.array([[0.0, 0.0, 1.0], [0.5, 0.0, -1.0]]), [8, 26])
    cam = OrthographicCamera(np.eye(3), [0.25, 0, 0], scale=60.0, width=160, height=120)
    cen = observe_rendered(s, [cam], position="pixel-centroid").views[0]
    proj = observe_rendered(s, [cam]).views[0]
    k = list(cen.atom_index).index(1)
    assert cen.uv[k, 0] > proj.uv[k, 0] + 2  # px
    assert abs(cen.uv[k, 1] - proj.uv[k, 1]) < 1e-9  # symmetric about the row through both centres


def test_atom_table_and_silhouettes():
    s = Structure(np.array([[0.0, 0.0, 1.0], [0.2, 0.0, -1.0], [3.0, 0, 0]]), [8, 8, 8])
    cam = OrthographicCamera(np.eye(3), [1.5, 0, 0], scale=40.0, width=220, height=80)
    scene = build_scene(s, "study")
    res = render(scene, cam)
    tab = view_atom_table(res)
    full = silhouette_pixel_counts(scene, cam)
    assert full[0] == full[1] == full[2] > 0  # same element, same scale: same silhouette
    assert tab["visible_pixels"][0] == full[0] and tab["visible_fraction"][0] == 1.0
    assert 0 < tab["visible_fraction"][1] < 1  # partly behind atom 0
    np.testing.assert_allclose(tab["uv"][2], [110 + 1.5 * 40, 40])


def test_misuse():
    s = Structure(np.zeros((1, 3)), [8])
    cam = OrthographicCamera(np.eye(3), [0, 0, 0], scale=40.0, width=32, height=32)
    with pytest.raises(InputError, match="position"):
        observe_rendered(s, [cam], position="centroid")
    with pytest.raises(InputError, match="min_pixels"):
        observe_rendered(s, [cam], min_pixels=0)
    m = RenderedObservationModel(min_pixels=4, position="pixel-centroid").to_dict()
    assert m["visibility"] == "rendered" and m["min_pixels"] == 4


def test_e3_axis_views_hide_the_translates_behind_them(shared_data):
    """2×2×2 tilings seen along a lattice vector of an orthogonal cell: every atom's translate along the view
    sits exactly behind it, so about half of the drawn atoms show no pixel; oblique views hide few."""
    from tests.support.strategies import e3_conventional_cells
    from viewcert.render.raster import frame_cameras

    cells = e3_conventional_cells()
    ortho = [c for c in cells.values() if np.allclose(c.lattice - np.diag(np.diag(c.lattice)), 0, atol=1e-6)][:3]
    assert ortho
    for cell in ortho:
        cams = frame_cameras(cell, "render-ceiling-5", style="study", tiling=(2, 2, 2), width=384, height=384)
        obs = observe_rendered(cell, cams, tiling=(2, 2, 2))
        hidden = [1 - len(v) / (8 * cell.n_atoms) for v in obs.views]
        assert all(h >= 0.5 for h in hidden[:3])
        assert all(h < 0.2 for h in hidden[3:])


def test_observe_as_modes():
    from viewcert.render.visibility import observe_as

    s = Structure(np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0], [2.0, 0, 0]]), [8, 8, 26])
    cam = OrthographicCamera(np.eye(3), [1.0, 0, 0], scale=40.0, width=200, height=100)
    ideal = observe_as(s, [cam], "ideal")
    vis = observe_as(s, [cam], "visible")
    cen = observe_as(s, [cam], "pixel-centroid")
    assert len(ideal.views[0]) == 3 and len(vis.views[0]) == 2  # atom 1 sits behind atom 0
    assert vis.model.to_dict()["position"] == "projection" and cen.model.to_dict()["position"] == "pixel-centroid"
    with pytest.raises(InputError, match="observe"):
        observe_as(s, [cam], "detector")
    with pytest.raises(InputError, match="sigma"):
        observe_as(s, [cam], "visible", model=ObservationModel(sigma=0.5))


# --------------------------------------------------------------- visible_pixel_counts: the ID buffer's counts, no image
# The twin is the definition: the pixel count per atom of the rendered ID buffer (``render(...).pixel_counts()``,
# itself held to the naive per-pixel ray-caster in test_render_raster.py), cut at the limit.


def _counted_from_the_image(scene, cam, limit):
    counts = render(scene, cam, rgb=False).pixel_counts()
    return counts if limit is None else np.minimum(counts, limit)


@settings(max_examples=60)
@given(render_scenes(max_spheres=12), st.sampled_from([1, 2, 7, None]))
def test_visible_counts_are_the_id_buffers(case, limit):
    """Random spheres (overlapping, in front of and behind each other), bonds and edge lines, orthographic and
    perspective: each atom's count, cut at the limit, is the rendered ID buffer's."""
    scene, cam = case
    np.testing.assert_array_equal(visible_pixel_counts(scene, cam, limit=limit),
                                  _counted_from_the_image(scene, cam, limit))


@settings(max_examples=15)
@given(crystals(max_atoms=5), st.sampled_from(["study", "ball-and-stick"]), st.sampled_from([1, 3]))
def test_visible_counts_of_tiled_crystals_along_their_axes(cell, style, limit):
    """2×2×2 tilings through the study's views (three along lattice-aligned axes, where translates stack exactly
    behind each other: the certain-cover skip) with the supercell's edges: the ID buffer's counts."""
    cams = frame(get_protocol("render-ceiling-5"), cell, FramingPolicy(tiling=(2, 2, 2), width=160, height=160,
                                                                     pad=1.0))
    scene = build_scene(cell, style, tiling=(2, 2, 2), radius_scale=0.5)
    for cam in cams:
        np.testing.assert_array_equal(visible_pixel_counts(scene, cam, limit=limit),
                                      _counted_from_the_image(scene, cam, limit))


@pytest.mark.nojit
def test_an_atom_exactly_behind_an_equal_one_shows_no_pixel():
    """Two equal O spheres on the view axis, 2 Å apart (hand-worked: the nearer disc is the farther one's
    silhouette exactly, so no pixel centre sees the farther); a third beside them shows its whole silhouette."""
    s = Structure(np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0], [2.0, 0.0, 0.0]]), [8, 8, 8])
    cam = OrthographicCamera(np.eye(3), [1.0, 0, 0], scale=40.0, width=200, height=100)
    scene = build_scene(s, "study")
    full = silhouette_pixel_counts(scene, cam)
    assert visible_pixel_counts(scene, cam).tolist() == [full[0], 0, full[2]]
    assert visible_pixel_counts(scene, cam, limit=1).tolist() == [1, 0, 1]
    with pytest.raises(InputError, match="limit"):
        visible_pixel_counts(scene, cam, limit=0)


@settings(max_examples=10)
@given(crystals(max_atoms=5), st.sampled_from([1, 4]))
def test_visible_observations_are_those_read_off_the_drawn_images(cell, min_pixels):
    """observe_rendered at the projection (which draws no image) gives what observations_from_renders reads off
    the rendered ID buffers, array for array."""
    cams = frame(get_protocol("render-ceiling-5"), cell, FramingPolicy(tiling=(2, 2, 2), width=128, height=128,
                                                                     pad=1.0))
    got = observe_rendered(cell, cams, tiling=(2, 2, 2), min_pixels=min_pixels)
    scene = build_scene(cell, "study", tiling=(2, 2, 2), radius_scale=0.5)
    want = observations_from_renders([render(scene, c, rgb=False) for c in cams], model=got.model)
    for a, b in zip(got.views, want.views, strict=True):
        for f in ("uv", "depth", "labels", "atom_index", "tile"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f))


def test_visible_observations_draw_no_image(monkeypatch):
    """Issue 57 item 2: observe visible read every view's full 768 px ID buffer (and its centroids); now no
    image is drawn at the projection (main of session 52 rendered each view)."""
    import viewcert.render.visibility as vis

    drawn = []
    monkeypatch.setattr(vis, "render", lambda *a, **k: drawn.append(1) or render(*a, **k))
    s = Structure(np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0], [2.0, 0.0, 0.0]]), [8, 8, 8])
    cam = OrthographicCamera(np.eye(3), [1.0, 0, 0], scale=40.0, width=200, height=100)
    assert len(vis.observe_rendered(s, [cam]).views[0]) == 2 and not drawn
    assert len(vis.observe_rendered(s, [cam], position="pixel-centroid").views[0]) == 2 and drawn  # needs the image
