"""Which pixels are drawn in which element's colour: the background, the appearance model of a drawn atom, and one
mask per element.

An atom drawn in colour c appears, pixel by pixel, as one of (8-bit RGB, as floats):

- ``flat`` renderers (ASE's writers, matplotlib's ``scatter`` and patches): c itself, blended toward the background
  b by antialiasing at the rim and by matplotlib's depth shading (``b + a·(c − b)``, a in [``MIN_ALPHA``, 1]);
- ``shaded`` renderers (PyMOL, OVITO, POV-Ray, viewcert's lambert styles): c scaled by the lighting
  (``k·c``, k in [``MIN_SHADE``, ``MAX_SHADE``]); specular highlights (toward white) are left out of the mask and
  do not matter (they are inside the disc).

The residual of a pixel under element e is its distance (RGB units) to that family; a pixel is a member of e's mask
when its residual is below e's tolerance (a fraction ``TOLERANCE`` of the distance from c to the nearest other
colour in play: the other elements', the background, black outlines) and within ``TIE_MARGIN`` of the smallest
residual over the elements (so a pixel two palette colours explain equally belongs to both masks; which atom it
belongs to is decided per disc). Everything here is a pure function of arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the least alpha of a flat disc blended toward the background (matplotlib's depthshade goes down to 0.3)
MIN_ALPHA = 0.3
#: the range of the lighting factor k of a shaded sphere (ambient ≥ 0.2 in every renderer looked at; ≤ 1.08 for
#: 8-bit rounding and a light brighter than the colour)
MIN_SHADE, MAX_SHADE = 0.2, 1.08
#: a pixel belongs to e's mask when its residual is below this fraction of the distance from e's colour to the
#: nearest other colour in play
TOLERANCE = 0.35
#: ... and within this many RGB units of the best element's residual (colour ties go to both masks)
TIE_MARGIN = 6.0
#: the background is what most of the image border shows (colours within this many RGB units are one)
BACKGROUND_TOLERANCE = 24.0
#: an element colour farther than this (RGB units) from the black–background segment competes with that segment
#: (antialiased lines and outlines); a greyer one (carbon's grey) does not: it would lose its own pixels
LINE_CHROMA = 20.0
#: auto shading: a flat render has at least this share of its foreground within FLAT_MATCH of a flat colour
FLAT_SHARE, FLAT_MATCH = 0.5, 12.0
SHADINGS = ("auto", "flat", "shaded")


def background_colour(rgb: np.ndarray) -> np.ndarray:
    """The background colour (3,) float64 in 0–255: the commonest colour of the image's one-pixel border.

    Parameters
    ----------
    rgb : numpy.ndarray of uint8, shape (H, W, 3)
        The image.

    Returns
    -------
    numpy.ndarray of float64, shape (3,)
        The border's commonest 8-bit colour.
    """
    border = np.concatenate([rgb[0], rgb[-1], rgb[:, 0], rgb[:, -1]]).astype(np.int64)
    key = (border[:, 0] << 16) | (border[:, 1] << 8) | border[:, 2]
    values, counts = np.unique(key, return_counts=True)
    k = int(values[counts.argmax()])
    return np.array([(k >> 16) & 255, (k >> 8) & 255, k & 255], dtype=np.float64)


def flat_fit(img: np.ndarray, colour: np.ndarray, bg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(residual, alpha) of every pixel under ``b + a·(c − b)``, a clipped to [MIN_ALPHA, 1]: RGB units, and a."""
    d = colour - bg
    a = np.clip(((img - bg) @ d) / max(float(d @ d), 1e-9), MIN_ALPHA, 1.0)
    return np.linalg.norm(img - (bg + a[..., None] * d), axis=-1), a


def shaded_fit(img: np.ndarray, colour: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(residual, k) of every pixel under ``k·c``, k clipped to [MIN_SHADE, MAX_SHADE]: RGB units, and k."""
    k = np.clip((img @ colour) / max(float(colour @ colour), 1e-9), MIN_SHADE, MAX_SHADE)
    return np.linalg.norm(img - k[..., None] * colour, axis=-1), k


def _segment_residual(img: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance (RGB units) of every pixel to the segment from colour ``a`` to colour ``b``."""
    d = b - a
    t = np.clip(((img - a) @ d) / max(float(d @ d), 1e-9), 0.0, 1.0)
    return np.linalg.norm(img - (a + t[..., None] * d), axis=-1)


def resolve_shading(img: np.ndarray, colours: np.ndarray, bg: np.ndarray, foreground: np.ndarray) -> str:
    """``flat`` when at least FLAT_SHARE of the foreground pixels lie within FLAT_MATCH of some element's flat
    family (its colour blended toward the background), else ``shaded``."""
    fg = img[foreground]
    if len(fg) == 0:
        return "flat"
    best = np.full(len(fg), np.inf)
    for c in colours:
        best = np.minimum(best, flat_fit(fg, c, bg)[0])
    return "flat" if float(np.mean(best <= FLAT_MATCH)) >= FLAT_SHARE else "shaded"


@dataclass(frozen=True, eq=False)
class ColourMasks:
    """Per element e (in the order given): ``masks[e]`` (H, W) bool, ``residual[e]`` (H, W) RGB units and
    ``level[e]`` (H, W) (a for flat, k for shaded); ``background`` (H, W) bool and its colour (3,);
    ``shading`` as resolved; ``tolerance[e]`` RGB units."""

    masks: np.ndarray
    residual: np.ndarray
    level: np.ndarray
    background: np.ndarray
    background_colour: np.ndarray
    shading: str
    tolerance: np.ndarray


def colour_masks(rgb: np.ndarray, colours: np.ndarray, *, shading: str = "auto",
                 background: np.ndarray | None = None) -> ColourMasks:
    """One mask per element colour (module docstring).

    Parameters
    ----------
    rgb : numpy.ndarray of uint8, shape (H, W, 3)
        The image, 8-bit RGB.
    colours : numpy.ndarray of float, shape (k, 3)
        The candidate elements' palette colours, 0–255.
    shading : {"auto", "flat", "shaded"}
        The appearance model; ``auto`` decides from the image (:func:`resolve_shading`).
    background : numpy.ndarray of float, shape (3,), optional
        The background colour; default: :func:`background_colour`.

    Returns
    -------
    ColourMasks
        The masks, residuals, levels and the background.
    """
    img = rgb.astype(np.float64)
    bg = background_colour(rgb) if background is None else np.asarray(background, dtype=np.float64)
    colours = np.asarray(colours, dtype=np.float64).reshape(-1, 3)
    is_bg = np.linalg.norm(img - bg, axis=-1) <= BACKGROUND_TOLERANCE
    mode = resolve_shading(img, colours, bg, ~is_bg) if shading == "auto" else shading
    k = len(colours)
    residual = np.empty((k, *img.shape[:2]))
    level = np.empty_like(residual)
    for e, c in enumerate(colours):
        residual[e], level[e] = flat_fit(img, c, bg) if mode == "flat" else shaded_fit(img, c)
    best = residual.min(axis=0) if k else np.zeros(img.shape[:2])
    # what else a pixel may be: the background, a black outline or line, and (for coloured elements) the grey
    # blend of a line or outline with the background (antialiasing): a pixel such a thing explains at least as
    # well is no element's
    black = np.zeros(3)
    plain = np.minimum(np.linalg.norm(img - bg, axis=-1), np.linalg.norm(img, axis=-1))
    line = _segment_residual(img, black, bg)
    tol = np.empty(k)
    masks = np.zeros((k, *img.shape[:2]), dtype=bool)
    for e, c in enumerate(colours):
        others = [np.linalg.norm(c - x) for j, x in enumerate(colours) if j != e and np.linalg.norm(c - x) > 1e-9]
        others += [np.linalg.norm(c - bg), np.linalg.norm(c)]  # the background; black outlines and lines
        tol[e] = TOLERANCE * max(min(others), 1e-9)
        rival = np.minimum(plain, line) if _segment_residual(c[None, :], black, bg)[0] > LINE_CHROMA else plain
        masks[e] = (residual[e] < tol[e]) & (residual[e] <= best + TIE_MARGIN) & (residual[e] < rival) & ~is_bg
    return ColourMasks(masks, residual, level, is_bg, bg, mode, tol)
