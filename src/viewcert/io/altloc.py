"""Alternate locations (altlocs) of PDB/mmCIF atoms: keep one conformer per residue, by a stated rule.

A residue is a chain, a sequence number and an insertion code (``12`` and ``12A`` are two residues; two
residue names at one number, microheterogeneity, are one residue with two conformers). Atoms without an
altloc id are always kept. Policies (``AltlocPolicy``):

- ``"occupancy"`` (the default): per residue, the altloc id whose atoms' occupancies sum highest (sums
  compared to 1e-6); on a tie the alphabetically first id. This is biotite's ``altloc="occupancy"`` rule
  (``biotite.structure.filter_highest_occupancy_altloc``), chosen because a residue keeps ONE consistent
  conformer (never the CA of A with the CB of B), the conformer the crystallographers gave the most weight
  wins, and viewcert reads the same atoms as biotite (ChimeraX also starts from the highest occupancy;
  PyMOL's default display keeps the first id).
- ``"first"``: per residue the first altloc id in file order (biotite's ``altloc="first"``).
- ``"majority"``: per atom (residue + atom name) the highest occupancy, first on ties; a residue can then
  mix conformers (kept for callers who asked for it before).
- ``"refuse"``: :class:`~viewcert.errors.InputError` naming the first atom with an altloc.

What was chosen is a record (``AltlocChoice``) that readers put into ``Provenance.choices`` and so into
certificates: the rule, the altloc ids kept with the number of residues each, and the atoms dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from viewcert.errors import InputError

AltlocPolicy = Literal["occupancy", "first", "majority", "refuse"]
ALTLOC_POLICIES: tuple[str, ...] = ("occupancy", "first", "majority", "refuse")
NO_ALTLOC = ("\0", " ", "", ".", "?")

__all__ = ["ALTLOC_POLICIES", "AltlocChoice", "AltlocPolicy", "AltlocRow", "check_policy", "choose_altlocs"]


@dataclass(frozen=True)
class AltlocRow:
    """One atom as the rule sees it: residue (chain, sequence number with insertion code), atom name,
    altloc id (one of ``NO_ALTLOC`` when none), occupancy, and a description for messages."""

    residue: tuple[str, str]
    atom: str
    altloc: str
    occupancy: float
    where: str = ""


@dataclass(frozen=True)
class AltlocChoice:
    """What a policy kept: per altloc id the number of residues where it was kept, atoms dropped."""

    policy: str
    kept: tuple[tuple[str, int], ...]
    residues: int
    dropped_atoms: int

    def choices(self) -> tuple[tuple[str, str], ...]:
        """The (name, value) text pairs of ``Provenance.choices``."""
        return (("altloc_policy", self.policy), ("altloc_kept", ",".join(f"{a}:{n}" for a, n in self.kept)),
                ("altloc_residues", str(self.residues)), ("altloc_dropped_atoms", str(self.dropped_atoms)))


def check_policy(policy: str) -> None:
    if policy not in ALTLOC_POLICIES:
        raise InputError(f"altloc_policy must be one of {ALTLOC_POLICIES}, got {policy!r}", field="altloc_policy")


def choose_altlocs(rows: Sequence[AltlocRow], policy: str, *, source: str | None = None,
                   field: str = "altLoc") -> tuple[list[bool], AltlocChoice | None]:
    """(keep mask over ``rows``, the choice record or None when no atom has an altloc) under ``policy``."""
    check_policy(policy)
    alt = [r.altloc not in NO_ALTLOC for r in rows]
    if not any(alt):
        return [True] * len(rows), None
    if policy == "refuse":
        r = rows[alt.index(True)]
        raise InputError(f"atom {r.atom} of {r.where or r.residue} has alternate location {r.altloc!r} "
                         f"(occupancy {r.occupancy:g}); {sum(alt)} atoms have altlocs. Pass altloc_policy="
                         "'occupancy' (the default), 'first' or 'majority'", source=source, field=field)
    if policy == "majority":
        keep = _per_atom_best(rows, alt)
    else:
        keep = _per_residue(rows, alt, policy)
    kept: dict[str, set] = {}
    for r, k, a in zip(rows, keep, alt, strict=True):
        if k and a:
            kept.setdefault(r.altloc, set()).add(r.residue)
    n_res = len({r.residue for r, a in zip(rows, alt, strict=True) if a})
    record = AltlocChoice(policy, tuple((a, len(v)) for a, v in sorted(kept.items())), n_res,
                          len(rows) - sum(keep))
    return keep, record


def _per_residue(rows: Sequence[AltlocRow], alt: list[bool], policy: str) -> list[bool]:
    """Per residue one altloc id: highest summed occupancy (ties: alphabetical) or the first in file order."""
    totals: dict[tuple, dict[str, float]] = {}
    for r, a in zip(rows, alt, strict=True):
        if a:
            by_id = totals.setdefault(r.residue, {})
            by_id[r.altloc] = by_id.get(r.altloc, 0.0) + float(r.occupancy)
    if policy == "first":
        pick = {res: next(iter(ids)) for res, ids in totals.items()}
    else:
        pick = {res: min(ids, key=lambda i, ids=ids: (-round(ids[i], 6), i)) for res, ids in totals.items()}
    return [not a or pick[r.residue] == r.altloc for r, a in zip(rows, alt, strict=True)]


def _per_atom_best(rows: Sequence[AltlocRow], alt: list[bool]) -> list[bool]:
    best: dict[tuple, int] = {}
    for i, (r, a) in enumerate(zip(rows, alt, strict=True)):
        if a:
            key = (r.residue, r.atom)
            j = best.get(key)
            if j is None or r.occupancy > rows[j].occupancy:
                best[key] = i
    chosen = set(best.values())
    return [not a or i in chosen for i, a in enumerate(alt)]
