"""The values camera recovery reads and returns: detections, hints, thresholds, recovered poses and the verdict.

Units and frames: pixels in the image's own frame (u right, v down, origin at the top-left corner, pixel centres at
+0.5; docs/conventions.md), world points Cartesian Å, angles in degrees. Element labels are atomic numbers; 0 in
a detection means "element unknown" (it may be any atom).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.errors import InputError
from viewcert.numeric import readonly

__all__ = ["KINDS", "NOT_RECOVERED", "RECOVERED", "DetectedAtoms", "RecoveredPose", "Recovery", "RecoveryHints",
           "RecoveryThresholds"]

RECOVERED = "recovered"
NOT_RECOVERED = "not recovered"
#: the camera kinds a hint may name (None: either, chosen by the residuals)
KINDS = ("orthographic", "perspective")


@dataclass(frozen=True, eq=False)
class DetectedAtoms:
    """Atoms detected in one image: centres ``uv`` (m, 2) px, ``labels`` (m,) atomic numbers (0 = unknown) and,
    when the detector measured them, drawn ``radii`` (m,) px."""

    uv: np.ndarray
    labels: np.ndarray
    radii: np.ndarray | None = None

    def __post_init__(self) -> None:
        uv = np.asarray(self.uv, dtype=np.float64).reshape(-1, 2) if np.size(self.uv) else np.zeros((0, 2))
        lab = np.asarray(self.labels, dtype=np.int64).reshape(-1)
        if len(lab) != len(uv):
            raise InputError(f"{len(uv)} detected centres but {len(lab)} labels", field="labels")
        if not np.isfinite(uv).all():
            raise InputError("detected centres must be finite", field="uv")
        if (lab < 0).any() or (lab > 118).any():
            raise InputError("detection labels must be atomic numbers 0..118 (0 = unknown)", field="labels")
        object.__setattr__(self, "uv", readonly(uv))
        object.__setattr__(self, "labels", readonly(lab))
        if self.radii is not None:
            r = np.asarray(self.radii, dtype=np.float64).reshape(-1)
            if len(r) != len(uv) or not np.isfinite(r).all() or (r < 0).any():
                raise InputError("detected radii must be finite, ≥ 0 and one per centre", field="radii")
            object.__setattr__(self, "radii", readonly(r))

    def __len__(self) -> int:
        return len(self.uv)


@dataclass(frozen=True)
class RecoveryHints:
    """What the author knows about the camera (each optional).

    kind: ``"orthographic"`` or ``"perspective"`` (None: either, the residuals choose); fov_deg: approximate
    horizontal field of view of a perspective camera (degrees); zone_axis: the view direction (world frame, into
    the scene) within ``zone_tolerance_deg``; tool: the renderer when named (``"matplotlib"`` lets each world axis
    be scaled on its own, as its 3D axes autoscale do, and the principal point move); per_axis: force that
    (True) or forbid it (False) whatever the tool."""

    kind: str | None = None
    fov_deg: float | None = None
    zone_axis: tuple[float, float, float] | None = None
    zone_tolerance_deg: float = 5.0
    tool: str = "unknown"
    per_axis: bool | None = None

    def __post_init__(self) -> None:
        if self.kind is not None and self.kind not in KINDS:
            raise InputError(f"camera kind must be one of {KINDS}, got {self.kind!r}", field="kind")
        if self.fov_deg is not None and not (0.5 <= float(self.fov_deg) < 179.0):
            raise InputError(f"fov_deg must lie in [0.5, 179) degrees, got {self.fov_deg!r}", field="fov_deg")
        if self.zone_axis is not None:
            z = np.asarray(self.zone_axis, dtype=np.float64).reshape(-1)
            if z.shape != (3,) or not np.isfinite(z).all() or np.linalg.norm(z) == 0:
                raise InputError("zone_axis must be three finite numbers, not all zero", field="zone_axis")
            object.__setattr__(self, "zone_axis", tuple(float(x) for x in z / np.linalg.norm(z)))
        if not (0.0 < float(self.zone_tolerance_deg) <= 90.0):
            raise InputError("zone_tolerance_deg must lie in (0, 90]", field="zone_tolerance_deg")

    @property
    def axes_scaled(self) -> bool:
        """Whether each world axis may carry its own scale (matplotlib's autoscaled 3D axes)."""
        return bool(self.per_axis) if self.per_axis is not None else self.tool == "matplotlib"

    def to_dict(self) -> dict:
        """JSON form (every field)."""
        return {"kind": self.kind, "fov_deg": self.fov_deg,
                "zone_axis": list(self.zone_axis) if self.zone_axis is not None else None,
                "zone_tolerance_deg": self.zone_tolerance_deg, "tool": self.tool, "per_axis": self.axes_scaled}


@dataclass(frozen=True)
class RecoveryThresholds:
    """When a recovered camera counts (below any of them: "camera not recovered").

    match_px: a detection within this distance (px) of a visible projected atom of its element is explained;
    max_rms_px: largest RMS residual (px) over explained detections; min_explained: smallest fraction of
    detections explained; max_missing: largest fraction of the atoms the camera shows plainly (most of the disc
    clear of every nearer atom's) that no detection explains, enforced only when the explained detections could
    have arisen by chance (their chance probability above 10^``chance_log10``: a detector that misses atoms in a
    crowded picture does not refuse a camera that a hundred detections pin down); min_atoms: fewest detected atoms;
    same_picture_px: a
    second pose is admissible when its RMS is within this (px) of the best one's and it explains as many atoms
    (to ``same_picture_fraction``)."""

    match_px: float = 3.0
    max_rms_px: float = 1.5
    min_explained: float = 0.9
    max_missing: float = 0.25
    min_atoms: int = 4
    same_picture_px: float = 0.5
    same_picture_fraction: float = 0.05
    chance_log10: float = -8.0

    def __post_init__(self) -> None:
        for name in ("match_px", "max_rms_px", "same_picture_px"):
            v = float(getattr(self, name))
            if not (math.isfinite(v) and v > 0):
                raise InputError(f"{name} must be a finite number > 0", field=name)
        for name in ("min_explained", "max_missing", "same_picture_fraction"):
            v = float(getattr(self, name))
            if not (0.0 <= v <= 1.0):
                raise InputError(f"{name} must lie in [0, 1]", field=name)
        if int(self.min_atoms) != self.min_atoms or self.min_atoms < 3:
            raise InputError("min_atoms must be an integer ≥ 3", field="min_atoms")
        if not (math.isfinite(float(self.chance_log10)) and self.chance_log10 < 0):
            raise InputError("chance_log10 must be a finite number < 0", field="chance_log10")

    def to_dict(self) -> dict:
        """JSON form (every field)."""
        return {"match_px": self.match_px, "max_rms_px": self.max_rms_px, "min_explained": self.min_explained,
                "max_missing": self.max_missing, "min_atoms": self.min_atoms,
                "same_picture_px": self.same_picture_px, "same_picture_fraction": self.same_picture_fraction,
                "chance_log10": self.chance_log10}


@dataclass(frozen=True, eq=False)
class RecoveredPose:
    """One camera that draws the detections, with its evidence.

    projection: the camera; model: the parametrisation fitted (``"orthographic"``, ``"orthographic, per-axis"``,
    ``"perspective"``, ``"perspective, per-axis"``); rms_px / max_px: residuals over explained detections;
    explained: fraction of detections explained; n_matched / n_detected; n_missing / n_plain: atoms the camera
    shows plainly that no detection explains, out of all it shows plainly; matched_atom: per detection, the
    index of the atom it was matched to (−1: unexplained); residual_px: per detection, its distance to that atom
    (NaN: unexplained); n_behind: atoms at or behind a perspective camera's pinhole (such a camera never counts);
    chance_log10: log10 of the probability that this many detections would be explained by chance (each detection
    landing within match_px of an atom of its element, the atoms of each element covering a share of the picture's
    outline, ``evidence.chance_log10``);
    from_symmetry: the best pose, or the best pose composed with a symmetry operation of the drawn atoms (False: a
    distinct camera the search found that draws the same picture)."""

    projection: PixelProjection
    model: str
    rms_px: float
    max_px: float
    explained: float
    n_matched: int
    n_detected: int
    n_missing: int
    n_plain: int
    n_behind: int
    chance_log10: float
    matched_atom: np.ndarray = field(repr=False)
    residual_px: np.ndarray = field(repr=False)
    from_symmetry: bool = True

    @property
    def missing(self) -> float:
        """Fraction of the plainly shown atoms no detection explains."""
        return self.n_missing / self.n_plain if self.n_plain else 0.0

    def failures(self, thresholds: RecoveryThresholds) -> list[str]:
        """The thresholds this pose misses, as reasons (empty: it counts)."""
        out = []
        if self.n_behind:
            out.append(f"{self.n_behind} atoms at or behind the camera's pinhole")
        if self.n_matched < thresholds.min_atoms:
            out.append(f"{self.n_matched} detections explained, fewer than {thresholds.min_atoms}")
        if self.explained < thresholds.min_explained:
            out.append(f"{self.explained:.0%} of the detected atoms explained, below {thresholds.min_explained:.0%}")
        if self.rms_px > thresholds.max_rms_px:
            out.append(f"residual {self.rms_px:.2f} px RMS above {thresholds.max_rms_px:g} px")
        if self.missing > thresholds.max_missing and self.chance_log10 > thresholds.chance_log10:
            out.append(f"{self.n_missing} of {self.n_plain} atoms the camera shows are not in the image")
        return out

    def to_dict(self) -> dict:
        """JSON form: the projection and the evidence (per-detection arrays omitted)."""
        return {"projection": self.projection.to_dict(), "model": self.model, "rms_px": self.rms_px,
                "max_px": self.max_px, "explained": self.explained, "n_matched": self.n_matched,
                "n_detected": self.n_detected, "n_missing": self.n_missing, "n_plain": self.n_plain,
                "n_behind": self.n_behind, "chance_log10": self.chance_log10, "from_symmetry": self.from_symmetry}


@dataclass(frozen=True, eq=False)
class Recovery:
    """The verdict on one image: ``status`` ``"recovered"`` or ``"not recovered"`` (then ``reason`` says why).

    poses: the admissible poses, best first (every camera that draws the same picture within the thresholds;
    empty when not recovered, except ``best`` keeps the closest failed attempt for the report); spread_deg: the
    largest rotation angle between two admissible poses; spread_px: the largest displacement of one atom between
    two admissible poses (px); unseen: elements of the structure no detection carries (left out of the fit);
    hints and thresholds: what it was asked with; labels_disagree: when the camera was found only with the
    detections' elements set aside (the colours read disagree with the structure's elements), how many of the
    explained detections carry an element other than their atom's (-1: the elements were used)."""

    status: str
    reason: str
    poses: tuple[RecoveredPose, ...]
    best: RecoveredPose | None
    spread_deg: float
    spread_px: float
    unseen: tuple[str, ...]
    hints: RecoveryHints
    thresholds: RecoveryThresholds
    labels_disagree: int = -1

    @property
    def labels_ignored(self) -> bool:
        """Whether the camera was found with the detections' elements set aside."""
        return self.labels_disagree >= 0

    @property
    def recovered(self) -> bool:
        """True when at least one camera passes every threshold."""
        return self.status == RECOVERED

    @property
    def message(self) -> str:
        """One line: ``camera recovered (…)`` or ``camera not recovered: <reason>``."""
        if not self.recovered:
            return f"camera not recovered: {self.reason}"
        p = self.poses[0]
        extra = f", {len(self.poses)} admissible poses up to {self.spread_deg:.1f}° apart" if len(self.poses) > 1 else ""
        if self.labels_ignored:
            extra += (f", elements set aside: {self.labels_disagree} of {p.n_matched} explained detections carry "
                      "another element than their atom's")
        return (f"camera recovered ({p.projection.kind}, {p.rms_px:.2f} px RMS, max {p.max_px:.2f} px, "
                f"{p.n_matched}/{p.n_detected} atoms explained{extra})")

    def to_dict(self) -> dict:
        """JSON form: status, reason, every admissible pose with its evidence, the spread, hints, thresholds."""
        return {"status": self.status, "reason": self.reason, "poses": [p.to_dict() for p in self.poses],
                "best_attempt": self.best.to_dict() if (self.best is not None and not self.recovered) else None,
                "n_poses": len(self.poses), "spread_deg": self.spread_deg, "spread_px": self.spread_px,
                "unseen_elements": list(self.unseen), "labels_disagree": self.labels_disagree,
                "hints": self.hints.to_dict(),
                "thresholds": self.thresholds.to_dict()}
