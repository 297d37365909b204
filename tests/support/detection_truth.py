"""The detector scored against a real tool's truth (tests/support/foreign_render: each atom's pixel centre as the
tool placed it, and its visible pixels in a flat twin render): issue 53's acceptance "Detection". Shared by
benchmarks/bench_detection.py, benchmarks/bench_images_ceiling.py and their cover tests.

An atom is **eligible** when it shows at least ``MIN_VISIBLE`` pixels; it is **found** when the one-to-one
assignment of detections to atoms (``scipy.optimize.linear_sum_assignment`` on the centre distance, pairs within
3 px) gives it a detection within ``TOLERANCE_PX`` of its centre and of its element. A detection is **invented**
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
    found: int = 0
    invented: int = 0
    detected: int = 0
    ambiguous: int = 0
    errors: list = field(default_factory=list)
    misses: list = field(default_factory=list)

    def add(self, other: Score) -> None:
        for k in ("eligible", "found", "invented", "detected", "ambiguous"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.errors += other.errors
        self.misses += other.misses

    def to_dict(self) -> dict:
        e = np.asarray(self.errors, dtype=float)
        return {"eligible": self.eligible, "found": self.found,
                "share": round(self.found / self.eligible, 5) if self.eligible else None,
                "invented": self.invented, "detected": self.detected, "ambiguous": self.ambiguous,
                "centre_error_px": {"median": round(float(np.median(e)), 4), "p99": round(float(np.percentile(e, 99)), 4),
                                    "max": round(float(e.max()), 4)} if len(e) else None}


def score(det, centres, visible, elements, projected=None) -> Score:
    """The :class:`Score` of detections ``det`` against the truth of one image (centres (n, 2) px, NaN where the
    tool's centre could not be measured; visible (n,) pixels; elements (n,) symbols); ``projected`` (n, 2) px:
    where the resolved camera draws every atom (default ``centres``), for the invented detections."""
    from scipy.optimize import linear_sum_assignment

    centres = np.asarray(centres, dtype=float)
    visible = np.asarray(visible)
    ok = np.isfinite(centres).all(axis=1)
    elig = np.flatnonzero((visible >= MIN_VISIBLE) & ok)
    s = Score(eligible=len(elig), detected=len(det), ambiguous=sum(1 for e in det.elements if not e))
    if not len(det):
        s.misses = [(int(i), None, None, elements[i], int(visible[i])) for i in elig]
        return s
    d = np.linalg.norm(centres[:, None, :] - det.centres[None, :, :], axis=2)
    d[~ok] = np.inf
    cost = np.where(d <= 3.0, d, 1e6)
    rows, cols = linear_sum_assignment(cost)
    pair = {int(i): int(j) for i, j in zip(rows, cols, strict=True) if d[i, j] <= 3.0}
    for i in elig:
        j = pair.get(int(i))
        if j is not None and d[i, j] <= TOLERANCE_PX and det.elements[j] == elements[i]:
            s.found += 1
            s.errors.append(float(d[i, j]))
        else:
            s.misses.append((int(i), None if j is None else round(float(d[i, j]), 3),
                             None if j is None else det.elements[j], elements[i], int(visible[i])))
    where = centres if projected is None else np.asarray(projected, dtype=float)
    dp = np.linalg.norm(where[:, None, :] - det.centres[None, :, :], axis=2)
    near = np.min(np.where(np.isfinite(dp), dp, np.inf), axis=0)
    s.invented = int((near > np.maximum(2.0, 0.5 * det.radii)).sum())
    return s
