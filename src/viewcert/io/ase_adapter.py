"""ASE ↔ viewcert, both ways (the only place that converts ``ase.Atoms``).

``from_ase(atoms)``: periodic when ``atoms.pbc`` is all True (lattice = ``atoms.cell`` rows, must have
positive volume), a molecule when it is all False (any cell is dropped). Mixed periodicity (a slab,
``pbc=[True, True, False]``) has no viewcert equivalent: ``partial_pbc="refuse"`` (default) raises,
``"periodic"`` treats it as fully periodic (the cell must be 3D), ``"molecule"`` drops the cell.
Site labels round-trip through the per-atom array ``"site_labels"``.

``to_ase(s)``: ``Atoms(numbers, positions, cell=lattice, pbc=is_periodic)``.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from viewcert.errors import InputError
from viewcert.structures import Provenance, Structure

LABELS_ARRAY = "site_labels"


def from_ase(
    atoms: Any,
    *,
    provenance: Provenance | None = None,
    partial_pbc: Literal["refuse", "periodic", "molecule"] = "refuse",
) -> Structure:
    """viewcert Structure from an ``ase.Atoms``."""
    from ase import Atoms

    if not isinstance(atoms, Atoms):
        raise InputError(f"expected ase.Atoms, got {type(atoms).__name__}", field="atoms")
    if partial_pbc not in ("refuse", "periodic", "molecule"):
        raise InputError(
            f"partial_pbc must be 'refuse', 'periodic' or 'molecule', got {partial_pbc!r}",
            field="partial_pbc",
        )
    prov = provenance or Provenance(source="ase", identifier=atoms.get_chemical_formula())
    src = prov.source or prov.identifier or None
    pbc = np.asarray(atoms.pbc, dtype=bool)
    periodic = bool(pbc.all())
    if pbc.any() and not pbc.all():
        if partial_pbc == "refuse":
            raise InputError(
                f"mixed periodicity pbc={pbc.tolist()} (a slab or wire); pass partial_pbc='periodic' or "
                "'molecule'",
                source=src,
                field="pbc",
            )
        periodic = partial_pbc == "periodic"
    lattice = None
    if periodic:
        lattice = np.array(atoms.cell[:], dtype=np.float64)
        if abs(np.linalg.det(lattice)) < 1e-6:
            raise InputError("periodic Atoms with a degenerate (zero-volume) cell", source=src, field="cell")
    labels = None
    if LABELS_ARRAY in atoms.arrays:
        labels = tuple(str(x) for x in atoms.arrays[LABELS_ARRAY])
    return Structure(
        np.array(atoms.positions, dtype=np.float64),
        np.array(atoms.numbers, dtype=np.int64),
        lattice,
        site_labels=labels,
        provenance=prov,
    )


def to_ase(s: Structure) -> Any:
    """``ase.Atoms`` with the same numbers and positions; periodic structures get cell and pbc=True."""
    from ase import Atoms

    if s.lattice is None:
        atoms = Atoms(numbers=s.numbers.copy(), positions=s.positions.copy(), pbc=False)
    else:
        atoms = Atoms(numbers=s.numbers.copy(), positions=s.positions.copy(), cell=s.lattice.copy(), pbc=True)
    if s.site_labels is not None:
        atoms.new_array(LABELS_ARRAY, np.array(s.site_labels, dtype=str))
    return atoms
