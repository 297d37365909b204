"""Perspective cameras of a protocol spec: placed exactly as a file states, or framed on the drawn points.

Frames and units: positions are world Å in the frame of the structure as read (a crystal: the Cartesian frame
of the cell that is drawn, with its tiling); rotations map world to camera (docs/conventions.md); focal in px.

- ``placed_cameras(spec)``: one pinhole per view, rotation and ``position`` as recorded (not re-framed), focal
  from ``fov_deg`` over the smaller image side (``focal_px``).
- ``framed_cameras(spec, points)``: the framing rule for a spec whose views carry no position: each camera is
  a pinhole looking along its view direction −R[2] at the centre c of the points' bounding box, at the
  distance of ``cameras.framing.fit_perspective`` (the bounding sphere, centre c and radius = farthest point
  + ``pad``, fits the smaller image side minus ``margin_px`` at ``fov_deg``): the same distance for every
  view, since the sphere does not depend on the direction. position_k = c + distance·R_k[2].
- ``spec_cameras(spec, points)``: either of the two (a position for every view, or for none), then
  ``check_placement``.
- ``viewcert.cameras.policy.frame`` calls ``spec_cameras`` on a structure's drawn points (atoms, tiled
  when periodic, and the cell box's corners): the rule every command uses, so the images shown and the
  views certified are the same pinholes.
- ``check_placement(cameras, points)``: InputError (field ``views[NAME].position``) when a camera lies inside
  the points' bounding sphere (centre c, radius = farthest point) or when a point lies at or behind a
  camera's image plane (depth ≤ 0).
"""

from __future__ import annotations

import math

import numpy as np

from viewcert.cameras.camera import PerspectiveCamera
from viewcert.cameras.framing import DEFAULT_MARGIN_PX, fit_perspective
from viewcert.cameras.protocol_files import ProtocolSpec
from viewcert.errors import InputError

#: what ``check_placement`` calls "inside": distance to the bounding-sphere centre ≤ radius·(1 + this)
INSIDE_RTOL = 1e-9


def focal_px(fov_deg: float, width: int, height: int) -> float:
    """Focal length (px) whose field of view over the smaller image side is ``fov_deg`` (degrees).

    Parameters
    ----------
    fov_deg : float
        Full field of view over the smaller image side, degrees.
    width : int
        Image width, px.
    height : int
        Image height, px.

    Returns
    -------
    float
        Focal length f in px: min(width, height) / 2 / tan(fov_deg / 2).
    """
    return 0.5 * min(width, height) / math.tan(math.radians(0.5 * fov_deg))


def _need_perspective(spec: ProtocolSpec) -> None:
    if spec.kind != "perspective":
        raise InputError(f"needs kind = 'perspective', got {spec.kind!r}", source=spec.source, field="protocol.kind")


def check_kind(spec: ProtocolSpec, kind: str | None) -> None:
    """InputError (field ``kind``) when a caller asks a perspective protocol for another kind of camera: its
    pinholes are the cameras certify places, so the images must use them too. None means "the protocol's".

    Parameters
    ----------
    spec : ProtocolSpec
        The protocol as read (its ``kind``).
    kind : str or None
        The camera kind asked for: ``"orthographic"``, ``"perspective"`` or None.

    Raises
    ------
    InputError
        ``spec`` is perspective and ``kind`` is ``"orthographic"`` (field ``kind``).
    """
    if spec.kind == "perspective" and kind not in (None, "perspective"):
        raise InputError(f"the protocol asks for kind = 'perspective' cameras; kind = {kind!r} disagrees",
                         source=spec.source, field="kind")


def placed_cameras(spec: ProtocolSpec) -> tuple[PerspectiveCamera, ...]:
    """The pinhole cameras a perspective spec states: rotation and position per view as recorded (not
    re-framed), focal from ``fov_deg`` and the image size. InputError naming the first view without one.

    Parameters
    ----------
    spec : ProtocolSpec
        A perspective spec with a position (world Å) for every view.

    Returns
    -------
    tuple of PerspectiveCamera
        One per view, in the protocol's order; principal point at the image centre.

    Raises
    ------
    InputError
        ``spec`` is not perspective (field ``protocol.kind``), or a view has no position (field
        ``views[NAME].position``).
    """
    _need_perspective(spec)
    check_positions(spec, every=True)
    f = focal_px(spec.fov_deg, spec.width, spec.height)
    return tuple(PerspectiveCamera(rotation=v.rotation, position=np.asarray(p, dtype=np.float64), focal=f,
                                   width=spec.width, height=spec.height, name=v.name)
                 for v, p in zip(spec.protocol.views, spec.positions, strict=True))


def check_positions(spec: ProtocolSpec, *, every: bool = False) -> None:
    """InputError naming the first view without a position when some views have one and others not
    (``every``: when any view has none).

    Parameters
    ----------
    spec : ProtocolSpec
        The protocol as read (its per-view ``positions``, world Å or None).
    every : bool, default False
        Require a position for every view.

    Raises
    ------
    InputError
        As above (field ``views[NAME].position``).
    """
    have = [p is not None for p in spec.positions]
    if all(have) or (not every and not any(have)):
        return
    name = spec.protocol.views[have.index(False)].name
    raise InputError(f"view {name!r} has no camera position (a perspective protocol gives a position for every "
                     "view or for none)", source=spec.source, field=f"views[{name}].position")


def bounding_sphere(points) -> tuple[np.ndarray, float]:
    """(centre of the bounding box, largest distance of a point from it), Å."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(pts) == 0:
        raise InputError("nothing to place cameras around: no points", field="structure")
    centre = 0.5 * (pts.min(axis=0) + pts.max(axis=0))
    return centre, float(np.linalg.norm(pts - centre, axis=1).max())


def framed_cameras(spec: ProtocolSpec, points, *, margin_px: float = DEFAULT_MARGIN_PX,
                   pad: float = 0.0) -> tuple[PerspectiveCamera, ...]:
    """The framing rule (module docstring) for every view of a perspective spec, positions ignored.

    Parameters
    ----------
    spec : ProtocolSpec
        A perspective spec: its views' rotations, ``fov_deg`` (degrees) and image size (px).
    points : array_like of float, shape (n, 3)
        The drawn points, world Å.
    margin_px : float, default DEFAULT_MARGIN_PX
        Margin kept free on each side of the smaller image side, px.
    pad : float, default 0.0
        Å added to the bounding sphere's radius.

    Returns
    -------
    tuple of PerspectiveCamera
        One per view, in the protocol's order, all at one distance from the points' bounding-box centre.

    Raises
    ------
    InputError
        ``spec`` is not perspective (field ``protocol.kind``) or there are no points (field ``structure``).
    """
    _need_perspective(spec)
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    bounding_sphere(pts)  # refuses no points
    return tuple(fit_perspective(v.rotation, pts, width=spec.width, height=spec.height, fov_deg=spec.fov_deg,
                                 margin_px=margin_px, pad=pad, name=v.name) for v in spec.protocol.views)


def check_placement(cameras, points, *, source: str | None = None) -> None:
    """InputError naming the view and field when a camera lies inside the points' bounding sphere or a point
    lies at or behind a camera's image plane (module docstring).

    Parameters
    ----------
    cameras : iterable of PerspectiveCamera
        The pinholes (``position`` world Å, ``rotation`` world→camera).
    points : array_like of float, shape (n, 3)
        The drawn points, world Å.
    source : str, optional
        The protocol file, named in the error.

    Raises
    ------
    InputError
        A camera is inside the points' bounding sphere, or a point is at depth ≤ 0 Å (field
        ``views[NAME].position``); no points (field ``structure``).
    """
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    centre, radius = bounding_sphere(pts)
    for cam in cameras:
        where = f"views[{cam.name}].position"
        dist = float(np.linalg.norm(np.asarray(cam.position) - centre))
        if dist <= radius * (1.0 + INSIDE_RTOL):
            raise InputError(f"camera {cam.name!r} at {_xyz(cam.position)} Å lies inside the drawn points' bounding "
                             f"sphere (centre {_xyz(centre)}, radius {radius:.4g} Å; distance {dist:.4g} Å)",
                             source=source, field=where)
        depth = -(pts - np.asarray(cam.position)) @ np.asarray(cam.rotation)[2]
        k = int(np.argmin(depth))
        if not depth[k] > 0:
            raise InputError(f"camera {cam.name!r}: the drawn point {_xyz(pts[k])} Å is at depth {depth[k]:.4g} Å, "
                             "at or behind the camera plane (the camera must look at the structure)",
                             source=source, field=where)


def spec_cameras(spec: ProtocolSpec, points, *, margin_px: float = DEFAULT_MARGIN_PX,
                 pad: float = 0.0) -> tuple[PerspectiveCamera, ...]:
    """The perspective cameras of ``spec`` for the drawn ``points`` (Å, world): placed as stated when every
    view has a position, framed by the rule when none has; then checked (``check_placement``).

    Parameters
    ----------
    spec : ProtocolSpec
        A perspective spec: positions (world Å) for every view or for none.
    points : array_like of float, shape (n, 3)
        The drawn points, world Å.
    margin_px : float, default DEFAULT_MARGIN_PX
        Margin of the framing rule, px (unused for placed cameras).
    pad : float, default 0.0
        Å added to the bounding sphere's radius by the framing rule (unused for placed cameras).

    Returns
    -------
    tuple of PerspectiveCamera
        One per view, in the protocol's order.

    Raises
    ------
    InputError
        ``spec`` is not perspective, some views have positions and others not, or the placement check fails
        (:func:`check_placement`).
    """
    _need_perspective(spec)
    check_positions(spec)
    if spec.positions and spec.positions[0] is not None:
        cams = placed_cameras(spec)
    else:
        cams = framed_cameras(spec, points, margin_px=margin_px, pad=pad)
    check_placement(cams, points, source=spec.source)
    return cams


def _xyz(p) -> str:
    return "(" + ", ".join(f"{float(x):.4g}" for x in p) + ")"
