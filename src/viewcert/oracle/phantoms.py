"""The phantom set Φ_δ of a reconstruction, given the truth.

Φ_δ(s, C) = the accepted points farther than δ from every atom of the same label (minimum image when the
structure is periodic). The study's Theorem 1: with two independent view directions and same-label atoms
more than 2δ apart, every atom is recovered and the accepted points beyond δ of all atoms are exactly Φ_δ;
if Φ_δ is empty the reconstruction is the structure. ``analyse`` reports Φ_δ, the atoms not recovered, the
separation precondition (and says so when it fails), a uniqueness verdict, and the phantom margin — the
smallest residual/δ among rejected near-miss candidates that are not atoms — as a continuous robustness
score (how much δ could grow before a new phantom appears; inf when no near miss lies within the
reconstruction's window).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from viewcert.errors import InputError
from viewcert.numeric import readonly
from viewcert.oracle.phantom_kernels import min_same_label_distance_nb, nearest_same_label_nb
from viewcert.oracle.triangulate import Reconstruction
from viewcert.structures import Structure, tiling_translations


def _kdtree(points):
    """``scipy.spatial.cKDTree(points)``, imported at the first call."""
    from scipy.spatial import cKDTree  # lazy: start-up time (scipy.spatial costs 0.3-0.9 s to import)

    return cKDTree(points)


@dataclass(frozen=True, eq=False)
class PhantomReport:
    """Φ_δ and recovery of one reconstruction against its truth (distances in Å)."""

    delta: float
    phantoms: np.ndarray
    phantom_labels: np.ndarray
    missing_atoms: tuple[int, ...]
    n_atoms: int
    n_points: int
    n_recovered: int
    separation_ok: bool
    min_same_label_distance: float
    margin: float
    max_position_error: float
    reconstruction_status: str
    notes: tuple[str, ...] = ()

    @property
    def n_phantoms(self) -> int:
        return int(self.phantoms.shape[0])

    @property
    def recovered_all(self) -> bool:
        return len(self.missing_atoms) == 0

    @property
    def unique(self) -> bool:
        """Φ_δ is empty and every atom is recovered."""
        return self.n_phantoms == 0 and self.recovered_all

    @property
    def exact(self) -> bool:
        """Unique, and one point per atom (no duplicates within δ of an atom)."""
        return self.unique and self.n_points == self.n_atoms

    def to_dict(self) -> dict:
        return {
            "delta": self.delta,
            "n_atoms": self.n_atoms,
            "n_points": self.n_points,
            "n_recovered": self.n_recovered,
            "recovered_all": self.recovered_all,
            "missing_atoms": list(self.missing_atoms),
            "n_phantoms": self.n_phantoms,
            "phantoms": self.phantoms.tolist(),
            "phantom_labels": self.phantom_labels.tolist(),
            "unique": self.unique,
            "exact": self.exact,
            "separation_ok": self.separation_ok,
            "min_same_label_distance": None if math.isinf(self.min_same_label_distance)
            else self.min_same_label_distance,
            "margin": None if math.isinf(self.margin) else self.margin,
            "max_position_error": self.max_position_error,
            "reconstruction_status": self.reconstruction_status,
            "notes": list(self.notes),
        }


KERNEL_MAX_WORK = 50_000_000  # query × target × image triples; beyond it the cKDTree path (large molecules)
_ZERO_SHIFT = np.zeros((1, 3))
_SHELL27 = tiling_translations((3, 3, 3)) - 1.0  # the 27 integer translations in {-1, 0, 1}^3; row 13 = 0


def _c(a: np.ndarray) -> np.ndarray:
    """C-contiguous and writeable (the kernels' explicit signatures take no read-only arrays): ``a`` itself
    when it is, else a copy."""
    return a if a.flags.carray else np.array(a, order="C")


def _wrap(pos: np.ndarray, lattice: np.ndarray) -> np.ndarray:
    return _wrap_frac(np.linalg.solve(lattice.T, np.asarray(pos, dtype=np.float64).reshape(-1, 3).T).T, lattice)


def _wrap_frac(f: np.ndarray, lattice: np.ndarray) -> np.ndarray:
    """Cartesian positions (Å) of the fractional coordinates ``f`` moved into [0, 1)."""
    f = f - np.floor(f)
    f[f >= 1.0] -= 1.0
    return f @ lattice


def _in_cell(pos, lattice) -> np.ndarray:
    """``pos`` as an (n, 3) float array, wrapped into the cell when ``lattice`` is given."""
    pos = np.asarray(pos, dtype=np.float64).reshape(-1, 3)
    return pos if lattice is None else _wrap(pos, np.asarray(lattice, dtype=np.float64))


def _shifts(lattice) -> np.ndarray:
    """The image translations searched (Å): the 27 cells around the home cell (row 13 the home cell), or
    one zero row without a lattice."""
    return _ZERO_SHIFT if lattice is None else _SHELL27 @ np.asarray(lattice, dtype=np.float64)


def nearest_same_label(points, labels, target_positions, target_labels, lattice=None, *,
                       wrapped: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """For every point, (distance to the nearest same-label target (minimum image when ``lattice`` is given),
    the target's index); inf / −1 when the label does not occur among the targets. Periodic distances are
    exact below the cell's smallest width (targets are wrapped and searched in the 27 surrounding cells).
    ``wrapped``: both position arrays are already wrapped into the cell (``_in_cell``), so that a caller
    searching the same arrays more than once (``analyse``) wraps each once."""
    q = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    tw = np.asarray(target_positions, dtype=np.float64).reshape(-1, 3)
    if lattice is not None and not wrapped and len(q) and len(tw):
        lat = np.asarray(lattice, dtype=np.float64)
        q, tw = _wrap(q, lat), _wrap(tw, lat)
    return _nearest(q, np.asarray(labels, dtype=np.int64), tw, np.asarray(target_labels, dtype=np.int64), lattice,
                    _shifts(lattice))


def _nearest(q, labels, tw, tlab, lattice, shifts) -> tuple[np.ndarray, np.ndarray]:
    """:func:`nearest_same_label` of positions (n, 3) float64 already wrapped (when periodic) and int64
    labels, searched over ``shifts`` (:func:`_shifts` of ``lattice``)."""
    if len(q) == 0 or len(tw) == 0:
        return np.full(len(q), np.inf), np.full(len(q), -1, dtype=np.int64)
    if len(q) * len(tw) * len(shifts) <= KERNEL_MAX_WORK:  # numba brute force (phantom_kernels)
        return nearest_same_label_nb(_c(q), _c(labels), _c(tw), _c(tlab), _c(shifts))
    dist = np.full(len(q), np.inf)
    idx = np.full(len(q), -1, dtype=np.int64)
    tidx = np.arange(len(tw))
    if lattice is not None:
        tw = (shifts[:, None, :] + tw[None, :, :]).reshape(-1, 3)
        tlab = np.tile(tlab, len(shifts))
        tidx = np.tile(tidx, len(shifts))
    for z in np.unique(labels):
        sel = labels == z
        atoms = tlab == z
        if not atoms.any():
            continue
        d, j = _kdtree(tw[atoms]).query(q[sel])
        dist[sel] = d
        idx[sel] = tidx[atoms][j]
    return dist, idx


def min_same_label_distance(positions, labels, lattice=None) -> float:
    """Smallest distance between two same-label atoms (minimum image when periodic, an atom's own images
    included, as ``Structure.min_same_label_distance``); inf when no label repeats."""
    pos = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    return _min_distance(pos, np.asarray(labels, dtype=np.int64), lattice, _shifts(lattice))


def _min_distance(pos, lab, lattice, shifts, wrapped=None) -> float:
    """:func:`min_same_label_distance` of positions (n, 3) float64 and int64 labels, searched over
    ``shifts`` (:func:`_shifts` of ``lattice``); ``wrapped``: ``_in_cell(pos, lattice)`` when the caller
    has it."""
    if len(pos) * len(pos) * len(shifts) <= KERNEL_MAX_WORK:  # numba brute force (phantom_kernels)
        w = _in_cell(pos, lattice) if wrapped is None else wrapped
        return float(min_same_label_distance_nb(_c(w), _c(lab), _c(shifts), 0 if lattice is None else 13))
    best = np.inf
    for z in np.unique(lab):
        p = pos[lab == z]
        if lattice is None:
            if len(p) < 2:
                continue
            d, _ = _kdtree(p).query(p, k=2)
            best = min(best, float(d[:, 1].min()))
        else:
            w = _wrap(p, np.asarray(lattice, dtype=np.float64))
            images = (shifts[:, None, :] + w[None, :, :]).reshape(-1, 3)
            d, _ = _kdtree(images).query(w, k=2)
            best = min(best, float(d[:, 1].min()))
    return float(best)


def _checked_delta(rec: Reconstruction, structure: Structure, delta: float | None) -> float:
    """:func:`analyse`'s inputs checked; its δ (Å)."""
    if not isinstance(rec, Reconstruction):
        raise InputError(f"rec must be a Reconstruction, got {type(rec).__name__}", field="rec")
    if not isinstance(structure, Structure):
        raise InputError(f"structure must be a viewcert Structure, got {type(structure).__name__}", field="structure")
    d = rec.delta_3d if delta is None else float(delta)
    if not (math.isfinite(d) and d > 0):
        raise InputError(f"delta must be a positive number of Å, got {delta!r}", field="delta")
    return d


def analyse(rec: Reconstruction, structure: Structure, delta: float | None = None) -> PhantomReport:
    """Φ_δ of ``rec`` against the truth ``structure`` (the cell whose single-cell or tiled observations were
    reconstructed; its Cartesian frame). delta: Å, default the reconstruction's 3D tolerance.

    Parameters
    ----------
    rec : Reconstruction
        The oracle's output (points Å, Cartesian frame of ``structure``).
    structure : Structure
        The truth: positions Cartesian Å; a crystal's lattice rows a, b, c (Å), for minimum-image distances.
    delta : float, optional
        Tolerance in Å, > 0; default ``rec.delta_3d``.

    Returns
    -------
    PhantomReport
        Phantoms (points farther than δ from every same-label atom) with their labels, the atoms missed, counts,
        the separation precondition, the phantom margin (in units of δ) and the largest position error (Å).

    Raises
    ------
    InputError
        ``rec`` or ``structure`` is of another type, or δ is not a positive number (the field names it).
    """
    d = _checked_delta(rec, structure, delta)
    notes = []
    if (rec.lattice is None) != (structure.lattice is None):
        notes.append(
            "the reconstruction and the structure disagree on periodicity; distances use the structure's "
            + ("minimum image" if structure.lattice is not None else "Cartesian frame")
        )
    lat = structure.lattice
    shifts = _shifts(lat)
    # wrapped once for every search below (the structure's own fractional coordinates: the same solve)
    atoms = _c(structure.positions if lat is None else _wrap_frac(structure.frac_coords, lat))
    numbers = _c(structure.numbers)
    dmin = _min_distance(structure.positions, numbers, lat, shifts, atoms)
    sep_ok = bool(dmin > 2 * d)
    if not sep_ok:
        notes.append(
            f"separation precondition fails: two same-label atoms are {dmin:.4g} Å apart, not more than "
            f"2δ = {2 * d:.4g} Å; Theorem 1 does not apply and points within δ of an atom may merge atoms"
        )
    points, labels = _c(_in_cell(rec.points, lat)), _c(np.asarray(rec.labels, dtype=np.int64))
    dist, _ = _nearest(points, labels, atoms, numbers, lat, shifts)
    is_ph = dist > d
    # missing atoms: no same-label point within δ
    back, _ = _nearest(atoms, numbers, points, labels, lat, shifts)
    missing = [int(i) for i in np.flatnonzero(back > d)]
    # margin: rejected near misses that are not atoms
    margin = math.inf
    if len(rec.near_ratios):
        nd, _ = _nearest(_in_cell(rec.near_points, lat), np.asarray(rec.near_labels, dtype=np.int64), atoms, numbers,
                         lat, shifts)
        cand = rec.near_ratios[nd > d]
        if len(cand):
            margin = float(cand.min())
    good = dist[~is_ph]
    maxerr = float(good.max()) if len(good) else 0.0
    if rec.status != "ok":
        notes.append(f"reconstruction failed: {rec.reason}")
    return PhantomReport(
        delta=d,
        phantoms=readonly(rec.points[is_ph]),
        phantom_labels=readonly(rec.labels[is_ph]),
        missing_atoms=tuple(missing),
        n_atoms=structure.n_atoms,
        n_points=rec.n_points,
        n_recovered=structure.n_atoms - len(missing),
        separation_ok=sep_ok,
        min_same_label_distance=dmin,
        margin=margin,
        max_position_error=maxerr,
        reconstruction_status=rec.status,
        notes=tuple(notes),
    )
