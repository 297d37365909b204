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
- **Two views are not always enough.** For orthogonal view directions d1, d2 and a C2 axis of X along
  n = d1 × d2: (I − 2 d1 d1ᵀ)(2 n nᵀ − I) = I − 2 d2 d2ᵀ, so M1(X) = M1(C2 X) = M2(X) is the depth flip of
  both views at once. A chiral C2 molecule with its axis perpendicular to both views (ethylene glycol,
  gauche, in the CCD's frame under front + top) keeps its handedness hidden.
- A camera mirror M_k consistent with every view is always a witness (``not_determined``); anything else
  (one perspective view, occluded views without uniqueness) is ``undecided``: no proof, no witness.

Stereocentres: CIP R/S from the 3D coordinates and a bond graph via RDKit
(``Chem.AssignStereochemistryFrom3D``, which sets each centre's ``_CIPCode``; RDKit's fast, approximate CIP
ranking — ``FindMolChiralCenters``' new path and ``rdCIPLabeler`` took 3–60× longer for the same agreement
with the CCD on a 178-component sample), reported with the dictionary's own
labels when the input comes from the CCD. Units: Å, px; frames as in docs/conventions.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from viewcert.errors import InputError
from viewcert.formats import item_sections as sections
from viewcert.formats.summary_sections import LevelCount, MoleculeSummary
from viewcert.io.ccd import ccd_record
from viewcert.observe.project import Observations, observe
from viewcert.oracle.triangulate import Reconstruction
from viewcert.stats import clopper_pearson_lower
from viewcert.structures import Structure
from viewcert.symmetry.pointgroup import PointGroup, PointGroupCheck, point_group, pymatgen_point_group

MOLECULE_LEVELS = ("uniqueness", "point_group", "handedness")
HANDEDNESS_STATUSES = ("determined", "not_determined", "achiral", "undecided")


def _kdtree(points):
    """``scipy.spatial.cKDTree(points)``, imported at the first call."""
    from scipy.spatial import cKDTree  # lazy: start-up time (scipy.spatial costs 0.3-0.9 s to import)

    return cKDTree(points)


def _assignment(cost):
    """``scipy.optimize.linear_sum_assignment(cost)``, imported at the first call."""
    from scipy.optimize import linear_sum_assignment  # lazy: start-up time (scipy.optimize costs ~0.15 s)

    return linear_sum_assignment(cost)


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

    def record(self) -> sections.HandednessOutcome:
        """The item's ``molecule.handedness`` section (tolerance in Å)."""
        return sections.HandednessOutcome(status=self.status, reason=self.reason, chiral=self.chiral,
                                          point_group=self.point_group, tolerance_A=self.tolerance,
                                          witness=self.witness, single_view_resolves=list(self.single_view_resolves))

    def to_dict(self) -> dict:
        return self.record().to_dict()


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
        pa, pb, ta = a.uv[ia], b.uv[ib], tol[ia]
        dist, j = _kdtree(pb).query(pa)
        if len(np.unique(j)) == len(j) and (dist <= ta + 1e-9).all():
            continue  # the nearest neighbours already pair them one-to-one within δ
        d = np.linalg.norm(pa[:, None, :] - pb[None, :, :], axis=2)
        rows, cols = _assignment(d)
        if (d[rows, cols] > ta[rows] + 1e-9).any():
            return False
    return True


def consistent_with(
    candidate: Structure,
    observations: Observations,
    observe_fn,
    delta: float,
    delta_unit: str,
    first: int | None = None,
) -> list[bool | None]:
    """Per view: do the candidate's observations equal the observed ones within δ? Views are checked one
    at a time (``first`` first) and checking stops at the first mismatch (None = not checked)."""
    views = observations.views
    order = list(range(len(views)))
    if first is not None:
        order.remove(first)
        order.insert(0, first)
    out: list[bool | None] = [None] * len(views)
    for k in order:
        mine = observe_fn(candidate, (views[k].camera,)).views[0]
        out[k] = views_match(views[k], mine, delta, delta_unit)
        if not out[k]:
            break
    return out


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
    trees = {q: (_kdtree(pts[lab == q]), np.flatnonzero(lab == q)) for q in np.unique(lab)}
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


_PROOF = ("Φ_δ = ∅ with every atom recovered and no improper operation within {tol:g} Å: a consistent mirror "
          "image would be an improper symmetry")


def _mirror_witness(structure: Structure, observations: Observations, observe_fn, delta: float,
                    delta_unit: str) -> tuple[tuple[bool | None, ...], str]:
    """Per view, whether the camera mirror M_k is refuted by view k alone (None for a perspective view), and
    the first camera mirror consistent with every view ("" when none is)."""
    per_view: list[bool | None] = []
    witness = ""
    for k, cam in enumerate(observations.cameras):
        ok = consistent_with(camera_mirror(structure, cam), observations, observe_fn, delta, delta_unit, k)
        per_view.append(None if cam.kind != "orthographic" else not ok[k])
        if all(ok) and not witness:
            witness = f"mirror ⟂ view {cam.name or k!s}"
    return tuple(per_view), witness


def _improper_in_phantoms(structure: Structure, observations: Observations, reconstruction: Reconstruction,
                          observe_fn, delta: float, delta_unit: str, tol: float) -> bool:
    """Is an improper image built from the reconstruction's accepted points consistent with every view?"""
    for y in improper_images(structure, reconstruction.points, reconstruction.labels, 2 * tol):
        if all(consistent_with(structure.with_positions(y), observations, observe_fn, delta, delta_unit)):
            return True
    return False


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
    pg: PointGroup | None = None,
    ideal: bool = False,
) -> Handedness:
    """Decide whether ``observations`` of ``structure`` fix its handedness (module docstring).

    reconstruction: the oracle's result on ``observations`` (its accepted points hold every consistent
    image's atoms); unique: Φ_δ = ∅ and every atom recovered; delta_3d: the oracle's 3D tolerance in Å
    (default δ when δ is in Å); observe_fn(structure, cameras): how observations are made (default:
    ``observe`` with the observations' own model); pg: the molecule's point group at δ_3d if known; ideal:
    the observations are exact projections of every atom (no occlusion, no noise), which lets a proven case
    skip re-observing the camera mirrors."""
    if structure.is_periodic:
        raise InputError("handedness is defined here for molecules (no lattice)", field="structure")
    if delta_unit == "px" and delta_3d is None:
        raise InputError("delta_3d (Å) is required when delta is in px", field="delta_3d")
    tol = float(delta if delta_3d is None else delta_3d)
    observe_fn = observe_fn or (lambda s, cams: observe(s, cams, observations.model))
    if pg is None or pg.tolerance != tol:
        pg = point_group(structure.positions, structure.numbers, tol)
    if not pg.is_chiral:
        return Handedness("achiral", f"point group {pg.symbol} within {tol:g} Å has an improper operation",
                          False, pg.symbol, tol)
    cams = observations.cameras
    complete = len(cams) >= 2 and all(len(v) == structure.n_atoms for v in observations.views)
    if ideal and unique and complete:
        # the proof below settles it; with ideal projections each camera mirror M_k projects exactly onto
        # view k (single_view_resolves False), and no mirror can be a witness (it would contradict the proof)
        per = tuple(False if c.kind == "orthographic" else None for c in cams)
        return Handedness("determined", _PROOF.format(tol=tol), True, pg.symbol, tol, "", per)
    per_view, witness = _mirror_witness(structure, observations, observe_fn, delta, delta_unit)
    res = dict(chiral=True, point_group=pg.symbol, tolerance=tol, single_view_resolves=per_view)
    if witness:
        return Handedness(
            "not_determined", f"the {witness} is consistent with every view within δ", witness=witness, **res
        )
    if unique and complete:
        return Handedness("determined", _PROOF.format(tol=tol), **res)
    if reconstruction is not None and reconstruction.ok and complete:
        if _improper_in_phantoms(structure, observations, reconstruction, observe_fn, delta, delta_unit, tol):
            return Handedness("not_determined", "an improper image built from the reconstruction's points is "
                              "consistent with every view", witness="improper image in Φ", **res)
        return Handedness("determined", "no improper image on the oracle's accepted points (atoms and "
                          "phantoms) is consistent with every view", **res)
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
        """RDKit's R/S equal the source's (lower-case pseudo-asymmetric r/s, which the CCD does not flag, aside)."""
        if not self.source or self.status != "ok":
            return None
        return {i: c for i, c in self.rdkit if c in ("R", "S")} == dict(self.source)

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
        Chem.AssignStereochemistryFrom3D(mol)  # sets each stereocentre's _CIPCode (RDKit's fast CIP ranks)
        found = [(a.GetIdx(), a.GetProp("_CIPCode")) for a in mol.GetAtoms() if a.HasProp("_CIPCode")]
    except Exception as exc:  # noqa: BLE001 - RDKit failures are a value
        return Stereocentres((), src, f"rdkit_failed: {type(exc).__name__}: {exc}".splitlines()[0][:200])
    return Stereocentres(tuple((int(i), str(s)) for i, s in found), src, "ok")


# ------------------------------------------------------------------------------------ certification records
def _reconstructed_group(reconstruction, report, structure: Structure, pg_in: PointGroup, tau: float) -> str | None:
    """Point group of the reconstruction at τ; the input's when the reconstruction is the input atom for atom
    within 1e-9 Å (the same point set, so the same group); None when the oracle failed."""
    if reconstruction is None or not reconstruction.ok or not reconstruction.n_points:
        return None
    if report.exact and report.n_points == structure.n_atoms and report.max_position_error <= 1e-9:
        return pg_in.symbol
    return point_group(np.asarray(reconstruction.points), np.asarray(reconstruction.labels), tau).symbol


def molecule_outcome(
    structure: Structure,
    observations: Observations,
    reconstruction,
    report,
    *,
    delta: float,
    tau: float,
    levels: Sequence[str] = MOLECULE_LEVELS,
    observe_fn=None,
    cross_check: bool = False,
    ideal: bool = False,
    graph: BondGraph | None = None,
) -> sections.MoleculeOutcome:
    """The molecular score levels of one item (truth = the input molecule itself, never a dataset label), as the
    item's ``molecule`` section.

    uniqueness: Φ_δ = ∅ and every atom recovered; point_group: the reconstruction's Schoenflies group at τ
    equals the input's; handedness: the observations fix the molecule up to proper rotations (status
    ``determined``, or ``achiral``: the mirror image is then a rotation of the molecule itself).
    cross_check: pymatgen's PointGroupAnalyzer on the input at τ (disagreement recorded, not resolved);
    graph: the molecule's bond graph (:func:`bond_graph`), for RDKit's stereocentres when given."""
    bad = [lv for lv in levels if lv not in MOLECULE_LEVELS]
    if bad:
        raise InputError(f"molecule score levels must be among {MOLECULE_LEVELS}, got {bad}", field="score")
    unique = bool(reconstruction is not None and reconstruction.ok and report.unique)
    pg_in = point_group(structure.positions, structure.numbers, tau)
    pg_rec = _reconstructed_group(reconstruction, report, structure, pg_in, tau)
    xc = None
    if cross_check:
        try:
            theirs = pymatgen_point_group(structure.positions, structure.numbers, tau)
        except Exception as exc:  # noqa: BLE001 - a failing cross-check is a value
            theirs = f"error: {type(exc).__name__}"
        pgc = PointGroupCheck(pg_in.symbol, theirs, tau)
        xc = sections.PointGroupCheck(ours=pgc.ours, pymatgen=pgc.pymatgen, tolerance_A=pgc.tolerance,
                                      agree=pgc.agree)
    hand = handedness(structure, observations, delta=delta, reconstruction=reconstruction, unique=unique,
                      observe_fn=observe_fn, pg=pg_in if tau == delta else None, ideal=ideal)
    by_level = {"uniqueness": unique, "point_group": pg_rec == pg_in.symbol,
                "handedness": hand.status in ("determined", "achiral")}
    stereo = None
    if graph is not None:
        stereo = stereocentres(structure, graph.bonds, charges=graph.charges,
                               source_labels=graph.source_labels).to_dict()
    return sections.MoleculeOutcome(
        kind="molecule",
        truth="input",
        point_group=sections.PointGroupOutcome(input=pg_in.symbol, reconstructed=pg_rec, tolerance_A=tau,
                                               input_closed=pg_in.closed, cross_check=xc),
        handedness=hand.record(),
        stereocentres=stereo,
        correct_by_level={lv: bool(by_level[lv]) for lv in levels},
    )


def molecule_summary(outcomes, confidence: float = 0.95) -> MoleculeSummary | None:
    """R1 per molecular level (exact one-sided Clopper–Pearson lower bound), handedness statuses, input point
    groups and pymatgen disagreements, over the molecule items (``records.ItemOutcome`` values with a
    ``molecule`` section), as the summary's ``molecules`` section; None when there is none."""
    mols = [o for o in outcomes if o.molecule and not o.is_error]
    if not mols:
        return None
    n = len(mols)
    levels = list(mols[0].molecule.correct_by_level)
    by_level = {}
    for lv in levels:
        k = sum(1 for o in mols if o.molecule.correct_by_level.get(lv))
        b = clopper_pearson_lower(k, n, confidence)
        by_level[lv] = LevelCount(correct=k, R1=round(k / n, 6), bound=b.describe())
    status: dict[str, int] = {}
    groups: dict[str, int] = {}
    for o in mols:
        st = o.molecule.handedness.status
        status[st] = status.get(st, 0) + 1
        g = o.molecule.point_group.input
        groups[g] = groups.get(g, 0) + 1
    xc = [{"id": o.id, **o.molecule.point_group.cross_check.to_dict()} for o in mols
          if o.molecule.point_group.cross_check and o.molecule.point_group.cross_check.agree is False]
    return MoleculeSummary(
        n=n,
        truth="input (each molecule is its own truth; no dataset label is used)",
        by_level=by_level,
        handedness=dict(sorted(status.items())),
        input_point_groups=dict(sorted(groups.items(), key=lambda kv: (-kv[1], kv[0]))),
        point_group_cross_check_disagreements=xc,
    )


def molecule_summary_lines(ms: MoleculeSummary | None) -> list[str]:
    """Summary-text lines for the molecules of a run (``summary.molecules``, typed; empty when there are none)."""
    if not ms:
        return []
    lines = [f"molecules: {ms.n} items; truth = the input molecule itself"]
    for lv, v in ms.by_level.items():
        lines.append(f"    {lv}: {v.correct}/{ms.n}; {v.bound}")
    lines.append("    handedness: " + ", ".join(f"{k} {v}" for k, v in ms.handedness.items()))
    lines.append("    input point groups: " + ", ".join(f"{k} {v}" for k, v in ms.input_point_groups.items()))
    lines.append(f"    point-group disagreements with pymatgen: {len(ms.point_group_cross_check_disagreements)}")
    return lines


@dataclass(frozen=True)
class BondGraph:
    """A molecule's bonds (i, j, order, aromatic), formal charges per atom and the source's own per-atom
    R/S/N labels (any may be None when the source lacks it)."""

    bonds: tuple | list | None
    charges: tuple | list | None = None
    source_labels: tuple | list | None = None


def bond_graph(item) -> dict:
    """The bond graph, formal charges and the source's own R/S labels of an item when it has them (CCD items,
    ``kind == "ccd"``) as the keyword argument ``graph`` of :func:`molecule_outcome`; {} otherwise."""
    if getattr(item, "kind", "") != "ccd":
        return {}
    rec = ccd_record(str(item.payload))
    if rec.structure is None:
        return {}
    return {"graph": BondGraph(rec.bonds, rec.charges, rec.stereo)}
