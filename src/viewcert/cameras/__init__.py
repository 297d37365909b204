"""Cameras: exact models (orthographic, perspective), poses, framing, named protocols, conditioning, and the
placement of perspective cameras from a protocol spec (``placement``)."""

from viewcert.cameras.camera import Camera, OrthographicCamera, PerspectiveCamera, camera_from_dict
from viewcert.cameras.placement import (
    check_kind,
    check_placement,
    check_positions,
    drawn_cameras,
    focal_px,
    framed_cameras,
    placed_cameras,
    spec_cameras,
)
from viewcert.cameras.protocols import Protocol, View, get_protocol

__all__ = ["Camera", "OrthographicCamera", "PerspectiveCamera", "Protocol", "View", "camera_from_dict",
           "check_kind", "check_placement", "check_positions", "drawn_cameras", "focal_px", "framed_cameras",
           "get_protocol", "placed_cameras", "spec_cameras"]
