"""render.project: observations against the per-atom loop in tests/support/naive.py, noise, occlusion."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.naive import observe_loop
from tests.support.strategies import crystals, molecules
from viewcert.cameras import get_protocol
from viewcert.cameras.camera import OrthographicCamera
from viewcert.cameras.policy import FramingPolicy, frame
from viewcert.errors import InputError
from viewcert.observe.project import (
    ObservationModel,
    Observations,
    ViewObservation,
    centre_visibility,
    observe,
)
from viewcert.structures import Structure

PER_VIEW = FramingPolicy(molecule_scale="per-view")  # every view fitted on its own, molecules too

tilings = st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 2))


def _compare(obs: Observations, expected):
    for view, rows in zip(obs.views, expected, strict=True):
        rows = np.array(rows, dtype=float)
        np.testing.assert_allclose(view.uv, rows[:, :2], atol=1e-8)
        np.testing.assert_allclose(view.depth, rows[:, 2], atol=1e-9)
        np.testing.assert_array_equal(view.labels, rows[:, 3].astype(int))
        np.testing.assert_array_equal(view.atom_index, rows[:, 4].astype(int))
        np.testing.assert_array_equal(view.tile, rows[:, 5].astype(int))


@settings(max_examples=25)
@given(crystals(), tilings)
def test_observe_matches_loop_for_tiled_crystals(cell, tiling):
    cams = frame(get_protocol("render-ceiling-5"), cell, FramingPolicy(tiling=tiling))
    obs = observe(cell, cams, ObservationModel(tiling=tiling))
    _compare(obs, observe_loop(cell.positions, cell.numbers, cell.lattice, tiling, cams))


@settings(max_examples=25)
@given(molecules(), st.sampled_from(["orthographic", "perspective"]))
def test_observe_matches_loop_for_molecules(mol, kind):
    cams = frame(get_protocol("axes-3"), mol, FramingPolicy(kind=kind, molecule_scale="per-view"))
    obs = observe(mol, cams)
    _compare(obs, observe_loop(mol.positions, mol.numbers, None, (1, 1, 1), cams))


def test_noise_is_seeded_and_in_the_stated_unit():
    pts = np.array([[i * 1.5, (i % 3) * 1.2, (i % 5) * 1.1] for i in range(40)])
    s = Structure(pts, np.full(40, 6))
    cams = frame(get_protocol("axes-3"), s, PER_VIEW)
    ideal = observe(s, cams)
    a = observe(s, cams, ObservationModel(sigma=0.05, sigma_unit="angstrom", seed=7))
    b = observe(s, cams, ObservationModel(sigma=0.05, sigma_unit="angstrom", seed=7))
    c = observe(s, cams, ObservationModel(sigma=0.05, sigma_unit="angstrom", seed=8))
    for va, vb, vc, vi in zip(a.views, b.views, c.views, ideal.views, strict=True):
        np.testing.assert_array_equal(va.uv, vb.uv)
        assert not np.array_equal(va.uv, vc.uv)
        # Å noise seen in px: std ≈ σ·scale
        resid = (va.uv - vi.uv) / va.camera.scale
        assert 0.035 < resid.std() < 0.065
    px = observe(s, cams, ObservationModel(sigma=2.0, sigma_unit="px", seed=1))
    assert 1.6 < np.concatenate([(v.uv - w.uv).ravel() for v, w in zip(px.views, ideal.views, strict=True)]).std() < 2.4


def test_occlusion_hides_atom_behind_nearer_disc():
    # two carbons on the view axis of an identity camera: the one at z=+2 is nearer to the viewer
    s = Structure([[0, 0, 0], [0, 0, 2.0], [3.0, 0, 0]], [6, 6, 8])
    cam = OrthographicCamera(np.eye(3), [0, 0, 0], 20.0, 200, 200, name="front")
    obs = observe(s, [cam], ObservationModel(occlusion=True))
    assert sorted(obs.views[0].atom_index.tolist()) == [1, 2]
    assert len(observe(s, [cam]).views[0]) == 3


def test_centre_visibility_hand_worked():
    uv = np.array([[10.0, 10.0], [12.0, 10.0], [30.0, 10.0]])
    depth = np.array([5.0, 1.0, 0.0])
    vis = centre_visibility(uv, depth, np.array([3.0, 3.0, 3.0]))
    assert vis.tolist() == [False, True, True]  # point 0 is 2 px from nearer point 1 (radius 3)
    vis = centre_visibility(uv, depth, np.array([3.0, 1.5, 3.0]))
    assert vis.tolist() == [True, True, True]


def test_molecule_cannot_be_tiled():
    s = Structure([[0, 0, 0]], [6])
    with pytest.raises(InputError, match="tiled"):
        observe(s, frame(get_protocol("axes-3"), s, PER_VIEW), ObservationModel(tiling=(2, 1, 1)))


@pytest.mark.parametrize(
    "kwargs, field", [({"tiling": (0, 1, 1)}, "tiling"), ({"sigma": -1.0}, "sigma"), ({"sigma_unit": "nm"}, "sigma_unit")]
)
def test_bad_observation_model(kwargs, field):
    with pytest.raises(InputError) as err:
        ObservationModel(**kwargs)
    assert err.value.field == field


def test_observation_dict_round_trip_and_hidden_fields():
    s = Structure([[0, 0, 0], [1.2, 0.3, 0.1]], [6, 8], np.diag([4.0, 4.0, 4.0]))
    obs = observe(s, frame(get_protocol("render-ceiling-5"), s, PER_VIEW))
    d = obs.to_dict()
    back = ViewObservation.from_dict(d["views"][0])
    np.testing.assert_array_equal(back.uv, obs.views[0].uv)
    assert "atom_index" not in obs.to_dict(include_hidden=False)["views"][0]
    assert d["observation_model"]["centroids"] == "ideal"
    np.testing.assert_allclose(
        obs.views[2].plane_coordinates(), (s.positions - obs.views[2].camera.center) @ np.eye(3)[:2].T, atol=1e-12
    )
