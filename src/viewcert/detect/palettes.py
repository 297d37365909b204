"""Element colours (and relative radii) as a renderer draws them: the key that turns a drawn disc's colour into an
element.

A :class:`Palette` maps element symbols to 8-bit RGB colours, optionally with relative radii (the unit is the
palette's own: only ratios are used, to tell apart elements whose colours tie). Named palettes come from the tools'
own data, never retyped here:

- ``jmol`` (alias ``cpk``, ``ase``): ASE's ``ase.data.colors.jmol_colors`` (Jmol's CPK table, what ASE's PNG/EPS
  writer and ``plot_atoms`` draw), radii ASE's covalent radii (``plot_atoms`` draws covalent × scale);
- ``vesta``: VESTA's element colours as pymatgen ships them (``pymatgen/vis/ElementColorSchemes.yaml``, key
  ``VESTA``, taken from VESTA's ``elements.ini``), no radii;
- ``pymol``: PyMOL's own element colours (``color atomic``) and van der Waals radii, read from PyMOL itself (one
  atom of each element loaded into a private ``pymol2`` session) when it is installed (the ``[foreign]`` extra);
  refused with a clear line otherwise. PyMOL colours carbon by object (green for the first); a manifest states the
  carbon colour it used (``palette = {name = "pymol", C = "grey70"}`` or a table);
- ``ovito``: OVITO's default particle-type colours and radii (``ovito.data.ParticleType.load_defaults``), when
  OVITO is installed; refused otherwise.

A palette given in an ``images.toml`` wins over the named one: a table ``{Na = "#ab5cf2", Cl = [31, 240, 31],
Ag = "silver"}`` (hex, 0–255 triples, or a matplotlib/CSS colour name, as MCS-Set's ``ELEMENT_COLORS``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, cast

import numpy as np

from viewcert.elements import SYMBOLS, atomic_number, covalent_radii
from viewcert.errors import InputError, did_you_mean

__all__ = ["PALETTE_NAMES", "Palette", "named_palette", "palette_from_table"]

#: the named palettes and where each reads its colours
PALETTE_NAMES = {
    "jmol": "ASE's jmol_colors (Jmol's CPK table); radii: ASE's covalent radii",
    "cpk": "alias of jmol",
    "ase": "alias of jmol (what ASE's writers and plot_atoms draw)",
    "vesta": "VESTA's colours as pymatgen ships them (pymatgen/vis/ElementColorSchemes.yaml)",
    "pymol": "PyMOL's element colours and van der Waals radii, read from PyMOL (needs the [foreign] extra)",
    "ovito": "OVITO's default particle colours and radii, read from OVITO (needs the [foreign] extra)",
}
_ALIASES = {"cpk": "jmol", "ase": "jmol"}


@dataclass(frozen=True)
class Palette:
    """Element symbol -> 8-bit RGB colour (and optional relative radius, any unit: only ratios are used).

    name: the palette's name (``"jmol"``, ``"table"`` for one given in a manifest); source: where its values come
    from (a module, a file, ``images.toml``)."""

    name: str
    colours: Mapping[str, tuple[int, ...]]  # 8-bit R, G, B
    radii: Mapping[str, float] = field(default_factory=dict)
    source: str = ""

    def colour_array(self, symbols) -> np.ndarray:
        """Colours (n, 3) float64 in 0–255 of ``symbols``; InputError naming the first symbol the palette lacks."""
        missing = [s for s in symbols if s not in self.colours]
        if missing:
            raise InputError(f"palette {self.name!r} has no colour for element {missing[0]!r}", field="palette")
        return np.array([self.colours[s] for s in symbols], dtype=np.float64).reshape(-1, 3)

    def radius_ratios(self, symbols) -> np.ndarray | None:
        """Relative radii (n,) of ``symbols``, or None when the palette has none for one of them."""
        if not all(s in self.radii for s in symbols):
            return None
        return np.array([self.radii[s] for s in symbols], dtype=np.float64)

    def check_covers(self, symbols, *, source: str | None = None) -> None:
        """InputError naming the palette field when an element of ``symbols`` has no colour."""
        missing = sorted({s for s in symbols if s not in self.colours})
        if missing:
            raise InputError(f"palette {self.name!r} has no colour for element(s) {', '.join(missing)} of the "
                             "structure", source=source, field="palette")

    def to_dict(self, symbols=None) -> dict:
        """JSON form: name, source and the colours (``#rrggbb``) and radii of ``symbols`` (default: all)."""
        keep = sorted(self.colours) if symbols is None else sorted(set(symbols))
        out = {"name": self.name, "source": self.source,
               "colours": {s: "#{:02x}{:02x}{:02x}".format(*self.colours[s]) for s in keep if s in self.colours}}
        radii = {s: float(self.radii[s]) for s in keep if s in self.radii}
        if radii:
            out["radii"] = radii
        return out


def _rgb255(value, where: str, *, source: str | None) -> tuple[int, int, int]:
    """One colour of a manifest: ``#rrggbb``, three numbers 0–255, or a matplotlib/CSS colour name."""
    if isinstance(value, list | tuple):
        ok = len(value) == 3 and all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                                     and 0 <= v <= 255 for v in value)
        if not ok:
            raise InputError(f"a colour is three numbers 0–255, got {str(value)[:60]}", source=source, field=where)
        return cast("tuple[int, int, int]", tuple(int(round(float(v))) for v in value))
    if not isinstance(value, str) or not value or len(value) > 40:
        raise InputError(f"a colour is '#rrggbb', [r, g, b] or a colour name, got {str(value)[:60]!r}",
                         source=source, field=where)
    from matplotlib.colors import to_rgb  # lazy: start-up time (matplotlib's colour table)

    try:
        r, g, b = to_rgb(value)
    except ValueError:
        raise InputError(f"unknown colour {value[:40]!r} ('#rrggbb', [r, g, b] 0–255 or a matplotlib colour "
                         "name)", source=source, field=where) from None
    return int(round(255 * r)), int(round(255 * g)), int(round(255 * b))


def palette_from_table(table: Mapping, *, source: str | None = None, field_name: str = "palette",
                       base: Palette | None = None) -> Palette:
    """A palette given as a table (element symbol -> colour; an optional ``radii`` sub-table symbol -> number > 0),
    over ``base`` when given (the table's elements win).

    Parameters
    ----------
    table : Mapping
        ``{symbol: colour}``, colour ``#rrggbb``, [r, g, b] 0–255 or a matplotlib colour name; ``radii``:
        ``{symbol: relative radius}``; ``name``: a named palette (:data:`PALETTE_NAMES`) the table overrides.
    source : str, optional
        The file the table was read from (named in errors).
    field_name : str
        The table's field (named in errors).
    base : Palette, optional
        The named palette the table overrides.

    Returns
    -------
    Palette
        Named ``"table"`` (or ``"<base>+table"``), source ``source``.

    Raises
    ------
    InputError
        An unknown element symbol, a colour that is not one, a radius that is not a positive number.
    """
    if "name" in table:  # a named palette with some colours replaced
        if base is not None or not isinstance(table["name"], str):
            raise InputError("name must be the text of a named palette", source=source, field=f"{field_name}.name")
        base = named_palette(table["name"], source=source)
    colours = dict(base.colours) if base else {}
    radii = dict(base.radii) if base else {}
    for key, value in table.items():
        if key == "name":
            continue
        if key == "radii":
            if not isinstance(value, Mapping):
                raise InputError("radii must be a table of element -> relative radius", source=source,
                                 field=f"{field_name}.radii")
            for sym, r in value.items():
                s = SYMBOLS[atomic_number(str(sym), source=source, field=f"{field_name}.radii.{sym}")]
                if isinstance(r, bool) or not isinstance(r, int | float) or not (math.isfinite(r) and r > 0):
                    raise InputError(f"a radius must be a positive number, got {str(r)[:40]}", source=source,
                                     field=f"{field_name}.radii.{sym}")
                radii[s] = float(r)
            continue
        s = SYMBOLS[atomic_number(str(key), source=source, field=f"{field_name}.{key}")]
        colours[s] = _rgb255(value, f"{field_name}.{key}", source=source)
    if not colours:
        raise InputError("a palette table names at least one element", source=source, field=field_name)
    if base is not None and len(colours) == len(base.colours) and colours == dict(base.colours) \
            and radii == dict(base.radii):
        return base
    name = f"{base.name}+table" if base else "table"
    return Palette(name, colours, radii, source or "images.toml")


@cache
def _jmol() -> Palette:
    from ase.data.colors import jmol_colors

    n = min(len(jmol_colors), len(SYMBOLS))
    colours = {SYMBOLS[z]: tuple(int(round(255 * c)) for c in jmol_colors[z]) for z in range(1, n)}
    radii = dict(zip(SYMBOLS[1:n], covalent_radii(np.arange(1, n)).tolist(), strict=True))
    return Palette("jmol", colours, radii, "ase.data.colors.jmol_colors; ase.data.covalent_radii")


@cache
def _vesta() -> Palette:
    from pathlib import Path

    import pymatgen.vis  # lazy: the package ships the table beside it
    from ruamel.yaml import YAML  # pymatgen's own YAML reader

    path = Path(pymatgen.vis.__file__).with_name("ElementColorSchemes.yaml")
    table = YAML(typ="safe").load(path.read_text())["VESTA"]
    colours = {s: tuple(int(v) for v in rgb) for s, rgb in table.items() if s in SYMBOLS}
    return Palette("vesta", colours, {}, "pymatgen/vis/ElementColorSchemes.yaml (VESTA)")


@cache
def _pymol() -> Palette:
    try:
        from pymol2 import PyMOL
    except ImportError:
        raise InputError("the pymol palette is read from PyMOL itself, which is not installed (install "
                         "viewcert[foreign], or give the palette as a table in images.toml)", field="palette") from None
    # one atom of every element, coloured as ``color atomic`` colours them; each atom's colour index and vdw
    symbols = SYMBOLS[1:]
    xyz = "\n".join([str(len(symbols)), "viewcert palette"] + [f"{e} {3.0 * i} 0 0" for i, e in enumerate(symbols)])
    session = PyMOL()
    session.start()
    try:
        cmd = session.cmd
        cmd.load_raw(xyz + "\n", "xyz", "palette")
        cmd.color("atomic", "palette")
        rows: list = []
        cmd.iterate("palette", "rows.append((elem, color, vdw))", space={"rows": rows})
        colours, radii = {}, {}
        for elem, index, vdw in rows:
            rgb = cmd.get_color_tuple(index) if index >= 0 else None
            if rgb and elem in SYMBOLS:
                colours[elem] = tuple(int(round(255 * c)) for c in rgb)
                radii[elem] = float(vdw)
    finally:
        session.stop()
    return Palette("pymol", colours, radii, "PyMOL's 'color atomic' colours and vdw radii (pymol2, cmd.iterate)")


def _ovito() -> Palette:
    try:
        from ovito.data import ParticleType
    except ImportError:
        raise InputError("the ovito palette is read from OVITO itself, which is not installed (install "
                         "viewcert[foreign], or give the palette as a table in images.toml)", field="palette") from None
    colours, radii = {}, {}
    for z in range(1, len(SYMBOLS)):
        s = SYMBOLS[z]
        t = ParticleType(name=s)
        t.load_defaults()
        colours[s] = tuple(int(round(255 * c)) for c in t.color)
        if t.radius > 0:
            radii[s] = float(t.radius)
    return Palette("ovito", colours, radii, "ovito.data.ParticleType.load_defaults (OVITO's defaults)")


def named_palette(name: str, *, source: str | None = None) -> Palette:
    """The named palette ``name`` (:data:`PALETTE_NAMES`), read from the tool's own data.

    Parameters
    ----------
    name : str
        ``jmol`` (``cpk``, ``ase``), ``vesta``, ``pymol`` or ``ovito``.
    source : str, optional
        The file that names it (named in errors).

    Returns
    -------
    Palette
        Its colours (8-bit RGB) and, where the tool has them, relative radii.

    Raises
    ------
    InputError
        An unknown name, or a palette whose tool is not installed (field ``palette``).
    """
    key = _ALIASES.get(str(name).lower(), str(name).lower())
    makers: dict[str, Any] = {"jmol": _jmol, "vesta": _vesta, "pymol": _pymol, "ovito": _ovito}
    if key not in makers:
        raise InputError(f"unknown palette {str(name)[:40]!r}{did_you_mean(name, PALETTE_NAMES)}; known: "
                         f"{', '.join(PALETTE_NAMES)}, or a table of element colours", source=source, field="palette")
    try:
        return makers[key]()
    except InputError as exc:
        raise InputError(exc.message, source=source, field="palette") from None
