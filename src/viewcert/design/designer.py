"""View designer: choose K orthographic view directions for a set of structures.

Objective: the set's margins (``oracle.margin``; by default the exactness margin δ_exact, below which no false
candidate exists at all, so the reconstruction is the structure whatever the oracle's merge policy; or δ*,
the uniqueness (phantom) margin certify reports, with ``margin="phantom"``; the design reports both) — the worst
case and the 5th percentile (``stats.empirical_percentile``: the ⌈0.05·n⌉-th smallest, certify's definition
too), compared lexicographically ("both", default), or either alone ("worst", "p5"); or "items": the
fewest structures whose margin is below ``target`` Å (the items a δ = target oracle could get wrong), then
the worst case.
Constraints: every view pair's κ ≤ ``kappa_max``; every view's mean informative occlusion (the study's
definition, ``design.occlusion``) ≤ ``occlusion_budget``; no view within ``zone_deg`` of any structure's
short lattice vector (``cameras.conditioning.short_lattice_vectors``: the low-index zone axes).

Search: candidates = ``fibonacci-N`` hemisphere directions turned by a seeded random rotation (``seed``), kept
views first; greedy (best independent pair, then one view at a time), then local refinement (swap each view
for every candidate, then nudge each direction by 4°, 2°, 1° about two tangent axes) until no strict
improvement. Deterministic for a given seed: stable orders, ties to the lower index. Evaluation stops early
once a candidate cannot beat the incumbent; structures are visited hardest first and each δ* search is
bounded by the value that still matters (the running k-th smallest), so most searches are tiny.
Units: Å (δ*), degrees (angles). Directions are world unit vectors into the scene; views use
``look_at(direction, up = world z)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from viewcert.cameras.conditioning import pair_kappa, short_lattice_vectors
from viewcert.cameras.pose import look_at
from viewcert.cameras.protocols import Protocol, View, fibonacci_directions
from viewcert.design.occlusion import orbits, view_occlusion
from viewcert.errors import InputError
from viewcert.oracle.margin import MarginProblem, exactness_margin, pair_normals, uniqueness_margin
from viewcert.stats import empirical_percentile, percentile_rank

OBJECTIVES = ("both", "worst", "p5", "items")
MARGINS = ("phantom", "exact")  # δ* (no phantom point) or δ_exact (no false candidate at all)
NUDGE_DEG = (4.0, 2.0, 1.0)


@dataclass(frozen=True)
class DesignConfig:
    """Settings of one design run (all recorded in its output). cap (Å): δ* above it counts as ``cap``.
    margin: "phantom" maximises δ* (no point of Φ_δ); "exact" maximises δ_exact ≤ δ* (no false candidate at
    all, not even one within δ of an atom, which a first-come merge without refit may keep in the atom's
    place, as the study's released oracle does)."""

    views: int = 5
    candidates: int = 48
    objective: str = "both"
    kappa_max: float = 3.0
    occlusion_budget: float = 0.2
    zone_deg: float = 2.0
    cap: float = 0.6
    refine: bool = True
    seed: int = 0
    keep: tuple = field(default=())
    margin: str = "exact"
    target: float = 0.05

    def __post_init__(self) -> None:
        if int(self.views) != self.views or not 2 <= self.views <= 12:
            raise InputError(f"views must be an integer in 2..12, got {self.views}", field="views")
        if int(self.candidates) != self.candidates or not 4 <= self.candidates <= 2000:
            raise InputError(f"candidates must be an integer in 4..2000, got {self.candidates}", field="candidates")
        if self.objective not in OBJECTIVES:
            raise InputError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}", field="objective")
        for k in ("kappa_max", "occlusion_budget", "cap", "target"):
            v = getattr(self, k)
            if not (isinstance(v, int | float) and v > 0 and math.isfinite(v)):
                raise InputError(f"{k} must be a positive number, got {v!r}", field=k)
        if self.margin not in MARGINS:
            raise InputError(f"margin must be one of {MARGINS}, got {self.margin!r}", field="margin")
        if len(self.keep) > self.views:
            raise InputError(f"{len(self.keep)} kept views for a {self.views}-view design", field="keep")

    def to_dict(self) -> dict:
        return {"views": self.views, "candidates": self.candidates, "objective": self.objective,
                "kappa_max": self.kappa_max, "occlusion_budget": self.occlusion_budget,
                "zone_deg": self.zone_deg, "cap_angstrom": self.cap, "refine": self.refine, "seed": self.seed,
                "keep": [v.name for v in self.keep], "margin": self.margin,
                "target_angstrom": self.target}


@dataclass(frozen=True, eq=False)
class Design:
    """The chosen views, every structure's margins under them (Å, capped at ``config.cap``): ``margins`` the
    objective's (δ_exact or δ* per ``config.margin``) with its worst case and 5th percentile
    (``stats.empirical_percentile``), ``delta_star`` the uniqueness (phantom) margin δ* and ``delta_exact`` the
    exactness margin, both always; and how many view sets were evaluated."""

    protocol: Protocol
    margins: np.ndarray
    worst: float
    p5: float
    evaluations: int
    config: DesignConfig
    delta_star: np.ndarray
    delta_exact: np.ndarray

    def to_dict(self) -> dict:
        return {"protocol": self.protocol.to_dict(), "worst": self.worst, "p5": self.p5,
                "objective_margin": self.config.margin, "evaluations": self.evaluations,
                "config": self.config.to_dict(), "directions": [v.direction.tolist() for v in self.protocol.views],
                "margins": {name: margin_summary(v, self.config.cap)
                            for name, v in (("delta_star", self.delta_star), ("delta_exact", self.delta_exact))}}


def margin_summary(values: np.ndarray, cap: float) -> dict:
    """Worst case and 5th percentile (Å) of per-structure margins, and how many sit at ``cap`` (lower bounds)."""
    v = np.asarray(values, dtype=np.float64)
    return {"worst": float(v.min()), "p5": empirical_percentile(v, 5), "at_cap": int(np.sum(v >= cap - 1e-12)),
            "cap": cap}


def both_margins(structures, rotations, cap: float) -> tuple[np.ndarray, np.ndarray]:
    """(δ*, δ_exact) per structure (Å, each capped at ``cap``: a value at it is a lower bound) under the views'
    world→camera ``rotations`` (K, 3, 3): the uniqueness margin certify reports and the exactness margin
    (``oracle.margin.exactness_margin``), from one search each."""
    star, exact = [], []
    for s in structures:
        m = uniqueness_margin(s if isinstance(s, MarginProblem) else MarginProblem.of(s), np.asarray(rotations),
                              upper=cap)
        star.append(m.delta_star)
        exact.append(exactness_margin(m.delta_star, m.delta_exact))
    return np.array(star, dtype=np.float64), np.array(exact, dtype=np.float64)


def direction_name(direction) -> str:
    """A designed view's name: the unit direction it looks along (x, y, z, world frame, two decimals, signs
    kept, no comma so ``--only-views`` can list it): ``along+0.53-0.21+0.82`` (for a crystal, the frame of its
    conventional standard cell)."""
    d = np.asarray(direction, dtype=np.float64)
    d = d / np.linalg.norm(d)
    return "along" + "".join(f"{x:+.2f}".replace("-0.00", "+0.00") for x in d)


def protocol_margins(structures, protocol: Protocol, cfg: DesignConfig) -> np.ndarray:
    """Every structure's margin under ``protocol``'s views, as ``design_views`` measures its own (δ* or
    δ_exact per ``cfg.margin``; Å, capped at ``cfg.cap``): the baseline a design is compared with.

    Parameters
    ----------
    structures : iterable of Structure
        The structures measured (Cartesian Å).
    protocol : Protocol
        The views measured.
    cfg : DesignConfig
        Margin kind (δ* or δ_exact) and cap (Å), as the design uses them.

    Returns
    -------
    numpy.ndarray
        (n,) margin per structure (Å, capped at ``cfg.cap``).
    """
    star, exact = both_margins(structures, np.array([v.rotation for v in protocol.views]), cfg.cap)
    return star if cfg.margin == "phantom" else exact


def rotation_for(direction) -> np.ndarray:
    """World→camera R looking along ``direction`` with world z up (x when looking along z)."""
    return look_at(direction, up=(0.0, 0.0, 1.0))


def candidate_directions(n: int, seed: int) -> np.ndarray:
    """``fibonacci-n`` hemisphere directions turned by a seeded random rotation (seed 0: not turned), folded
    to the upper hemisphere (an orthographic view and its antipode see the same projection)."""
    d = fibonacci_directions(n)
    if seed:
        q = np.random.default_rng(seed).normal(size=4)
        a, b, c, e = q / np.linalg.norm(q)
        r = np.array([[a*a+b*b-c*c-e*e, 2*(b*c-a*e), 2*(b*e+a*c)], [2*(b*c+a*e), a*a-b*b+c*c-e*e, 2*(c*e-a*b)],
                      [2*(b*e-a*c), 2*(c*e+a*b), a*a-b*b-c*c+e*e]])
        d = d @ r.T
    return np.where(d[:, 2:3] < 0, -d, d)


def zone_axes(structures) -> np.ndarray:
    """Unit short-lattice-vector directions (k, 3) of every periodic structure (the low-index zone axes)."""
    out = [short_lattice_vectors(s.lattice)[1] for s in structures if s.is_periodic]
    if not out:
        return np.zeros((0, 3))
    v = np.concatenate(out)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def near_zone_axis(directions: np.ndarray, axes: np.ndarray, zone_deg: float) -> np.ndarray:
    """True per direction within ``zone_deg`` of ±any axis."""
    if len(axes) == 0:
        return np.zeros(len(directions), dtype=bool)
    return (np.abs(directions @ axes.T) >= math.cos(math.radians(zone_deg))).any(axis=1)


class _Evaluator:
    """δ* of a direction set over the structures, with early exit against an incumbent score."""

    def __init__(self, structures, cfg: DesignConfig):
        self.problems = [MarginProblem.of(s) for s in structures]
        self.cfg = cfg
        self.n = len(self.problems)
        self.k = percentile_rank(self.n, 5)  # the 5th percentile: the k-th smallest (stats.empirical_percentile)
        self.order = np.arange(self.n)
        self.count = 0

    def score(self, values: np.ndarray) -> tuple[float, float, int]:
        """(worst, 5th percentile, structures below target)."""
        s = np.sort(values)
        return float(s[0]), float(s[self.k - 1]), int(np.sum(s < self.cfg.target))

    def key(self, score) -> tuple:
        worst, p5, below = score
        if self.cfg.objective == "items":
            return (-below, round(worst, 9))
        if self.cfg.objective == "worst":
            return (round(worst, 9),)
        if self.cfg.objective == "p5":
            return (round(p5, 9),)
        return (round(worst, 9), round(p5, 9))

    def evaluate(self, dirs: np.ndarray, incumbent: tuple | None = None):
        """(values, score) or None when it cannot beat ``incumbent`` (a key)."""
        self.count += 1
        dirs = np.asarray(dirs, dtype=np.float64)
        rots = np.array([rotation_for(d) for d in dirs])
        normals = pair_normals(-rots[:, 2])
        if self.cfg.objective == "items":
            return self._evaluate_items(rots, normals, incumbent)
        if incumbent is not None and self.cfg.objective != "p5" and 0 < incumbent[0] <= self.cfg.cap:
            # phase 1: is any structure below the incumbent's worst case? (searches bounded by it: cheap)
            for i in self.order:
                if self.value(i, rots, incumbent[0], normals) < incumbent[0]:
                    return None
        vals = np.full(self.n, self.cfg.cap)
        done: list[float] = []
        for i in self.order:
            ks = sorted(done)[: self.k]
            upper = ks[-1] if len(ks) == self.k else self.cfg.cap
            v = self.value(i, rots, max(min(upper, self.cfg.cap), 1e-12), normals)
            vals[i] = v
            done.append(v)
            if incumbent is not None and self._hopeless(sorted(done), incumbent):
                return None
        return vals, self.score(vals)

    def _evaluate_items(self, rots, normals, incumbent):
        t = min(self.cfg.target, self.cfg.cap)
        vals = np.full(self.n, t)
        below = 0
        for i in self.order:
            vals[i] = self.value(i, rots, t, normals)
            below += int(vals[i] < t)
            if incumbent is not None and -below < incumbent[0]:
                return None
        return vals, self.score(vals)

    def value(self, i: int, rots: np.ndarray, upper: float, normals=None) -> float:
        """The designed margin of structure i (δ* or δ_exact, Å), searched below ``upper``."""
        m = uniqueness_margin(self.problems[i], rots, upper=upper, normals=normals)
        return m.delta_star if self.cfg.margin == "phantom" else exactness_margin(m.delta_star, m.delta_exact)

    def _hopeless(self, done_sorted, incumbent) -> bool:
        worst = done_sorted[0]
        p5 = done_sorted[self.k - 1] if len(done_sorted) >= self.k else math.inf
        if self.cfg.objective == "worst":
            return worst < incumbent[0]
        if self.cfg.objective == "p5":
            return p5 <= incumbent[0]
        return worst < incumbent[0] or (worst == incumbent[0] and p5 <= incumbent[1])

    def reorder(self, values: np.ndarray) -> None:
        """Hardest structures first from now on (stable)."""
        self.order = np.argsort(values, kind="mergesort")


class _Feasibility:
    """κ between directions, zone axes and the informative-occlusion budget (cached per direction)."""

    def __init__(self, structures, cfg: DesignConfig):
        self.cfg = cfg
        self.structures = list(structures)
        self.axes = zone_axes(self.structures)
        self._orbits = None
        self._occ: dict[tuple, float] = {}

    def kappa_ok(self, d: np.ndarray, others) -> bool:
        r = rotation_for(d)
        return all(pair_kappa(r, rotation_for(o)) <= self.cfg.kappa_max for o in others)

    def zone_ok(self, d: np.ndarray) -> bool:
        return not near_zone_axis(d[None], self.axes, self.cfg.zone_deg)[0]

    def informative(self, d: np.ndarray) -> float:
        """Mean informative-occlusion fraction of the view over the structures."""
        key = tuple(np.round(d, 12))
        if key not in self._occ:
            if self._orbits is None:
                self._orbits = [orbits(s) for s in self.structures]
            r = rotation_for(d)
            self._occ[key] = float(np.mean([view_occlusion(s, r, orbit=o).informative
                                            for s, o in zip(self.structures, self._orbits, strict=True)]))
        return self._occ[key]

    def occlusion_ok(self, d: np.ndarray) -> bool:
        return self.informative(d) <= self.cfg.occlusion_budget


def _best_addition(ev: _Evaluator, fe: _Feasibility, chosen: list, cands: np.ndarray, banned: set):
    """The candidate whose addition scores best (κ- and zone-feasible, not banned); (index, values, score)."""
    best = None
    for i, d in enumerate(cands):
        if i in banned or not fe.kappa_ok(d, chosen):
            continue
        res = ev.evaluate(np.array([*chosen, d]), None if best is None else ev.key(best[2]))
        if res is not None and (best is None or ev.key(res[1]) > ev.key(best[2])):
            best = (i, *res)
            ev.reorder(res[0])
    return best


def _best_pair(ev, fe, cands, banned):
    best = None
    for i in range(len(cands)):
        for j in range(i + 1, len(cands)):
            if {i, j} & banned or not fe.kappa_ok(cands[j], [cands[i]]):
                continue
            res = ev.evaluate(cands[[i, j]], None if best is None else ev.key(best[2]))
            if res is not None and (best is None or ev.key(res[1]) > ev.key(best[2])):
                best = ((i, j), *res)
                ev.reorder(res[0])
    if best is None:
        raise InputError("no candidate pair satisfies kappa_max and the occlusion budget", field="kappa_max")
    return best


def _greedy(ev, fe, cfg, cands, kept):
    chosen = [np.asarray(v.direction, float) for v in kept]
    banned: set[int] = set()
    if len(chosen) == 0:  # a single view determines nothing: start from the best independent pair
        while True:
            best = _best_pair(ev, fe, cands, banned)
            over = [i for i in best[0] if not fe.occlusion_ok(cands[i])]
            if not over:
                break
            banned.update(over)
        chosen = [cands[best[0][0]], cands[best[0][1]]]
        ev.reorder(best[1])
    vals = None
    while len(chosen) < cfg.views:
        while True:
            best = _best_addition(ev, fe, chosen, cands, banned)
            if best is None:
                raise InputError(f"no feasible view left after {len(chosen)} (kappa_max, occlusion budget, "
                                 "zone axes)", field="kappa_max")
            if fe.occlusion_ok(cands[best[0]]):
                break
            banned.add(best[0])
        chosen.append(cands[best[0]])
        vals = best[1]
        ev.reorder(vals)
    return chosen, banned


def _nudges(d: np.ndarray, step_deg: float) -> list[np.ndarray]:
    t1 = np.cross(d, [0.0, 0.0, 1.0] if abs(d[2]) < 0.9 else [1.0, 0.0, 0.0])
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(d, t1)
    a = math.radians(step_deg)
    out = []
    for t in (t1, -t1, t2, -t2):
        n = math.cos(a) * d + math.sin(a) * t
        out.append(n if n[2] >= 0 else -n)
    return out


def _refine(ev, fe, cfg, cands, chosen, n_kept, banned):
    res = ev.evaluate(np.array(chosen))
    vals, score = res
    improved = True
    while improved:
        improved = False
        for pos in range(n_kept, len(chosen)):
            others = chosen[:pos] + chosen[pos + 1:]
            trials = [c for i, c in enumerate(cands) if i not in banned]
            for step in NUDGE_DEG:
                trials += _nudges(chosen[pos], step)
            for d in trials:
                if not (fe.kappa_ok(d, others) and fe.zone_ok(d)):
                    continue
                trial = [*chosen[:pos], d, *chosen[pos + 1:]]
                r = ev.evaluate(np.array(trial), ev.key(score))
                if r is not None and ev.key(r[1]) > ev.key(score) and fe.occlusion_ok(d):
                    chosen, (vals, score), improved = trial, r, True
                    ev.reorder(vals)
    return chosen, vals, score


def design_views(structures, cfg: DesignConfig | None = None, *, name: str | None = None) -> Design:
    """Choose ``cfg.views`` directions for ``structures`` (see the module docstring).

    Parameters
    ----------
    structures : iterable of Structure
        The structures the views must determine (Cartesian Å).
    cfg : DesignConfig, optional
        K views, candidate directions, objective, κ bound, occlusion budget, cap (Å), margin kind, seed and
        kept views; default ``DesignConfig()``.
    name : str, optional
        The designed protocol's name.

    Returns
    -------
    Design
        The chosen views as a protocol (world→camera rotations), every structure's margins (Å, capped at
        ``cfg.cap``: the objective's, δ* and δ_exact), the objective's worst case and 5th percentile.
    """
    cfg = cfg or DesignConfig()
    structures = list(structures)
    if not structures:
        raise InputError("no structures to design views for", field="INPUT")
    ev, fe = _Evaluator(structures, cfg), _Feasibility(structures, cfg)
    cands = candidate_directions(cfg.candidates, cfg.seed)
    cands = cands[~near_zone_axis(cands, fe.axes, cfg.zone_deg)]
    if len(cands) < cfg.views:
        raise InputError(f"only {len(cands)} candidates avoid the zone axes; raise --candidates", field="candidates")
    kept = list(cfg.keep)
    chosen, banned = _greedy(ev, fe, cfg, cands, kept)
    if cfg.refine:
        chosen = _refine(ev, fe, cfg, cands, chosen, len(kept), banned)[0]
    rots = np.array([rotation_for(d) for d in chosen])
    star, exact = both_margins(ev.problems, rots, cfg.cap)
    vals = star if cfg.margin == "phantom" else exact
    score = ev.score(vals)
    views = tuple(kept) + tuple(View(direction_name(d), rotation_for(d)) for d in chosen[len(kept):])
    proto = Protocol(name or f"designed-{cfg.views}", views,
                     f"designed by viewcert: objective {cfg.objective}, κ ≤ {cfg.kappa_max:g}, informative "
                     f"occlusion ≤ {cfg.occlusion_budget:g}, {cfg.zone_deg:g}° from zone axes, seed {cfg.seed}")
    return Design(proto, vals, score[0], score[1], ev.count, cfg, star, exact)
