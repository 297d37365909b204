"""The cross-check: ProLIF's hydrogen bonds on the same protonated complex, and why they differ.

ProLIF (``HBDonor``/``HBAcceptor`` at its defaults: D···A ≤ 3.5 Å, D–H···A in 130–180°, donors and
acceptors typed by SMARTS) runs on RDKit molecules converted by biotite from the very atoms and hydrogens
the primary criterion sees, so a disagreement is about the criterion, never the input. Each disagreement is
explained from its geometry (the donor's hydrogen nearest the acceptor): which threshold of which
implementation it falls outside, or, when both geometries pass, the typing (ProLIF's SMARTS do not list
that atom as donor/acceptor, or Baker–Hubbard's elements do not).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from viewcert.interactions.criterion import PROLIF_CRITERION, HBondCriterion, geometry
from viewcert.interactions.hbonds import HBond, site
from viewcert.interactions.protonate import Protonated, prepared_of
from viewcert.numeric import sig


@dataclass(frozen=True)
class Disagreement:
    """A (donor, acceptor) pair of prepared atoms found by one implementation only, with the reason."""

    entry: str
    found_by: str
    donor: int
    acceptor: int
    d_da: float
    d_ha: float
    angle: float
    reason: str

    def to_dict(self) -> dict:
        return {"entry": self.entry, "found_by": self.found_by, "donor": self.donor, "acceptor": self.acceptor,
                "d_da_A": sig(self.d_da), "d_ha_A": sig(self.d_ha), "angle_deg": sig(self.angle),
                "reason": self.reason}


def _mol(atoms):
    from biotite.interface import rdkit as bir  # lazy: RDKit and ProLIF are the interactions extra
    from rdkit import Chem, RDLogger  # lazy: as above

    RDLogger.DisableLog("rdApp.*")  # sanitisation notes (kekulisation of a haem) would reach stderr
    try:
        m = bir.to_mol(atoms)
        m.UpdatePropertyCache(strict=False)
        Chem.SanitizeMol(m, catchErrors=True)
    finally:
        RDLogger.EnableLog("rdApp.*")
    return m


def prolif_pairs(prot: Protonated) -> set[tuple[int, int]]:
    """(donor, acceptor) prepared-atom pairs ProLIF finds between ligand and pocket."""
    with warnings.catch_warnings():  # MDAnalysis warns about its own deprecated modules when first used
        import MDAnalysis  # noqa: F401  # lazy: ProLIF's dependency; its import re-enables its deprecation warnings

        warnings.simplefilter("ignore")
        return _prolif_pairs(prot)


def _prolif_pairs(prot: Protonated) -> set[tuple[int, int]]:
    import prolif  # lazy: the interactions extra (ProLIF imports MDAnalysis, ~2 s)

    lig_idx, poc_idx = np.flatnonzero(prot.ligand), np.flatnonzero(prot.pocket)
    lig = prolif.Molecule.from_rdkit(_mol(prot.atoms[lig_idx]))
    poc = prolif.Molecule.from_rdkit(_mol(prot.atoms[poc_idx]))
    fp = prolif.Fingerprint(["HBDonor", "HBAcceptor"], count=True)
    ifp = fp.generate(lig, poc, metadata=True)  # one frame, in this process
    back = prepared_of(prot)
    out = set()
    for hits in ifp.values():
        for name, found in hits.items():
            for x in found:
                li, pi = x["parent_indices"]["ligand"], x["parent_indices"]["protein"]
                d, a = (lig_idx[li[0]], poc_idx[pi[0]]) if name == "HBDonor" else (poc_idx[pi[0]], lig_idx[li[0]])
                out.add((back[int(d)], back[int(a)]))
    return out


def _best_geometry(prot: Protonated, donor: int, acceptor: int):
    """Geometry through the donor's hydrogen nearest the acceptor (None when the donor has no H)."""
    a = prot.atoms
    d, acc = int(prot.index[donor]), int(prot.index[acceptor])
    hs = [j for j in a.bonds.get_bonds(d)[0].tolist() if a.element[j] == "H"]
    if not hs:
        return None
    h = min(hs, key=lambda j: float(np.linalg.norm(a.coord[j] - a.coord[acc])))
    return geometry(a.coord[d], a.coord[h], a.coord[acc])


def _has_h(prot: Protonated, k: int) -> bool:
    a = prot.atoms
    return any(a.element[j] == "H" for j in a.bonds.get_bonds(int(prot.index[k]))[0].tolist())


def _reason(g, found_by: str, crit: HBondCriterion, acceptor_has_h: bool = False) -> str:
    lo, hi = PROLIF_CRITERION["angle_range_deg"]
    dmax = PROLIF_CRITERION["max_donor_acceptor_A"]
    if g is None:
        return "the donor carries no hydrogen after protonation (ProLIF's implicit-H SMARTS still type it)"
    if not isinstance(crit, HBondCriterion):  # PLIP/ChimeraX: their checks are recorded with each bond
        pro_ok = g.d_da <= dmax and lo <= g.angle <= hi
        side = f"{'inside' if pro_ok else 'outside'} ProLIF's D···A ≤ {dmax:g} Å, angle {lo:g}-{hi:g}°"
        return (f"{crit.name} {'finds' if found_by == 'biotite' else 'does not find'} it (its typing, thresholds "
                f"or selection); D···A {g.d_da:.2f} Å, angle {g.angle:.1f}°: {side}")
    bio_ok, pro_ok = crit.holds(g.d_ha, g.angle), g.d_da <= dmax and lo <= g.angle <= hi
    out = []
    if not bio_ok:
        out.append(f"Baker-Hubbard: H···A {g.d_ha:.2f} Å (≤ {crit.max_h_acceptor:g}), angle {g.angle:.1f}° "
                   f"(≥ {crit.min_angle:g})")
    if not pro_ok:
        out.append(f"ProLIF: D···A {g.d_da:.2f} Å (≤ {dmax:g}), angle {g.angle:.1f}° ({lo:g}-{hi:g})")
    if out:
        return "outside " + "; ".join(out)
    if found_by == "biotite" and acceptor_has_h:
        return ("both geometries pass: typing — the acceptor carries a hydrogen after protonation; ProLIF's "
                "acceptor SMARTS exclude it, Baker-Hubbard types by element only")
    other = "ProLIF" if found_by == "biotite" else "biotite"
    return f"both geometries pass: typing — {other} does not count this donor/acceptor pair"


def cross_check(prot: Protonated, bonds: tuple[HBond, ...], criterion: HBondCriterion | None = None) -> dict:
    """Agreement of the primary bonds with ProLIF's: counts and every disagreement explained."""
    crit = criterion or HBondCriterion()
    ours = {b.pair() for b in bonds}
    theirs = prolif_pairs(prot)
    diffs = []
    for found_by, pairs in (("biotite", ours - theirs), ("prolif", theirs - ours)):
        for d, a in sorted(pairs):
            g = _best_geometry(prot, d, a)
            lig_donor = d in set(prot.prepared.ligand_atoms)
            r, l_ = (site(prot, a), site(prot, d)) if lig_donor else (site(prot, d), site(prot, a))
            entry = f"{r.residue} {r.seq} {r.atom} {r.chain}, {l_.atom}"
            nan = float("nan")
            diffs.append(Disagreement(entry, found_by, d, a, g.d_da if g else nan, g.d_ha if g else nan,
                                      g.angle if g else nan, _reason(g, found_by, crit, _has_h(prot, a))))
    return {"criterion": dict(PROLIF_CRITERION), "n_primary": len(ours), "n_crosscheck": len(theirs),
            "n_both": len(ours & theirs), "disagreements": [x.to_dict() for x in diffs]}
