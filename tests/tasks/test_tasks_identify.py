"""Identifiability oracle for transformation tasks: the numba matcher against a naive twin (hypothesis),
hand-worked consistent sets and ceilings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import naive
from viewcert.tasks._match import consistent_with
from viewcert.tasks.identify import identify
from viewcert.tasks.model import ViewSetup, depth_cue_intensity, make_item, rotation_grid, task_grid


@st.composite
def candidate_sets(draw):
    n = draw(st.integers(1, 7))
    k = draw(st.integers(1, 5))
    n_labels = draw(st.integers(1, 3))
    lab = np.array(draw(st.lists(st.integers(0, n_labels - 1), min_size=n, max_size=n)), dtype=np.int64)
    # quarter-pixel lattice so that distances hit δ exactly now and then
    base = np.array(draw(st.lists(st.integers(0, 12), min_size=2 * n, max_size=2 * n)), float).reshape(n, 2) / 4
    uv = np.empty((k, n, 2))
    inten = np.empty((k, n))
    keep = np.empty((k, n), dtype=bool)
    for c in range(k):
        jit = np.array(draw(st.lists(st.integers(-2, 2), min_size=2 * n, max_size=2 * n)), float).reshape(n, 2) / 4
        perm = np.array(draw(st.permutations(range(n))))
        uv[c] = (base + jit)[perm] if draw(st.booleans()) else base + jit
        inten[c] = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))) / 4
        keep[c] = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))) | draw(st.booleans())
    delta = draw(st.sampled_from([0.25, 0.5, 0.6]))
    eps = draw(st.sampled_from([0.0, 0.25, 1.0]))
    return uv, inten, keep, lab, n_labels, delta, eps


@settings(max_examples=300, deadline=None)
@given(candidate_sets(), st.data())
def test_kernel_matches_naive_twin(case, data):
    uv, inten, keep, lab, n_labels, delta, eps = case
    truth = data.draw(st.integers(0, len(uv) - 1))
    got = consistent_with(uv, inten, keep, lab, truth, n_labels, delta, eps)
    t = keep[truth]
    want = [naive.task_views_consistent(uv[truth][t], inten[truth][t], lab[t], uv[c][keep[c]], inten[c][keep[c]],
                             lab[keep[c]], delta, eps) for c in range(len(uv))]
    assert got.tolist() == want
    assert got[truth]


def test_kernel_hand_worked():
    # two C at (0,0),(10,0) vs the same swapped and shifted by 0.3 px: consistent at δ=0.5, not at δ=0.2
    uv = np.array([[[0.0, 0.0], [10.0, 0.0]], [[10.3, 0.0], [0.3, 0.0]]])
    inten = np.ones((2, 2))
    keep = np.ones((2, 2), dtype=bool)
    lab = np.array([0, 0])
    assert consistent_with(uv, inten, keep, lab, 0, 1, 0.5, 0.0).tolist() == [True, True]
    assert consistent_with(uv, inten, keep, lab, 0, 1, 0.2, 0.0).tolist() == [True, False]
    # labels matter: the same geometry with the labels swapped is not consistent
    lab2 = np.array([0, 1])
    assert consistent_with(uv, inten, keep, lab2, 0, 2, 0.5, 0.0).tolist() == [True, False]


def test_depth_cue_intensity_hand_worked():
    # range 0…10 Å, fog from 0.5 to 1 of it: full colour to 5 Å, half at 7.5 Å, background at 10 Å
    np.testing.assert_allclose(depth_cue_intensity([0.0, 5.0, 7.5, 10.0, 12.0], 0.0, 10.0), [1, 1, 0.5, 0, 0])


def _cloud(n=40, seed=3):
    rng = np.random.default_rng(seed)
    return rng.uniform(-6, 6, size=(n, 3)), rng.choice([6, 7, 8, 16], n)


def test_zoom_orthographic_is_the_whole_grid():
    pos, z = _cloud()
    r = identify(make_item("cloud", pos, z, "zoom", 7, ViewSetup()))
    assert r.n_consistent == 21 and r.exact_ceiling == pytest.approx(1 / 21)
    assert {e[1] for e in r.explanations} == {"view-axis motion"}
    # best partial guess 50 (normaliser 10 Å): Σ_d max(0, 1 − |50 − d|/10) = 21 − 110/10 = 10 → 10/21
    assert r.partial_ceiling == pytest.approx(10 / 21, abs=1e-12)


def test_zoom_perspective_and_translation_are_unique():
    pos, z = _cloud()
    for task, setup, truth in [("zoom", ViewSetup(camera="perspective"), 7), ("translation", ViewSetup(), 5),
                               ("translation", ViewSetup(camera="perspective"), 12), ("rotation", ViewSetup(), 20)]:
        r = identify(make_item("cloud", pos, z, task, truth, setup))
        assert r.n_consistent == 1 and r.exact_ceiling == 1.0 and r.partial_ceiling == 1.0, (task, setup.camera)
        assert r.best_guess == task_grid(task).answers[truth].format()


def test_square_symmetry_and_depth_sign_aliasing():
    # four C at (±1,0,0),(0,±1,0) in the screen plane of the front camera (C4 about the view axis)
    pos = np.array([[1.0, 0, 0], [-1.0, 0, 0], [0, 1.0, 0], [0, -1.0, 0]])
    z = np.full(4, 6)
    grid = rotation_grid()
    r = identify(make_item("sq", pos, z, "rotation", grid.index(_t("roll z 90")), ViewSetup()))
    assert sorted(r.to_dict(grid.answers)["consistent"]) == ["roll z -90", "roll z 90"]
    assert r.explanations == (("roll z -90", "symmetry"),)
    r = identify(make_item("sq", pos, z, "rotation", grid.index(_t("roll x 30")), ViewSetup()))
    assert sorted(r.to_dict(grid.answers)["consistent"]) == ["roll x -30", "roll x 30"]
    assert r.explanations == (("roll x -30", "depth-sign aliasing"),)
    # the best partial guess over {x −30, x 30} is either: mean(1, 1 − 60/90) = 2/3
    assert r.partial_ceiling == pytest.approx(2 / 3, abs=1e-12)


def test_depth_cue_breaks_depth_sign_aliasing():
    pos = np.array([[1.0, 0, 0], [-1.0, 0, 0], [0, 1.0, 0], [0, -1.0, 0]])
    grid = rotation_grid()
    r = identify(make_item("sq", pos, np.full(4, 6), "rotation", grid.index(_t("roll x 60")),
                           ViewSetup(depth_cue=True)))
    assert r.to_dict(grid.answers)["consistent"] == ["roll x 60"]


def test_handedness_one_view_witness_and_grid():
    # a chiral centre: C with H, F, Cl, Br on a distorted tetrahedron
    pos = np.array([[0, 0, 0], [0.6, 0.6, 0.6], [-0.7, -0.6, 0.6], [-0.6, 0.7, -0.6], [0.6, -0.6, -0.7]])
    z = np.array([6, 1, 9, 17, 35])
    for mirror in (False, True):
        r = identify(make_item("chfclbr", pos, z, "handedness", 4, ViewSetup(), mirror=mirror))
        assert r.one_view_witness is True  # the after view alone: 0.5
        assert r.handedness_ceiling == 1.0  # the grid answers + the known structure: determined


def _t(text):
    from viewcert.tasks.transforms import parse_command

    return parse_command(text)


def test_rot_rot_same_axis_sums_alias():
    # roll x a, roll x b is the rotation by a + b: for a + b = 45 with a, b in ±15…±90 (no 0) there are
    # 8 ordered pairs: a ∈ {−45, −30, −15, 15, 30, 60, 75, 90}
    pos, z = _cloud(25, seed=5)
    grid = task_grid("rot-rot")
    r = identify(make_item("cloud", pos, z, "rot-rot", grid.index(_t("roll x 15, roll x 30")), ViewSetup()))
    got = sorted(r.to_dict(grid.answers)["consistent"])
    want = sorted(f"roll x {a}, roll x {45 - a}" for a in (-45, -30, -15, 15, 30, 60, 75, 90))
    assert got == want
    assert {e[1] for e in r.explanations} == {"same motion"}
    assert r.exact_ceiling == pytest.approx(1 / 8)
