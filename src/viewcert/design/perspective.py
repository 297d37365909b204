"""Perspective camera positions for a designed molecule protocol (issue 14, item 4: "camera positions for
perspective molecules").

Rule: the designer (``design.designer.design_views``) chooses the view directions d_k = −R_k[2] with its
orthographic objective (margins of projections along d_k; perspective parallax is not modelled in the
search). Each camera is then a pinhole that looks along d_k at the molecule's bounding-box centre c from
``distance`` Å: position_k = c + distance·R_k[2] (world Å), so c projects to the image centre. Without
``distance``, the framing rule of ``cameras.framing.fit_perspective``: the bounding sphere (centre c, radius
= farthest atom + ``pad``) fits the smaller image side minus ``margin_px`` at ``fov_deg`` — the same
distance for every view, since the sphere does not depend on the direction. A given distance must put every
camera outside that sphere. Positions are in the frame of the structure as read; the protocol file records
them (``position`` per view), with kind ``perspective``, ``fov_deg`` and the image size.
"""

from __future__ import annotations

import math

import numpy as np

from viewcert.cameras.camera import PerspectiveCamera
from viewcert.cameras.framing import DEFAULT_MARGIN_PX, fit_perspective
from viewcert.cameras.protocol_files import ProtocolSpec
from viewcert.cameras.protocols import Protocol
from viewcert.errors import InputError
from viewcert.structures import Structure


def focal_px(fov_deg: float, width: int, height: int) -> float:
    """Focal length (px) whose field of view over the smaller image side is ``fov_deg``."""
    return 0.5 * min(width, height) / math.tan(math.radians(0.5 * fov_deg))


def perspective_spec(protocol: Protocol, structure: Structure, *, distance: float | None = None,
                     fov_deg: float = 30.0, width: int = 768, height: int = 768,
                     margin_px: float = DEFAULT_MARGIN_PX, pad: float = 0.0) -> ProtocolSpec:
    """A perspective ProtocolSpec of ``protocol``'s views placed around ``structure`` (module docstring)."""
    if structure.is_periodic:
        raise InputError("perspective camera positions are designed for a molecule, not a periodic structure",
                         field="camera")
    pts = np.asarray(structure.positions, dtype=np.float64)
    centre = 0.5 * (pts.min(axis=0) + pts.max(axis=0))
    radius = float(np.linalg.norm(pts - centre, axis=1).max()) + pad
    positions = []
    for v in protocol.views:
        if distance is None:
            cam = fit_perspective(v.rotation, pts, width=width, height=height, fov_deg=fov_deg,
                                  margin_px=margin_px, pad=pad, name=v.name)
            positions.append(np.asarray(cam.position))
        else:
            if not (math.isfinite(distance) and distance > radius):
                raise InputError(f"must exceed the molecule's bounding-sphere radius {radius:.4g} Å (cameras "
                                 f"outside the molecule), got {distance}", field="distance")
            positions.append(centre + float(distance) * np.asarray(v.rotation)[2])
    return ProtocolSpec(protocol, kind="perspective", fov_deg=fov_deg, width=width, height=height,
                        positions=tuple(tuple(float(x) for x in p) for p in positions))


def placed_cameras(spec: ProtocolSpec) -> tuple[PerspectiveCamera, ...]:
    """The pinhole cameras a perspective spec states: rotation and position per view as recorded (not
    re-framed), focal from ``fov_deg`` and the image size."""
    if spec.kind != "perspective" or any(p is None for p in spec.positions):
        raise InputError("needs kind = 'perspective' and a position for every view", field="protocol.kind")
    f = focal_px(spec.fov_deg, spec.width, spec.height)
    return tuple(PerspectiveCamera(rotation=v.rotation, position=np.asarray(p, dtype=np.float64), focal=f,
                                   width=spec.width, height=spec.height, name=v.name)
                 for v, p in zip(spec.protocol.views, spec.positions, strict=True))
