"""Recover the camera of a picture from the structure and the atoms detected in it, with no correspondences given.

``recover_camera`` (the unit's entry point):

1. Refuse what cannot determine a camera, one reason each: fewer detections than ``min_atoms``; detections of
   elements the structure lacks beyond what ``min_explained`` allows; fewer than three atoms of the detected
   elements; collinear atoms (the picture does not fix the rotation about their line).
2. Elements no detection carries are left out of the fit when every detection is labelled (a renderer that draws
   no hydrogens, a detector that misses them); they are reported as ``unseen``.
3. Search, per fitting frame (``world``, and ``axes`` when each axis may carry its own scale) and per camera kind:
   hypotheses from outline triples (``hypotheses``) solved exactly (``minimal``: scaled orthographic; perspective
   at each candidate focal), scored against the whole picture, the best distinct ones refined (``fit``). When no
   refined camera passes the thresholds, the outline sets are widened and the search runs again.
4. The best camera (the fewest unexplained detections, then the smallest residual corrected for the parameters
   fitted, so a perspective or per-axis camera wins only where it draws the picture better) and every other camera
   that draws the same picture (``poses``: the structure's symmetry operations, and distinct search results) are
   the admissible poses. A family of cameras drawing the same picture (a singular fit) is refused.

Units: Å (world, Cartesian), px (the image's frame, u right, v down), degrees.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from scipy.spatial import cKDTree

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.elements import symbol
from viewcert.errors import CameraError, InputError
from viewcert.recover.evidence import chance_log10
from viewcert.recover.fit import FitModel, FitResult, Frame, refine
from viewcert.recover.hypotheses import (
    ScoreGrids,
    atom_outline,
    detection_outline,
    detection_triples,
    hypothesis_triples,
    robust_detection_triples,
    score_batch,
)
from viewcert.recover.minimal import p3p, weak_perspective_3pt
from viewcert.recover.model import (
    KINDS,
    NOT_RECOVERED,
    RECOVERED,
    DetectedAtoms,
    RecoveredPose,
    Recovery,
    RecoveryHints,
    RecoveryThresholds,
)
from viewcert.recover.poses import displacement_px, rotation_angle, symmetry_candidates

__all__ = ["MATPLOTLIB_BOX_ASPECT", "SAME_ROTATION_DEG", "SEARCH", "SINGULAR_FIT", "SearchSettings", "recover_camera"]

#: matplotlib's default 3D box aspect (x : y : z): its autoscaled axes draw the data's box in these proportions
MATPLOTLIB_BOX_ASPECT = (4.0, 4.0, 3.0)
#: two admissible cameras are one when they draw every atom within match_px and their frames differ by less (°)
SAME_ROTATION_DEG = 1.0
#: a family of cameras draws the same picture when the fit's unit-column Jacobian has a singular value below this
SINGULAR_FIT = 1e-6


@dataclass(frozen=True)
class SearchSettings:
    """How hard the search works: detection triples per stage, hypotheses refined per kind, the horizontal fields
    of view (degrees) tried for a perspective camera with no hint, τ (Å) of the symmetry operations, hypotheses
    kept after the outline screen, atom triples solved by P3P (the best by their weak-perspective score)."""

    triples: tuple[int, ...] = (8, 16)
    refined: int = 6
    fovs_deg: tuple[float, ...] = (10.0, 25.0, 45.0, 70.0)
    symmetry_tolerance: float = 0.15
    screen_keep: int = 400
    p3p_keep: int = 10000


SEARCH = SearchSettings()


def _refuse(reason: str, hints: RecoveryHints, thresholds: RecoveryThresholds, unseen=(), best=None) -> Recovery:
    return Recovery(NOT_RECOVERED, reason, (), best, 0.0, 0.0, tuple(unseen), hints, thresholds)


def _frames(xyz: np.ndarray, hints: RecoveryHints) -> list[Frame]:
    centre = xyz.mean(0)
    world = Frame("world", np.eye(3), -centre)
    if not hints.axes_scaled:
        return [world]
    lo, hi = xyz.min(0), xyz.max(0)
    span = hi - lo
    big = float(span.max())
    span = np.where(span > 1e-6 * big, span, big)
    a = np.diag(np.asarray(MATPLOTLIB_BOX_ASPECT) / span)
    # centred in the box; the refit scales y and z on their own, so only the proportions here matter at the start
    axes = Frame("axes", a, -(a @ (0.5 * (lo + hi))))
    return [axes, world] if hints.per_axis is None else [axes]


def _focals(hints: RecoveryHints, settings: SearchSettings, width: int) -> list[float]:
    fovs = [hints.fov_deg] if hints.fov_deg is not None else list(settings.fovs_deg)
    return [0.5 * width / math.tan(math.radians(0.5 * f)) for f in fovs]


def _view_ok(matrices: np.ndarray, perspective: bool, frame: Frame, hints: RecoveryHints) -> np.ndarray:
    """Bool per hypothesis: its view direction lies within the hint's zone-axis tolerance (all True: no hint)."""
    if hints.zone_axis is None:
        return np.ones(len(matrices), dtype=bool)
    lin = matrices[:, :, :3] @ frame.a  # world
    if perspective:
        view = lin[:, 2]
    else:
        view = -np.cross(lin[:, 0], -lin[:, 1])
    view /= np.maximum(np.linalg.norm(view, axis=1, keepdims=True), 1e-300)
    cosang = view @ np.asarray(hints.zone_axis)
    return cosang >= math.cos(math.radians(hints.zone_tolerance_deg))


def _distinct_top(matrices: np.ndarray, scores: np.ndarray, xyz: np.ndarray, count: int, gate: float) -> list[int]:
    order = np.argsort(-scores, kind="stable")
    chosen: list[int] = []
    pics: list[np.ndarray] = []
    for k in order:
        if not np.isfinite(scores[k]) or len(chosen) >= count:
            break
        h = xyz @ matrices[k, :, :3].T + matrices[k, :, 3]
        uv = h[:, :2] / h[:, 2:3]
        if any(np.nanmax(np.linalg.norm(uv - q, axis=1)) < gate for q in pics):
            continue
        chosen.append(int(k))
        pics.append(uv)
    return chosen


@dataclass(frozen=True, eq=False)
class _Problem:
    xyz: np.ndarray  # the frame's coordinates of the kept atoms
    world: np.ndarray  # their world coordinates
    labels: np.ndarray
    det: DetectedAtoms
    width: int
    height: int
    grids: ScoreGrids
    outline_grids: ScoreGrids
    tol: float


def _triples(pb: _Problem, stage: int, settings: SearchSettings):
    """Every (world triple, image triple) of one stage, their weak-perspective solutions (two per triple) and
    whether each is plausible (a valid solution at a plausible scale); the outline atoms."""
    det_uv, det_lab = pb.det.uv, pb.det.labels
    scale_guess = _extent(det_uv) / max(_extent_3d(pb.xyz), 1e-9)
    atoms = atom_outline(pb.xyz, 0.0 if stage == 0 else pb.tol / max(scale_guess, 1e-9))
    count = settings.triples[min(stage, len(settings.triples) - 1)]
    if stage == 0:
        triples = detection_triples(det_uv, detection_outline(det_uv), count)
    else:
        triples = robust_detection_triples(det_uv, count)
    s_lo, s_hi = _scale_range(pb.xyz, det_uv)
    worlds, images = [], []
    for tri in triples:
        cand = hypothesis_triples(tri, det_lab, pb.labels, atoms)
        if len(cand):
            worlds.append(pb.xyz[cand])
            images.append(np.broadcast_to(det_uv[list(tri)], (len(cand), 3, 2)))
    if not worlds:
        return None
    world, image = np.concatenate(worlds), np.concatenate(images)
    weak, ok = weak_perspective_3pt(world, image)
    scale = np.linalg.norm(weak[:, 0, :3], axis=1)
    return world, image, weak, ok & (scale >= s_lo) & (scale <= s_hi), atoms


def _hypotheses(pb: _Problem, frame: Frame, hyp_kind: str, focals: list[float], stage: int, hints: RecoveryHints,
                settings: SearchSettings) -> list[tuple[np.ndarray, str, float | None]]:
    """The best distinct hypotheses of one stage and kind: (matrix in the frame, its kind, its focal)."""
    found = _triples(pb, stage, settings)
    if found is None:
        return []
    world, image, weak, plausible, atoms = found
    mats, focs = [], []
    if hyp_kind == "orthographic":
        m = weak[plausible]
        mats.append(m[_view_ok(m, False, frame, hints)])
        focs.append(np.full(len(mats[-1]), np.nan))
    else:
        # P3P only for the triples whose weak-perspective cameras (both Necker solutions) score best on the outline
        # atoms: a perspective picture is near its weak-perspective approximation, and P3P costs a quartic each
        pre = np.full(len(weak), -np.inf)
        sel = np.flatnonzero(plausible)
        if len(sel):
            pre[sel] = score_batch(weak[sel], pb.xyz[atoms], pb.labels[atoms], pb.outline_grids, False)
        best = pre.reshape(-1, 2).max(1)
        keep = np.argsort(-best, kind="stable")[: settings.p3p_keep]
        keep = keep[np.isfinite(best[keep])]
        for f in focals:
            m, ok = p3p(world[keep], image[keep], f, 0.5 * pb.width, 0.5 * pb.height)
            m = m[ok]
            mats.append(m[_view_ok(m, True, frame, hints)])
            focs.append(np.full(len(mats[-1]), f))
    m_all, f_all = np.concatenate(mats), np.concatenate(focs)
    if len(m_all) == 0:
        return []
    persp = hyp_kind == "perspective"
    # screen on the outline atoms, then score the survivors on every atom
    pre = score_batch(m_all, pb.xyz[atoms], pb.labels[atoms], pb.outline_grids, persp)
    keep = np.argsort(-pre, kind="stable")[: settings.screen_keep]
    keep = keep[np.isfinite(pre[keep])]
    if len(keep) == 0:
        return []
    sc = score_batch(m_all[keep], pb.xyz, pb.labels, pb.grids, persp)
    top = _distinct_top(m_all[keep], sc, pb.xyz, settings.refined, pb.tol)
    return [(m_all[keep][k], hyp_kind, None if np.isnan(f_all[keep][k]) else float(f_all[keep][k])) for k in top]


def _scale_range(xyz: np.ndarray, det_uv: np.ndarray) -> tuple[float, float]:
    """Plausible scales (px per frame unit) of a camera drawing these atoms as these detections: the detections
    span at most s × the atoms' extent (0.6: room for perspective), and, where the atoms are thick in every
    direction, at least s × their thinnest width / 3 (room for a picture cut by the image's border)."""
    ext2 = _extent(det_uv)
    ext3 = _extent_3d(xyz)
    c = xyz - xyz.mean(0)
    _, _, vt = np.linalg.svd(c, full_matrices=False)
    thin = float(np.ptp(c @ vt[-1]))
    lo = 0.6 * ext2 / max(ext3, 1e-12)
    hi = 3.0 * ext2 / thin if thin > 0.1 * ext3 else math.inf
    return lo, hi


def _extent(uv: np.ndarray) -> float:
    return float(np.linalg.norm(uv.max(0) - uv.min(0))) if len(uv) else 0.0


def _extent_3d(xyz: np.ndarray) -> float:
    return float(np.linalg.norm(xyz.max(0) - xyz.min(0))) if len(xyz) else 0.0


def _sigma_hat(fit: FitResult) -> float:
    """Residual scale corrected for the parameters fitted: sqrt(RSS / (2m − k))."""
    r = fit.evidence.residual
    ok = np.isfinite(r)
    dof = 2 * int(ok.sum()) - fit.model.n_params
    if dof <= 0:
        return math.inf
    return math.sqrt(float((r[ok] ** 2).sum()) / dof)


def _pose(fit: FitResult, frame: Frame, width: int, height: int, tool: str, world_xyz: np.ndarray,
          labels: np.ndarray, det_labels: np.ndarray, match_px: float) -> RecoveredPose | None:
    ev = fit.evidence
    ok = ev.matched_atom >= 0
    res = ev.residual[ok]
    try:
        proj = PixelProjection(frame.to_world(fit.matrix), width, height, fit.model.kind, tool=tool)
    except CameraError:
        return None
    n = len(ev.matched_atom)
    chance = chance_log10(ev.uv, labels, det_labels, int(ok.sum()), match_px)
    behind = ev.n_behind
    if proj.kind == "perspective":
        behind = max(behind, int((proj.project(world_xyz)[1] <= 0).sum()))
    return RecoveredPose(
        projection=proj, model=fit.model.name,
        rms_px=float(math.sqrt(np.mean(res ** 2))) if len(res) else math.inf,
        max_px=float(res.max()) if len(res) else math.inf,
        explained=float(ok.sum() / n) if n else 0.0, n_matched=int(ok.sum()), n_detected=n,
        n_missing=ev.n_missing, n_plain=ev.n_plain, n_behind=behind, chance_log10=chance, matched_atom=ev.matched_atom.copy(),
        residual_px=ev.residual.copy())


@dataclass(frozen=True, eq=False)
class _Candidate:
    fit: FitResult
    frame: Frame
    pose: RecoveredPose

    def rank(self, thresholds: RecoveryThresholds) -> tuple:
        p = self.pose
        return (len(p.failures(thresholds)) > 0, round(1.0 - p.explained, 6), round(p.missing, 6),
                _sigma_hat(self.fit))


#: a camera with more parameters is preferred only when its residual scale is below this fraction of the simpler
#: one's (plus SIMPLER_SLACK_PX): a per-axis or perspective fit always lowers the residual a little
SIMPLER_FACTOR = 1.25
SIMPLER_SLACK_PX = 0.05


def _choose(candidates: list[_Candidate], thresholds: RecoveryThresholds) -> _Candidate:
    """The best camera: among those passing every threshold with a determined rotation, the simplest (fewest
    parameters) whose residual scale is within SIMPLER_FACTOR of the smallest; else the closest attempt."""
    passing = [c for c in candidates if not c.pose.failures(thresholds) and c.fit.conditioning >= SINGULAR_FIT]
    if not passing:
        return min(candidates, key=lambda cand: cand.rank(thresholds))
    top = min(c.rank(thresholds)[1:3] for c in passing)
    passing = [c for c in passing if c.rank(thresholds)[1:3] == top]
    floor = min(_sigma_hat(c.fit) for c in passing)
    eligible = [c for c in passing if _sigma_hat(c.fit) <= SIMPLER_FACTOR * floor + SIMPLER_SLACK_PX]
    return min(eligible, key=lambda c: (c.fit.model.n_params, _sigma_hat(c.fit)))


def _refine_all(pb: _Problem, frame: Frame, hyps, kinds: list[str], hints: RecoveryHints,
                thresholds: RecoveryThresholds, tool: str) -> list[_Candidate]:
    out = []
    axes = frame.name == "axes"
    for matrix, hyp_kind, focal in hyps:
        for kind in kinds:
            if kind == "orthographic" and hyp_kind == "perspective":
                continue
            # in the axes frame (matplotlib's autoscale): the limits as the data's, then each axis free, started
            # from the camera the limits-as-the-data's fit found (its matches settled: a few rounds, not a search)
            fit = refine(matrix, hyp_kind, FitModel(kind, per_axis=False, free_principal=axes and kind == "perspective"),
                         frame, pb.world, pb.labels, pb.det, pb.width, pb.height, gate=pb.tol,
                         match_px=thresholds.match_px, focal=focal)
            fits = [fit]
            if axes:
                start, start_kind, gate = ((fit.matrix, kind, thresholds.match_px) if fit is not None
                                           else (matrix, hyp_kind, pb.tol))
                fits.append(refine(start, start_kind, FitModel(kind, per_axis=True, free_principal=kind == "perspective"),
                                   frame, pb.world, pb.labels, pb.det, pb.width, pb.height, gate=gate,
                                   match_px=thresholds.match_px, focal=focal))
            for fit in fits:
                pose = None if fit is None else _pose(fit, frame, pb.width, pb.height, tool, pb.world, pb.labels,
                                                      pb.det.labels, thresholds.match_px)
                if pose is not None:
                    out.append(_Candidate(cast(Any, fit), frame, pose))
    return out


def _check_inputs(xyz, numbers, width, height) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(xyz, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 3:
        raise InputError(f"atom positions must have shape (n, 3), got {x.shape}", field="xyz")
    if not np.isfinite(x).all():
        raise InputError("atom positions must be finite", field="xyz")
    z = np.asarray(numbers, dtype=np.int64).reshape(-1)
    if len(z) != len(x) or (z < 1).any() or (z > 118).any():
        raise InputError("atomic numbers must be 1..118, one per atom", field="numbers")
    if int(width) != width or int(height) != height or width <= 0 or height <= 0:
        raise InputError(f"image size must be positive integers, got {width}×{height}", field="width")
    return x, z


def recover_camera(xyz, numbers, detections: DetectedAtoms, width: int, height: int, *,
                   hints: RecoveryHints | None = None, thresholds: RecoveryThresholds | None = None,
                   settings: SearchSettings = SEARCH) -> Recovery:
    """The camera(s) that draw the detected atoms from the structure's atoms, or the reason there is none.

    Parameters
    ----------
    xyz : array_like, shape (n, 3)
        The drawn atoms' positions (world frame, Cartesian Å).
    numbers : array_like of int, shape (n,)
        Their atomic numbers.
    detections : DetectedAtoms
        The atoms found in the image: centres (px, the image's frame: u right, v down), atomic numbers
        (0 = unknown) and, when measured, drawn radii (px).
    width, height : int
        The image's size (px).
    hints : RecoveryHints, optional
        What is known of the camera: kind, approximate field of view (degrees), zone axis (world frame), tool.
    thresholds : RecoveryThresholds, optional
        When a camera counts as recovered (px and fractions).
    settings : SearchSettings, optional
        How hard the search works.

    Returns
    -------
    Recovery
        ``recovered`` with every admissible pose (a ``PixelProjection`` each, world Å → the image's px) and its
        evidence, best first; or ``not recovered`` with its reason.
    """
    hints = hints or RecoveryHints()
    thresholds = thresholds or RecoveryThresholds()
    x, z = _check_inputs(xyz, numbers, width, height)
    width, height = int(width), int(height)
    kept = _kept_atoms(x, z, detections, hints, thresholds)
    if isinstance(kept, Recovery):
        return kept
    xk, zk, unseen = kept
    kinds = [hints.kind] if hints.kind else list(KINDS)
    tool = hints.tool if hints.tool != "unknown" else "recovered"
    candidates, best = _search(xk, zk, detections, width, height, kinds, hints, thresholds, settings, tool)
    m = len(detections)
    if (best is None or best.pose.failures(thresholds)) and (detections.labels != 0).any():
        blind = _without_elements(x, z, detections, width, height, kinds, hints, thresholds, settings, tool)
        if blind is not None:
            return blind
    if best is None:
        fewest = min(max(4, (FitModel(k).n_params + 3) // 2) for k in kinds)
        if m < fewest:
            return _refuse(f"only {m} atoms detected: a {' or '.join(kinds)} camera needs at least {fewest} to be "
                           "fitted and checked", hints, thresholds, unseen)
        return _refuse("no camera hypothesis explains the detected atoms", hints, thresholds, unseen)
    failures = best.pose.failures(thresholds)
    if failures:
        return _refuse("; ".join(failures), hints, thresholds, unseen, best.pose)
    if best.fit.conditioning < SINGULAR_FIT:
        return _refuse("a family of cameras draws this picture: the drawn atoms do not fix the pose", hints,
                       thresholds, unseen, best.pose)
    poses = _admissible(best, candidates, xk, zk, detections, width, height, thresholds, settings, tool)
    spread_deg, spread_px = _spread(poses, xk, width, height)
    return Recovery(RECOVERED, "", tuple(poses), best.pose, spread_deg, spread_px, unseen, hints, thresholds)


def _without_elements(x, z, det: DetectedAtoms, width: int, height: int, kinds: list[str], hints: RecoveryHints,
                      thresholds: RecoveryThresholds, settings: SearchSettings, tool: str) -> Recovery | None:
    """The camera found with the detections' elements set aside (a detector that mistakes grey carbons for white
    hydrogens under a renderer's lighting), or None. It counts only when it passes every threshold and its
    explained detections are beyond chance (``chance_log10``), a test that then always applies; the recovery
    says how many explained detections carry another element than their atom's."""
    blind = DetectedAtoms(det.uv, np.zeros(len(det), dtype=np.int64), det.radii)
    candidates, best = _search(x, z, blind, width, height, kinds, hints, thresholds, settings, tool)
    if (best is None or best.pose.failures(thresholds) or best.pose.chance_log10 > thresholds.chance_log10
            or best.fit.conditioning < SINGULAR_FIT):
        return None
    poses = _admissible(best, candidates, x, z, blind, width, height, thresholds, settings, tool)
    spread_deg, spread_px = _spread(poses, x, width, height)
    ok = best.pose.matched_atom >= 0
    disagree = int(((det.labels[ok] != 0) & (det.labels[ok] != z[best.pose.matched_atom[ok]])).sum())
    return Recovery(RECOVERED, "", tuple(poses), best.pose, spread_deg, spread_px, (), hints, thresholds,
                    labels_disagree=disagree)


def _kept_atoms(x: np.ndarray, z: np.ndarray, det: DetectedAtoms, hints: RecoveryHints,
                thresholds: RecoveryThresholds):
    """(atoms kept, their numbers, unseen element symbols), or the Recovery refusing the picture before any
    search (module docstring, step 1)."""
    m = len(det)
    if m == 0:
        return _refuse("no atoms detected in the image", hints, thresholds)
    if m < thresholds.min_atoms:
        return _refuse(f"only {m} atom{'s' if m != 1 else ''} detected; at least {thresholds.min_atoms} are "
                       "needed to fix and check a camera", hints, thresholds)
    present = set(np.unique(z).tolist())
    foreign = [int(q) for q in det.labels if q != 0 and q not in present]
    if len(foreign) > (1.0 - thresholds.min_explained) * m:
        names = ", ".join(sorted({symbol(q) for q in foreign}))
        return _refuse(f"{len(foreign)} of {m} detected atoms are of elements the structure does not have ({names})",
                       hints, thresholds)
    keep = np.ones(len(z), dtype=bool) if (det.labels == 0).any() else np.isin(z, np.unique(det.labels))
    unseen = tuple(sorted({symbol(q) for q in z[~keep]}))
    if keep.sum() < 3:
        return _refuse(f"the structure has {int(keep.sum())} atoms of the detected elements; a camera needs 3",
                       hints, thresholds, unseen)
    sv = np.linalg.svd(x[keep] - x[keep].mean(0), compute_uv=False)
    if sv[1] <= 1e-6 * max(sv[0], 1e-300):
        return _refuse("the drawn atoms are collinear: the picture does not fix the rotation about their line",
                       hints, thresholds, unseen)
    return x[keep], z[keep], unseen


def _search(xk: np.ndarray, zk: np.ndarray, det: DetectedAtoms, width: int, height: int, kinds: list[str],
            hints: RecoveryHints, thresholds: RecoveryThresholds, settings: SearchSettings, tool: str):
    """(every refined candidate, the best one or None): scaled orthographic hypotheses first (they start
    perspective fits too); exact perspective ones (P3P at each candidate focal) only when those find no camera;
    then the same with the outline sets widened (module docstring, step 3)."""
    nn = _nearest_neighbour_px(det.uv)
    radius = float(np.median(det.radii)) if det.radii is not None and len(det.radii) else 0.5 * nn
    tol = max(2.0 * thresholds.match_px, 0.3 * nn)
    grids = ScoreGrids.build(det.uv, det.labels, zk, width, height, tol, tol + radius)
    candidates: list[_Candidate] = []
    best = None
    plan = [(stage, hk) for stage in range(len(settings.triples))
            for hk in (["orthographic"] if kinds == ["orthographic"] else ["orthographic", "perspective"])]
    for stage, hyp_kind in plan:
        for frame in _frames(xk, hints):
            pb = _Problem(frame.apply(xk), xk, zk, det, width, height, grids, grids, tol)
            hyps = _hypotheses(pb, frame, hyp_kind, _focals(hints, settings, width), stage, hints, settings)
            candidates += _refine_all(pb, frame, hyps, kinds, hints, thresholds, tool)
        if candidates:
            best = _choose(candidates, thresholds)
            if not best.pose.failures(thresholds):
                break
    return candidates, best


def _nearest_neighbour_px(uv: np.ndarray) -> float:
    if len(uv) < 2:
        return 10.0
    d, _ = cKDTree(uv).query(uv, k=2)
    return float(np.median(d[:, 1]))


def _same_picture(p: RecoveredPose, best: RecoveredPose, thresholds: RecoveryThresholds) -> bool:
    return (not p.failures(thresholds) and p.rms_px <= best.rms_px + thresholds.same_picture_px
            and p.explained >= best.explained - thresholds.same_picture_fraction)


def _admissible(best: _Candidate, candidates: list[_Candidate], xyz: np.ndarray, labels: np.ndarray,
                det: DetectedAtoms, width: int, height: int, thresholds: RecoveryThresholds,
                settings: SearchSettings, tool: str) -> list[RecoveredPose]:
    """The best pose and every distinct pose drawing the same picture (symmetry images and search results)."""
    poses = [best.pose]
    pool = []
    frame = best.frame
    images = symmetry_candidates(best.pose.projection.matrix, best.pose.projection.kind, xyz, labels,
                                 settings.symmetry_tolerance)
    for m in images:
        fit = refine(frame.from_world(m), best.pose.projection.kind, best.fit.model, frame, xyz, labels, det, width,
                     height, gate=thresholds.match_px, match_px=thresholds.match_px)
        if fit is not None:
            pose = _pose(fit, frame, width, height, tool, xyz, labels, det.labels, thresholds.match_px)
            if pose is not None:
                pool.append(pose)
    # a camera the search found is a symmetry image too when it draws every atom where some P∘g does
    pool += [dataclasses.replace(c.pose, from_symmetry=any(
        displacement_px(c.pose.projection.matrix, m, xyz) < thresholds.match_px for m in images))
        for c in candidates if c is not best]
    for p in pool:
        if not _same_picture(p, best.pose, thresholds):
            continue
        # the same camera: every atom drawn at the same place and the same frame (a planar molecule's mirror in
        # its own plane moves no atom, yet the camera looks from the other side)
        if any(displacement_px(p.projection.matrix, q.projection.matrix, xyz) < thresholds.match_px
               and rotation_angle(p.projection.matrix, q.projection.matrix, p.projection.kind, q.projection.kind,
                                  width, height) < SAME_ROTATION_DEG for q in poses):
            continue
        poses.append(p)
    return poses


def _spread(poses: list[RecoveredPose], xyz: np.ndarray, width: int, height: int) -> tuple[float, float]:
    deg = px = 0.0
    for i in range(len(poses)):
        for j in range(i + 1, len(poses)):
            a, b = poses[i].projection, poses[j].projection
            deg = max(deg, rotation_angle(a.matrix, b.matrix, a.kind, b.kind, width, height))
            px = max(px, displacement_px(a.matrix, b.matrix, xyz))
    return deg, px
