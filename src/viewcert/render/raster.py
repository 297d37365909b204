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
(routines taking arrays work on whole batches, see ``_trace_groups``).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

import numpy as np
from numba import njit, prange

from viewcert.cameras.camera import Camera, OrthographicCamera, PerspectiveCamera
from viewcert.cameras.framing import box_corners
from viewcert.cameras.protocols import Protocol, get_protocol
from viewcert.errors import CameraError, InputError
from viewcert.observe.project import drawn_atoms
from viewcert.render.bonds import half_bonds
from viewcert.render.palette import AXIS_COLOURS, Style, get_style, jmol_colours
from viewcert.structures import Structure, tiling_translations

ID_BACKGROUND = -1
ID_BOND = -2
ID_EDGE = -3
ID_CODES = {"background": ID_BACKGROUND, "bond": ID_BOND, "edge": ID_EDGE}

KIND_SPHERE = 0
KIND_CYLINDER = 1
KIND_LINE = 2

BBOX_SLACK_PX = 0.01  # early-out boxes are grown by this much so rounding never rejects a true hit
DEFAULT_SUPERSAMPLE = 3
DEFAULT_TILE = 16


# ============================================================================ scene


@dataclass(frozen=True, eq=False)
class Scene:
    """What to draw, in world Å. Spheres are the drawn atoms (index = atom ID); cylinders are half-bonds
    (owner = drawn atom index, colour = its colour); lines are cell edges (width ``line_px`` px).
    ``atom_index``/``tile``/``numbers`` map drawn atoms to the cell (see module docstring)."""

    sphere_centres: np.ndarray
    sphere_radii: np.ndarray
    sphere_colours: np.ndarray
    numbers: np.ndarray
    atom_index: np.ndarray
    tile: np.ndarray
    cylinder_starts: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    cylinder_ends: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    cylinder_radii: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cylinder_colours: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    cylinder_owner: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    line_starts: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    line_ends: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    line_colours: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    line_px: float = 1.4
    style: Style = field(default_factory=lambda: get_style("study"))
    tiling: tuple[int, int, int] = (1, 1, 1)

    def __post_init__(self) -> None:
        def arr(name, shape_tail, dtype=np.float64):
            a = np.ascontiguousarray(getattr(self, name), dtype=dtype)
            if a.ndim != 1 + len(shape_tail) or a.shape[1:] != shape_tail:
                raise InputError(f"scene {name} must have shape (n, {', '.join(map(str, shape_tail))}), "
                                 f"got {a.shape}", field=name)
            if dtype == np.float64 and not np.isfinite(a).all():
                raise InputError(f"scene {name} has non-finite entries", field=name)
            a.setflags(write=False)
            object.__setattr__(self, name, a)

        arr("sphere_centres", (3,))
        arr("sphere_radii", ())
        arr("sphere_colours", (3,))
        arr("numbers", (), np.int64)
        arr("atom_index", (), np.int64)
        arr("tile", (), np.int64)
        arr("cylinder_starts", (3,))
        arr("cylinder_ends", (3,))
        arr("cylinder_radii", ())
        arr("cylinder_colours", (3,))
        arr("cylinder_owner", (), np.int64)
        arr("line_starts", (3,))
        arr("line_ends", (3,))
        arr("line_colours", (3,))
        n = len(self.sphere_centres)
        for name in ("sphere_radii", "sphere_colours", "numbers", "atom_index", "tile"):
            if len(getattr(self, name)) != n:
                raise InputError(f"scene {name} must have {n} rows (one per sphere)", field=name)
        m = len(self.cylinder_starts)
        for name in ("cylinder_ends", "cylinder_radii", "cylinder_colours", "cylinder_owner"):
            if len(getattr(self, name)) != m:
                raise InputError(f"scene {name} must have {m} rows (one per cylinder)", field=name)
        if len(self.line_ends) != len(self.line_starts) or len(self.line_colours) != len(self.line_starts):
            raise InputError("scene line_starts, line_ends and line_colours must have the same length",
                             field="line_starts")
        if (self.sphere_radii <= 0).any() or (self.cylinder_radii <= 0).any():
            raise InputError("scene radii must be > 0 Å", field="sphere_radii")
        if not (np.isfinite(self.line_px) and self.line_px > 0):
            raise InputError(f"line_px must be > 0, got {self.line_px}", field="line_px")

    @property
    def n_atoms(self) -> int:
        return len(self.sphere_centres)

    def points(self) -> np.ndarray:
        """Every drawn point (sphere centres and line ends), for framing."""
        return np.concatenate([self.sphere_centres, self.line_starts, self.line_ends]).reshape(-1, 3)

    def id_mapping(self) -> dict:
        """The documented atom-ID mapping (for sidecars)."""
        return {
            "codes": {"background": ID_BACKGROUND, "bond": ID_BOND, "edge": ID_EDGE},
            "atom_id": "drawn atom k = tile * n_cell + cell_index, tiles in C order of the tiling (a slowest)",
            "tiling": list(self.tiling),
            "cell_index": self.atom_index.tolist(),
            "tile": self.tile.tolist(),
            "numbers": self.numbers.tolist(),
        }


def box_edges(lattice: np.ndarray, reps=(1, 1, 1)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 12 edges of the box spanned by reps × lattice rows: (starts (12, 3), ends (12, 3), axis (12,)),
    axis 0/1/2 = parallel to a/b/c."""
    corners = box_corners(lattice, reps).reshape(2, 2, 2, 3)
    starts, ends, axis = [], [], []
    for ax in range(3):
        for p in (0, 1):
            for q in (0, 1):
                idx0 = [0, 0, 0]
                others = [k for k in range(3) if k != ax]
                idx0[others[0]], idx0[others[1]] = p, q
                idx1 = list(idx0)
                idx1[ax] = 1
                starts.append(corners[tuple(idx0)])
                ends.append(corners[tuple(idx1)])
                axis.append(ax)
    return np.array(starts), np.array(ends), np.array(axis, dtype=np.int64)


def build_scene(
    structure: Structure,
    style: str | Style = "study",
    *,
    tiling=(1, 1, 1),
    radius_scale: float | None = None,
    radius: float | None = None,
    bonds: bool | None = None,
    edges: str = "supercell",
) -> Scene:
    """Scene of ``structure`` (tiled when periodic) in a style. ``radius_scale``/``radius``/``bonds``
    override the style. edges: ``"supercell"`` (the drawn box), ``"cells"`` (every cell of the tiling),
    ``"cell"`` (the origin cell) or ``"none"``; molecules have none."""
    st = get_style(style, radius_scale=radius_scale, radius=radius, bonds=bonds)
    tiling = tuple(int(x) for x in tiling)
    pos, num, idx, tile = drawn_atoms(structure, tiling)
    radii = st.atom_radii(num)
    kw: dict = {}
    if st.bonds:
        hb = half_bonds(structure, tiling, factor=st.bond_factor, stubs=st.bond_stubs)
        kw.update(
            cylinder_starts=hb.start,
            cylinder_ends=hb.end,
            cylinder_radii=np.full(len(hb), min(st.bond_radius, float(radii.min()) if len(radii) else 1.0)),
            cylinder_colours=jmol_colours(num[hb.owner]) if len(hb) else np.zeros((0, 3)),
            cylinder_owner=hb.owner,
        )
    if structure.is_periodic and st.edges and edges != "none":
        lat = structure.lattice
        if edges == "supercell":
            s, e, ax = box_edges(lat, tiling)
        elif edges == "cell":
            s, e, ax = box_edges(lat)
        elif edges == "cells":
            s0, e0, ax0 = box_edges(lat)
            shifts = tiling_translations(tiling) @ lat
            s = (shifts[:, None, :] + s0[None]).reshape(-1, 3)
            e = (shifts[:, None, :] + e0[None]).reshape(-1, 3)
            ax = np.tile(ax0, len(shifts))
            # drop repeated edges shared by neighbouring cells (exact: same float sums)
            key = np.round(np.concatenate([np.minimum(s, e), np.maximum(s, e)], axis=1), 9)
            _, first = np.unique(key, axis=0, return_index=True)
            first = np.sort(first)
            s, e, ax = s[first], e[first], ax[first]
        else:
            raise InputError(f"edges must be 'supercell', 'cells', 'cell' or 'none', got {edges!r}", field="edges")
        cols = (np.asarray(AXIS_COLOURS)[ax] if st.edges_by_axis
                else np.tile(np.asarray(st.edge_colour, dtype=np.float64), (len(ax), 1)))
        kw.update(line_starts=s, line_ends=e, line_colours=cols)
    return Scene(
        sphere_centres=pos, sphere_radii=radii, sphere_colours=jmol_colours(num), numbers=num, atom_index=idx,
        tile=tile, line_px=st.edge_px if st.edge_px > 0 else 1.0, style=st, tiling=tiling, **kw,
    )


# ============================================================================ kernels
#
# Primitive table ``prim`` (P, 12) float64, camera frame, one row per primitive:
#   0 kind (0 sphere, 1 cylinder, 2 line), 1..4 early-out box umin, umax, vmin, vmax (px),
#   sphere:   5..7 centre (Å), 8 radius, 9 squared inner radius of the outline ring
#   cylinder: 5..7 start, 8..10 end, 11 radius
#   line:     5 u0, 6 v0, 7 depth0, 8 u1, 9 v1, 10 depth1, 11 half-width (px)
# Camera ``cam`` (7,): persp flag, width, height, scale (px/Å), focal (px), cx, cy (px).
# Style ``params`` (13,): flat flag, outline rgb, unused, ambient, diffuse, background rgb, light xyz.


@njit(cache=True)
def _ray(u, v, persp, width, height, scale, focal, pcx, pcy):
    """Camera-frame ray through image point (u, v): origin, direction with d_z = −1 (so depth = t)."""
    if persp:
        return 0.0, 0.0, 0.0, (u - pcx) / focal, (pcy - v) / focal, -1.0
    return (u - 0.5 * width) / scale, (0.5 * height - v) / scale, 0.0, 0.0, 0.0, -1.0


@njit(cache=True)
def _sphere_t(ox, oy, dx, dy, persp, cx, cy, cz, r):
    """Depth of the front surface of a sphere along the ray, +inf on a miss (strictly inside only)."""
    if not persp:
        ex = ox - cx
        ey = oy - cy
        q = r * r - ex * ex - ey * ey
        if q <= 0.0:
            return np.inf
        return -cz - math.sqrt(q)
    b = dx * cx + dy * cy - cz
    a = dx * dx + dy * dy + 1.0
    cc = cx * cx + cy * cy + cz * cz - r * r
    disc = b * b - a * cc
    if disc <= 0.0:
        return np.inf
    t = (b - math.sqrt(disc)) / a
    if t <= 0.0:
        return np.inf
    return t


@njit(cache=True)
def _cylinder_hit(ox, oy, oz, dx, dy, dz, persp, p0x, p0y, p0z, p1x, p1y, p1z, r):
    """Entry (t, normal xyz) of the ray into a capped cylinder; t = +inf on a miss."""
    bax = p1x - p0x
    bay = p1y - p0y
    baz = p1z - p0z
    ocx = ox - p0x
    ocy = oy - p0y
    ocz = oz - p0z
    baba = bax * bax + bay * bay + baz * baz
    bard = bax * dx + bay * dy + baz * dz
    baoc = bax * ocx + bay * ocy + baz * ocz
    dd = dx * dx + dy * dy + dz * dz
    ocd = ocx * dx + ocy * dy + ocz * dz
    ococ = ocx * ocx + ocy * ocy + ocz * ocz
    best = np.inf
    nx = 0.0
    ny = 0.0
    nz = 0.0
    k2 = baba * dd - bard * bard
    if k2 > 1e-12 * baba * dd:
        k1 = baba * ocd - baoc * bard
        k0 = baba * ococ - baoc * baoc - r * r * baba
        h = k1 * k1 - k2 * k0
        if h > 0.0:
            t = (-k1 - math.sqrt(h)) / k2
            y = baoc + t * bard
            if 0.0 < y < baba and (t > 0.0 or not persp):
                best = t
                f = y / baba
                nx = (ocx + t * dx - bax * f) / r
                ny = (ocy + t * dy - bay * f) / r
                nz = (ocz + t * dz - baz * f) / r
    if abs(bard) > 1e-300:
        inv = 1.0 / math.sqrt(baba)
        for end in range(2):
            target = 0.0 if end == 0 else baba
            t = (target - baoc) / bard
            if t >= best or (persp and t <= 0.0):
                continue
            wx = ocx + t * dx
            wy = ocy + t * dy
            wz = ocz + t * dz
            along = bax * wx + bay * wy + baz * wz
            perp2 = wx * wx + wy * wy + wz * wz - along * along / baba
            if perp2 < r * r:
                best = t
                sgn = -1.0 if end == 0 else 1.0
                nx = sgn * bax * inv
                ny = sgn * bay * inv
                nz = sgn * baz * inv
    return best, nx, ny, nz


@njit(cache=True)
def _line_t(u, v, persp, u0, v0, d0, u1, v1, d1, hw):
    """Depth of a screen-space segment at (u, v) when within hw px of it, else +inf."""
    eu = u1 - u0
    ev = v1 - v0
    l2 = eu * eu + ev * ev
    s = 0.0
    if l2 > 0.0:
        s = ((u - u0) * eu + (v - v0) * ev) / l2
        if s < 0.0:
            s = 0.0
        elif s > 1.0:
            s = 1.0
    pu = u0 + s * eu - u
    pv = v0 + s * ev - v
    if pu * pu + pv * pv >= hw * hw:
        return np.inf
    if persp:
        return 1.0 / ((1.0 - s) / d0 + s / d1)
    return d0 + s * (d1 - d0)


# Hot loops call only scalar helpers: passing arrays to a non-inlined numba function costs reference
# counting per call, so every routine below that takes arrays works on a whole batch of samples.


@njit(cache=True)
def _sphere_t_ortho(ox, oy, cx, cy, cz, r):
    """Orthographic ray (origin (ox, oy, 0), direction −z): depth of the sphere's front surface, +inf on a
    miss (strictly inside). The one formula both the tracer and the z-buffer use, so they agree bit for bit."""
    ex = ox - cx
    ey = oy - cy
    qq = r * r - ex * ex - ey * ey
    if qq > 0.0:
        return -cz - math.sqrt(qq)
    return np.inf


@njit(cache=True)
def _sphere_t_persp(dx, dy, a, cx, cy, cz, r):
    """Perspective ray t·(dx, dy, −1) from the pinhole, a = dx² + dy² + 1: depth of the front surface."""
    b = dx * cx + dy * cy - cz
    disc = b * b - a * (cx * cx + cy * cy + cz * cz - r * r)
    if disc > 0.0:
        t = (b - math.sqrt(disc)) / a
        if t > 0.0:
            return t
    return np.inf


@njit(cache=True)
def _other_t(u, v, ox, oy, dx, dy, persp, kind, g0, g1, g2, g3, g4, g5, g6):
    """Depth of a cylinder (kind 1) or screen line (kind 2) at the sample, +inf on a miss."""
    if kind == 1.0:
        return _cylinder_hit(ox, oy, 0.0, dx, dy, -1.0, persp, g0, g1, g2, g3, g4, g5, g6)[0]
    return _line_t(u, v, persp, g0, g1, g2, g3, g4, g5, g6)


@njit(cache=True)
def _trace_batch(us, vs, n, prim, items, c0, c1, cam, out_p, out_t):
    """For samples (us[s], vs[s]), s < n: nearest primitive among items[c0:c1] and its depth (−1, +inf on
    a miss); see ``_trace_groups``."""
    bounds = np.empty(2, dtype=np.int64)
    bounds[0] = c0
    bounds[1] = c1
    _trace_groups(us, vs, n, max(n, 1), prim, items, bounds, cam, out_p, out_t)


@njit(cache=True)
def _trace_groups(us, vs, n, group, prim, items, gstart, cam, out_p, out_t):
    """For samples (us[s], vs[s]), s < n, in groups of ``group`` consecutive samples: nearest primitive
    among the group's candidates items[gstart[g]:gstart[g + 1]] (g = s // group) and its depth (−1, +inf
    on a miss). Ties keep the lower primitive index (candidates ascend and every comparison is strict).
    Spheres (the lowest indices) are tested first in a tight loop, then cylinders and lines."""
    persp = cam[0] > 0.5
    width = cam[1]
    height = cam[2]
    scale = cam[3]
    focal = cam[4]
    pcx = cam[5]
    pcy = cam[6]
    inv_scale = 1.0 / scale
    inv_focal = 1.0 / focal
    g = -1
    left = 0
    c0 = 0
    c1 = 0
    c_split = 0
    for s in range(n):
        if left == 0:
            g += 1
            left = group
            c0 = gstart[g]
            c1 = gstart[g + 1]
            c_split = c0
            while c_split < c1 and prim[items[c_split], 0] == 0.0:
                c_split += 1
        left -= 1
        u = us[s]
        v = vs[s]
        best_t = np.inf
        best_p = -1
        if persp:
            ox = 0.0
            oy = 0.0
            dx = (u - pcx) * inv_focal
            dy = (pcy - v) * inv_focal
            a = dx * dx + dy * dy + 1.0
            for q in range(c0, c_split):
                p = items[q]
                if u < prim[p, 1] or u > prim[p, 2] or v < prim[p, 3] or v > prim[p, 4]:
                    continue
                t = _sphere_t_persp(dx, dy, a, prim[p, 5], prim[p, 6], prim[p, 7], prim[p, 8])
                if t < best_t:
                    best_t = t
                    best_p = p
        else:
            ox = (u - 0.5 * width) * inv_scale
            oy = (0.5 * height - v) * inv_scale
            dx = 0.0
            dy = 0.0
            for q in range(c0, c_split):
                p = items[q]
                if u < prim[p, 1] or u > prim[p, 2] or v < prim[p, 3] or v > prim[p, 4]:
                    continue
                t = _sphere_t_ortho(ox, oy, prim[p, 5], prim[p, 6], prim[p, 7], prim[p, 8])
                if t < best_t:
                    best_t = t
                    best_p = p
        for q in range(c_split, c1):  # cylinders and lines: rare, out of the hot loop above
            p = items[q]
            if u < prim[p, 1] or u > prim[p, 2] or v < prim[p, 3] or v > prim[p, 4]:
                continue
            t = _other_t(u, v, ox, oy, dx, dy, persp, prim[p, 0], prim[p, 5], prim[p, 6], prim[p, 7], prim[p, 8],
                         prim[p, 9], prim[p, 10], prim[p, 11])
            if t < best_t:
                best_t = t
                best_p = p
        out_p[s] = best_p
        out_t[s] = best_t


@njit(cache=True)
def _outline_flag(u, v, persp, width, height, scale, focal, pcx, pcy, cx, cy, cz, r_in2):
    """1 when (u, v) falls in the outline ring of a sphere (perpendicular ray distance ≥ inner radius)."""
    ox, oy, oz, dx, dy, dz = _ray(u, v, persp, width, height, scale, focal, pcx, pcy)
    if persp:
        b = dx * cx + dy * cy + dz * cz
        perp2 = cx * cx + cy * cy + cz * cz - b * b / (dx * dx + dy * dy + dz * dz)
    else:
        ex = ox - cx
        ey = oy - cy
        perp2 = ex * ex + ey * ey
    return 1 if perp2 >= r_in2 else 0


@njit(cache=True)
def _shade_batch(us, vs, ps, ts, n, prim, col, params, cam, out, out_c):
    """Colour (float rgb) of each sample: background, flat (with outline ring) or Lambert + ambient; and its
    surface class for anti-aliasing decisions, 2 × primitive + outline flag (out_c, when it has n rows)."""
    persp = cam[0] > 0.5
    flat = params[0] > 0.5
    want_c = out_c.shape[0] >= n
    for s in range(n):
        p = ps[s]
        if p < 0:
            out[s, 0] = params[7]
            out[s, 1] = params[8]
            out[s, 2] = params[9]
            if want_c:
                out_c[s] = -2
            continue
        k = prim[p, 0]
        r0 = col[p, 0]
        g0 = col[p, 1]
        b0 = col[p, 2]
        if want_c:
            out_c[s] = 2 * p
        if k == 2.0 or (flat and k == 1.0):
            out[s, 0] = r0
            out[s, 1] = g0
            out[s, 2] = b0
            continue
        u = us[s]
        v = vs[s]
        if flat:
            if _outline_flag(u, v, persp, cam[1], cam[2], cam[3], cam[4], cam[5], cam[6], prim[p, 5], prim[p, 6],
                             prim[p, 7], prim[p, 9]) == 1:
                out[s, 0] = params[1]
                out[s, 1] = params[2]
                out[s, 2] = params[3]
                if want_c:
                    out_c[s] = 2 * p + 1
            else:
                out[s, 0] = r0
                out[s, 1] = g0
                out[s, 2] = b0
            continue
        t = ts[s]
        ox, oy, oz, dx, dy, dz = _ray(u, v, persp, cam[1], cam[2], cam[3], cam[4], cam[5], cam[6])
        if k == 0.0:
            rr = prim[p, 8]
            nx = (ox + t * dx - prim[p, 5]) / rr
            ny = (oy + t * dy - prim[p, 6]) / rr
            nz = (oz + t * dz - prim[p, 7]) / rr
        else:
            _, nx, ny, nz = _cylinder_hit(ox, oy, oz, dx, dy, dz, persp, prim[p, 5], prim[p, 6], prim[p, 7],
                                          prim[p, 8], prim[p, 9], prim[p, 10], prim[p, 11])
        lam = nx * params[10] + ny * params[11] + nz * params[12]
        if lam < 0.0:
            lam = 0.0
        inten = params[5] + params[6] * lam
        out[s, 0] = r0 * inten
        out[s, 1] = g0 * inten
        out[s, 2] = b0 * inten


@njit(cache=True)
def _to_byte(x):
    if x <= 0.0:
        return 0
    if x >= 1.0:
        return 255
    return int(math.floor(255.0 * x + 0.5))


@njit(cache=True)
def _tile_keeps(prim, p, tx, ty, tile):
    """Lines are listed only in tiles they pass near (their early-out box is far too large)."""
    if prim[p, 0] != 2.0:
        return True
    uc = (tx + 0.5) * tile
    vc = (ty + 0.5) * tile
    reach = prim[p, 11] + 1.0 + 0.7072 * tile
    return _line_t(uc, vc, False, prim[p, 5], prim[p, 6], 0.0, prim[p, 8], prim[p, 9], 0.0, reach) < np.inf


@njit(cache=True)
def _bin_primitives(prim, tile, n_tx, n_ty):
    """CSR lists of primitives per screen tile (row-major tiles), primitives ascending. A primitive is listed
    in every tile its early-out box, grown by 1 px, touches (so sub-samples near a tile's border are
    covered); a line only in those of them its segment passes within half-width + 1 px of."""
    n_tiles = n_tx * n_ty
    counts = np.zeros(n_tiles + 1, dtype=np.int64)
    npr = prim.shape[0]
    rng = np.empty((npr, 4), dtype=np.int64)
    for p in range(npr):
        tx0 = max(int(math.floor((prim[p, 1] - 1.0) / tile)), 0)
        tx1 = min(int(math.floor((prim[p, 2] + 1.0) / tile)), n_tx - 1)
        ty0 = max(int(math.floor((prim[p, 3] - 1.0) / tile)), 0)
        ty1 = min(int(math.floor((prim[p, 4] + 1.0) / tile)), n_ty - 1)
        rng[p, 0] = tx0
        rng[p, 1] = tx1
        rng[p, 2] = ty0
        rng[p, 3] = ty1
        for ty in range(ty0, ty1 + 1):
            for tx in range(tx0, tx1 + 1):
                if _tile_keeps(prim, p, tx, ty, tile):
                    counts[ty * n_tx + tx + 1] += 1
    for k in range(n_tiles):
        counts[k + 1] += counts[k]
    items = np.empty(counts[n_tiles], dtype=np.int64)
    fill = counts[:n_tiles].copy()
    for p in range(npr):
        for ty in range(rng[p, 2], rng[p, 3] + 1):
            for tx in range(rng[p, 0], rng[p, 1] + 1):
                if _tile_keeps(prim, p, tx, ty, tile):
                    k = ty * n_tx + tx
                    items[fill[k]] = p
                    fill[k] += 1
    return counts, items


@njit(cache=True)
def _tile_bounds(tk, tile, width, height):
    n_tx = (width + tile - 1) // tile
    ty = tk // n_tx
    tx = tk - ty * n_tx
    i0 = ty * tile
    j0 = tx * tile
    return i0, j0, min(i0 + tile, height), min(j0 + tile, width)


@njit(cache=True)
def _capsule_span(v, u0, v0, u1, v1, h, ulo, uhi):
    """A u-interval (lo, hi) containing every point of row v within h of the 2D segment (u0, v0)–(u1, v1),
    clipped to [ulo, uhi]; lo > hi when the row misses it."""
    ev = v1 - v0
    if abs(ev) > 1e-9:
        eu = u1 - u0
        uc = u0 + (v - v0) * eu / ev
        half = h * math.sqrt(eu * eu + ev * ev) / abs(ev)
        return max(uc - half, ulo), min(uc + half, uhi)
    if abs(v - v0) <= h:
        return ulo, uhi
    return 1.0, 0.0


@njit(cache=True)
def _zbuffer_rows(r0, r1, prim, cam, pidx, depth):
    """Pixel centres of rows r0..r1−1, primitive by primitive (ascending, strict depth test, so ties keep
    the lower index exactly as the per-pixel tracer does): pidx = nearest primitive (−1 none), depth.
    Each primitive visits only the pixels of its row spans (spheres: the exact chord ± 1 px; cylinders and
    lines: the strip around their projected axis), and every visited pixel gets the exact ray test."""
    width = int(cam[1])
    height = int(cam[2])
    persp = cam[0] > 0.5
    scale = cam[3]
    inv_scale = 1.0 / scale
    inv_focal = 1.0 / cam[4]
    pcx = cam[5]
    pcy = cam[6]
    for i in range(r0, r1):
        for j in range(width):
            pidx[i, j] = -1
            depth[i, j] = np.inf
    for p in range(prim.shape[0]):
        kind = prim[p, 0]
        ulo = prim[p, 1]
        uhi = prim[p, 2]
        vlo = prim[p, 3]
        vhi = prim[p, 4]
        i_start = max(r0, int(math.ceil(vlo - 0.5)))
        i_stop = min(r1, int(math.floor(vhi - 0.5)) + 1)
        if i_start >= i_stop or uhi < 0.0 or ulo > width:
            continue
        cx = prim[p, 5]
        cy = prim[p, 6]
        for i in range(i_start, i_stop):
            v = i + 0.5
            lo = ulo
            hi = uhi
            if kind == 0.0 and not persp:
                ey = (0.5 * height - v) * inv_scale - cy
                q = prim[p, 8] * prim[p, 8] - ey * ey
                if q < 0.0:
                    continue
                uc = 0.5 * width + cx * scale
                half = math.sqrt(q) * scale + 1.0
                lo = max(lo, uc - half)
                hi = min(hi, uc + half)
            elif kind == 2.0:
                lo, hi = _capsule_span(v, prim[p, 5], prim[p, 6], prim[p, 8], prim[p, 9], prim[p, 11] + 1.0, lo, hi)
            elif kind == 1.0 and not persp:
                h = prim[p, 11] * scale + 1.0
                lo, hi = _capsule_span(v, 0.5 * width + cx * scale, 0.5 * height - cy * scale,
                                       0.5 * width + prim[p, 8] * scale, 0.5 * height - prim[p, 9] * scale, h, lo, hi)
            j_start = max(0, int(math.ceil(lo - 0.5)))
            j_stop = min(width, int(math.floor(hi - 0.5)) + 1)
            for j in range(j_start, j_stop):
                u = j + 0.5
                if u < ulo or u > uhi or v < vlo or v > vhi:
                    continue
                if persp:
                    ox = 0.0
                    oy = 0.0
                    dx = (u - pcx) * inv_focal
                    dy = (pcy - v) * inv_focal
                else:
                    ox = (u - 0.5 * width) * inv_scale
                    oy = (0.5 * height - v) * inv_scale
                    dx = 0.0
                    dy = 0.0
                if kind == 0.0:
                    if persp:
                        t = _sphere_t_persp(dx, dy, dx * dx + dy * dy + 1.0, cx, cy, prim[p, 7], prim[p, 8])
                    else:
                        t = _sphere_t_ortho(ox, oy, cx, cy, prim[p, 7], prim[p, 8])
                else:
                    t = _other_t(u, v, ox, oy, dx, dy, persp, kind, cx, cy, prim[p, 7], prim[p, 8], prim[p, 9],
                                 prim[p, 10], prim[p, 11])
                if t < depth[i, j]:
                    depth[i, j] = t
                    pidx[i, j] = p


@njit(cache=True)
def _shade_rows(r0, r1, prim, code, col, cam, params, want_rgb, pidx, depth, ids, rgb, cls):
    """IDs from primitive indices; with ``want_rgb`` the centre sample's colour and surface class. ``cls``
    may be the same buffer as ``pidx``: a row's primitive indices are read before its classes are written."""
    width = int(cam[1])
    bg0 = _to_byte(params[7])
    bg1 = _to_byte(params[8])
    bg2 = _to_byte(params[9])
    us = np.empty(width)
    vs = np.empty(width)
    ps = np.empty(width, dtype=np.int64)
    ts = np.empty(width)
    colour = np.empty((width, 3))
    kc = np.empty(width, dtype=np.int64)
    for i in range(r0, r1):
        n = 0
        for j in range(width):
            p = pidx[i, j]
            if p < 0:
                ids[i, j] = -1
                if want_rgb:
                    cls[i, j] = -2
                    rgb[i, j, 0] = bg0
                    rgb[i, j, 1] = bg1
                    rgb[i, j, 2] = bg2
            else:
                ids[i, j] = code[p]
                if want_rgb:
                    us[n] = j + 0.5
                    vs[n] = i + 0.5
                    ps[n] = p
                    ts[n] = depth[i, j]
                    n += 1
        if n == 0:
            continue
        _shade_batch(us, vs, ps, ts, n, prim, col, params, cam, colour, kc)
        for k in range(n):
            j = int(us[k])
            cls[i, j] = kc[k]
            rgb[i, j, 0] = _to_byte(colour[k, 0])
            rgb[i, j, 1] = _to_byte(colour[k, 1])
            rgb[i, j, 2] = _to_byte(colour[k, 2])


@njit(cache=True)
def _circle_near(ox, oy, cx, cy, r, r_in2, flat, scale):
    """True when an orthographic sample (camera-plane ox, oy) lies within half a pixel diagonal of a
    sphere's silhouette circle or, in the flat style, of its outline-ring circle."""
    rho = math.sqrt((ox - cx) * (ox - cx) + (oy - cy) * (oy - cy)) * scale
    if abs(rho - r * scale) < 0.7072:
        return True
    return flat and abs(rho - math.sqrt(r_in2) * scale) < 0.7072


@njit(cache=True)
def _may_cross(ox, oy, flat, scale, k1, a1, b1, c1, r1, q1, k2, a2, b2, c2, r2, q2):
    """Can the boundary between the surfaces seen at two neighbouring pixel centres cross the pixel whose
    centre is (ox, oy)? Exact "no" only for orthographic views where both sides are spheres (kind 0) or
    background (kind −1) and the two spheres do not intersect in 3D: the boundary is then one of their
    silhouette or outline circles, and it must pass within half a pixel diagonal of the centre."""
    if k1 > 0.0 or k2 > 0.0:
        return True
    if k1 == 0.0 and k2 == 0.0 and (a1 != a2 or b1 != b2 or c1 != c2):
        d2 = (a1 - a2) * (a1 - a2) + (b1 - b2) * (b1 - b2) + (c1 - c2) * (c1 - c2)
        if d2 < (r1 + r2) * (r1 + r2):
            return True
    if k1 == 0.0 and _circle_near(ox, oy, a1, b1, r1, q1, flat, scale):
        return True
    return k2 == 0.0 and _circle_near(ox, oy, a2, b2, r2, q2, flat, scale)


@njit(cache=True)
def _aa_tile(tk, prim, col, cam, params, ss, tile, starts, items, rgb, cls, full):
    """Pass 2 for one screen tile: a pixel whose class differs from one of its 4 neighbours' (where the
    boundary between the two can cross it, see ``_may_cross``), or that lies within half-width + 0.75 px
    of an edge line, gets the mean colour of an ss × ss sample grid."""
    width = int(cam[1])
    height = int(cam[2])
    i0, j0, i1, j1 = _tile_bounds(tk, tile, width, height)
    ni = i1 - i0
    nj = j1 - j0
    c0 = starts[tk]
    c1 = starts[tk + 1]
    if c0 == c1:
        return
    lines = np.empty(c1 - c0, dtype=np.int64)
    n_lines = 0
    for q in range(c0, c1):
        if prim[items[q], 0] == 2.0:
            lines[n_lines] = items[q]
            n_lines += 1
    has_line = n_lines > 0
    edge = np.empty(ni * nj, dtype=np.int64)
    n_edge = 0
    persp = cam[0] > 0.5
    flat = params[0] > 0.5
    scale = cam[3]
    for i in range(i0, i1):
        for j in range(j0, j1):
            c = cls[i, j]
            e = False
            differs = ((i > 0 and cls[i - 1, j] != c) or (i + 1 < height and cls[i + 1, j] != c)
                       or (j > 0 and cls[i, j - 1] != c) or (j + 1 < width and cls[i, j + 1] != c))
            if full:
                edge[n_edge] = (i - i0) * nj + (j - j0)
                n_edge += 1
                continue
            if not differs:
                if has_line:
                    for q in range(n_lines):
                        pl = lines[q]
                        if _line_t(j + 0.5, i + 0.5, False, prim[pl, 5], prim[pl, 6], 0.0, prim[pl, 8], prim[pl, 9],
                                   0.0, prim[pl, 11] + 0.75) < np.inf:
                            edge[n_edge] = (i - i0) * nj + (j - j0)
                            n_edge += 1
                            break
                continue
            p1 = c // 2 if c >= 0 else -1
            k1 = -1.0 if p1 < 0 else prim[p1, 0]
            a1 = 0.0 if p1 < 0 else prim[p1, 5]
            b1 = 0.0 if p1 < 0 else prim[p1, 6]
            z1 = 0.0 if p1 < 0 else prim[p1, 7]
            r1 = 0.0 if p1 < 0 else prim[p1, 8]
            q1 = 0.0 if p1 < 0 else prim[p1, 9]
            ox = (j + 0.5 - 0.5 * width) / scale
            oy = (0.5 * height - i - 0.5) / scale
            for nb in range(4):
                ii = i + (-1 if nb == 0 else (1 if nb == 1 else 0))
                jj = j + (-1 if nb == 2 else (1 if nb == 3 else 0))
                if ii < 0 or ii >= height or jj < 0 or jj >= width:
                    continue
                c2 = cls[ii, jj]
                if c2 == c:
                    continue
                if persp:
                    e = True
                    break
                p2 = c2 // 2 if c2 >= 0 else -1
                if p2 < 0:
                    e = _may_cross(ox, oy, flat, scale, k1, a1, b1, z1, r1, q1, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
                else:
                    e = _may_cross(ox, oy, flat, scale, k1, a1, b1, z1, r1, q1, prim[p2, 0], prim[p2, 5],
                                   prim[p2, 6], prim[p2, 7], prim[p2, 8], prim[p2, 9])
                if e:
                    break
            if not e and has_line:
                for q in range(n_lines):
                    pl = lines[q]
                    if _line_t(j + 0.5, i + 0.5, False, prim[pl, 5], prim[pl, 6], 0.0, prim[pl, 8], prim[pl, 9], 0.0,
                               prim[pl, 11] + 0.75) < np.inf:
                        e = True
                        break
            if e:
                edge[n_edge] = (i - i0) * nj + (j - j0)
                n_edge += 1
    if n_edge == 0:
        return
    # per edge pixel, the tile's candidates whose early-out box meets the pixel square
    gstart = np.empty(n_edge + 1, dtype=np.int64)
    loc = np.empty(n_edge * (c1 - c0), dtype=np.int64)
    fast = np.zeros(n_edge, dtype=np.bool_)
    nl = 0
    for e in range(n_edge):
        a = edge[e] // nj
        b = edge[e] - a * nj
        gstart[e] = nl
        u_lo = float(j0 + b)
        v_lo = float(i0 + a)
        for q in range(c0, c1):
            p = items[q]
            if prim[p, 2] >= u_lo and prim[p, 1] <= u_lo + 1.0 and prim[p, 4] >= v_lo and prim[p, 3] <= v_lo + 1.0:
                if prim[p, 0] == 2.0 and _line_t(u_lo + 0.5, v_lo + 0.5, False, prim[p, 5], prim[p, 6], 0.0,
                                                 prim[p, 8], prim[p, 9], 0.0, prim[p, 11] + 0.71) == np.inf:
                    continue  # a line's box meets the square but the line does not reach it
                loc[nl] = p
                nl += 1
        fast[e] = not persp
    gstart[n_edge] = nl
    inv = 1.0 / (ss * ss)
    inv_scale = 1.0 / scale
    # fast path (orthographic): the tracer's per-primitive tests and the shading, inline per sub-sample
    n_slow = 0
    for e in range(n_edge):
        if not fast[e]:
            n_slow += 1
            continue
        a = edge[e] // nj
        b = edge[e] - a * nj
        acc0 = 0.0
        acc1 = 0.0
        acc2 = 0.0
        for aa in range(ss):
            v = i0 + a + (aa + 0.5) / ss
            oy = (0.5 * height - v) * inv_scale
            for bb in range(ss):
                u = j0 + b + (bb + 0.5) / ss
                ox = (u - 0.5 * width) * inv_scale
                best_t = np.inf
                best_p = -1
                for q in range(gstart[e], gstart[e + 1]):
                    p = loc[q]
                    if u < prim[p, 1] or u > prim[p, 2] or v < prim[p, 3] or v > prim[p, 4]:
                        continue
                    if prim[p, 0] == 0.0:
                        t = _sphere_t_ortho(ox, oy, prim[p, 5], prim[p, 6], prim[p, 7], prim[p, 8])
                    else:
                        t = _other_t(u, v, ox, oy, 0.0, 0.0, False, prim[p, 0], prim[p, 5], prim[p, 6], prim[p, 7],
                                     prim[p, 8], prim[p, 9], prim[p, 10], prim[p, 11])
                    if t < best_t:
                        best_t = t
                        best_p = p
                if best_p < 0:
                    acc0 += params[7]
                    acc1 += params[8]
                    acc2 += params[9]
                    continue
                kind = prim[best_p, 0]
                if kind == 2.0 or (flat and kind == 1.0):
                    acc0 += col[best_p, 0]
                    acc1 += col[best_p, 1]
                    acc2 += col[best_p, 2]
                    continue
                if kind == 1.0:
                    _, nx, ny, nz = _cylinder_hit(ox, oy, 0.0, 0.0, 0.0, -1.0, False, prim[best_p, 5],
                                                  prim[best_p, 6], prim[best_p, 7], prim[best_p, 8], prim[best_p, 9],
                                                  prim[best_p, 10], prim[best_p, 11])
                    lam = nx * params[10] + ny * params[11] + nz * params[12]
                    if lam < 0.0:
                        lam = 0.0
                    inten = params[5] + params[6] * lam
                    acc0 += col[best_p, 0] * inten
                    acc1 += col[best_p, 1] * inten
                    acc2 += col[best_p, 2] * inten
                    continue
                ex = ox - prim[best_p, 5]
                ey = oy - prim[best_p, 6]
                if flat:
                    if ex * ex + ey * ey >= prim[best_p, 9]:
                        acc0 += params[1]
                        acc1 += params[2]
                        acc2 += params[3]
                    else:
                        acc0 += col[best_p, 0]
                        acc1 += col[best_p, 1]
                        acc2 += col[best_p, 2]
                else:
                    rr = prim[best_p, 8]
                    lam = (ex * params[10] + ey * params[11] + (-best_t - prim[best_p, 7]) * params[12]) / rr
                    if lam < 0.0:
                        lam = 0.0
                    inten = params[5] + params[6] * lam
                    acc0 += col[best_p, 0] * inten
                    acc1 += col[best_p, 1] * inten
                    acc2 += col[best_p, 2] * inten
        rgb[i0 + a, j0 + b, 0] = _to_byte(acc0 * inv)
        rgb[i0 + a, j0 + b, 1] = _to_byte(acc1 * inv)
        rgb[i0 + a, j0 + b, 2] = _to_byte(acc2 * inv)
    if n_slow == 0:
        return
    # general path: batch trace + shade of every sub-sample
    m = n_slow * ss * ss
    su = np.empty(m)
    sv = np.empty(m)
    gs = np.empty(n_slow + 1, dtype=np.int64)
    slow = np.empty(n_slow, dtype=np.int64)
    k = 0
    for e in range(n_edge):
        if fast[e]:
            continue
        slow[k] = e
        gs[k] = gstart[e]
        a = edge[e] // nj
        b = edge[e] - a * nj
        for aa in range(ss):
            for bb in range(ss):
                r = (k * ss + aa) * ss + bb
                su[r] = j0 + b + (bb + 0.5) / ss
                sv[r] = i0 + a + (aa + 0.5) / ss
        k += 1
    # candidate lists of the slow pixels, contiguous
    loc2 = np.empty(nl, dtype=np.int64)
    n2 = 0
    for k in range(n_slow):
        e = slow[k]
        gs[k] = n2
        for q in range(gstart[e], gstart[e + 1]):
            loc2[n2] = loc[q]
            n2 += 1
    gs[n_slow] = n2
    sp = np.empty(m, dtype=np.int64)
    st = np.empty(m)
    sc = np.empty((m, 3))
    _trace_groups(su, sv, m, ss * ss, prim, loc2, gs, cam, sp, st)
    _shade_batch(su, sv, sp, st, m, prim, col, params, cam, sc, np.empty(0, dtype=np.int64))
    for k in range(n_slow):
        e = slow[k]
        a = edge[e] // nj
        b = edge[e] - a * nj
        for ch in range(3):
            acc = 0.0
            for r in range(k * ss * ss, (k + 1) * ss * ss):
                acc += sc[r, ch]
            rgb[i0 + a, j0 + b, ch] = _to_byte(acc * inv)


ROWS_PER_BAND = 16


@njit(cache=True, parallel=True)
def _render_kernel(prim, code, col, cam, params, ss, tile, want_rgb, starts, items, rgb, ids, depth, cls, pidx,
                   full):
    """Pass 1 (bands of rows in parallel): z-buffer of pixel centres, then IDs and centre colours; pass 2
    (screen tiles in parallel): anti-aliasing of edge pixels. Every pixel is written by one band/tile."""
    height = int(cam[2])
    n_bands = (height + ROWS_PER_BAND - 1) // ROWS_PER_BAND
    for b in prange(n_bands):
        r0 = b * ROWS_PER_BAND
        r1 = min(r0 + ROWS_PER_BAND, height)
        _zbuffer_rows(r0, r1, prim, cam, pidx, depth)
        _shade_rows(r0, r1, prim, code, col, cam, params, want_rgb, pidx, depth, ids, rgb, cls)
    if want_rgb and ss > 1:
        for tk in prange(len(starts) - 1):
            _aa_tile(tk, prim, col, cam, params, ss, tile, starts, items, rgb, cls, full)


@njit(cache=True)
def _render_serial(prim, code, col, cam, params, ss, tile, want_rgb, starts, items, rgb, ids, depth, cls, pidx,
                   full):
    height = int(cam[2])
    _zbuffer_rows(0, height, prim, cam, pidx, depth)
    _shade_rows(0, height, prim, code, col, cam, params, want_rgb, pidx, depth, ids, rgb, cls)
    if want_rgb and ss > 1:
        for tk in range(len(starts) - 1):
            _aa_tile(tk, prim, col, cam, params, ss, tile, starts, items, rgb, cls, full)


@njit(cache=True)
def _silhouette_counts(prim, n_spheres, cam):
    """Pixel centres inside each sphere's silhouette, the sphere alone (the renderer's own ray test)."""
    width = int(cam[1])
    height = int(cam[2])
    out = np.zeros(n_spheres, dtype=np.int64)
    one = np.zeros(1, dtype=np.int64)
    for p in range(n_spheres):
        j0 = max(int(math.floor(prim[p, 1])), 0)
        j1 = min(int(math.ceil(prim[p, 2])), width - 1)
        i0 = max(int(math.floor(prim[p, 3])), 0)
        i1 = min(int(math.ceil(prim[p, 4])), height - 1)
        if j1 < j0 or i1 < i0:
            continue
        nj = j1 - j0 + 1
        n = (i1 - i0 + 1) * nj
        us = np.empty(n)
        vs = np.empty(n)
        for a in range(i1 - i0 + 1):
            for b in range(nj):
                us[a * nj + b] = j0 + b + 0.5
                vs[a * nj + b] = i0 + a + 0.5
        bp = np.empty(n, dtype=np.int64)
        bt = np.empty(n)
        one[0] = p
        _trace_batch(us, vs, n, prim, one, 0, 1, cam, bp, bt)
        c = 0
        for s in range(n):
            if bp[s] == p:
                c += 1
        out[p] = c
    return out


# ============================================================================ Python side


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


def prepare(scene: Scene, camera: Camera) -> dict:
    """Kernel inputs: the camera-frame primitive table ``prim`` (see the kernel section), ID codes,
    colours, camera and style parameter vectors (all contiguous)."""
    persp, scale, focal, pcx, pcy = _camera_params(camera)
    origin = camera.position if persp else camera.center
    rot = camera.rotation
    st = scene.style
    n = scene.n_atoms
    m = len(scene.cylinder_starts)
    nl = len(scene.line_starts)
    prim = np.zeros((n + m + nl, 12), dtype=np.float64)
    sc = (scene.sphere_centres - origin) @ rot.T
    r = scene.sphere_radii
    _check_in_front(camera, -sc[:, 2] - r, "atoms")
    # squared inner radius of the outline ring (Å): r − outline_px × (Å per px at the centre depth)
    px_size = (-sc[:, 2] / focal) if persp else np.full(n, 1.0 / scale)
    r_in = np.maximum(r - st.outline_px * px_size, 0.0) if st.shading == "flat" and st.outline_px > 0 else r
    prim[:n, 0] = KIND_SPHERE
    prim[:n, 1:5] = _ball_bbox(sc, r, camera) if n else np.zeros((0, 4))
    prim[:n, 5:8] = sc
    prim[:n, 8] = r
    prim[:n, 9] = r_in * r_in
    if m:
        c0 = (scene.cylinder_starts - origin) @ rot.T
        c1 = (scene.cylinder_ends - origin) @ rot.T
        rc = scene.cylinder_radii
        _check_in_front(camera, np.concatenate([-c0[:, 2] - rc, -c1[:, 2] - rc]), "bonds")
        b0 = _ball_bbox(c0, rc, camera)
        b1 = _ball_bbox(c1, rc, camera)
        cyl = prim[n:n + m]
        cyl[:, 0] = KIND_CYLINDER
        cyl[:, 1] = np.minimum(b0[:, 0], b1[:, 0])
        cyl[:, 2] = np.maximum(b0[:, 1], b1[:, 1])
        cyl[:, 3] = np.minimum(b0[:, 2], b1[:, 2])
        cyl[:, 4] = np.maximum(b0[:, 3], b1[:, 3])
        cyl[:, 5:8] = c0
        cyl[:, 8:11] = c1
        cyl[:, 11] = rc
    hw = 0.5 * float(scene.line_px)
    if nl:
        uv0, d0 = _project_cam((scene.line_starts - origin) @ rot.T, camera)
        uv1, d1 = _project_cam((scene.line_ends - origin) @ rot.T, camera)
        _check_in_front(camera, np.concatenate([d0, d1]), "cell edges")
        lin = prim[n + m:]
        lin[:, 0] = KIND_LINE
        lin[:, 1] = np.minimum(uv0[:, 0], uv1[:, 0]) - hw
        lin[:, 2] = np.maximum(uv0[:, 0], uv1[:, 0]) + hw
        lin[:, 3] = np.minimum(uv0[:, 1], uv1[:, 1]) - hw
        lin[:, 4] = np.maximum(uv0[:, 1], uv1[:, 1]) + hw
        lin[:, 5:7] = uv0
        lin[:, 7] = d0
        lin[:, 8:10] = uv1
        lin[:, 10] = d1
        lin[:, 11] = hw
    prim[:, 1] -= BBOX_SLACK_PX
    prim[:, 3] -= BBOX_SLACK_PX
    prim[:, 2] += BBOX_SLACK_PX
    prim[:, 4] += BBOX_SLACK_PX
    code = np.concatenate([np.arange(n), np.full(m, ID_BOND), np.full(nl, ID_EDGE)]).astype(np.int64)
    col = np.ascontiguousarray(np.concatenate([scene.sphere_colours, scene.cylinder_colours, scene.line_colours])
                               .reshape(-1, 3), dtype=np.float64)
    light = np.asarray(st.light, dtype=np.float64)
    light = light / np.linalg.norm(light)
    params = np.array([1.0 if st.shading == "flat" else 0.0, *st.outline_colour, 0.0, st.ambient, st.diffuse,
                       *st.background, *light], dtype=np.float64)
    cam = np.array([1.0 if persp else 0.0, camera.width, camera.height, scale, focal, pcx, pcy], dtype=np.float64)
    return dict(prim=prim, code=code, col=col, cam=cam, params=params)


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
    ``parallel=True`` runs row bands and screen tiles on numba's threads (same bytes either way; worth it
    for single large images on an idle machine, not inside a pool of worker processes, where the threads
    of every process compete); ``adaptive=False`` supersamples every pixel of every non-empty tile
    (reference quality, slower)."""
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


def frame_cameras(
    structure: Structure,
    protocol="render-ceiling-5",
    *,
    style: str | Style = "study",
    tiling=(1, 1, 1),
    width: int = 768,
    height: int = 768,
    kind: str = "orthographic",
    radius_scale: float | None = None,
    radius: float | None = None,
    draw_box: bool = True,
) -> tuple[Camera, ...]:
    """Letterbox-framed cameras of a named protocol (or a Protocol) for ``structure`` drawn in ``style``:
    the drawn atoms grown by the largest drawn radius, plus the drawn box."""
    proto = protocol if isinstance(protocol, Protocol) else get_protocol(str(protocol))
    st = get_style(style, radius_scale=radius_scale, radius=radius)
    pad = float(st.atom_radii(structure.numbers).max())
    return proto.cameras(structure, width=width, height=height, tiling=tuple(tiling), pad=pad, kind=kind,
                         draw_box=draw_box and structure.is_periodic)


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
    """Build the scene once and render it through every camera."""
    scene = build_scene(structure, style, tiling=tiling, radius_scale=radius_scale, radius=radius, bonds=bonds,
                        edges=edges)
    return [render(scene, cam, supersample=supersample, rgb=rgb) for cam in cameras]


def silhouette_pixel_counts(scene: Scene, camera: Camera) -> np.ndarray:
    """(N,) number of pixel centres each atom would cover were it drawn alone (its silhouette)."""
    k = prepare(scene, camera)
    return _silhouette_counts(k["prim"], scene.n_atoms, k["cam"])
