"""The other hydrogen-bond criteria of ``--criterion``: PLIP's and ChimeraX's, each a recorded parameter set
with its source, beside Baker–Hubbard (``criterion.HBondCriterion``, the default).

Both run on the same prepared complex and hydride's hydrogens as Baker–Hubbard (``protonate``), between the
ligand's residue and the pocket's, either side donating. Each pair's decision is a list of ``Check`` values
(one per threshold: its value, bound and how far moving every atom by δ can change it), so the margin rule of
``interactions.ceiling`` (a bond within δ of the criterion is uncertain) applies to every threshold.

**plip** — PLIP 3.0.1 (Adasme et al. 2021), ``plip/basic/config.py`` and ``plip/structure/detection.py``
``hbonds``: a donor D carrying a hydrogen H and an acceptor A with 0.5 < D···A < 4.1 Å (``MIN_DIST``,
``HBOND_DIST_MAX``: Hubbard & Haider 2001 + 0.6 Å) and D–H···A > 100° (``HBOND_DON_ANGLE_MIN``, + 10°); then
``preparation.refine_hbonds_ldon/pdon``: a bond between the two groups of a salt bridge (charge centres
< 5.5 Å, ``SALTBRIDGE_DIST_MAX``) is dropped, and each donor atom keeps one bond, the one with the largest
angle. Typing after Open Babel 3 (``OBAtom::IsHbondDonor``/``IsHbondAcceptor``, which PLIP calls): donors N/O
with a hydrogen; acceptors every O except nitro, sulfone, aromatic, aryl–O–aryl and ester sp3 oxygens, and
N unless it has four neighbours (sp3) or three neighbours and is conjugated (sp2), neighbours counting
hydrogens; S only as a thiolate. Simplifications: hydrogens are hydride's (PLIP adds Open Babel's unless
``--nohydro``); conjugation stands for Open Babel's hybridisation; the charged groups are PLIP's (Arg/His/Lys
side-chain N, Asp/Glu side-chain O; in the ligand N with four neighbours or an sp3 N with three, S with three
neighbours, carboxylate, phosphate, sulfonate/sulfate, guanidine) with conjugation again for sp2. The
one-bond-per-donor choice is a check too (the winner's lead over the donor's next acceptor), so the margin
rule sees it; the salt-bridge exclusion is not margin-tested.

**chimerax** — ChimeraX ``hbonds`` at its defaults (``relax true``, ``distSlop 0.4``, ``angleSlop 20``:
``hbonds/hbond.py`` ``rec_dist_slop``/``rec_angle_slop``), whose criteria are Mills & Dean's (1996, J Comput
Aided Mol Des 10:607, Tables 5–8) per donor and acceptor type. Heavy-atom based where the hydrogen is not
fixed by the heavy atoms: a donor whose hydrogens rotate (hydroxyl, NH2, NH3+) is tested on D···A and the
angle X–D···A at the donor (X its heavy neighbour, ChimeraX's *upsilon*), never on a placed hydrogen; a donor
with one fixed hydrogen (amide NH, ring NH, Arg NE, secondary amine) on H···A and D–H···A (*theta*) with the
hydrogen where the heavy atoms put it (hydride's, as ChimeraX's ``hyd_positions`` would). The acceptor must
be of a Mills–Dean type, within its D···A limit. Each limit is the table's plus 0.4 Å, each lower angle
minus 20°, each upper angle plus 20°. Simplifications (stated, not hidden): types come from elements,
neighbour counts, hydride's hydrogens and biotite's bond orders instead of ChimeraX's IDATM types; the
acceptor-side angles (phi, psi, syn/anti) and the donor's tau are not tested; a thiol or other donor without
a Mills–Dean row uses ChimeraX's generic D···A limit (3.73 Å) alone.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import ClassVar

import numpy as np

from viewcert.errors import InputError
from viewcert.interactions.criterion import HBondCriterion, angle_margin, geometry

CRITERIA = ("baker-hubbard", "plip", "chimerax")


@dataclass(frozen=True)
class Check:
    """One threshold of a decision: ``value`` (Å or degrees) against ``bound``; ``upper``: value ≤ bound (else
    ≥); ``strict``: < / >; ``arms``: for an angle, the lengths (Å) of its two rays (its change when every atom
    moves by δ is ``angle_margin``); for a difference of two angles, their two pairs of rays (the margins add);
    None for a distance between two atoms (changes by up to 2δ)."""

    what: str
    value: float
    bound: float
    upper: bool
    strict: bool = False
    arms: tuple | None = None

    def margin(self, delta: float) -> float:
        if self.arms is None:
            return 2 * delta
        pairs = self.arms if isinstance(self.arms[0], tuple) else (self.arms,)
        return sum(angle_margin(a, b, delta) for a, b in pairs)

    def passes(self, delta: float = 0.0, sign: int = 0) -> bool:
        """The check with every atom moved by δ: sign −1 the worst case (stable), +1 the best (loosened)."""
        m = sign * self.margin(delta) if delta else 0.0
        if self.upper:
            v = self.value - m
            return v < self.bound if self.strict else v <= self.bound
        v = self.value + m
        return v > self.bound if self.strict else v >= self.bound


def _angle(a, vertex, b) -> tuple[float, tuple[float, float]]:
    """Angle a–vertex–b (degrees) and its two arm lengths (Å)."""
    u, v = np.asarray(a, float) - vertex, np.asarray(b, float) - vertex
    nu, nv = float(np.linalg.norm(u)), float(np.linalg.norm(v))
    return math.degrees(math.acos(float(np.clip(np.dot(u, v) / (nu * nv), -1, 1)))), (nu, nv)


class Chemistry:
    """Neighbours, hydrogens and conjugation of the protonated complex's atoms (biotite bonds and orders)."""

    def __init__(self, atoms) -> None:
        self.a = atoms
        self.el = np.char.upper(atoms.element.astype(str))
        idx, types = atoms.bonds.get_all_bonds()
        self.nb = [[int(j) for j in row if j >= 0] for row in idx]
        self.order = [{int(j): int(t) for j, t in zip(row, trow, strict=True) if j >= 0}
                      for row, trow in zip(idx, types, strict=True)]

    def hs(self, i: int) -> list[int]:
        return [j for j in self.nb[i] if self.el[j] == "H"]

    def heavy(self, i: int) -> list[int]:
        return [j for j in self.nb[i] if self.el[j] != "H"]

    def nearest_h(self, i: int, j: int) -> int:
        """The hydrogen of atom i nearest atom j (distances in float64; ValueError when i has none)."""
        c, target = self.a.coord, self.a.coord[j].astype(float)
        return min(self.hs(i), key=lambda h: float(np.linalg.norm(c[h] - target)))

    def multiple(self, i: int) -> bool:
        """A double, triple or aromatic bond at atom i (biotite BondType 2, 3, 5–7, 9)."""
        return any(t in (2, 3, 5, 6, 7, 9) for t in self.order[i].values())

    def aromatic(self, i: int) -> bool:
        return any(t in (5, 6, 7, 9) for t in self.order[i].values())

    def conjugated(self, i: int) -> bool:
        return self.multiple(i) or any(self.multiple(j) for j in self.heavy(i))

    def terminal_o(self, i: int) -> list[int]:
        return [j for j in self.heavy(i) if self.el[j] == "O" and len(self.heavy(j)) == 1]

    def in_ring(self, i: int) -> int:
        """Size of the smallest ring (≤ 7) through atom i, 0 when none (breadth-first back to i)."""
        best = 0
        for s in self.heavy(i):
            seen, frontier, depth = {i, s}, [s], 1
            while frontier and depth < 7:
                depth += 1
                nxt = []
                for x in frontier:
                    for y in self.heavy(x):
                        if y == i and depth > 2:
                            best = depth if not best else min(best, depth)
                        elif y not in seen:
                            seen.add(y)
                            nxt.append(y)
                frontier = nxt
        return best


def _typed_pairs(prot, chem: Chemistry, donor, acceptor, reach: float):
    """(d, a) atom indices in ``prot.atoms``, ligand–pocket either side donating, D···A ≤ reach Å."""
    from scipy.spatial import cKDTree  # lazy: start-up time

    a = prot.atoms
    out = []
    for side, other in ((prot.ligand, prot.pocket), (prot.pocket, prot.ligand)):
        dons = [i for i in np.flatnonzero(side).tolist() if donor(i)]
        accs = [i for i in np.flatnonzero(other).tolist() if acceptor(i)]
        if not dons or not accs:
            continue
        tree = cKDTree(a.coord[accs])
        for d in dons:
            out += [(d, accs[j]) for j in sorted(tree.query_ball_point(a.coord[d], reach))]
    return out


@dataclass(frozen=True)
class Decision:
    """One typed donor–acceptor pair (indices in ``prot.atoms``): the hydrogen that decides (−1 when the heavy
    atoms decide) and the checks of every threshold."""

    donor: int
    hydrogen: int
    acceptor: int
    checks: tuple[Check, ...]

    def holds(self) -> bool:
        return all(c.passes() for c in self.checks)


@dataclass(frozen=True)
class PLIPCriterion:
    """PLIP 3.0.1's hydrogen bonds (module docstring): Å, degrees."""

    name: ClassVar[str] = "plip"
    hydrogen_decides: ClassVar[bool] = True
    max_donor_acceptor: float = 4.1
    min_donor_acceptor: float = 0.5
    min_angle: float = 100.0
    max_salt_bridge: float = 5.5
    one_bond_per_donor: bool = True
    ph: float = 7.0
    hydrogens: str = "all removed, then hydride add_hydrogen + relax_hydrogen"

    def __post_init__(self) -> None:
        if not (0 <= self.min_donor_acceptor < self.max_donor_acceptor <= 6):
            raise InputError("PLIP distances must satisfy 0 ≤ min < max ≤ 6 Å", field="criterion")
        if not (0 <= self.min_angle < 180):
            raise InputError(f"min_angle must be in [0, 180) degrees, got {self.min_angle}", field="criterion")

    @property
    def reach(self) -> float:
        """D···A beyond which no hydrogen rotamer can make a bond (Å)."""
        return self.max_donor_acceptor

    def accepts(self, g) -> bool:
        """The two thresholds on one D–H···A geometry (``criterion.Geometry``)."""
        return self.min_donor_acceptor < g.d_da < self.max_donor_acceptor and g.angle > self.min_angle

    def to_dict(self) -> dict:
        d = asdict(self)
        d["name"] = self.name
        d["method"] = ("PLIP 3.0.1 hbonds: 0.5 < D···A < 4.1 Å, D–H···A > 100°, salt-bridge groups excluded, one "
                       "bond per donor (largest angle); Open Babel 3 donor/acceptor typing")
        d["source"] = ("plip/basic/config.py HBOND_DIST_MAX, HBOND_DON_ANGLE_MIN, MIN_DIST, SALTBRIDGE_DIST_MAX; "
                       "plip/structure/detection.py hbonds; preparation.py refine_hbonds_ldon/pdon; "
                       "Adasme et al. 2021, Nucleic Acids Res 49:W530")
        return d

    def donor(self, chem: Chemistry, i: int) -> bool:
        return chem.el[i] in ("N", "O") and bool(chem.hs(i))

    def acceptor(self, chem: Chemistry, i: int) -> bool:
        el, nb = chem.el[i], chem.nb[i]
        if el == "O":
            heavy = chem.heavy(i)
            if chem.aromatic(i) or sum(chem.aromatic(j) for j in heavy) >= 2:
                return False
            if len(heavy) == 1:
                c, term = heavy[0], chem.terminal_o(heavy[0])
                if chem.el[c] == "N" and len(term) >= 2:
                    return False  # nitro O
                if chem.el[c] == "S" and len(term) == 2 and len(chem.heavy(c)) == 4:
                    return False  # sulfone O: S with two terminal O and two other heavy neighbours
            if len(heavy) == 2 and not chem.hs(i) and any(
                    chem.el[j] == "C" and any(chem.el[k] == "O" and chem.order[j].get(k) == 2 for k in chem.nb[j])
                    for j in heavy):
                return False  # ester sp3 O
            return True
        if el == "N":
            return not (len(nb) == 4 or (len(nb) == 3 and chem.conjugated(i)))
        return el == "S" and int(chem.a.charge[i]) == -1

    def charged_groups(self, prot, chem: Chemistry) -> list[tuple[str, bool, frozenset, np.ndarray]]:
        """(sign, in ligand, atoms, charge centre) of PLIP's charged groups (``find_charged``,
        ``is_functional_group``): Arg/His/Lys side-chain N and Asp/Glu side-chain O at their centroid; in the
        ligand, neighbours counted without hydrogens as PLIP's ligand molecule has them, an N with four
        neighbours or an sp3 N with three (at the N), an S with three (at the S), a carboxylate's two O (their
        centroid), a phosphate or sulfonate/sulfate (the P/S and its O, at the P/S), a guanidine's three N
        (at its C, one N bonded to the C alone)."""
        a, c = prot.atoms, prot.atoms.coord
        out = []
        pocket = np.flatnonzero(prot.pocket)
        for key in dict.fromkeys(zip(a.chain_id[pocket], a.res_id[pocket], a.res_name[pocket], strict=True)):
            res = pocket[(a.chain_id[pocket] == key[0]) & (a.res_id[pocket] == key[1])]
            side = [i for i in res.tolist() if a.atom_name[i] not in ("N", "CA", "C", "O", "OXT")]
            el = {"ARG": "N", "HIS": "N", "LYS": "N", "ASP": "O", "GLU": "O"}.get(str(key[2]))
            atoms = [i for i in side if chem.el[i] == el]
            if atoms:
                out.append(("+" if el == "N" else "-", False, frozenset(atoms), c[atoms].mean(axis=0)))
        for i in np.flatnonzero(prot.ligand).tolist():
            el, nb = chem.el[i], chem.heavy(i)
            oxy = [j for j in nb if chem.el[j] == "O"]
            if el == "N" and (len(nb) == 4 or (len(nb) == 3 and not chem.conjugated(i))):
                out.append(("+", True, frozenset([i]), c[i]))
            elif el == "S" and len(nb) == 3:
                out.append(("+", True, frozenset([i]), c[i]))
            elif (el == "S" and len(oxy) >= 3) or (el == "P" and nb and len(oxy) == len(nb)):
                out.append(("-", True, frozenset([i, *oxy]), c[i]))
            elif el == "C" and len(oxy) == 2 and sum(chem.el[j] == "C" for j in nb) == 1:
                out.append(("-", True, frozenset(oxy), c[oxy].mean(axis=0)))
            elif el == "C" and len(nb) == 3 and all(chem.el[j] == "N" for j in nb) \
                    and min(len(chem.heavy(j)) for j in nb) == 1:
                out.append(("+", True, frozenset(nb), c[i]))
        return out

    def salt_bridged(self, prot, chem: Chemistry) -> list[tuple[frozenset, frozenset]]:
        """(ligand group, pocket group) pairs of opposite charge with centres 0.5–5.5 Å apart (``saltbridge``)."""
        groups = self.charged_groups(prot, chem)
        out = []
        for s1, lig1, g1, c1 in groups:
            for s2, lig2, g2, c2 in groups:
                if lig1 and not lig2 and s1 != s2 and \
                        self.min_donor_acceptor < float(np.linalg.norm(c1 - c2)) < self.max_salt_bridge:
                    out.append((g1, g2))
        return out

    def decisions(self, prot, chem: Chemistry, slack: float = 0.0) -> list[Decision]:
        """Every typed pair within D···A ≤ 4.1 + slack Å, one Decision per donor hydrogen."""
        a = prot.atoms
        out = []
        for d, acc in _typed_pairs(prot, chem, lambda i: self.donor(chem, i), lambda i: self.acceptor(chem, i),
                                   self.max_donor_acceptor + slack):
            for h in chem.hs(d):
                g = geometry(a.coord[d], a.coord[h], a.coord[acc])
                checks = (Check("D···A", g.d_da, self.max_donor_acceptor, True, True),
                          Check("D···A", g.d_da, self.min_donor_acceptor, False, True),
                          Check("D–H···A", g.angle, self.min_angle, False, True, (np.linalg.norm(
                              a.coord[d] - a.coord[h]).item(), g.d_ha)))
                out.append(Decision(d, h, acc, checks))
        return out

    def select(self, prot, chem: Chemistry, passing: list[Decision]) -> list[Decision]:
        """PLIP's refinement of the pairs that pass its thresholds: those between salt-bridged groups are
        dropped; then one bond per donor, the largest angle — as a check on each pair, its angle minus the
        largest angle of the donor's other acceptors (> 0 wins), so the margin rule sees a choice that δ could
        flip (two exactly equal angles: neither, where PLIP keeps the first it meets)."""
        lig, a = prot.ligand, prot.atoms
        bridges = self.salt_bridged(prot, chem)
        kept = []
        for x in passing:
            li, pi = (x.donor, x.acceptor) if lig[x.donor] else (x.acceptor, x.donor)
            if not any(li in g1 and pi in g2 for g1, g2 in bridges):
                kept.append(x)
        if not self.one_bond_per_donor:
            return kept
        out = []
        for x in kept:
            rivals = [y for y in kept if y.donor == x.donor and y.acceptor != x.acceptor]
            if rivals:
                r = max(rivals, key=lambda y: y.checks[2].value)
                other = f"{a.res_name[r.acceptor]} {a.res_id[r.acceptor]} {a.atom_name[r.acceptor]}"
                x = replace(x, checks=(*x.checks, Check(
                    f"D–H···A minus the donor's best other ({other})", x.checks[2].value - r.checks[2].value,
                    0.0, False, True, (x.checks[2].arms, r.checks[2].arms))))
            out.append(x)
        return out


# ChimeraX (Mills & Dean) tables, from hbonds/hbond.py donor_params / acceptor_params: per acceptor geometry
# (planar O, tetrahedral O or planar N, tetrahedral N) the donor's limit and angle range.
# upsilon donors (rotatable hydrogens): (D···A Å, upsilon low °, upsilon high °)
UPSILON_DONORS = {
    "hydroxyl": ((3.17, 90, 141), (3.03, 90, 141), (3.03, 100, 132)),
    "phenol": ((3.03, 103, 136), (3.03, 103, 136), (2.87, 109, 128)),
    "carboxylic acid OH": ((2.87, 103, 128), (2.87, 103, 128), (2.87, 103, 128)),
    "NH3+": ((3.17, 90, 136), (3.17, 90, 132), (3.17, 90, 124)),
    "amine NH2": ((3.30, 90, 128), (3.42, 90, 124), (3.42, 90, 132)),
    "amide NH2": ((3.30, 103, 153), (3.30, 109, 141), (3.30, 113, 161)),
    "aniline NH2": ((3.30, 100, 146), (3.30, 103, 146), (3.42, 90, 161)),
    "amidinium NH2": ((3.17, 90, 146), (3.17, 90, 146), (3.17, 113, 161)),
}
# theta donors (one hydrogen fixed by the heavy atoms): (H···A Å, D–H···A min °)
THETA_DONORS = {
    "charged planar NH": ((1.92, 146), (1.92, 153), (2.48, 141)),
    "charged sp3 NH2": ((2.09, 141), (2.09, 141), (2.48, 141)),
    "amide NH": ((2.23, 146), (2.23, 146), (2.36, 141)),
    "charged tertiary amine NH": ((1.92, 146), (2.09, 146), (2.48, 141)),
    "imine NH": ((2.23, 132), (2.36, 146), (2.48, 141)),
    "secondary amine NH": ((2.36, 141), (2.48, 146), (2.48, 153)),
    "5-ring NH": ((2.09, 146), (2.09, 141), (2.48, 141)),
    "6-ring aromatic NH": ((2.23, 136), (2.23, 141), (2.48, 141)),
}
GENERIC_DONOR = 3.73  # Å D···A: ChimeraX's generic donor row
# acceptors: D···A limit (Å), the first distance of each acceptor_params row
ACCEPTORS = {
    "carboxylate O": 3.17, "carboxylic acid C=O": 3.17, "amide O": 3.30, "ketone O": 3.30, "ester C=O": 3.17,
    "nitro O": 3.42, "sulfone O": 3.30, "phosphate O": 3.03, "sulfoxide O": 3.03, "hydroxyl O": 3.03,
    "phenol O": 3.17, "water O": 3.03, "ether O": 3.42, "5-ring O": 3.42, "primary amine N": 3.03,
    "tertiary amine N": 3.17, "secondary amine N": 3.30, "nitrile N": 3.30, "aniline N": 3.42,
    "6-ring N": 3.30, "5-ring N": 3.30, "thiocarbonyl S": 3.73,
}


@dataclass(frozen=True)
class ChimeraXCriterion:
    """ChimeraX ``hbonds`` with its default relaxation (module docstring): Å, degrees."""

    name: ClassVar[str] = "chimerax"
    hydrogen_decides: ClassVar[bool] = False
    dist_slop: float = 0.4
    angle_slop: float = 20.0
    ph: float = 7.0
    hydrogens: str = ("all removed, then hydride add_hydrogen + relax_hydrogen; only their count and the fixed "
                      "hydrogens' positions are read")
    upsilon_donors: dict = field(default_factory=lambda: dict(UPSILON_DONORS))
    theta_donors: dict = field(default_factory=lambda: dict(THETA_DONORS))
    generic_donor: float = GENERIC_DONOR
    acceptors: dict = field(default_factory=lambda: dict(ACCEPTORS))

    def __post_init__(self) -> None:
        if not (0 <= self.dist_slop <= 1 and 0 <= self.angle_slop <= 45):
            raise InputError("ChimeraX slops must be in [0, 1] Å and [0, 45] degrees", field="criterion")

    @property
    def reach(self) -> float:
        return max(self.generic_donor, *self.acceptors.values()) + self.dist_slop

    def accepts(self, g) -> bool:  # no hydrogen decides (hydrogen_decides is False): never asked
        raise NotImplementedError("ChimeraX's criterion is decided per typed pair (decisions)")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["name"] = self.name
        d["upsilon_donors"] = {k: [list(r) for r in v] for k, v in self.upsilon_donors.items()}
        d["theta_donors"] = {k: [list(r) for r in v] for k, v in self.theta_donors.items()}
        d["donor_columns"] = "per acceptor geometry: planar O, tetrahedral O or planar N, tetrahedral N"
        d["method"] = ("ChimeraX hbonds (Mills & Dean 1996 per-type criteria relaxed by dist_slop Å and angle_slop "
                       "degrees); rotatable-hydrogen donors heavy-atom based (D···A, X–D···A); acceptor angles "
                       "and tau not tested")
        d["source"] = ("ChimeraX src/bundles/hbonds/src/hbond.py donor_params, acceptor_params, rec_dist_slop, "
                       "rec_angle_slop; donor_geom.py; Mills & Dean 1996, J Comput Aided Mol Des 10:607")
        return d

    def acceptor_type(self, chem: Chemistry, i: int) -> str | None:
        el, heavy, hs = chem.el[i], chem.heavy(i), chem.hs(i)
        if el == "O":
            if len(heavy) == 0:
                return "water O"
            if len(heavy) == 2:
                return "5-ring O" if chem.in_ring(i) == 5 else "ether O"
            c = heavy[0]
            if hs:
                if chem.el[c] == "C" and chem.terminal_o(c) and len(chem.terminal_o(c)) == 2:
                    return None  # the OH of a carboxylic acid: no acceptor row
                return "phenol O" if chem.aromatic(c) else "hydroxyl O"
            term = chem.terminal_o(c)
            if chem.el[c] == "N":
                return "nitro O" if len(term) >= 2 else None
            if chem.el[c] == "P":
                return "phosphate O"
            if chem.el[c] == "S":
                return "sulfone O" if len(term) >= 2 else "sulfoxide O"
            if chem.el[c] == "C":
                others = [j for j in chem.heavy(c) if j != i]
                if len(term) == 2:
                    return "carboxylate O" if not any(chem.hs(j) for j in term) else "carboxylic acid C=O"
                if any(chem.el[j] == "O" and chem.hs(j) for j in others):
                    return "carboxylic acid C=O"
                if any(chem.el[j] == "N" for j in others):
                    return "amide O"
                if any(chem.el[j] == "O" for j in others):
                    return "ester C=O"
                return "ketone O"
            return None
        if el == "N":
            if len(chem.nb[i]) == 4:
                return None  # charged: no lone pair
            if len(heavy) == 1 and chem.order[i].get(heavy[0]) == 3:
                return "nitrile N"
            ring = chem.in_ring(i)
            if not hs and ring in (5, 6) and chem.aromatic(i) or not hs and ring in (5, 6) and chem.multiple(i):
                return f"{ring}-ring N"
            if chem.conjugated(i):
                return "aniline N" if len(hs) == 2 and chem.aromatic(heavy[0]) else None
            return {2: "primary amine N", 1: "secondary amine N", 0: "tertiary amine N"}.get(len(hs))
        if el == "S" and len(heavy) == 1 and chem.order[i].get(heavy[0]) == 2:
            return "thiocarbonyl S"
        return None

    def acceptor_geometry(self, chem: Chemistry, i: int) -> int:
        """Column of the donor tables: 0 planar O, 1 tetrahedral O or planar N, 2 tetrahedral N, −1 other."""
        el = chem.el[i]
        if el == "O":
            return 0 if len(chem.heavy(i)) == 1 and not chem.hs(i) else 1
        if el == "N":
            return 1 if chem.conjugated(i) else 2
        return -1

    def donor_type(self, chem: Chemistry, i: int) -> str | None:
        el, heavy, hs = chem.el[i], chem.heavy(i), chem.hs(i)
        if not hs:
            return None
        if el == "O":
            if len(heavy) != 1:
                return None  # water: not in a prepared complex
            c = heavy[0]
            if chem.el[c] == "C" and len(chem.terminal_o(c)) == 1 and any(
                    chem.el[j] == "O" and j != i for j in chem.heavy(c)):
                return "carboxylic acid OH"
            return "phenol" if chem.aromatic(c) else "hydroxyl"
        if el == "S":
            return "generic"  # a thiol: ChimeraX's generic donor row
        if el != "N":
            return None
        if len(heavy) == 1:
            c = heavy[0]
            if len(hs) == 3:
                return "NH3+"
            if chem.aromatic(c):
                return "aniline NH2"
            if chem.el[c] == "C" and any(chem.el[j] == "O" and chem.order[c].get(j) == 2 for j in chem.heavy(c)):
                return "amide NH2"
            if chem.conjugated(i):
                return "amidinium NH2"
            return "amine NH2"
        if len(hs) == 2:
            return "charged sp3 NH2"
        if len(heavy) == 3:
            return "charged tertiary amine NH"
        ring = chem.in_ring(i)
        if ring == 5:
            return "5-ring NH"
        if ring == 6 and chem.aromatic(i):
            return "6-ring aromatic NH"
        if any(chem.el[j] == "C" and any(chem.el[k] == "O" and chem.order[j].get(k) == 2 for k in chem.heavy(j))
               for j in heavy):
            return "amide NH"
        if any(chem.order[i].get(j) == 2 for j in heavy):
            return "imine NH"
        if any(chem.multiple(j) and chem.el[j] == "C" and sum(chem.el[k] == "N" for k in chem.heavy(j)) >= 2
               for j in heavy):
            return "charged planar NH"
        return "amide NH" if chem.conjugated(i) else "secondary amine NH"

    def decisions(self, prot, chem: Chemistry, slack: float = 0.0) -> list[Decision]:
        a = prot.atoms
        out = []
        for d, acc in _typed_pairs(prot, chem, lambda i: self.donor_type(chem, i) is not None,
                                   lambda i: self.acceptor_type(chem, i) is not None, self.reach + slack):
            kind, atype = self.donor_type(chem, d), self.acceptor_type(chem, acc)
            col = self.acceptor_geometry(chem, acc)
            dp, ap = a.coord[d].astype(float), a.coord[acc].astype(float)
            d_da = float(np.linalg.norm(ap - dp))
            checks = [Check(f"D···A ({atype})", d_da, self.acceptors[atype] + self.dist_slop, True)]
            h = -1
            if kind in self.upsilon_donors and col >= 0:
                r, lo, hi = self.upsilon_donors[kind][col]
                ups, arms = _angle(a.coord[chem.heavy(d)[0]], dp, ap)
                checks += [Check(f"D···A ({kind})", d_da, r + self.dist_slop, True),
                           Check("X–D···A", ups, lo - self.angle_slop, False, False, arms),
                           Check("X–D···A", ups, hi + self.angle_slop, True, False, arms)]
            elif kind in self.theta_donors and col >= 0:
                rp, theta = self.theta_donors[kind][col]
                h = chem.nearest_h(d, acc)
                g = geometry(dp, a.coord[h], ap)
                checks += [Check(f"H···A ({kind})", g.d_ha, rp + self.dist_slop, True),
                           Check("D–H···A", g.angle, theta - self.angle_slop, False, False,
                                 (float(np.linalg.norm(a.coord[h] - dp)), g.d_ha))]
            else:
                checks.append(Check("D···A (generic donor)", d_da, self.generic_donor + self.dist_slop, True))
            out.append(Decision(d, h, acc, tuple(checks)))
        return out

    def select(self, prot, chem: Chemistry, passing: list[Decision]) -> list[Decision]:
        return passing  # ChimeraX lists every pair meeting the criteria, even ones that cannot coexist


def criterion_named(name: str, ph: float = 7.0):
    """The criterion of ``--criterion NAME`` at its published thresholds."""
    if name == "baker-hubbard":
        return HBondCriterion(ph=ph)
    if name == "plip":
        return PLIPCriterion(ph=ph)
    if name == "chimerax":
        return ChimeraXCriterion(ph=ph)
    raise InputError(f"criterion must be one of {', '.join(CRITERIA)}, got {name!r}", field="criterion")
