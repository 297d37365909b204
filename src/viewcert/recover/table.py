"""The camera table of a picture whose camera was not published, and the recovered camera written back.

In an ``images.toml`` (docs/images-toml.md) a benchmark that published no camera writes
``camera = { tool = "unknown" }``, optionally with what its author knows:

========== ============================================================================================
key        meaning
========== ============================================================================================
kind       ``"orthographic"`` or ``"perspective"`` (default: either; the residuals choose)
fov        approximate horizontal field of view of a perspective camera, degrees
zone_axis  the view direction (world frame, into the scene), three numbers
zone_tol   how far the true direction may lie from ``zone_axis``, degrees (default 5)
drawn_by   the renderer that drew the picture (one of ``cameras.tool_cameras.TOOLS``): the recovered camera
           is written back in its terms where it has a writer (``cameras.to_tool_terms``), and
           ``"matplotlib"`` lets each world axis carry its own scale (its 3D axes scale each to its limits)
per_axis   ``true``/``false``: allow or forbid per-axis scales whatever ``drawn_by`` says
width      the image's width and height, px (optional; the image's own size otherwise)
height
========== ============================================================================================

Every other key is refused (one line naming ``camera.<key>``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.cameras.tool_cameras import TOOLS
from viewcert.cameras.tool_fields import TableReader
from viewcert.cameras.tool_terms import WRITERS, to_tool_terms
from viewcert.errors import CameraError
from viewcert.recover.model import KINDS, RecoveryHints

__all__ = ["RECOVERY_KEYS", "UNKNOWN_TOOL", "hints_from_table", "is_unknown", "written_back"]

#: the camera tool of a picture whose camera was not published
UNKNOWN_TOOL = "unknown"
RECOVERY_KEYS = ("tool", "kind", "fov", "zone_axis", "zone_tol", "drawn_by", "per_axis", "width", "height")


def is_unknown(table) -> bool:
    """Whether a camera table asks for recovery (``tool = "unknown"``).

    Parameters
    ----------
    table : object
        A camera table as read from the file (anything: only a table with ``tool = "unknown"`` asks).

    Returns
    -------
    bool
        True when the camera is to be recovered.
    """
    return isinstance(table, Mapping) and str(table.get("tool", "")).strip().lower() == UNKNOWN_TOOL


def hints_from_table(table: Mapping, where: str | None = None) -> RecoveryHints:
    """The recovery hints of a ``tool = "unknown"`` camera table (module docstring).

    Parameters
    ----------
    table : Mapping
        The camera table as read from the file.
    where : str, optional
        The place named in errors (e.g. ``"images.toml, image[3]"``).

    Returns
    -------
    RecoveryHints
        kind, fov (degrees), zone axis (world frame) and its tolerance (degrees), the renderer, per-axis scales.

    Raises
    ------
    InputError
        A key not in ``RECOVERY_KEYS``, or a value of the wrong kind, naming ``camera.<key>``.
    """
    t = TableReader(table, where)
    for key in table:
        if key not in RECOVERY_KEYS:
            raise t.error(str(key)[:40], f"is not a field of an unknown camera; one of {', '.join(RECOVERY_KEYS)}")
    if t.text("tool").strip().lower() != UNKNOWN_TOOL:
        raise t.error("tool", f"must be {UNKNOWN_TOOL!r} for a camera to be recovered")
    kind = t.choice("kind", {k: k for k in KINDS}) if t.has("kind") else None
    fov = t.number("fov", positive=True) if t.has("fov") else None
    if fov is not None and not 0.5 <= fov < 179.0:
        raise t.error("fov", f"must lie in [0.5, 179) degrees, got {fov}")
    zone = tuple(float(x) for x in t.numbers("zone_axis", 3)) if t.has("zone_axis") else None
    if zone is not None and not any(zone):
        raise t.error("zone_axis", "must not be the zero vector")
    tol = t.number("zone_tol", 5.0, positive=True)
    if tol > 90:
        raise t.error("zone_tol", f"must be at most 90 degrees, got {tol}")
    drawn_by = t.choice("drawn_by", {k: k for k in TOOLS}) if t.has("drawn_by") else "unknown"
    per_axis = None
    if t.has("per_axis"):
        v = t.raw("per_axis")
        if not isinstance(v, bool):
            raise t.error("per_axis", f"must be true or false, got {str(v)[:40]!r}")
        per_axis = v
    return RecoveryHints(kind=kind, fov_deg=fov, zone_axis=cast("tuple[float, float, float] | None", zone), zone_tolerance_deg=tol, tool=drawn_by,
                         per_axis=per_axis)


def written_back(projection: PixelProjection, tool: str, **options) -> tuple[dict | None, str]:
    """The recovered camera in ``tool``'s own terms, or why it cannot be written there.

    Parameters
    ----------
    projection : PixelProjection
        A recovered camera (world Å → the image's px).
    tool : str
        The renderer named by ``drawn_by``.
    **options
        The writer's free choices (``cameras.to_tool_terms``: ``centre`` Å, ``fov``, ``distance``, ...).

    Returns
    -------
    tuple
        (the camera table ``resolve_tool_camera`` reads back to the same projection, ``""``), or (None, the reason:
        no writer for the tool, or the tool cannot draw this projection).
    """
    if tool not in WRITERS:
        return None, f"no writer for {tool!r}'s camera terms (one of {', '.join(WRITERS)})"
    try:
        return to_tool_terms(projection, tool, **options), ""
    except CameraError as exc:
        return None, str(exc)
