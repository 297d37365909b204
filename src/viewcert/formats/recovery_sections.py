"""The typed section of a camera recovered from a published image (issue 54): ``images[].recovered`` in an
as-published certificate (``viewcert certify images:FOLDER/images.toml`` with ``camera = { tool = "unknown" }``),
a :class:`~viewcert.formats.model.Record` whose fields are the keys ``certify.recovered`` writes.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from viewcert.formats.model import Count, List, Number, Object, Record, Text

__all__ = ["RecoveredCamera"]


class RecoveredCamera(Record):
    """``images[].recovered``: how the image's camera was recovered from the structure and the detected atoms,
    with its evidence (pixels in the image's frame: u right, v down), every admissible pose, and the camera written
    back in the renderer's own terms; or why it was not recovered."""

    SOURCE: ClassVar[str] = "images[].recovered"
    status: Text | None = Field(None, description="recovered | not recovered")
    reason: Text | None = Field(None, description="why not ('' when recovered)")
    model: Text | None = Field(None, description=(
        "the camera model fitted (orthographic | perspective, with ', per-axis')"))
    rms_px: Number | None = Field(None, description="px: RMS residual of the explained detections (best pose)")
    max_px: Number | None = Field(None, description="px: their largest residual")
    explained: Number | None = Field(None, description="the fraction of detections explained")
    n_matched: Count | None = Field(None, description="a count of the detections explained")
    n_detected: Count | None = Field(None, description="a count of the detections the recovery read")
    n_missing: Count | None = Field(None, description=(
        "a count of the atoms the camera shows plainly that no detection explains"))
    n_poses: Count | None = Field(None, description=(
        "a count of the admissible poses (cameras drawing the same picture)"))
    spread_deg: Number | None = Field(None, description=(
        "degrees: the largest rotation between two admissible poses"))
    spread_px: Number | None = Field(None, description=(
        "px: the largest displacement of one atom between two admissible poses"))
    poses: List | None = Field(None, description=(
        "every admissible pose, best first: ``cameras.PixelProjection.to_dict`` (world Å -> the image's px)"))
    hints: Object | None = Field(None, description=(
        "what the camera table said (kind, fov, zone axis, drawn_by, per-axis)"))
    thresholds: Object | None = Field(None, description="when a camera counts (px and fractions)")
    unseen: List | None = Field(None, description=(
        "elements of the structure no detection carries (left out of the fit)"))
    labels_disagree: Count | None = Field(None, description=(
        "a count of the explained detections whose element is not their atom's when the camera was found with the "
        "detections' elements set aside (the colours read disagree with the structure); -1: the elements were "
        "used"))
    drawn_by: Text | None = Field(None, description="the renderer named (its terms for written_back), or unknown")
    written_back: Object | None = Field(None, description=(
        "the best pose in the renderer's own terms (a camera table ``resolve_tool_camera`` reads back), or null"))
    written_back_note: Text | None = Field(None, description="why it could not be written back ('' when it was)")
