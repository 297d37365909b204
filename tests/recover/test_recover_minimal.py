"""The exact three-point solvers of ``viewcert.recover.minimal``: a hand-worked case, and any camera recovered from
three of its own projections (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.strategies import rotations
from viewcert.recover.minimal import p3p, weak_perspective_3pt


def _ortho_matrix(r, s, t):
    p = np.zeros((3, 4))
    p[0, :3], p[0, 3] = s * r[0], t[0]
    p[1, :3], p[1, 3] = -s * r[1], t[1]
    p[2, 3] = 1.0
    return p


def test_weak_perspective_hand_worked_two_solutions():
    """X = (0,0,0), (1,0,0), (0,1,1) seen by the identity camera at 10 px/Å with the origin at (50, 50) draw
    (50, 50), (60, 50), (50, 40). By hand (module docstring of minimal): M = diag(10, 10/√2), s = 10, w₁ = 0,
    w₂ = ±1/√2, so r₁ = (1, 0, 0) and r₂ = (0, 1, 0) or (0, 0, 1): the identity and the rotation whose second
    row is z (the triangle tilted the other way, the Necker twin), both at scale 10 and the same offset."""
    world = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 1]]], dtype=float)
    image = np.array([[[50, 50], [60, 50], [50, 40]]], dtype=float)
    mats, ok = weak_perspective_3pt(world, image)
    assert ok.all()
    expect = [_ortho_matrix(np.eye(3), 10.0, (50, 50)),
              _ortho_matrix(np.array([[1, 0, 0], [0, 0, 1], [0, -1, 0]]), 10.0, (50, 50))]
    for e in expect:
        assert min(np.abs(m - e).max() for m in mats) < 1e-12


def test_weak_perspective_collinear_triple_is_invalid():
    world = np.array([[[0, 0, 0], [1, 1, 1], [2, 2, 2]]], dtype=float)
    image = np.array([[[0, 0], [5, 5], [10, 10]]], dtype=float)
    _, ok = weak_perspective_3pt(world, image)
    assert not ok.any()


@settings(max_examples=60)
@given(rotations(), st.floats(2.0, 80.0), st.floats(-300, 300), st.floats(-300, 300), st.integers(0, 2**31 - 1))
def test_weak_perspective_recovers_any_camera(r, s, t0, t1, seed):
    """A scaled orthographic camera is one of the two solutions through three of its own projections."""
    rng = np.random.default_rng(seed)
    world = rng.normal(size=(1, 3, 3)) * 3
    a = world[0, 1] - world[0, 0]
    b = world[0, 2] - world[0, 0]
    if np.linalg.norm(np.cross(a, b)) < 0.5:
        return
    p = _ortho_matrix(r, s, (t0, t1))
    image = (world[0] @ p[:2, :3].T + p[:2, 3])[None]
    # the image triangle must not be degenerate (the camera looking along the triangle's plane)
    ia, ib = image[0, 1] - image[0, 0], image[0, 2] - image[0, 0]
    if abs(ia[0] * ib[1] - ia[1] * ib[0]) < 1e-3 * s * s:
        return
    mats, ok = weak_perspective_3pt(world, image)
    assert ok.all()
    assert min(np.abs(m - p).max() / max(s, 1.0) for m in mats) < 1e-6


@settings(max_examples=60)
@given(rotations(), st.floats(200.0, 2000.0), st.floats(15.0, 80.0), st.integers(0, 2**31 - 1))
def test_p3p_recovers_any_camera(r, focal, distance, seed):
    """A calibrated pinhole camera (focal px, principal point (256, 200)) is among the P3P solutions through three
    of its own projections: the matrix K [R | t] up to scale."""
    rng = np.random.default_rng(seed)
    world = rng.normal(size=(3, 3)) * 3
    if np.linalg.norm(np.cross(world[1] - world[0], world[2] - world[0])) < 0.5:
        return
    k = np.array([[focal, 0, 256.0], [0, focal, 200.0], [0, 0, 1]])
    t = np.array([0.0, 0.0, distance]) + rng.normal(size=3)
    p = k @ np.column_stack([r, t])
    h = world @ p[:, :3].T + p[:, 3]
    image = h[:, :2] / h[:, 2:]
    mats, ok = p3p(world[None], image[None], focal, 256.0, 200.0)
    assert ok.any()
    best = min(np.abs(m / m[2, 3] - p / p[2, 3]).max() for m, g in zip(mats, ok, strict=True) if g)
    assert best < 1e-5 * focal
