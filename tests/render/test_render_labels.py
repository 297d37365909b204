"""Labels in the images (``viewcert.render.labels``): real glyphs, the label-ID buffer and the legibility rule,
checked against boxes and fractions worked by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from viewcert.errors import InputError
from viewcert.render import frame_cameras, render_structure
from viewcert.render.labels import (
    Label,
    LabelStyle,
    draw_labels,
    font_path,
    glyph_fractions,
    glyph_mask,
    visible_fractions,
)
from viewcert.structures import Structure

INF = np.inf


def one_render(positions, numbers, width=200, height=160):
    s = Structure(np.asarray(positions, dtype=float), np.asarray(numbers), None)
    cam = frame_cameras(s, "axes-3", width=width, height=height)[0]
    return render_structure(s, [cam])[0]


def test_font_is_dejavu_and_glyphs_are_real_and_deterministic():
    assert font_path().name == "DejaVuSans.ttf" and font_path().is_file()
    a, b = glyph_mask("ARG 285 NH2", 14), glyph_mask.__wrapped__("ARG 285 NH2", 14)
    assert a.tobytes() == b.tobytes() and a.shape == b.shape
    assert a.shape[0] <= 14 and a.shape[1] > 5 * 8  # one line of 11 characters at 14 px
    assert (a > 0).sum() > 50 and a.max() == 255  # ink, anti-aliased coverage 0..255
    assert glyph_mask("O", 14).shape != glyph_mask("OO", 14).shape


def test_label_box_on_empty_image_is_fully_legible():
    # hand-worked: nothing nearer anywhere, no other label -> every pixel of the box is free
    boxes = np.array([[20, 30, 50, 44]])
    assert visible_fractions(boxes, np.array([0.0]), np.full((100, 100), INF)).tolist() == [1.0]


def test_two_overlapping_labels_fraction_by_hand():
    # A = [0,10)x[0,10) at depth 5, B = [5,15)x[5,15) at depth 3 (nearer). They share [5,10)x[5,10): 25 px of
    # each 100 px box -> 0.75 both (in front, B's box hides A's text; behind, A's glyphs show through B's)
    boxes = np.array([[0, 0, 10, 10], [5, 5, 15, 15]])
    depth = np.array([5.0, 3.0])
    surface = np.full((40, 40), INF)
    assert visible_fractions(boxes, depth, surface).tolist() == [0.75, 0.75]
    # a surface at depth 4 over A's two top rows (20 px, disjoint from the shared corner): nearer than A only
    surface[0:2, 0:10] = 4.0
    assert visible_fractions(boxes, depth, surface).tolist() == [0.55, 0.75]
    # a third box far away changes nothing
    boxes3 = np.vstack([boxes, [[30, 30, 35, 35]]])
    f = visible_fractions(boxes3, np.array([5.0, 3.0, 1.0]), np.full((40, 40), INF))
    assert f.tolist() == [0.75, 0.75, 1.0]
    # a box half outside the image: the outside half counts as covered
    assert visible_fractions(np.array([[-5, 0, 5, 10]]), np.array([0.0]), np.full((40, 40), INF)).tolist() == [0.5]
    st = LabelStyle(min_visible=0.8)
    assert st.min_visible == 0.8 and st.to_dict()["font"] == "DejaVuSans.ttf"
    assert (np.array([0.75, 0.8, 0.81]) >= st.min_visible).tolist() == [False, True, True]


def test_label_in_a_render_its_id_buffer_and_placement():
    r = one_render([[0.0, 0.0, 0.0]], [8])
    layer = draw_labels(r, [Label("O1", 0)])
    u, v = r.camera.project(r.scene.sphere_centres[0])[0]
    rad = r.scene.sphere_radii[0] / r.camera.pixel_size()
    u0, v0, u1, v1 = layer.boxes[0].tolist()
    assert u0 == round(u + 0.7 * rad) and v1 == round(v - 0.7 * rad)  # upper right of the disc
    assert (u1 - u0, v1 - v0) == glyph_mask("O1", 14).shape[::-1]
    assert layer.visible_fraction.tolist() == [1.0] and layer.legible().tolist() == [True]
    ids = layer.label_id
    mask = glyph_mask("O1", 14) >= 128
    assert (ids[v0:v1, u0:u1] == 0).tolist() == mask.tolist()  # the ID buffer is exactly the glyph's ink
    assert (ids == 0).sum() == mask.sum()
    # the glyphs are in the image: dark pixels where the ID buffer says label
    assert layer.rgb[ids == 0].max() < 128 and r.rgb[ids == 0].min() > 128
    again = draw_labels(r, [Label("O1", 0)])
    assert again.rgb.tobytes() == layer.rgb.tobytes() and again.label_id.tobytes() == ids.tobytes()


def test_label_behind_a_nearer_atom_is_hidden():
    # axes-3's first view looks down −z: an atom 3 Å nearer, shifted up and right, sits over the region where
    # the far atom's label lands; the label loses exactly the pixels where that surface is nearer
    r = one_render([[0.0, 0.0, 0.0], [0.9, 0.6, 3.0]], [6, 6])
    z = r.camera.project(r.scene.sphere_centres)[1]
    far = int(np.argmax(z))
    layer = draw_labels(r, [Label("FAR", far)])
    u0, v0, u1, v1 = layer.boxes[0].tolist()
    assert u0 >= 0 and v0 >= 0  # inside the image: no clipping in the expectations below
    region = r.depth[v0:v1, u0:u1]
    ink = glyph_mask("FAR", 14) >= 128
    expect = float((ink & (region >= layer.depth[0])).sum()) / ink.sum()  # rule "glyph": its own ink
    assert 0.0 < expect < 1.0  # the geometry really covers part of the glyphs
    assert layer.visible_fraction[0] == pytest.approx(expect, abs=0)
    assert not (layer.label_id[v0:v1, u0:u1][region < layer.depth[0]] == 0).any()
    boxed = draw_labels(r, [Label("FAR", far)], LabelStyle(rule="box"))  # rule "box": every pixel of the box
    assert boxed.visible_fraction[0] == pytest.approx(float((region >= layer.depth[0]).sum()) / region.size, abs=0)


def test_glyph_fractions_by_hand():
    # 10 x 10 image, a nearer surface (depth 1) over row 0. Label A: box [1, 0, 5, 3) at depth 2 with the mask
    #   255 255   0   0      ink (>= 128): (v, u) = (0, 1) (0, 2) (1, 2) (2, 2) (2, 4): 5 pixels; 127 is no ink
    #     0 200   0   0      row 0 lies under the nearer surface: A draws (1, 2) (2, 2) (2, 4)
    #     0 128 127 255
    # Label B: box [4, 3, 6, 4) at depth 0.5, ink (3, 4) (3, 5), both drawn. Label C: box [9, 9, 11, 10),
    # ink (9, 9) and (9, 10), the second outside the image.
    surface = np.full((10, 10), INF)
    surface[0, :] = 1.0
    masks = [np.array([[255, 255, 0, 0], [0, 200, 0, 0], [0, 128, 127, 255]], dtype=np.uint8),
             np.array([[255, 255]], dtype=np.uint8), np.array([[255, 255]], dtype=np.uint8)]
    boxes = np.array([[1, 0, 5, 3], [4, 3, 6, 4], [9, 9, 11, 10]])
    depth = np.array([2.0, 0.5, 0.0])
    # merge_px 0: no ink coincides. A 3/5, B 2/2, C 1/2
    assert glyph_fractions(boxes, depth, surface, masks, 0).tolist() == [0.6, 1.0, 0.5]
    # merge_px 1: A's (2, 4) and B's (3, 4), (3, 5) are within one pixel of each other -> A 2/5, B 0/2
    assert glyph_fractions(boxes, depth, surface, masks, 1).tolist() == [0.4, 0.0, 0.5]
    st = LabelStyle()
    assert (st.rule, st.merge_px, st.min_visible) == ("glyph", 1, 0.8)
    d = st.to_dict()
    assert (d["rule"], d["merge_px"], d["ink_threshold"], d["min_visible"]) == ("glyph", 1, 128, 0.8)
    old = LabelStyle(rule="visible fraction of the text box (not under a nearer surface or any other label's box)")
    assert old.rule == "box" and "merge_px" not in old.to_dict()  # a certificate before issue 28 reads back


def brute_glyph_fractions(boxes, depth, surface, masks, merge_px):
    """Twin from the definition: a label's glyph pixel (mask >= 128) counts when it is in the image, no nearer
    surface covers it, and no other label draws a glyph pixel (in the image, passing its own depth test)
    within merge_px pixels in both directions."""
    h, w = surface.shape
    drawn = []
    for k, (u0, v0, _, _) in enumerate(boxes):
        pix = set()
        for dv, row in enumerate(masks[k]):
            for du, val in enumerate(row):
                v, u = v0 + dv, u0 + du
                if val >= 128 and 0 <= u < w and 0 <= v < h and surface[v, u] >= depth[k]:
                    pix.add((v, u))
        drawn.append(pix)
    out = []
    for k in range(len(boxes)):
        total = sum(int(val >= 128) for row in masks[k] for val in row)
        free = sum(1 for v, u in drawn[k] if not any(
            (v + a, u + b) in drawn[j] for j in range(len(boxes)) if j != k
            for a in range(-merge_px, merge_px + 1) for b in range(-merge_px, merge_px + 1)))
        out.append(free / total if total else 0.0)
    return out


def test_bad_labels_are_one_line():
    r = one_render([[0.0, 0.0, 0.0]], [8])
    with pytest.raises(InputError, match="names atom 3"):
        draw_labels(r, [Label("X", 3)])
    with pytest.raises(InputError, match="printable"):
        draw_labels(r, [Label("bad\nlabel", 0)])
    with pytest.raises(InputError, match="min_visible"):
        LabelStyle(min_visible=1.5)
    with pytest.raises(InputError, match="rule must be one of glyph, box"):
        LabelStyle(rule="pixels")
    with pytest.raises(InputError, match="merge_px"):
        LabelStyle(merge_px=-1)


def brute_fractions(boxes, depth, surface):
    """Twin from the definition: per pixel of each box, free iff inside the image, no nearer surface, and
    inside no other label's box."""
    h, w = surface.shape
    out = []
    for k, (u0, v0, u1, v1) in enumerate(boxes):
        free = 0
        for v in range(v0, v1):
            for u in range(u0, u1):
                if not (0 <= u < w and 0 <= v < h) or surface[v, u] < depth[k]:
                    continue
                if any(boxes[j][0] <= u < boxes[j][2] and boxes[j][1] <= v < boxes[j][3]
                       for j in range(len(boxes)) if j != k):
                    continue
                free += 1
        out.append(free / ((u1 - u0) * (v1 - v0)))
    return out


box = hs.tuples(hs.integers(-5, 25), hs.integers(-5, 25), hs.integers(1, 12), hs.integers(1, 8))


@settings(max_examples=60, deadline=None)
@given(hs.lists(hs.tuples(box, hs.sampled_from([1.0, 2.0, 3.0])), min_size=1, max_size=6),
       hs.integers(0, 2**31 - 1))
def test_visible_fractions_match_the_definition(items, seed):
    rng = np.random.default_rng(seed)
    surface = np.where(rng.random((24, 30)) < 0.2, rng.choice([0.5, 1.5, 2.5], size=(24, 30)), INF)
    boxes = np.array([[u, v, u + w, v + h] for (u, v, w, h), _ in items])
    depth = np.array([d for _, d in items])
    assert visible_fractions(boxes, depth, surface).tolist() == pytest.approx(brute_fractions(
        boxes.tolist(), depth.tolist(), surface), abs=1e-12)


glyph_box = hs.tuples(hs.integers(-4, 20), hs.integers(-4, 16), hs.integers(1, 6), hs.integers(1, 5),
                      hs.sampled_from([0.5, 1.5, 2.5]))


@settings(max_examples=80, deadline=None)
@given(hs.lists(glyph_box, min_size=1, max_size=6), hs.integers(0, 2), hs.integers(0, 2**31 - 1))
def test_glyph_fractions_match_the_definition(items, merge_px, seed):
    rng = np.random.default_rng(seed)
    surface = np.where(rng.random((18, 24)) < 0.2, rng.choice([0.5, 1.5, 2.5], size=(18, 24)), INF)
    boxes = np.array([[u, v, u + w, v + h] for u, v, w, h, _ in items])
    depth = np.array([d for *_, d in items])
    masks = [rng.choice(np.array([0, 100, 127, 128, 200, 255], dtype=np.uint8), size=(h, w))
             for _, _, w, h, _ in items]
    got = glyph_fractions(boxes, depth, surface, masks, merge_px)
    # both divide the same two integers: equal exactly
    assert got.tolist() == brute_glyph_fractions(boxes.tolist(), depth.tolist(), surface, [m.tolist() for m in masks],
                                                 merge_px)
