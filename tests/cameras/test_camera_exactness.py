"""The cameras / observe / digest fast paths give the straightforward computation's results to the last bit,
and remembered verdicts (rotation check, view rank) never turn a refusal into an acceptance."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.naive import rotation_about
from tests.support.strategies import crystals, molecules, rotations
from viewcert.cameras import camera as camera_module
from viewcert.cameras import get_protocol
from viewcert.cameras.camera import OrthographicCamera, PerspectiveCamera, check_rotation
from viewcert.cameras.conditioning import independent_views
from viewcert.cameras.framing import fit_orthographic
from viewcert.cameras.policy import FramingPolicy, frame
from viewcert.certify.digests import cameras_digest
from viewcert.errors import CameraError
from viewcert.observe.project import ObservationModel, drawn_atoms, observe

finite = st.floats(-1e3, 1e3, allow_nan=False)


def _refusal(rotation, **kw) -> str:
    with pytest.raises(CameraError) as info:
        check_rotation(rotation, **kw)
    return str(info.value)


def test_a_refused_rotation_is_refused_with_the_same_message_every_time():
    good = rotation_about([0, 0, 1], 30.0)
    skewed = good + 1e-6
    reflection = np.diag([1.0, 1.0, -1.0])
    check_rotation(good)
    check_rotation(good)  # remembered: still accepted
    first = _refusal(skewed, name="rotation of camera 'x'")
    assert first.startswith("rotation of camera 'x' is not orthonormal")
    assert _refusal(skewed, name="rotation of camera 'x'") == first
    assert "det = -1.000000" in _refusal(reflection) == _refusal(reflection)
    # the same bytes under a stricter tolerance are judged again, not taken from the remembered verdict
    nearly = rotation_about([1, 0, 0], 10.0) + 1e-11
    check_rotation(nearly)
    assert "is not orthonormal" in _refusal(nearly, atol=1e-13)
    with pytest.raises(CameraError, match="not orthonormal"):
        OrthographicCamera(skewed, center=[0, 0, 0], scale=1.0, width=10, height=10, name="x")
    with pytest.raises(CameraError, match="^rotation is not orthonormal"):
        fit_orthographic(skewed, np.zeros((1, 3)))


def test_remembered_rotations_are_bounded_and_refusals_survive_a_clear():
    for k in range(camera_module._PROPER_MAX + 5):
        check_rotation(rotation_about([0, 1, 0], 0.01 * k))
    assert len(camera_module._PROPER) <= camera_module._PROPER_MAX
    assert "is not orthonormal" in _refusal(2.0 * np.eye(3))


def test_non_finite_camera_arrays_are_refused():
    for bad in (np.nan, np.inf, -np.inf):
        centre = [0.0, bad, 0.0]
        with pytest.raises(CameraError, match="center has non-finite entries"):
            OrthographicCamera(np.eye(3), center=centre, scale=1.0, width=10, height=10)
        with pytest.raises(CameraError, match="position has non-finite entries"):
            PerspectiveCamera(np.eye(3), position=centre, focal=1.0, width=10, height=10)
        with pytest.raises(CameraError, match="rotation has non-finite entries"):
            OrthographicCamera(np.where(np.eye(3) == 1, bad, 0.0), center=[0, 0, 0], scale=1.0, width=10, height=10)


@settings(max_examples=60)
@given(rotations(), st.lists(st.tuples(finite, finite, finite), min_size=0, max_size=12),
       st.tuples(finite, finite, finite), st.floats(1e-3, 1e3), st.integers(1, 2000), st.integers(1, 2000))
def test_orthographic_projection_is_the_per_column_formula_to_the_last_bit(rot, pts, centre, scale, w, h):
    cam = OrthographicCamera(rot, center=centre, scale=scale, width=w, height=h)
    p = np.array(pts, dtype=np.float64).reshape(-1, 3)
    uv, depth = cam.project(p)
    c = (p - cam.center) @ cam.rotation.T
    expected = np.empty((len(p), 2))
    expected[:, 0] = 0.5 * w + cam.scale * c[:, 0]
    expected[:, 1] = 0.5 * h - cam.scale * c[:, 1]
    assert uv.shape == (len(p), 2)
    assert uv.tobytes() == expected.tobytes()
    assert depth.tobytes() == (-c[:, 2]).tobytes()


def _digest_camera_by_camera(cameras) -> str:
    """The digest's definition, one camera and one field at a time."""
    h = hashlib.sha256()
    for c in cameras:
        pos, scale = (c.position, c.focal) if isinstance(c, PerspectiveCamera) else (c.center, c.scale)
        for a in (np.round(c.rotation, 12).ravel(), np.round(pos, 9), np.round([scale, c.width, c.height], 9)):
            h.update((a.astype("<f8") + 0.0).tobytes())
            h.update(b"|")
    return h.hexdigest()


@settings(max_examples=60)
@given(st.lists(st.tuples(rotations(), st.tuples(finite, finite, finite), st.floats(1e-3, 1e3), st.booleans(),
                          st.booleans()), max_size=6))
def test_cameras_digest_is_the_camera_by_camera_definition(specs):
    cams = []
    for rot, xyz, s, perspective, negative_zero in specs:
        xyz = [-0.0 if negative_zero else x for x in xyz]
        cams.append(PerspectiveCamera(rot, position=xyz, focal=s, width=640, height=480) if perspective
                    else OrthographicCamera(rot, center=xyz, scale=s, width=768, height=768))
    assert cameras_digest(cams) == _digest_camera_by_camera(cams)


def test_cameras_digest_hand_worked_empty_and_negative_zero():
    assert cameras_digest([]) == hashlib.sha256().hexdigest()
    a = OrthographicCamera(np.eye(3), center=[0.0, 0.0, 0.0], scale=2.0, width=8, height=8)
    b = OrthographicCamera(np.eye(3), center=[-0.0, 0.0, -0.0], scale=2.0, width=8, height=8)
    assert cameras_digest([a]) == cameras_digest([b]) == _digest_camera_by_camera([a])


def _ortho(rotation):
    return OrthographicCamera(rotation, center=[0, 0, 0], scale=1.0, width=10, height=10)


def test_independent_views_verdict_is_the_rank_of_the_stacked_rows_every_time():
    side = _ortho(rotation_about([0, 1, 0], 90.0))
    front = _ortho(np.eye(3))
    turned = _ortho(rotation_about([0, 0, 1], 40.0))  # same view axis as front: rows span one plane
    for _ in range(2):
        assert independent_views([front, side]) is True
        assert independent_views([front, turned]) is False
        assert independent_views([front]) is False
    for rots in ([np.eye(3), rotation_about([1, 1, 0], 0.5)], [rotation_about([0, 0, 1], 10.0)] * 3):
        cams = [_ortho(r) for r in rots]
        rows = np.concatenate([c.rotation[:2] for c in cams])
        assert independent_views(cams) is bool(np.linalg.matrix_rank(rows, tol=1e-9) == 3)


@settings(max_examples=20)
@given(st.one_of(crystals(), molecules()))
def test_observations_are_read_only_and_the_projection_to_the_last_bit(structure):
    cams = frame(get_protocol("render-ceiling-5"), structure, FramingPolicy())
    obs = observe(structure, cams, ObservationModel())
    for view, cam in zip(obs.views, cams, strict=True):
        for name in ("uv", "depth", "labels", "atom_index", "tile"):
            assert not getattr(view, name).flags.writeable
        pos, num, idx, tile = drawn_atoms(structure)
        uv, depth = cam.project(pos)
        assert view.uv.tobytes() == uv.tobytes()
        assert view.depth.tobytes() == depth.tobytes()
        assert (view.labels.tolist(), view.atom_index.tolist(), view.tile.tolist()) == (
            num.tolist(), idx.tolist(), tile.tolist())
    assert not structure.numbers.flags.writeable and not structure.positions.flags.writeable
