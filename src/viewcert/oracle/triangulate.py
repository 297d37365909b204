"""Correspondence-free triangulation: from per-view 2D points that carry only a label, the 3D points every
view agrees on.

``reconstruct(observations, delta=...)`` returns a frozen :class:`Reconstruction`; expected failures (fewer
than two usable views, an empty view, nothing consistent) come back as ``status="failed"`` with a reason,
misuse (bad δ, unknown option, wrong lattice shape) raises :class:`~viewcert.errors.InputError`.

Semantics (``merge="deterministic"``, the default with ``pairs="all"``)
--------------------------------------------------------------------------
1. **Seeds.** For every pair of views (a, b) with independent directions (``pairs="all"``), or only the first
   two views (``pairs="first"``), and every same-label pair of 2D points whose back-projected rays pass
   within δ_a + δ_b of each other (orthographic views: a band search on the epipolar coordinate, which is
   exactly the line gap), the rays are triangulated in closed form (least squares; the midpoint for two).
2. **Verification.** In every other view the nearest same-label point to the projection is associated (search
   radius w·δ·(1 + √2/√(1 − |cos θ_ab|)), w = ``near_miss_window``, which cannot miss a point within δ of
   the final estimate; ties go to the lowest index), the point is refitted on all its supporting rays and
   the association repeated to a fixed point (at most 4 rounds; the seed pair stays fixed). Without
   occlusion, a view with no point in the search radius rejects the seed at once. The candidate is
   accepted when its residual is ≤ δ in every view; a rejected candidate whose largest residual is ≤ w·δ
   is kept as a near miss (its residual/δ feeds the phantom margin). With ``visibility="occlusion"`` one
   view (not a seed view) may be missing if the point's projection falls inside the drawn disc of a nearer
   observed atom; such points are flagged ``occluded``.
3. **Merge.** Candidates with identical support tuples are one; then same-label candidates within δ
   (minimum image when a lattice is given) form clusters (connected components). A cluster of one keeps its
   candidate; a larger one starts from the members' average and is refitted on, per view, the member's
   supporting point nearest to the estimate (to a fixed point), so every output point is the least-squares
   point of its reported support. Points are wrapped into the cell when a lattice is given. Coincident 2D
   points of one view (within 1e-3·δ) are treated as one site. With tiled observations
   (``observations.model.tiling`` ≠ (1,1,1), lattice required) a cluster survives only if its members'
   lattice translations contain a full box of the tiling: every drawn translate of the point is matched in
   every view (translate consistency). Output order: by label, then position (rounded to 1e-7 Å), so it
   does not depend on the order of the observations.

Semantics of ``merge="greedy"`` (the default with ``pairs="first"``): the study's released oracle
----------------------------------------------------------------------------------------------------
One tolerance δ for everything: a seed pair is a candidate when the distance between its two rays is ≤ δ;
the candidate point is the midpoint of closest approach (no refit); it is accepted when in every other view
some same-label point lies within δ of its projection; candidates are visited in first-come order (view-0
points in observation order, for each its partner view-1 points in observation order; with ``pairs="all"``
view pairs in order (0,1), (0,2), …) and one is kept unless an already kept same-label point lies strictly
closer than δ in Cartesian space, as the study did (with tiled observations: by minimum image in the cell,
so that translates collapse to one point per site). Points keep the first-come order and are wrapped into
the cell when a lattice is given (after the merge, as the study did).

Units: δ in Å (``delta_unit="angstrom"``; orthographic: in the image plane, perspective: at the point's
depth) or in px (``delta_unit="px"``; orthographic views convert with their scale). The 3D merge tolerance
is δ in Å (px: the largest per-view equivalent).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from viewcert.cameras.camera import OrthographicCamera, PerspectiveCamera
from viewcert.cameras.conditioning import translate_overlap_warnings
from viewcert.elements import covalent_radii
from viewcert.errors import InputError
from viewcert.numeric import readonly
from viewcert.observe.project import Observations
from viewcert.oracle import _kernels as K

PAIRS = ("all", "first")
MERGES = ("deterministic", "greedy")
VISIBILITY = ("strict", "occlusion")
DELTA_UNITS = ("angstrom", "px")
DEFAULT_NEAR_MISS_WINDOW = 2.0
#: accept repeats of known support tuples without verifying them (``_seeding.seed_candidates``); the results
#: are the same either way (tests/oracle/test_oracle_scale.py runs both), False only for that comparison
_PRUNE = True
COUNT_NAMES = (
    "view_pairs",
    "degenerate_view_pairs",
    "seeds",
    "accepted_candidates",
    "unique_supports",
    "points",
    "translate_rejected",
    "near_misses",
    "occluded",
    "sites",
)



@dataclass(frozen=True, eq=False)
class Reconstruction:
    """What the views determine. points (k, 3) Å in the structure's Cartesian frame (wrapped into the cell
    when a lattice was given); labels (k,); support (k, n_views): index of the 2D point of each view that
    supports the point (−1 = not seen: occluded); residuals (k,) largest per-view residual in Å; ratios (k,)
    largest residual/δ; occluded (k,) supported in K−1 of K views because of occlusion. near_* describe
    rejected candidates whose largest residual is within ``near_miss_window``·δ (for the phantom margin)."""

    status: str
    reason: str
    points: np.ndarray
    labels: np.ndarray
    support: np.ndarray
    residuals: np.ndarray
    ratios: np.ndarray
    occluded: np.ndarray
    delta: float
    delta_unit: str
    delta_3d: float
    pairs: str
    merge: str
    visibility: str
    lattice: np.ndarray | None
    tiling: tuple[int, int, int]
    view_names: tuple[str, ...]
    near_points: np.ndarray
    near_labels: np.ndarray
    near_ratios: np.ndarray
    near_miss_window: float
    counts: dict = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    structure_id: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def n_points(self) -> int:
        return int(self.points.shape[0])

    @property
    def n_views(self) -> int:
        return len(self.view_names)

    @property
    def margin(self) -> float:
        """Smallest residual/δ over rejected near-miss candidates (inf when none within the window)."""
        return float(self.near_ratios.min()) if len(self.near_ratios) else math.inf

    def to_dict(self) -> dict:
        return {
            "status": self.status,
            "reason": self.reason,
            "structure_id": self.structure_id,
            "points": self.points.tolist(),
            "labels": self.labels.tolist(),
            "support": self.support.tolist(),
            "residuals": self.residuals.tolist(),
            "ratios": self.ratios.tolist(),
            "occluded": self.occluded.tolist(),
            "delta": self.delta,
            "delta_unit": self.delta_unit,
            "delta_3d": self.delta_3d,
            "pairs": self.pairs,
            "merge": self.merge,
            "visibility": self.visibility,
            "lattice": None if self.lattice is None else self.lattice.tolist(),
            "tiling": list(self.tiling),
            "view_names": list(self.view_names),
            "near_points": self.near_points.tolist(),
            "near_labels": self.near_labels.tolist(),
            "near_ratios": self.near_ratios.tolist(),
            "near_miss_window": self.near_miss_window,
            "margin": None if math.isinf(self.margin) else self.margin,
            "counts": dict(self.counts),
            "warnings": list(self.warnings),
        }


# ----------------------------------------------------------------------------------------------- validation
def _check_options(delta, delta_unit, pairs, merge, visibility, near_miss_window) -> tuple[float, str, float]:
    try:
        d = float(delta)
    except (TypeError, ValueError):
        raise InputError(f"delta must be a positive number, got {delta!r}", field="delta") from None
    if not (math.isfinite(d) and d > 0):
        raise InputError(f"delta must be a positive finite number (Å or px), got {delta!r}", field="delta")
    if delta_unit not in DELTA_UNITS:
        raise InputError(f"delta_unit must be one of {DELTA_UNITS}, got {delta_unit!r}", field="delta_unit")
    if pairs not in PAIRS:
        raise InputError(f"pairs must be one of {PAIRS}, got {pairs!r}", field="pairs")
    merge = merge if merge is not None else ("deterministic" if pairs == "all" else "greedy")
    if merge not in MERGES:
        raise InputError(f"merge must be one of {MERGES} or None, got {merge!r}", field="merge")
    if visibility not in VISIBILITY:
        raise InputError(f"visibility must be one of {VISIBILITY}, got {visibility!r}", field="visibility")
    try:
        win = float(near_miss_window)
    except (TypeError, ValueError):
        raise InputError(f"near_miss_window must be a number ≥ 1, got {near_miss_window!r}",
                         field="near_miss_window") from None
    if not (math.isfinite(win) and win >= 1.0):
        raise InputError(f"near_miss_window must be a finite number ≥ 1, got {near_miss_window!r}",
                         field="near_miss_window")
    return d, merge, win


def _check_lattice(lattice) -> np.ndarray | None:
    if lattice is None:
        return None
    lat = np.array(lattice, dtype=np.float64)
    if lat.shape != (3, 3) or not np.isfinite(lat).all():
        raise InputError(f"lattice must be a finite 3×3 matrix (rows a, b, c in Å), got shape {lat.shape}",
                         field="lattice")
    det = (lat[0, 0] * (lat[1, 1] * lat[2, 2] - lat[1, 2] * lat[2, 1])
           - lat[0, 1] * (lat[1, 0] * lat[2, 2] - lat[1, 2] * lat[2, 0])
           + lat[0, 2] * (lat[1, 0] * lat[2, 1] - lat[1, 1] * lat[2, 0]))
    if abs(det) < 1e-9:
        raise InputError("lattice has zero volume", field="lattice")
    lat.setflags(write=False)
    return lat


class _Prepared:
    """Kernel inputs of one Observations as plain lists (joined into arrays once per batch), or the reason it
    cannot be reconstructed."""

    __slots__ = (
        "kind", "rot", "cen", "sf", "cx", "cy", "width", "height", "dmode", "delta_k", "sizes", "uv",
        "labels", "depth", "radius", "lattice", "tiling", "delta3d", "failure", "names", "warnings", "sid",
    )


_ORTHO = OrthographicCamera
_PERSP = PerspectiveCamera


def _camera_terms(views, cams, delta: float, px: bool) -> tuple[list, ...]:
    """Per view: kind (0 orthographic, 1 perspective), centre or position, scale or focal, principal point,
    tolerance mode, δ in the kernel's unit and the Å per px at the view (for a px δ in 3D)."""
    kind, cen, sf, cx, cy, dmode, delta_k, scale_a = [], [], [], [], [], [], [], []
    for k, (v, cam) in enumerate(zip(views, cams, strict=True)):
        t = type(cam)
        if t is _ORTHO or isinstance(cam, _ORTHO):
            kind.append(0)
            cen.append(cam.center)
            sf.append(cam.scale)
            cx.append(0.0)
            cy.append(0.0)
            dmode.append(0)
            delta_k.append(delta / cam.scale if px else delta)
            scale_a.append(1.0 / cam.scale)
        elif isinstance(cam, _PERSP):
            kind.append(1)
            cen.append(cam.position)
            sf.append(cam.focal)
            cx.append(cam.cx)
            cy.append(cam.cy)
            dmode.append(1 if px else 2)
            delta_k.append(delta)
            scale_a.append((float(np.median(v.depth)) if len(v) else 1.0) / cam.focal)
        else:
            raise InputError(f"view {k}: unsupported camera type {type(cam).__name__}", field="observations")
    return kind, cen, sf, cx, cy, dmode, delta_k, scale_a


def _cross3(a, b) -> np.ndarray:
    """``np.cross`` of two 3-vectors, the same products and differences (bit for bit), without its axis
    handling (about 20 µs a call)."""
    a0, a1, a2 = float(a[0]), float(a[1]), float(a[2])
    b0, b1, b2 = float(b[0]), float(b[1]), float(b[2])
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def _expected_failure(P: _Prepared, pairs: str, visibility: str) -> str:
    """Why these views cannot be reconstructed (an expected failure, reported as a value), or ""."""
    nv = len(P.names)
    if nv < 2:
        return f"needs at least two views, got {nv}"
    if pairs == "first" and P.kind[0] == 0 and P.kind[1] == 0 and np.linalg.norm(
        _cross3(P.rot[0][2], P.rot[1][2])
    ) < 1e-9:
        return "pairs='first': views 0 and 1 look along parallel directions and cannot triangulate"
    if 0 in P.sizes:
        if visibility == "strict":
            empty = [k for k in range(nv) if P.sizes[k] == 0]
            return f"view(s) {empty} show no points: nothing can be consistent with every view"
        if not any(P.sizes):
            return "no view shows any point"
    return ""


def _prepare(obs, delta, delta_unit, lattice, pairs, visibility) -> _Prepared:
    if not isinstance(obs, Observations):
        raise InputError(
            f"observations must be a viewcert.observe.project.Observations, got {type(obs).__name__}",
            field="observations",
        )
    P = _Prepared()
    P.failure = ""
    P.warnings = []
    P.sid = obs.structure_id
    views = obs.views
    nv = len(views)
    cams = [v.camera for v in views]
    P.names = tuple(c.name for c in cams)
    P.lattice = lattice
    tiling = obs.model.tiling
    if tiling != (1, 1, 1) and lattice is None:
        raise InputError(
            f"tiled observations (tiling {tiling}) need the cell: pass lattice=structure.lattice", field="lattice"
        )
    P.tiling = tiling
    px = delta_unit == "px"
    kind, cen, sf, cx, cy, dmode, delta_k, scale_a = _camera_terms(views, cams, delta, px)
    P.kind, P.cen, P.sf, P.cx, P.cy, P.dmode, P.delta_k = kind, cen, sf, cx, cy, dmode, delta_k
    P.rot = [c.rotation for c in cams]
    P.width = [c.width for c in cams]
    P.height = [c.height for c in cams]
    P.sizes = [len(v.labels) for v in views]
    P.uv = [v.uv for v in views]
    P.labels = [v.labels for v in views]
    P.depth = [v.depth for v in views]
    P.radius = None
    if visibility == "occlusion":
        rs = obs.model.radius_scale
        P.radius = []
        for k, v in enumerate(views):
            r_a = covalent_radii(v.labels) * rs if len(v) else np.zeros(0)
            P.radius.append(r_a if kind[k] == 0 else r_a * sf[k] / np.maximum(v.depth, 1e-12))
    P.delta3d = (delta * max(scale_a) if nv else delta) if px else delta
    P.failure = _expected_failure(P, pairs, visibility)
    if lattice is not None and tiling != (1, 1, 1) and not P.failure:
        P.warnings = translate_overlap_warnings(cams, lattice, 2 * np.array(delta_k), tiling=tiling)
    return P


def _empty_result(P: _Prepared, reason: str, opts: dict) -> Reconstruction:
    nv = len(P.names)
    return Reconstruction(
        status="failed", reason=reason, points=readonly(np.zeros((0, 3))), labels=readonly(np.zeros(0, dtype=np.int64)),
        support=readonly(np.zeros((0, nv), dtype=np.int64)), residuals=readonly(np.zeros(0)), ratios=readonly(np.zeros(0)),
        occluded=readonly(np.zeros(0, dtype=bool)), lattice=P.lattice,
        tiling=P.tiling, view_names=P.names, near_points=readonly(np.zeros((0, 3))),
        near_labels=readonly(np.zeros(0, dtype=np.int64)), near_ratios=readonly(np.zeros(0)),
        counts={n: 0 for n in COUNT_NAMES}, warnings=tuple(P.warnings), structure_id=P.sid,
        delta_3d=P.delta3d, **opts,
    )


def _run(prepared: list[_Prepared], *, pairs, merge, visibility, window):
    """One kernel call over every prepared structure that did not fail validation."""
    good = [P for P in prepared if not P.failure]
    if not good:
        return {}
    nvs = [len(P.kind) for P in good]
    s_view_off = np.zeros(len(good) + 1, dtype=np.int64)
    np.cumsum(nvs, out=s_view_off[1:])
    sizes = [n for P in good for n in P.sizes]
    v_pt_off = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=v_pt_off[1:])
    flat = lambda name: [x for P in good for x in getattr(P, name)]  # noqa: E731
    s_lattice = np.array([P.lattice if P.lattice is not None else np.eye(3) for P in good], dtype=np.float64)
    s_has = np.array([P.lattice is not None for P in good], dtype=np.bool_)
    s_tiling = np.array([P.tiling for P in good], dtype=np.int64)
    s_d3 = np.array([P.delta3d for P in good], dtype=np.float64)
    uv = flat("uv")
    labels = flat("labels")
    depth = flat("depth")
    radius = flat("radius") if visibility == "occlusion" else None
    m = int(v_pt_off[-1])
    out = K.reconstruct_many(
        s_view_off, s_lattice, s_has, s_tiling, s_d3,
        np.array(flat("kind"), dtype=np.int64), np.array(flat("rot"), dtype=np.float64).reshape(-1, 3, 3),
        np.array(flat("cen"), dtype=np.float64).reshape(-1, 3), np.array(flat("sf"), dtype=np.float64),
        np.array(flat("cx"), dtype=np.float64), np.array(flat("cy"), dtype=np.float64),
        np.array(flat("width"), dtype=np.float64), np.array(flat("height"), dtype=np.float64),
        np.array(flat("dmode"), dtype=np.int64), np.array(flat("delta_k"), dtype=np.float64), v_pt_off,
        np.concatenate(uv).reshape(-1, 2) if m else np.zeros((0, 2)),
        np.concatenate(labels).astype(np.int64, copy=False) if m else np.zeros(0, dtype=np.int64),
        np.concatenate(depth).astype(np.float64, copy=False) if m else np.zeros(0),
        np.concatenate(radius) if radius and m else np.zeros(m),
        pairs == "first", merge == "greedy", visibility == "occlusion", float(window), merge == "deterministic",
        _PRUNE,
    )
    return {id(P): (i, out) for i, P in enumerate(good)}


def _result(P: _Prepared, i: int, out, opts: dict) -> Reconstruction:
    off, pts, labs, sup, res, rat, occ, noff, npts, nlab, nrat, counts = out
    a, b = off[i], off[i + 1]
    nv = len(P.names)
    c = counts[i]
    cd = dict(zip(COUNT_NAMES, c.tolist(), strict=True))
    status, reason = "ok", ""
    if b == a:
        status, reason = "failed", "no point is consistent with every view within δ"
    if cd["view_pairs"] == 0:
        status, reason = "failed", "no pair of views with independent directions to triangulate from"
    na, nb = noff[i], noff[i + 1]
    return Reconstruction(
        status=status, reason=reason, points=pts[a:b], labels=labs[a:b], support=sup[a:b, :nv],
        residuals=res[a:b], ratios=rat[a:b], occluded=occ[a:b], lattice=P.lattice, tiling=P.tiling,
        view_names=P.names, near_points=npts[na:nb], near_labels=nlab[na:nb], near_ratios=nrat[na:nb], counts=cd,
        warnings=tuple(P.warnings), structure_id=P.sid, delta_3d=P.delta3d, **opts,
    )


def reconstruct_batch(
    observations: Sequence[Observations],
    *,
    delta: float,
    delta_unit: str = "angstrom",
    pairs: str = "all",
    merge: str | None = None,
    lattice=None,
    visibility: str = "strict",
    near_miss_window: float = DEFAULT_NEAR_MISS_WINDOW,
) -> list[Reconstruction]:
    """:func:`reconstruct` over many Observations in one kernel call. ``lattice``: None, one 3×3 matrix for
    all, or a sequence with one entry (matrix or None) per Observations.

    Parameters
    ----------
    observations : sequence of Observations
        The items, each as :func:`reconstruct` takes it.
    delta : float
        Tolerance in ``delta_unit``, > 0, for every item.
    delta_unit : {"angstrom", "px"}, default "angstrom"
        Unit of ``delta``.
    pairs : {"all", "first"}, default "all"
        View pairs that seed candidates.
    merge : {"deterministic", "greedy"}, optional
        Merge semantics; default by ``pairs`` as in :func:`reconstruct`.
    lattice : array_like of float, shape (3, 3), or sequence of those or None, optional
        Cell rows a, b, c in Å (world frame): one for all items or one per item (None: a molecule).
    visibility : {"strict", "occlusion"}, default "strict"
        Whether one view may miss an occluded point.
    near_miss_window : float, default 2.0
        Near misses reported within this multiple of δ; ≥ 1.

    Returns
    -------
    list of Reconstruction
        One per item, in order.

    Raises
    ------
    InputError
        As :func:`reconstruct`, or a lattice sequence of another length (field ``lattice``).
    """
    d, merge, win = _check_options(delta, delta_unit, pairs, merge, visibility, near_miss_window)
    obs_list = list(observations)
    per_item = isinstance(lattice, list | tuple) and any(x is None or np.ndim(x) == 2 for x in lattice)
    if per_item:
        lats = [_check_lattice(x) for x in lattice]
        if len(lats) != len(obs_list):
            raise InputError(f"{len(lats)} lattices for {len(obs_list)} observations", field="lattice")
    else:
        lats = [_check_lattice(lattice)] * len(obs_list)
    prepared = [_prepare(o, d, delta_unit, lat, pairs, visibility) for o, lat in zip(obs_list, lats, strict=True)]
    opts = {"delta": d, "delta_unit": delta_unit, "pairs": pairs, "merge": merge, "visibility": visibility,
            "near_miss_window": win}
    done = _run(prepared, pairs=pairs, merge=merge, visibility=visibility, window=win)
    for _i, res in done.values():
        for arr in res:
            arr.setflags(write=False)  # the results are read-only views of these
        break
    out = []
    for P in prepared:
        if P.failure:
            out.append(_empty_result(P, P.failure, opts))
        else:
            i, res = done[id(P)]
            out.append(_result(P, i, res, opts))
    return out


def reconstruct(
    observations: Observations,
    *,
    delta: float,
    delta_unit: str = "angstrom",
    pairs: str = "all",
    merge: str | None = None,
    lattice=None,
    visibility: str = "strict",
    near_miss_window: float = DEFAULT_NEAR_MISS_WINDOW,
) -> Reconstruction:
    """Recover the 3D points that every view of ``observations`` agrees on within ``delta``.

    Parameters
    ----------
    observations : Observations
        Per view: uv (m, 2) pixel coordinates and labels (m,) atomic numbers, with the view's camera (the
        hidden atom indices are not read).
    delta : float
        Tolerance in ``delta_unit``, > 0.
    delta_unit : {"angstrom", "px"}, default "angstrom"
        Unit of ``delta``: Å (orthographic: in the image plane, perspective: at the point's depth) or px.
    pairs : {"all", "first"}, default "all"
        "all" view pairs seed candidates, or only the "first" two views (the study's released oracle).
    merge : {"deterministic", "greedy"}, optional
        Default "deterministic" for pairs="all", "greedy" for pairs="first" (the study's single-tolerance
        first-come semantics, see the module docstring).
    lattice : array_like of float, shape (3, 3), optional
        Rows a, b, c (Å) of the cell for periodic structures: points are wrapped into it and merged by
        minimum image; tiled observations (``observations.model.tiling``) require it and enforce translate
        consistency.
    visibility : {"strict", "occlusion"}, default "strict"
        "strict" (every point must be seen in every view) or "occlusion" (one view may miss it where a
        nearer atom's disc covers its projection; radii from ``observations.model.radius_scale`` × covalent
        radius).
    near_miss_window : float, default 2.0
        Rejected candidates whose largest residual is within this multiple of δ are reported (phantom
        margin); ≥ 1.

    Returns
    -------
    Reconstruction
        ``status`` "ok" or "failed" (with ``reason``); points (k, 3) Å in the structure's Cartesian frame,
        labels (k,), per-view support, residuals (Å) and the near misses.

    Raises
    ------
    InputError
        A bad δ, unit, option or window, or a lattice that is not a finite 3×3 matrix of non-zero volume
        (the field names the argument).
    """
    return reconstruct_batch(
        [observations], delta=delta, delta_unit=delta_unit, pairs=pairs, merge=merge, lattice=lattice,
        visibility=visibility, near_miss_window=near_miss_window,
    )[0]
