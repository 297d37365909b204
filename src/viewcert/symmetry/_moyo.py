"""The only module that imports moyopy. Angles arrive in degrees (spglib's convention, the API surface) and
are converted to radians here; a negative angle tolerance means "library default" (None), as in spglib.
Lattice rows in Å, fractional coordinates, atomic numbers."""

from __future__ import annotations

import logging
import math
from functools import cache

import moyopy
import numpy as np

from viewcert.errors import InputError

VERSION: str = getattr(moyopy, "__version__", "unknown")

# moyopy forwards Rust log records to Python logging (e.g. "Omitted N primitive-cell symmetry operations ...",
# informational); keep them off the terminal unless a caller lowers the level again
for _name in ("moyo", "moyopy"):
    logging.getLogger(_name).setLevel(logging.ERROR)


def _angle_radians(angle_tolerance_deg: float | None) -> float | None:
    if angle_tolerance_deg is None or angle_tolerance_deg < 0:
        return None
    return math.radians(float(angle_tolerance_deg))


def moyo_dataset(lattice: np.ndarray, frac: np.ndarray, numbers: np.ndarray, *, symprec: float,
                 angle_tolerance: float = -1.0):
    """moyopy's MoyoDataset for the cell. ``symprec`` in Å, ``angle_tolerance`` in **degrees** (negative or
    None: moyopy's default). Raises InputError naming ``symprec`` when moyopy cannot find a symmetry."""
    cell = moyopy.Cell(np.asarray(lattice, dtype=np.float64).tolist(), np.asarray(frac, dtype=np.float64).tolist(),
                       np.asarray(numbers).ravel().astype(np.int64).tolist())
    try:
        return moyopy.MoyoDataset(cell, symprec=float(symprec), angle_tolerance=_angle_radians(angle_tolerance))
    except Exception as exc:  # moyopy raises a plain ValueError/RuntimeError
        raise InputError(f"moyopy could not determine symmetry at symprec={symprec}: {exc}", field="symprec") from None


@cache
def space_group_type(number: int) -> tuple[str, str, str]:
    """(Hermann–Mauguin short symbol without spaces, geometric crystal class, crystal system lower case) of
    a space-group number 1..230, from moyopy's own tables."""
    t = moyopy.SpaceGroupType(int(number))
    return t.hm_short.replace(" ", ""), t.geometric_crystal_class, t.crystal_system.lower()


def standardized_cell(lattice: np.ndarray, frac: np.ndarray, numbers: np.ndarray, *, symprec: float) -> dict | None:
    """moyopy's standardized conventional cell in spglib's setting (``Setting.spglib()``), shaped like
    :func:`viewcert.symmetry._spglib.standardized_cell`: ``{"lattice" (rows, Å), "frac", "types", "number",
    "hall_number", "international", "mapping_to_primitive", "std_mapping_to_primitive"}``, or None when the
    result is not trustworthy at this ``symprec`` (moyopy raised, or its iterative search changed symprec);
    callers fall back to spglib then.

    No angle tolerance is ever passed: moyopy 0.21 with ``angle_tolerance=radians(5)`` hangs (> 100 s) on
    some cells (mp-1096817, mp-1228266 of the e3 set) while without one every e3 cell takes < 2 ms.

    ``std_mapping_to_primitive`` (not given by moyopy) is recovered by mapping each standardized site back
    to the input frame (``x_in = std_linear @ x_std + std_origin_shift``) and taking the nearest input
    atom of the same type; -1 where no input atom lies within 2·symprec + 1e-6 Å."""
    lat = np.asarray(lattice, dtype=np.float64)
    f_in = np.asarray(frac, dtype=np.float64)
    z_in = np.asarray(numbers, dtype=np.int64).ravel()
    cell = moyopy.Cell(lat.tolist(), f_in.tolist(), z_in.tolist())
    try:
        ds = moyopy.MoyoDataset(cell, symprec=float(symprec), angle_tolerance=None, setting=moyopy.Setting.spglib())
    except Exception:  # noqa: BLE001 - any moyopy failure means "ask spglib"
        return None
    if ds.symprec != float(symprec):  # moyopy's iterative search moved the tolerance: not the same question
        return None
    std = ds.std_cell
    f_std = np.asarray(std.positions, dtype=np.float64).reshape(-1, 3)
    t_std = np.asarray(std.numbers, dtype=np.int64)
    m_in = np.asarray(ds.mapping_std_prim, dtype=np.int64)
    back = f_std @ np.asarray(ds.std_linear, dtype=np.float64).T + np.asarray(ds.std_origin_shift, dtype=np.float64)
    d = back[:, None, :] - f_in[None, :, :]
    d -= np.round(d)
    dist = np.linalg.norm(d @ lat, axis=2)
    dist[t_std[:, None] != z_in[None, :]] = np.inf
    nearest = np.argmin(dist, axis=1)
    ok = dist[np.arange(len(nearest)), nearest] <= 2 * symprec + 1e-6
    return {
        "lattice": np.asarray(std.basis, dtype=np.float64),
        "frac": f_std,
        "types": t_std,
        "number": int(ds.number),
        "hall_number": int(ds.hall_number),
        "international": _hall_hm_short(int(ds.hall_number)),
        "mapping_to_primitive": m_in,
        "std_mapping_to_primitive": np.where(ok, m_in[nearest], -1),
        # the keys of _spglib.standardized_cell's label part; viewcert.symmetry.reuse never reuses a
        # moyopy dataset for spglib's label ("engine" is its guard)
        "pointgroup": space_group_type(int(ds.number))[1],
        "n_rotations": int(len(ds.operations)),
        "engine": "moyopy",
    }


def _hall_hm_short(hall_number: int) -> str:
    """Hermann–Mauguin short symbol (no spaces) of a Hall setting 1..530, e.g. ``"Cmce"``."""
    return moyopy.HallSymbolEntry(hall_number).hm_short.replace(" ", "")
