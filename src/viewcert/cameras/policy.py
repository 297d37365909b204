"""The one framing function: ``frame(protocol, structure, policy)`` turns a resolved protocol, a structure and
an immutable ``FramingPolicy`` into cameras. certify, render, the benchmark exports, tasks, design and the
CLI all call it (or ``frame_points`` for a cloud of points that is not a structure); nothing outside
``viewcert.cameras`` computes a camera's scale or origin.

Rule (lengths Å, sizes px; docs/conventions.md, "Framing"):

- the framed points are the drawn atoms (tiled by ``policy.tiling`` when periodic) and, for a crystal with
  ``draw_box``, the corners of the drawn cell box;
- each point is grown by ``pad_for(structure)`` = ``pad`` + the largest drawn atom radius when the policy
  names one (``atom_radius``, else ``atom_radius_scale`` × covalent radius of the structure's elements):
  the shipped images frame the drawn spheres, and so does certify's as-rendered ID buffer with that policy;
- orthographic: letterbox fit inside ``margin_px``, per view (crystals: ``crystal_scale``) or one common
  Å-per-pixel scale and bounding-box centre for every view (molecules: ``molecule_scale``);
- a perspective protocol places its pinholes as ``viewcert.cameras.placement`` states (its positions, or
  framed on the atom centres and box; no pad, so certify's pinholes do not depend on a drawing style), with
  its own fov and image size; ``kind = "perspective"`` with an orthographic protocol frames pinholes at
  ``fov_deg`` on the padded points, moved back by ``backoff`` Å along their view axes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from viewcert.cameras.camera import Camera, PerspectiveCamera
from viewcert.cameras.framing import DEFAULT_MARGIN_PX, DEFAULT_SIZE, fit_views, framing_points
from viewcert.cameras.placement import bounding_sphere, check_kind, framed_cameras, spec_cameras
from viewcert.cameras.protocol_files import ProtocolSpec
from viewcert.cameras.protocols import Protocol
from viewcert.cameras.resolve import ResolvedProtocol, resolve
from viewcert.elements import covalent_radii
from viewcert.errors import CameraError, InputError
from viewcert.structures import Structure

SCALES = ("per-view", "common")
KINDS = (None, "orthographic", "perspective")


@dataclass(frozen=True)
class FramingPolicy:
    """How cameras are framed (module docstring). pad (Å); atom_radius_scale / atom_radius: the drawn atom
    radius the framed points are grown by (None, None: atom centres); margin_px; crystal_scale and
    molecule_scale: "per-view" or "common"; tiling; draw_box (crystals); kind: None = the protocol's own;
    fov_deg (perspective framing of an orthographic protocol); backoff (Å, framed pinholes); width and
    height (px) of orthographic images (a perspective protocol keeps its own)."""

    pad: float = 0.0
    atom_radius_scale: float | None = None
    atom_radius: float | None = None
    margin_px: float = DEFAULT_MARGIN_PX
    crystal_scale: str = "per-view"
    molecule_scale: str = "common"
    tiling: tuple[int, int, int] = (1, 1, 1)
    draw_box: bool = True
    kind: str | None = None
    fov_deg: float = 30.0
    backoff: float = 0.0
    width: int = DEFAULT_SIZE
    height: int = DEFAULT_SIZE

    def __post_init__(self) -> None:
        object.__setattr__(self, "tiling", tuple(int(t) for t in self.tiling))
        for name in ("crystal_scale", "molecule_scale"):
            if getattr(self, name) not in SCALES:
                raise CameraError(f"scale must be 'per-view' or 'common', got {getattr(self, name)!r}")
        if self.kind not in KINDS:
            raise CameraError(f"camera kind must be 'orthographic' or 'perspective', got {self.kind!r}")
        for name in ("pad", "margin_px", "backoff"):
            v = float(getattr(self, name))
            if not math.isfinite(v) or v < 0:
                raise InputError(f"{name} must be a finite number ≥ 0, got {v}", field=f"framing.{name}")
            object.__setattr__(self, name, v)

    def pad_for(self, structure: Structure) -> float:
        """Å each framed point is grown by for ``structure``: ``pad`` plus its largest drawn atom radius."""
        if self.atom_radius is not None:
            return self.pad + float(self.atom_radius)
        if self.atom_radius_scale is not None:
            return self.pad + float((self.atom_radius_scale * covalent_radii(structure.numbers)).max())
        return self.pad

    def scale_for(self, periodic: bool) -> str:
        return self.crystal_scale if periodic else self.molecule_scale

    def to_dict(self) -> dict:
        d = asdict(self)
        d["tiling"] = list(self.tiling)
        return d


def frame(protocol, structure: Structure, policy: FramingPolicy = FramingPolicy()) -> tuple[Camera, ...]:
    """The cameras of ``protocol`` (anything ``resolve`` takes; a ``ResolvedProtocol`` is used as is) for
    ``structure`` under ``policy`` (module docstring).

    Parameters
    ----------
    protocol : str, path, Protocol, ProtocolSpec, dict or ResolvedProtocol
        The views: anything :func:`resolve` takes.
    structure : Structure
        The structure framed (positions world Å; a crystal's lattice rows a, b, c).
    policy : FramingPolicy, default FramingPolicy()
        Pad (Å), drawn atom radius, margin (px), scales, tiling, box, kind, fov (degrees), image size (px).

    Returns
    -------
    tuple of OrthographicCamera or PerspectiveCamera
        One camera per view, in the protocol's order.

    Raises
    ------
    InputError
        The protocol cannot be resolved (field ``protocol``), ``policy.kind`` contradicts a perspective
        protocol (field ``kind``), or a perspective placement fails (:func:`check_placement`).
    CameraError
        A protocol name is unknown, or a camera is degenerate.
    """
    rp = protocol if isinstance(protocol, ResolvedProtocol) else resolve(protocol)
    spec = rp.spec
    check_kind(spec, policy.kind)
    if spec.kind == "perspective":
        return spec_cameras(spec, framing_points(structure, tiling=policy.tiling), margin_px=policy.margin_px)
    pts = framing_points(structure, tiling=policy.tiling, draw_box=policy.draw_box)
    return frame_points(rp, pts, policy, periodic=structure.is_periodic, pad=policy.pad_for(structure))


def frame_points(protocol, points, policy: FramingPolicy = FramingPolicy(), *, periodic: bool = False,
                 pad: float | None = None) -> tuple[Camera, ...]:
    """The framing rule on a cloud of world points (Å) instead of a structure (e.g. a task's motion envelope):
    orthographic letterbox or pinholes (``policy.kind``), per view or common (``scale_for(periodic)``),
    grown by ``pad`` (default ``policy.pad``).

    Parameters
    ----------
    protocol : str, path, Protocol, ProtocolSpec, dict or ResolvedProtocol
        The views: anything :func:`resolve` takes (its rotations only; a perspective spec's positions are not
        used).
    points : array_like of float, shape (n, 3)
        The points framed, world Å.
    policy : FramingPolicy, default FramingPolicy()
        Kind, scale, margin (px), fov (degrees), backoff (Å) and image size (px).
    periodic : bool, default False
        Take the crystal scale (``policy.crystal_scale``) instead of the molecule scale.
    pad : float, optional
        Å each point is grown by; default ``policy.pad``.

    Returns
    -------
    tuple of OrthographicCamera or PerspectiveCamera
        One camera per view, in the protocol's order.

    Raises
    ------
    InputError
        The protocol cannot be resolved (field ``protocol``).
    CameraError
        A protocol name is unknown, or a camera is degenerate.
    """
    rp = protocol if isinstance(protocol, ResolvedProtocol) else resolve(protocol)
    views = rp.protocol.views
    return fit_views([v.rotation for v in views], np.asarray(points, dtype=np.float64).reshape(-1, 3),
                     names=[v.name for v in views], kind=policy.kind or "orthographic",
                     scale=policy.scale_for(periodic), width=policy.width, height=policy.height,
                     margin_px=policy.margin_px, pad=policy.pad if pad is None else float(pad),
                     fov_deg=policy.fov_deg, backoff=policy.backoff)


def common_pinholes(cameras, centre) -> tuple[PerspectiveCamera, ...]:
    """Pinholes at one distance from ``centre`` (Å, world): each looks at it along its own axis from the
    largest distance any of ``cameras`` has along its axis, with the first camera's focal length (every view
    then shows the centre's neighbourhood at one scale).

    Parameters
    ----------
    cameras : iterable of PerspectiveCamera
        The pinholes (``position`` world Å, ``rotation`` world→camera), at least one.
    centre : array_like of float, shape (3,)
        The point looked at, world Å.

    Returns
    -------
    tuple of PerspectiveCamera
        One per camera, same rotation, image size and name, at the common distance along ``rotation[2]``.
    """
    c0 = np.asarray(centre, dtype=np.float64)
    cams = tuple(cameras)
    dist = max(float(c.rotation[2] @ (c.position - c0)) for c in cams)
    return tuple(PerspectiveCamera(rotation=c.rotation, position=c0 + dist * c.rotation[2], focal=cams[0].focal,
                                   width=c.width, height=c.height, name=c.name) for c in cams)


def pinhole_positions(protocol: Protocol, points, *, distance: float | None = None, fov_deg: float = 30.0,
                      width: int = DEFAULT_SIZE, height: int = DEFAULT_SIZE, margin_px: float = DEFAULT_MARGIN_PX,
                      pad: float = 0.0) -> tuple[np.ndarray, ...]:
    """World positions (Å) of one pinhole per view of ``protocol`` around ``points``: at ``distance`` from the
    centre of their bounding box along each view's axis (InputError unless it exceeds the bounding-sphere
    radius + ``pad``), or, when ``distance`` is None, where the framing rule of ``viewcert.cameras.placement``
    puts them (the sphere fits the smaller image side minus ``margin_px`` at ``fov_deg``)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if distance is None:
        free = ProtocolSpec(protocol, kind="perspective", fov_deg=fov_deg, width=width, height=height)
        return tuple(c.position for c in framed_cameras(free, pts, margin_px=margin_px, pad=pad))
    centre, radius = bounding_sphere(pts)
    radius += pad
    if not (math.isfinite(distance) and distance > radius):
        raise InputError(f"must exceed the molecule's bounding-sphere radius {radius:.4g} Å (cameras "
                         f"outside the molecule), got {distance}", field="distance")
    return tuple(centre + float(distance) * np.asarray(v.rotation)[2] for v in protocol.views)
