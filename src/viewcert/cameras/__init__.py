"""Cameras: exact models (orthographic, perspective), poses, framing, named protocols, conditioning, the
placement of perspective cameras from a protocol spec (``placement``), the one protocol resolver
(``resolve``: name / file / Protocol / ProtocolSpec → ``ResolvedProtocol``) and the one framing function
(``policy.frame``: resolved protocol + structure + ``FramingPolicy`` → cameras), and another tool's camera as
one 3×4 projection onto its pixels with the viewcert camera of the same rays (``pixel_projection``): a camera
in a tool's own terms resolved to it (``tool_cameras.resolve_tool_camera``; matplotlib's in
``tool_matplotlib``, the field readers in ``tool_fields``) and written back (``tool_terms.to_tool_terms``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.cameras.camera import Camera, OrthographicCamera, PerspectiveCamera, camera_from_dict
    from viewcert.cameras.pixel_projection import PixelProjection
    from viewcert.cameras.placement import (
        check_kind,
        check_placement,
        check_positions,
        focal_px,
        framed_cameras,
        placed_cameras,
        spec_cameras,
    )
    from viewcert.cameras.policy import FramingPolicy, common_pinholes, frame, frame_points
    from viewcert.cameras.protocols import Protocol, View, get_protocol
    from viewcert.cameras.resolve import ResolvedProtocol, resolve
    from viewcert.cameras.tool_cameras import resolve_tool_camera
    from viewcert.cameras.tool_terms import to_tool_terms

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "Camera": "camera", "camera_from_dict": "camera", "OrthographicCamera": "camera", "PerspectiveCamera": "camera",
    "check_kind": "placement", "check_placement": "placement", "check_positions": "placement",
    "focal_px": "placement", "framed_cameras": "placement", "placed_cameras": "placement",
    "spec_cameras": "placement", "common_pinholes": "policy", "frame": "policy", "frame_points": "policy",
    "FramingPolicy": "policy", "PixelProjection": "pixel_projection", "get_protocol": "protocols", "Protocol": "protocols", "View": "protocols",
    "resolve": "resolve", "ResolvedProtocol": "resolve",
    "resolve_tool_camera": "tool_cameras", "to_tool_terms": "tool_terms",
}
lazy_face(__name__, _FACE)

__all__ = ["Camera", "FramingPolicy", "OrthographicCamera", "PerspectiveCamera", "PixelProjection", "Protocol", "ResolvedProtocol",
           "View", "camera_from_dict", "check_kind", "check_placement", "check_positions", "common_pinholes",
           "focal_px", "frame", "frame_points", "framed_cameras", "get_protocol", "placed_cameras",
           "resolve", "resolve_tool_camera", "spec_cameras", "to_tool_terms"]
