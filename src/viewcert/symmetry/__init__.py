"""Symmetry of cells and molecules: the only importers of spglib and moyopy.

- ``labels``       crystal system / point group / space group of a cell (spglib, cross-checked by moyopy)
- ``standardize``  conventional standard cells (pymatgen's setting reproduced, or spglib's own)
- ``site_order``   pymatgen's site order (Pauling electronegativity, ``Site.__lt__`` replayed)
- ``pointgroup``   Schoenflies point groups of molecules
- ``_spglib``, ``_moyo``  the adapters (private: exception mode, units; only this package imports them)
"""

from viewcert.symmetry.labels import (
    CRYSTAL_SYSTEMS,
    LEVELS,
    SymmetryCheck,
    SymmetryLabel,
    analyse_cell,
    crystal_system_of,
    symmetry_of,
)
from viewcert.symmetry.standardize import conventional_standard_cell

__all__ = ["CRYSTAL_SYSTEMS", "LEVELS", "SymmetryCheck", "SymmetryLabel", "analyse_cell", "conventional_standard_cell",
           "crystal_system_of", "symmetry_of"]
