"""Interactions: ligand–pocket hydrogen bonds of a prepared complex, the ground truth of MiSI's interaction
tasks.

- ``criterion``   the Baker–Hubbard criterion (distances, angle, donor/acceptor elements, hydrogens) and the
                  criterion values of one D–H···A triple
- ``criteria``    ``--criterion plip`` and ``chimerax``: PLIP's and ChimeraX's criteria as typed pairs with
                  their checks (thresholds with sources), ``criterion_named``
- ``protonate``   the prepared complex as a biotite AtomArray with bonds, charges and hydride's hydrogens
- ``hbonds``      the bonds (biotite ``structure.hbond``), each with its MiSI five-tuple entry
- ``crosscheck``  ProLIF on the same atoms, every disagreement explained
- ``truth``       ``hbond_truth``: all of it, as recorded in certificates
- ``ceiling``     what the views determine: identified (legible labels), recovered (oracle), stable at δ;
                  the best expected MiSI list score (pocket–ligand, residue–ligand)

biotite, hydride and ProLIF are the ``interactions`` extra; they are imported at first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.interactions.criterion import PROLIF_CRITERION, Geometry, HBondCriterion, geometry
    from viewcert.interactions.hbonds import HBond, Site, find_hbonds
    from viewcert.interactions.protonate import Protonated, protonated_complex
    from viewcert.interactions.truth import HBondTruth, complex_record, hbond_truth, library_versions

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "Geometry": "criterion", "geometry": "criterion", "HBondCriterion": "criterion",
    "PROLIF_CRITERION": "criterion", "find_hbonds": "hbonds", "HBond": "hbonds", "Site": "hbonds",
    "Protonated": "protonate", "protonated_complex": "protonate", "complex_record": "truth", "hbond_truth": "truth",
    "HBondTruth": "truth", "library_versions": "truth",
}
lazy_face(__name__, _FACE)

__all__ = ["PROLIF_CRITERION", "Geometry", "HBond", "HBondCriterion", "HBondTruth", "Protonated", "Site",
           "complex_record", "find_hbonds", "geometry", "hbond_truth", "library_versions", "protonated_complex"]
