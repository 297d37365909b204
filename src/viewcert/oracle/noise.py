"""Monte Carlo over 2D localisation noise: how recovery and phantoms degrade with σ (design studies).

For every σ and seed, every structure is observed with Gaussian noise of σ (px or Å in the image plane,
``ObservationModel(sigma=..., seed=...)``), reconstructed in one batch, and analysed against its truth.
Rates are fractions of (structure, seed) runs: ``recovery_rate`` (every atom recovered), ``exact_rate``
(recovered, Φ_δ empty and one point per atom), ``phantom_rate`` (Φ_δ non-empty), ``failure_rate``
(reconstruction status "failed"); plus the mean fraction of atoms recovered and mean phantom count.
δ may be a number (Å, or px with ``delta_unit="px"``) or a function of σ, e.g. ``lambda s: max(0.01, 4 * s)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from viewcert.errors import InputError
from viewcert.observe.project import ObservationModel, observe
from viewcert.oracle.phantoms import analyse
from viewcert.oracle.triangulate import reconstruct_batch
from viewcert.structures import Structure


def delta_for_sigma(sigma: float, *, kappa: float, floor: float = 0.0) -> float:
    """The tolerance for 2D noise of std σ (Å in the image plane) under a protocol of conditioning κ:
    δ = max(floor, 4·√2·κ·σ), the rule of the study's noise sweep (δ = 0.0155 Å at σ = 0.001 Å with the
    frozen views' κ = 2.7321; 0.0477 Å off-axis, κ = 8.4258). A two-view least-squares point moves by at most
    κ·√2·|noise|; the factor 4 covers the noise's tails.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, Å in the image plane, finite and ≥ 0.
    kappa : float
        The protocol's conditioning κ (dimensionless), > 0.
    floor : float, default 0.0
        Smallest δ returned, Å.

    Returns
    -------
    float
        δ in Å.

    Raises
    ------
    InputError
        ``sigma`` or ``kappa`` is out of range (field ``sigma`` or ``kappa``).
    """
    if not (np.isfinite(sigma) and sigma >= 0):
        raise InputError(f"sigma must be a finite number ≥ 0, got {sigma!r}", field="sigma")
    if not (np.isfinite(kappa) and kappa > 0):
        raise InputError(f"kappa must be a positive number, got {kappa!r}", field="kappa")
    return float(max(floor, 4.0 * np.sqrt(2.0) * kappa * sigma))


@dataclass(frozen=True)
class NoisePoint:
    """Outcome at one σ over every structure and seed."""

    sigma: float
    delta: float
    n_runs: int
    recovery_rate: float
    exact_rate: float
    phantom_rate: float
    failure_rate: float
    mean_atom_recovery: float
    mean_phantoms: float
    per_structure_recovered: dict

    def to_dict(self) -> dict:
        return {
            "sigma": self.sigma,
            "delta": self.delta,
            "n_runs": self.n_runs,
            "recovery_rate": self.recovery_rate,
            "exact_rate": self.exact_rate,
            "phantom_rate": self.phantom_rate,
            "failure_rate": self.failure_rate,
            "mean_atom_recovery": self.mean_atom_recovery,
            "mean_phantoms": self.mean_phantoms,
            "per_structure_recovered": dict(self.per_structure_recovered),
        }


def _camera_sets(structures: list[Structure], cameras) -> list[tuple]:
    """One camera tuple per structure, from a function structure → cameras or a list of camera lists."""
    if callable(cameras):
        return [tuple(cameras(s)) for s in structures]
    cams = [tuple(c) for c in cameras]
    if len(cams) != len(structures):
        raise InputError(f"{len(cams)} camera sets for {len(structures)} structures", field="cameras")
    return cams


def _tally(sigma: float, delta: float, keys: list[str], truth: list[Structure], recs: list) -> NoisePoint:
    """The rates at one σ from the reconstructions ``recs`` of the runs (one key and truth per run)."""
    rec_all = exact = phantom = failed = 0
    frac, nph = [], []
    per: dict = {}
    for key, st, rec in zip(keys, truth, recs, strict=True):
        rep = analyse(rec, st)
        rec_all += rep.recovered_all
        exact += rep.exact
        phantom += rep.n_phantoms > 0
        failed += rec.status != "ok"
        frac.append(rep.n_recovered / max(1, rep.n_atoms))
        nph.append(rep.n_phantoms)
        per[key] = per.get(key, 0) + int(rep.recovered_all)
    n = len(recs)
    return NoisePoint(
        sigma=sigma, delta=delta, n_runs=n, recovery_rate=rec_all / n, exact_rate=exact / n,
        phantom_rate=phantom / n, failure_rate=failed / n, mean_atom_recovery=float(np.mean(frac)),
        mean_phantoms=float(np.mean(nph)), per_structure_recovered=per,
    )


def noise_sweep(
    structures: Sequence[Structure],
    cameras: Callable[[Structure], Sequence] | Sequence[Sequence],
    sigmas: Sequence[float],
    *,
    delta: float | Callable[[float], float],
    seeds: Sequence[int] = (0,),
    sigma_unit: str = "angstrom",
    delta_unit: str = "angstrom",
    pairs: str = "all",
    merge: str | None = None,
    tiling=(1, 1, 1),
    periodic: bool = True,
) -> list[NoisePoint]:
    """Recovery and phantom rates per σ. Seeds are combined with the structure's position in the list
    (seed·1,000,003 + i) so every run has its own noise draw, reproducibly.

    Parameters
    ----------
    structures : sequence of Structure
        The truths (positions Cartesian Å), at least one.
    cameras : callable or sequence of sequences of cameras
        A function structure → cameras (e.g. ``lambda s: frame(protocol, s)``) or one camera list per
        structure.
    sigmas : sequence of float
        Noise standard deviations, each finite and ≥ 0, in ``sigma_unit``.
    delta : float or callable
        The oracle's tolerance in ``delta_unit``, or a function σ → δ (e.g. :func:`delta_for_sigma`).
    seeds : sequence of int, default (0,)
        Noise seeds; every structure is run once per seed.
    sigma_unit : {"angstrom", "px"}, default "angstrom"
        Unit of σ: Å in the image plane (converted with the camera's scale at the atom's depth) or px.
    delta_unit : {"angstrom", "px"}, default "angstrom"
        Unit of δ.
    pairs : {"all", "first"}, default "all"
        View pairs that seed candidates (:func:`reconstruct`).
    merge : {"deterministic", "greedy"}, optional
        Merge semantics (:func:`reconstruct`).
    tiling : tuple of int, (na, nb, nc), default (1, 1, 1)
        Cell repetitions observed (crystals).
    periodic : bool, default True
        Pass each structure's lattice to the oracle (minimum-image merge, wrapped points).

    Returns
    -------
    list of NoisePoint
        One per σ, in the order of ``sigmas``: δ used and the rates (fractions of the structure × seed runs).

    Raises
    ------
    InputError
        No structures, a σ that is negative or not finite, or a camera list per structure of another length
        (the field names the argument); or as :func:`reconstruct`.
    """
    structures = list(structures)
    if not structures:
        raise InputError("noise_sweep needs at least one structure", field="structures")
    cams = _camera_sets(structures, cameras)
    sig = [float(s) for s in sigmas]
    if any(not np.isfinite(s) or s < 0 for s in sig):
        raise InputError(f"sigmas must be finite and ≥ 0, got {list(sigmas)}", field="sigmas")
    out = []
    for s in sig:
        d = float(delta(s)) if callable(delta) else float(delta)
        obs, truth, keys = [], [], []
        for seed in seeds:
            for i, (st, cm) in enumerate(zip(structures, cams, strict=True)):
                model = ObservationModel(tiling=tiling, sigma=s, sigma_unit=sigma_unit,
                                         seed=int(seed) * 1_000_003 + i)
                obs.append(observe(st, cm, model))
                truth.append(st)
                keys.append(st.identifier or str(i))
        lats = [st.lattice if (periodic and st.is_periodic) else None for st in truth]
        recs = reconstruct_batch(obs, delta=d, delta_unit=delta_unit, pairs=pairs, merge=merge, lattice=lats)
        out.append(_tally(s, d, keys, truth, recs))
    return out
