"""Bonds: a neighbour list with duplicates removed, and the half-bond segments to draw.

A bond joins atoms i and j (cell indices) across the integer lattice translation ``offset`` S: from
``x_i`` to ``x_j + S·L``. It is listed once: the same bond seen from the other end, (j, i, −S), and the
repeated listings a neighbour search over periodic images produces in small cells are folded into one
canonical form (i < j, or i == j with S lexicographically positive). Distinct images of the same pair
(i, j) are distinct bonds and are all kept. A bond exists when ``min_distance < d ≤ factor × (r_i + r_j)``
with covalent radii r (Å) and, unless ``metal_metal=True``, at least one end is a non-metal (H, B, C, N, O,
Si, P, S, Ge, As, Se, Sb, Te, halogens, noble gases): metal–metal contacts in ionic and intermetallic
crystals are contacts, not drawn bonds (VESTA's default bond search does the same).

Drawing splits every bond into two *half-bonds*, each owned by one drawn atom and coloured like it: a bond
between two drawn atoms gives two halves meeting at the midpoint; a bond leaving the drawn tiling gives a
stub (the half at the drawn end) when ``stubs`` is true.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewcert.elements import covalent_radii
from viewcert.errors import InputError
from viewcert.structures import Structure, tiling_translations

DEFAULT_FACTOR = 1.15
MIN_BOND_DISTANCE = 0.1  # Å
NON_METALS = frozenset({1, 2, 5, 6, 7, 8, 9, 10, 14, 15, 16, 17, 18, 32, 33, 34, 35, 36, 51, 52, 53, 54, 85, 86})


def _kdtree(points):
    """``scipy.spatial.cKDTree(points)``, imported at the first call."""
    from scipy.spatial import cKDTree  # lazy: start-up time (scipy.spatial costs 0.3-0.9 s to import)

    return cKDTree(points)


def _bondable(zi: np.ndarray, zj: np.ndarray, metal_metal: bool) -> np.ndarray:
    if metal_metal:
        return np.ones(len(zi), dtype=bool)
    nm = np.zeros(119, dtype=bool)
    nm[list(NON_METALS)] = True
    return nm[zi] | nm[zj]


@dataclass(frozen=True, eq=False)
class Bonds:
    """Unique bonds: i, j (m,) cell atom indices, offset (m, 3) integer translation of j, length (m,) Å."""

    i: np.ndarray
    j: np.ndarray
    offset: np.ndarray
    length: np.ndarray

    def __len__(self) -> int:
        return len(self.i)


def _canonical(i: int, j: int, s: tuple[int, int, int]) -> tuple[int, int, tuple[int, int, int]]:
    if i < j or (i == j and s > (0, 0, 0)):
        return i, j, s
    return j, i, (-s[0], -s[1], -s[2])


def canonical_bonds(i, j, offset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fold (i, j, S) and (j, i, −S) into one form and drop repeats; sorted by (i, j, S). Self-bonds with
    S = 0 (an atom to itself) are dropped."""
    seen: set[tuple[int, int, tuple[int, int, int]]] = set()
    for a, b, s in zip(np.asarray(i).tolist(), np.asarray(j).tolist(), np.asarray(offset).tolist(), strict=True):
        s = tuple(int(x) for x in s)
        if a == b and s == (0, 0, 0):
            continue
        seen.add(_canonical(int(a), int(b), s))
    rows = sorted(seen)
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3), np.int64)
    ii = np.array([r[0] for r in rows], dtype=np.int64)
    jj = np.array([r[1] for r in rows], dtype=np.int64)
    ss = np.array([r[2] for r in rows], dtype=np.int64).reshape(-1, 3)
    return ii, jj, ss


def _cutoffs(numbers: np.ndarray, factor: float, radii: np.ndarray | None) -> np.ndarray:
    r = covalent_radii(numbers) if radii is None else np.asarray(radii, dtype=np.float64)
    if r.shape != numbers.shape:
        raise InputError(f"radii must have shape {numbers.shape}, got {r.shape}", field="radii")
    return factor * r


def find_bonds(
    structure: Structure,
    *,
    factor: float = DEFAULT_FACTOR,
    radii: np.ndarray | None = None,
    min_distance: float = MIN_BOND_DISTANCE,
    metal_metal: bool = False,
) -> Bonds:
    """Unique bonds of a molecule or a periodic cell (all images within the cutoff), see module docstring.
    ``radii`` (n,) Å replaces the covalent radii; cutoff for a pair = factor × (r_i + r_j)."""
    if not (np.isfinite(factor) and factor > 0):
        raise InputError(f"bond factor must be > 0, got {factor}", field="factor")
    pos = structure.positions
    num = structure.numbers
    half = _cutoffs(num, factor, radii)
    rmax = 2.0 * float(half.max())
    if structure.lattice is None:
        if len(pos) < 2:
            return Bonds(*(np.zeros(0, np.int64),) * 2, np.zeros((0, 3), np.int64), np.zeros(0))
        pairs = np.array(sorted(_kdtree(pos).query_pairs(rmax)), dtype=np.int64).reshape(-1, 2)
        d = np.linalg.norm(pos[pairs[:, 1]] - pos[pairs[:, 0]], axis=1) if len(pairs) else np.zeros(0)
        ok = (d > min_distance) & (d <= half[pairs[:, 0]] + half[pairs[:, 1]])
        ok &= _bondable(num[pairs[:, 0]], num[pairs[:, 1]], metal_metal)
        pairs, d = pairs[ok], d[ok]
        return Bonds(pairs[:, 0].copy(), pairs[:, 1].copy(), np.zeros((len(pairs), 3), np.int64), d)
    lat = structure.lattice
    # image range along each axis: cell height h_k = V / |a_i × a_j|; need |n_k| ≤ ceil(rmax / h_k) + 1
    vol = abs(float(np.linalg.det(lat)))
    heights = np.array([vol / np.linalg.norm(np.cross(lat[(k + 1) % 3], lat[(k + 2) % 3])) for k in range(3)])
    frac = structure.frac_coords
    span = frac.max(axis=0) - frac.min(axis=0)  # atoms outside [0, 1) widen the needed range
    n_img = np.ceil(rmax / heights + span).astype(int) + 1
    rng = [np.arange(-n, n + 1) for n in n_img]
    shifts = np.stack(np.meshgrid(*rng, indexing="ij"), axis=-1).reshape(-1, 3)
    images = (shifts[:, None, :] @ lat + pos[None, :, :]).reshape(-1, 3)
    tree = _kdtree(images)
    n = len(pos)
    rows_i, rows_j, rows_s = [], [], []
    for i, nbrs in enumerate(tree.query_ball_point(pos, r=rmax)):
        for k in nbrs:
            j = k % n
            s = shifts[k // n]
            d = float(np.linalg.norm(images[k] - pos[i]))
            if min_distance < d <= half[i] + half[j] and (metal_metal or num[i] in NON_METALS
                                                          or num[j] in NON_METALS):
                rows_i.append(i)
                rows_j.append(j)
                rows_s.append(s)
    ii, jj, ss = canonical_bonds(np.array(rows_i, np.int64), np.array(rows_j, np.int64),
                                 np.array(rows_s, np.int64).reshape(-1, 3))
    length = np.linalg.norm(pos[jj] + ss @ lat - pos[ii], axis=1) if len(ii) else np.zeros(0)
    return Bonds(ii, jj, ss, length)


@dataclass(frozen=True, eq=False)
class HalfBonds:
    """Segments to draw: start (k, 3) at a drawn atom centre, end (k, 3) at the bond midpoint, owner (k,)
    drawn atom index (colour), partner (k,) drawn atom index at the far end or −1 for a stub leaving the
    tiling."""

    start: np.ndarray
    end: np.ndarray
    owner: np.ndarray
    partner: np.ndarray

    def __len__(self) -> int:
        return len(self.owner)


def _molecule_halves(pos: np.ndarray, bonds: Bonds) -> HalfBonds:
    """Both halves of every bond of a molecule (no tiling, no stubs)."""
    a, b = pos[bonds.i], pos[bonds.j]
    mid = 0.5 * (a + b)
    start = np.concatenate([a, b])
    end = np.concatenate([mid, mid])
    owner = np.concatenate([bonds.i, bonds.j])
    partner = np.concatenate([bonds.j, bonds.i])
    return HalfBonds(start.reshape(-1, 3), end.reshape(-1, 3), owner, partner)


def half_bonds(
    structure: Structure,
    tiling=(1, 1, 1),
    *,
    factor: float = DEFAULT_FACTOR,
    radii: np.ndarray | None = None,
    stubs: bool = True,
    metal_metal: bool = False,
) -> HalfBonds:
    """Half-bond segments for the drawn atoms (indexing as ``observe.project.drawn_atoms``: drawn atom
    ``t * n + i`` is cell atom i in tile t, tiles in C order of ``tiling``). Each bond between two drawn atoms
    appears exactly once (as two halves)."""
    bonds = find_bonds(structure, factor=factor, radii=radii, metal_metal=metal_metal)
    n = structure.n_atoms
    pos = structure.positions
    if structure.lattice is None:
        if tuple(tiling) != (1, 1, 1):
            raise InputError("a molecule cannot be tiled (it has no lattice)", field="tiling")
        return _molecule_halves(pos, bonds)
    lat = structure.lattice
    reps = np.asarray(tuple(tiling), dtype=np.int64)
    tiles = tiling_translations(tuple(int(x) for x in reps)).astype(np.int64)
    t_index = {tuple(t): k for k, t in enumerate(tiles.tolist())}
    starts, ends, owners, partners = [], [], [], []
    for i, j, s in zip(bonds.i.tolist(), bonds.j.tolist(), bonds.offset.tolist(), strict=True):
        s = np.asarray(s, dtype=np.int64)
        for k, t in enumerate(tiles):
            a_pos = pos[i] + t @ lat
            b_pos = pos[j] + (t + s) @ lat
            mid = 0.5 * (a_pos + b_pos)
            kb = t_index.get(tuple((t + s).tolist()))
            a_id = k * n + i
            if kb is not None:  # both ends drawn: two halves
                b_id = kb * n + j
                starts += [a_pos, b_pos]
                ends += [mid, mid]
                owners += [a_id, b_id]
                partners += [b_id, a_id]
            elif stubs:
                starts.append(a_pos)
                ends.append(mid)
                owners.append(a_id)
                partners.append(-1)
            # the j end drawn in tile t while i's end (t − s) lies outside: stub at j
            if stubs and t_index.get(tuple((t - s).tolist())) is None:
                jb_pos = pos[j] + t @ lat
                ia_pos = pos[i] + (t - s) @ lat
                starts.append(jb_pos)
                ends.append(0.5 * (jb_pos + ia_pos))
                owners.append(k * n + j)
                partners.append(-1)
    if not owners:
        z = np.zeros((0, 3))
        return HalfBonds(z, z.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64))
    return HalfBonds(np.array(starts), np.array(ends), np.array(owners, np.int64), np.array(partners, np.int64))
