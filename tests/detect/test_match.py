"""viewcert.detect.match on hand-worked cases: detections matched one-to-one to the atoms a projection draws within
their gate, the nearest atom first where atoms coincide, the unmatched reported; the discs painted farthest first;
the observations in the equivalent camera's frame."""

from __future__ import annotations

import numpy as np

from viewcert.cameras import PixelProjection
from viewcert.detect.detector import Detections
from viewcert.detect.match import match_detections, painted_pixels, published_view


def _ortho(scale=10.0, w=100, h=80):
    """u = 50 + 10 x, v = 40 − 10 y (world Å; the camera looks down −z, depth = −z)."""
    p = np.array([[scale, 0, 0, w / 2], [0, -scale, 0, h / 2], [0, 0, 0, 1.0]])
    return PixelProjection(p, w, h, "orthographic", tool="matrix", name="front")


def _det(centres, radii, elements):
    return Detections(np.array(centres, float), np.array(radii, float), tuple(elements), ("",) * len(elements),
                      np.ones(len(elements)), "flat", (255, 255, 255), 100, 80)


def test_hand_worked_match():
    # atoms: O at (1, 2, 0) -> (60, 20); Na at (-2, 0, 1) -> (30, 40); a second O behind the first, (1, 2, -3)
    pos = [(1, 2, 0), (-2, 0, 1), (1, 2, -3)]
    z = [8, 11, 8]
    det = _det([(60.3, 20.4), (30.0, 41.0), (80.0, 70.0)], [5.0, 6.0, 4.0], ["O", "Na", "O"])
    m = match_detections(det, _ortho(), pos, z)
    assert m.atom.tolist() == [0, 1, -1]  # the nearer O (depth 0, not 3) is the one drawn; (80, 70): nothing
    assert np.allclose(m.residual[:2], [0.5, 1.0])
    assert m.n_matched == 2 and m.n_unmatched == 1 and m.element_ok.tolist() == [True, True, False]
    assert np.isclose(m.residual[2], np.hypot(20, 50))  # to the nearest projected atom, (60, 20): reported
    assert np.isclose(m.centre_rms(), np.sqrt((0.25 + 1.0) / 2)) and np.isclose(m.centre_max(), 1.0)
    # the O behind the O is hidden (its disc lies under the nearer one's): not expected; the other two are
    assert m.expected.tolist() == [True, True, False]


def test_gate_and_element_cost():
    """A detection 3 px from an atom of radius 4 px is outside its gate (max(2, 0.5 × 4) = 2 px): unmatched;
    between two atoms at equal distance the one of its element is taken."""
    det = _det([(63.0, 20.0)], [4.0], ["O"])
    assert match_detections(det, _ortho(), [(1, 2, 0)], [8]).atom.tolist() == [-1]
    det = _det([(55.0, 20.0)], [12.0], ["O"])
    m = match_detections(det, _ortho(), [(0, 2, 0), (1, 2, 0)], [11, 8])  # (50, 20) Na and (60, 20) O
    assert m.atom.tolist() == [1] and m.element_ok.tolist() == [True]


def test_painted_pixels_hand_worked():
    # a disc of radius 2 at (5, 5): pixel centres within 2 px: 12 (the 4×4 block minus its corners); a nearer disc
    # of radius 1 at (5, 5) covers the 4 central pixel centres, which the farther one then loses
    n = painted_pixels(np.array([[5.0, 5.0], [5.0, 5.0]]), np.array([2.0, 1.0]), np.array([2.0, 1.0]), 10, 10)
    assert n.tolist() == [8, 4]


def test_published_view_maps_into_the_equivalent_camera():
    proj = _ortho()
    cam, warp = proj.equivalent()
    assert np.allclose(warp, [[1, 0, 0], [0, 1, 0]])  # square pixels: the identity
    det = _det([(60.0, 20.0), (10.0, 10.0), (30.0, 40.0)], [5, 5, 5], ["O", "", "Na"])
    m = match_detections(det, proj, [(1, 2, 0), (-2, 0, 1)], [8, 11])
    view = published_view(det, m, proj, cell_index=[0, 1], tiles=[0, 0], name="front")
    assert len(view) == 2  # the ambiguous detection is left out
    assert np.allclose(view.uv, [(60, 20), (30, 40)]) and view.labels.tolist() == [8, 11]
    assert view.atom_index.tolist() == [0, 1] and view.camera.name == "front"
    assert np.allclose(cam.project(np.array([[1.0, 2.0, 0.0]]))[0], [(60, 20)])
