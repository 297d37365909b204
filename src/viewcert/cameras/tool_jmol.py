"""Jmol's camera (issue 53): the ``moveto`` line ``show orientation`` prints, or the state script a PNGJ file
embeds, resolved to the projection Jmol 14 draws an image with (its ``TransformManager``, standard mode).

Jmol's view, as its source computes it (and as measured against Debian's Jmol 14.32 rendering headless:
tests/cameras/test_tool_cameras_real.py): the model turns by the ``moveto`` axis-angle about its
``{cx cy cz}`` centre; the screen scale is ``zoom``/100 · N / (2 · rotationRadius) px/Å, with N the image's
larger side (``set zoomLarge true``, Jmol's default; the smaller side when false; the height when
``zoomHeight`` is set and the image is tall) less 2 px, counted on the image as drawn: Jmol writes images
antialiased (``antialiasImages``, default true) by drawing at twice the size, so N = 2·side − 2 there and the
scale is halved back; the centre lands at ``width · (1/2 + xTrans/100)``, ``height · (1/2 + yTrans/100)``
(y down). With ``perspectiveDepth`` (Jmol's default) the camera stands (cameraDepth + 1/2) · N px in front of
the centre's plane, whose scale it keeps. Jmol places each atom at a whole pixel of its drawing and centres a
sphere of even pixel diameter on that pixel's corner, so the centres it draws lie up to half an image pixel from
P's in each axis (docs/tool-cameras.md: measured).
"""

from __future__ import annotations

import io
import math
import re
import zipfile

import numpy as np

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.cameras.tool_fields import TableReader
from viewcert.errors import InputError

__all__ = ["jmol_projection", "jmol_state_from_pngj"]

#: the largest state script read from a PNGJ file (characters; Jmol's own are ~10 kB)
MAX_STATE_CHARS = 4_000_000

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_MOVETO = re.compile(
    rf"moveto\s+(?P<time>{_NUM})\s*\{{(?P<axis>[^}}]*)\}}\s*(?P<zoom>{_NUM})\s+(?P<xt>{_NUM})\s+(?P<yt>{_NUM})\s*"
    rf"\{{(?P<centre>[^}}]*)\}}\s*(?P<radius>{_NUM})"
    rf"(?:\s*\{{[^}}]*\}}\s*{_NUM}\s+{_NUM}\s+{_NUM}"
    rf"(?:\s+(?P<depth>{_NUM})(?:\s+(?P<camx>{_NUM})\s+(?P<camy>{_NUM}))?)?)?",
    re.IGNORECASE)
_SET = re.compile(r"^\s*set\s+(perspectiveDepth|cameraDepth|zoomLarge|zoomHeight)\s+([^;\s]+)",
                  re.IGNORECASE | re.MULTILINE)


def jmol_state_from_pngj(data: bytes) -> str:
    """The state script (``state.spt``) a Jmol PNGJ image embeds.

    Parameters
    ----------
    data : bytes
        The PNGJ file's bytes (a PNG followed by a ZIP archive).

    Returns
    -------
    str
        The state script's text (UTF-8), at most ``MAX_STATE_CHARS`` characters.

    Raises
    ------
    InputError
        Not a PNGJ file, no ``state.spt`` in it, or one larger than the limit (checked before it is inflated).
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            info = next((i for i in z.infolist() if i.filename.rsplit("/", 1)[-1] == "state.spt"), None)
            if info is None:
                raise InputError("a Jmol PNGJ file holds a state.spt; this one does not", field="camera.state")
            if info.file_size > MAX_STATE_CHARS:
                raise InputError(f"state.spt is {info.file_size} bytes, over the {MAX_STATE_CHARS} read",
                                 field="camera.state")
            raw = z.read(info)
    except zipfile.BadZipFile:
        raise InputError("not a Jmol PNGJ file (no ZIP archive after the PNG)", field="camera.state") from None
    return raw[:MAX_STATE_CHARS].decode("utf-8", errors="replace")


def _axis_angle(axis: np.ndarray, degrees: float) -> np.ndarray:
    n = np.linalg.norm(axis)
    if n == 0:
        return np.eye(3)
    k = axis / n
    a = math.radians(degrees)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(a) * kx + (1 - math.cos(a)) * kx @ kx


def _flag(t: TableReader, key: str, default: bool) -> bool:
    if not t.has(key):
        return default
    v = t.table[key]
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "false", "on", "off"):
        return v.strip().lower() in ("true", "on")
    raise t.error(key, f"must be true or false, got {str(v)[:40]!r}")


def _moveto_and_settings(t: TableReader) -> tuple[re.Match, dict, str]:
    """The last ``moveto`` of the ``moveto`` text (or of the ``state`` script) and the state's settings."""
    key = "moveto" if t.has("moveto") or not t.has("state") else "state"
    text = t.text(key)
    if len(text) > MAX_STATE_CHARS:
        raise t.error(key, f"is {len(text)} characters, over the {MAX_STATE_CHARS} read")
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.DOTALL)
    found = list(_MOVETO.finditer(text))
    if not found:
        raise t.error(key, "holds no Jmol 'moveto t {x y z deg} zoom xTrans yTrans {cx cy cz} radius ...' line")
    settings = {m.group(1).lower(): m.group(2).lower() for m in _SET.finditer(text)} if key == "state" else {}
    return found[-1], settings, key


def jmol_projection(t: TableReader, size, name) -> PixelProjection:
    """Jmol's ``moveto`` (or PNGJ state) → P (module docstring). Fields: ``moveto`` or ``state``;
    ``perspective`` (Jmol's ``perspectiveDepth``; default the state's, else true), ``camera_depth`` (default
    the moveto's, else the state's, else 3), ``zoom_large`` (default the state's, else true), ``zoom_height``
    (default the state's, else false), ``antialias`` (Jmol's ``antialiasImages``: default true)."""
    m, st, key = _moveto_and_settings(t)
    try:
        axis = np.array([float(x) for x in m.group("axis").split()])
        centre = np.array([float(x) for x in m.group("centre").split()])
        zoom, xt, yt, radius = (float(m.group(k)) for k in ("zoom", "xt", "yt", "radius"))
        camx, camy = (float(m.group(k) or 0.0) for k in ("camx", "camy"))
        depth = float(m.group("depth") or st.get("cameradepth", 3.0))
    except ValueError:
        raise t.error(key, "has a non-number in its moveto") from None
    if axis.size != 4 or centre.size != 3 or not (np.isfinite(axis).all() and np.isfinite(centre).all()):
        raise t.error(key, "needs {x y z degrees} and {cx cy cz} in its moveto")
    if not (zoom > 0 and radius > 0 and math.isfinite(xt) and math.isfinite(yt)):
        raise t.error(key, f"zoom and rotationRadius must be > 0, got {zoom} and {radius}")
    if camx != 0 or camy != 0:
        raise t.error(key, "a camera x/y shift (a view read from PyMOL) is not supported")
    r = _axis_angle(axis[:3], axis[3])
    w, h = size
    aa = 2 if _flag(t, "antialias", True) else 1
    tall = h > w
    zoom_large = _flag(t, "zoom_large", st.get("zoomlarge", "true") == "true")
    if _flag(t, "zoom_height", st.get("zoomheight", "false") == "true"):
        zoom_large = tall
    n_px = (h if zoom_large == tall else w) * aa
    n_px = n_px - 2 if n_px > 2 else n_px
    s = zoom / 100 * n_px / (2 * radius) / aa
    cx, cy = w * (0.5 + xt / 100), h * (0.5 + yt / 100)
    if not _flag(t, "perspective", st.get("perspectivedepth", "true") == "true"):
        p = np.zeros((3, 4))
        p[0] = np.r_[s * r[0], cx - s * (r[0] @ centre)]
        p[1] = np.r_[-s * r[1], cy + s * (r[1] @ centre)]
        p[2, 3] = 1.0
        return PixelProjection(p, w, h, "orthographic", tool="jmol", name=name)
    depth = t.number("camera_depth", depth, positive=True)
    f = (depth + 0.5) * n_px / aa  # px: the centre's plane keeps scale s
    cam = centre + r.T @ np.array([0.0, 0.0, f / s])
    k = np.array([[f, 0.0, cx], [0.0, -f, cy], [0.0, 0.0, 1.0]])
    mat = k @ np.diag([1.0, 1.0, -1.0]) @ r
    return PixelProjection(np.column_stack([mat, -mat @ cam]), w, h, "perspective", tool="jmol", name=name)
