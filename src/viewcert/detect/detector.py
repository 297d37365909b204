"""The classical atom detector: the drawn atoms of one image (centre, radius, element), no trained model.

``detect_atoms(rgb, palette, elements)``:

1. **Colours** (``detect.colour``): the background, the appearance model (flat or shaded, decided from the image
   unless given) and one mask per candidate element (the structure's elements, coloured by the palette).
2. **Radius** per element: the median radius of the well-seen discs (more than 60 % of their rim seen) of a first
   pass over every radius up to the mask's largest inscribed radius (``scipy.ndimage.distance_transform_edt``).
3. **Discs** (``detect.circles``): rim points, centre votes over [0.75, 1.25] × the reference radius, fits, the
   explaining-away rule and the slivers. Elements whose discs are smaller than ``SMALL_RADIUS`` px (matplotlib's
   default scatter markers) are found as blobs instead: peaks (``skimage.feature.peak_local_max``) of the
   coverage (the alpha of the flat fit) smoothed at the disc's scale, centre = coverage-weighted centroid.
4. **Elements.** A disc found in two elements' masks (their colours tie in the pixels) goes to the element
   whose colour alone explains clearly more of its pixels; failing that, to the one whose palette radius fits
   its radius (the image's px per palette-radius unit taken from the other discs); failing that its element is
   left empty and both are named (``candidates``): an ambiguous colour is reported, never guessed.

The output, :class:`Detections`, is a plain per-image value (arrays of centres px, radii px, element symbols,
scores) that ``detect.match`` matches to a structure through a camera, and that a camera-recovery step can read
without one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage as ndi

from viewcert.detect import circles as C
from viewcert.detect.colour import SHADINGS, colour_masks
from viewcert.detect.palettes import Palette
from viewcert.errors import InputError
from viewcert.numeric import readonly

#: discs smaller than this radius (px) are found as blobs (step 3)
SMALL_RADIUS = 3.0
#: a disc explains at least this many new pixels (step 3; ``DetectorSettings.min_pixels``)
MIN_PIXELS = 12
#: a vote peak is a candidate when it holds the votes of at least this share of a full rim (shorter arcs are
#: found as slivers)
PEAK_ARC = 0.12
#: the first pass (the reference radius) fits the strongest peaks only
FIRST_PASS_PEAKS = 200
#: the well-seen discs of an element agree on one radius when their median relative deviation is at most this;
#: a disc's fitted radius then stays within CONSTANT_RADIUS of it, else within WIDE_RADIUS (perspective)
CONSTANT_SPREAD, CONSTANT_RADIUS, WIDE_RADIUS = 0.02, 0.0, 0.2
#: two elements' discs at one place are one drawn disc (their colours tie) when their radii agree to this
#: (relative); concentric discs of other radii are two atoms, one behind the other
SAME_DISC = 0.15
#: two elements' discs at one place: the one whose colour alone explains this many times more pixels wins
COLOUR_MARGIN = 2.0
#: a radius tie-break needs the candidates' expected radii this far apart (relative) and the best this close
RADIUS_MARGIN = 0.1


@dataclass(frozen=True)
class DetectorSettings:
    """shading: the appearance model (``auto``: decided from the image; ``flat``; ``shaded``); min_pixels: the
    new pixels a disc must explain; max_radius: the largest disc radius looked for, px (None: a quarter of the
    image's smaller side)."""

    shading: str = "auto"
    min_pixels: int = MIN_PIXELS
    max_radius: float | None = None

    def __post_init__(self) -> None:
        if self.shading not in SHADINGS:
            raise InputError(f"shading must be one of {SHADINGS}, got {self.shading!r}", field="shading")
        if isinstance(self.min_pixels, bool) or int(self.min_pixels) != self.min_pixels or self.min_pixels < 1:
            raise InputError(f"min_pixels must be a positive integer, got {self.min_pixels!r}", field="min_pixels")
        if self.max_radius is not None and not (math.isfinite(self.max_radius) and self.max_radius > 1):
            raise InputError(f"max_radius must be a number of px > 1, got {self.max_radius!r}", field="max_radius")

    def to_dict(self) -> dict:
        return {"shading": self.shading, "min_pixels": int(self.min_pixels), "max_radius": self.max_radius}


@dataclass(frozen=True, eq=False)
class Detections:
    """The drawn atoms found in one image (pixel frame: u right, v down, origin at the top-left corner).

    centres (n, 2) px; radii (n,) px; elements (n,) symbols (``""`` where the colour is ambiguous);
    candidates (n,) the tied symbols where ambiguous (``""`` else, ``"|"``-joined); scores (n,) in [0, 1] (the
    share of the rim seen, 1 for a blob); shading as resolved; background (3,) 0–255; width, height px."""

    centres: np.ndarray
    radii: np.ndarray
    elements: tuple[str, ...]
    candidates: tuple[str, ...]
    scores: np.ndarray
    shading: str
    background: tuple[int, int, int]
    width: int
    height: int
    settings: DetectorSettings = field(default_factory=DetectorSettings)

    def __post_init__(self) -> None:
        n = len(self.elements)
        object.__setattr__(self, "centres", readonly(np.asarray(self.centres, dtype=np.float64).reshape(n, 2)))
        object.__setattr__(self, "radii", readonly(np.asarray(self.radii, dtype=np.float64).reshape(n)))
        object.__setattr__(self, "scores", readonly(np.asarray(self.scores, dtype=np.float64).reshape(n)))
        if len(self.candidates) != n:
            raise InputError("candidates must have one entry per detection", field="candidates")

    def __len__(self) -> int:
        return len(self.elements)

    def to_dict(self) -> dict:
        """JSON form: per detection u, v, radius (px), element, candidates, score; the image size, shading and
        background."""
        return {"width": self.width, "height": self.height, "shading": self.shading,
                "background": list(self.background), "settings": self.settings.to_dict(),
                "atoms": [{"u": float(c[0]), "v": float(c[1]), "radius": float(r), "element": e,
                           "candidates": k, "score": float(s)}
                          for c, r, e, k, s in zip(self.centres, self.radii, self.elements, self.candidates,
                                                   self.scores, strict=True)]}


@dataclass
class _Found:
    """A disc of one element's pass, before the elements are settled."""

    circle: C.Circle
    element: int
    rim: tuple | None = None  # (points, normals, reference radius) of its element's mask, for the last refit


def _largest_inscribed(mask: np.ndarray) -> float:
    """The largest inscribed radius of the mask's regions: its distance transform's maximum (px; 0 if empty)."""
    return float(ndi.distance_transform_edt(mask).max()) if mask.any() else 0.0


def _discs(mask: np.ndarray, background: np.ndarray, r_est: float, r_max: float, min_pixels: int) -> tuple[
        list[C.Circle], np.ndarray, np.ndarray, np.ndarray, float, float]:
    """(discs, explained, rim points, normals, reference radius, radius tolerance) of one element's mask
    (module steps 2–3)."""
    from skimage.feature import peak_local_max  # lazy: skimage is the [images] extra

    pts, nrm = C.rim_points(mask)
    if len(pts) < 6:
        return [], np.zeros(mask.shape, dtype=bool), pts, nrm, r_est, WIDE_RADIUS

    from scipy.spatial import cKDTree

    tree = cKDTree(pts)

    def candidates(lo: float, hi: float, r_ref: float, r_tol: float, min_cover: float,
                   most: float = np.inf) -> list[C.Circle]:
        acc = C.centre_votes(pts, nrm, mask.shape, lo, hi)
        floor = max(6.0, PEAK_ARC * 2 * math.pi * r_ref)
        peaks = peak_local_max(acc, min_distance=max(1, int(r_ref // 3)), threshold_abs=floor, exclude_border=False,
                               num_peaks=most)
        out = []
        starts = peaks[:, ::-1] + 0.5
        for start, near in zip(starts, tree.query_ball_point(starts, hi + 3.0), strict=True):
            near = np.asarray(near, dtype=np.int64)
            c = C.refine(pts[near], nrm[near], start, lo, hi, r_ref, r_tol)
            if c is None or c.cover < min_cover or c.support < max(6, 0.05 * 2 * math.pi * c.r):
                continue
            if C.opaque(c, background):
                out.append(c)
        return out

    # the first pass: every radius up to the largest inscribed one; the well-seen discs (more than half their rim)
    # give the element's radius
    lo, hi = 1.0, min(r_max, r_est + 2.0)
    first = candidates(lo, hi, r_est, 1.0, 0.4, most=FIRST_PASS_PEAKS)
    seen = np.array([c.r for c in first if c.radius_fitted and c.cover >= 0.6])
    if len(seen) == 0:
        seen = np.array([c.r for c in first if c.radius_fitted])
    r_ref = float(np.median(seen)) if len(seen) else r_est
    # one radius for every disc of the element (orthographic views, matplotlib's markers) when the well-seen
    # discs agree to CONSTANT_SPREAD; else (perspective) the radius may vary by WIDE_RADIUS
    spread = float(np.median(np.abs(seen - r_ref))) / r_ref if len(seen) >= 3 else 1.0
    r_tol = CONSTANT_RADIUS if spread <= CONSTANT_SPREAD else WIDE_RADIUS
    lo, hi = max(1.0, (1 - r_tol - 0.1) * r_ref), min(r_max, (1 + r_tol + 0.1) * r_ref + 1.0)
    kept, explained = C.explain(candidates(lo, hi, r_ref, r_tol, C.MIN_COVER), mask, min_pixels)
    return kept, explained, pts, nrm, r_ref, r_tol


def _blobs(coverage: np.ndarray, mask: np.ndarray, r_est: float) -> list[C.Circle]:
    """Small discs as blobs (module step 3): peaks of the coverage smoothed at the disc's scale."""
    from skimage.feature import peak_local_max  # lazy: skimage is the [images] extra

    cov = np.where(mask, coverage, 0.0)
    sigma = max(0.7, r_est / 1.5)
    sm = ndi.gaussian_filter(cov, sigma)
    if sm.max() <= 0:
        return []
    # the response of one full disc of radius r_est (the least kept: a third of it)
    ref = 1.0 - math.exp(-(max(r_est, 0.7) ** 2) / (2 * sigma * sigma))
    peaks = peak_local_max(sm, min_distance=max(1, int(round(r_est))), threshold_abs=ref / 3, exclude_border=False)
    out = []
    h, w = mask.shape
    win = int(math.ceil(r_est + 1.5))
    for i, j in peaks:
        i0, i1, j0, j1 = max(0, i - win), min(h, i + win + 1), max(0, j - win), min(w, j + win + 1)
        wgt = cov[i0:i1, j0:j1]
        tot = float(wgt.sum())
        if tot <= 0:
            continue
        ii, jj = np.mgrid[i0:i1, j0:j1]
        u = float((wgt * (jj + 0.5)).sum() / tot)
        v = float((wgt * (ii + 0.5)).sum() / tot)
        out.append(C.Circle(u, v, math.sqrt(tot / math.pi), int(round(tot)), 1.0, True))
    return out


def _exclusive_pixels(c: C.Circle, masks: np.ndarray, e: int, f: int) -> int:
    win, inside = C.disc_pixels(masks.shape[1:], c)
    return int((inside & masks[e][win] & ~masks[f][win]).sum())


def _settle(found: list[_Found], masks: np.ndarray, symbols: list[str], palette: Palette) -> tuple[list, list, list]:
    """(circles, element symbols, candidates) once discs found in two elements' masks are settled (step 4)."""
    found = sorted(found, key=lambda f: -f.circle.score)
    groups: list[list[_Found]] = []
    for f in found:
        for g in groups:
            k = g[0].circle
            if (g[0].element != f.element and math.hypot(f.circle.u - k.u, f.circle.v - k.v) < 0.5 * min(f.circle.r, k.r)
                    and abs(f.circle.r - k.r) <= SAME_DISC * max(f.circle.r, k.r)):
                g.append(f)
                break
        else:
            groups.append([f])
    ratios = palette.radius_ratios(symbols)
    # px per palette-radius unit, from the discs with one element
    scale = None
    if ratios is not None:
        single = [g[0].circle.r / ratios[g[0].element] for g in groups if len(g) == 1 and g[0].circle.radius_fitted]
        scale = float(np.median(single)) if single else None
    circles, elements, candidates = [], [], []
    for g in groups:
        best = g[0]
        tied = sorted({f.element for f in g})
        if len(tied) > 1:
            own = {f.element: _exclusive_pixels(best.circle, masks, f.element,
                                                next(x.element for x in g if x.element != f.element)) for f in g}
            order = sorted(own, key=lambda e: -own[e])
            if own[order[0]] >= COLOUR_MARGIN * max(own[order[1]], 1) and own[order[0]] >= C.MIN_COVER * 10:
                tied = [order[0]]
            elif scale is not None:
                want = {e: scale * ratios[e] for e in tied}
                r = best.circle.r
                by = sorted(tied, key=lambda e: abs(want[e] - r))
                gap = abs(want[by[0]] - want[by[1]]) / max(want[by[0]], 1e-9)
                if gap >= RADIUS_MARGIN and abs(want[by[0]] - r) <= RADIUS_MARGIN * want[by[0]]:
                    tied = [by[0]]
        circles.append(best.circle)
        elements.append(symbols[tied[0]] if len(tied) == 1 else "")
        candidates.append("" if len(tied) == 1 else "|".join(symbols[e] for e in tied))
    return circles, elements, candidates


def detect_atoms(rgb: np.ndarray, palette: Palette, elements, settings: DetectorSettings | None = None) -> Detections:
    """The drawn atoms of one image (module docstring).

    Parameters
    ----------
    rgb : numpy.ndarray of uint8, shape (H, W, 3)
        The image, 8-bit RGB (``io.pictures.read_picture`` decodes a file to this).
    palette : Palette
        The renderer's element colours (and relative radii, for colour ties).
    elements : iterable of str
        The candidate elements (the structure's): symbols the palette colours.
    settings : DetectorSettings, optional
        Shading model, least new pixels per disc, largest radius (px).

    Returns
    -------
    Detections
        Centres (n, 2) px in the image's pixel frame, radii (n,) px, element symbols (``""`` when the colour is
        ambiguous, the tied symbols in ``candidates``), scores.

    Raises
    ------
    InputError
        Not an (H, W, 3) uint8 image, or an element the palette has no colour for (field ``palette``).
    """
    settings = settings or DetectorSettings()
    rgb = np.asarray(rgb)
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise InputError(f"the image must be (H, W, 3) 8-bit RGB, got {rgb.dtype} {rgb.shape}", field="image")
    symbols = sorted(set(elements))
    colours = palette.colour_array(symbols)
    h, w = rgb.shape[:2]
    r_max = settings.max_radius or max(2.0, 0.25 * min(h, w))
    cm = colour_masks(rgb, colours, shading=settings.shading)
    found: list[_Found] = []
    per_element = []
    for e in range(len(symbols)):
        mask = cm.masks[e]
        r_est = min(_largest_inscribed(mask), r_max)
        if r_est <= 0:
            per_element.append(None)
            continue
        if r_est < SMALL_RADIUS:
            coverage = cm.level[e] if cm.shading == "flat" else np.clip(cm.level[e], 0, 1)
            found += [_Found(c, e) for c in _blobs(coverage, mask, r_est)]
            per_element.append(None)
            continue
        kept, explained, pts, nrm, r_ref, r_tol = _discs(mask, cm.background, r_est, r_max, settings.min_pixels)
        per_element.append((kept, explained, pts, nrm, r_ref, r_tol))
        found += [_Found(c, e, (pts, nrm, r_ref, r_tol)) for c in kept]
    everyone = [f.circle for f in found]
    for e, got in enumerate(per_element):
        if got is None:
            continue
        kept, explained, pts, nrm, r_ref, r_tol = got
        extra = C.slivers(cm.masks[e], explained, pts, nrm, everyone, r_ref, settings.min_pixels)
        extra = [c for c in extra if C.opaque(c, cm.background)]
        more, _ = C.explain(extra, cm.masks[e] & ~explained, settings.min_pixels, rim=0.0)
        found += [_Found(c, e, (pts, nrm, r_ref, r_tol)) for c in more]
    everyone = [f.circle for f in found]
    found = [_Found(C.polish(f.circle, *f.rim[:2], everyone, *f.rim[2:]), f.element) if f.rim else f
             for f in found]
    circles, els, cands = _settle(found, cm.masks, symbols, palette)
    order = np.lexsort((np.array([c.u for c in circles]), np.array([c.v for c in circles]))) if circles else []
    circles = [circles[k] for k in order]
    return Detections(
        centres=np.array([[c.u, c.v] for c in circles]).reshape(-1, 2), radii=np.array([c.r for c in circles]),
        elements=tuple(els[k] for k in order), candidates=tuple(cands[k] for k in order),
        scores=np.array([min(1.0, c.cover) for c in circles]), shading=cm.shading,
        background=tuple(int(x) for x in cm.background_colour), width=int(w), height=int(h), settings=settings)
