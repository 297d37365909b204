"""Atom-name and residue labels drawn into a rendered view, with a per-pixel label-ID buffer and a
legibility rule.

Glyphs: DejaVu Sans (the TrueType font matplotlib ships), rasterised by Pillow's FreeType binding at a fixed
pixel size with its basic layout engine (no shaping library, no kerning tables beyond the font's own), at
integer pixel positions: the same text, size and position give the same bytes.

Placement (ChimeraX-style, beside the atom): label ``k`` of atom ``a`` has its text box's left edge at
u_a + 0.7 r_a and its bottom at v_a − 0.7 r_a (px; (u_a, v_a) the projected centre, r_a the drawn radius in
px, both rounded to the pixel), i.e. at the upper right of the atom's disc. Its depth is the atom's front
surface, depth_a − radius_a (Å, the camera's depth).

Compositing: labels are painted from the farthest to the nearest (ties: the higher index first, so the lower
index wins); a glyph pixel shows where no drawn surface is nearer than the label (the render's depth
buffer) and no nearer label's glyph was painted. ``label_id[i, j]`` is the label seen at the pixel (−1:
none).

Legibility (``rule``, recorded with the label style): a label is legible when its **visible fraction** is
≥ ``min_visible``.

- ``"glyph"`` (default): the fraction of the label's own glyph pixels (coverage ≥ ``INK`` of 255: the
  pixels ``label_id`` records; outside the image counts as covered) covered neither by a nearer drawn
  surface (depth buffer < the label's depth) nor by a glyph pixel another label draws (its own depth test
  passed) at most ``merge_px`` pixels away (Chebyshev; default 1): in front, its ink hides the stroke;
  behind, its ink shows through the text, which has no background, as in ChimeraX; and strokes of one colour
  that touch merge into one shape (hand-judged crops: "NE2" over "OE2" reads as neither, though only a few
  pixels coincide). Empty parts of a box hide nothing.
- ``"box"`` (before issue 28): the same over every pixel of the text box, another label's whole box
  counting as covering; conservative (a box overlapping only the other's blank space hides the label).
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from viewcert.errors import InputError
from viewcert.render.raster import RenderResult

PLACEMENT = 0.7  # of the drawn radius, to the right and up from the atom's projected centre
INK = 128  # a glyph pixel: FreeType coverage ≥ 128 of 255 (what label_id records and the "glyph" rule counts)
RULES = {"glyph": f"visible fraction of the label's glyph pixels (coverage >= {INK}/255) not under a nearer "
                  "surface and not within merge_px of another label's drawn glyph pixel",
         "box": "visible fraction of the text box (not under a nearer surface or any other label's box)"}


@dataclass(frozen=True)
class Label:
    """Text drawn beside drawn atom ``atom`` (index into the scene's spheres); ``kind``: "atom" or "residue"."""

    text: str
    atom: int
    kind: str = "atom"


@dataclass(frozen=True)
class LabelStyle:
    """Font size (px), text colour (0–1 RGB), the legibility ``rule`` ("glyph" or "box", module docstring)
    and its threshold ``min_visible`` (fraction)."""

    font_size: int = 14
    colour: tuple[float, float, float] = (0.0, 0.0, 0.0)
    min_visible: float = 0.8
    rule: str = "glyph"
    merge_px: int = 1

    def __post_init__(self) -> None:
        if int(self.font_size) != self.font_size or not 4 <= self.font_size <= 200:
            raise InputError(f"font_size must be an integer 4–200 px, got {self.font_size}", field="font_size")
        if not 0.0 <= self.min_visible <= 1.0:
            raise InputError(f"min_visible must be a fraction in [0, 1], got {self.min_visible}", field="min_visible")
        if int(self.merge_px) != self.merge_px or not 0 <= self.merge_px <= 3:
            raise InputError(f"merge_px must be an integer 0–3 px, got {self.merge_px}", field="merge_px")
        if self.rule == RULES["box"]:  # certificates before issue 28 recorded the box rule by its text
            object.__setattr__(self, "rule", "box")
        if self.rule not in RULES:
            raise InputError(f"rule must be one of {', '.join(RULES)}, got {self.rule!r}", field="rule")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["colour"] = list(self.colour)
        d.update(font_metadata())
        d["placement"] = f"left = u + {PLACEMENT} r, bottom = v - {PLACEMENT} r (px)"
        d["rule_text"] = RULES[self.rule]
        if self.rule == "glyph":
            d["ink_threshold"] = INK
        else:
            del d["merge_px"]
        return d


def font_path() -> Path:
    """DejaVu Sans as matplotlib ships it."""
    import matplotlib  # lazy: matplotlib's import costs ~0.3 s; only the path is needed

    return Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"


def font_metadata() -> dict:
    """The font file, its SHA-256 and the rasteriser's versions (recorded in certificates)."""
    import hashlib

    import PIL
    from PIL import features

    p = font_path()
    return {"font": p.name, "font_sha256": hashlib.sha256(p.read_bytes()).hexdigest(), "pillow": PIL.__version__,
            "freetype": features.version("freetype2"), "layout_engine": "basic"}


@functools.lru_cache(maxsize=8)
def _font(size: int):
    from PIL import ImageFont

    return ImageFont.truetype(str(font_path()), int(size), layout_engine=ImageFont.Layout.BASIC)


@functools.lru_cache(maxsize=4096)
def glyph_mask(text: str, size: int) -> np.ndarray:
    """(h, w) uint8 coverage (0–255) of ``text`` at ``size`` px; its box is the ink's bounding box."""
    from PIL import Image, ImageDraw

    if not text or len(text) > 64 or not text.isprintable():
        raise InputError(f"a label must be 1–64 printable characters, got {text!r}", field="label")
    font = _font(size)
    x0, y0, x1, y1 = font.getbbox(text)
    img = Image.new("L", (max(1, x1 - x0), max(1, y1 - y0)), 0)
    ImageDraw.Draw(img).text((-x0, -y0), text, font=font, fill=255)
    out = np.asarray(img, dtype=np.uint8).copy()
    out.flags.writeable = False
    return out


@dataclass(frozen=True, eq=False)
class LabelLayer:
    """Labels of one view: ``boxes`` (n, 4) int px [u0, v0, u1, v1) (may reach outside the image),
    ``depth`` (n,) Å, ``visible_fraction`` (n,), ``label_id`` (H, W) int32 (−1: none), ``rgb`` the render
    with the labels composited (None when not drawn)."""

    labels: tuple[Label, ...]
    boxes: np.ndarray
    depth: np.ndarray
    visible_fraction: np.ndarray
    label_id: np.ndarray
    rgb: np.ndarray | None
    style: LabelStyle

    def legible(self) -> np.ndarray:
        """(n,) bool: visible fraction ≥ style.min_visible."""
        return self.visible_fraction >= self.style.min_visible


def place(result: RenderResult, labels, style: LabelStyle) -> tuple[np.ndarray, np.ndarray]:
    """(boxes (n, 4) int px, depths (n,) Å) of the labels in the view (module docstring)."""
    scene, cam = result.scene, result.camera
    n = len(labels)
    atoms = np.array([lab.atom for lab in labels], dtype=np.int64)
    if n and (atoms.min() < 0 or atoms.max() >= scene.n_atoms):
        raise InputError(f"a label names atom {int(atoms.max())}, the scene has {scene.n_atoms}", field="label")
    boxes, depth = np.zeros((n, 4), dtype=np.int64), np.zeros(n)
    if n == 0:
        return boxes, depth
    uv, d = cam.project(scene.sphere_centres[atoms])
    r = scene.sphere_radii[atoms]
    r_px = r / np.asarray(cam.pixel_size(d), dtype=np.float64)
    for k, lab in enumerate(labels):
        h, w = glyph_mask(lab.text, style.font_size).shape
        u0 = int(np.round(uv[k, 0] + PLACEMENT * r_px[k]))
        v1 = int(np.round(uv[k, 1] - PLACEMENT * r_px[k]))
        boxes[k] = (u0, v1 - h, u0 + w, v1)
    return boxes, d - r


def _order(depth: np.ndarray) -> np.ndarray:
    """Painting order: farthest first; equal depths, the higher index first."""
    n = len(depth)
    return np.lexsort((-np.arange(n), -depth))


def visible_fractions(boxes: np.ndarray, depth: np.ndarray, surface_depth: np.ndarray) -> np.ndarray:
    """(n,) visible fraction of each box (module docstring, rule "box"); ``surface_depth`` (H, W) the
    render's depth."""
    h, w = surface_depth.shape
    n = len(depth)
    b = np.asarray(boxes, dtype=np.int64).reshape(n, 4)
    clip = np.stack([np.maximum(b[:, 0], 0), np.maximum(b[:, 1], 0), np.minimum(b[:, 2], w),
                     np.minimum(b[:, 3], h)], axis=1)
    # which other boxes reach each clipped box (all pairs at once; the loop below visits only those)
    hit = ((clip[:, None, 0] < b[None, :, 2]) & (b[None, :, 0] < clip[:, None, 2])
           & (clip[:, None, 1] < b[None, :, 3]) & (b[None, :, 1] < clip[:, None, 3]))
    np.fill_diagonal(hit, False)
    out = np.zeros(n)
    for k in range(n):
        u0, v0, u1, v1 = b[k].tolist()
        area = (u1 - u0) * (v1 - v0)
        cu0, cv0, cu1, cv1 = clip[k].tolist()
        if area <= 0 or cu0 >= cu1 or cv0 >= cv1:
            continue
        free = surface_depth[cv0:cv1, cu0:cu1] >= depth[k]
        for j in np.flatnonzero(hit[k]).tolist():
            a0, b0, a1, b1 = b[j].tolist()
            free[max(b0, cv0) - cv0:min(b1, cv1) - cv0, max(a0, cu0) - cu0:min(a1, cu1) - cu0] = False
        out[k] = float(free.sum()) / area
    return out


def glyph_fractions(boxes: np.ndarray, depth: np.ndarray, surface_depth: np.ndarray, masks,
                    merge_px: int = 1) -> np.ndarray:
    """(n,) visible fraction of each label's glyph pixels (module docstring, rule "glyph"); ``masks`` the
    labels' (h, w) coverage arrays (``glyph_mask``), each the size of its box; ``surface_depth`` (H, W);
    ``merge_px``: another label's drawn glyph pixel within that many pixels (Chebyshev) covers."""
    h, w = surface_depth.shape
    m = int(merge_px)
    n = len(depth)
    b = np.asarray(boxes, dtype=np.int64).reshape(n, 4)
    drawn = []  # per label: (clip window, its drawn glyph pixels there) or None outside the image
    count = np.zeros((h + 2 * m, w + 2 * m), dtype=np.int32)  # labels drawing ink at each pixel (padded by m)
    totals = np.zeros(n, dtype=np.int64)  # each label's glyph pixels, inside the image or not
    for k in range(n):
        full = np.asarray(masks[k]) >= INK
        totals[k] = int(full.sum())
        u0, v0 = int(b[k, 0]), int(b[k, 1])
        cu0, cv0, cu1, cv1 = max(u0, 0), max(v0, 0), min(int(b[k, 2]), w), min(int(b[k, 3]), h)
        if cu0 >= cu1 or cv0 >= cv1:
            drawn.append(None)
            continue
        ink = full[cv0 - v0:cv1 - v0, cu0 - u0:cu1 - u0]
        mine = ink & (surface_depth[cv0:cv1, cu0:cu1] >= depth[k])
        count[cv0 + m:cv1 + m, cu0 + m:cu1 + m] += mine
        drawn.append(((cu0, cv0, cu1, cv1), mine))
    out = np.zeros(n)
    for k in range(n):
        total = int(totals[k])
        if total == 0 or drawn[k] is None:
            continue
        (cu0, cv0, cu1, cv1), mine = drawn[k]
        foreign = count[cv0:cv1 + 2 * m, cu0:cu1 + 2 * m].copy()  # the window grown by m on every side
        foreign[m:m + mine.shape[0], m:m + mine.shape[1]] -= mine
        near = np.zeros_like(mine)
        for dv in range(2 * m + 1):
            for du in range(2 * m + 1):
                near |= foreign[dv:dv + mine.shape[0], du:du + mine.shape[1]] > 0
        out[k] = float((mine & ~near).sum()) / total
    return out


def composite(result: RenderResult, labels, boxes, depth, style: LabelStyle):
    """(label_id (H, W) int32, rgb with the glyphs or None): painter's order, depth-tested per pixel."""
    h, w = result.depth.shape
    ids = np.full((h, w), -1, dtype=np.int32)
    rgb = None if result.rgb is None else result.rgb.astype(np.float64)
    colour = np.asarray(style.colour, dtype=np.float64) * 255.0
    for k in _order(depth).tolist():
        u0, v0, u1, v1 = boxes[k].tolist()
        cu0, cv0, cu1, cv1 = max(u0, 0), max(v0, 0), min(u1, w), min(v1, h)
        if cu0 >= cu1 or cv0 >= cv1:
            continue
        mask = glyph_mask(labels[k].text, style.font_size)[cv0 - v0:cv1 - v0, cu0 - u0:cu1 - u0]
        show = (result.depth[cv0:cv1, cu0:cu1] >= depth[k]) & (mask >= INK)
        ids[cv0:cv1, cu0:cu1][show] = k
        if rgb is not None:
            alpha = (mask / 255.0) * (result.depth[cv0:cv1, cu0:cu1] >= depth[k])
            patch = rgb[cv0:cv1, cu0:cu1]
            patch[:] = patch * (1 - alpha[..., None]) + colour * alpha[..., None]
    out = None if rgb is None else np.clip(np.round(rgb), 0, 255).astype(np.uint8)
    return ids, out


def draw_labels(result: RenderResult, labels, style: LabelStyle | None = None) -> LabelLayer:
    """Place, composite and measure ``labels`` in one rendered view (module docstring)."""
    st = style or LabelStyle()
    labels = tuple(labels)
    boxes, depth = place(result, labels, st)
    ids, rgb = composite(result, labels, boxes, depth, st)
    if st.rule == "glyph":
        frac = glyph_fractions(boxes, depth, result.depth, [glyph_mask(lab.text, st.font_size) for lab in labels],
                               st.merge_px)
    else:
        frac = visible_fractions(boxes, depth, result.depth)
    return LabelLayer(labels, boxes, depth, frac, ids, rgb, st)
