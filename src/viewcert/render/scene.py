"""What the renderer draws: ``Scene`` (world Å) and ``build_scene``.

Atoms are spheres (radius = style.radius_scale × covalent radius, or one given radius, Å), bonds capped
cylinders split into half-bonds coloured by their atom (``render.bonds``), cell or supercell edges thin
screen-space lines of ``edge_px`` px, optionally coloured by axis a/b/c. Drawn atom
``k = tile × n_cell + cell_index`` (``observe.project.drawn_atoms``: tiles in C order of the tiling, a
slowest). The atom-ID buffer codes of :mod:`viewcert.render.raster`:

    ID_BACKGROUND = −1, ID_BOND = −2 (any bond cylinder), ID_EDGE = −3 (any cell edge line).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from viewcert.cameras.framing import box_corners
from viewcert.errors import InputError
from viewcert.observe.project import drawn_atoms
from viewcert.render.bonds import half_bonds
from viewcert.render.palette import AXIS_COLOURS, Style, get_style, jmol_colours
from viewcert.resolution import quantize_array
from viewcert.structures import Structure, tiling_translations

ID_BACKGROUND = -1
ID_BOND = -2
ID_EDGE = -3
ID_CODES = {"background": ID_BACKGROUND, "bond": ID_BOND, "edge": ID_EDGE}

KIND_SPHERE = 0
KIND_CYLINDER = 1
KIND_LINE = 2


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
    """Scene of ``structure`` (tiled when periodic) in a style.

    Parameters
    ----------
    structure : Structure
        Positions Cartesian Å; a crystal's lattice rows a, b, c (Å).
    style : str or Style, default "study"
        ``study``, ``ball-and-stick``, ``spacefill`` or a Style.
    tiling : tuple of int, (na, nb, nc), default (1, 1, 1)
        Cell repetitions drawn (crystals; a molecule takes (1, 1, 1) only).
    radius_scale : float, optional
        Overrides the style: atom radius = this × covalent radius (Å).
    radius : float, optional
        Overrides the style: one atom radius for every element, Å.
    bonds : bool, optional
        Overrides the style: draw half-bonds.
    edges : str, default "supercell"
        ``"supercell"`` (the drawn box), ``"cells"`` (every cell of the tiling), ``"cell"`` (the origin cell)
        or ``"none"``; molecules have none.

    Returns
    -------
    Scene
        Spheres (drawn atoms, world Å, in the tiling order of ``observe.drawn_atoms``), half-bond cylinders
        and cell-edge lines.

    Raises
    ------
    InputError
        An unknown style (field ``style``) or ``edges`` value (field ``edges``), or a tiled molecule (field
        ``tiling``).
    """
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
            key = quantize_array(np.concatenate([np.minimum(s, e), np.maximum(s, e)], axis=1), 9)
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
