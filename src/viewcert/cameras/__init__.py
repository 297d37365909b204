"""Cameras: exact models (orthographic, perspective), poses, framing, named protocols, conditioning, the
placement of perspective cameras from a protocol spec (``placement``), the one protocol resolver
(``resolve``: name / file / Protocol / ProtocolSpec → ``ResolvedProtocol``) and the one framing function
(``policy.frame``: resolved protocol + structure + ``FramingPolicy`` → cameras)."""

from viewcert.cameras.camera import Camera, OrthographicCamera, PerspectiveCamera, camera_from_dict
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

__all__ = ["Camera", "FramingPolicy", "OrthographicCamera", "PerspectiveCamera", "Protocol", "ResolvedProtocol",
           "View", "camera_from_dict", "check_kind", "check_placement", "check_positions", "common_pinholes",
           "focal_px", "frame", "frame_points", "framed_cameras", "get_protocol", "placed_cameras",
           "resolve", "spec_cameras"]
