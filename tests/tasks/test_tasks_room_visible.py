"""Issue 13 acceptance items: framing with room for the grid's largest motion, handedness only for chiral
structures, and the ``visible`` observation model (rendered atom-ID buffer of the after view)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.export_fixtures import CHFCLBR_XYZ
from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark
from viewcert.errors import InputError
from viewcert.tasks.ceiling import build_items, run_task
from viewcert.tasks.identify import candidate_views, candidates_of, identify, identify_all
from viewcert.tasks.model import Pose, ViewSetup, achiral_exclusion, make_item, project_pose

# two carbons on screen x of the front camera (axes-3 front: world = screen frame, view from +z)
PAIR = np.array([[-5.0, 0.0, 0.0], [5.0, 0.0, 0.0]])
# a chiral 4-point molecule (distinct labels on an irregular, non-coplanar tetrahedron: only the identity)
CHIRAL = np.array([[0.9, 0.1, -0.3], [-0.5, 0.8, 0.2], [-0.2, -0.7, 0.6], [0.1, 0.2, 1.1]])
CHIRAL_Z = np.array([1, 9, 17, 35])
# the same four labels in one plane (z = 0): the plane is a mirror, point group Cs, achiral
PLANAR = np.array([[0.9, 0.1, 0.0], [-0.5, 0.8, 0.0], [-0.2, -0.7, 0.0], [0.1, 0.2, 0.0]])


def test_translation_framing_rule_by_hand():
    # envelope of the ±1…±4 Å moves along screen x and y: x in [-9, 9], y in [-4, 4]; margin 5 % of 803 px
    it = make_item("pair", PAIR, [6, 6], "translation", 0, ViewSetup())
    margin = 0.05 * 803
    assert it.after_camera.scale == pytest.approx(min((1160 - 2 * margin) / 18.0, (803 - 2 * margin) / 8.0),
                                                  rel=1e-12)
    old = make_item("pair", PAIR, [6, 6], "translation", 0, ViewSetup(room="none"))
    assert old.after_camera.scale == pytest.approx((1160 - 2 * margin) / 10.0, rel=1e-12)


def test_room_keeps_every_atom_of_every_answer_in_frame():
    for room, all_in in (("grid", True), ("none", False)):
        it = make_item("pair", PAIR, [6, 6], "translation", 0, ViewSetup(room=room))
        _, _, keep, _ = candidate_views(it, candidates_of(it))
        assert bool(keep.all()) is all_in
        # move x 4 takes the atom at x = +5 to x = 9 Å: outside the 10 Å-wide before frame, inside the envelope
        j = it.grid.answers.index(next(a for a in it.grid.answers if a.format() == "move x 4"))
        assert keep[j].tolist() == ([True, True] if all_in else [True, False])


def test_room_only_for_tasks_that_move_in_the_image_plane():
    for task in ("rotation", "zoom", "handedness", "rot-rot"):
        a = make_item("pair", PAIR, [6, 6], task, 0, ViewSetup())
        b = make_item("pair", PAIR, [6, 6], task, 0, ViewSetup(room="none"))
        assert a.after_camera.scale == b.after_camera.scale
    a = make_item("pair", PAIR, [6, 6], "trans-rot", 0, ViewSetup())
    # trans-rot: a rotation about the centre can swing an atom anywhere on the 5 Å circle, then 4 Å more
    assert a.after_camera.scale < (803 - 2 * 0.05 * 803) / 18.0 + 1e-9


def test_bad_room_and_observe_are_input_errors():
    with pytest.raises(InputError, match="room"):
        ViewSetup(room="wide")
    with pytest.raises(InputError, match="observe"):
        ViewSetup(observe="pixels")
    with pytest.raises(InputError, match="min_pixels"):
        ViewSetup(min_pixels=0)


def test_achiral_excluded_with_reason_chiral_kept():
    assert achiral_exclusion("chiral", CHIRAL, CHIRAL_Z, 0.01) is None
    rec = achiral_exclusion("planar", PLANAR, CHIRAL_Z, 0.01)
    assert rec["point_group"] == "Cs" and rec["reason"].startswith("achiral: point group Cs within 0.01 Å")
    structures = [("planar", PLANAR, CHIRAL_Z), ("chiral", CHIRAL, CHIRAL_Z)]
    items, results, summary = run_task(structures, "handedness", ViewSetup(), per_structure=2, seed=3)
    assert {it.structure_id for it in items} == {"chiral"} and len(items) == 2
    assert summary["all"]["n"] == 2
    assert [e["structure_id"] for e in summary["all"]["excluded"]] == ["planar"]
    # the kept items are the ones drawn without the exclusion (the excluded structure's draws are consumed)
    ref = build_items(structures, "handedness", ViewSetup(), per_structure=2, seed=3)
    assert [(i.truth, i.mirror) for i in items] == [(i.truth, i.mirror) for i in ref if i.structure_id == "chiral"]
    _, _, all_summary = run_task(structures, "handedness", ViewSetup(), per_structure=2, seed=3, chiral_only=False)
    assert all_summary["all"]["n"] == 4 and "excluded" not in all_summary["all"]


def test_visible_two_atoms_on_the_view_axis_by_hand():
    # front camera looks along −z: the carbon at z = +3 is in front and hides the one at z = 0 (same radius,
    # same line of sight); a third atom off axis keeps the frame non-degenerate
    pos = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 3.0], [4.0, 2.0, 0.0]])
    ideal = make_item("axis", pos, [6, 6, 8], "rotation", 0, ViewSetup())
    vis = make_item("axis", pos, [6, 6, 8], "rotation", 0, ViewSetup(observe="visible"))
    pose = Pose(np.eye(3), np.zeros(3))  # the before pose
    assert project_pose(ideal, pose)[2].tolist() == [True, True, True]
    assert project_pose(vis, pose)[2].tolist() == [False, True, True]
    # a quarter turn about screen y puts the pair side by side: both visible again
    roll = vis.grid.answers.index(next(a for a in vis.grid.answers if a.format() == "roll y 90"))
    assert project_pose(vis, vis.pose(roll))[2][:2].tolist() == [True, True]


def test_visible_is_a_subset_of_ideal_and_identify_all_equals_identify():
    items = build_items([("chiral", CHIRAL * 3.0, CHIRAL_Z)], "rotation", ViewSetup(observe="visible"),
                        per_structure=3, seed=5)
    ideal = [make_item(i.structure_id, i.positions, i.numbers, i.task, i.truth, ViewSetup()) for i in items]
    kv = candidate_views(items[0], candidates_of(items[0]))[2]
    ki = candidate_views(ideal[0], candidates_of(ideal[0]))[2]
    assert not (kv & ~ki).any()
    a = [r.to_dict(items[0].grid.answers) for r in identify_all(items)]
    b = [identify(i).to_dict(items[0].grid.answers) for i in items]
    assert a == b


def test_certificate_records_observation_model_and_exclusions(tmp_path):
    mol = tmp_path / "m.xyz"
    mol.write_text(CHFCLBR_XYZ)
    s = TaskExportSettings.from_options(task="rotation", seed=1, per_structure=2, width=240, height=180, supersample=1,
                           observe="visible", min_pixels=2)
    build_task_benchmark(mol, tmp_path / "out", s)
    cert = json.loads((tmp_path / "out" / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert cert["view_setup"]["observe"] == "visible" and cert["view_setup"]["min_pixels"] == 2
    assert cert["observation_model"].startswith("visible:") and "fewer than 2 pixel" in cert["observation_model"]
    planar = tmp_path / "p.xyz"
    planar.write_text("4\nplanar\nH 0.9 0.1 0\nF -0.5 0.8 0\nCl -0.2 -0.7 0\nBr 0.1 0.2 0\n")
    with pytest.raises(InputError, match="achiral"):
        build_task_benchmark(planar, tmp_path / "h", TaskExportSettings.from_options(task="handedness", width=240, height=180,
                                                                       supersample=1))
