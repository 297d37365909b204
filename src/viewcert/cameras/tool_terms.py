"""A ``PixelProjection`` written back in a tool's own terms, so the tool re-renders exactly that view (issues 53
and 54): ``to_tool_terms(projection, tool)`` returns the camera table ``resolve_tool_camera`` reads (the same P
back), with the tool's commands where it has them (PyMOL ``set_view`` + ``png``; ChimeraX ``view matrix camera``,
``camera ortho``/``camera mono`` and ``windowsize``). A projection the tool cannot express (non-square pixels,
skew, an off-centre principal point in a tool whose principal point is the image centre) is a ``CameraError``
saying why."""

from __future__ import annotations

import math

import numpy as np

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.cameras.tool_matplotlib import matplotlib_terms
from viewcert.errors import CameraError

__all__ = ["WRITERS", "to_tool_terms"]

#: relative tolerance on square pixels, zero skew and a centred principal point (px / focal px)
SHAPE_RTOL = 1e-6


def _square(projection: PixelProjection, tool: str, *, centred: bool):
    cam, warp = projection.equivalent()
    lin = warp[:, :2]
    if np.abs(lin - np.eye(2)).max() > SHAPE_RTOL * 10:
        raise CameraError(f"{tool} cannot express this projection: its pixels are not square or are skewed "
                          f"(warp {np.round(lin, 6).tolist()})")
    if centred and projection.kind == "perspective":
        off = max(abs(cam.cx - projection.width / 2), abs(cam.cy - projection.height / 2))
        if off > SHAPE_RTOL * cam.focal + 1e-9:
            raise CameraError(f"{tool} cannot express this projection: its principal point ({cam.cx:.6g}, "
                              f"{cam.cy:.6g}) px is not the image centre")
    return cam


def _default_centre(projection: PixelProjection, cam, centre, distance: float) -> np.ndarray:
    if centre is not None:
        c = np.asarray(centre, dtype=np.float64)
        if c.shape != (3,) or not np.isfinite(c).all():
            raise CameraError(f"centre must be 3 finite numbers (Å), got {centre!r}")
        return c
    if projection.kind == "orthographic":
        return np.asarray(cam.center, dtype=np.float64)
    return cam.position - distance * cam.rotation[2]


def _ortho_eye(projection: PixelProjection, cam, centre, distance: float) -> np.ndarray:
    """Where a tool's orthographic eye sits (Å, model frame): the point of the centre's plane drawn at the image
    centre, moved back ``distance`` Å along the view axis."""
    c = _default_centre(projection, cam, centre, distance)
    w, h, r = projection.width, projection.height, cam.rotation
    uv, _ = projection.project(c)
    shift = r[0] * (w / 2 - uv[0, 0]) / cam.scale + r[1] * (uv[0, 1] - h / 2) / cam.scale
    return c + shift + distance * r[2]


def pymol_terms(projection: PixelProjection, *, centre=None, fov: float = 20.0, distance: float = 50.0,
                clip: float = 100.0) -> dict:
    """PyMOL: the 18 numbers of ``set_view`` and the ``png`` size. Orthoscopic views take ``fov`` (degrees) and
    the camera distance that gives P's scale; the origin of rotation is ``centre`` (Å; default the point drawn
    at the image centre, or ``distance`` Å in front of a perspective camera); the clip planes lie ``clip`` Å
    either side of it."""
    cam = _square(projection, "PyMOL", centred=True)
    w, h = projection.width, projection.height
    r = cam.rotation
    origin = _default_centre(projection, cam, centre, distance)
    if projection.kind == "orthographic":
        if not 0 < fov < 180:
            raise CameraError(f"fov must be within (0, 180) degrees, got {fov}")
        dist = (h / 2) / (math.tan(math.radians(fov) / 2) * cam.scale)
        # u = W/2 + s (R0 (X − origin) + oc_x) must equal P's u: oc_x = (u(origin) − W/2) / s
        uv, _ = projection.project(origin)
        oc = np.array([(uv[0, 0] - w / 2) / cam.scale, (h / 2 - uv[0, 1]) / cam.scale, -dist])
        flag = fov
    else:
        oc = r @ (origin - cam.position)
        dist = -oc[2]
        if dist <= 0:
            raise CameraError("the centre must lie in front of the camera")
        flag = -math.degrees(2 * math.atan((h / 2) / cam.focal))
    view = [*r.T.ravel().tolist(), *oc.tolist(), *origin.tolist(), float(dist - clip), float(dist + clip), flag]
    view = [float(x) for x in view]
    text = "set_view (" + ", ".join(f"{x:.9g}" for x in view) + ")"
    return {"tool": "pymol", "view": view, "width": w, "height": h,
            "commands": [text, f"set orthoscopic, {1 if flag > 0 else 0}", f"png image.png, width={w}, "
                         f"height={h}, ray=1"]}


def chimerax_terms(projection: PixelProjection, *, centre=None, distance: float = 100.0) -> dict:
    """ChimeraX: ``view matrix camera`` (camera→scene, 12 numbers), ``camera ortho fieldWidth`` (Å across the
    window) or ``camera mono fieldOfView`` (horizontal degrees), ``windowsize``. An orthographic camera is placed
    ``distance`` Å in front of ``centre`` (default the point drawn at the image centre)."""
    cam = _square(projection, "ChimeraX", centred=True)
    w, h = projection.width, projection.height
    r = cam.rotation
    if projection.kind == "orthographic":
        position = _ortho_eye(projection, cam, centre, distance)
        extra = {"mode": "ortho", "field_width": float(w / cam.scale)}
        camera_cmd = f"camera ortho fieldWidth {w / cam.scale:.9g}"
    else:
        position = np.asarray(cam.position, dtype=np.float64)
        fov = math.degrees(2 * math.atan((w / 2) / cam.focal))
        extra = {"mode": "mono", "field_of_view": float(fov)}
        camera_cmd = f"camera mono fieldOfView {fov:.9g}"
    m = np.column_stack([r.T, position])
    matrix = [float(x) for x in m.ravel()]
    view_cmd = "view matrix camera " + ",".join(f"{x:.9g}" for x in matrix)
    return {"tool": "chimerax", "matrix": matrix, **extra, "width": w, "height": h,
            "commands": [f"windowsize {w} {h}", camera_cmd, view_cmd]}


def ovito_terms(projection: PixelProjection, *, centre=None, distance: float = 50.0) -> dict:
    """OVITO ``Viewport``: camera_pos, camera_dir, camera_up, type and fov (ortho: half the visible height, Å;
    perspective: the vertical angle, radians)."""
    cam = _square(projection, "OVITO", centred=True)
    w, h = projection.width, projection.height
    r = cam.rotation
    if projection.kind == "orthographic":
        pos = _ortho_eye(projection, cam, centre, distance)
        typ, fov = "ortho", (h / 2) / cam.scale
    else:
        pos, typ, fov = cam.position, "perspective", 2 * math.atan((h / 2) / cam.focal)
    return {"tool": "ovito", "type": typ, "camera_pos": [float(x) for x in pos],
            "camera_dir": [float(x) for x in -r[2]], "camera_up": [float(x) for x in r[1]], "fov": float(fov),
            "width": w, "height": h}


def matrix_terms(projection: PixelProjection, **_ignored) -> dict:
    """The plain matrix: P's 12 numbers row by row, its kind and image size."""
    return {"tool": "matrix", "matrix": projection.matrix.ravel().tolist(), "kind": projection.kind,
            "width": projection.width, "height": projection.height}


WRITERS = {"pymol": pymol_terms, "chimerax": chimerax_terms, "matplotlib": matplotlib_terms, "ovito": ovito_terms,
           "matrix": matrix_terms}


def to_tool_terms(projection: PixelProjection, tool: str, **options) -> dict:
    """A projection → the camera table (and commands) of ``tool`` that draws it.

    Parameters
    ----------
    projection : PixelProjection
        The projection onto an image's pixels (e.g. resolved or recovered).
    tool : str
        One of ``WRITERS``: ``"pymol"``, ``"chimerax"``, ``"matplotlib"``, ``"ovito"``, ``"matrix"``.
    **options
        The writer's choices where P leaves the tool a freedom: ``centre`` (Å: PyMOL's origin of rotation,
        the matplotlib box centre, where ChimeraX/OVITO place an orthographic camera), ``fov`` (PyMOL
        orthoscopic), ``distance``, ``dpi`` and ``box_aspect`` (matplotlib).

    Returns
    -------
    dict
        The camera table ``resolve_tool_camera`` reads back to the same P (within float rounding); PyMOL and
        ChimeraX tables carry ``commands``, the tool's own command lines.

    Raises
    ------
    CameraError
        The tool cannot draw P (its pixels are not square or are skewed, its principal point is off the image
        centre, a per-axis scaling matplotlib cannot make), or an unknown tool.
    """
    if tool not in WRITERS:
        raise CameraError(f"cannot write a camera in {tool!r}'s terms; one of {', '.join(WRITERS)}")
    return WRITERS[tool](projection, **options)
