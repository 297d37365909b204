"""Camera recovery (``viewcert.recover.recover_camera``) on pictures whose truth is known independently of the
solver: viewcert's own renderer draws a structure through a camera chosen here, the detections are the centroids
of each atom's visible pixels in its atom-ID buffer, and the truth is the camera's exact projection of those atoms.
The detections are the renderer's exact projections of the atoms with at least 30 visible pixels in its
atom-ID buffer, plus Gaussian noise of 0.3 px (seeded): a detector's error, without the bias of a crescent's
centroid (what the detector makes of a partly hidden atom is the pixel reader's test, not the solver's).
The acceptance measure of issue 54 throughout: the set-to-set residual (each drawn atom's true centre to the
nearest atom of its element under the recovered projection), RMS ≤ 1 px."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tests.support.molecule_geometries import benzene, methane, sf6
from viewcert.cameras import OrthographicCamera, PerspectiveCamera, PixelProjection
from viewcert.cameras.pose import ase_rotation_matrix
from viewcert.io.builtin import builtin
from viewcert.observe import drawn_atoms
from viewcert.recover import DetectedAtoms, RecoveryHints, recover_camera
from viewcert.render import observe_rendered
from viewcert.structures import Structure

SIZE = 400


def _structure(name: str) -> Structure:
    return next(s for s in builtin("sample" if name.startswith("ccd") else "prototypes") if s.identifier == name)


def _camera(xyz, rotation, kind: str, fov_deg: float = 30.0):
    c = 0.5 * (xyz.min(0) + xyz.max(0))
    cam_xy = (xyz - c) @ rotation.T
    extent = float(np.abs(cam_xy[:, :2]).max()) + 1.5
    if kind == "orthographic":
        return OrthographicCamera(rotation=rotation, center=c, scale=(SIZE / 2 - 20) / extent, width=SIZE,
                                  height=SIZE)
    focal = 0.5 * SIZE / math.tan(math.radians(fov_deg / 2))
    distance = extent * focal / (SIZE / 2 - 20) + float(np.abs(cam_xy[:, 2]).max())
    return PerspectiveCamera(rotation=rotation, position=c + distance * rotation[2], focal=focal, width=SIZE,
                             height=SIZE)


def _picture(structure: Structure, camera, tiling=(1, 1, 1), seed: int = 0):
    """(drawn xyz, numbers, detections, true centres (m, 2), their numbers) from viewcert's renderer."""
    exact = observe_rendered(structure, [camera], tiling=tiling, min_pixels=30, position="projection").views[0]
    xyz, z, _, _ = drawn_atoms(structure, tiling)
    noisy = exact.uv + np.random.default_rng(seed).normal(scale=0.3, size=exact.uv.shape)
    return xyz, z, DetectedAtoms(noisy, exact.labels), np.asarray(exact.uv), np.asarray(exact.labels)


def _set_rms(projection: PixelProjection, xyz, z, truth, truth_z) -> float:
    uv, _ = projection.project(xyz)
    d = [np.nanmin(np.linalg.norm(uv[z == e] - t, axis=1)) for t, e in zip(truth, truth_z, strict=True)]
    return float(np.sqrt(np.mean(np.square(d))))


@pytest.mark.parametrize("name, kind, rotation, tiling", [
    ("ccd:IBP", "orthographic", Rotation.from_euler("xyz", [30, -50, 20], degrees=True).as_matrix(), (1, 1, 1)),
    ("ccd:IBP", "perspective", Rotation.from_euler("xyz", [-60, 15, 80], degrees=True).as_matrix(), (1, 1, 1)),
    # rock salt 2×2×2 along the study's axis_a: columns of atoms stacked exactly behind one another
    ("aflow:AB_cF8_225_a_b", "orthographic", ase_rotation_matrix("0x,-90y,0z").T, (2, 2, 2)),
    ("aflow:A2B_mP12_14_2e_e", "orthographic", Rotation.from_euler("zyx", [15, 40, -25], degrees=True).as_matrix(),
     (2, 2, 2)),
])
def test_recovers_viewcerts_own_pictures(name, kind, rotation, tiling):
    structure = _structure(name)
    camera = _camera(drawn_atoms(structure, tiling)[0], rotation, kind)
    xyz, z, det, truth, truth_z = _picture(structure, camera, tiling)
    rec = recover_camera(xyz, z, det, SIZE, SIZE, hints=RecoveryHints(kind=kind))
    assert rec.recovered, rec.message
    best = rec.poses[0]
    assert best.projection.kind == kind
    assert _set_rms(best.projection, xyz, z, truth, truth_z) <= 1.0
    # every admissible pose draws the same picture
    for pose in rec.poses:
        assert _set_rms(pose.projection, xyz, z, truth, truth_z) <= 1.0
    # the true camera is among the admissible poses: its atoms land where it put them, identities kept
    true = PixelProjection.from_camera(camera)
    uv_true, _ = true.project(xyz)
    closest = min(np.nanmax(np.linalg.norm(p.projection.project(xyz)[0] - uv_true, axis=1)) for p in rec.poses)
    assert closest <= 3.0


def test_kind_chosen_by_the_residuals():
    """No hint: a strong perspective is told from an orthographic camera by its residuals."""
    structure = _structure("ccd:IBP")
    rotation = Rotation.from_euler("xyz", [-60, 15, 80], degrees=True).as_matrix()
    camera = _camera(structure.positions, rotation, "perspective", fov_deg=45.0)
    xyz, z, det, truth, truth_z = _picture(structure, camera)
    rec = recover_camera(xyz, z, det, SIZE, SIZE)
    assert rec.recovered, rec.message
    assert rec.poses[0].projection.kind == "perspective"
    assert _set_rms(rec.poses[0].projection, xyz, z, truth, truth_z) <= 1.0


@pytest.mark.parametrize("builder, kind, expected", [
    # the number of cameras drawing the same picture is the order of the molecule's point group when every op
    # keeps the picture (orthographic: a mirror or an inversion only flips depth), its proper half in perspective
    (methane, "orthographic", 24),     # Td
    (benzene, "perspective", 12),      # D6h: 24 operations, 12 proper
    (sf6, "orthographic", 48),         # Oh
])
def test_symmetric_molecules_list_every_admissible_pose(builder, kind, expected):
    pos, numbers = builder()
    structure = Structure(pos, numbers)
    rotation = Rotation.from_euler("xyz", [37, -21, 64], degrees=True).as_matrix()
    camera = _camera(pos, rotation, kind, fov_deg=25.0)
    xyz, z, det, truth, truth_z = _picture(structure, camera)
    assert len(det) == len(pos)  # this view hides no atom
    rec = recover_camera(xyz, z, det, SIZE, SIZE, hints=RecoveryHints(kind=kind))
    assert rec.recovered, rec.message
    assert len(rec.poses) == expected
    for pose in rec.poses:
        assert _set_rms(pose.projection, xyz, z, truth, truth_z) <= 1.0
    assert rec.spread_deg > 90.0  # the poses are far apart (a C2 of the group is 180°)
    assert "admissible poses" in rec.message


def _ibuprofen_picture():
    structure = _structure("ccd:IBP")
    camera = _camera(structure.positions, Rotation.from_euler("xyz", [30, -50, 20], degrees=True).as_matrix(),
                     "orthographic")
    return _picture(structure, camera)


def test_swapped_structure_is_not_recovered():
    """The picture of ibuprofen certified against ATP's file: one line, never a camera."""
    _, _, det, _, _ = _ibuprofen_picture()
    atp = _structure("ccd:ATP")
    rec = recover_camera(atp.positions, atp.numbers, det, SIZE, SIZE)
    assert not rec.recovered and rec.poses == ()
    assert rec.message.startswith("camera not recovered: ")
    assert "\n" not in rec.message


def test_empty_image_and_two_atoms_are_not_recovered():
    xyz, z, det, _, _ = _ibuprofen_picture()
    empty = recover_camera(xyz, z, DetectedAtoms(np.zeros((0, 2)), np.zeros(0, dtype=int)), SIZE, SIZE)
    assert not empty.recovered and empty.message == "camera not recovered: no atoms detected in the image"
    two = recover_camera(xyz, z, DetectedAtoms(det.uv[:2], det.labels[:2]), SIZE, SIZE)
    assert not two.recovered
    assert two.message == ("camera not recovered: only 2 atoms detected; at least 4 are needed to fix and check "
                           "a camera")


def test_collinear_atoms_and_foreign_elements_are_refused():
    co2 = np.array([[-1.16, 0, 0], [0, 0, 0], [1.16, 0, 0]])
    det = DetectedAtoms([[100, 100], [150, 100], [200, 100], [250, 100]], [8, 6, 8, 6])
    rec = recover_camera(np.vstack([co2, co2 + [5, 0, 0]]), [8, 6, 8, 8, 6, 8], det, SIZE, SIZE)
    assert not rec.recovered and "collinear" in rec.reason
    xyz, z, det, _, _ = _ibuprofen_picture()
    iron = DetectedAtoms(det.uv, np.full(len(det), 26))
    rec = recover_camera(xyz, z, iron, SIZE, SIZE)
    assert not rec.recovered and "elements the structure does not have (Fe)" in rec.reason


def test_a_spurious_detection_on_the_outline_and_a_strong_perspective():
    """A false detection in the image's corner becomes a vertex of the detections' outline (the triples avoid it:
    the outline without each vertex in turn); a 60° field of view is far from its weak-perspective approximation
    (exact P3P hypotheses)."""
    structure = _structure("ccd:IBP")
    rotation = Rotation.from_euler("xyz", [-60, 15, 80], degrees=True).as_matrix()
    for kind, fov in (("orthographic", 30.0), ("perspective", 60.0)):
        camera = _camera(structure.positions, rotation, kind, fov_deg=fov)
        xyz, z, det, truth, truth_z = _picture(structure, camera)
        noisy = DetectedAtoms(np.vstack([det.uv, [[12.0, 15.0]]]), np.append(det.labels, 6))
        rec = recover_camera(xyz, z, noisy, SIZE, SIZE)
        assert rec.recovered, rec.message
        assert rec.poses[0].projection.kind == kind
        assert rec.poses[0].n_matched == len(det)  # the false one left unexplained
        assert _set_rms(rec.poses[0].projection, xyz, z, truth, truth_z) <= 1.0


def test_missing_atoms_refuse_only_what_chance_could_explain():
    """A detector that misses half the atoms of a crowded picture: the explained detections are far beyond chance
    (binomial tail below 10⁻⁸), so the atoms missing do not refuse the camera. Five detections of one corner of
    the molecule: five explained detections are within chance, so every threshold applies and the picture is
    refused."""
    structure = _structure("ccd:ATP")
    camera = _camera(structure.positions, Rotation.from_euler("xyz", [10, 70, -30], degrees=True).as_matrix(),
                     "orthographic")
    xyz, z, det, truth, truth_z = _picture(structure, camera)
    keep = np.random.default_rng(5).permutation(len(det))[: len(det) // 2]
    half = DetectedAtoms(det.uv[keep], det.labels[keep])
    rec = recover_camera(xyz, z, half, SIZE, SIZE, hints=RecoveryHints(kind="orthographic"))
    assert rec.recovered, rec.message
    assert rec.poses[0].missing > 0.25 and rec.poses[0].chance_log10 < -8
    assert _set_rms(rec.poses[0].projection, xyz, z, truth[keep], truth_z[keep]) <= 1.0
    corner = np.argsort(det.uv[:, 0] + det.uv[:, 1])[:5]
    few = recover_camera(xyz, z, DetectedAtoms(det.uv[corner], det.labels[corner]), SIZE, SIZE,
                         hints=RecoveryHints(kind="orthographic"))
    assert not few.recovered and few.best is not None and few.best.chance_log10 > -8


def test_elements_the_colours_got_wrong_are_set_aside():
    """A detector that reads every grey carbon as a white hydrogen (a renderer's lighting): no camera explains the
    labels, the camera found with the elements set aside explains the picture far beyond chance, and the recovery
    says how many explained detections carry another element than their atom's (here every carbon)."""
    xyz, z, det, truth, truth_z = _ibuprofen_picture()
    wrong = DetectedAtoms(det.uv, np.where(det.labels == 6, 1, det.labels))
    rec = recover_camera(xyz, z, wrong, SIZE, SIZE)
    assert rec.recovered, rec.message
    assert rec.labels_disagree == int((det.labels == 6).sum())
    assert "elements set aside" in rec.message
    assert _set_rms(rec.poses[0].projection, xyz, z, truth, truth_z) <= 1.0
