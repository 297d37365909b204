"""Forward renderer: a numba ray-caster producing, per view, an RGB image, an exact atom-ID buffer and a
depth buffer.

Scene (``build_scene``): atoms as spheres (radius = style.radius_scale × covalent radius, or one given
radius, Å), bonds as capped cylinders split into half-bonds coloured by their atom (``render.bonds``), cell
or supercell edges as thin screen-space lines of ``edge_px`` px, optionally coloured by axis a/b/c.

Buffers (``render``): pixel (row i, col j) is sampled at its centre (j + 0.5, i + 0.5) by one ray
(orthographic: parallel to the view direction; perspective: through the pinhole), in the camera frame of
docs/conventions.md, tested analytically against every primitive that can reach it. The nearest surface
along the ray wins (ties: the lower primitive index, spheres first). ``atom_id[i, j]`` holds the drawn atom
index 0..N−1 of the sphere seen there, or a negative code:

    ID_BACKGROUND = −1, ID_BOND = −2 (any bond cylinder), ID_EDGE = −3 (any cell edge line).

Drawn atom ``k = tile × n_cell + cell_index`` (``observe.project.drawn_atoms``: tiles in C order of the
tiling, a slowest). ``depth[i, j]`` is the hit depth in Å along the view direction (the camera's depth:
orthographic from the plane through ``camera.center``, perspective from the pinhole), +inf on background.

How the rays are organised (the results do not depend on it): pass 1 visits, primitive by primitive in
ascending order, the pixel centres of each primitive's row spans (spheres: the exact chord ± 1 px; bonds
and lines: the strip around their projected axis) and keeps, per pixel, the strictly nearest hit — the
same per-ray test and tie rule as tracing every pixel through every primitive, without visiting pixels a
primitive cannot reach. Rows are split into bands (processed in parallel with ``parallel=True``).

Colour: ``study`` style = flat discs with an outline ring of ``outline_px`` px; otherwise Lambert + ambient
(light fixed in the camera frame). Anti-aliasing is deterministic supersampling, adaptive: a pixel whose
surface class (primitive, outline flag) differs from a 4-neighbour's where that boundary can cross it, or
that lies within half-width + 0.75 px of an edge line, gets the mean colour of an ``supersample`` ×
``supersample`` grid of rays at (j + (b + ½)/ss, i + (a + ½)/ss); every other pixel the colour of its
centre ray (``adaptive=False``: every pixel of a non-empty screen tile is supersampled). Pass 2 works on
``tile`` × ``tile`` px screen tiles, with the primitives binned per tile. 8-bit output =
round(255 × colour). No randomness, no fastmath: same inputs → same bytes, whatever the thread count.

Kernels are ``@njit(cache=True)`` over contiguous float64/int64 arrays; hot loops call scalar helpers only
(routines taking arrays work on whole batches, see ``_trace_groups``). Layout: ``scene`` (what is drawn),
``_kernels_trace`` (per-ray tests, batch trace and shade), ``_kernels_pass1`` (tile binning, z-buffer, IDs
and centre colours), ``_kernels_pass2`` (adaptive anti-aliasing, drivers), this module (the API: primitive
table, scratch buffers, ``render``, framing).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from viewcert.cameras.camera import Camera, OrthographicCamera, PerspectiveCamera
from viewcert.cameras.policy import FramingPolicy, frame
from viewcert.errors import CameraError, InputError
from viewcert.render._kernels_pass1 import _bin_primitives
from viewcert.render._kernels_pass2 import _render_kernel, _render_serial
from viewcert.render._kernels_trace import _silhouette_counts, _visible_counts
from viewcert.render.palette import Style, get_style
from viewcert.render.scene import (
    ID_BACKGROUND,
    ID_BOND,
    ID_CODES,
    ID_EDGE,
    KIND_CYLINDER,
    KIND_LINE,
    KIND_SPHERE,
    Scene,
    box_edges,
    build_scene,
)
from viewcert.structures import Structure

__all__ = ["DEFAULT_SUPERSAMPLE", "DEFAULT_TILE", "ID_BACKGROUND", "ID_BOND", "ID_CODES", "ID_EDGE", "RenderResult",
           "Scene", "box_edges", "build_scene", "drawn_policy", "frame_cameras", "prepare", "render", "render_structure",
           "silhouette_pixel_counts", "visible_pixel_counts"]

BBOX_SLACK_PX = 0.01  # early-out boxes are grown by this much so rounding never rejects a true hit
DEFAULT_SUPERSAMPLE = 3
DEFAULT_TILE = 16


@dataclass(frozen=True, eq=False)
class RenderResult:
    """One rendered view: rgb (H, W, 3) uint8, atom_id (H, W) int32 (codes in the module docstring),
    depth (H, W) float64 Å (+inf on background), the camera and the scene it came from."""

    rgb: np.ndarray | None
    atom_id: np.ndarray
    depth: np.ndarray
    camera: Camera
    scene: Scene
    supersample: int = DEFAULT_SUPERSAMPLE

    def pixel_counts(self) -> np.ndarray:
        """Visible pixel count per drawn atom (N,)."""
        ids = self.atom_id.ravel()
        return np.bincount(ids[ids >= 0], minlength=self.scene.n_atoms)[: self.scene.n_atoms]


def _camera_params(camera: Camera) -> tuple[bool, float, float, float, float]:
    if isinstance(camera, OrthographicCamera):
        return False, camera.scale, 1.0, 0.5 * camera.width, 0.5 * camera.height
    if isinstance(camera, PerspectiveCamera):
        return True, 1.0, camera.focal, camera.cx, camera.cy
    raise CameraError(f"cannot render with a {type(camera).__name__}")


def _project_cam(cam_xyz: np.ndarray, camera: Camera) -> tuple[np.ndarray, np.ndarray]:
    """(uv px, depth Å) of camera-frame points."""
    persp, scale, focal, pcx, pcy = _camera_params(camera)
    depth = -cam_xyz[:, 2]
    uv = np.empty((len(cam_xyz), 2))
    if persp:
        uv[:, 0] = pcx + focal * cam_xyz[:, 0] / depth
        uv[:, 1] = pcy - focal * cam_xyz[:, 1] / depth
    else:
        uv[:, 0] = pcx + scale * cam_xyz[:, 0]
        uv[:, 1] = pcy - scale * cam_xyz[:, 1]
    return uv, depth


_CUBE = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], dtype=np.float64)


def _ball_bbox(c: np.ndarray, r: np.ndarray, camera: Camera) -> np.ndarray:
    """Conservative px boxes (n, 4) [umin, umax, vmin, vmax] of balls (camera frame centres c, radii r)."""
    if isinstance(camera, OrthographicCamera):
        uv, _ = _project_cam(c, camera)
        rp = camera.scale * r
        return np.stack([uv[:, 0] - rp, uv[:, 0] + rp, uv[:, 1] - rp, uv[:, 1] + rp], axis=1)
    pts = (c[:, None, :] + r[:, None, None] * _CUBE[None]).reshape(-1, 3)
    uv, _ = _project_cam(pts, camera)
    uv = uv.reshape(len(c), 8, 2)
    return np.stack([uv[..., 0].min(1), uv[..., 0].max(1), uv[..., 1].min(1), uv[..., 1].max(1)], axis=1)


def _check_in_front(camera: Camera, depth: np.ndarray, what: str) -> None:
    if isinstance(camera, PerspectiveCamera) and len(depth) and float(depth.min()) <= 1e-6:
        raise CameraError(f"camera {camera.name!r}: some {what} reach the camera plane or lie behind it")


def _sphere_rows(rows: np.ndarray, scene: Scene, camera: Camera, to_cam) -> None:
    """Fill the atoms' rows of the primitive table: bbox, camera-frame centre, radius, squared inner radius
    of the flat style's outline ring (Å²)."""
    persp, scale, focal, _, _ = _camera_params(camera)
    st = scene.style
    n = scene.n_atoms
    sc = to_cam(scene.sphere_centres)
    r = scene.sphere_radii
    _check_in_front(camera, -sc[:, 2] - r, "atoms")
    # squared inner radius of the outline ring (Å): r − outline_px × (Å per px at the centre depth)
    px_size = (-sc[:, 2] / focal) if persp else np.full(n, 1.0 / scale)
    r_in = np.maximum(r - st.outline_px * px_size, 0.0) if st.shading == "flat" and st.outline_px > 0 else r
    rows[:, 0] = KIND_SPHERE
    rows[:, 1:5] = _ball_bbox(sc, r, camera) if n else np.zeros((0, 4))
    rows[:, 5:8] = sc
    rows[:, 8] = r
    rows[:, 9] = r_in * r_in


def _cylinder_rows(rows: np.ndarray, scene: Scene, camera: Camera, to_cam) -> None:
    """Fill the half-bonds' rows: the union of their end balls' boxes, camera-frame ends, radius (Å)."""
    c0 = to_cam(scene.cylinder_starts)
    c1 = to_cam(scene.cylinder_ends)
    rc = scene.cylinder_radii
    _check_in_front(camera, np.concatenate([-c0[:, 2] - rc, -c1[:, 2] - rc]), "bonds")
    b0 = _ball_bbox(c0, rc, camera)
    b1 = _ball_bbox(c1, rc, camera)
    rows[:, 0] = KIND_CYLINDER
    rows[:, 1] = np.minimum(b0[:, 0], b1[:, 0])
    rows[:, 2] = np.maximum(b0[:, 1], b1[:, 1])
    rows[:, 3] = np.minimum(b0[:, 2], b1[:, 2])
    rows[:, 4] = np.maximum(b0[:, 3], b1[:, 3])
    rows[:, 5:8] = c0
    rows[:, 8:11] = c1
    rows[:, 11] = rc


def _line_rows(rows: np.ndarray, scene: Scene, camera: Camera, to_cam) -> None:
    """Fill the cell edges' rows: px box widened by the half width, projected ends (px) and depths (Å)."""
    hw = 0.5 * float(scene.line_px)
    uv0, d0 = _project_cam(to_cam(scene.line_starts), camera)
    uv1, d1 = _project_cam(to_cam(scene.line_ends), camera)
    _check_in_front(camera, np.concatenate([d0, d1]), "cell edges")
    rows[:, 0] = KIND_LINE
    rows[:, 1] = np.minimum(uv0[:, 0], uv1[:, 0]) - hw
    rows[:, 2] = np.maximum(uv0[:, 0], uv1[:, 0]) + hw
    rows[:, 3] = np.minimum(uv0[:, 1], uv1[:, 1]) - hw
    rows[:, 4] = np.maximum(uv0[:, 1], uv1[:, 1]) + hw
    rows[:, 5:7] = uv0
    rows[:, 7] = d0
    rows[:, 8:10] = uv1
    rows[:, 10] = d1
    rows[:, 11] = hw


def _style_params(st: Style) -> np.ndarray:
    """The style vector: flat flag, outline colour, 0, ambient, diffuse, background, unit light direction."""
    light = np.asarray(st.light, dtype=np.float64)
    light = light / np.linalg.norm(light)
    return np.array([1.0 if st.shading == "flat" else 0.0, *st.outline_colour, 0.0, st.ambient, st.diffuse,
                     *st.background, *light], dtype=np.float64)


def prepare(scene: Scene, camera: Camera) -> dict:
    """Kernel inputs: the camera-frame primitive table ``prim`` (see the kernel section), ID codes,
    colours, camera and style parameter vectors (all contiguous)."""
    prim, cam = _primitives(scene, camera)
    n, m, nl = scene.n_atoms, len(scene.cylinder_starts), len(scene.line_starts)
    code = np.concatenate([np.arange(n), np.full(m, ID_BOND), np.full(nl, ID_EDGE)]).astype(np.int64)
    col = np.ascontiguousarray(np.concatenate([scene.sphere_colours, scene.cylinder_colours, scene.line_colours])
                               .reshape(-1, 3), dtype=np.float64)
    return dict(prim=prim, code=code, col=col, cam=cam, params=_style_params(scene.style))


def _primitives(scene: Scene, camera: Camera) -> tuple[np.ndarray, np.ndarray]:
    """The geometry of ``prepare``: the camera-frame primitive table ``prim`` (P, 12) and the camera vector
    ``cam`` (7,) (layouts: ``_kernels_trace``), what the ray tests read."""
    persp, scale, focal, pcx, pcy = _camera_params(camera)
    origin = camera.position if persp else camera.center
    rot = camera.rotation

    def to_cam(xyz: np.ndarray) -> np.ndarray:  # world Å -> camera frame Å
        return (xyz - origin) @ rot.T

    n = scene.n_atoms
    m = len(scene.cylinder_starts)
    nl = len(scene.line_starts)
    prim = np.zeros((n + m + nl, 12), dtype=np.float64)
    _sphere_rows(prim[:n], scene, camera, to_cam)
    if m:
        _cylinder_rows(prim[n:n + m], scene, camera, to_cam)
    if nl:
        _line_rows(prim[n + m:], scene, camera, to_cam)
    prim[:, 1] -= BBOX_SLACK_PX
    prim[:, 3] -= BBOX_SLACK_PX
    prim[:, 2] += BBOX_SLACK_PX
    prim[:, 4] += BBOX_SLACK_PX
    cam = np.array([1.0 if persp else 0.0, camera.width, camera.height, scale, focal, pcx, pcy], dtype=np.float64)
    return prim, cam


_SCRATCH = threading.local()


def _scratch(h: int, w: int) -> np.ndarray:
    """A per-thread int32 work buffer of shape (h, w), reused across calls (its contents never leak into a
    result: every pixel is written before it is read)."""
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None or buf.shape != (h, w):
        buf = np.empty((h, w), dtype=np.int32)
        _SCRATCH.buf = buf
    return buf


def render(
    scene: Scene,
    camera: Camera,
    *,
    supersample: int = DEFAULT_SUPERSAMPLE,
    tile: int = DEFAULT_TILE,
    rgb: bool = True,
    parallel: bool = False,
    adaptive: bool = True,
) -> RenderResult:
    """Ray-cast ``scene`` through ``camera``: RGB (unless ``rgb=False``), atom-ID and depth buffers.

    Parameters
    ----------
    scene : Scene
        What to draw, world Å.
    camera : OrthographicCamera or PerspectiveCamera
        The view; its width × height (px) is the image size.
    supersample : int, default 3
        Samples per pixel side (RGB edges), ≥ 1.
    tile : int, default 16
        Screen tile side, px, ≥ 1.
    rgb : bool, default True
        Shade the RGB image; False: ID and depth buffers only.
    parallel : bool, default False
        Run row bands and screen tiles on numba's threads (same bytes either way; worth it for single large
        images on an idle machine, not inside a pool of worker processes, where the threads of every process
        compete).
    adaptive : bool, default True
        False supersamples every pixel of every non-empty tile (reference quality, slower).

    Returns
    -------
    RenderResult
        rgb (H, W, 3) uint8 (None when ``rgb=False``), atom_id (H, W) int32, depth (H, W) float64 Å (+inf on
        background); row 0 at the top, pixel (row i, col j) centred at (u, v) = (j + 0.5, i + 0.5).

    Raises
    ------
    InputError
        ``supersample`` or ``tile`` is not an integer ≥ 1 (the field names it).
    """
    if int(supersample) != supersample or supersample < 1:
        raise InputError(f"supersample must be an integer ≥ 1, got {supersample}", field="supersample")
    if int(tile) != tile or tile < 1:
        raise InputError(f"tile must be an integer ≥ 1, got {tile}", field="tile")
    k = prepare(scene, camera)
    w, h = int(camera.width), int(camera.height)
    if rgb and supersample > 1:
        starts, items = _bin_primitives(k["prim"], float(tile), (w + tile - 1) // tile, (h + tile - 1) // tile)
    else:
        starts, items = np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    out_rgb = np.empty((h, w, 3), dtype=np.uint8) if rgb else np.empty((1, 1, 3), dtype=np.uint8)
    ids = np.empty((h, w), dtype=np.int32)
    depth = np.empty((h, w), dtype=np.float64)
    work = _scratch(h, w)  # primitive index per pixel, then (rows already shaded) the surface class
    kernel = _render_kernel if parallel else _render_serial
    kernel(k["prim"], k["code"], k["col"], k["cam"], k["params"], int(supersample), int(tile), bool(rgb), starts,
           items, out_rgb, ids, depth, work, work, not adaptive)
    return RenderResult(out_rgb if rgb else None, ids, depth, camera, scene, int(supersample))


def drawn_policy(
    style: str | Style = "study",
    *,
    tiling=(1, 1, 1),
    width: int = 768,
    height: int = 768,
    kind: str | None = None,
    radius_scale: float | None = None,
    radius: float | None = None,
    draw_box: bool = True,
    molecule_scale: str = "common",
) -> FramingPolicy:
    """The framing policy of images drawn in ``style``: every framed point grown by the largest drawn atom
    radius (the style's, or ``radius``/``radius_scale`` overriding it), the drawn box (crystals), crystals
    per view, molecules at ``molecule_scale``; ``width``×``height`` px (a perspective protocol file keeps its
    own). certify uses the same policy with ``frame_on = "drawn"`` (``CertifyConfig.framing_policy``)."""
    st = get_style(style, radius_scale=radius_scale, radius=radius)
    return FramingPolicy(atom_radius_scale=st.radius_scale if st.radius is None else None, atom_radius=st.radius,
                         molecule_scale=molecule_scale, tiling=tuple(tiling), draw_box=draw_box, kind=kind,
                         width=width, height=height)


def frame_cameras(structure: Structure, protocol="render-ceiling-5", **policy) -> tuple[Camera, ...]:
    """Cameras of a protocol (a name, a .toml/.json file, a Protocol, ProtocolSpec or ResolvedProtocol) for
    ``structure`` as drawn: ``viewcert.cameras.policy.frame`` under ``drawn_policy(**policy)`` (keywords
    style, tiling, width, height, kind, radius_scale, radius, draw_box, molecule_scale). ``kind``: None = the
    protocol's own; a perspective protocol file gives its pinholes exactly as certify places them, and
    ``kind="orthographic"`` with such a file is an InputError.

    Parameters
    ----------
    structure : Structure
        Positions Cartesian Å; a crystal's lattice rows a, b, c (Å).
    protocol : str, path, Protocol, ProtocolSpec or ResolvedProtocol, default "render-ceiling-5"
        The views.
    **policy
        Keywords of :func:`drawn_policy`: ``style``, ``tiling``, ``width`` and ``height`` (px), ``kind``,
        ``radius_scale``, ``radius`` (Å), ``draw_box``, ``molecule_scale``.

    Returns
    -------
    tuple of OrthographicCamera or PerspectiveCamera
        One per view, in the protocol's order.

    Raises
    ------
    InputError
        ``kind="orthographic"`` with a perspective protocol file, an unknown style, or a protocol that cannot
        be resolved.
    CameraError
        An unknown protocol name.
    """
    return frame(protocol, structure, drawn_policy(**policy))


def render_structure(
    structure: Structure,
    cameras,
    *,
    style: str | Style = "study",
    tiling=(1, 1, 1),
    radius_scale: float | None = None,
    radius: float | None = None,
    bonds: bool | None = None,
    edges: str = "supercell",
    rgb: bool = True,
    supersample: int = DEFAULT_SUPERSAMPLE,
) -> list[RenderResult]:
    """Build the scene once and render it through every camera.

    Parameters
    ----------
    structure : Structure
        Positions Cartesian Å; a crystal's lattice rows a, b, c (Å).
    cameras : iterable of OrthographicCamera or PerspectiveCamera
        The views.
    style : str or Style, default "study"
        The drawing style (:func:`build_scene`).
    tiling : tuple of int, (na, nb, nc), default (1, 1, 1)
        Cell repetitions drawn (crystals).
    radius_scale : float, optional
        Atom radius = this × covalent radius (Å), overriding the style.
    radius : float, optional
        One atom radius, Å, overriding the style.
    bonds : bool, optional
        Draw half-bonds, overriding the style.
    edges : str, default "supercell"
        Cell edges drawn (:func:`build_scene`).
    rgb : bool, default True
        Shade the RGB image; False: ID and depth buffers only.
    supersample : int, default 3
        Samples per pixel side, ≥ 1.

    Returns
    -------
    list of RenderResult
        One per camera, in order (:func:`render`).

    Raises
    ------
    InputError
        As :func:`build_scene` and :func:`render`.
    """
    scene = build_scene(structure, style, tiling=tiling, radius_scale=radius_scale, radius=radius, bonds=bonds,
                        edges=edges)
    return [render(scene, cam, supersample=supersample, rgb=rgb) for cam in cameras]


def silhouette_pixel_counts(scene: Scene, camera: Camera) -> np.ndarray:
    """(N,) number of pixel centres each atom would cover were it drawn alone (its silhouette)."""
    k = prepare(scene, camera)
    return _silhouette_counts(k["prim"], scene.n_atoms, k["cam"])


def visible_pixel_counts(scene: Scene, camera: Camera, *, limit: int | None = None) -> np.ndarray:
    """(N,) the pixel centres showing each drawn atom — ``render(scene, camera, rgb=False).pixel_counts()``,
    counted without the image: each atom's own pixels are traced through the primitives of their screen tile
    (``_kernels_trace._visible_counts``: the renderer's per-ray test and tie rule), each count stopping at
    ``limit`` (None: the whole count).

    Parameters
    ----------
    scene : Scene
        What is drawn, world Å.
    camera : OrthographicCamera or PerspectiveCamera
        The view; its width × height (px) is the image size.
    limit : int, optional
        Stop counting an atom's pixels at this many (≥ 1); None: count them all.

    Returns
    -------
    ndarray of int64, (N,)
        min(visible pixel count, ``limit``) per drawn atom.

    Raises
    ------
    InputError
        ``limit`` is not an integer ≥ 1 (field ``limit``).
    """
    if limit is not None and (int(limit) != limit or limit < 1):
        raise InputError(f"limit must be an integer ≥ 1, got {limit}", field="limit")
    prim, cam = _primitives(scene, camera)
    w, h = int(camera.width), int(camera.height)
    starts, items = _bin_primitives(prim, float(DEFAULT_TILE), (w + DEFAULT_TILE - 1) // DEFAULT_TILE,
                                    (h + DEFAULT_TILE - 1) // DEFAULT_TILE)
    return _visible_counts(prim, scene.n_atoms, cam, starts, items, DEFAULT_TILE, w * h if limit is None else int(limit))
