"""Hand-built ideal molecular geometries (Å) with their point groups known from chemistry.

Used by tests/symmetry/test_pointgroup.py and the tests/*/test_molecule_*.py files. Each builder returns (positions, numbers).
Bond lengths are textbook values; only the symmetry matters.
"""

from __future__ import annotations

import numpy as np


def _rz(deg: float) -> np.ndarray:
    t = np.radians(deg)
    return np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1.0]])


def ring(n: int, radius: float, z: float = 0.0, phase: float = 0.0) -> np.ndarray:
    t = np.radians(phase + 360.0 * np.arange(n) / n)
    return np.column_stack([radius * np.cos(t), radius * np.sin(t), np.full(n, z)])


def water():  # C2v
    a = np.radians(104.5 / 2)
    return np.array(
        [[0, 0, 0], [0.9572 * np.sin(a), 0, 0.9572 * np.cos(a)], [-0.9572 * np.sin(a), 0, 0.9572 * np.cos(a)]]
    ), np.array([8, 1, 1])


def ammonia():  # C3v
    h = ring(3, 0.94, z=-0.38)
    return np.vstack([[0, 0, 0], h]), np.array([7, 1, 1, 1])


def methane():  # Td
    t = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]]) * 1.09 / np.sqrt(3)
    return np.vstack([[0, 0, 0], t]), np.array([6, 1, 1, 1, 1])


def sf6():  # Oh
    f = np.vstack([np.eye(3), -np.eye(3)]) * 1.56
    return np.vstack([[0, 0, 0], f]), np.array([16] + [9] * 6)


def benzene():  # D6h
    return np.vstack([ring(6, 1.39), ring(6, 2.47)]), np.array([6] * 6 + [1] * 6)


def ethane(staggered: bool):  # D3d staggered, D3h eclipsed
    c = np.array([[0, 0, 0.765], [0, 0, -0.765]])
    h1 = ring(3, 1.02, z=1.13)
    h2 = ring(3, 1.02, z=-1.13, phase=60.0 if staggered else 0.0)
    return np.vstack([c, h1, h2]), np.array([6, 6] + [1] * 6)


def ferrocene(staggered: bool):  # D5d staggered, D5h eclipsed
    top = ring(5, 1.22, z=1.66)
    bot = ring(5, 1.22, z=-1.66, phase=36.0 if staggered else 0.0)
    return np.vstack([[0, 0, 0], top, bot]), np.array([26] + [6] * 10)


def cyclohexane_chair():  # D3d (carbon skeleton + axial/equatorial H)
    c = ring(6, 1.45)
    c[:, 2] = np.where(np.arange(6) % 2 == 0, 0.25, -0.25)
    hax = c + np.array([0, 0, 1.09]) * np.where(np.arange(6) % 2 == 0, 1, -1)[:, None]
    heq = c.copy()
    heq[:, :2] *= (1.45 + 1.03) / 1.45
    heq[:, 2] = np.where(np.arange(6) % 2 == 0, -0.1, 0.1)
    return np.vstack([c, hax, heq]), np.array([6] * 6 + [1] * 12)


def co2():  # D∞h
    return np.array([[0, 0, 0], [0, 0, 1.16], [0, 0, -1.16]]), np.array([6, 8, 8])


def hcn():  # C∞v
    return np.array([[0, 0, -1.06], [0, 0, 0], [0, 0, 1.156]]), np.array([1, 6, 7])


def bromochlorofluoromethane():  # C1, chiral (CHBrClF)
    t = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]]) / np.sqrt(3)
    lengths = np.array([1.09, 1.93, 1.77, 1.35])
    return np.vstack([[0, 0, 0], t * lengths[:, None]]), np.array([6, 1, 35, 17, 9])


def allene_like_s4():  # S4: tetrahedron of 4 points, each with a tilted substituent (chiral-free, no mirror)
    base = np.array([[1, 0, 0.7], [-1, 0, 0.7], [0, 1, -0.7], [0, -1, -0.7]])
    s4 = np.array([[0, 1, 0], [-1, 0, 0], [0, 0, -1.0]])  # C4 about z then σh: (x,y,z)->(-y... ) see test
    sub = np.array([1.0, 0.6, 1.2])
    pts, subs = [], []
    p, q = base[0].copy(), sub.copy()
    for _ in range(4):
        pts.append(p)
        subs.append(p + 0.8 * q / np.linalg.norm(q))
        p, q = s4 @ p, s4 @ q
    return np.vstack([pts, subs]), np.array([6] * 4 + [1] * 4)


GROUPS = {
    "water": (water, "C2v"),
    "ammonia": (ammonia, "C3v"),
    "methane": (methane, "Td"),
    "sf6": (sf6, "Oh"),
    "benzene": (benzene, "D6h"),
    "ethane_staggered": (lambda: ethane(True), "D3d"),
    "ethane_eclipsed": (lambda: ethane(False), "D3h"),
    "ferrocene_eclipsed": (lambda: ferrocene(False), "D5h"),
    "ferrocene_staggered": (lambda: ferrocene(True), "D5d"),
    "cyclohexane_chair": (cyclohexane_chair, "D3d"),
    "co2": (co2, "D∞h"),
    "hcn": (hcn, "C∞v"),
    "chbrclf": (bromochlorofluoromethane, "C1"),
    "s4": (allene_like_s4, "S4"),
}
