"""What views determine about a molecule beyond uniqueness: its point group and its handedness.

Handedness. The question: do the observations fix the molecule X up to *proper* motions, i.e. is no
improper image g(X) (g a reflection composed with a rotation and a translation) consistent with every view
within δ? Consistent means: observing g(X) through the same cameras under the same observation model gives,
view by view, the observed labelled 2D points (one-to-one, same label, within δ).

- **Achiral X** (its point group within δ has an improper operation σ): σ(X) = X, so the question has no
  content; the status is ``achiral``.
- **One orthographic view never fixes it.** Let M be the reflection through the plane perpendicular to the
  view direction (camera z → −z about the molecule's centroid). M changes only depth, so M(X) projects
  exactly onto X's points: a witness. With ``--observe visible`` the observation is the *visible* subset;
  M reverses the depth order, so a point hidden behind a nearer atom in X may come into sight in M(X) and
  vice versa. ``single_view_resolves[k]`` records, per view, whether that visible set differs (occlusion
  alone resolves handedness in view k). Antipodal views (d and −d) share M, so they never fix it either.
- **Two or more independent orthographic views with Φ_δ = ∅, every view showing every atom.** The oracle accepts every 3D point whose
  projections land within δ of same-label points in every view; Φ_δ = ∅ with every atom recovered means
  each accepted point lies within δ_3d of an atom (the oracle's 3D merge tolerance) and the reconstruction
  is X. Every atom of a consistent g(X) would be such an accepted point, so g maps X onto itself within
  δ_3d: g is an improper symmetry operation of X within δ_3d. Hence if X is chiral at δ_3d the mirror is
  excluded: status ``determined`` (a proof, stated in ``reason``).
- **Φ_δ ≠ ∅, every view showing every atom.** A consistent g(X) then shows all its atoms in every view, so
  each of them is a point the oracle accepts (an atom or a phantom). The search is therefore finite: every
  improper image of X whose atoms sit one-to-one on same-label accepted points (within 2·δ_3d; images of
  three well-spread reference atoms enumerate them) is re-observed and compared view by view. None
  consistent: ``determined``; one consistent: ``not_determined`` with that witness.
- A camera mirror M_k consistent with every view is always a witness (``not_determined``); anything else
  (one perspective view, occluded views without uniqueness) is ``undecided``: no proof, no witness.

Stereocentres: CIP R/S from the 3D coordinates and a bond graph via RDKit
(``Chem.AssignStereochemistryFrom3D`` then ``FindMolChiralCenters``), reported with the dictionary's own
labels when the input comes from the CCD. Units: Å, px; frames as in docs/conventions.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial import cKDTree

from viewcert.errors import InputError
from viewcert.observe.project import Observations, observe
from viewcert.oracle.triangulate import Reconstruction
from viewcert.structures import Structure
from viewcert.symmetry.pointgroup import PointGroup, point_group

MOLECULE_LEVELS = ("uniqueness", "point_group", "handedness")
HANDEDNESS_STATUSES = ("determined", "not_determined", "achiral", "undecided")


@dataclass(frozen=True)
class Handedness:
    """Handedness outcome of one molecule under one set of views (see the module docstring)."""

    status: str
    reason: str
    chiral: bool
    point_group: str
    tolerance: float  # Å, the chirality test's tolerance (δ_3d)
    witness: str = ""
    single_view_resolves: tuple[bool | None, ...] = ()

    @property
    def determined(self) -> bool:
        return self.status == "determined"

    def to_dict(self) -> dict:
        return {
            "status": self.status,
            "reason": self.reason,
            "chiral": self.chiral,
            "point_group": self.point_group,
            "tolerance_A": self.tolerance,
            "witness": self.witness,
            "single_view_resolves": list(self.single_view_resolves),
        }


def camera_mirror(structure: Structure, camera) -> Structure:
    """X reflected through the plane ⟂ the camera's view direction through X's centroid (camera z → −z)."""
    d = np.asarray(camera.view_direction, dtype=np.float64)
    d = d / np.linalg.norm(d)
    c = structure.positions.mean(axis=0)
    rel = structure.positions - c
    return structure.with_positions(c + rel - 2.0 * np.outer(rel @ d, d))


def _tol_px(view, delta: float, delta_unit: str) -> np.ndarray:
    if delta_unit == "px":
        return np.full(len(view.uv), delta)
    size = np.asarray(view.camera.pixel_size(view.depth), dtype=np.float64)
    return np.broadcast_to(delta / size, (len(view.uv),)).astype(np.float64)


def views_match(a, b, delta: float, delta_unit: str = "angstrom") -> bool:
    """Are two observations of one camera the same labelled 2D point sets, one-to-one, within δ?"""
    if len(a.uv) != len(b.uv):
        return False
    tol = _tol_px(a, delta, delta_unit)
    for z in np.unique(np.concatenate([a.labels, b.labels])):
        ia, ib = np.flatnonzero(a.labels == z), np.flatnonzero(b.labels == z)
        if len(ia) != len(ib):
            return False
        d = np.linalg.norm(a.uv[ia][:, None, :] - b.uv[ib][None, :, :], axis=2)
        rows, cols = linear_sum_assignment(d)
        if (d[rows, cols] > tol[ia][rows] + 1e-9).any():
            return False
    return True


def consistent_with(
    candidate: Structure, observations: Observations, observe_fn, delta: float, delta_unit: str
) -> list[bool]:
    """Per view: do the candidate's observations equal the observed ones within δ?"""
    cams = observations.cameras
    mine = observe_fn(candidate, cams)
    return [views_match(o, m, delta, delta_unit) for o, m in zip(observations.views, mine.views, strict=True)]


def _triple(x: np.ndarray) -> tuple[int, int, int] | None:
    """Three well-spread, non-collinear atoms of x (indices), or None when x is collinear."""
    c = x.mean(axis=0)
    a = int(np.argmax(np.linalg.norm(x - c, axis=1)))
    b = int(np.argmax(np.linalg.norm(x - x[a], axis=1)))
    u = (x[b] - x[a]) / max(np.linalg.norm(x[b] - x[a]), 1e-12)
    off = np.linalg.norm(np.cross(x - x[a], u), axis=1)
    k = int(np.argmax(off))
    return None if off[k] < 1e-6 else (a, b, k)


def _improper_from(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Improper orthogonal M with M(p1−p0) ∥ (q1−q0) and the (p0, p1, p2) plane onto (q0, q1, q2)'s."""

    def frame(t):
        e1 = (t[1] - t[0]) / np.linalg.norm(t[1] - t[0])
        n = np.cross(t[1] - t[0], t[2] - t[0])
        e2 = n / np.linalg.norm(n)
        return np.column_stack([e1, e2, np.cross(e2, e1)])

    fp, fq = frame(p), frame(q)
    fq[:, 1] *= -1.0
    return fq @ fp.T


def improper_images(
    structure: Structure, points: np.ndarray, labels: np.ndarray, tol: float
) -> list[np.ndarray]:
    """Every improper image g(X) (Å) whose atoms sit one-to-one on same-label ``points`` within ``tol``.

    Exhaustive over images of three well-spread reference atoms (distance-compatible triples of points);
    each candidate is refit by improper Procrustes with translation on its matched points."""
    x, z = structure.positions, structure.numbers
    ref = _triple(x)
    if ref is None or len(points) < len(x):
        return []
    a, b, c = ref
    pts, lab = np.asarray(points, dtype=np.float64), np.asarray(labels)
    trees = {q: (cKDTree(pts[lab == q]), np.flatnonzero(lab == q)) for q in np.unique(lab)}
    if any(q not in trees for q in np.unique(z)):
        return []
    dab, dac, dbc = (np.linalg.norm(x[i] - x[j]) for i, j in ((a, b), (a, c), (b, c)))
    found: list[np.ndarray] = []
    for ap in np.flatnonzero(lab == z[a]):
        for bp in np.flatnonzero(lab == z[b]):
            if bp == ap or abs(np.linalg.norm(pts[bp] - pts[ap]) - dab) > 2 * tol:
                continue
            for cp in np.flatnonzero(lab == z[c]):
                if (
                    cp in (ap, bp)
                    or abs(np.linalg.norm(pts[cp] - pts[ap]) - dac) > 2 * tol
                    or abs(np.linalg.norm(pts[cp] - pts[bp]) - dbc) > 2 * tol
                ):
                    continue
                m = _improper_from(x[[a, b, c]], pts[[ap, bp, cp]])
                y = (x - x[a]) @ m.T + pts[ap]
                img = _on_points(y, z, pts, trees, 3 * tol)
                if img is None:
                    continue
                y = _refit(x, pts[img])
                if _on_points(y, z, pts, trees, tol) is not None and not any(
                    np.abs(y - f).max() < tol for f in found
                ):
                    found.append(y)
    return found


def _on_points(y, z, pts, trees, tol) -> np.ndarray | None:
    out = np.empty(len(y), dtype=np.int64)
    for q in np.unique(z):
        sel = np.flatnonzero(z == q)
        d, j = trees[q][0].query(y[sel], distance_upper_bound=tol)
        if not np.isfinite(d).all():
            return None
        out[sel] = trees[q][1][j]
    return out if len(np.unique(out)) == len(out) else None


def _refit(x: np.ndarray, target: np.ndarray) -> np.ndarray:
    """x moved by the improper isometry that best fits ``target`` (least squares)."""
    cx, ct = x.mean(axis=0), target.mean(axis=0)
    u, _, vt = np.linalg.svd((target - ct).T @ (x - cx))
    d = np.ones(3)
    if np.linalg.det(u @ vt) > 0:
        d[2] = -1.0
    return (x - cx) @ (u @ np.diag(d) @ vt).T + ct


def handedness(
    structure: Structure,
    observations: Observations,
    *,
    delta: float,
    delta_unit: str = "angstrom",
    delta_3d: float | None = None,
    reconstruction: Reconstruction | None = None,
    unique: bool | None = None,
    observe_fn: Callable[[Structure, Sequence], Observations] | None = None,
) -> Handedness:
    """Decide whether ``observations`` of ``structure`` fix its handedness (module docstring).

    reconstruction: the oracle's result on ``observations`` (its accepted points hold every consistent
    image's atoms); unique: Φ_δ = ∅ and every atom recovered; delta_3d: the oracle's 3D tolerance in Å
    (default δ when δ is in Å); observe_fn(structure, cameras): how observations are made (default:
    ``observe`` with the observations' own model)."""
    if structure.is_periodic:
        raise InputError("handedness is defined here for molecules (no lattice)", field="structure")
    if delta_unit == "px" and delta_3d is None:
        raise InputError("delta_3d (Å) is required when delta is in px", field="delta_3d")
    tol = float(delta if delta_3d is None else delta_3d)
    observe_fn = observe_fn or (lambda s, cams: observe(s, cams, observations.model))
    pg: PointGroup = point_group(structure.positions, structure.numbers, tol)
    if not pg.is_chiral:
        return Handedness(
            "achiral",
            f"point group {pg.symbol} within {tol:g} Å has an improper operation",
            False,
            pg.symbol,
            tol,
        )
    cams = observations.cameras
    per_view: list[bool | None] = []
    witness = ""
    for k, cam in enumerate(cams):
        ok = consistent_with(camera_mirror(structure, cam), observations, observe_fn, delta, delta_unit)
        per_view.append(None if cam.kind != "orthographic" else not ok[k])
        if all(ok) and not witness:
            witness = f"mirror ⟂ view {cam.name or k!s}"
    res = dict(chiral=True, point_group=pg.symbol, tolerance=tol, single_view_resolves=tuple(per_view))
    if witness:
        return Handedness(
            "not_determined", f"the {witness} is consistent with every view within δ", witness=witness, **res
        )
    complete = all(len(v) == structure.n_atoms for v in observations.views)
    if unique and len(cams) >= 2 and complete:
        return Handedness(
            "determined",
            "Φ_δ = ∅ with every atom recovered and no improper operation within "
            f"{tol:g} Å: a consistent mirror image would be an improper symmetry",
            **res,
        )
    if reconstruction is not None and reconstruction.ok and len(cams) >= 2 and complete:
        for y in improper_images(structure, reconstruction.points, reconstruction.labels, 2 * tol):
            if all(consistent_with(structure.with_positions(y), observations, observe_fn, delta, delta_unit)):
                return Handedness(
                    "not_determined",
                    "an improper image built from the reconstruction's points is consistent with every view",
                    witness="improper image in Φ",
                    **res,
                )
        return Handedness(
            "determined",
            "no improper image on the oracle's accepted points (atoms and "
            "phantoms) is consistent with every view",
            **res,
        )
    why = (
        "no camera mirror is consistent, but no reconstruction to search"
        if len(cams) >= 2
        else ("one view and no consistent camera mirror (perspective or occlusion)")
    )
    return Handedness("undecided", why, **res)


@dataclass(frozen=True)
class Stereocentres:
    """CIP labels per atom index from RDKit (3D + bonds), and the source's own labels when it has them."""

    rdkit: tuple[tuple[int, str], ...]
    source: tuple[tuple[int, str], ...] = ()
    status: str = "ok"  # ok | no_bond_graph | rdkit_failed: ...

    @property
    def agree(self) -> bool | None:
        if not self.source or self.status != "ok":
            return None
        return dict(self.rdkit) == dict(self.source)

    def to_dict(self) -> dict:
        return {
            "status": self.status,
            "rdkit": [[i, s] for i, s in self.rdkit],
            "source": [[i, s] for i, s in self.source],
            "agree": self.agree,
        }


def stereocentres(
    structure: Structure,
    bonds: Sequence[tuple[int, int, int, bool]] | None,
    *,
    charges: Sequence[int] | None = None,
    source_labels: Sequence[str] | None = None,
) -> Stereocentres:
    """CIP R/S of every stereocentre (RDKit, from 3D coordinates and the bond graph); never raises.

    bonds: (i, j, order 1/2/3, aromatic); source_labels: per-atom R/S/N from the input (e.g. the CCD's
    ``pdbx_stereo_config``), kept for comparison."""
    src = tuple((i, s) for i, s in enumerate(source_labels or ()) if s in ("R", "S"))
    if not bonds:
        return Stereocentres((), src, "no_bond_graph")
    try:
        from rdkit import Chem, RDLogger
        from rdkit.Geometry import Point3D
    except ImportError:
        return Stereocentres((), src, "rdkit_failed: rdkit is not installed")
    RDLogger.DisableLog("rdApp.*")
    try:
        rw = Chem.RWMol()
        for k, z in enumerate(structure.numbers):
            atom = Chem.Atom(int(z))
            atom.SetFormalCharge(int(charges[k]) if charges is not None else 0)
            atom.SetNoImplicit(True)
            rw.AddAtom(atom)
        kinds = {
            1: Chem.BondType.SINGLE,
            2: Chem.BondType.DOUBLE,
            3: Chem.BondType.TRIPLE,
            4: Chem.BondType.QUADRUPLE,
        }
        for i, j, order, _aromatic in bonds:
            rw.AddBond(int(i), int(j), kinds.get(int(order), Chem.BondType.SINGLE))
        mol = rw.GetMol()
        conf = Chem.Conformer(mol.GetNumAtoms())
        for k, p in enumerate(structure.positions):
            conf.SetAtomPosition(k, Point3D(*map(float, p)))
        mol.AddConformer(conf, assignId=True)
        mol.UpdatePropertyCache(strict=False)
        Chem.SanitizeMol(
            mol, Chem.SanitizeFlags.SANITIZE_ALL ^ Chem.SanitizeFlags.SANITIZE_PROPERTIES, catchErrors=True
        )
        Chem.AssignStereochemistryFrom3D(mol)
        found = Chem.FindMolChiralCenters(mol, includeUnassigned=False, useLegacyImplementation=False)
    except Exception as exc:  # noqa: BLE001 - RDKit failures are a value
        return Stereocentres((), src, f"rdkit_failed: {type(exc).__name__}: {exc}".splitlines()[0][:200])
    return Stereocentres(tuple((int(i), str(s)) for i, s in found), src, "ok")
