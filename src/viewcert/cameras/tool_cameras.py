"""Another tool's camera, as the tool states it, resolved to one ``PixelProjection`` onto its image (issue 53).

``resolve_tool_camera(table, where=..., image_size=...)`` takes the ``camera = {tool = "...", ...}`` table of an
``images.toml`` entry (docs/tool-cameras.md: the fields of each tool, with a worked example) and returns the 3×4
projection P onto that image's pixels (x right, y down, origin at the top-left corner, pixel centres at +0.5).
The tools: ``pymol``, ``chimerax``, ``matplotlib`` (``tool_matplotlib``), ``ase`` (its PNG/EPS writer),
``ase-povray`` (its POV-Ray writer), ``ovito``, ``jmol`` (``tool_jmol``), ``vesta`` and ``matrix`` (P given).
Every model here was fitted to the real tool's pixels where the tool installs (PyMOL, OVITO, ASE, POV-Ray,
matplotlib, Jmol: tests/cameras/test_tool_cameras_real.py, benchmarks/bench_tool_cameras.py) and to the
documentation elsewhere (ChimeraX, VESTA). A bad field is an ``InputError`` naming ``camera.<field>``; a camera with no
projection (a zero scale, a singular matrix) a ``CameraError``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import numpy as np

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.cameras.pose import ase_rotation_matrix
from viewcert.cameras.tool_fields import TableReader
from viewcert.cameras.tool_jmol import jmol_projection
from viewcert.cameras.tool_matplotlib import matplotlib_projection
from viewcert.errors import CameraError, InputError, did_you_mean

__all__ = ["TOOLS", "resolve_tool_camera"]

TOOLS = ("pymol", "chimerax", "matplotlib", "ase", "ase-povray", "ovito", "jmol", "vesta", "matrix")


def _ortho(width: int, height: int, rows: np.ndarray, tool: str, name: str) -> PixelProjection:
    p = np.zeros((3, 4))
    p[:2] = rows
    p[2, 3] = 1.0
    return PixelProjection(p, width, height, "orthographic", tool=tool, name=name)


def _pinhole(width, height, r, centre, fx, fy, cx, cy, tool, name, skew=0.0) -> PixelProjection:
    """u = cx + fx·x/d + skew·y/d, v = cy − fy·y/d for camera coordinates (x, y, −d) = R (X − centre)."""
    k = np.array([[fx, skew, cx], [0.0, -fy, cy], [0.0, 0.0, 1.0]])
    m = k @ np.diag([1.0, 1.0, -1.0]) @ r
    return PixelProjection(np.column_stack([m, -m @ centre]), width, height, "perspective", tool=tool, name=name)


# -- PyMOL ---------------------------------------------------------------------------------------------------
def _pymol(t: TableReader, size, name) -> PixelProjection:
    """``get_view()``: 0–8 the model→camera rotation, column-major; 9–11 the origin of rotation in camera space
    (Å; 11 = −its distance from the camera); 12–14 the origin in model space; 15–16 the clip planes; 17 the
    field of view (degrees; > 0 orthoscopic, < 0 perspective). PyMOL's field of view is vertical: the image
    height spans it whatever the width (``png width, height``); orthoscopic views are scaled as the perspective
    one at the origin's depth."""
    v = t.numbers("view", 18)
    r = t.rotation("view", v[:9].reshape(3, 3).T)
    fov = abs(v[17])
    if not 0 < fov < 180:
        raise t.error("view", f"field of view (number 18) must be within (0°, 180°), got {v[17]}")
    w, h = size
    tan_half = math.tan(math.radians(fov) / 2)
    origin_cam, origin = v[9:12], v[12:15]
    if v[17] > 0:
        dist = -origin_cam[2]
        if dist <= 0:
            raise t.error("view", f"the origin must lie in front of the camera (number 12 < 0), got {v[11]}")
        s = (h / 2) / (tan_half * dist)
        # camera coordinates x = R (X − origin) + origin_cam
        rows = np.array([np.r_[s * r[0], w / 2 + s * (origin_cam[0] - r[0] @ origin)],
                         np.r_[-s * r[1], h / 2 - s * (origin_cam[1] - r[1] @ origin)]])
        return _ortho(w, h, rows, "pymol", name)
    centre = origin - r.T @ origin_cam
    f = (h / 2) / tan_half
    return _pinhole(w, h, r, centre, f, f, w / 2, h / 2, "pymol", name)


# -- ChimeraX ------------------------------------------------------------------------------------------------
def _chimerax(t: TableReader, size, name) -> PixelProjection:
    """``view matrix camera`` (12 numbers, row-major camera→scene 3×4: columns the camera axes, the fourth its
    position, Å), ``mode`` ``"ortho"`` with ``field_width`` (Å across the window) or ``"mono"`` with
    ``field_of_view`` (horizontal, degrees; ChimeraX's default 30°), and the window size (``windowsize``)."""
    raw = t.raw("matrix")
    if isinstance(raw, str):
        raw = re.sub(r"^\s*view\s+matrix\s+camera\s+", "", raw, flags=re.IGNORECASE)
        raw = re.sub(r"^#\d+(\.\d+)*\s*,?", "", raw.strip())
        t = TableReader({**t.table, "matrix": raw}, t.where)
    m = t.numbers("matrix", 12).reshape(3, 4)
    r = t.rotation("matrix", m[:, :3].T)
    position = m[:, 3]
    mode = t.choice("mode", {"ortho": "ortho", "orthographic": "ortho", "mono": "mono", "perspective": "mono"},
                    "mono")
    w, h = size
    if mode == "ortho":
        s = w / t.number("field_width", positive=True)
        rows = np.array([np.r_[s * r[0], w / 2 - s * (r[0] @ position)],
                         np.r_[-s * r[1], h / 2 + s * (r[1] @ position)]])
        return _ortho(w, h, rows, "chimerax", name)
    fov = t.number("field_of_view", 30.0, positive=True)
    if fov >= 180:
        raise t.error("field_of_view", f"must be below 180°, got {fov}")
    f = (w / 2) / math.tan(math.radians(fov) / 2)
    return _pinhole(w, h, r, position, f, f, w / 2, h / 2, "chimerax", name)


# -- OVITO ---------------------------------------------------------------------------------------------------
def _look(t: TableReader, direction_key: str, up_key: str) -> np.ndarray:
    d = t.numbers(direction_key, 3)
    up = t.numbers(up_key, 3, default=(0.0, 0.0, 1.0))
    if np.linalg.norm(d) == 0:
        raise t.error(direction_key, "must be a non-zero vector")
    z = -d / np.linalg.norm(d)
    x = np.cross(up, z)
    if np.linalg.norm(x) < 1e-9 * max(np.linalg.norm(up), 1e-300):
        raise t.error(up_key, "must not be parallel to the view direction")
    x /= np.linalg.norm(x)
    return np.array([x, np.cross(z, x), z])


def _ovito(t: TableReader, size, name) -> PixelProjection:
    """``Viewport``: ``camera_pos``, ``camera_dir``, ``camera_up`` (OVITO's default: +z), ``type`` ``"ortho"``
    (``fov`` = half the visible height, Å) or ``"perspective"`` (``fov`` = the vertical angle, radians), the
    render size. The vertical extent is fixed whatever the aspect ratio."""
    kind = t.choice("type", {"ortho": "ortho", "orthographic": "ortho", "top": "ortho", "bottom": "ortho",
                             "front": "ortho", "back": "ortho", "left": "ortho", "right": "ortho",
                             "perspective": "perspective", "persp": "perspective"})
    r = _look(t, "camera_dir", "camera_up")
    c = t.numbers("camera_pos", 3)
    fov = t.number("fov", positive=True)
    w, h = size
    if kind == "ortho":
        s = (h / 2) / fov
        rows = np.array([np.r_[s * r[0], w / 2 - s * (r[0] @ c)], np.r_[-s * r[1], h / 2 + s * (r[1] @ c)]])
        return _ortho(w, h, rows, "ovito", name)
    if fov >= math.pi:
        raise t.error("fov", f"a perspective angle must be below π radians, got {fov}")
    f = (h / 2) / math.tan(fov / 2)
    return _pinhole(w, h, r, c, f, f, w / 2, h / 2, "ovito", name)


# -- ASE -----------------------------------------------------------------------------------------------------
def _ase_rotation(t: TableReader) -> np.ndarray:
    raw = t.raw("rotation")
    if isinstance(raw, str):
        try:
            m = ase_rotation_matrix(raw)
        except CameraError as exc:
            raise t.error("rotation", str(exc)) from None
        return m
    return t.rotation("rotation", t.numbers("rotation", 9).reshape(3, 3).T).T


def _ase(t: TableReader, size, name) -> PixelProjection:
    """The PNG/EPS writer (``ase.io.write(..., rotation=, scale=, bbox=)``): image-plane position
    ``s·(X @ M) − s·(xlo, ylo)``, M = ``rotate(rotation)``, s = ``scale`` (px/Å), ``bbox`` = (xlo, ylo, xhi,
    yhi) Å as ``PlottingVariables.get_bbox()`` returns it (the writer's automatic frame, after any ``maxwidth``
    rescaling); drawn with y up, so row = height − y."""
    m = _ase_rotation(t)
    s = t.number("scale", positive=True)
    bbox = t.numbers("bbox", 4)
    if bbox[2] <= bbox[0] or bbox[3] <= bbox[1]:
        raise t.error("bbox", f"must be (xlo, ylo, xhi, yhi) with xhi > xlo and yhi > ylo, got {bbox.tolist()}")
    w, h = size
    rows = np.array([np.r_[s * m[:, 0], -s * bbox[0]], np.r_[-s * m[:, 1], h + s * bbox[1]]])
    return _ortho(w, h, rows, "ase", name)


def _ase_povray(t: TableReader, size, name) -> PixelProjection:
    """The POV-Ray writer: the scene is ``X @ M − offset`` (Å; ``offset`` = the writer's image-plane offset plus
    its centring (w/2, h/2, front z)); ``camera {orthographic|perspective right −right·x up up·y direction
    direction·z location <0,0,location> look_at <0,0,0>}`` as the .pov file states it; the canvas is
    width × height px. The image plane (right × up Å) spans the canvas; in perspective it lies ``direction`` Å in
    front of the camera."""
    m = _ase_rotation(t)
    off = t.numbers("offset", 3)
    kind = t.choice("camera_type", {"orthographic": "orthographic", "perspective": "perspective"})
    right, up = t.number("right", positive=True), t.number("up", positive=True)
    loc = t.number("location")
    w, h = size
    sx, sy = w / right, h / up
    if kind == "orthographic":
        rows = np.array([np.r_[sx * m[:, 0], w / 2 - sx * off[0]], np.r_[-sy * m[:, 1], h / 2 + sy * off[1]]])
        return _ortho(w, h, rows, "ase-povray", name)
    d = t.number("direction", positive=True)
    # scene = X @ M − off; the camera at (0, 0, loc) looks down −z with x right and y up: rotation Mᵀ
    r = m.T
    centre = m @ (np.array([0.0, 0.0, loc]) + off)
    return _pinhole(w, h, r, centre, sx * d, sy * d, w / 2, h / 2, "ase-povray", name)


# -- VESTA ---------------------------------------------------------------------------------------------------
def _vesta(t: TableReader, size, name) -> PixelProjection:
    """The ``SCENE`` block of a .vesta file: a 4×4 matrix whose upper 3×3 is the model→view rotation (rows),
    then the in-plane translation (two numbers, Å), a number VESTA writes as 0 (not used here), then the zoom
    ``scale`` (20 numbers). VESTA's pixels per Å at scale 1 depend on its
    window and are not in the file: the table gives ``px_per_angstrom`` (at scale 1), and ``perspective`` with
    ``view_angle`` (degrees, vertical) for VESTA's perspective mode (``parallel`` otherwise). ``centre``: the
    model point VESTA rotates about (the cell's centre; default the origin)."""
    block = t.raw("scene")
    if isinstance(block, str):
        nums = [x for x in re.split(r"[\s,]+", re.sub(r"^\s*SCENE", "", block.strip())) if x]
        t = TableReader({**t.table, "scene": nums[:20]}, t.where)
        if len(nums) < 20:
            raise t.error("scene", f"needs 20 numbers (a 4×4 matrix, a translation, 0, a scale), got {len(nums)}")
    vals = t.numbers("scene", 20)
    mat = vals[:16].reshape(4, 4)
    r = t.rotation("scene", mat[:3, :3])
    trans, scale = vals[16:18], vals[19]
    if scale <= 0:
        raise t.error("scene", f"scale (number 20) must be > 0, got {scale}")
    centre = t.numbers("centre", 3, default=(0.0, 0.0, 0.0))
    w, h = size
    s = t.number("px_per_angstrom", positive=True) * scale
    cx, cy = w / 2 + s * trans[0], h / 2 - s * trans[1]
    if not t.table.get("perspective", False):
        rows = np.array([np.r_[s * r[0], cx - s * (r[0] @ centre)], np.r_[-s * r[1], cy + s * (r[1] @ centre)]])
        return _ortho(w, h, rows, "vesta", name)
    angle = t.number("view_angle", positive=True)
    f = (h / 2) / math.tan(math.radians(angle) / 2)
    dist = f / s
    cam = centre + r.T @ np.array([0.0, 0.0, dist])
    return _pinhole(w, h, r, cam, f, f, cx, cy, "vesta", name)


# -- a plain matrix ------------------------------------------------------------------------------------------
def _matrix(t: TableReader, size, name) -> PixelProjection:
    """``matrix``: P's 12 numbers row by row onto this image's pixels; ``kind`` orthographic when the last row
    is (0, 0, 0, w), else perspective (or as stated)."""
    p = t.numbers("matrix", 12).reshape(3, 4)
    affine = bool(np.all(p[2, :3] == 0))
    kind = t.choice("kind", {"orthographic": "orthographic", "perspective": "perspective"},
                    "orthographic" if affine else "perspective")
    w, h = size
    try:
        return PixelProjection(p, w, h, kind, tool="matrix", name=name)
    except CameraError as exc:
        raise InputError(str(exc), source=t.where, field="camera.matrix") from None


_RESOLVERS = {"pymol": _pymol, "chimerax": _chimerax, "matplotlib": matplotlib_projection, "ase": _ase,
              "ase-povray": _ase_povray, "ovito": _ovito, "jmol": jmol_projection, "vesta": _vesta, "matrix": _matrix}


def resolve_tool_camera(table: Mapping, *, where: str | None = None, image_size=None,
                        name: str = "") -> PixelProjection:
    """A camera in a tool's own terms → the 3×4 projection onto its image's pixels.

    Parameters
    ----------
    table : Mapping
        The camera table: ``tool`` (one of ``TOOLS``) and that tool's fields (docs/tool-cameras.md), with the
        image size as ``width``/``height`` where the tool states one.
    where : str, optional
        The place the table was read from (e.g. ``"images.toml"``), named by every error.
    image_size : (int, int), optional
        The image's own (width, height) px; must agree with ``width``/``height`` when both are given.
    name : str
        The view's name, carried by the projection.

    Returns
    -------
    PixelProjection
        P onto the image's pixels (x right, y down, origin top-left, pixel centres at +0.5), with ``tool``.

    Raises
    ------
    InputError
        A missing, non-finite or malformed field, an unknown tool, a rotation that is not one, an image size
        that differs from the camera's; the message names ``camera.<field>``.
    """
    t = TableReader(table, where)
    tool = t.text("tool").strip().lower()
    if tool not in _RESOLVERS:
        raise t.error("tool", f"unknown tool {tool[:40]!r}; one of {', '.join(TOOLS)}{did_you_mean(tool, TOOLS)}")
    size = t.size(image_size)
    try:
        return _RESOLVERS[tool](t, size, name)
    except CameraError as exc:
        raise InputError(f"gives no projection: {exc}", source=where, field="camera") from None
