"""Ligand–pocket hydrogen bonds of a prepared complex: the ground truth of the interaction tasks.

Primary: biotite's ``structure.hbond`` (Baker–Hubbard, ``criterion.HBondCriterion``) on the complex with
hydride's hydrogens (``protonate``), between the ligand's residue and the pocket's residues, either side
donating. A bond is a (donor, acceptor) pair of heavy atoms of the prepared structure; when several
hydrogens of one donor reach the acceptor, the one with the shortest H···A is kept. Under ``--criterion plip``
or ``chimerax`` (``criteria``) the same atoms are decided by that criterion's typed pairs and checks; each
bond then carries its checks (the thresholds that decided it), which the margin rule reads. Its MiSI entry is the
five-tuple (residue type, residue index, residue atom, chain, ligand atom), written ``ARG 45 NH2 A, O1B``
(residue index with its insertion code, e.g. ``52A``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from viewcert.errors import InputError
from viewcert.interactions.criteria import Chemistry
from viewcert.interactions.criterion import HBondCriterion, geometry
from viewcert.interactions.protonate import Protonated, prepared_of
from viewcert.numeric import sig


@dataclass(frozen=True)
class Site:
    """One heavy atom of the prepared complex: index in its structure and its names."""

    index: int
    chain: str
    residue: str
    seq: str
    atom: str
    element: str


@dataclass(frozen=True)
class HBond:
    """One D–H···A bond between ligand and pocket; ``ligand_role``: "donor" or "acceptor"; distances Å,
    angle degrees; ``hydrogen``: the H's position (Å)."""

    donor: Site
    acceptor: Site
    ligand_role: str
    d_da: float
    d_ha: float
    angle: float
    hydrogen: tuple[float, float, float]
    checks: tuple = field(default=(), compare=False)  # criteria.Check of PLIP/ChimeraX; () for Baker–Hubbard

    @property
    def residue_site(self) -> Site:
        return self.acceptor if self.ligand_role == "donor" else self.donor

    @property
    def ligand_site(self) -> Site:
        return self.donor if self.ligand_role == "donor" else self.acceptor

    def entry(self) -> str:
        """MiSI's five-tuple: ``RES SEQ ATOM CHAIN, LIGATOM``."""
        r = self.residue_site
        return f"{r.residue} {r.seq} {r.atom} {r.chain}, {self.ligand_site.atom}"

    def pair(self) -> tuple[int, int]:
        return self.donor.index, self.acceptor.index

    def to_dict(self) -> dict:
        d = {"entry": self.entry(), "donor": self.donor.index, "acceptor": self.acceptor.index,
             "ligand_role": self.ligand_role, "d_da_A": sig(self.d_da), "d_ha_A": sig(self.d_ha),
             "angle_deg": sig(self.angle)}
        if self.checks:  # written only under plip/chimerax: Baker–Hubbard records keep their bytes
            d["checks"] = [{"what": c.what, "value": sig(c.value), "bound": sig(c.bound),
                            "test": ("<" if c.strict else "≤") if c.upper else (">" if c.strict else "≥")}
                           for c in self.checks]
        return d


def site(prot: Protonated, k: int) -> Site:
    """The prepared atom ``k`` as a Site (names from the AtomArray, element from the structure)."""
    a, i = prot.atoms, int(prot.index[k])
    return Site(int(k), str(a.chain_id[i]), str(a.res_name[i]), f"{a.res_id[i]}{a.ins_code[i].strip()}",
                str(a.atom_name[i]), str(a.element[i]))


def check_partners(prot: Protonated, criterion: HBondCriterion) -> None:
    """InputError when no hydrogen bond is possible at all: the ligand has no N/O/S, or the pocket none."""
    a = prot.atoms
    donors = getattr(criterion, "donor_elements", ("N", "O", "S"))  # PLIP/ChimeraX type within N/O/S
    polar = np.isin(a.element, sorted(set(donors) | set(getattr(criterion, "acceptor_elements", donors))))
    src = prot.prepared.structure.provenance.source
    if not (polar & prot.ligand).any():
        raise InputError(f"the ligand {prot.prepared.ligand!r} has no donor or acceptor atom "
                         f"({'/'.join(donors)})", source=src, field="ligand")
    if not (polar & prot.pocket).any():
        raise InputError(f"the pocket ({prot.prepared.pocket:g} Å) has no donor or acceptor atom", source=src,
                         field="pocket")


def baker_hubbard(atoms, selection1, selection2, criterion: HBondCriterion) -> np.ndarray:
    """(n, 3) (D, H, A) indices of biotite's ``hbond`` between two selections, either side donating, at the
    criterion's thresholds and elements."""
    import biotite.structure as struc  # lazy: biotite costs ~1 s to import and is the interactions extra

    trip = struc.hbond(atoms, selection1=selection1, selection2=selection2, selection1_type="both",
                       cutoff_dist=criterion.max_h_acceptor, cutoff_angle=criterion.min_angle,
                       donor_elements=criterion.donor_elements, acceptor_elements=criterion.acceptor_elements)
    return np.asarray(trip, dtype=np.int64).reshape(-1, 3)


def find_hbonds(prot: Protonated, criterion: HBondCriterion | None = None) -> tuple[HBond, ...]:
    """Every ligand–pocket hydrogen bond by the criterion (module docstring), sorted by entry.

    Parameters
    ----------
    prot : Protonated
        The prepared complex with hydrogens and bonds.
    criterion : HBondCriterion, optional
        The criterion: Baker–Hubbard's distances (Å) and angle (degrees) by default, or PLIP's or ChimeraX's
        (``interactions.criteria``).

    Returns
    -------
    tuple of HBond
        The bonds, sorted by their MiSI entry.
    """
    crit = criterion or HBondCriterion()
    check_partners(prot, crit)
    if not isinstance(crit, HBondCriterion):
        return typed_hbonds(prot, crit)
    a = prot.atoms
    trip = baker_hubbard(a, prot.ligand, prot.pocket, crit)
    back = prepared_of(prot)
    pos = prot.prepared.structure.positions
    best: dict[tuple[int, int], HBond] = {}
    for d, h, acc in trip.tolist():
        if d not in back or acc not in back:
            continue  # an atom outside the prepared complex (cannot happen with whole residues; kept safe)
        g = geometry(pos[back[d]], a.coord[h], pos[back[acc]])  # heavy atoms in float64, as prepared
        bond = HBond(site(prot, back[d]), site(prot, back[acc]), "donor" if prot.ligand[d] else "acceptor",
                     g.d_da, g.d_ha, g.angle, tuple(float(x) for x in a.coord[h]))
        key = bond.pair()
        if key not in best or bond.d_ha < best[key].d_ha:
            best[key] = bond
    return tuple(sorted(best.values(), key=lambda b: (b.entry(), b.pair())))


def typed_hbonds(prot: Protonated, crit) -> tuple[HBond, ...]:
    """The bonds of a ``criteria`` criterion (PLIP, ChimeraX): its typed pairs that pass every check, refined by
    its selection rule; one bond per (donor, acceptor) pair (the largest D–H···A of the passing hydrogens). The
    recorded H···A and angle are through the hydrogen that decided, else (a heavy-atom decision) through the
    donor's hydrogen nearest the acceptor."""
    chem = Chemistry(prot.atoms)
    chosen = [x for x in crit.select(prot, chem, [x for x in crit.decisions(prot, chem) if x.holds()]) if x.holds()]
    back = prepared_of(prot)
    a, pos = prot.atoms, prot.prepared.structure.positions
    best: dict[tuple[int, int], HBond] = {}
    for x in chosen:
        if x.donor not in back or x.acceptor not in back:
            continue  # an atom outside the prepared complex (as in find_hbonds)
        h = x.hydrogen if x.hydrogen >= 0 else chem.nearest_h(x.donor, x.acceptor)
        g = geometry(pos[back[x.donor]], a.coord[h], pos[back[x.acceptor]])
        bond = HBond(site(prot, back[x.donor]), site(prot, back[x.acceptor]),
                     "donor" if prot.ligand[x.donor] else "acceptor", g.d_da, g.d_ha, g.angle,
                     tuple(float(v) for v in a.coord[h]), x.checks)
        if bond.pair() not in best or bond.angle > best[bond.pair()].angle:
            best[bond.pair()] = bond
    return tuple(sorted(best.values(), key=lambda b: (b.entry(), b.pair())))


def typed_margin_pairs(prot: Protonated, crit, bonds, delta: float) -> list[tuple[int, int]]:
    """(donor, acceptor) prepared-atom pairs of a ``criteria`` criterion that are not bonds, fail its checks, and
    pass them with every atom moved by δ in their favour (each check by its own margin, ``criteria.Check``;
    the selection rule's checks too, e.g. PLIP's one bond per donor). A pair its rule excludes outright (PLIP's
    salt bridges) is decided, not a margin pair."""
    chem = Chemistry(prot.atoms)
    back = prepared_of(prot)
    true = {b.pair() for b in bonds}
    decisions = crit.decisions(prot, chem, slack=2 * delta)
    passing = [x for x in decisions if x.holds()]
    judged = crit.select(prot, chem, passing)  # the passing pairs the rule keeps, with its checks

    def loose(xs) -> set[tuple[int, int]]:
        return {(x.donor, x.acceptor) for x in xs if not x.holds() and all(c.passes(delta, +1) for c in x.checks)}

    near = (loose(decisions) - {(x.donor, x.acceptor) for x in passing}) | loose(judged)
    out = {(back[d], back[a]) for d, a in near if d in back and a in back}
    return sorted(out - true)
