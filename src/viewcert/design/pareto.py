"""The design table: per protocol, δ* and δ_exact quantiles, phantom items per δ and oracle, κ, informative
occlusion, and the Maas-style predicted false pairs per orthographic view pair. Used by ``viewcert design
--pareto`` and ``benchmarks/bench_design.py``. Units: Å; quantiles over structures (min, 5th percentile =
the ⌈0.05·n⌉-th smallest, median), capped at ``cap``."""

from __future__ import annotations

import itertools

import numpy as np

from viewcert.cameras.conditioning import protocol_kappa
from viewcert.cameras.policy import FramingPolicy, frame
from viewcert.design.designer import both_margins
from viewcert.design.occlusion import protocol_occlusion
from viewcert.observe import ObservationModel, observe
from viewcert.oracle import analyse, reconstruct
from viewcert.stats import empirical_percentile

DELTAS = (0.01, 0.05, 0.15)
BASELINES = ("render-ceiling-5", "render-ceiling-5-offaxis", "axes-3", "axes-6")
PER_VIEW = FramingPolicy(molecule_scale="per-view")  # every view fitted on its own, crystals and molecules


def margin_stats(structures, protocol, cap: float = 0.6) -> dict:
    """Quantiles of δ* and δ_exact (Å, capped at ``cap``; ``designer.both_margins``): minimum, 5th percentile
    (``stats.empirical_percentile``) and median."""
    star, exact = both_margins(structures, np.array([v.rotation for v in protocol.views]), cap)
    out: dict = {"cap": cap}
    for key, v in (("delta_star", star), ("delta_exact", exact)):
        out[key] = {"min": float(v.min()), "p5": empirical_percentile(v, 5), "median": float(np.median(v))}
    return out


def phantom_census(structures, protocol, deltas=DELTAS, pairs_modes=("first", "all")) -> dict:
    """Items with Φ_δ ≠ ∅ per oracle (first pair / all pairs) and δ, ideal single-cell observations."""
    out = {f"{m}@{d:g}": 0 for m in pairs_modes for d in deltas}
    for s in structures:
        obs = observe(s, frame(protocol, s, PER_VIEW), ObservationModel())
        lat = s.lattice if s.is_periodic else None
        for m in pairs_modes:
            for d in deltas:
                out[f"{m}@{d:g}"] += int(analyse(reconstruct(obs, delta=d, pairs=m, lattice=lat), s, d).n_phantoms > 0)
    return out


def maas_predicted(structures, protocol, deltas=DELTAS) -> dict:
    """Per independent view pair: ordered same-label pairs i ≠ j with |n·(p_i − p_j)| ≤ δ summed over the
    structures, n = the unit axis shared by both views (d_a × d_b); independent of the angle between them."""
    out = {}
    for va, vb in itertools.combinations(protocol.views, 2):
        n = np.cross(va.direction, vb.direction)
        if np.linalg.norm(n) < 1e-9:
            continue
        n = n / np.linalg.norm(n)
        counts = dict.fromkeys(deltas, 0)
        for s in structures:
            for z in np.unique(s.numbers):
                e = s.positions[s.numbers == z] @ n
                g = np.abs(e[:, None] - e[None, :])[~np.eye(len(e), dtype=bool)]
                for d in deltas:
                    counts[d] += int((g <= d).sum())
        out[f"{va.name}|{vb.name}"] = {f"{d:g}": c for d, c in counts.items()}
    return out


def protocol_row(structures, protocol, *, deltas=DELTAS, cap: float = 0.6) -> dict:
    """One row of the design table for ``protocol`` over ``structures``."""
    occ = protocol_occlusion(structures, protocol)
    return {"protocol": protocol.name, "views": len(protocol), "margins": margin_stats(structures, protocol, cap),
            "kappa_max": protocol_kappa(protocol)["max"],
            "informative_occlusion": float(np.mean([r["informative"] for r in occ.values()])),
            "phantom_items": phantom_census(structures, protocol, deltas),
            "maas_predicted": maas_predicted(structures, protocol, deltas)}


def flat_row(row: dict) -> dict:
    """The row as flat CSV columns."""
    m = row["margins"]
    out = {"protocol": row["protocol"], "views": row["views"]}
    for key in ("delta_star", "delta_exact"):
        for q, v in m[key].items():
            out[f"{key}_{q}"] = f"{v:.6g}"
    out["kappa_max"] = f"{row['kappa_max']:.6g}"
    out["informative_occlusion"] = f"{row['informative_occlusion']:.6g}"
    for k, v in row["phantom_items"].items():
        out[f"phantom_items_{k}"] = v
    return out
