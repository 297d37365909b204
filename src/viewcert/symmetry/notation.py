"""A space group written in any of the notations databases publish, read as its International Tables number
(1..230): a Hermann–Mauguin symbol, a Hall symbol, or the symmetry operations themselves.

- **Hermann–Mauguin** (OPTIMADE's ``space_group_symbol_hermann_mauguin`` and ``..._extended``): a short or full
  symbol in any setting, as OPTIMADE encodes it (screw axes as digits after the axis, ``P 21/c``; components
  separated by spaces, ``P 21 21 21``; ``C 1 2 1``) or as spglib writes it (``P2_1/c``), read by gemmi's
  ``find_spacegroup_by_name`` (spglib's underscores dropped), else matched to spglib's short and full symbols
  of its 530 settings with spaces and underscores dropped (a full symbol, ``F 4/m -3 2/m``).
- **Hall** (OPTIMADE's ``space_group_symbol_hall``): any Hall symbol, an explicit origin (``P 2c -2ac``) or a
  change of basis in brackets (``P 2yb (-1/2*x+z,1/2*x,y)``) included: its operations from gemmi's
  ``symops_from_hall``, then identified as below.
- **Operations** (OPTIMADE's ``space_group_symmetry_operations_xyz``): a list of ``x,y,z``-style operations, each
  parsed by pymatgen (``SymmOp.from_xyz_str``; three components, an integer rotation of determinant ±1), in any
  setting and origin (any translation, ``-x-1/5``), identified by spglib (``get_spacegroup_type_from_symmetry``).

Each function raises ValueError saying why a value is not one (the database reader makes it the row's problem).
"""

from __future__ import annotations

import functools

import numpy as np

from viewcert.symmetry import _spglib

__all__ = ["NOTATIONS", "space_group_number"]

#: the notations ``space_group_number`` reads
NOTATIONS = ("hermann_mauguin", "hall", "operations")


def _identified(rotations, translations, what: str) -> int:
    """The number of the space group of integer ``rotations`` and fractional ``translations`` (spglib)."""
    rot = np.asarray(rotations, dtype=np.intc).reshape(-1, 3, 3)
    trans = np.asarray(translations, dtype=np.float64).reshape(-1, 3)
    number = _spglib.number_of_operations(rot, trans) if len(rot) else None
    if number is None:
        raise ValueError(f"{what} do not form a space group")
    return number


def _hm_key(text: str) -> str:
    return "".join(text.split()).replace("_", "")


@functools.lru_cache(maxsize=1)
def _spglib_symbols() -> dict[str, int]:
    """{Hermann–Mauguin symbol without spaces or underscores: number} of spglib's 530 settings (short and full
    symbols; none collide that way)."""
    return {_hm_key(s): number for number, _, symbols in _spglib.spacegroup_types() for s in symbols}


@functools.lru_cache(maxsize=1024)
def _of_symbol(text: str, notation: str) -> int:
    import gemmi  # lazy: only a database with a symbol column needs it

    if notation == "hermann_mauguin":
        sg = gemmi.find_spacegroup_by_name(text) or gemmi.find_spacegroup_by_name(text.replace("_", ""))
        if sg is not None:
            return int(sg.number)
        if _hm_key(text) in _spglib_symbols():  # a full symbol (``F 4/m -3 2/m``), which gemmi does not list
            return _spglib_symbols()[_hm_key(text)]
        raise ValueError(f"Hermann–Mauguin symbol {text[:60]!r} names no space group")
    try:
        ops = list(gemmi.symops_from_hall(text))
    except (RuntimeError, ValueError):
        raise ValueError(f"Hall symbol {text[:60]!r} cannot be read") from None
    return _identified([np.asarray(o.rot) // gemmi.Op.DEN for o in ops],
                       [np.asarray(o.tran, dtype=np.float64) / gemmi.Op.DEN for o in ops],
                       f"the operations of Hall symbol {text[:60]!r}")


@functools.lru_cache(maxsize=256)
def _of_operations(ops: tuple[str, ...]) -> int:
    from pymatgen.core.operations import SymmOp  # lazy: only a database with an operations column needs it

    rot, trans = [], []
    for op in ops:
        bad = ValueError(f"symmetry operation {op[:60]!r} is not of the form 'x,y,z'")
        if op.count(",") != 2 or not any(c in op.lower() for c in "xyz"):
            raise bad
        try:
            m = SymmOp.from_xyz_str(op)
        except Exception:  # noqa: BLE001 - pymatgen raises ValueError, KeyError, ... on a malformed string
            raise bad from None
        r = np.asarray(m.rotation_matrix, dtype=np.float64)
        if not np.allclose(r, np.round(r)) or round(abs(np.linalg.det(r))) != 1:
            raise bad
        rot.append(np.round(r))
        trans.append(np.asarray(m.translation_vector, dtype=np.float64))
    return _identified(rot, trans, f"the {len(ops)} symmetry operations")


def space_group_number(value, notation: str) -> int:
    """The International Tables number of the space group ``value`` states in ``notation`` (``NOTATIONS``);
    ValueError saying why when it states none."""
    if notation == "operations":
        if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
            raise ValueError(f"symmetry operations must be a list of 'x,y,z' strings, got {str(value)[:60]!r}")
        return _of_operations(tuple(str(x) for x in value))
    if notation not in NOTATIONS:
        raise ValueError(f"notation must be one of {NOTATIONS}, got {notation!r}")
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"a space-group symbol must be text, got {str(value)[:60]!r}")
    return _of_symbol(" ".join(value.split()), notation)
