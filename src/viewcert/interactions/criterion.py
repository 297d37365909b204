"""The hydrogen-bond criterion: what counts as a D–H···A bond, as numbers recorded in every certificate.

Baker–Hubbard (Baker & Hubbard 1984, as biotite's ``structure.hbond`` implements it): a bond from donor D
through its hydrogen H to acceptor A holds when the H···A distance is ≤ ``max_h_acceptor`` Å and the
D–H···A angle (at H) is ≥ ``min_angle`` degrees; donors and acceptors are the heavy atoms of
``donor_elements`` / ``acceptor_elements``. Hydrogens are those a maintained tool adds (``hydrogens``):
the X-ray entries carry none, so every hydrogen, of the protein and of the ligand, is removed and added
again by hydride (fragment library, amino-acid charges at ``ph``), then relaxed (``relax_hydrogen``).
Positions in Å, angles in degrees, the input file's frame.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import ClassVar

import numpy as np

from viewcert.errors import InputError

#: the cross-check's criterion (ProLIF's HBDonor/HBAcceptor defaults), recorded beside the primary one.
PROLIF_CRITERION = {"library": "prolif", "interactions": ["HBDonor", "HBAcceptor"], "max_donor_acceptor_A": 3.5,
                    "angle_range_deg": [130.0, 180.0], "typing": "ProLIF's donor/acceptor SMARTS"}


@dataclass(frozen=True)
class HBondCriterion:
    """Baker–Hubbard thresholds (module docstring): Å, degrees; ``ph`` of hydride's amino-acid charges."""

    name: ClassVar[str] = "baker-hubbard"
    hydrogen_decides: ClassVar[bool] = True  # the placed hydrogen's position decides (rotamers: ceiling)
    max_h_acceptor: float = 2.5
    min_angle: float = 120.0
    donor_elements: tuple[str, ...] = ("N", "O", "S")
    acceptor_elements: tuple[str, ...] = ("N", "O", "S")
    ph: float = 7.0
    hydrogens: str = "all removed, then hydride add_hydrogen + relax_hydrogen"

    def __post_init__(self) -> None:
        if not (0 < self.max_h_acceptor <= 5 and np.isfinite(self.max_h_acceptor)):
            raise InputError(f"max_h_acceptor must be in (0, 5] Å, got {self.max_h_acceptor}", field="max_h_acceptor")
        if not (0 <= self.min_angle < 180):
            raise InputError(f"min_angle must be in [0, 180) degrees, got {self.min_angle}", field="min_angle")
        if not (0 <= self.ph <= 14):
            raise InputError(f"ph must be in [0, 14], got {self.ph}", field="ph")

    def holds(self, d_ha: float, angle: float) -> bool:
        """True when H···A ≤ max_h_acceptor Å and D–H···A ≥ min_angle degrees."""
        return bool(d_ha <= self.max_h_acceptor and angle >= self.min_angle)

    def accepts(self, g: Geometry) -> bool:
        """``holds`` on one D–H···A geometry (the hook every criterion has)."""
        return self.holds(g.d_ha, g.angle)

    @property
    def reach(self) -> float:
        """D···A (Å) beyond which no hydrogen rotamer bonds: H···A bound + 1.2 Å (longer than any D–H)."""
        return self.max_h_acceptor + 1.2

    def to_dict(self) -> dict:
        d = asdict(self)
        d["method"] = "Baker-Hubbard (biotite.structure.hbond)"
        d["donor_elements"], d["acceptor_elements"] = list(self.donor_elements), list(self.acceptor_elements)
        return d


@dataclass(frozen=True)
class Geometry:
    """D···A and H···A distances (Å) and the D–H···A angle at H (degrees)."""

    d_da: float
    d_ha: float
    angle: float


def geometry(donor, hydrogen, acceptor) -> Geometry:
    """Criterion values of one D–H···A triple (positions in Å).

    Parameters
    ----------
    donor : array_like
        (3,) donor position (Cartesian Å).
    hydrogen : array_like
        (3,) hydrogen position (Cartesian Å).
    acceptor : array_like
        (3,) acceptor position (Cartesian Å).

    Returns
    -------
    Geometry
        D···A and H···A distances (Å) and the D–H···A angle at H (degrees).
    """
    d, h, a = (np.asarray(x, dtype=np.float64).reshape(3) for x in (donor, hydrogen, acceptor))
    u, v = d - h, a - h
    nu, nv = float(np.linalg.norm(u)), float(np.linalg.norm(v))
    if nu == 0 or nv == 0:
        raise InputError("a hydrogen coincides with its donor or the acceptor", field="geometry")
    cos = float(np.clip(np.dot(u, v) / (nu * nv), -1.0, 1.0))
    return Geometry(float(np.linalg.norm(a - d)), nv, float(np.degrees(np.arccos(cos))))


def angle_margin(d_dh: float, d_ha: float, delta: float) -> float:
    """Δ (degrees): the largest change of an angle whose rays are d_dh and d_ha Å long (at H: D–H···A) when
    every atom moves by δ."""
    return math.degrees(math.asin(min(1.0, 2 * delta / d_dh)) + math.asin(min(1.0, 2 * delta / d_ha)))
