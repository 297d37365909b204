"""matplotlib's 3D axes (mplot3d) as a camera: elev, azim, roll, the x/y/z limits, box aspect, projection type,
focal length, figure size, dpi and the axes' rectangle → one ``PixelProjection``, and back (issue 53).

mplot3d (matplotlib ≥ 3.9, ``Axes3D.get_proj``) maps data X to the box ``b_i (X_i − lo_i) / (hi_i − lo_i)``
(each axis scaled to its own limits; b = the box aspect normalised to length 1.8294640721620434·25/24·zoom),
looks from the eye ``R + 10·p`` (R the box centre, p the unit vector of elevation/azimuth) at R, with the
screen axes u (right), v (up), w (out) of ``proj3d._view_axes`` rolled by ``roll``; orthographic:
(x, y) = (u·(B − E), v·(B − E)) / 10; perspective: the eye at ``R + 10·f·p`` and (x, y) = f·(u·(B − E),
v·(B − E)) / (−w·(B − E)). The 2D view limits are (−0.95/10, 0.9/10) on both axes, drawn into the axes'
active rectangle: the rectangle as created, shrunk to a square in pixels and centred (``apply_aspect``).
Display y is up, so row = figure height − y.
"""

from __future__ import annotations

import math

import numpy as np

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.cameras.tool_fields import TableReader
from viewcert.errors import CameraError

__all__ = ["matplotlib_projection", "matplotlib_terms"]

#: mplot3d's box scale (``Axes3D.set_box_aspect``) and camera distance (``Axes3D._dist``)
BOX_NORM = 1.8294640721620434 * 25 / 24
DIST = 10.0
#: the 2D view limits of a 3D axes (``Axes3D.set_top_view``)
VIEW_LO, VIEW_HI = -0.95 / DIST, 0.9 / DIST
#: ``fig.add_subplot(projection="3d")``'s rectangle (rcParams figure.subplot.*: left, bottom, right, top)
DEFAULT_POSITION = (0.125, 0.11, 0.775, 0.77)


def _box(aspect, zoom: float) -> np.ndarray:
    a = np.asarray(aspect, dtype=np.float64)
    return a * BOX_NORM * zoom / np.linalg.norm(a)


def _view_axes(elev: float, azim: float, roll: float) -> np.ndarray:
    """Rows u (right), v (up), w (out of the screen) in box coordinates, as ``proj3d._view_axes``."""
    e, a = math.radians(elev), math.radians(azim)
    w = np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])
    # matplotlib normalises elev into [−180, 180) before testing |elev| > 90 (art3d._norm_angle)
    norm_elev = (elev + 180) % 360 - 180
    vertical = np.array([0.0, 0.0, -1.0 if abs(norm_elev) > 90 else 1.0])
    u = np.cross(vertical, w)
    u /= np.linalg.norm(u)
    v = np.cross(w, u)
    if roll:
        rr = math.radians(-((roll + 180) % 360 - 180))
        k = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        rot = np.eye(3) + math.sin(rr) * k + (2 * math.sin(rr / 2) ** 2) * k @ k
        u, v = rot @ u, rot @ v
    return np.array([u, v, w])


def _active_rect(position, fig_w: float, fig_h: float) -> tuple[float, float, float]:
    """(x0, y0, side) px of the axes' square active rectangle (``Axes3D.apply_aspect``, anchor "C")."""
    left, bottom, width, height = (float(x) for x in position)
    w, h = width * fig_w, height * fig_h
    side = min(w, h)
    return left * fig_w + (w - side) / 2, bottom * fig_h + (h - side) / 2, side


def matplotlib_projection(t: TableReader, size, name: str = "") -> PixelProjection:
    """The ``matplotlib`` camera table → P (module docstring). Fields: ``elev``, ``azim``, ``roll`` (degrees,
    roll default 0), ``xlim``/``ylim``/``zlim`` (the limits as ``ax.get_xlim3d()`` returns them after
    drawing), ``box_aspect`` (default (4, 4, 3)), ``zoom`` (default 1), ``proj_type`` ``"persp"`` (default) or
    ``"ortho"``, ``focal_length`` (persp; default 1), ``figsize`` (inches), ``dpi``, ``position`` (the axes'
    rectangle in figure fractions as created; default ``add_subplot``'s)."""
    elev, azim, roll = t.number("elev"), t.number("azim"), t.number("roll", 0.0)
    lims = []
    for key in ("xlim", "ylim", "zlim"):
        lo, hi = t.numbers(key, 2)
        if hi == lo:
            raise t.error(key, f"must span a non-zero range, got ({lo}, {hi})")
        lims.append((lo, hi))
    aspect = t.numbers("box_aspect", 3, default=(4.0, 4.0, 3.0))
    if np.any(aspect <= 0):
        raise t.error("box_aspect", f"must be three positive numbers, got {aspect.tolist()}")
    box = _box(aspect, t.number("zoom", 1.0, positive=True))
    persp = t.choice("proj_type", {"persp": "persp", "perspective": "persp", "ortho": "ortho",
                                   "orthographic": "ortho"}, "persp") == "persp"
    focal = t.number("focal_length", 1.0, positive=True) if persp else math.inf
    fig_w_in, fig_h_in = t.numbers("figsize", 2)
    dpi = t.number("dpi", positive=True)
    if fig_w_in <= 0 or fig_h_in <= 0:
        raise t.error("figsize", f"must be positive, got {[fig_w_in, fig_h_in]}")
    fig_w, fig_h = fig_w_in * dpi, fig_h_in * dpi
    w, h = size
    if (round(fig_w), round(fig_h)) != (w, h):
        raise t.error("figsize", f"figsize × dpi is {fig_w:g}×{fig_h:g} px but the image is {w}×{h} px")
    position = t.numbers("position", 4, default=DEFAULT_POSITION)
    if position[2] <= 0 or position[3] <= 0:
        raise t.error("position", f"width and height must be > 0, got {position.tolist()}")
    x0, y0, side = _active_rect(position, fig_w, fig_h)

    # data → box: B = S X + b0
    scale = np.array([box[i] / (hi - lo) for i, (lo, hi) in enumerate(lims)])
    b0 = np.array([-box[i] * lo / (hi - lo) for i, (lo, hi) in enumerate(lims)])
    uvw = _view_axes(elev, azim, roll)
    p_dir = uvw[2]
    centre = 0.5 * box
    k = side / (VIEW_HI - VIEW_LO)  # px per unit of the 2D view
    # display (x, y) = (x0 + k (X2 − VIEW_LO), y0 + k (Y2 − VIEW_LO)); row = fig_h − y
    if not persp:
        eye = centre + DIST * p_dir
        rows = np.zeros((2, 4))
        a = uvw[:2] @ np.diag(scale) / DIST   # (X2, Y2) = a X + c
        c = uvw[:2] @ (b0 - eye) / DIST
        rows[0, :3], rows[0, 3] = k * a[0], x0 + k * (c[0] - VIEW_LO)
        rows[1, :3], rows[1, 3] = -k * a[1], fig_h - y0 - k * (c[1] - VIEW_LO)
        p = np.vstack([rows, [0.0, 0.0, 0.0, 1.0]])
        return PixelProjection(p, w, h, "orthographic", tool="matplotlib", name=name)
    eye = centre + DIST * p_dir * focal
    m_cam = uvw @ np.diag(scale)              # camera coordinates (u, v, w) = m_cam X + c_cam
    c_cam = uvw @ (b0 - eye)
    # X2 = f·cu / (−cw): homogeneous (f cu, f cv, −cw)
    ux, uy = x0 - k * VIEW_LO, fig_h - y0 + k * VIEW_LO
    p = np.zeros((3, 4))
    p[0] = k * focal * np.r_[m_cam[0], c_cam[0]] + ux * -np.r_[m_cam[2], c_cam[2]]
    p[1] = -k * focal * np.r_[m_cam[1], c_cam[1]] + uy * -np.r_[m_cam[2], c_cam[2]]
    p[2] = -np.r_[m_cam[2], c_cam[2]]
    try:
        return PixelProjection(p, w, h, "perspective", tool="matplotlib", name=name)
    except CameraError as exc:
        raise t.error("xlim", f"the limits give no camera: {exc}") from None


# -- writing a projection back in matplotlib's terms ---------------------------------------------------------
def _column_scales(rows: np.ndarray, target: np.ndarray) -> np.ndarray:
    """q_i = 1/s_i² such that the rows of ``rows``·diag(1/s) have the Gram matrix ``target`` (linear in q)."""
    n = rows.shape[0]
    pairs = [(i, j) for i in range(n) for j in range(i, n)]
    a = np.array([rows[i] * rows[j] for i, j in pairs])
    b = np.array([target[i, j] for i, j in pairs])
    q, *_ = np.linalg.lstsq(a, b, rcond=None)
    return q


def _perspective_scales(p: np.ndarray) -> tuple[np.ndarray, float, float]:
    """For P = K·(u, v, −w)·diag(s)·[I | −C] with K = [[F, 0, cx], [0, −F, cy], [0, 0, 1]]: (q = 1/s² up to one
    factor, cx, cy), solved from ⟨n1, n2⟩ = 0 and |n1| = |n2| under q with n1, n2 the first two rows less the
    principal point (which makes both orthogonal to the third); a ``CameraError`` when none fits."""
    from scipy.optimize import least_squares

    p0, p1, p2 = p[0, :3], p[1, :3], p[2, :3]

    def parts(x):
        q = np.exp(np.r_[x, 0.0])
        ip = lambda a, b: float((a * b * q).sum())  # noqa: E731
        cx, cy = ip(p0, p2) / ip(p2, p2), ip(p1, p2) / ip(p2, p2)
        n1, n2 = p0 - cx * p2, p1 - cy * p2
        a, b = ip(n1, n1), ip(n2, n2)
        return q, cx, cy, np.array([ip(n1, n2) / math.sqrt(a * b), (a - b) / (a + b)])

    fit = least_squares(lambda x: parts(x)[3], np.zeros(2), xtol=1e-15, ftol=1e-15, gtol=1e-15)
    q, cx, cy, res = parts(fit.x)
    if np.abs(res).max() > 1e-9:
        raise CameraError("matplotlib cannot draw this perspective projection: no per-axis scaling of an "
                          f"mplot3d view gives it (skewed pixels; residual {np.abs(res).max():.2g})")
    return q, cx, cy


def _angles(uvw: np.ndarray) -> tuple[float, float, float]:
    w = uvw[2]
    elev = math.degrees(math.asin(max(-1.0, min(1.0, w[2]))))
    azim = math.degrees(math.atan2(w[1], w[0]))
    base = _view_axes(elev, azim, 0.0)
    roll = -math.degrees(math.atan2(float(np.cross(base[0], uvw[0]) @ w), float(base[0] @ uvw[0])))
    return elev, azim, roll


def _perspective_terms(p: np.ndarray, k: float, centre, fig_h: float):
    """(view axes, per-axis scales, box centre Å, axes x0, y0 px, focal length) of a perspective P."""
    q, cx, cy = _perspective_scales(p)
    n3 = -p[2, :3]
    n1 = (p[0, :3] - cx * p[2, :3]) / k      # = λ f u∘s
    n2 = -(p[1, :3] - cy * p[2, :3]) / k     # = λ f v∘s
    focal = math.sqrt(float((q * n1 * n1).sum() / (q * n3 * n3).sum()))
    uvw = np.array([n1 / focal, n2 / focal, n3]) * np.sqrt(q)
    uvw /= np.linalg.norm(uvw, axis=1)[:, None]
    s_dir = 1.0 / np.sqrt(q)   # s_i up to one common factor
    pinhole = -np.linalg.solve(p[:, :3], p[:, 3])
    # the optical axis in world coordinates: s∘a ∥ w, a = w / s; the box centre lies on it, at the foot of
    # ``centre`` (default 10 Å in front of the pinhole)
    axis = uvw[2] * np.sqrt(q)
    axis /= np.linalg.norm(axis)
    along = 10.0 if centre is None else float((pinhole - np.asarray(centre, dtype=np.float64)) @ axis)
    c_world = pinhole - along * axis
    # B(pinhole) = eye = R + 10 f w and B(centre) = R: λ s∘(pinhole − centre) = 10 f w
    d = s_dir * (pinhole - c_world)
    lam = float((10 * focal * uvw[2]) @ d) / float(d @ d)
    if lam <= 0:
        raise CameraError("the centre must lie in front of the camera")
    s = lam * s_dir
    # principal point: display x = x0 − k VIEW_LO must be cx; row cy = fig_h − (y0 − k VIEW_LO)
    x0 = cx + k * VIEW_LO
    y0 = fig_h - cy + k * VIEW_LO
    return uvw, s, c_world, x0, y0, focal


def _orthographic_terms(projection: PixelProjection, k: float, centre, fig_h: float):
    """(view axes, per-axis scales, box centre Å, axes x0, y0 px) of an orthographic P."""
    p = projection.matrix
    cam, _ = projection.equivalent()
    m2 = np.array([p[0, :3] / k, -p[1, :3] / k])    # = uv · diag(s) / 10
    q = _column_scales(m2, np.eye(2) / DIST ** 2)
    if np.any(q <= 0):
        raise CameraError("matplotlib cannot draw this orthographic projection: no positive per-axis "
                          "scaling of an mplot3d view gives it (skewed pixels)")
    uv = m2 * np.sqrt(q) * DIST
    uvw = np.array([uv[0], uv[1], np.cross(uv[0], uv[1])])
    s = 1.0 / np.sqrt(q)
    c_world = np.asarray(centre, float) if centre is not None else cam.center
    # the box centre's pixel is the 2D view's origin: display (x0 − k VIEW_LO, y0 − k VIEW_LO)
    uc, vc = p[0, :3] @ c_world + p[0, 3], p[1, :3] @ c_world + p[1, 3]
    x0 = uc + k * VIEW_LO
    y0 = fig_h - vc + k * VIEW_LO
    return uvw, s, c_world, x0, y0


def matplotlib_terms(projection: PixelProjection, *, centre=None, dpi: float = 100.0,
                     box_aspect=(4.0, 4.0, 3.0)) -> dict:
    """P → a ``matplotlib`` camera table that draws it: the axes filling the largest centred square, the box
    aspect given, limits whose box centre lies at ``centre`` (Å; orthographic default: the equivalent camera's centre;
    perspective: the foot of ``centre`` on the optical axis, default 10 Å in front of the pinhole). Raises ``CameraError`` when no
    mplot3d view draws P (skew, or a per-axis scaling that is not positive)."""
    w, h = projection.width, projection.height
    fig_w, fig_h = float(w), float(h)
    p = projection.matrix
    box = _box(box_aspect, 1.0)
    side = float(min(w, h))
    k = side / (VIEW_HI - VIEW_LO)
    persp = projection.kind == "perspective"
    if persp:
        uvw, s, c_world, x0, y0, focal = _perspective_terms(p, k, centre, fig_h)
    else:
        uvw, s, c_world, x0, y0 = _orthographic_terms(projection, k, centre, fig_h)
        focal = None
    elev, azim, roll = _angles(uvw)
    # box coordinate B_i = s_i (X_i − lo_i) with s_i = box_i / (hi_i − lo_i); the centre maps to box / 2
    span = box / s
    lo = c_world - span / 2
    table = {"tool": "matplotlib", "elev": elev, "azim": azim, "roll": roll,
             "xlim": [float(lo[0]), float(lo[0] + span[0])], "ylim": [float(lo[1]), float(lo[1] + span[1])],
             "zlim": [float(lo[2]), float(lo[2] + span[2])], "box_aspect": [float(x) for x in box_aspect],
             "zoom": 1.0, "proj_type": "persp" if persp else "ortho", "figsize": [w / dpi, h / dpi],
             "dpi": float(dpi), "position": [x0 / fig_w, y0 / fig_h, side / fig_w, side / fig_h],
             "width": w, "height": h}
    if persp:
        table["focal_length"] = float(focal)
    return table
