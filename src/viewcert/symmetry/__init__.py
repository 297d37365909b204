"""Symmetry of cells and molecules: the only importers of spglib and moyopy.

- ``labels``       crystal system / point group / space group of a cell (spglib, cross-checked by moyopy)
- ``standardize``  conventional standard cells (pymatgen's setting reproduced, or spglib's own)
- ``site_order``   pymatgen's site order (Pauling electronegativity, ``Site.__lt__`` replayed)
- ``pointgroup``   Schoenflies point groups of molecules
- ``notation``     a space group in a database's notation (Hermann–Mauguin, Hall, operations) as its number
- ``_spglib``, ``_moyo``  the adapters (private: exception mode, units; only this package imports them)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
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

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "analyse_cell": "labels", "crystal_system_of": "labels", "CRYSTAL_SYSTEMS": "labels", "LEVELS": "labels",
    "symmetry_of": "labels", "SymmetryCheck": "labels", "SymmetryLabel": "labels",
    "conventional_standard_cell": "standardize",
}
lazy_face(__name__, _FACE)

__all__ = ["CRYSTAL_SYSTEMS", "LEVELS", "SymmetryCheck", "SymmetryLabel", "analyse_cell", "conventional_standard_cell",
           "crystal_system_of", "symmetry_of"]
