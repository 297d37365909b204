"""Conditioning of view pairs, whether a set of views determines every point, and zone-axis warnings.

κ(v, w) = ‖[P_v; P_w]⁺‖₂, the spectral norm of the pseudo-inverse of the stacked 4×3 orthographic
projection (P = first two rows of R): how much a 2D error can grow in the triangulated 3D point. κ = 1 for
perpendicular views and grows like 1/sin(angle) as two views approach each other (∞ when parallel).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np

from viewcert.structures import Structure


def pair_kappa(rotation_a: np.ndarray, rotation_b: np.ndarray) -> float:
    """κ of two orthographic views given their world→camera rotations (dimensionless; inf if parallel)."""
    stacked = np.concatenate([np.asarray(rotation_a)[:2], np.asarray(rotation_b)[:2]], axis=0)
    s = np.linalg.svd(stacked, compute_uv=False)
    return float("inf") if s[-1] <= 1e-12 else float(1.0 / s[-1])


def protocol_kappa(protocol) -> dict[str, float]:
    """κ for every view pair of a protocol, keyed ``"name_a|name_b"`` in protocol order, plus ``"max"`` over
    the independent (finite-κ) pairs: a view and its antipode carry the same projection and are skipped."""
    out: dict[str, float] = {}
    for va, vb in itertools.combinations(protocol.views, 2):
        out[f"{va.name}|{vb.name}"] = pair_kappa(va.rotation, vb.rotation)
    finite = [k for k in out.values() if np.isfinite(k)]
    out["max"] = max(finite) if finite else float("inf")
    return out


@dataclass(frozen=True)
class ZoneAxisWarning:
    """A view direction within ``angle_deg`` of a short lattice vector (fractional indices ``uvw``)."""

    view: str
    uvw: tuple[int, int, int]
    length: float  # Å
    angle_deg: float

    def message(self) -> str:
        u, v, w = self.uvw
        return (
            f"view {self.view!r} looks within {self.angle_deg:.2f}° of lattice vector [{u} {v} {w}] "
            f"({self.length:.3f} Å): its translates overlap in that view"
        )


def short_lattice_vectors(lattice: np.ndarray, *, max_ratio: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """Primitive lattice vectors (up to sign) of length ≤ max_ratio × the shortest: (indices (k,3), vectors)."""
    lat = np.asarray(lattice, dtype=np.float64)
    recip = np.linalg.inv(lat).T  # rows b_i* with a_i·b_j* = δ_ij, so n_i = v·b_i*, |n_i| ≤ |v|·|b_i*|
    # the shortest lattice vector is no longer than the shortest row: enumerating up to max_ratio × that
    # row length is guaranteed to contain every vector we keep, whatever the cell's reduction
    bound_len = max_ratio * np.linalg.norm(lat, axis=1).min()
    bound = np.ceil(bound_len * np.linalg.norm(recip, axis=1)).astype(int)
    ranges = [range(-b, b + 1) for b in bound]
    idx = np.array([n for n in itertools.product(*ranges) if any(n)], dtype=np.int64)
    shortest = np.linalg.norm(idx @ lat, axis=1).min()
    limit = max_ratio * shortest
    vec = idx @ lat
    length = np.linalg.norm(vec, axis=1)
    keep = length <= limit * (1 + 1e-9)
    idx, vec = idx[keep], vec[keep]
    # keep one of ±n (first nonzero index positive), and primitive directions only (gcd of indices = 1)
    first = np.array([row[np.flatnonzero(row)[0]] for row in idx])
    keep = (first > 0) & (np.gcd.reduce(np.abs(idx), axis=1) == 1)
    return idx[keep], vec[keep]


def zone_axis_warnings(
    structure: Structure, protocol, *, angle_deg: float = 2.0, max_ratio: float = 2.0
) -> list[ZoneAxisWarning]:
    """Views of ``protocol`` whose direction lies within ``angle_deg`` of a lattice vector of length ≤
    ``max_ratio`` × the shortest lattice vector. Empty for molecules."""
    if not structure.is_periodic:
        return []
    idx, vec = short_lattice_vectors(structure.lattice, max_ratio=max_ratio)
    unit = vec / np.linalg.norm(vec, axis=1, keepdims=True)
    out = []
    for view in protocol.views:
        d = -np.asarray(view.rotation)[2]
        cosang = np.clip(np.abs(unit @ d), 0.0, 1.0)
        ang = np.degrees(np.arccos(cosang))
        for k in np.flatnonzero(ang <= angle_deg):
            out.append(
                ZoneAxisWarning(view.name, tuple(int(x) for x in idx[k]), float(np.linalg.norm(vec[k])), float(ang[k]))
            )
    return out


def translate_overlap_warnings(cameras, lattice: np.ndarray, tolerance, *, tiling=(1, 1, 1)) -> list[str]:
    """The same concept as :func:`zone_axis_warnings` stated in the oracle's terms: orthographic views in which
    some lattice vector n·(a, b, c) with |n_i| ≤ 2 projects to an in-plane length ≤ ``tolerance[k]`` (Å in the
    image plane; the oracle passes 2δ), so its translates land within that tolerance of each other and the view
    cannot separate them. ``zone_axis_warnings`` asks the geometric question (view direction within an angle of
    a short lattice vector) before any tolerance is chosen; this one asks whether the chosen δ resolves it."""
    lat = np.asarray(lattice, dtype=np.float64)
    tol = np.broadcast_to(np.asarray(tolerance, dtype=np.float64), (len(cameras),))
    rng = range(-2, 3)
    vecs = np.array([(i, j, k) for i in rng for j in rng for k in rng if (i, j, k) != (0, 0, 0)], dtype=float)
    tv = vecs @ lat
    out = []
    for k, cam in enumerate(cameras):
        if getattr(cam, "kind", "") != "orthographic":
            continue
        inplane = np.linalg.norm(tv @ np.asarray(cam.rotation)[:2].T, axis=1)
        hit = np.flatnonzero(inplane <= tol[k])
        if len(hit):
            n = vecs[hit[np.argmin(np.linalg.norm(tv[hit], axis=1))]].astype(int)
            n = -n if n[np.flatnonzero(n)[0]] < 0 else n
            out.append(
                f"view {k} ({cam.name or 'unnamed'}) looks along lattice vector [{n[0]} {n[1]} {n[2]}] "
                f"(zone axis): its translates project within 2δ and this view cannot separate them"
                + (" in the tiled observations" if tuple(tiling) != (1, 1, 1) else "")
            )
    return out


CENTRE_ATOL = 1e-9  # Å: two pinholes closer than this are one centre; centres this close to a line are on it
ON_LINE_ATOL = 1e-6  # Å: a drawn point this close to the line of collinear pinholes lies on it


def independent_views(cameras, points=None) -> bool:
    """Do the views determine every point (the theorem's precondition)? Orthographic: two or more views whose
    stacked 2×3 projections have rank 3. Perspective (every camera a pinhole): a point X is determined unless
    every camera centre lies on one line through X (its rays then coincide); so: at least two distinct
    centres (> CENTRE_ATOL Å apart) and, when every centre lies on one line L (always so for two cameras),
    no drawn point of ``points`` (Å, world) within ON_LINE_ATOL Å of L (without ``points``: not
    independent). Orthographic and perspective cameras mixed: not independent (certify never mixes them)."""
    kinds = {getattr(cam, "kind", "") for cam in cameras}
    if kinds == {"perspective"}:
        return _pinholes_independent(np.array([np.asarray(c.position) for c in cameras]), points)
    if kinds != {"orthographic"} or len(cameras) < 2:
        return False
    stacked = np.concatenate([np.asarray(cam.rotation)[:2] for cam in cameras])
    return _rank_3(stacked.dtype.str, stacked.shape, stacked.tobytes())


@functools.lru_cache(maxsize=64)
def _rank_3(dtype: str, shape: tuple[int, int], data: bytes) -> bool:
    """Rank 3 (tolerance 1e-9) of the stacked projection rows given by their exact bytes: a pure verdict,
    kept for the few view sets a run frames (every item of a protocol has the same rotations)."""
    return bool(np.linalg.matrix_rank(np.frombuffer(data, dtype=dtype).reshape(shape), tol=1e-9) == 3)


def _pinholes_independent(centres: np.ndarray, points) -> bool:
    """``independent_views`` for pinholes at ``centres`` (k, 3) Å."""
    far = np.linalg.norm(centres - centres[0], axis=1)
    if len(centres) < 2 or far.max() <= CENTRE_ATOL:
        return False
    u = (centres[far.argmax()] - centres[0]) / far.max()

    def off_line(p):  # distance (Å) of points p (n, 3) from the line through centres[0] along u
        d = np.asarray(p, dtype=np.float64).reshape(-1, 3) - centres[0]
        return np.linalg.norm(d - np.outer(d @ u, u), axis=1)

    if off_line(centres).max() > CENTRE_ATOL:
        return True  # not collinear: every point is determined
    return points is not None and bool(off_line(points).min() > ON_LINE_ATOL)
