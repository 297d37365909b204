"""Site orbits of a cell: spglib's ``equivalent_atoms`` (one orbit id per atom), public for the layers above
(design's occlusion report: an occluder in the same orbit makes an occlusion redundant)."""

from __future__ import annotations

import numpy as np

from viewcert.structures import Structure
from viewcert.symmetry._spglib import symmetry_dataset


def equivalent_atoms(structure: Structure, *, symprec: float = 1e-3, angle_tolerance: float = -1.0) -> np.ndarray:
    """Orbit id (the index of the orbit's first atom) per atom of a periodic cell at ``symprec`` Å; a
    molecule (no lattice): every atom is its own orbit."""
    if not structure.is_periodic:
        return np.arange(structure.n_atoms, dtype=np.int64)
    ds = symmetry_dataset(structure.lattice, structure.frac_coords, structure.numbers, symprec=symprec,
                          angle_tolerance=angle_tolerance)
    return np.asarray(ds.equivalent_atoms, dtype=np.int64)
