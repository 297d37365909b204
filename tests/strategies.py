"""Hypothesis strategies shared by the tests: rotations, structures (molecules and periodic cells), cameras."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from viewcert.structures import Structure


@st.composite
def rotations(draw) -> np.ndarray:
    """A proper rotation from a random unit quaternion."""
    q = np.array([draw(st.floats(-1, 1, allow_nan=False)) for _ in range(4)])
    n = np.linalg.norm(q)
    if n < 1e-3:
        q, n = np.array([1.0, 0, 0, 0]), 1.0
    w, x, y, z = q / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


@st.composite
def lattices(draw) -> np.ndarray:
    """A right-handed, not too skewed cell with lengths 3–8 Å and angles 70–110°."""
    a, b, c = (draw(st.floats(3.0, 8.0)) for _ in range(3))
    al, be, ga = (np.radians(draw(st.floats(70.0, 110.0))) for _ in range(3))
    cx = np.cos(be)
    cy = (np.cos(al) - np.cos(be) * np.cos(ga)) / np.sin(ga)
    cz2 = 1 - cx * cx - cy * cy
    if cz2 < 0.05:
        cx, cy, cz2 = 0.0, 0.0, 1.0
    return np.array([[a, 0, 0], [b * np.cos(ga), b * np.sin(ga), 0], [c * cx, c * cy, c * np.sqrt(cz2)]])


def _thin(points: np.ndarray, min_dist: float, lattice=None) -> np.ndarray:
    """Greedy keep-first thinning so that kept points are ≥ min_dist apart (minimum image if periodic)."""
    kept: list[np.ndarray] = []
    inv = None if lattice is None else np.linalg.inv(lattice)
    for p in points:
        ok = True
        for q in kept:
            d = p - q
            if lattice is not None:
                f = d @ inv
                f -= np.round(f)
                d = f @ lattice
            if np.linalg.norm(d) < min_dist:
                ok = False
                break
        if ok:
            kept.append(p)
    return np.array(kept).reshape(-1, 3)


@st.composite
def molecules(draw, min_atoms=1, max_atoms=12, elements=(1, 6, 7, 8, 16)) -> Structure:
    n = draw(st.integers(min_atoms, max_atoms))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    pts = _thin(rng.uniform(-4, 4, size=(n * 3, 3)), 1.0)[:n]
    z = rng.choice(np.array(elements), size=len(pts))
    return Structure(pts, z)


@st.composite
def crystals(draw, min_atoms=1, max_atoms=8, elements=(8, 11, 14, 26)) -> Structure:
    lat = draw(lattices())
    n = draw(st.integers(min_atoms, max_atoms))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    pts = _thin(rng.uniform(0, 1, size=(n * 3, 3)) @ lat, 1.0, lat)[:n]
    z = rng.choice(np.array(elements), size=len(pts))
    return Structure(pts, z, lat)
