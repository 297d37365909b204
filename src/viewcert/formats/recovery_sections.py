"""The typed section of a camera recovered from a published image (issue 54): ``images[].recovered`` in an
as-published certificate (``viewcert certify images:FOLDER/images.toml`` with ``camera = { tool = "unknown" }``).

A field a section did not write stays :data:`~viewcert.formats.fields.ABSENT`; unknown keys are kept in ``extra``;
``KINDS`` declares what code relies on (``formats.fields.Section``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from viewcert.formats.fields import ABSENT, Section

__all__ = ["RecoveredCamera"]


@dataclass(frozen=True)
class RecoveredCamera(Section):
    """``images[].recovered``: how the image's camera was recovered from the structure and the detected atoms,
    with its evidence (pixels in the image's frame: u right, v down), every admissible pose, and the camera written
    back in the renderer's own terms; or why it was not recovered."""

    SOURCE: ClassVar[str] = "images[].recovered"
    KINDS: ClassVar[dict] = {"status": "text", "reason": "text", "rms_px": "number or null",
                             "max_px": "number or null", "explained": "number or null", "n_matched": "count or null",
                             "n_detected": "count", "n_poses": "count", "spread_deg": "number",
                             "spread_px": "number", "poses": "list", "hints": "object", "thresholds": "object",
                             "unseen": "list", "written_back": "object or null"}
    status: str = ABSENT  # recovered | not recovered
    reason: str = ABSENT  # why not ('' when recovered)
    model: str = ABSENT  # the camera model fitted (orthographic | perspective, with ', per-axis')
    rms_px: float | None = ABSENT  # px: RMS residual of the explained detections (best pose)
    max_px: float | None = ABSENT  # px: their largest residual
    explained: float | None = ABSENT  # the fraction of detections explained
    n_matched: int | None = ABSENT  # a count of the detections explained
    n_detected: int = ABSENT  # a count of the detections the recovery read
    n_missing: int | None = ABSENT  # a count of the atoms the camera shows plainly that no detection explains
    n_poses: int = ABSENT  # a count of the admissible poses (cameras drawing the same picture)
    spread_deg: float = ABSENT  # degrees: the largest rotation between two admissible poses
    spread_px: float = ABSENT  # px: the largest displacement of one atom between two admissible poses
    #: every admissible pose, best first: ``cameras.PixelProjection.to_dict`` (world Å -> the image's px)
    poses: list = ABSENT
    hints: dict = ABSENT  # what the camera table said (kind, fov, zone axis, drawn_by, per-axis)
    thresholds: dict = ABSENT  # when a camera counts (px and fractions)
    unseen: list = ABSENT  # elements of the structure no detection carries (left out of the fit)
    #: a count of the explained detections whose element is not their atom's when the camera was found with the
    #: detections' elements set aside (the colours read disagree with the structure); -1: the elements were used
    labels_disagree: int = ABSENT
    drawn_by: str = ABSENT  # the renderer named (its terms for written_back), or unknown
    #: the best pose in the renderer's own terms (a camera table ``resolve_tool_camera`` reads back), or null
    written_back: dict | None = ABSENT
    written_back_note: str = ABSENT  # why it could not be written back ('' when it was)
    extra: Mapping = field(default_factory=dict)
