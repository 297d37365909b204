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
                       [int(z) for z in np.asarray(numbers).ravel()])
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
