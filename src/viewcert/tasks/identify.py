"""The identifiability oracle for transformation tasks: which answers the after view determines.

For an item, every answer of its grid (handedness: every grid rotation of the molecule and every grid
rotation of its mirror image in the task's stated reference pose — why that and not "any orientation of
the mirror": ``tasks.model``, "Handedness") is rendered into the after camera (``tasks.model.project_pose``; observation model ``setup.observe``:
``ideal`` = exact atom centres, atoms outside the image or behind the near clip unobserved; ``visible`` =
also unobserved with fewer than ``min_pixels`` pixels in the rendered atom-ID buffer of that view). An answer is **consistent** when
its after view matches the true after view as labelled 2D point sets without correspondence within δ
(Å in the image plane, converted to px with the after camera's scale; perspective: at the depth of the
before pose's bounding-box centre) and, with depth cueing, per-atom intensities within ε
(``tasks._match``). Item ceilings: exact = 1/|consistent set| (the best expected score of any guess);
partial credit = max over grid guesses of the mean MiSI credit (``tasks.credit``) over the set.

Every other consistent answer is explained (``explain``): ``same motion`` (another command sequence moves
every atom to the same place, e.g. ``roll x 15, roll x 30`` and ``roll x 30, roll x 15``), ``view-axis motion`` (the poses differ by a
translation along the view axis), ``symmetry`` (the two posed structures coincide as labelled 3D sets:
the difference is a point-group operation of the structure), ``depth-sign aliasing`` (they coincide after
mirroring one through the image plane: the view cannot tell front from back), ``clipped`` (an atom is
unobserved in one of the views) or ``other``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewcert.cameras.camera import OrthographicCamera
from viewcert.errors import InputError
from viewcert.tasks._match import consistent_with
from viewcert.tasks.credit import default_normalisers, transformation_credit
from viewcert.tasks.model import Pose, TaskItem, project_pose

DEFAULT_DELTA = 0.01  # Å, the oracle's default δ
DEFAULT_EPS = 1.0 / 255.0  # intensity tolerance: one 8-bit grey level
DEFAULT_EXPLAIN_TOL = 0.05  # Å, 3D tolerance of the explanations


def _kdtree(points):
    """``scipy.spatial.cKDTree(points)``, imported at the first call."""
    from scipy.spatial import cKDTree  # lazy: start-up time (scipy.spatial costs 0.3-0.9 s to import)

    return cKDTree(points)


@dataclass(frozen=True)
class Candidate:
    """One hypothesis: grid answer index and whether the models are mirrored (handedness)."""

    answer: int
    mirror: bool = False


@dataclass(frozen=True)
class ItemResult:
    """Consistent hypotheses of one item and its ceilings; ``explanations`` maps each consistent
    hypothesis other than the truth to its reason; ``handedness_ceiling`` only for handedness items."""

    item: dict
    consistent: tuple[Candidate, ...]
    exact_ceiling: float
    partial_ceiling: float
    best_guess: str
    explanations: tuple[tuple[str, str], ...]
    handedness_ceiling: float | None = None
    one_view_witness: bool | None = None

    @property
    def n_consistent(self) -> int:
        return len(self.consistent)

    def to_dict(self, grid_answers) -> dict:
        d = dict(self.item)
        d.update({
            "consistent": [grid_answers[c.answer].format() + (" [mirror]" if c.mirror else "") for c in self.consistent],
            "n_consistent": self.n_consistent, "exact_ceiling": self.exact_ceiling,
            "partial_ceiling": self.partial_ceiling, "best_guess": self.best_guess,
            "explanations": [list(e) for e in self.explanations],
        })
        if self.handedness_ceiling is not None:
            d["handedness_ceiling"] = self.handedness_ceiling
            d["one_view_witness_consistent"] = self.one_view_witness
        return d


def delta_px(item: TaskItem, delta: float) -> float:
    """δ Å in the image plane as px in the after camera (perspective: at the before centre's depth)."""
    cam = item.after_camera
    if isinstance(cam, OrthographicCamera):
        return delta * cam.scale
    depth = -float(cam.to_camera(item.centre)[0, 2])
    return delta * cam.focal / depth


def candidates_of(item: TaskItem) -> tuple[Candidate, ...]:
    """Grid answers in order; for handedness, every answer unmirrored then every answer mirrored."""
    base = tuple(Candidate(i, False) for i in range(len(item.grid)))
    if item.task == "handedness":
        return base + tuple(Candidate(i, True) for i in range(len(item.grid)))
    return base


def candidate_views(item: TaskItem, cands) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Pose]]:
    """(uv (K, n, 2), intensity (K, n), keep (K, n), poses) of the candidates through the after camera."""
    poses = [item.pose(c.answer, c.mirror) for c in cands]
    views = [project_pose(item, p) for p in poses]
    uv = np.stack([v[0] for v in views])
    inten = np.stack([v[1] for v in views])
    keep = np.stack([v[2] for v in views])
    return uv, inten, keep, poses


def _labels(item: TaskItem) -> tuple[np.ndarray, int]:
    uniq, inv = np.unique(item.numbers, return_inverse=True)
    return inv.astype(np.int64), len(uniq)


def _match3d(a: np.ndarray, b: np.ndarray, labels: np.ndarray, tol: float) -> bool:
    """Labelled 3D point sets (same atoms, unknown correspondence) coincide within tol (symmetric)."""
    for lab in np.unique(labels):
        sel = labels == lab
        ta, tb = _kdtree(a[sel]), _kdtree(b[sel])
        if ta.query(b[sel])[0].max() > tol or tb.query(a[sel])[0].max() > tol:
            return False
    return True


def explain(item: TaskItem, true_pose: Pose, other_pose: Pose, keep_true, keep_other, *,
            tol: float = DEFAULT_EXPLAIN_TOL) -> str:
    """Why two hypotheses give the same after view (module docstring)."""
    a = item.positions @ true_pose.matrix.T + true_pose.shift
    b = item.positions @ other_pose.matrix.T + other_pose.shift
    r = item.after_camera.rotation
    ca, cb = a @ r.T, b @ r.T
    diff = cb - ca
    if np.abs(diff).max() <= tol:
        return "same motion"
    if np.abs(diff[:, :2]).max() <= tol and np.ptp(diff[:, 2]) <= tol:
        return "view-axis motion"
    if not (keep_true.all() and keep_other.all()):
        return "clipped"
    if _match3d(a, b, item.numbers, tol):
        return "symmetry"
    flipped = cb.copy()  # mirror through the image plane, then bring the mean depth back to the true pose's
    flipped[:, 2] = ca[:, 2].mean() + cb[:, 2].mean() - cb[:, 2]
    if _match3d(ca, flipped, item.numbers, tol):
        return "depth-sign aliasing"
    return "other"


def identify(item: TaskItem, *, delta: float = DEFAULT_DELTA, eps: float = DEFAULT_EPS,
             explain_tol: float = DEFAULT_EXPLAIN_TOL, normalisers=None, views=None) -> ItemResult:
    """Consistent set, ceilings and explanations of one item (module docstring). ``views``: the item's
    ``candidate_views`` when already computed for an item of the same structure and setup (they do not
    depend on the truth).

    Parameters
    ----------
    item : TaskItem
        The question: positions (Å), the cameras, the answer grid and the true answer.
    delta : float
        Tolerance δ of the 2D match (Å in the image plane, converted to px with the after camera's scale).
    eps : float
        Intensity tolerance of the depth cue (one 8-bit grey level: 1/255).
    explain_tol : float
        3D tolerance of the explanations (Å).
    normalisers : mapping of str to float, optional
        MiSI credit normaliser per operation (Å for move, degrees for turn); default: the task's.
    views : optional
        The item's ``candidate_views``, when already computed for the same structure and setup.

    Returns
    -------
    ItemResult
        The consistent answers, the ceilings and an explanation of every consistent wrong answer.
    """
    if not (delta > 0 and eps >= 0):
        raise InputError(f"need δ > 0 and ε ≥ 0, got δ={delta}, ε={eps}", field="delta")
    cands = candidates_of(item)
    truth = cands.index(Candidate(item.truth, item.mirror))
    uv, inten, keep, poses = views if views is not None else candidate_views(item, cands)
    lab, n_labels = _labels(item)
    ok = consistent_with(uv, inten, keep, lab, truth, n_labels, delta_px(item, delta), eps if item.setup.depth_cue
                         else 1.0)
    consistent = tuple(c for c, flag in zip(cands, ok, strict=True) if flag)
    norms = dict(normalisers) if normalisers is not None else default_normalisers(item.grid.ranges)
    answers = item.grid.answers
    set_answers = sorted({c.answer for c in consistent})
    best, best_score = 0, -1.0
    for g in range(len(answers)):
        score = float(np.mean([transformation_credit(answers[g], answers[s], norms) for s in set_answers]))
        if score > best_score + 1e-12:
            best, best_score = g, score
    expl = []
    for j, (c, p, k) in enumerate(zip(cands, poses, keep, strict=True)):
        if ok[j] and j != truth:
            name = answers[c.answer].format() + (" [mirror]" if c.mirror else "")
            expl.append((name, explain(item, poses[truth], p, keep[truth], k, tol=explain_tol)))
    hand, witness = None, None
    if item.task == "handedness":
        hand = 1.0 / len({c.mirror for c in consistent})
        witness = _one_view_witness(item, poses[truth], uv[truth], inten[truth], keep[truth], lab, n_labels,
                                    delta_px(item, delta), eps)
    return ItemResult(item.to_dict(), consistent, 1.0 / len(set_answers), best_score, answers[best].format(),
                      tuple(expl), hand, witness)


def _views_key(item: TaskItem) -> tuple:
    """What an item's candidate views depend on (everything but the truth and the mirror flag)."""
    cams = tuple(tuple(np.asarray(v).tobytes() if isinstance(v, np.ndarray) else v for v in vars(c).values())
                 for c in item.cameras[:1])
    return (item.structure_id, item.task, item.grid, item.setup, item.mirror_normal, item.positions.tobytes(),
            item.numbers.tobytes(), cams)


def identify_all(items, *, delta: float = DEFAULT_DELTA, eps: float = DEFAULT_EPS,
                 explain_tol: float = DEFAULT_EXPLAIN_TOL) -> list[ItemResult]:
    """``identify`` of every item, computing the candidate views once per run of consecutive items that
    share them (same structure, cameras and setup); results equal per-item ``identify``.

    Parameters
    ----------
    items : iterable of TaskItem
        The questions, in order.
    delta : float
        Oracle tolerance δ (Å).
    eps : float
        Intensity tolerance of the depth cue (1/255: one grey level).
    explain_tol : float
        3D tolerance of the explanations (Å).

    Returns
    -------
    list of ItemResult
        One per item, in order.
    """
    out, key, views = [], None, None
    for it in items:
        k = _views_key(it)
        if k != key:
            key, views = k, candidate_views(it, candidates_of(it))
        out.append(identify(it, delta=delta, eps=eps, explain_tol=explain_tol, views=views))
    return out


def _one_view_witness(item: TaskItem, pose: Pose, uv, inten, keep, lab, n_labels, dpx, eps) -> bool:
    """Is the true after view also the view of the opposite-handed structure posed as Z∘pose (Z = mirror
    through the image plane at the centre)? Under an orthographic camera without depth cue it always is:
    with the after view alone, handedness is undetermined (ceiling 0.5)."""
    n = item.after_camera.rotation[2]
    c = pose.matrix @ item.centre + pose.shift
    z = np.eye(3) - 2.0 * np.outer(n, n)
    w = Pose(z @ pose.matrix, z @ pose.shift + (c - z @ c))
    wuv, winten, wkeep = project_pose(item, w)
    ok = consistent_with(np.stack([uv, wuv]), np.stack([inten, winten]), np.stack([keep, wkeep]), lab, 0, n_labels,
                         dpx, eps if item.setup.depth_cue else 1.0)
    return bool(ok[1])
