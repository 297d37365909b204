"""Framing: fit a structure (and its drawn cell box) into a W×H image with one scale for both axes, centred,
with a margin — the study's "letterbox". Returns cameras; all lengths Å, image sizes px."""

from __future__ import annotations

import numpy as np

from viewcert.cameras.camera import OrthographicCamera, PerspectiveCamera, check_rotation
from viewcert.errors import CameraError
from viewcert.structures import Structure

DEFAULT_SIZE = 768
DEFAULT_MARGIN_PX = 16.0


_UNIT_CORNERS = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], dtype=np.float64)
_UNIT_CORNERS.setflags(write=False)


def box_corners(lattice: np.ndarray, reps=(1, 1, 1)) -> np.ndarray:
    """The 8 corners (Å) of the box spanned by reps[i] × lattice rows, origin at 0."""
    return (_UNIT_CORNERS * np.asarray(reps, dtype=np.float64)) @ np.asarray(lattice, dtype=np.float64)


def framing_points(structure: Structure, *, tiling=(1, 1, 1), draw_box: bool = True) -> np.ndarray:
    """Points the framing must contain: the drawn atoms (tiled when periodic) and the drawn box corners."""
    if structure.is_periodic:
        shown = structure.supercell(tuple(tiling)) if tuple(tiling) != (1, 1, 1) else structure
        pts = shown.positions
        if draw_box:
            pts = np.concatenate([pts, box_corners(structure.lattice, tiling)])
        return pts
    return structure.positions


def fit_orthographic(
    rotation: np.ndarray,
    points: np.ndarray,
    *,
    width: int = DEFAULT_SIZE,
    height: int = DEFAULT_SIZE,
    margin_px: float = DEFAULT_MARGIN_PX,
    pad: float = 0.0,
    name: str = "",
) -> OrthographicCamera:
    """Orthographic camera whose image holds every point (each grown by ``pad`` Å, e.g. the largest drawn
    radius) inside a margin of ``margin_px``; one scale for both axes, bounding box centred."""
    check_rotation(rotation)
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(pts) == 0:
        raise CameraError("nothing to frame: no points")
    if width <= 2 * margin_px or height <= 2 * margin_px:
        raise CameraError(f"margin {margin_px} px leaves no room in a {width}×{height} image")
    cam = pts @ np.asarray(rotation).T
    lo = cam.min(axis=0) - pad
    hi = cam.max(axis=0) + pad
    span = np.maximum(hi[:2] - lo[:2], 1e-9)
    scale = min((width - 2 * margin_px) / span[0], (height - 2 * margin_px) / span[1])
    mid = 0.5 * (lo + hi)
    center = mid @ np.asarray(rotation)  # camera → world for a row vector
    return OrthographicCamera(rotation=rotation, center=center, scale=scale, width=width, height=height, name=name)


def fit_orthographic_common(
    rotations,
    points: np.ndarray,
    *,
    names=None,
    width: int = DEFAULT_SIZE,
    height: int = DEFAULT_SIZE,
    margin_px: float = DEFAULT_MARGIN_PX,
    pad: float = 0.0,
) -> tuple[OrthographicCamera, ...]:
    """Orthographic cameras sharing one Å-per-pixel scale and one centre, like a molecular viewer turning a
    molecule in place: the centre is the 3D bounding-box centre of the points; the scale is the largest for
    which every view holds every point (grown by ``pad`` Å) inside the margin."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(pts) == 0:
        raise CameraError("nothing to frame: no points")
    if width <= 2 * margin_px or height <= 2 * margin_px:
        raise CameraError(f"margin {margin_px} px leaves no room in a {width}×{height} image")
    centre = 0.5 * (pts.min(axis=0) + pts.max(axis=0))
    rots = [np.asarray(r, dtype=np.float64) for r in rotations]
    scale = np.inf
    for r in rots:
        check_rotation(r)
        half = np.abs((pts - centre) @ r.T).max(axis=0)[:2] + pad
        half = np.maximum(half, 1e-9)
        scale = min(scale, (width - 2 * margin_px) / (2 * half[0]), (height - 2 * margin_px) / (2 * half[1]))
    names = list(names) if names is not None else [""] * len(rots)
    return tuple(OrthographicCamera(rotation=r, center=centre, scale=scale, width=width, height=height, name=n)
                 for r, n in zip(rots, names, strict=True))


def fit_perspective(
    rotation: np.ndarray,
    points: np.ndarray,
    *,
    width: int = DEFAULT_SIZE,
    height: int = DEFAULT_SIZE,
    fov_deg: float = 30.0,
    margin_px: float = DEFAULT_MARGIN_PX,
    pad: float = 0.0,
    name: str = "",
) -> PerspectiveCamera:
    """Pinhole camera looking along −R[2] at the points' bounding-sphere centre, far enough that the sphere
    (radius + pad) fits the smaller image side minus the margin; ``fov_deg`` is that side's field of view."""
    check_rotation(rotation)
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(pts) == 0:
        raise CameraError("nothing to frame: no points")
    if not 0 < fov_deg < 180:
        raise CameraError(f"field of view must be in (0, 180) degrees, got {fov_deg}")
    centre = 0.5 * (pts.min(axis=0) + pts.max(axis=0))
    radius = float(np.linalg.norm(pts - centre, axis=1).max()) + pad
    radius = max(radius, 1e-6)
    side = min(width, height)
    focal = 0.5 * side / np.tan(np.radians(0.5 * fov_deg))
    usable = 0.5 * side - margin_px
    if usable <= 0:
        raise CameraError(f"margin {margin_px} px leaves no room in a {width}×{height} image")
    # sphere of radius r at distance D subtends r/sqrt(D²−r²) in tan; need focal·tan ≤ usable
    t = usable / focal
    distance = radius * np.sqrt(1.0 + 1.0 / (t * t))
    position = centre + distance * np.asarray(rotation)[2]
    return PerspectiveCamera(rotation=rotation, position=position, focal=focal, width=width, height=height, name=name)


def fit_views(rotations, points: np.ndarray, *, names=None, kind: str = "orthographic", scale: str = "per-view",
              width: int = DEFAULT_SIZE, height: int = DEFAULT_SIZE, margin_px: float = DEFAULT_MARGIN_PX,
              pad: float = 0.0, fov_deg: float = 30.0, backoff: float = 0.0) -> tuple:
    """The framing rule for one set of view rotations on world points (Å): orthographic letterbox per view
    (``fit_orthographic``) or at one common scale and centre (``fit_orthographic_common``), or pinholes
    (``fit_perspective``) moved back by ``backoff`` Å along their view axes. ``cameras.policy.frame`` is
    the entry point that chooses these arguments from a protocol, a structure and a framing policy."""
    rots = [np.asarray(r, dtype=np.float64) for r in rotations]
    names = list(names) if names is not None else [""] * len(rots)
    if scale not in ("per-view", "common"):
        raise CameraError(f"scale must be 'per-view' or 'common', got {scale!r}")
    kw = {"width": width, "height": height, "margin_px": margin_px, "pad": pad}
    if kind == "orthographic" and scale == "common":
        return fit_orthographic_common(rots, points, names=names, **kw)
    if kind == "orthographic":
        return tuple(fit_orthographic(r, points, name=n, **kw) for r, n in zip(rots, names, strict=True))
    if kind != "perspective":
        raise CameraError(f"camera kind must be 'orthographic' or 'perspective', got {kind!r}")
    cams = []
    for r, n in zip(rots, names, strict=True):
        cam = fit_perspective(r, points, fov_deg=fov_deg, name=n, **kw)
        if backoff:
            cam = PerspectiveCamera(rotation=cam.rotation, position=cam.position + backoff * cam.rotation[2],
                                    focal=cam.focal, width=cam.width, height=cam.height, name=cam.name)
        cams.append(cam)
    return tuple(cams)


#: the sidecar framing record's method strings (``framing_record``): one vocabulary for every image writer
FRAMING_METHODS = {
    "crystal": "letterbox: drawn atoms grown by the largest drawn radius, plus the supercell box; one scale for "
               "both axes, centred",
    "molecule": "molecule: drawn atoms grown by the largest drawn radius",
    "perspective": "perspective protocol file: pinholes at its positions (world Å, the drawn structure's frame), "
                   "or framed on the drawn points by viewcert.cameras.placement's rule; the certificate's cameras",
}


def framing_record(policy, structure: Structure, *, perspective: bool) -> dict:
    """How an image's cameras were framed, as its sidecar records it: the method (``FRAMING_METHODS``), and
    for orthographic views the margin (px) and the pad (Å, the largest drawn radius, 6 decimals) of
    ``policy`` (a ``cameras.policy.FramingPolicy``); crystals: the tiling; molecules: the scale ("common",
    "per-view")."""
    tiling = [int(t) for t in policy.tiling]
    if perspective:
        return {"method": FRAMING_METHODS["perspective"], **({"tiling": tiling} if structure.is_periodic else {})}
    pad = round(float(policy.pad_for(structure)), 6)
    rec = {"method": FRAMING_METHODS["crystal" if structure.is_periodic else "molecule"],
           "margin_px": policy.margin_px, "pad_angstrom": 0.0 if pad == 0 else pad}
    if structure.is_periodic:
        rec["tiling"] = tiling
    else:
        rec["scale"] = policy.molecule_scale
    return rec
