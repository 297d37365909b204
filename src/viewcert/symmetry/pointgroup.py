"""Schoenflies point group of a finite labelled point set within a distance tolerance τ (Å).

Definition. An orthogonal map g about the centroid c is a *symmetry operation within τ* of the labelled
points (x_i, z_i) when there is a label-preserving bijection π with ‖c + g(x_i − c) − x_π(i)‖ ≤ τ for
every i. (Every exact operation fixes the centroid, so c is the plain mean of the positions.) The group is
found exhaustively: pick a reference atom a off the centre and a second atom b not collinear with a
through c, each from the rarest (label, radius) class; any operation maps a to a same-label atom a' at the
same radius and b to some b' with |a'b'| = |ab|, and the pair (a', b') fixes one proper and one improper
candidate. Each candidate is matched against all atoms (cKDTree), its bijection refit by orthogonal
Procrustes (det kept) and, when the largest residual is just above τ, by Lawson's minimax reweighting (the
test is on the largest residual, which least squares does not minimise), and accepted when every residual
is ≤ τ. The operations then classify the
group: the proper subgroup by its order and axes (Cn, Dn, T, O, I), the full group by the kind of improper
operations (σh, σv, i, S2n). Linear sets get C∞v or D∞h, a single atom Kh.

Frames and units: Cartesian Å in the input's frame; operations are 3×3 orthogonal matrices acting on
(x − centroid). ``is_chiral`` means the group has no improper operation.

Cross-check: pymatgen's ``PointGroupAnalyzer`` with ``tolerance = τ`` (its distance tolerance, Å) and its
default eigen/matrix tolerances; both symbols are recorded and a disagreement is a value, never an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from viewcert.errors import InputError
from viewcert.resolution import quantize_array

PYMATGEN_EIGEN_TOLERANCE = 0.01  # pymatgen's default (relative, inertia eigenvalues)
PYMATGEN_MATRIX_TOLERANCE = 0.1  # pymatgen's default (operation matrices)
_AXIS_COS = 0.999  # two axes are the same line when |cos| ≥ this (≈ 2.6°)
_MAX_ORDER = 60


def _kdtree(points):
    """``scipy.spatial.cKDTree(points)``, imported at the first call."""
    from scipy.spatial import cKDTree  # lazy: start-up time (scipy.spatial costs 0.3-0.9 s to import)

    return cKDTree(points)


@dataclass(frozen=True)
class PointGroup:
    """A point group found within τ (Å): Schoenflies symbol and operations (3×3, about ``centre``).

    ``closed`` is False when the operations found within τ did not compose (two fit, their product does not):
    the symbol is then that of the group they generate.
    """

    symbol: str
    operations: tuple[np.ndarray, ...]
    centre: tuple[float, float, float]
    tolerance: float
    closed: bool
    max_residual: float  # Å, largest refit residual over accepted operations

    @property
    def order(self) -> int:
        return len(self.operations)

    @property
    def is_chiral(self) -> bool:
        """True when the group has no improper operation (the mirror image is not the molecule)."""
        if self.symbol in ("C∞v", "D∞h", "Kh"):
            return False
        return all(np.linalg.det(m) > 0 for m in self.operations)

    @property
    def has_inversion(self) -> bool:
        return self.symbol in ("D∞h", "Kh") or any(
            np.allclose(m, -np.eye(3), atol=1e-3) for m in self.operations
        )

    def to_dict(self) -> dict:
        return {
            "symbol": self.symbol,
            "order": self.order if self.symbol not in ("C∞v", "D∞h", "Kh") else None,
            "is_chiral": self.is_chiral,
            "closed": self.closed,
            "tolerance_A": self.tolerance,
            "max_residual_A": self.max_residual,
        }


def _check(positions: np.ndarray, labels: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    pos = np.asarray(positions, dtype=np.float64)
    lab = np.asarray(labels)
    if pos.ndim != 2 or pos.shape[1] != 3:
        raise InputError(f"positions must have shape (n, 3), got {pos.shape}", field="positions")
    if lab.shape != (pos.shape[0],):
        raise InputError(f"labels must have shape ({pos.shape[0]},), got {lab.shape}", field="labels")
    if pos.shape[0] == 0:
        raise InputError("no points", field="positions")
    if not np.isfinite(pos).all():
        raise InputError("non-finite positions", field="positions")
    if not (tol > 0 and math.isfinite(tol)):
        raise InputError(f"tolerance must be a positive number of Å, got {tol}", field="tolerance")
    return pos, lab


def _frame(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Orthonormal frame (columns) built from a and b: â, n̂ = (a×b)^, n̂×â."""
    e1 = a / np.linalg.norm(a)
    n = np.cross(a, b)
    e2 = n / np.linalg.norm(n)
    return np.column_stack([e1, e2, np.cross(e2, e1)])


def _procrustes(x: np.ndarray, y: np.ndarray, proper: bool) -> np.ndarray:
    """Orthogonal M (det +1 if proper else −1) minimising Σ‖M x_i − y_i‖² (rows x_i, y_i)."""
    u, _, vt = np.linalg.svd(y.T @ x)
    d = np.ones(3)
    want = 1.0 if proper else -1.0
    if np.linalg.det(u @ vt) * want < 0:
        d[2] = -1.0
    return u @ np.diag(d) @ vt


def _minimax(x: np.ndarray, y: np.ndarray, proper: bool, m: np.ndarray, iters: int = 40) -> tuple[np.ndarray, float]:
    """Lower the largest residual ‖M x_i − y_i‖ of a least-squares fit by Lawson's reweighting (weights grow
    with each point's residual); returns the best (M, largest residual) seen. The tolerance test is on the
    largest residual, which least squares does not minimise."""
    best_m, best = m, float(np.linalg.norm(x @ m.T - y, axis=1).max())
    w = np.full(len(x), 1.0 / len(x))
    for _ in range(iters):
        r = np.linalg.norm(x @ m.T - y, axis=1)
        w = w * (r + 1e-15)
        w /= w.sum()
        u, _, vt = np.linalg.svd((y * w[:, None]).T @ x)
        d = np.ones(3)
        if np.linalg.det(u @ vt) * (1.0 if proper else -1.0) < 0:
            d[2] = -1.0
        m = u @ np.diag(d) @ vt
        top = float(np.linalg.norm(x @ m.T - y, axis=1).max())
        if top < best:
            best_m, best = m, top
    return best_m, best


def _match(rel: np.ndarray, lab: np.ndarray, m: np.ndarray, trees: dict, tol: float) -> np.ndarray | None:
    """Label-preserving bijection of rel under m within tol (indices), or None."""
    img = rel @ m.T
    perm = np.empty(len(rel), dtype=np.int64)
    for z, (tree, idx) in trees.items():
        sel = np.flatnonzero(lab == z)
        d, j = tree.query(img[sel], distance_upper_bound=tol)
        if not np.isfinite(d).all():
            return None
        perm[sel] = idx[j]
    if len(np.unique(perm)) != len(perm):
        return None
    return perm


def _reference_pair(rel: np.ndarray, lab: np.ndarray, tol: float) -> tuple[int, int, list, list] | None:
    """Reference atoms a, b (not collinear through the centre) and their candidate images."""
    r = np.linalg.norm(rel, axis=1)
    same = (lab[:, None] == lab[None, :]) & (np.abs(r[:, None] - r[None, :]) <= 2 * tol)
    size = same.sum(axis=1)
    order = np.lexsort((np.arange(len(r)), size))
    # well-conditioned frame: a far from the centre, b far from the line through a (each at least half the
    # largest such distance), the rarest (label, radius) class first among those
    far = [i for i in order if r[i] > 2 * tol and r[i] >= 0.5 * r.max()] or [int(np.argmax(r))]
    a = far[0]
    ua = rel[a] / max(r[a], 1e-12)
    cross = np.linalg.norm(np.cross(ua, rel), axis=1)
    if cross.max() <= 1e-6:
        return None
    good = [i for i in order if i != a and cross[i] > 2 * tol and cross[i] >= 0.5 * cross.max()]
    b = good[0] if good else int(np.argmax(cross))
    dab = np.linalg.norm(rel[a] - rel[b])
    ia = list(np.flatnonzero(same[a]))
    pairs = []
    for ap in ia:
        for bp in np.flatnonzero(same[b]):
            if bp != ap and abs(np.linalg.norm(rel[ap] - rel[bp]) - dab) <= 2 * tol:
                pairs.append((ap, bp))
    return a, b, pairs, ia


def symmetry_operations(
    positions: np.ndarray, labels: np.ndarray, tolerance: float
) -> tuple[list[np.ndarray], np.ndarray, float, int]:
    """All orthogonal operations about the centroid mapping the labelled set onto itself within τ, and the
    group they generate (see ``_closed_subset``).

    Returns (operations, centroid, largest refit residual in Å, operations added to close the set). Not for
    linear sets (see ``point_group``).
    """
    pos, lab = _check(positions, labels, tolerance)
    c = pos.mean(axis=0)
    rel = pos - c
    ref = _reference_pair(rel, lab, tolerance)
    if ref is None:
        raise InputError("points are collinear through their centroid; use point_group()", field="positions")
    a, b, pairs, _ = ref
    trees = {z: (_kdtree(rel[lab == z]), np.flatnonzero(lab == z)) for z in np.unique(lab)}
    fa = _frame(rel[a], rel[b])
    # the candidate built from a and b is off by up to ~2τ·R·(1/|a| + 1/dist(b, line a)) at radius R: the
    # first match allows that (capped at 0.5 Å), then two Procrustes refits tighten it to 3τ and τ
    big = float(np.linalg.norm(rel, axis=1).max())
    cond = 1.0 / np.linalg.norm(rel[a]) + 1.0 / np.linalg.norm(np.cross(rel[a] / np.linalg.norm(rel[a]), rel[b]))
    loose = max(3 * tolerance, min(3 * tolerance + 2 * tolerance * big * cond, 0.5))
    found: dict[tuple[int, ...], tuple[np.ndarray, float]] = {}
    for ap, bp in pairs:
        for proper in (True, False):
            if proper:
                m = _frame(rel[ap], rel[bp]) @ fa.T
            else:
                m = -(_frame(-rel[ap], -rel[bp]) @ fa.T)
            perm = _match(rel, lab, m, trees, loose)
            if perm is None:
                continue
            m = _procrustes(rel, rel[perm], proper)
            perm = _match(rel, lab, m, trees, 3 * tolerance)
            if perm is None:
                continue
            m = _procrustes(rel, rel[perm], proper)
            res = np.linalg.norm(rel @ m.T - rel[perm], axis=1).max()
            if tolerance < res <= 3 * tolerance:
                m, res = _minimax(rel, rel[perm], proper, m)
            final = None if res > tolerance else _match(rel, lab, m, trees, tolerance)
            if final is None:
                continue
            # one operation per (proper?, atom permutation): a planar set's σh permutes nothing, like E
            key = (1 if proper else -1, *(int(i) for i in final))
            if key not in found or res < found[key][1]:
                found[key] = (m, float(res))
    ops, worst = _closed_subset(found)
    return ops, c, worst, len(ops) - len(found)


def _closed_subset(found: dict) -> tuple[list[np.ndarray], float]:
    """The group generated by the operations found within τ. Two operations may each fit within τ while
    their product does not (errors add); the product is then added all the same (matrix = product of the
    fitted matrices), as pymatgen's analyser reads a group from the operations it finds, and ``closed``
    reports it. Keys are (±1, atom permutation): signs multiply, permutations compose. Returns (matrices in
    key order, largest residual among the fitted operations)."""
    group = {k: v[0] for k, v in found.items()}

    def compose(p, q):
        return (p[0] * q[0], *(p[1 + i] for i in q[1:]))

    frontier = list(group)
    while frontier and len(group) <= 240:
        new = {}
        for p in frontier:
            for q in list(group):
                for a, b in ((p, q), (q, p)):
                    k = compose(a, b)
                    if k not in group and k not in new:
                        new[k] = group[a] @ group[b]
        group.update(new)
        frontier = list(new)
    keys = sorted(group)
    return [group[k] for k in keys], max((v[1] for v in found.values()), default=0.0)


def _rotation_order(m: np.ndarray) -> tuple[int, np.ndarray | None]:
    """Order and axis (unit, sign arbitrary) of a proper rotation; (1, None) for the identity."""
    cos = float(np.clip((np.trace(m) - 1) / 2, -1, 1))
    theta = math.acos(cos)
    if theta < 1e-3:
        return 1, None
    w, v = np.linalg.eig(m)
    axis = np.real(v[:, int(np.argmin(np.abs(w - 1)))])
    axis /= np.linalg.norm(axis)
    for n in range(2, _MAX_ORDER + 1):
        k = n * theta / (2 * math.pi)
        if abs(k - round(k)) < 1e-2 * n:
            return n, axis
    return _MAX_ORDER + 1, axis


def _axes(ops: list[np.ndarray]) -> list[tuple[np.ndarray, int]]:
    """Distinct rotation axes (lines) of the proper operations with their largest order."""
    axes: list[list] = []
    for m in ops:
        if np.linalg.det(m) < 0:
            continue
        n, ax = _rotation_order(m)
        if ax is None:
            continue
        for entry in axes:
            if abs(float(entry[0] @ ax)) >= _AXIS_COS:
                entry[1] = max(entry[1], n)
                break
        else:
            axes.append([ax, n])
    return [(a, n) for a, n in axes]


def _proper_name(n_proper: int, axes: list[tuple[np.ndarray, int]]) -> tuple[str, int, list]:
    """Family (C, D, T, O, I), principal order n and the principal axes of the rotation subgroup."""
    if n_proper == 1:
        return "C", 1, []
    if len(axes) == 1:
        return "C", n_proper, [axes[0][0]]
    high = [a for a, n in axes if n >= 3]
    if len(high) > 1:
        fam = {12: "T", 24: "O", 60: "I"}.get(n_proper, "?")
        return fam, max(n for _, n in axes), high
    top = max(n for _, n in axes)
    return "D", n_proper // 2, [a for a, n in axes if n == top]


def _mirror_normal(m: np.ndarray) -> np.ndarray | None:
    """Normal of a reflection (improper op with eigenvalues −1, 1, 1), else None."""
    if np.linalg.det(m) > 0 or abs(np.trace(m) - 1) > 1e-3:
        return None
    w, v = np.linalg.eigh((m + m.T) / 2)
    return v[:, int(np.argmin(w))]


def classify(ops: list[np.ndarray]) -> str:
    """Schoenflies symbol of a finite set of orthogonal operations (identity included)."""
    proper = [m for m in ops if np.linalg.det(m) > 0]
    improper = [m for m in ops if np.linalg.det(m) < 0]
    fam, n, principal = _proper_name(len(proper), _axes(ops))
    if fam == "?":
        return "?"
    if not improper:
        return fam if fam in "TOI" else f"{fam}{n}"
    inversion = any(np.allclose(m, -np.eye(3), atol=1e-3) for m in improper)
    normals = [x for x in (_mirror_normal(m) for m in improper) if x is not None]
    if fam in "TOI":
        return {"T": "Th" if inversion else "Td", "O": "Oh", "I": "Ih"}[fam]
    if fam == "C" and n == 1:
        return "Cs" if normals else "Ci"
    sigma_h = any(abs(float(nm @ ax)) >= _AXIS_COS for nm in normals for ax in principal)
    if fam == "D":
        return f"D{n}h" if sigma_h else f"D{n}d"
    if sigma_h:
        return f"C{n}h"
    if normals:
        return f"C{n}v"
    return f"S{2 * n}"


def _closed(ops: list[np.ndarray]) -> bool:
    stack = np.array(ops)
    for m in ops:
        prod = np.einsum("ij,kjl->kil", m, stack)
        for p in prod:
            if np.abs(stack - p).max(axis=(1, 2)).min() > PYMATGEN_MATRIX_TOLERANCE:
                return False
    return True


def point_group(positions: np.ndarray, labels: np.ndarray, tolerance: float) -> PointGroup:
    """Schoenflies point group of labelled points (Å) within τ = ``tolerance`` (Å); see the module doc."""
    pos, lab = _check(positions, labels, tolerance)
    c = pos.mean(axis=0)
    rel = pos - c
    ctr = tuple(float(x) for x in c)
    if len(pos) == 1:
        return PointGroup("Kh", (np.eye(3),), ctr, tolerance, True, 0.0)
    _, v = np.linalg.eigh(rel.T @ rel)
    axis = v[:, 2]
    off = np.linalg.norm(rel - np.outer(rel @ axis, axis), axis=1)
    if off.max() <= tolerance:
        # Linear: the infinite groups; the operations kept are the finite representatives E (and i).
        trees = {z: (_kdtree(rel[lab == z]), np.flatnonzero(lab == z)) for z in np.unique(lab)}
        sym = _match(rel, lab, -np.eye(3), trees, 2 * tolerance) is not None
        ops = (np.eye(3), -np.eye(3)) if sym else (np.eye(3),)
        return PointGroup("D∞h" if sym else "C∞v", ops, ctr, tolerance, True, float(off.max()))
    # canonical order (label, radius, coordinates rounded to 1e-6 Å): the same point set gives the same
    # reference atoms and hence the same answer whatever its order, also when τ is borderline
    # (snapped before rounding: a tie at 1e-6 Å orders the same on every CPU, viewcert.resolution)
    r = quantize_array(np.linalg.norm(rel, axis=1), 6)
    q = quantize_array(rel, 6)
    order = np.lexsort((q[:, 2], q[:, 1], q[:, 0], r, lab))
    ops, _, worst, dropped = symmetry_operations(pos[order], lab[order], tolerance)
    return PointGroup(classify(ops), tuple(ops), ctr, tolerance, dropped == 0 and _closed(ops), worst)


def pymatgen_point_group(positions: np.ndarray, labels: np.ndarray, tolerance: float) -> str:
    """pymatgen's ``PointGroupAnalyzer`` symbol at distance tolerance τ (Å), default eigen/matrix tolerances.

    pymatgen writes ``C*v``/``D*h`` for linear molecules; returned here as ``C∞v``/``D∞h``.
    """
    from pymatgen.core import Molecule
    from pymatgen.symmetry.analyzer import PointGroupAnalyzer

    pos, lab = _check(positions, labels, tolerance)
    mol = Molecule([int(z) for z in lab], pos)
    sym = PointGroupAnalyzer(
        mol,
        tolerance=tolerance,
        eigen_tolerance=PYMATGEN_EIGEN_TOLERANCE,
        matrix_tolerance=PYMATGEN_MATRIX_TOLERANCE,
    ).sch_symbol
    return sym.replace("*", "∞")


@dataclass(frozen=True)
class PointGroupCheck:
    """Our symbol and pymatgen's at the same τ (Å); ``agree`` is False when they differ (a flagged value)."""

    ours: str
    pymatgen: str
    tolerance: float

    @property
    def agree(self) -> bool:
        return self.ours == self.pymatgen

    def to_dict(self) -> dict:
        return {
            "ours": self.ours,
            "pymatgen": self.pymatgen,
            "tolerance_A": self.tolerance,
            "agree": self.agree,
        }


def cross_checked_point_group(positions: np.ndarray, labels: np.ndarray, tolerance: float) -> PointGroupCheck:
    """Our point group and pymatgen's at τ; pymatgen failures are recorded as ``error: ...``, not raised."""
    ours = point_group(positions, labels, tolerance).symbol
    try:
        theirs = pymatgen_point_group(positions, labels, tolerance)
    except Exception as exc:  # noqa: BLE001 - a failing cross-check is a value
        theirs = f"error: {type(exc).__name__}"
    return PointGroupCheck(ours, theirs, tolerance)
