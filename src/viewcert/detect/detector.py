"""The classical atom detector: the drawn atoms of one image (centre, radius, element), no trained model.

``detect_atoms(rgb, palette, elements)``:

1. **Colours** (``detect.colour``): the background, the appearance model (flat or shaded, decided from the image
   unless given) and one mask per candidate element (the structure's elements, coloured by the palette).
2. **Radius** per element: the median radius of the well-seen discs (more than 60 % of their rim seen) of a first
   pass over every radius up to the mask's largest inscribed radius (``scipy.ndimage.distance_transform_edt``).
3. **Discs** (``detect.circles``): rim points, centre votes over [0.75, 1.25] × the reference radius, fits, the
   explaining-away rule and the slivers. In a shaded image the fits (not the votes: a shadow's edge is one too)
   also take the edges where the lighting level jumps inside the mask (``circles.shading_edges``: the limb of a
   nearer sphere over a farther one of its colour), unless more than ``EDGE_SHARED`` of the mask is another
   element's too (a tied colour's level jumps wherever the two meet). Elements whose discs are smaller than
   ``SMALL_RADIUS`` px (matplotlib's default scatter markers) are found as blobs instead: peaks
   (``skimage.feature.peak_local_max``) of the coverage (the alpha of the flat fit) smoothed at the disc's scale,
   centre = coverage-weighted centroid.
4. **Elements.** A disc found in two elements' masks (their colours tie in the pixels) goes to the element
   whose colour alone explains clearly more of its pixels; failing that, to the one whose palette radius fits (the
   image's px per palette-radius unit taken from the other discs); for two colours of one hue (two greys), to the
   darker (a hydrogen sphere would show pixels brighter than carbon's grey: its lit part); failing that, to the one
   whose full colour the disc reaches
   its radius (the image's px per palette-radius unit taken from the other discs); failing that its element is
   left empty and both are named (``candidates``): an ambiguous colour is reported, never guessed.

The output, :class:`Detections`, is a plain per-image value (arrays of centres px, radii px, element symbols,
scores) that ``detect.match`` matches to a structure through a camera, and that a camera-recovery step can read
without one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from scipy import ndimage as ndi

from viewcert.detect import circles as C
from viewcert.detect.colour import SHADINGS, colour_masks
from viewcert.detect.palettes import Palette
from viewcert.errors import InputError
from viewcert.numeric import readonly

#: discs smaller than this radius (px), in regions no larger than such a disc grown by 1 px, are found as blobs
#: (step 3)
SMALL_RADIUS = 3.0
#: in a shaded image, a jump of the lighting level larger than this between neighbouring pixels of one element is
#: the rim of a nearer sphere over a farther one (smooth shading changes less from one pixel to the next)
SHADING_STEP = 0.2
#: ... used for an element whose mask holds at most this share of pixels also in another element's mask
EDGE_SHARED = 0.8
#: a blob's coverage sums to at least this share of a disc of the element's radius
BLOB_SHARE = 0.4
#: a disc explains at least this many new pixels (step 3; ``DetectorSettings.min_pixels``)
MIN_PIXELS = 12
#: a vote peak is a candidate when it holds the votes of at least this share of a full rim (shorter arcs are
#: found as slivers)
PEAK_ARC = 0.12
#: the first pass (the radius classes) fits the strongest peaks only, each with its own radius
FIRST_PASS_PEAKS = 200
#: the well-seen discs of an element agree on one radius when their median relative deviation is at most this;
#: a disc's fitted radius then stays within CONSTANT_RADIUS of it, else within WIDE_RADIUS (perspective)
CONSTANT_SPREAD, CONSTANT_RADIUS, WIDE_RADIUS = 0.02, 0.0, 0.2
#: the well-seen radii of one element fall in separate classes where one is this much larger than the next
CLASS_GAP = 0.25
#: two elements' discs are one drawn disc (their colours tie) when their radii and centres agree to this share of
#: the radius (centres: or 1.5 px); concentric discs of other radii are two atoms, one behind the other
SAME_DISC = 0.15
#: two elements' discs at one place: the one whose colour alone explains this many times more pixels wins
COLOUR_MARGIN = 2.0
#: a colour settles a tie when the pixels only it explains are COLOUR_MARGIN times the other's and this share of
#: the disc (a specular highlight, which only the brighter colour explains, is less)
EXCLUSIVE_SHARE = 0.15
#: two tied colours are one hue when their directions in RGB are within this angle, and one is darker when the
#: other is this much brighter: the darker then explains the disc
HUE_RADIANS, HUE_BRIGHTER = 0.1, 0.1
#: a level tie-break (two colours of one hue, e.g. two greys) needs the drawn element's disc to reach its full
#: colour (95th-percentile level within this of 1) clearly closer than the other's
LEVEL_MARGIN = 0.08
#: a radius tie-break needs the candidates' expected radii this far apart (relative) and the disc's radius this
#: much closer (relative) to the best
RADIUS_MARGIN = 0.1


@dataclass(frozen=True)
class DetectorSettings:
    """shading: the appearance model (``auto``: decided from the image; ``flat``; ``shaded``); min_pixels: the
    new pixels a disc must explain; max_radius: the largest disc radius looked for, px (None: a quarter of the
    image's smaller side); perspective: the image was drawn through a pinhole, so one element's discs differ in
    radius with depth (never held at one radius: WIDE_RADIUS), as a known camera says."""

    shading: str = "auto"
    min_pixels: int = MIN_PIXELS
    max_radius: float | None = None
    perspective: bool = False

    def __post_init__(self) -> None:
        if self.shading not in SHADINGS:
            raise InputError(f"shading must be one of {SHADINGS}, got {self.shading!r}", field="shading")
        if isinstance(self.min_pixels, bool) or int(self.min_pixels) != self.min_pixels or self.min_pixels < 1:
            raise InputError(f"min_pixels must be a positive integer, got {self.min_pixels!r}", field="min_pixels")
        if self.max_radius is not None and not (math.isfinite(self.max_radius) and self.max_radius > 1):
            raise InputError(f"max_radius must be a number of px > 1, got {self.max_radius!r}", field="max_radius")

    def to_dict(self) -> dict:
        return {"shading": self.shading, "min_pixels": int(self.min_pixels), "max_radius": self.max_radius,
                "perspective": bool(self.perspective)}


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


def _mask_sizes(mask: np.ndarray, min_pixels: int) -> tuple[float, float, float]:
    """(largest inscribed radius px, the largest region's bounding-box diagonal px, the 90th percentile of
    the regions' pixel counts) over the mask's regions of at least ``min_pixels`` pixels (the largest region when
    none is); zeros for an empty mask."""
    if not mask.any():
        return 0.0, 0.0, 0.0
    labels, n = ndi.label(mask)
    sizes = np.bincount(labels.ravel())[1:]
    keep = np.flatnonzero(sizes >= min(min_pixels, sizes.max())) + 1
    boxes = ndi.find_objects(labels)
    extent = max(math.hypot(boxes[k - 1][0].stop - boxes[k - 1][0].start, boxes[k - 1][1].stop - boxes[k - 1][1].start)
                 for k in keep)
    inscribed = float(ndi.distance_transform_edt(mask).max())
    return inscribed, extent, float(np.percentile(sizes[keep - 1], 90))


def _radius_classes(seen: np.ndarray, fallback: float, perspective: bool = False) -> list[tuple[float, float]]:
    """The element's drawn radii: the well-seen discs' fitted radii in classes (sorted, split where the next is more
    than CLASS_GAP larger), each (median px, relative tolerance): CONSTANT_RADIUS when at least three agree to
    CONSTANT_SPREAD and the image is not ``perspective`` (one radius: orthographic views, matplotlib's markers), else
    the larger of WIDE_RADIUS and half the class's range. ``fallback`` (WIDE_RADIUS) when none was seen."""
    if not len(seen):
        return [(fallback, WIDE_RADIUS)]
    seen = np.sort(seen)
    cuts = np.flatnonzero(seen[1:] > seen[:-1] * (1 + CLASS_GAP)) + 1
    out = []
    for group in np.split(seen, cuts):
        med = float(np.median(group))
        spread = float(np.median(np.abs(group - med))) / med
        if len(group) >= 3 and spread <= CONSTANT_SPREAD and not perspective:
            out.append((med, CONSTANT_RADIUS))
        else:
            out.append((med, max(WIDE_RADIUS, 0.5 * float(group[-1] - group[0]) / med)))
    return out


def _discs(mask: np.ndarray, background: np.ndarray, r_est: float, r_extent: float, r_max: float,
           min_pixels: int, perspective: bool = False, level: np.ndarray | None = None) -> tuple[
        list[C.Circle], np.ndarray, np.ndarray, np.ndarray, list]:
    """(discs, explained, rim points, normals, radius classes) of one element's mask (module steps 2–3);
    ``r_est`` the largest inscribed radius, ``r_extent`` the largest region's bounding-box diagonal (a
    crescent's disc is larger than what it shows)."""
    from skimage.feature import peak_local_max  # lazy: skimage is the [images] extra

    pts, nrm = C.rim_points(mask)
    vote_pts, vote_nrm = pts, nrm  # the votes: the mask's own rim
    if level is not None:  # shaded: the rims of nearer spheres over farther ones of the same colour, for the fits
        ep, en = C.shading_edges(level, mask, SHADING_STEP)  # (a shadow's edge may be one too: no votes from them)
        pts, nrm = np.concatenate([pts, ep]), np.concatenate([nrm, en])
    if len(pts) < 6:
        return [], np.zeros(mask.shape, dtype=bool), pts, nrm, [(r_est, WIDE_RADIUS)]

    from scipy.spatial import cKDTree  # lazy: start-up time (scipy.spatial)

    tree = cKDTree(pts)

    def candidates(lo: float, hi: float, r_ref: float, r_tol: float, min_cover: float,
                   most: float = np.inf, free_cover: float = C.FREE_RADIUS_COVER) -> list[C.Circle]:
        acc = C.centre_votes(vote_pts, vote_nrm, mask.shape, lo, hi)
        floor = max(6.0, PEAK_ARC * 2 * math.pi * max(lo, 1.0))
        peaks = peak_local_max(acc, min_distance=max(1, int(lo // 3)), threshold_abs=floor, exclude_border=False,
                               num_peaks=most)
        out = []
        starts = peaks[:, ::-1] + 0.5
        for start, near in zip(starts, tree.query_ball_point(starts, hi + 3.0), strict=True):
            near = np.asarray(near, dtype=np.int64)
            c = C.refine(pts[near], nrm[near], start, lo, hi, r_ref, r_tol, free_cover)
            if c is None or c.cover < min_cover or c.support < max(6, 0.05 * 2 * math.pi * c.r):
                continue
            if C.opaque(c, background & ~mask):
                out.append(c)
        return out

    # the first pass: every radius up to the largest inscribed one (a disc seen whole); the well-seen discs (more
    # than 60 % of their rim) give the element's radius classes. When none is seen whole (every disc partly
    # hidden), up to the largest region's extent, each fit with its own radius
    first = candidates(1.0, min(r_max, r_est + 2.0), r_est, 1.0, 0.4, most=FIRST_PASS_PEAKS)
    seen = np.array([c.r for c in first if c.radius_fitted and c.cover >= 0.6])
    if len(seen) == 0:
        hi = min(r_max, max(r_est + 2.0, r_extent))
        first = candidates(1.0, hi, 0.5 * hi, 1.0, C.MIN_COVER, most=FIRST_PASS_PEAKS, free_cover=0.0)
        seen = np.array([c.r for c in first if c.radius_fitted])
    classes = _radius_classes(seen, r_est, perspective)
    found: list[C.Circle] = []
    for r_ref, r_tol in classes:
        lo, hi = max(1.0, (1 - r_tol - 0.1) * r_ref), min(r_max, (1 + r_tol + 0.1) * r_ref + 1.0)
        found += candidates(lo, hi, r_ref, r_tol, C.MIN_COVER)
    kept, explained = C.explain(found, mask, min_pixels)
    return kept, explained, pts, nrm, classes


def _own_lighting(cm, e: int) -> bool:
    """Whether element ``e``'s lighting level shows the rims of nearer spheres (module step 3): a shaded image, and
    at most ``EDGE_SHARED`` of the mask also in another element's mask (a colour that ties with another one's
    lit or shaded pixels, carbon's grey under hydrogen's white, has a level that jumps wherever the two meet)."""
    if cm.shading != "shaded":
        return False
    mask = cm.masks[e]
    others = np.zeros_like(mask)
    for f in range(len(cm.masks)):
        if f != e:
            others |= cm.masks[f]
    return int((mask & others).sum()) <= EDGE_SHARED * max(int(mask.sum()), 1)


def _class_of(r: float, classes: list) -> tuple[float, float]:
    """The radius class nearest ``r`` (relative)."""
    return min(classes, key=lambda c: abs(math.log(max(r, 1e-9) / c[0])))


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
    peaks = peak_local_max(sm, min_distance=max(1, int(round(1.5 * r_est))), threshold_abs=ref / 3,
                           exclude_border=False)
    out = []
    h, w = mask.shape
    win = int(math.ceil(r_est + 1.5))
    for i, j in peaks:
        i0, i1, j0, j1 = max(0, i - win), min(h, i + win + 1), max(0, j - win), min(w, j + win + 1)
        wgt = cov[i0:i1, j0:j1]
        tot = float(wgt.sum())
        if tot < BLOB_SHARE * math.pi * r_est * r_est:  # a speck (JPEG ringing), not a marker
            continue
        ii, jj = np.mgrid[i0:i1, j0:j1]
        u = float((wgt * (jj + 0.5)).sum() / tot)
        v = float((wgt * (ii + 0.5)).sum() / tot)
        out.append(C.Circle(u, v, math.sqrt(tot / math.pi), int(round(tot)), 1.0, True))
    return out


def _exclusive_pixels(c: C.Circle, masks: np.ndarray, e: int, f: int) -> int:
    win, inside = C.disc_pixels(masks.shape[1:], c)
    return int((inside & masks[e][win] & ~masks[f][win]).sum())


def _full_levels(c: C.Circle, masks: np.ndarray, levels: np.ndarray, tied: list[int]) -> dict[int, float]:
    """Per tied element the 95th percentile, over the disc's pixels every tied element's mask holds (a highlight
    only the brighter colour explains left out), of the level (lighting k, or flat alpha) its colour gives them:
    near 1 for the element drawn (its lit or uniform part shows its full colour), lower for a brighter element
    whose colour the disc never reaches."""
    win, inside = C.disc_pixels(masks.shape[1:], c)
    common = inside & np.logical_and.reduce([masks[e][win] for e in tied])
    out = {}
    for e in tied:
        vals = levels[e][win][common]
        out[e] = float(np.percentile(vals, 95)) if len(vals) else 0.0
    return out


def _darker_of_one_hue(tied: list[int], colours: np.ndarray) -> int | None:
    """The darkest of the tied elements when their colours are one hue (within HUE_RADIANS of each other, as
    directions in RGB: two greys, a colour and its shade) and their brightness differs by HUE_BRIGHTER; else None."""
    cs = [np.asarray(colours[e], dtype=np.float64) for e in tied]
    norms = [float(np.linalg.norm(c)) for c in cs]
    if min(norms) <= 0:
        return None
    for a in range(len(cs)):
        for b in range(a + 1, len(cs)):
            cos = float(cs[a] @ cs[b]) / (norms[a] * norms[b])
            if cos < math.cos(HUE_RADIANS):
                return None
    order = sorted(range(len(tied)), key=lambda k: norms[k])
    return tied[order[0]] if norms[order[1]] >= (1 + HUE_BRIGHTER) * norms[order[0]] else None


def _settle(found: list[_Found], masks: np.ndarray, levels: np.ndarray, symbols: list[str],
            palette: Palette, shading: str, colours: np.ndarray) -> tuple[list, list, list]:
    """(circles, element symbols, candidates) once discs found in two elements' masks are settled (step 4): by the
    pixels each colour alone explains (a clear share of the disc), then by the palette's radii (the image's scale
    from the untied discs), then, for two colours of one hue, the darker, then by the full colour reached."""
    found = sorted(found, key=lambda f: -f.circle.score)
    groups: list[list[_Found]] = []
    for f in found:
        for g in groups:
            k = g[0].circle
            if (g[0].element != f.element and abs(f.circle.r - k.r) <= SAME_DISC * max(f.circle.r, k.r)
                    and math.hypot(f.circle.u - k.u, f.circle.v - k.v) <= max(1.5, SAME_DISC * min(f.circle.r, k.r))):
                g.append(f)
                break
        else:
            groups.append([f])
    ratios = palette.radius_ratios(symbols)
    # px per palette-radius unit, from the discs with one element
    scale = None
    if ratios is not None:
        single = [g[0].circle.r / ratios[g[0].element] for g in groups if len(g) == 1]
        scale = float(np.median(single)) if single else None
    circles, elements, candidates = [], [], []
    for g in groups:
        best = g[0]
        tied = sorted({f.element for f in g})
        if len(tied) > 1:
            own = {f.element: _exclusive_pixels(best.circle, masks, f.element,
                                                next(x.element for x in g if x.element != f.element)) for f in g}
            order = sorted(own, key=lambda e: -own[e])
            full = {e: abs(1.0 - v) for e, v in _full_levels(best.circle, masks, levels, tied).items()}
            by_level = sorted(tied, key=lambda e: full[e])
            _, inside = C.disc_pixels(masks.shape[1:], best.circle)
            by_colour = own[order[0]] >= COLOUR_MARGIN * max(own[order[1]], 1) \
                and own[order[0]] >= EXCLUSIVE_SHARE * max(int(inside.sum()), 1)
            darkest = _darker_of_one_hue(tied, colours)
            by_radius = None
            if scale is not None:
                want = {e: scale * cast(Any, ratios)[e] for e in tied}
                r = best.circle.r
                by = sorted(tied, key=lambda e: abs(want[e] - r))
                gap = abs(want[by[0]] - want[by[1]]) / max(want[by[0]], 1e-9)
                if gap >= RADIUS_MARGIN and abs(want[by[0]] - r) < abs(want[by[1]] - r) * (1 - RADIUS_MARGIN):
                    by_radius = by[0]
            if by_colour:
                tied = [order[0]]
            elif by_radius is not None:
                tied = [by_radius]
            elif darkest is not None:  # one hue (two greys): the brighter colour would show pixels beyond the
                tied = [darkest]  # darker's (its lit part), and the disc shows none (a highlight aside)
            elif full[by_level[1]] - full[by_level[0]] >= LEVEL_MARGIN:
                tied = [by_level[0]]
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
    per_element: list[Any] = []
    for e in range(len(symbols)):
        mask = cm.masks[e]
        r_est, r_extent, area = _mask_sizes(mask, settings.min_pixels)
        r_est = min(r_est, r_max)
        if r_est <= 0:
            per_element.append(None)
            continue
        if r_est < SMALL_RADIUS and area <= math.pi * (SMALL_RADIUS + 1.0) ** 2:
            coverage = cm.level[e] if cm.shading == "flat" else np.clip(cm.level[e], 0, 1)
            found += [_Found(c, e) for c in _blobs(coverage, mask, r_est)]
            per_element.append(None)
            continue
        kept, explained, pts, nrm, classes = _discs(mask, cm.background, r_est, r_extent, r_max,
                                                    settings.min_pixels, settings.perspective,
                                                    cm.level[e] if _own_lighting(cm, e) else None)
        per_element.append((kept, explained, pts, nrm, classes))
        found += [_Found(c, e, (pts, nrm, *_class_of(c.r, classes))) for c in kept]
    everyone = [f.circle for f in found]
    for e, got in enumerate(per_element):
        if got is None:
            continue
        kept, explained, pts, nrm, classes = got
        extra = [c for r_ref, _ in classes
                 for c in C.slivers(cm.masks[e], explained, pts, nrm, everyone, r_ref, settings.min_pixels)]
        extra = [c for c in extra if C.opaque(c, cm.background & ~cm.masks[e])]
        more, _ = C.explain(extra, cm.masks[e] & ~explained, settings.min_pixels, rim=0.0)
        found += [_Found(c, e, (pts, nrm, *_class_of(c.r, classes))) for c in more]
    everyone = [f.circle for f in found]
    found = [_Found(cast(Any, C.polish)(f.circle, *f.rim[:2], everyone, *f.rim[2:]), f.element) if f.rim else f
             for f in found]
    circles, els, cands = _settle(found, cm.masks, cm.level, symbols, palette, cm.shading, colours)
    order: Any = np.lexsort((np.array([c.u for c in circles]), np.array([c.v for c in circles]))) if circles else []
    circles = [circles[k] for k in order]
    return Detections(
        centres=np.array([[c.u, c.v] for c in circles]).reshape(-1, 2), radii=np.array([c.r for c in circles]),
        elements=tuple(els[k] for k in order), candidates=tuple(cands[k] for k in order),
        scores=np.array([min(1.0, c.cover) for c in circles]), shading=cm.shading,
        background=cast("tuple[int, int, int]", tuple(int(x) for x in cm.background_colour)), width=int(w), height=int(h), settings=settings)
