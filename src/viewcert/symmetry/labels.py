"""Symmetry of a cell at a tolerance τ: crystal system, point group and space group.

spglib is the reference engine; moyopy cross-checks it. A disagreement between the two is a value
(``SymmetryCheck.disagreements``), reported wherever the label is used, never resolved silently. Units:
``symprec`` (τ) in Å, ``angle_tolerance`` in degrees (negative: the library default).
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left
from dataclasses import dataclass

import numpy as np

from viewcert.errors import InputError
from viewcert.structures import Structure
from viewcert.symmetry import _moyo, _spglib

CRYSTAL_SYSTEMS: tuple[str, ...] = (
    "triclinic", "monoclinic", "orthorhombic", "tetragonal", "trigonal", "hexagonal", "cubic",
)
LEVELS: tuple[str, ...] = ("crystal_system", "point_group", "space_group")
_SYSTEM_LAST_NUMBER = (2, 15, 74, 142, 167, 194, 230)


def crystal_system_of(space_group: int) -> str:
    """Crystal system of an International Tables space-group number (1..230).

    Parameters
    ----------
    space_group : int
        Space-group number, 1..230.

    Returns
    -------
    str
        One of :data:`CRYSTAL_SYSTEMS` (``"triclinic"`` ... ``"cubic"``).

    Raises
    ------
    InputError
        The number is outside 1..230 (field ``space_group``).
    """
    n = int(space_group)
    if not 1 <= n <= 230:
        raise InputError(f"space-group number must be in 1..230, got {space_group}", field="space_group")
    return CRYSTAL_SYSTEMS[bisect_left(_SYSTEM_LAST_NUMBER, n)]


@functools.lru_cache(maxsize=1)
def _point_groups() -> dict[int, str]:
    return _spglib.point_groups_by_number()


def point_group_of(space_group: int) -> str:
    """Point group (international, as spglib writes it) of a space-group number (1..230)."""
    crystal_system_of(space_group)  # the range check
    return _point_groups()[int(space_group)]


@dataclass(frozen=True)
class SymmetryLabel:
    """One engine's answer: space-group number and symbol, point group (international), crystal system."""

    space_group: int
    symbol: str
    point_group: str
    crystal_system: str
    hall_number: int
    n_operations: int

    def level(self, level: str) -> str | int:
        if level not in LEVELS:
            raise InputError(f"label level must be one of {LEVELS}, got {level!r}", field="score")
        return getattr(self, level)

    def to_dict(self) -> dict:
        return {
            "space_group": self.space_group, "symbol": self.symbol, "point_group": self.point_group,
            "crystal_system": self.crystal_system, "hall_number": self.hall_number,
            "n_operations": self.n_operations,
        }


@dataclass(frozen=True)
class SymmetryCheck:
    """spglib's label (the reference) and moyopy's (the cross-check) for one cell at one tolerance."""

    symprec: float
    angle_tolerance: float
    spglib: SymmetryLabel | None
    moyo: SymmetryLabel | None
    spglib_error: str | None = None
    moyo_error: str | None = None
    cross_checked: bool = True
    moyo_angle_tolerance: float | None = None

    @property
    def label(self) -> SymmetryLabel | None:
        """The reference label (spglib); None when spglib failed."""
        return self.spglib

    @functools.cached_property
    def disagreements(self) -> tuple[str, ...]:
        """Levels on which spglib and moyopy differ, or the engine that failed while the other did not (computed
        once per check: the certify path asks ``agree`` about seven times an item)."""
        if not self.cross_checked:
            return ()
        if self.spglib is None and self.moyo is None:
            return ()
        if self.spglib is None:
            return ("spglib_failed",)
        if self.moyo is None:
            return ("moyopy_failed",)
        s, m = self.spglib, self.moyo
        return tuple(lv for lv in LEVELS if getattr(s, lv) != getattr(m, lv))

    @property
    def agree(self) -> bool:
        return not self.disagreements

    def label_dict(self) -> dict | None:
        """The reference label's four levels as a certificate records them (None when spglib failed)."""
        lab = self.label
        if lab is None:
            return None
        return {"crystal_system": lab.crystal_system, "point_group": lab.point_group,
                "space_group": lab.space_group, "symbol": lab.symbol}

    def describe_disagreement(self) -> str:
        """One line: ``level: spglib A vs moyopy B`` per level that differs (``; ``-separated), or
        ``spglib failed`` / ``moyopy failed``; ``disagreement_levels`` reads it back."""
        parts = []
        for d in self.disagreements:
            if d.endswith("_failed"):
                parts.append(d.replace("_", " "))
            else:
                parts.append(f"{d}: spglib {self.spglib.level(d)} vs moyopy {self.moyo.level(d)}")
        return "; ".join(parts)

    def to_dict(self) -> dict:
        return {
            "symprec": self.symprec,
            "angle_tolerance": self.angle_tolerance,
            "spglib": None if self.spglib is None else self.spglib.to_dict(),
            "moyopy": None if self.moyo is None else self.moyo.to_dict(),
            "spglib_error": self.spglib_error,
            "moyopy_error": self.moyo_error,
            "moyopy_angle_tolerance": self.moyo_angle_tolerance,
            "disagreements": list(self.disagreements),
        }


def _spglib_label(lattice, frac, numbers, symprec, angle_tolerance) -> SymmetryLabel:
    ds = _spglib.symmetry_dataset(lattice, frac, numbers, symprec=symprec, angle_tolerance=angle_tolerance)
    n = int(ds.number)
    return SymmetryLabel(n, str(ds.international), str(ds.pointgroup), crystal_system_of(n), int(ds.hall_number),
                         int(len(ds.rotations)))


def _moyo_label(lattice, frac, numbers, symprec, angle_tolerance) -> SymmetryLabel:
    ds = _moyo.moyo_dataset(lattice, frac, numbers, symprec=symprec, angle_tolerance=angle_tolerance)
    n = int(ds.number)
    symbol, point_group, _ = _moyo.space_group_type(n)
    return SymmetryLabel(n, symbol, point_group, crystal_system_of(n), int(ds.hall_number),
                         int(len(ds.operations)))


def analyse_cell(
    lattice: np.ndarray,
    frac: np.ndarray,
    numbers: np.ndarray,
    *,
    symprec: float,
    angle_tolerance: float = 5.0,
    cross_check: bool = True,
    moyo_angle_tolerance: float | None = None,
    known_spglib: SymmetryLabel | None = None,
) -> SymmetryCheck:
    """Label a periodic cell (lattice rows Å, fractional coordinates, atomic numbers) with spglib at
    ``symprec`` Å / ``angle_tolerance`` degrees, and with moyopy when ``cross_check``. An engine that cannot
    determine a symmetry gives None plus its error message; nothing is raised for a bad cell.

    moyopy runs at the same ``symprec`` with ``moyo_angle_tolerance`` degrees (converted to radians inside
    ``_moyo``); the default None leaves moyopy's own angle handling (a metric tolerance derived from
    symprec). Reason: moyopy 0.21 with an explicit angle tolerance can exhaust memory (a Rust allocation
    abort of the whole process) in its Bravais-group search on long rhombohedral cells — e3's mp-1096817,
    R3m with c/a ≈ 19.5, asks for 2.5 GB. On all 1,820 e3 rendered cells spglib at (0.01 Å, 5°), spglib at
    (0.01 Å, default angle) and moyopy at (0.01 Å, default angle) give the same space group.

    ``known_spglib``: spglib's label of this cell at these tolerances, already known (from the
    standardisation's dataset, ``viewcert.symmetry.reuse``); spglib is then not called again.

    Parameters
    ----------
    lattice : numpy.ndarray of float, shape (3, 3)
        Rows a, b, c in Å (Cartesian = fractional @ lattice).
    frac : numpy.ndarray of float, shape (n, 3)
        Fractional coordinates of the atoms.
    numbers : numpy.ndarray of int, shape (n,)
        Atomic numbers.
    symprec : float
        Distance tolerance, Å, > 0.
    angle_tolerance : float, default 5.0
        spglib's angle tolerance, degrees.
    cross_check : bool, default True
        Also label the cell with moyopy.
    moyo_angle_tolerance : float, optional
        moyopy's angle tolerance, degrees; None: moyopy's own.
    known_spglib : SymmetryLabel, optional
        spglib's label of this cell at these tolerances, when already known.

    Returns
    -------
    SymmetryCheck
        The tolerances, each engine's label (or None with its error) and whether moyopy was asked.

    Raises
    ------
    InputError
        ``symprec`` is not a positive number (field ``symprec``).
    """
    if not (np.isfinite(symprec) and symprec > 0):
        raise InputError(f"symprec must be a positive number of Å, got {symprec}", field="symprec")
    s_lab = m_lab = None
    s_err = m_err = None
    try:
        s_lab = known_spglib or _spglib_label(lattice, frac, numbers, symprec, angle_tolerance)
    except InputError as exc:
        s_err = str(exc)
    if cross_check:
        try:
            m_lab = _moyo_label(lattice, frac, numbers, symprec,
                                -1.0 if moyo_angle_tolerance is None else moyo_angle_tolerance)
        except InputError as exc:
            m_err = str(exc)
    return SymmetryCheck(float(symprec), float(angle_tolerance), s_lab, m_lab, s_err, m_err, bool(cross_check),
                         None if moyo_angle_tolerance is None else float(moyo_angle_tolerance))


def symmetry_of(structure: Structure, *, symprec: float, angle_tolerance: float = 5.0,
                cross_check: bool = True, moyo_angle_tolerance: float | None = None) -> SymmetryCheck:
    """``analyse_cell`` on a periodic Structure (InputError for a molecule: it has no space group).

    Parameters
    ----------
    structure : Structure
        A periodic structure (lattice rows a, b, c in Å).
    symprec : float
        Distance tolerance, Å, > 0.
    angle_tolerance : float, default 5.0
        spglib's angle tolerance, degrees.
    cross_check : bool, default True
        Also label the cell with moyopy.
    moyo_angle_tolerance : float, optional
        moyopy's angle tolerance, degrees; None: moyopy's own.

    Returns
    -------
    SymmetryCheck
        As :func:`analyse_cell`.

    Raises
    ------
    InputError
        A molecule (field ``lattice``), or ``symprec`` not positive (field ``symprec``).
    """
    if not structure.is_periodic:
        raise InputError("a space group needs a periodic structure (this one has no lattice)", field="lattice")
    return analyse_cell(structure.lattice, structure.frac_coords, structure.numbers, symprec=symprec,
                        angle_tolerance=angle_tolerance, cross_check=cross_check,
                        moyo_angle_tolerance=moyo_angle_tolerance)


def library_versions() -> dict[str, str]:
    return {"spglib": _spglib.VERSION, "moyopy": _moyo.VERSION}


_LEVEL_PART = re.compile(r"(\w+): spglib (.*) vs moyopy (.*)")


def disagreement_levels(text: str) -> list[tuple[str, str, str]]:
    """``SymmetryCheck.describe_disagreement``'s line (as a certificate records it) back as (level, what
    spglib said, what moyopy said) per level; an engine that failed is (``all``, ``failed``, ``labelled``)
    or the reverse; a part in neither form is kept whole as (``?``, part, "")."""
    out = []
    for part in (p.strip() for p in str(text).split(";")):
        if not part:
            continue
        m = _LEVEL_PART.fullmatch(part)
        if m is not None:
            out.append((m.group(1), m.group(2), m.group(3)))
        elif part in ("spglib failed", "moyopy failed"):
            out.append(("all", "failed", "labelled") if part.startswith("spglib") else ("all", "labelled", "failed"))
        else:
            out.append(("?", part, ""))
    return out
