"""Benchmark-level ceilings of a transformation task, per task and per axis.

For n items: ``unique`` = items whose consistent set is the truth alone (k of n, with an exact
Clopper–Pearson one-sided 95 % lower bound — ``viewcert.stats``); ``exact ceiling`` = mean of 1/|set|
(the best expected exact-match accuracy); ``partial ceiling`` = mean of the per-item best expected MiSI
credit; both with a 95 % percentile bootstrap interval over items (``viewcert.stats.bootstrap_indices``,
seeded). Handedness items add the mean handedness ceiling (with the grid) and the share of items whose
one-view witness holds. The axis of an item is its true command's axes joined by '+'.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

import numpy as np

from viewcert.errors import InputError
from viewcert.stats import DEFAULT_SEED, bootstrap_indices, clopper_pearson, percentile_interval
from viewcert.tasks.identify import ItemResult, identify_all
from viewcert.tasks.model import TaskItem, ViewSetup, achiral_exclusion, make_item, task_grid

N_BOOT = 2000


def sample_truths(n_answers: int, per_structure: int | None, rng: np.random.Generator) -> list[int]:
    """All answer indices (``per_structure=None``) or a seeded sample without replacement, sorted."""
    if per_structure is None or per_structure >= n_answers:
        return list(range(n_answers))
    return sorted(rng.choice(n_answers, size=per_structure, replace=False).tolist())


def handedness_exclusions(structures: Iterable[tuple[str, np.ndarray, np.ndarray]], tolerance: float) -> dict:
    """structure id → exclusion record (``tasks.model.achiral_exclusion``) of every achiral structure."""
    out = {}
    for sid, pos, num in structures:
        rec = achiral_exclusion(sid, pos, num, tolerance)
        if rec is not None:
            out[sid] = rec
    return out


def build_items(structures: Iterable[tuple[str, np.ndarray, np.ndarray]], task: str, setup: ViewSetup, *,
                per_structure: int | None = None, seed: int = 0, exclude: Collection[str] = ()) -> list[TaskItem]:
    """Items for (id, positions, numbers) triples; truths per structure from ``sample_truths`` drawn with
    ``numpy.random.default_rng(seed)`` in input order; handedness items alternate mirror/same by index.
    Structures whose id is in ``exclude`` give no item (their truths are still drawn, so the other
    structures' items do not depend on the exclusions)."""
    grid = task_grid(task)
    rng = np.random.default_rng(seed)
    items = []
    for sid, pos, num in structures:
        truths = sample_truths(len(grid), per_structure, rng)
        if sid in exclude:
            continue
        for j, t in enumerate(truths):
            mirror = task == "handedness" and (j % 2 == 1)
            items.append(make_item(sid, pos, num, task, t, setup, grid=grid, mirror=mirror))
    return items


def _axis(item: TaskItem) -> str:
    return "+".join(s.axis for s in item.grid.answers[item.truth].steps)


def _interval(values: np.ndarray, idx: np.ndarray) -> dict:
    lo, hi = percentile_interval(values[idx].mean(axis=1))
    return {"mean": float(values.mean()), "lo95": lo, "hi95": hi}


def summarise(items: list[TaskItem], results: list[ItemResult], *, seed: int = DEFAULT_SEED,
              excluded: Collection[dict] = ()) -> dict:
    """Per-group figures (module docstring) for the whole set ("all") and per axis; ``excluded`` structures
    (never in any denominator) are listed under "all" → "excluded"."""
    if len(items) != len(results) or not items:
        raise InputError("need one result per item and at least one item", field="results")
    groups: dict[str, list[int]] = {"all": list(range(len(items)))}
    for i, it in enumerate(items):
        groups.setdefault(f"axis {_axis(it)}", []).append(i)
    out = {}
    for name, members in groups.items():
        rs = [results[i] for i in members]
        n = len(rs)
        idx = bootstrap_indices(n, n_boot=N_BOOT, seed=seed)
        k = sum(r.n_consistent == 1 for r in rs)
        g = {"n": n, "unique": k, "unique_bound": clopper_pearson(k, n, sided="one-sided-lower").to_dict(),
             "exact_ceiling": _interval(np.array([r.exact_ceiling for r in rs]), idx),
             "partial_ceiling": _interval(np.array([r.partial_ceiling for r in rs]), idx)}
        if rs[0].handedness_ceiling is not None:
            g["handedness_ceiling"] = _interval(np.array([r.handedness_ceiling for r in rs]), idx)
            g["one_view_witness_share"] = float(np.mean([bool(r.one_view_witness) for r in rs]))
        reasons: dict[str, int] = {}
        for r in rs:
            for _, why in r.explanations:
                reasons[why] = reasons.get(why, 0) + 1
        g["explanations"] = dict(sorted(reasons.items()))
        out[name] = g
    if excluded:
        out["all"]["excluded"] = [dict(e) for e in excluded]
    return out


def run_task(structures, task: str, setup: ViewSetup, *, per_structure: int | None = None, seed: int = 0,
             delta: float = 0.01, eps: float = 1.0 / 255.0,
             chiral_only: bool = True) -> tuple[list[TaskItem], list[ItemResult], dict]:
    """Build, identify and summarise one task over ``structures`` (see ``build_items``). Handedness with
    ``chiral_only`` (default) excludes the achiral structures at tolerance δ (``handedness_exclusions``).

    Parameters
    ----------
    structures : iterable of (str, numpy.ndarray, numpy.ndarray)
        (id, positions in Cartesian Å, atomic numbers) per structure.
    task : str
        translation, rotation, zoom, trans-rot, rot-rot or handedness.
    setup : ViewSetup
        Cameras and style of the images.
    per_structure : int, optional
        Items per structure (default: every answer of the grid).
    seed : int
        Seed of the truths drawn.
    delta : float
        Oracle tolerance δ (Å).
    eps : float
        Intensity tolerance of the depth cue (1/255: one grey level).
    chiral_only : bool
        Handedness: exclude the structures achiral at δ.

    Returns
    -------
    tuple of (list of TaskItem, list of ItemResult, dict)
        The items, their results and the summary (per group and per axis, exclusions listed).
    """
    structures = list(structures)
    excl = handedness_exclusions(structures, delta) if task == "handedness" and chiral_only else {}
    items = build_items(structures, task, setup, per_structure=per_structure, seed=seed, exclude=excl)
    results = identify_all(items, delta=delta, eps=eps)
    return items, results, summarise(items, results, seed=seed, excluded=list(excl.values()))
