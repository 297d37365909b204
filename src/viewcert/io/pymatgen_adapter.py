"""pymatgen ↔ viewcert, both ways (the only place that converts pymatgen objects).

- ``from_pymatgen(obj)``: ``pymatgen.core.Structure`` → periodic Structure (lattice = ``lattice.matrix``,
  rows a, b, c; positions = ``cart_coords``); ``Molecule`` → molecule. Site labels are kept.
  Disordered sites follow the same ``occupancy_policy`` as the CIF reader ("refuse", "majority",
  "ignore"; see :mod:`viewcert.io.cif`).
- ``to_pymatgen(s)``: Structure → ``pymatgen.core.Structure`` (periodic) or ``Molecule``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from viewcert.errors import InputError
from viewcert.structures import Provenance, Structure

_OCC_TOL = 1e-3


def _site_number(site: Any, idx: int, policy: str, src: str | None) -> int:
    comp = site.species
    items = list(comp.items())
    label = getattr(site, "label", None) or f"#{idx}"
    total = float(sum(amt for _, amt in items))
    if len(items) == 1 and abs(total - 1.0) <= _OCC_TOL:
        sp = items[0][0]
    else:
        if policy == "refuse":
            raise InputError(
                f"site {idx} ({label!r}) is disordered or partially occupied ({comp}); pass "
                "occupancy_policy='majority' or 'ignore'",
                source=src,
                field="occupancy",
            )
        if policy == "ignore" and len(items) > 1:
            raise InputError(
                f"site {idx} ({label!r}) holds several species ({comp}); 'ignore' cannot choose one, use "
                "occupancy_policy='majority'",
                source=src,
                field="occupancy",
            )
        if total > 1.0 + _OCC_TOL and policy != "ignore":
            raise InputError(
                f"site {idx} ({label!r}) has occupancy {total:g} > 1", source=src, field="occupancy"
            )
        sp = max(items, key=lambda kv: kv[1])[0]  # first of equal maxima (dict order)
    z = int(getattr(sp, "Z", 0) or 0)
    if z < 1:
        raise InputError(
            f"site {idx} ({label!r}): {sp} is not a chemical element", source=src, field="species"
        )
    return z


def from_pymatgen(
    obj: Any,
    *,
    occupancy_policy: str = "refuse",
    provenance: Provenance | None = None,
) -> Structure:
    """viewcert Structure from a pymatgen ``Structure``/``IStructure`` (periodic) or ``Molecule``."""
    from pymatgen.core import IMolecule, IStructure

    if occupancy_policy not in ("refuse", "majority", "ignore"):
        raise InputError(
            f"occupancy_policy must be 'refuse', 'majority' or 'ignore', got {occupancy_policy!r}",
            field="occupancy_policy",
        )
    prov = provenance or Provenance(source="pymatgen", identifier=str(getattr(obj, "formula", "")))
    src = prov.source or prov.identifier or None
    if isinstance(obj, IStructure):
        lattice = np.array(obj.lattice.matrix, dtype=np.float64)
        positions = np.array(obj.cart_coords, dtype=np.float64).reshape(-1, 3)
    elif isinstance(obj, IMolecule):
        lattice = None
        positions = np.array(obj.cart_coords, dtype=np.float64).reshape(-1, 3)
    else:
        raise InputError(f"expected a pymatgen Structure or Molecule, got {type(obj).__name__}", field="obj")
    numbers = np.array([_site_number(s, i, occupancy_policy, src) for i, s in enumerate(obj)], dtype=np.int64)
    labels = tuple(str(getattr(s, "label", None) or "") for s in obj)
    if not any(labels):
        labels = None
    if occupancy_policy == "majority":
        # sites whose best species has zero occupancy are vacancies
        keep = np.array([max(s.species.values()) > 0 for s in obj], dtype=bool)
        if not keep.all():
            positions, numbers = positions[keep], numbers[keep]
            labels = None if labels is None else tuple(lab for lab, k in zip(labels, keep, strict=True) if k)
    return Structure(positions, numbers, lattice, site_labels=labels, provenance=prov)


def to_pymatgen(s: Structure) -> Any:
    """pymatgen ``Structure`` (periodic, Cartesian positions as given, not wrapped) or ``Molecule``."""
    from pymatgen.core import Lattice, Molecule
    from pymatgen.core import Structure as PmgStructure

    species = [int(z) for z in s.numbers]
    labels = list(s.site_labels) if s.site_labels is not None else None
    if s.lattice is None:
        return Molecule(species, s.positions.copy(), labels=labels)
    return PmgStructure(
        Lattice(s.lattice.copy()), species, s.positions.copy(), coords_are_cartesian=True, labels=labels
    )
