"""The hydrogen-bond ground truth of a complex, as recorded in certificates: the bonds with their criterion
values, the criterion, hydride's protonation summary, the ProLIF cross-check and the library versions."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from viewcert.interactions.criterion import HBondCriterion
from viewcert.interactions.hbonds import HBond, find_hbonds
from viewcert.interactions.protonate import ENVIRONMENT, Protonated, protonated_complex
from viewcert.io.complex import DEFAULT_POCKET

LIBRARIES = ("viewcert", "numpy", "scipy", "numba", "gemmi", "pillow", "biotite", "hydride", "prolif", "rdkit",
             "MDAnalysis")


def library_versions() -> dict:
    """Installed versions of the interaction libraries ("absent" when not installed).

    Returns
    -------
    dict
        Library name → its version, or "absent".
    """
    out = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def complex_record(prepared) -> dict:
    """``PreparedComplex.to_dict`` with the input file by name and SHA-256 (no location, so the same inputs
    read from another folder give the same record).

    Parameters
    ----------
    prepared : PreparedComplex
        The complex as ``complex:`` prepared it.

    Returns
    -------
    dict
        The record written in certificates.
    """
    d = prepared.to_dict()
    d["source"] = Path(d["source"]).name
    d["sha256"] = prepared.structure.provenance.sha256
    return d


@dataclass(frozen=True, eq=False)
class HBondTruth:
    """Bonds of one complex (``bonds``, sorted by entry) and everything that defines them."""

    protonated: Protonated
    bonds: tuple[HBond, ...]
    criterion: HBondCriterion
    crosscheck: dict | None

    def entries(self) -> tuple[str, ...]:
        """The distinct MiSI five-tuples (two bonds of one atom pair in opposite directions are one entry)."""
        return tuple(dict.fromkeys(b.entry() for b in self.bonds))

    def to_dict(self) -> dict:
        p = self.protonated
        return {"complex": complex_record(p.prepared), "criterion": self.criterion.to_dict(),
                "protonation": {"tool": "hydride", "environment_A": ENVIRONMENT,
                                "hydrogens_added": p.n_hydrogens_added, "warnings": dict(p.warnings)},
                "bonds": [b.to_dict() for b in self.bonds], "entries": list(self.entries()),
                "crosscheck": self.crosscheck, "libraries": library_versions()}


def hbond_truth(path: str | Path, *, ligand: str | None = None, pocket: float = DEFAULT_POCKET,
                criterion: HBondCriterion | None = None, crosscheck: bool = True) -> HBondTruth:
    """Ligand–pocket hydrogen bonds of the complex at ``path`` (``complex:`` rules), cross-checked by ProLIF
    unless ``crosscheck=False``.

    Parameters
    ----------
    path : str or Path
        The complex: a folder (PDBbind or PoseBusters layout) or a file.
    ligand : str, optional
        The ligand (residue name, or ``RES/CHAIN/SEQ``); default: the one ``complex:`` picks.
    pocket : float
        Pocket radius around the ligand (Å).
    criterion : HBondCriterion, optional
        The hydrogen-bond criterion; default Baker–Hubbard's.
    crosscheck : bool
        Cross-check with ProLIF and explain every disagreement.

    Returns
    -------
    HBondTruth
        The complex's record, the bonds and the cross-check.
    """
    crit = criterion or HBondCriterion()
    prot = protonated_complex(path, ligand=ligand, pocket=pocket, ph=crit.ph)
    bonds = find_hbonds(prot, crit)
    check = None
    if crosscheck:
        from viewcert.interactions.crosscheck import cross_check  # lazy: ProLIF imports MDAnalysis (~2 s)

        check = cross_check(prot, bonds, crit)
    return HBondTruth(prot, bonds, crit, check)
