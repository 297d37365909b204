"""viewcert.detect.detect_atoms on images painted from the definition (tests/support/discs.py): the centres,
radii and elements it reads against the discs painted, for flat and shaded discs, antialiased or not, PNG or JPEG,
partly hidden, with outlines and lines over them; colour ties settled by the palette's radii or reported."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("skimage", reason="the detector needs scikit-image (the [images] extra)")

from scipy.optimize import linear_sum_assignment  # noqa: E402

from tests.support.discs import jpeg, paint  # noqa: E402
from viewcert.detect import DetectorSettings, detect_atoms, palette_from_table  # noqa: E402
from viewcert.errors import InputError  # noqa: E402

PALETTE = palette_from_table({"Na": [171, 92, 242], "Cl": [31, 240, 31], "O": [255, 13, 13],
                              "radii": {"Na": 1.66, "Cl": 1.02, "O": 0.66}})
NA, CL, OX = PALETTE.colours["Na"], PALETTE.colours["Cl"], PALETTE.colours["O"]


def _paired(det, centres):
    """(index of each painted disc's detection, its distance px): one-to-one, nearest first."""
    d = np.linalg.norm(np.asarray(centres)[:, None, :] - det.centres[None, :, :], axis=2)
    rows, cols = linear_sum_assignment(d)
    out = np.full(len(centres), -1)
    dist = np.full(len(centres), np.inf)
    out[rows], dist[rows] = cols, d[rows, cols]
    return out, dist


def _scene():
    """Five discs, three overlapping (the middle one behind both neighbours), one small and one alone."""
    centres = [(60.3, 64.7), (92.6, 70.2), (121.1, 62.4), (170.8, 120.3), (40.2, 140.9)]
    radii = [22.0, 22.0, 14.0, 22.0, 14.0]
    elements = ["Na", "Na", "Cl", "Na", "Cl"]
    depth = [1.0, 5.0, 0.0, 2.0, 3.0]
    return centres, radii, elements, depth


def test_flat_outlined_discs_with_a_line_over_them():
    centres, radii, els, depth = _scene()
    img, visible = paint((220, 180), centres, radii, [PALETTE.colours[e] for e in els], depth=depth, outline=1.4,
                         lines=[((5.5, 100.5), (210.5, 20.5))])
    det = detect_atoms(img, PALETTE, ["Na", "Cl"])
    assert det.shading == "flat" and len(det) == 5
    idx, dist = _paired(det, centres)
    assert dist.max() <= 0.3, dist
    assert [det.elements[i] for i in idx] == els
    assert all(v >= 30 for v in visible)


def test_shaded_spheres_on_black():
    centres, radii, els, depth = _scene()
    img, _ = paint((220, 180), centres, radii, [PALETTE.colours[e] for e in els], depth=depth, shaded=True,
                   background=(0, 0, 0))
    det = detect_atoms(img, PALETTE, ["Na", "Cl"])
    assert det.shading == "shaded"
    idx, dist = _paired(det, centres)
    assert len(det) == 5 and dist.max() <= 0.5, dist
    assert [det.elements[i] for i in idx] == els


def test_jpeg_and_no_antialiasing():
    centres, radii, els, depth = _scene()
    img, _ = paint((220, 180), centres, radii, [PALETTE.colours[e] for e in els], depth=depth, ss=1)
    for picture in (img, jpeg(img, 75)):
        det = detect_atoms(picture, PALETTE, ["Na", "Cl"])
        idx, dist = _paired(det, centres)
        assert len(det) == 5 and dist.max() <= 0.6, dist
        assert [det.elements[i] for i in idx] == els


def test_a_sliver_behind_a_nearer_disc():
    """A disc of which only a crescent ~4 px wide shows beside a nearer disc: found from its own rim."""
    centres = [(80.0, 80.0), (85.5, 80.0)]
    img, visible = paint((160, 160), centres, [20.0, 20.0], [NA, CL], depth=[5.0, 1.0], outline=1.4)
    assert 30 <= visible[0] < 400
    det = detect_atoms(img, PALETTE, ["Na", "Cl"])
    idx, dist = _paired(det, centres)
    assert len(det) == 2 and dist.max() <= 1.0, dist
    assert [det.elements[i] for i in idx] == ["Na", "Cl"]


#: the limit left: at these spacings the front sphere's rim gives the centre votes too few mask-rim points, and
#: votes from the lighting's edges (tried) find it but invent discs at shadows and highlights in real renders
#: (benchmarks/bench_detection.py, PyMOL orthographic: 99 invented instead of 49), so they only help the fits
_FRONT_MISSED = pytest.mark.xfail(strict=True, reason="the lighting's edges help the fits, not the centre votes")


@pytest.mark.parametrize("spacing, turn", [(1.3, 0.1), pytest.param(1.4, 0.6, marks=_FRONT_MISSED),
                                           pytest.param(1.6, 0.1, marks=_FRONT_MISSED)])
def test_the_nearest_sphere_ringed_by_farther_ones_of_its_colour(spacing, turn):
    """A shaded sphere in front of four farther spheres of its own colour set around it, each overlapping it: most
    of its rim lies over theirs, where its element's mask has no rim; there only the lighting jumps at its limb
    (``circles.shading_edges``). All five found within 1 px (each shows ≥ 300 pixels). The first case fails when
    the lighting's edges are left out (before them the front sphere was missed: its rim arcs in the gaps are too
    short a support for a fit); the other two still fail (``_FRONT_MISSED``)."""
    r = 14.0
    ring = [(65.2 + spacing * r * np.cos(a + turn), 64.7 + spacing * r * np.sin(a + turn))
            for a in np.arange(4) * np.pi / 2]
    centres = [(65.2, 64.7), *ring]
    img, visible = paint((130, 130), centres, r, [NA] * 5, depth=[0.0, 1.0, 1.1, 1.2, 1.3], shaded=True)
    assert visible.min() >= 300
    det = detect_atoms(img, PALETTE, ["Na"])
    idx, dist = _paired(det, centres)
    assert len(det) == 5 and dist.max() <= 1.0, dist


def test_small_markers_are_blobs():
    """matplotlib's default scatter markers: discs of ~1.5 px radius, read as blobs."""
    rng = np.random.default_rng(4)
    centres = rng.uniform(10, 110, size=(12, 2))
    centres = centres[np.argsort(centres[:, 0])]
    keep = [0]
    for k in range(1, len(centres)):
        if np.min(np.linalg.norm(centres[keep] - centres[k], axis=1)) > 8:
            keep.append(k)
    centres = centres[keep]
    els = ["O" if k % 2 else "Cl" for k in range(len(centres))]
    img, _ = paint((120, 120), centres, 1.6, [PALETTE.colours[e] for e in els])
    det = detect_atoms(img, PALETTE, ["O", "Cl"])
    idx, dist = _paired(det, centres)
    assert len(det) == len(centres) and dist.max() <= 0.35, dist
    assert [det.elements[i] for i in idx] == els


def test_colour_tie_settled_by_radius_or_reported():
    """Two elements drawn in one colour: the palette's radii tell them apart when they differ (a third element's
    disc gives the image's scale); equal radii leave the element empty, both named."""
    tie = palette_from_table({"Na": [200, 120, 40], "K": [200, 120, 40], "O": [255, 13, 13],
                              "radii": {"Na": 1.0, "K": 2.0, "O": 1.0}})
    centres = [(50.0, 50.0), (130.0, 60.0), (90.0, 130.0)]
    img, _ = paint((180, 180), centres, [12.0, 24.0, 12.0], [tie.colours["Na"], tie.colours["K"], tie.colours["O"]])
    det = detect_atoms(img, tie, ["Na", "K", "O"])
    idx, _ = _paired(det, centres)
    assert [det.elements[i] for i in idx] == ["Na", "K", "O"]
    equal = palette_from_table({"radii": {"K": 1.0}}, base=tie)
    det = detect_atoms(img[:, :, :], equal, ["Na", "K", "O"])
    idx, _ = _paired(det, centres)
    assert det.elements[idx[0]] == "" and det.candidates[idx[0]] == "K|Na"
    assert det.elements[idx[2]] == "O" and det.candidates[idx[2]] == ""


def test_bad_input():
    with pytest.raises(InputError, match="8-bit RGB"):
        detect_atoms(np.zeros((10, 10), dtype=np.uint8), PALETTE, ["Na"])
    with pytest.raises(InputError, match="no colour for element 'Fe'"):
        detect_atoms(np.zeros((10, 10, 3), dtype=np.uint8), PALETTE, ["Fe"])
    with pytest.raises(InputError, match="shading"):
        DetectorSettings(shading="glossy")


def test_detections_value_is_plain():
    """The output is a documented plain value: arrays and symbols, its JSON form one row per atom."""
    img, _ = paint((80, 80), [(40.0, 40.0)], 15.0, [OX])
    det = detect_atoms(img, PALETTE, ["O"])
    d = det.to_dict()
    assert d["width"] == 80 and d["height"] == 80 and len(d["atoms"]) == 1
    a = d["atoms"][0]
    assert a["element"] == "O" and abs(a["u"] - 40) < 0.2 and abs(a["v"] - 40) < 0.2 and abs(a["radius"] - 15) < 1
    assert det.centres.flags.writeable is False
