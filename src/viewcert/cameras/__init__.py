"""Cameras: exact models (orthographic, perspective), poses, framing, named protocols, conditioning."""

from viewcert.cameras.camera import Camera, OrthographicCamera, PerspectiveCamera, camera_from_dict
from viewcert.cameras.protocols import Protocol, View, get_protocol

__all__ = ["Camera", "OrthographicCamera", "PerspectiveCamera", "Protocol", "View", "camera_from_dict", "get_protocol"]
