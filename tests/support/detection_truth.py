"""The detector scored against a real tool's truth (tests/support/foreign_render: each atom's pixel centre as the
tool placed it, and its visible pixels in a flat twin render): issue 53's acceptance "Detection". Shared by
benchmarks/bench_detection.py, benchmarks/bench_images_ceiling.py and their cover tests.

An atom is **eligible** when it shows at least ``MIN_VISIBLE`` pixels; it is **found** when the one-to-one
assignment of detections to the eligible atoms (``scipy.optimize.linear_sum_assignment`` on the centre distance,
pairs within 3 px) gives it a detection within ``TOLERANCE_PX`` of its centre and of its element. A detection is **invented**
when no atom of the structure (visible or not) projects within ``max(2 px, half its radius)`` of it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

MIN_VISIBLE = 30
TOLERANCE_PX = 1.0


@dataclass
class Score:
    """One image's (or a group's) counts: eligible atoms, found, invented detections, ambiguous ones, the centre
    errors of the found atoms (px) and the misses ((atom, distance or None, detected element, true element,
    visible pixels))."""

    eligible: int = 0
    undrawn: int = 0
    found: int = 0
    invented: int = 0
    detected: int = 0
    ambiguous: int = 0
    errors: list = field(default_factory=list)
    misses: list = field(default_factory=list)

    def add(self, other: Score) -> None:
        for k in ("eligible", "undrawn", "found", "invented", "detected", "ambiguous"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.errors += other.errors
        self.misses += other.misses

    def to_dict(self) -> dict:
        e = np.asarray(self.errors, dtype=float)
        return {"eligible": self.eligible, "undrawn": self.undrawn, "found": self.found,
                "share": round(self.found / self.eligible, 5) if self.eligible else None,
                "invented": self.invented, "detected": self.detected, "ambiguous": self.ambiguous,
                "centre_error_px": {"median": round(float(np.median(e)), 4), "p99": round(float(np.percentile(e, 99)), 4),
                                    "max": round(float(e.max()), 4)} if len(e) else None}


def score(det, centres, visible, elements, projected=None, undrawn=(), projection=None) -> Score:
    """The :class:`Score` of detections ``det`` against the truth of one image (centres (n, 2) px, NaN where the
    tool's centre could not be measured; visible (n,) pixels; elements (n,) symbols); ``projected`` (n, 2) px:
    where the resolved camera draws every atom (default ``centres``), for the invented detections; ``undrawn``:
    elements the renderer draws in the background's own colour with no outline or shading (matplotlib's white
    hydrogen on a white page: its pixels are the page's), counted apart and not eligible; ``projection``: the
    image's resolved camera, under which a perspective detection's centre is its sphere's
    (``detect.match.sphere_centres``: a silhouette is off its centre's projection)."""
    from scipy.optimize import linear_sum_assignment

    centres = np.asarray(centres, dtype=float)
    visible = np.asarray(visible)
    ok = np.isfinite(centres).all(axis=1)
    drawn = np.array([e not in set(undrawn) for e in elements], dtype=bool)
    elig = np.flatnonzero((visible >= MIN_VISIBLE) & ok & drawn)
    s = Score(eligible=len(elig), undrawn=int(((visible >= MIN_VISIBLE) & ok & ~drawn).sum()), detected=len(det),
              ambiguous=sum(1 for e in det.elements if not e))
    if not len(det):
        s.misses = [(int(i), None, None, elements[i], int(visible[i])) for i in elig]
        return s
    found_at = det.centres
    if projection is not None:
        from viewcert.detect.match import sphere_centres

        found_at = sphere_centres(det, projection)
    d = np.linalg.norm(centres[:, None, :] - found_at[None, :, :], axis=2)
    d[~ok] = np.inf
    de = d[elig]  # the eligible atoms only: an atom hidden behind one does not take its detection
    rows, cols = linear_sum_assignment(np.where(de <= 3.0, de, 1e6))
    pair = {int(elig[i]): int(j) for i, j in zip(rows, cols, strict=True) if de[i, j] <= 3.0}
    for i in elig:
        j = pair.get(int(i))
        if j is not None and d[i, j] <= TOLERANCE_PX and det.elements[j] == elements[i]:
            s.found += 1
            s.errors.append(float(d[i, j]))
        else:
            s.misses.append((int(i), None if j is None else round(float(d[i, j]), 3),
                             None if j is None else det.elements[j], elements[i], int(visible[i])))
    where = centres if projected is None else np.asarray(projected, dtype=float)
    dp = np.linalg.norm(where[:, None, :] - found_at[None, :, :], axis=2)
    near = np.min(np.where(np.isfinite(dp), dp, np.inf), axis=0)
    s.invented = int((near > np.maximum(2.0, 0.5 * det.radii)).sum())
    return s
