"""The only module that imports spglib. Exception mode on; angles in degrees; lattice rows in Å."""

from __future__ import annotations

import os

# spglib prints C-level notes ("spglib: No centring was found.") to stderr unless told not to; viewcert
# reports what matters as values. Set SPGLIB_WARNING=ON in the environment to see them again.
os.environ.setdefault("SPGLIB_WARNING", "OFF")

import numpy as np  # noqa: E402
import spglib  # noqa: E402

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


def point_groups_by_number() -> dict[int, str]:
    """{space-group number: its point group as spglib writes it}, from spglib's 530 Hall settings."""
    return {int(t.number): str(t.pointgroup_international)
            for t in (spglib.get_spacegroup_type(hall) for hall in range(1, 531))}


def spacegroup_types() -> tuple[tuple[int, str, tuple[str, ...]], ...]:
    """spglib's 530 Hall settings as (space-group number, Hall symbol, Hermann–Mauguin symbols: the short, the
    full and each side of ``international``, e.g. "P 2_1/c = P 1 2_1/c 1")."""
    out = []
    for hall in range(1, 531):
        t = spglib.get_spacegroup_type(hall)
        hm = (str(t.international_short), str(t.international_full), *str(t.international).split("="))
        out.append((int(t.number), str(t.hall_symbol), tuple(x.strip() for x in hm)))
    return tuple(out)


def number_of_operations(rotations: np.ndarray, translations: np.ndarray, *, symprec: float = 1e-5) -> int | None:
    """The space-group number of a set of symmetry operations (integer rotations and fractional translations in one
    basis, any setting and origin: ``spglib.get_spacegroup_type_from_symmetry``); None when they form no space group."""
    try:
        t = spglib.get_spacegroup_type_from_symmetry(np.ascontiguousarray(rotations, dtype=np.intc),
                                                     np.ascontiguousarray(translations, dtype=np.float64),
                                                     symprec=symprec)
    except Exception:  # noqa: BLE001 - spglib.error.SpglibError in exception mode: not a group
        return None
    return None if t is None else int(t.number)


def _cell(lattice: np.ndarray, frac: np.ndarray, numbers: np.ndarray) -> tuple[np.ndarray, ...]:
    return (np.ascontiguousarray(lattice, dtype=np.float64), np.ascontiguousarray(frac, dtype=np.float64),
            np.ascontiguousarray(numbers, dtype=np.intc))


def standardized_cell(lattice: np.ndarray, frac: np.ndarray, numbers: np.ndarray, *, symprec: float,
                      angle_tolerance: float = -1.0) -> dict:
    """spglib's standardized conventional cell and space group from ONE ``get_symmetry_dataset`` call.

    Returns ``{"lattice": std_lattice (rows, Å), "frac": std_positions, "types": std_types,
    "number", "international", "mapping_to_primitive", "std_mapping_to_primitive", "hall_number", "pointgroup",
    "n_rotations" (operations of the input cell), "engine": "spglib"}``. The cell equals
    ``spglib.refine_cell`` (= ``standardize_cell(to_primitive=False, no_idealize=False)``) bit for bit:
    spglib fills both from the same refinement (checked on all 1,820 e3 structures and in the tests
    against :func:`refine_cell`)."""
    ds = symmetry_dataset(lattice, frac, numbers, symprec=symprec, angle_tolerance=angle_tolerance)
    return {
        "lattice": np.asarray(ds.std_lattice, dtype=np.float64),
        "frac": np.asarray(ds.std_positions, dtype=np.float64),
        "types": np.asarray(ds.std_types, dtype=np.int64),
        "number": int(ds.number),
        "international": str(ds.international),
        "mapping_to_primitive": np.asarray(ds.mapping_to_primitive, dtype=np.int64),
        "std_mapping_to_primitive": np.asarray(ds.std_mapping_to_primitive, dtype=np.int64),
        # the label of the same dataset (viewcert.symmetry.reuse reuses it for the conventional cell)
        "hall_number": int(ds.hall_number),
        "pointgroup": str(ds.pointgroup),
        "n_rotations": int(len(ds.rotations)),
        "engine": "spglib",
    }


def refine_cell(lattice: np.ndarray, frac: np.ndarray, numbers: np.ndarray, *, symprec: float,
                angle_tolerance: float = -1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``spglib.refine_cell``: (lattice rows Å, fractional positions, types). Kept as the reference that
    :func:`standardized_cell` is tested against (pymatgen calls this one)."""
    return _cell_from(lambda cell: spglib.refine_cell(cell, symprec=symprec, angle_tolerance=angle_tolerance),
                      _cell(lattice, frac, numbers), "refine", symprec)


def primitive_cell(lattice: np.ndarray, frac: np.ndarray, numbers: np.ndarray, *, symprec: float,
                   angle_tolerance: float = -1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """spglib's primitive cell, not idealised (``standardize_cell(to_primitive=True, no_idealize=True)``):
    (lattice rows Å, fractional positions, types)."""
    return _cell_from(lambda cell: spglib.standardize_cell(cell, to_primitive=True, no_idealize=True, symprec=symprec,
                                                           angle_tolerance=angle_tolerance),
                      _cell(lattice, frac, numbers), "reduce", symprec)


def _cell_from(call, cell: tuple, verb: str, symprec: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cell spglib's ``call`` returns for ``cell`` as (lattice rows Å, fractional positions, types); its
    failure an InputError naming ``symprec`` ("spglib could not {verb} the cell ...")."""
    try:
        out = call(cell)
    except Exception as exc:  # spglib.error.SpglibError in exception mode
        raise InputError(f"spglib could not {verb} the cell at symprec={symprec}: {exc}", field="symprec") from None
    if out is None:  # pragma: no cover - only with old error handling
        raise InputError(f"spglib could not {verb} the cell at symprec={symprec}", field="symprec")
    lat, pos, typ = out
    return np.asarray(lat, dtype=np.float64), np.asarray(pos, dtype=np.float64), np.asarray(typ, dtype=np.int64)
