"""Which pixels are drawn in which element's colour: the background, the appearance model of a drawn atom, and one
mask per element.

An atom drawn in colour c appears, pixel by pixel, as one of (8-bit RGB, as floats):

- ``flat`` renderers (ASE's writers, matplotlib's ``scatter`` and patches): c itself, blended toward the background
  b by antialiasing at the rim and by matplotlib's depth shading (``b + a·(c − b)``, a in [``MIN_ALPHA``, 1]);
- ``shaded`` renderers (PyMOL, OVITO, POV-Ray, viewcert's lambert styles): c scaled by the lighting and blended
  toward the background by a depth cue (``b + a·(k·c − b)``, k in [``MIN_SHADE``, ``MAX_SHADE``], a in
  [``MIN_FOG``, 1]); specular highlights (toward white) are left out of the mask and do not matter (they are
  inside the disc).

An element drawn in the background's own colour (ASE's white hydrogen on a white page) has no colour of its own
in the image: its mask is the background-coloured pixels its outline or limb encloses (``enclosed_background``).

The residual of a pixel under element e is its distance (RGB units) to that family; a pixel is a member of e's mask
when its residual is below e's tolerance (a fraction ``TOLERANCE`` of the distance from c to the nearest other
colour in play: the other elements', the background, black outlines) and within ``TIE_MARGIN`` of the smallest
residual over the elements (so a pixel two palette colours explain equally belongs to both masks; which atom it
belongs to is decided per disc). Everything here is a pure function of arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

#: the least alpha of a flat disc blended toward the background (matplotlib's depthshade goes down to 0.3)
MIN_ALPHA = 0.3
#: the range of the lighting factor k of a shaded sphere (ambient and shadows ≥ 0.12 in every renderer looked
#: at; ≤ 1.08 for 8-bit rounding and a light brighter than the colour)
MIN_SHADE, MAX_SHADE = 0.12, 1.08
#: the least share of its own colour a shaded atom keeps under a depth cue (PyMOL's fog toward the background)
MIN_FOG = 0.35
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
#: auto shading: a flat render has at least FLAT_SHARE of its foreground within FLAT_MATCH of a flat colour, and at
#: least UNIFORM_SHARE of it within UNIFORM_STEP of its right and lower neighbours
FLAT_SHARE, FLAT_MATCH = 0.85, 12.0
UNIFORM_SHARE, UNIFORM_STEP = 0.45, 4.0
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


def shaded_fit(img: np.ndarray, colour: np.ndarray, bg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(residual, k) of every pixel under ``bg + a·(k·c − bg)``: the lighting k in [MIN_SHADE, MAX_SHADE] and a
    depth cue (fog) toward the background, a in [MIN_FOG, 1]; RGB units, and k.

    In the coefficients t = a·k of c and s = 1 − a of the background, the family is the polygon s in
    [0, 1 − MIN_FOG], t in [MIN_SHADE·(1 − s), MAX_SHADE·(1 − s)]; each pixel's least-squares point is the
    unconstrained one when it lies inside, else the best point of the polygon's four edges."""
    c, b = np.asarray(colour, dtype=np.float64), np.asarray(bg, dtype=np.float64)
    flat = img.reshape(-1, 3)
    s_max = 1.0 - MIN_FOG
    basis = np.stack([c, b], axis=1)  # 3 × 2
    gram = basis.T @ basis
    best_res = np.full(len(flat), np.inf)
    best_t = np.zeros(len(flat))
    best_s = np.zeros(len(flat))

    def consider(t, s):
        res = np.linalg.norm(flat - (t[:, None] * c + s[:, None] * b), axis=1)
        better = res < best_res
        best_res[better], best_t[better], best_s[better] = res[better], t[better], s[better]

    if abs(np.linalg.det(gram)) > 1e-9:
        ts = np.linalg.solve(gram, basis.T @ flat.T).T
        t, s = ts[:, 0], ts[:, 1]
        inside = (s >= 0) & (s <= s_max) & (t >= MIN_SHADE * (1 - s)) & (t <= MAX_SHADE * (1 - s))
        res = np.linalg.norm(flat - (t[:, None] * c + s[:, None] * b), axis=1)
        best_res[inside], best_t[inside], best_s[inside] = res[inside], t[inside], s[inside]
    cc = max(float(c @ c), 1e-9)
    for s0 in (0.0, s_max):  # the edges s = 0 (no fog) and s = s_max: t free within its bounds
        t = np.clip(((flat - s0 * b) @ c) / cc, MIN_SHADE * (1 - s0), MAX_SHADE * (1 - s0))
        consider(t, np.full(len(flat), s0))
    for kk in (MIN_SHADE, MAX_SHADE):  # the edges t = k·(1 − s): p ≈ k·c + s·(b − k·c), s in [0, s_max]
        d = b - kk * c
        s = np.clip(((flat - kk * c) @ d) / max(float(d @ d), 1e-9), 0.0, s_max)
        consider(kk * (1 - s), s)
    k = np.where(1 - best_s > 1e-9, best_t / np.maximum(1 - best_s, 1e-9), 0.0)
    return best_res.reshape(img.shape[:-1]), k.reshape(img.shape[:-1])


def enclosed_background(is_bg: np.ndarray) -> np.ndarray:
    """The background-coloured pixels no path of background pixels joins to the image's border (4-connected):
    the inside of a disc drawn in the background's own colour, which only its outline or limb bounds."""
    from scipy import ndimage as ndi  # lazy: start-up time (scipy.ndimage)

    labels, n = ndi.label(is_bg)
    if n == 0:
        return np.zeros_like(is_bg)
    border = np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))
    return is_bg & ~np.isin(labels, border)


def _segment_residual(img: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance (RGB units) of every pixel to the segment from colour ``a`` to colour ``b``."""
    d = b - a
    t = np.clip(((img - a) @ d) / max(float(d @ d), 1e-9), 0.0, 1.0)
    return np.linalg.norm(img - (a + t[..., None] * d), axis=-1)


def resolve_shading(img: np.ndarray, colours: np.ndarray, bg: np.ndarray, foreground: np.ndarray) -> str:
    """``flat`` when at least FLAT_SHARE of the foreground pixels lie within FLAT_MATCH of some element's flat
    family (its colour blended toward the background) or of a black outline's, and at least UNIFORM_SHARE of them
    (2 px inside the foreground's edge) equal their right and lower neighbours to UNIFORM_STEP (a flat disc is one colour; a shaded sphere changes from pixel to pixel), else
    ``shaded``."""
    fg = img[foreground]
    if len(fg) == 0:
        return "flat"
    best = _segment_residual(fg, np.zeros(3), bg)  # outlines and lines: black blended toward the background
    for c in colours:
        best = np.minimum(best, flat_fit(fg, c, bg)[0])
    step = np.zeros(img.shape[:2])
    step[:-1, :-1] = np.maximum(np.abs(img[:-1, :-1] - img[:-1, 1:]).max(axis=-1),
                                np.abs(img[:-1, :-1] - img[1:, :-1]).max(axis=-1))
    step[-1, :] = step[:, -1] = np.inf
    from scipy import ndimage as ndi  # lazy: start-up time (scipy.ndimage)

    inner = ndi.binary_erosion(foreground, iterations=2)  # away from the rims, where antialiasing varies
    inner = inner if inner.any() else foreground
    uniform = float(np.mean(step[inner] <= UNIFORM_STEP))
    flat = float(np.mean(best <= FLAT_MATCH)) >= FLAT_SHARE and uniform >= UNIFORM_SHARE
    return "flat" if flat else "shaded"


@dataclass(frozen=True, eq=False)
class ColourMasks:
    """Per element e (in the order given): ``masks[e]`` (H, W) bool, ``residual[e]`` (H, W) RGB units and
    ``level[e]`` (H, W) (a for flat, k for shaded); ``background`` (H, W) bool: the background-coloured pixels
    joined to the image's border (a white highlight or a white atom inside a disc is not background) and its
    colour (3,); ``shading`` as resolved; ``tolerance[e]`` RGB units."""

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
        residual[e], level[e] = flat_fit(img, c, bg) if mode == "flat" else shaded_fit(img, c, bg)
    best = residual.min(axis=0) if k else np.zeros(img.shape[:2])
    # what else a pixel may be: the background, a black outline or line, and (for coloured elements) the grey
    # blend of a line or outline with the background (antialiasing): a pixel such a thing explains at least as
    # well is no element's
    black = np.zeros(3)
    plain = np.minimum(np.linalg.norm(img - bg, axis=-1), np.linalg.norm(img, axis=-1))
    line = _segment_residual(img, black, bg)
    tol = np.empty(k)
    masks = np.zeros((k, *img.shape[:2]), dtype=bool)
    enclosed = enclosed_background(is_bg)
    for e, c in enumerate(colours):
        others = [np.linalg.norm(c - x) for j, x in enumerate(colours) if j != e and np.linalg.norm(c - x) > 1e-9]
        others += [np.linalg.norm(c - bg), np.linalg.norm(c)]  # the background; black outlines and lines
        tol[e] = TOLERANCE * max(cast(float, min(others)), 1e-9)
        rival = np.minimum(plain, line) if _segment_residual(c[None, :], black, bg)[0] > LINE_CHROMA else plain
        masks[e] = (residual[e] < tol[e]) & (residual[e] <= best + TIE_MARGIN) & (residual[e] < rival) & ~is_bg
        if np.linalg.norm(c - bg) <= BACKGROUND_TOLERANCE * 2:  # drawn in the background's colour: its outline
            masks[e] |= enclosed  # or limb encloses it (ASE's white hydrogen on white)
    return ColourMasks(masks, residual, level, is_bg & ~enclosed, bg, mode, tol)
