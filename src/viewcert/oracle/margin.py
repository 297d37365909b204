"""Uniqueness margin δ* of a structure under a set of orthographic views (ideal observations).

A *false candidate* is a tuple T = (t_1, …, t_K) of same-label atoms, one per view, whose least-squares
point x̂_T (the refit on all K rays, as the oracle does) is not an atom. Its residual is
ρ(T) = max_k dist(x̂_T, ray of atom t_k in view k) (Å; for orthographic views the in-plane distance) and
its distance D(T) = distance from x̂_T to the nearest same-label atom (minimum image). An oracle that
accepts a point only when every view's residual is ≤ δ accepts T exactly when δ ≥ ρ(T); T is then a
phantom (a point of Φ_δ) when also δ < D(T). Hence

    δ* = min( min over false T with ρ(T) < D(T) of ρ(T),  d_min / 2 )

where d_min is the closest same-label separation (minimum image when periodic): below d_min/2 the theorem's
separation precondition holds. For every δ < δ*, Φ_δ = ∅ and every atom is recovered, so by the theorem the
label holds; at δ = ρ(T*) the near-miss tuple T* is a point every view agrees on that is not an atom.
``delta_exact`` ≤ δ* is the stricter margin over every false T (also those within δ of an atom, which
merge into it): below it the reconstruction is the structure bit for bit. δ* is read off the sorted spectrum of candidate residuals, not a grid: the search enumerates
every same-label tuple whose pairwise epipolar gaps |n_ab·(p_i − p_j)| are ≤ 2U (a necessary condition for
ρ ≤ U, since x̂ lies within ρ of both rays) and tightens U to the best residual found.

Units: Å. Frames: world Cartesian; views given as world→camera rotations (rows = camera axes).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from viewcert.errors import InputError
from viewcert.numeric import sig
from viewcert.structures import Structure

PARALLEL_EPS = 1e-9  # |d_a × d_b| below this: the two views look along the same axis
TRUE_EPS = 1e-7  # Å: a tuple whose point is this close to a same-label atom with zero residual is that atom
MAX_TUPLES = 2_000_000  # per level; beyond it the search raises instead of exhausting memory


@dataclass(frozen=True)
class Margin:
    """δ* (Å) of one structure under K views. ``bound``: "candidate" (a false candidate sets it),
    "separation" (d_min/2 caps it), "capped" (nothing below the search's ``upper``: δ* ≥ the value given) or
    "dependent" (no two independent views: δ* = 0). ``near_miss``: the
    atom index (cell atom) per view of the false candidate with the smallest residual ``rho_min`` (None when
    none has ρ < d_min/2), ``point``: its least-squares point (Å), ``atoms``: the distinct atoms in it."""

    delta_star: float
    bound: str
    rho_min: float
    d_min: float
    near_miss: tuple[int, ...] | None
    point: tuple[float, float, float] | None
    label: int | None
    near_miss_distance: float = math.inf
    delta_exact: float = math.inf

    @property
    def atoms(self) -> tuple[int, ...]:
        return () if self.near_miss is None else tuple(sorted(set(self.near_miss)))

    def record(self) -> dict:
        """The certificate's form: Å values to 9 significant digits, None for ∞ (no repeated label)."""
        return {"delta_star": sig(self.delta_star), "bound": self.bound, "delta_exact": sig(self.delta_exact),
                "d_min": sig(self.d_min), "near_miss": None if self.near_miss is None else list(self.near_miss),
                "near_miss_label": self.label,
                "near_miss_point": None if self.point is None else [sig(v) for v in self.point]}

    def to_dict(self) -> dict:
        return {"delta_star": self.delta_star, "bound": self.bound, "rho_min": self.rho_min,
                "d_min": self.d_min, "near_miss": None if self.near_miss is None else list(self.near_miss),
                "point": None if self.point is None else list(self.point), "label": self.label,
                "near_miss_distance": self.near_miss_distance, "delta_exact": self.delta_exact}


def exactness_margin(delta_star: float, delta_exact: float | None) -> float:
    """The exactness margin δ_exact (Å) as viewcert reports it beside δ*: the smaller of the search's
    ``delta_exact`` (None or ∞: no false candidate at all) and δ* (so it is ≤ δ*, as the separation bound d_min/2
    holds for it too). Below it no false candidate exists, so the reconstruction is the structure point for point
    whatever the oracle's merge; δ* (the uniqueness margin, the phantom margin) is the one the theorem uses.

    Parameters
    ----------
    delta_star : float
        δ* (Å).
    delta_exact : float or None
        The search's ``delta_exact`` (Å; None or inf when no false candidate exists).

    Returns
    -------
    float
        δ_exact (Å), ≤ δ*.
    """
    return float(delta_star) if delta_exact is None else min(float(delta_exact), float(delta_star))


def _directions(rotations) -> np.ndarray:
    r = np.asarray(rotations, dtype=np.float64)
    if r.ndim != 3 or r.shape[1:] != (3, 3) or len(r) < 1:
        raise InputError(f"rotations must have shape (K, 3, 3), got {r.shape}", field="rotations")
    return -r[:, 2, :]


def min_same_label_separation(positions: np.ndarray, numbers: np.ndarray, lattice=None) -> float:
    """Closest distance (Å) between two same-label atoms, minimum image over the 27 neighbour cells when
    ``lattice`` (rows) is given; inf when no label repeats (and no lattice)."""
    best = math.inf
    shifts = np.zeros((1, 3)) if lattice is None else (
        np.array(list(itertools.product((-1, 0, 1), repeat=3)), dtype=np.float64) @ np.asarray(lattice))
    for z in np.unique(numbers):
        p = positions[numbers == z]
        diff = p[:, None, None, :] - p[None, :, None, :] + shifts[None, None, :, :]
        d = np.linalg.norm(diff, axis=-1)
        i = np.arange(len(p))
        d[i, i, np.all(shifts == 0, axis=1)] = np.inf  # an atom and itself (zero shift)
        if d.size:
            best = min(best, float(d.min()))
    return best


def _nearest_atom_distance(x: np.ndarray, p: np.ndarray, lattice) -> np.ndarray:
    """Distance (Å) from each point x (N,3) to the nearest of p (m,3), minimum image when periodic."""
    diff = x[:, None, :] - p[None, :, :]
    if lattice is not None:
        lat = np.asarray(lattice)
        f = diff @ np.linalg.inv(lat)
        diff = (f - np.round(f)) @ lat
        shifts = np.array(list(itertools.product((-1, 0, 1), repeat=3)), dtype=np.float64) @ lat
        return np.linalg.norm(diff[:, :, None, :] + shifts[None, None], axis=-1).min(axis=(1, 2))
    return np.linalg.norm(diff, axis=-1).min(axis=1)


def tuple_residuals(p: np.ndarray, dirs: np.ndarray, tuples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares points (N,3) of the tuples (N,K) of atom indices into p and their max residual (N,)
    over the K views (distance to each ray, Å)."""
    proj = np.eye(3)[None] - dirs[:, :, None] * dirs[:, None, :]  # (K,3,3): I − d dᵀ
    a = proj.sum(axis=0)
    q = p[tuples]  # (N,K,3)
    b = np.einsum("kij,nkj->ni", proj, q)
    x = np.linalg.solve(a, b.T).T
    r = np.einsum("kij,nkj->nki", proj, x[:, None, :] - q)
    return x, np.linalg.norm(r, axis=-1).max(axis=1)


def pair_normals(dirs: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    out = {}
    for a, b in itertools.combinations(range(len(dirs)), 2):
        n = np.cross(dirs[a], dirs[b])
        nn = np.linalg.norm(n)
        if nn > PARALLEL_EPS:
            out[(a, b)] = n / nn
    return out


def _label_search(p, dirs, normals, upper, lattice):
    """Over false tuples of one label's atoms p (m,3) with ρ < upper: (ρ, tuple, point, distance to the
    nearest atom) of the smallest-ρ *phantom* tuple (ρ < its distance to every atom) and the smallest ρ of
    any false tuple (the exactness margin; inf when none below upper)."""
    m, k = len(p), len(dirs)
    best = (math.inf, None, None, math.inf)
    coord = {ab: p @ n for ab, n in normals.items()}  # epipolar coordinates: gap(i, j) = |e[i] − e[j]|
    tuples = np.arange(m)[:, None]
    for lev in range(1, k):
        ok = np.ones((len(tuples), m), dtype=bool)  # a view parallel to every earlier one: no constraint
        for a in range(lev):
            if (a, lev) in normals:
                e = coord[(a, lev)]
                ok &= np.abs(e[tuples[:, a]][:, None] - e[None, :]) <= 2.0 * upper
        rows, cols = np.nonzero(ok)
        if len(rows) > MAX_TUPLES:
            raise InputError(f"δ* search too large ({len(rows)} partial tuples)", field="upper")
        tuples = np.concatenate([tuples[rows], cols[:, None]], axis=1)
    tuples = tuples[~np.all(tuples == tuples[:, :1], axis=1)]
    if len(tuples) == 0:
        return best, math.inf
    x, rho = tuple_residuals(p, dirs, tuples)
    keep = rho < upper
    tuples, x, rho = tuples[keep], x[keep], rho[keep]
    tiny = np.flatnonzero(rho <= TRUE_EPS)  # only these can be an atom seen identically by every view
    atom = np.zeros(len(rho), dtype=bool)
    atom[tiny] = _nearest_atom_distance(x[tiny], p, lattice) <= TRUE_EPS  # coincident projections: that atom
    exact = float(rho[~atom].min()) if (~atom).any() else math.inf
    order = np.lexsort((np.arange(len(rho)), rho))  # by ρ, then by enumeration order
    start, chunk = 0, 256
    while start < len(order):  # distances in ρ order, in growing chunks: stop at the first phantom
        sel = order[start:start + chunk]
        sel = sel[~atom[sel]]
        dist = _nearest_atom_distance(x[sel], p, lattice)
        hit = np.flatnonzero(rho[sel] < dist)
        if len(hit):
            i = sel[hit[0]]
            return (float(rho[i]), tuple(int(t) for t in tuples[i]), x[i], float(dist[hit[0]])), exact
        start, chunk = start + chunk, 2 * chunk
    return best, exact


@dataclass(frozen=True, eq=False)
class MarginProblem:
    """What δ* needs of a structure, computed once: per repeated label its atom indices and positions (Å),
    the lattice (rows, Å, or None) and d_min (Å)."""

    groups: tuple
    lattice: np.ndarray | None
    d_min: float

    @classmethod
    def of(cls, structure: Structure) -> MarginProblem:
        pos = np.asarray(structure.positions, dtype=np.float64)
        num = np.asarray(structure.numbers)
        lattice = structure.lattice if structure.is_periodic else None
        groups = []
        for z in np.unique(num):
            idx = np.flatnonzero(num == z)
            if len(idx) >= 2:
                groups.append((int(z), idx, np.ascontiguousarray(pos[idx])))
        return cls(tuple(groups), lattice, min_same_label_separation(pos, num, lattice))


def uniqueness_margin(structure: Structure | MarginProblem, rotations, *, upper: float | None = None,
                      normals: dict | None = None) -> Margin:
    """δ* (Å) of ``structure`` under orthographic views with world→camera ``rotations`` (K,3,3); ideal
    observations of the single cell. See the module docstring for the definition. ``upper`` (Å): search only
    below it; when nothing is found below, δ* is reported as ``upper`` with bound "capped" (a lower bound).
    ``structure`` may be a prepared ``MarginProblem`` and ``normals`` the views' pair normals (both reused
    across calls by the designer)."""
    prob = structure if isinstance(structure, MarginProblem) else MarginProblem.of(structure)
    dirs = _directions(rotations)
    d_min = prob.d_min
    normals = pair_normals(dirs) if normals is None else normals
    if not normals:
        return Margin(0.0, "dependent", 0.0, d_min, None, None, None)
    cap = 0.5 * d_min
    bound = "separation"
    if upper is not None and upper < cap:
        if not upper > 0:
            raise InputError(f"upper must be a positive number of Å, got {upper}", field="upper")
        cap, bound = float(upper), "capped"
    upper = cap
    best = (math.inf, None, None, None, math.inf)
    exact = math.inf
    for z, idx, p in prob.groups:
        (rho, tup, x, dist), ex = _label_search(p, dirs, normals, min(upper, best[0]), prob.lattice)
        exact = min(exact, ex)
        if tup is not None and rho < best[0]:
            best = (rho, tuple(int(idx[t]) for t in tup), tuple(float(v) for v in x), z, dist)
    exact = min(exact, best[0], upper)
    if best[1] is None:
        return Margin(float(upper), bound, math.inf, d_min, None, None, None, math.inf, float(exact))
    return Margin(float(best[0]), "candidate", float(best[0]), d_min, best[1], best[2], best[3], best[4],
                  float(exact))
