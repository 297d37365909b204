"""Handedness: what views of a chiral molecule say about its mirror image; CIP stereocentres.

Facts checked: a single orthographic view never fixes handedness (its camera mirror projects identically);
two non-antipodal views do; antipodal views do not; occlusion can resolve one view (hand-built case);
achiral molecules have no handedness; CIP labels of a hand-built (R)-CHBrClF and of CCD components equal
the dictionary's own labels (an independent source).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.molecule_geometries import bromochlorofluoromethane, methane, water
from viewcert.cameras.camera import OrthographicCamera
from viewcert.cameras.policy import FramingPolicy, frame
from viewcert.cameras.pose import look_at
from viewcert.certify.molecule import camera_mirror, handedness, improper_images, stereocentres
from viewcert.observe.project import ObservationModel, observe
from viewcert.oracle.phantoms import analyse
from viewcert.oracle.triangulate import reconstruct
from viewcert.structures import Structure

DELTA = 0.01


def cam(direction, up=(0.0, 1.0, 0.0), name=""):
    return OrthographicCamera(look_at(direction, up=up), np.zeros(3), 50.0, 400, 400, name=name)


def chiral() -> Structure:
    pos, z = bromochlorofluoromethane()
    return Structure(pos, z)


def decide(s, cams, occlusion=False):
    obs = observe(s, cams, ObservationModel(occlusion=occlusion))
    if len(cams) >= 2:
        rec = reconstruct(obs, delta=DELTA, visibility="occlusion" if occlusion else "strict")
        unique = analyse(rec, s, DELTA).unique
    else:
        rec, unique = None, False
    return handedness(s, obs, delta=DELTA, reconstruction=rec, unique=unique)


@pytest.mark.parametrize("direction", [(0, 0, -1), (1, 0, 0), (0.3, -0.5, 0.8), (-1, -1, -1)])
def test_one_orthographic_view_never_fixes_handedness(direction):
    s = chiral()
    c = cam(direction, up=(0.0, 0.0, 1.0) if abs(direction[2]) < 0.9 else (0.0, 1.0, 0.0))
    m = camera_mirror(s, c)
    # the mirror is an improper image: signed volume of (Br, Cl, F) about C flips sign
    vol = lambda p: np.linalg.det(p[2:5] - p[0])  # noqa: E731
    assert np.sign(vol(m.positions)) == -np.sign(vol(s.positions))
    np.testing.assert_allclose(c.project(m.positions)[0], c.project(s.positions)[0], atol=1e-9)
    h = decide(s, [c])
    assert h.status == "not_determined"
    assert h.single_view_resolves == (False,)


@pytest.mark.parametrize(
    "d1, d2", [((0, 0, -1), (0, -1, 0)), ((0, 0, -1), (0.2, 0.1, -1)), ((1, 0.3, -0.2), (-0.4, 1, 0.5))]
)
def test_two_non_antipodal_views_fix_handedness(d1, d2):
    h = decide(
        chiral(),
        [
            cam(d1, up=(0, 0, 1) if abs(d1[2]) < 0.9 else (0, 1, 0), name="a"),
            cam(d2, up=(0, 0, 1) if abs(d2[2]) < 0.9 else (0, 1, 0), name="b"),
        ],
    )
    assert h.status == "determined"
    assert h.chiral


def test_antipodal_views_do_not_fix_handedness():
    h = decide(chiral(), [cam((0, 0, -1), name="front"), cam((0, 0, 1), name="back")])
    assert h.status == "not_determined"
    assert h.witness == "mirror ⟂ view front"


def test_achiral_molecules_have_no_handedness():
    for build in (water, methane):
        pos, z = build()
        h = decide(Structure(pos, z), [cam((0, 0, -1)), cam((0, -1, 0), up=(0, 0, 1))])
        assert h.status == "achiral"
        assert not h.chiral


def test_occlusion_resolves_one_view_when_the_mirror_swaps_who_is_hidden():
    # CHBrClF turned so that Br sits straight behind C for a camera looking down −z: C (nearer) hides Br.
    # The camera mirror puts Br in front of C, so C is hidden instead: the visible labels differ (6 vs 35).
    pos, z = bromochlorofluoromethane()
    br = pos[2] - pos[0]
    rot = look_at(br)  # maps the C→Br direction onto camera −z, i.e. world −z after rotating by rot
    s = Structure(pos @ rot.T, z)
    c = cam((0, 0, -1), name="front")
    seen = observe(s, [c], ObservationModel(occlusion=True)).views[0]
    assert sorted(seen.labels.tolist()) == [1, 6, 9, 17]  # Br hidden behind C
    mirror_seen = observe(camera_mirror(s, c), [c], ObservationModel(occlusion=True)).views[0]
    assert sorted(mirror_seen.labels.tolist()) == [1, 9, 17, 35]  # C hidden behind Br
    h = decide(s, [c], occlusion=True)
    assert h.single_view_resolves == (True,)
    assert h.status == "undecided"  # no witness among the camera mirrors, and no proof from one view


def test_improper_images_found_only_where_the_points_allow():
    s = chiral()
    m = camera_mirror(s, cam((0, 0, -1)))
    assert improper_images(s, s.positions, s.numbers, 0.02) == []
    both = np.vstack([s.positions, m.positions + np.array([10.0, 0, 0])])
    found = improper_images(s, both, np.concatenate([s.numbers, s.numbers]), 0.02)
    assert len(found) == 1
    np.testing.assert_allclose(found[0], m.positions + np.array([10.0, 0, 0]), atol=1e-6)
    pos, z = water()
    assert len(improper_images(Structure(pos, z), pos, z, 0.02)) == 2  # σ(xz) and σ(yz) of C2v


def test_cip_label_of_hand_built_chbrclf():
    # Priorities Br > Cl > F > H. With the lowest priority pointing away from the viewer, 1→2→3 runs
    # counter-clockwise (S) exactly when (v1 × v2)·v3 > 0 (check: v1 = x̂, v2, v3 at 120°, 240° in the xy
    # plane tilted up, viewer on +z). Here (v_Br × v_Cl)·v_F = (2, 2, 0)·(−1, −1, 1) = −4 < 0 -> R.
    s = chiral()
    bonds = [(0, k, 1, False) for k in range(1, 5)]
    assert stereocentres(s, bonds).rdkit == ((0, "R"),)
    assert stereocentres(camera_mirror(s, cam((0, 0, -1))), bonds).rdkit == ((0, "S"),)
    assert stereocentres(s, None).status == "no_bond_graph"


@pytest.mark.parametrize("code, n_centres", [("IBP", 1), ("ATP", 6), ("CLR", 8), ("BNZ", 0)])
def test_ccd_stereocentres_equal_the_dictionary_labels(code, n_centres):
    pytest.importorskip("biotite")
    from viewcert.io.ccd import ccd_record

    r = ccd_record(code)
    st = stereocentres(r.structure, r.bonds, charges=r.charges, source_labels=r.stereo)
    assert st.status == "ok"
    # ibuprofen 1, cholesterol 8 (textbook); ATP: the 4 ribose carbons plus the two inner phosphorus atoms
    # the dictionary labels as stereogenic (P_alpha, P_beta, by its own R/S flags).
    assert len(st.source) == n_centres
    assert dict(st.rdkit) == dict(st.source)


@pytest.mark.parametrize("code", ["IBP", "CLR"])
def test_ideal_shortcut_equals_the_full_path(code):
    pytest.importorskip("biotite")
    from viewcert.cameras import get_protocol
    from viewcert.io.ccd import ccd_record

    s = ccd_record(code).structure
    cams = frame(get_protocol("render-ceiling-5"), s, FramingPolicy(molecule_scale="per-view"))
    obs = observe(s, cams, ObservationModel())
    rec = reconstruct(obs, delta=DELTA)
    unique = analyse(rec, s, DELTA).unique
    full = handedness(s, obs, delta=DELTA, reconstruction=rec, unique=unique)
    fast = handedness(s, obs, delta=DELTA, reconstruction=rec, unique=unique, ideal=True)
    assert unique and fast == full and fast.status == "determined"


def test_c2_axis_perpendicular_to_two_orthogonal_views_defeats_them():
    # For orthogonal view directions d1, d2 and a C2 axis along n = d1 × d2:
    # (I − 2 d1 d1ᵀ)(2 n nᵀ − I) = I − 2 d2 d2ᵀ, so M1(X) = M1(C2 X) = M2(X): one mirror image is the depth
    # flip of both views and matches both. Hydrogen peroxide (C2, chiral) with its C2 axis along x, views
    # front (−z) and top (−y): not determined. Turned off the axis, the same two views determine it.
    pos = np.array([[0, 0.725, 0], [0, -0.725, 0], [0.35, 1.0, 0.85], [0.35, -1.0, -0.85]])
    z = np.array([8, 8, 1, 1])
    front, top = cam((0, 0, -1), name="front"), cam((0, -1, 0), up=(0, 0, -1), name="top")
    s = Structure(pos, z)
    assert decide(s, [front]).chiral  # C2 only: no improper operation
    assert decide(s, [front, top]).status == "not_determined"
    turned = Structure(pos @ look_at((0.3, 0.5, -0.8)).T, z)
    assert decide(turned, [front, top]).status == "determined"
