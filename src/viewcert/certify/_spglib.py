"""The only module that imports spglib. Exception mode on; angles in degrees; lattice rows in Å."""

from __future__ import annotations

import numpy as np
import spglib

from viewcert.errors import InputError

try:  # spglib >= 2.5: raise instead of returning None
    spglib.error.OLD_ERROR_HANDLING = False  # type: ignore[attr-defined]
except AttributeError:  # pragma: no cover - older spglib
    pass

VERSION: str = spglib.__version__


def symmetry_dataset(lattice: np.ndarray, frac: np.ndarray, numbers: np.ndarray, *, symprec: float,
                     angle_tolerance: float = -1.0):
    """spglib's SpglibDataset for the cell (lattice rows Å, fractional coords, atomic numbers)."""
    cell = (np.ascontiguousarray(lattice, dtype=np.float64), np.ascontiguousarray(frac, dtype=np.float64),
            np.ascontiguousarray(numbers, dtype=np.intc))
    try:
        ds = spglib.get_symmetry_dataset(cell, symprec=symprec, angle_tolerance=angle_tolerance)
    except Exception as exc:  # spglib.error.SpglibError in exception mode
        raise InputError(f"spglib could not determine symmetry at symprec={symprec}: {exc}",
                         field="symprec") from None
    if ds is None:  # pragma: no cover - only with old error handling
        raise InputError(f"spglib could not determine symmetry at symprec={symprec}", field="symprec")
    return ds
