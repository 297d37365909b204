"""Colours, radii and drawing styles.

Tables come from ASE (not retyped): Jmol colours (``ase.data.colors.jmol_colors``, Z = 0..109) and covalent
radii (``ase.data.covalent_radii``, Cordero et al., Å). Elements beyond the Jmol table get a neutral grey.

Styles (``get_style(name)``):

- ``study``: the render-ceiling study's look (ASE ``plot_atoms`` + matplotlib): flat Jmol-coloured discs of
  radius 0.5 × covalent with a black outline, no bonds, the drawn (super)cell box as thin black lines.
- ``ball-and-stick``: Lambert + ambient shaded spheres (0.35 × covalent), bonds as cylinders coloured half
  and half by their atoms, cell edges coloured by axis (a red, b green, c blue).
- ``spacefill``: shaded spheres of 1.0 × covalent radius, no bonds, black cell edges.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from viewcert.elements import covalent_radii
from viewcert.errors import InputError

GREY = (0.75, 0.75, 0.75)
AXIS_COLOURS = ((0.85, 0.1, 0.1), (0.1, 0.65, 0.1), (0.1, 0.2, 0.9))  # a, b, c (VESTA-like)


def _jmol_table() -> np.ndarray:
    from ase.data.colors import jmol_colors

    table = np.tile(np.asarray(GREY, dtype=np.float64), (119, 1))
    n = min(len(jmol_colors), 119)
    table[:n] = np.asarray(jmol_colors, dtype=np.float64)[:n]
    return table


def jmol_colours(numbers) -> np.ndarray:
    """Jmol/CPK colours (n, 3) as floats in [0, 1] for atomic numbers (ASE's table)."""
    z = np.asarray(numbers, dtype=np.int64)
    if z.size and (z.min() < 0 or z.max() > 118):
        raise InputError(f"atomic numbers must be in 0..118, got {z.min()}..{z.max()}", field="numbers")
    return _jmol_table()[z]



def hex_colour(rgb) -> str:
    r, g, b = (int(round(255 * float(np.clip(c, 0.0, 1.0)))) for c in rgb)
    return f"#{r:02x}{g:02x}{b:02x}"


@dataclass(frozen=True)
class Style:
    """How a scene is drawn. Lengths: ``radius_scale`` × covalent radius (Å) per atom (or ``radius`` Å for
    every atom when given), ``bond_radius`` Å, ``outline_px`` / ``edge_px`` line widths in px.

    shading: ``"flat"`` (one colour per disc, the study's look) or ``"lambert"`` (ambient + diffuse × max(0,
    n·L), light direction ``light`` in the camera frame: x right, y up, z toward the viewer).
    bonds: draw cylinders between atoms closer than ``bond_factor`` × (sum of covalent radii).
    """

    name: str
    radius_scale: float = 0.5
    radius: float | None = None
    shading: str = "flat"
    outline_px: float = 0.0
    outline_colour: tuple[float, float, float] = (0.0, 0.0, 0.0)
    bonds: bool = False
    bond_radius: float = 0.12
    bond_factor: float = 1.15
    bond_stubs: bool = True
    edges: bool = True
    edge_px: float = 1.4
    edge_colour: tuple[float, float, float] = (0.0, 0.0, 0.0)
    edges_by_axis: bool = False
    ambient: float = 0.35
    diffuse: float = 0.65
    light: tuple[float, float, float] = (-0.35, 0.45, 0.82)
    background: tuple[float, float, float] = (1.0, 1.0, 1.0)

    def __post_init__(self) -> None:
        if self.shading not in ("flat", "lambert"):
            raise InputError(f"shading must be 'flat' or 'lambert', got {self.shading!r}", field="shading")
        if not (np.isfinite(self.radius_scale) and self.radius_scale > 0):
            raise InputError(f"radius_scale must be > 0, got {self.radius_scale}", field="radius_scale")
        if self.radius is not None and not (np.isfinite(self.radius) and self.radius > 0):
            raise InputError(f"radius must be > 0 Å, got {self.radius}", field="radius")
        for name in ("outline_px", "edge_px", "bond_radius", "ambient", "diffuse"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v >= 0):
                raise InputError(f"{name} must be a finite number ≥ 0, got {v}", field=name)
        if np.linalg.norm(self.light) == 0:
            raise InputError("light direction must be non-zero", field="light")

    def atom_radii(self, numbers) -> np.ndarray:
        """Drawn sphere radii (n,) in Å."""
        z = np.asarray(numbers, dtype=np.int64)
        if self.radius is not None:
            return np.full(len(z), float(self.radius))
        return self.radius_scale * covalent_radii(z)

    def to_dict(self) -> dict:
        d = {}
        for f in fields(self):
            v = getattr(self, f.name)
            d[f.name] = list(v) if isinstance(v, tuple) else v
        return d


STYLES: dict[str, Style] = {
    "study": Style("study", radius_scale=0.5, shading="flat", outline_px=1.4, bonds=False, edge_px=1.4),
    "ball-and-stick": Style(
        "ball-and-stick", radius_scale=0.35, shading="lambert", bonds=True, bond_radius=0.12, edge_px=1.5,
        edges_by_axis=True,
    ),
    "spacefill": Style("spacefill", radius_scale=1.0, shading="lambert", bonds=False, edge_px=1.5),
}
STYLE_NAMES = tuple(STYLES)


def get_style(style: str | Style = "study", **overrides) -> Style:
    """A named style (``study``, ``ball-and-stick``, ``spacefill``) or a Style, with field overrides.

    Parameters
    ----------
    style : str or Style, default "study"
        A style name of ``STYLES`` or a Style.
    **overrides
        Style fields replaced (``radius_scale``, ``radius`` in Å, ``bonds``, ...); None values are ignored.

    Returns
    -------
    Style
        The style, overridden.

    Raises
    ------
    InputError
        An unknown style name (field ``style``).
    """
    if isinstance(style, Style):
        base = style
    else:
        if style not in STYLES:
            raise InputError(f"unknown style {style!r}; known: {', '.join(STYLE_NAMES)}", field="style")
        base = STYLES[style]
    overrides = {k: v for k, v in overrides.items() if v is not None}
    return replace(base, **overrides) if overrides else base
