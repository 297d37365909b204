"""ChimeraX screen-axis semantics of move/turn/roll, pinned on hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest

from viewcert.cameras.pose import look_at
from viewcert.errors import InputError
from viewcert.tasks.transforms import Step, Transformation, apply, parse_command, rigid_motion

ID = np.eye(3)


def T(text):
    return parse_command(text)


def test_turn_z_90_about_origin_takes_x_to_y():
    # right-hand rule about screen z (toward the viewer): counter-clockwise on screen
    out = apply(T("turn z 90"), [[1.0, 0.0, 0.0]], ID, centre=np.zeros(3))
    np.testing.assert_allclose(out, [[0.0, 1.0, 0.0]], atol=1e-12)


def test_turn_x_and_y_right_hand():
    np.testing.assert_allclose(apply(T("turn x 90"), [[0.0, 1.0, 0.0]], ID, np.zeros(3)), [[0, 0, 1]], atol=1e-12)
    np.testing.assert_allclose(apply(T("turn y 90"), [[0.0, 0.0, 1.0]], ID, np.zeros(3)), [[1, 0, 0]], atol=1e-12)


def test_roll_equals_turn_and_rotation_is_about_the_centre():
    # centre (1, 1, 0): the point (2, 1, 0) turns to (1, 2, 0)
    a = apply(T("roll z 90"), [[2.0, 1.0, 0.0]], ID, centre=[1.0, 1.0, 0.0])
    b = apply(T("turn z 90"), [[2.0, 1.0, 0.0]], ID, centre=[1.0, 1.0, 0.0])
    np.testing.assert_allclose(a, [[1.0, 2.0, 0.0]], atol=1e-12)
    np.testing.assert_allclose(a, b, atol=0)


def test_default_centre_is_bounding_box_centre():
    pts = np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 0.0], [1.0, 2.0, 0.0]])  # box centre (2, 1, 0), not the mean
    out = apply(T("turn z 180"), pts, ID)
    np.testing.assert_allclose(out, [[4.0, 2.0, 0.0], [0.0, 2.0, 0.0], [3.0, 0.0, 0.0]], atol=1e-12)


def test_move_uses_screen_axes_of_the_camera():
    # camera looking down world −x (from +x), screen up = world y: screen x = world −z... derive from R rows
    r = look_at((-1.0, 0.0, 0.0), up=(0.0, 1.0, 0.0))
    np.testing.assert_allclose(r[0], [0.0, 0.0, -1.0], atol=1e-12)  # screen right is world −z
    out = apply(T("move x 3"), [[0.0, 0.0, 0.0]], r, centre=np.zeros(3))
    np.testing.assert_allclose(out, [[0.0, 0.0, -3.0]], atol=1e-12)
    # move z 45 brings the models toward the viewer (camera on +x): +45 along world x
    out = apply(T("move z 45"), [[0.0, 0.0, 0.0]], r, centre=np.zeros(3))
    np.testing.assert_allclose(out, [[45.0, 0.0, 0.0]], atol=1e-12)


def test_turn_about_screen_axis_for_a_rotated_camera():
    # camera from +y looking down (top view, screen up = world −z): screen z = world +y
    r = look_at((0.0, -1.0, 0.0), up=(0.0, 0.0, -1.0))
    np.testing.assert_allclose(r[2], [0.0, 1.0, 0.0], atol=1e-12)
    out = apply(T("turn z 90"), [r[0]], r, centre=np.zeros(3))  # screen right → screen up
    np.testing.assert_allclose(out, [r[1]], atol=1e-12)


def test_composite_is_ordered_and_centre_moves_with_the_models():
    # move x 2 then turn z 90 about the (moved) centre: (1,0,0) with centre 0 → (3,0,0) → centre (2,0,0) → (2,1,0)
    out = apply(T("move x 2, turn z 90"), [[1.0, 0.0, 0.0]], ID, centre=np.zeros(3))
    np.testing.assert_allclose(out, [[2.0, 1.0, 0.0]], atol=1e-12)
    # the other order: turn first (→ (0,1,0)), then move (→ (2,1,0)); same here, but turn x then turn y differ
    a = apply(T("turn x 90, turn y 90"), [[0.0, 1.0, 0.0]], ID, np.zeros(3))  # → (0,0,1) → (1,0,0)
    b = apply(T("turn y 90, turn x 90"), [[0.0, 1.0, 0.0]], ID, np.zeros(3))  # → (0,1,0) → (0,0,1)
    np.testing.assert_allclose(a, [[1.0, 0.0, 0.0]], atol=1e-12)
    np.testing.assert_allclose(b, [[0.0, 0.0, 1.0]], atol=1e-12)


def test_rigid_motion_matches_apply_and_is_proper():
    r = look_at((1.0, -2.0, 0.5))
    m, t = rigid_motion(T("roll y 30, move x -2, turn z -45"), r, [1.0, 2.0, 3.0])
    assert np.linalg.det(m) == pytest.approx(1.0, abs=1e-12)
    p = np.array([[0.3, -1.0, 2.0], [4.0, 0.0, 1.0]])
    np.testing.assert_allclose(p @ m.T + t, apply(T("roll y 30, move x -2, turn z -45"), p, r, [1.0, 2.0, 3.0]),
                               atol=1e-12)


def test_parse_and_format_round_trip():
    t = parse_command("move x -2,  ROLL y 30, turn z 15.5, move z 45")
    assert t.steps == (Step("move", "x", -2), Step("roll", "y", 30), Step("turn", "z", 15.5), Step("move", "z", 45))
    assert t.format() == "move x -2, roll y 30, turn z 15.5, move z 45"
    assert parse_command(t.format()) == t
    assert t.steps[1].operation == "rotate" and t.steps[0].operation == "translate"


@pytest.mark.parametrize("bad", ["", "spin x 3", "move w 3", "move x", "move x 3,", "move x three"])
def test_parse_errors_name_the_field(bad):
    with pytest.raises(InputError, match="command"):
        parse_command(bad)


def test_transformation_needs_steps():
    with pytest.raises(InputError, match="steps"):
        Transformation(())
