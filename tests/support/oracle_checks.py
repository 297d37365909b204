"""The oracle against its definition twin (``naive.oracle_reconstruct``) on what the definition decides."""

from __future__ import annotations

import numpy as np

from tests.support import naive
from viewcert.oracle.triangulate import reconstruct


def assert_agrees_with_twin(obs, structure, *, lattice=None, **kw):
    """Kernel against the definition twin (naive.oracle_reconstruct) on what the definition decides:
    (a) under Theorem 1's precondition both recover every atom within δ; (b) in the decided phantom regime
    (``decided_phantom_regime``) Φ_δ = ∅ for one exactly when for the other; (c) there, when the twin's
    phantoms are well separated (same-label phantoms > 2δ apart, so no merge can join or split them) both
    report the same number of phantoms. ``merge="greedy"``: the released rules decide every point and its
    first-come order, so points and labels must be equal, in order. Returns (rec, ref, decided)."""
    rec = reconstruct(obs, lattice=lattice, **kw)
    ref = naive.oracle_reconstruct(obs, lattice=lattice, **kw)
    d3 = rec.delta_3d
    if kw.get("merge", "deterministic" if kw.get("pairs", "all") == "all" else "greedy") == "greedy":
        assert np.allclose(rec.points, ref["points"], atol=1e-9) and np.array_equal(rec.labels, ref["labels"])
        return rec, ref, True
    if precondition_holds(obs, structure, d3, kw.get("visibility", "strict")):  # (a)
        for pts, labs in ((rec.points, rec.labels), (ref["points"], ref["labels"])):
            missing = naive.oracle_phantoms(structure.positions, structure.numbers, pts, labs, d3, lattice)
            assert not missing, (missing, rec.n_points, len(ref["points"]))
    decided = decided_phantom_regime(obs, structure, kw["delta"], kw)
    if decided:
        ph_k = naive.oracle_phantoms(rec.points, rec.labels, structure.positions, structure.numbers, d3, lattice)
        ph_t = naive.oracle_phantoms(ref["points"], ref["labels"], structure.positions, structure.numbers, d3,
                                     lattice)
        assert (not ph_k) == (not ph_t), (len(ph_k), len(ph_t))  # (b)
        tw = [(ref["points"][i], ref["labels"][i]) for i in ph_t]
        separated = all(z1 != z2 or np.linalg.norm(naive.oracle_min_image(x1 - x2, lattice)[0]) > 2 * d3
                        for i, (x1, z1) in enumerate(tw) for x2, z2 in tw[i + 1:])
        if separated:
            assert len(ph_k) == len(ph_t), (len(ph_k), len(ph_t))  # (c)
    return rec, ref, decided


def precondition_holds(obs, structure, delta_3d, visibility="strict") -> bool:
    """Theorem 1's precondition (docs/reference.md, "Phantoms and certification"): ideal observations of every atom in every
    view (no noise, no occlusion), same-label atoms > 2δ apart (minimum image), two independent views."""
    m = obs.model
    if m.sigma or m.occlusion or visibility != "strict":
        return False
    n_tiles = int(np.prod(m.tiling))
    if any(len(v) != structure.n_atoms * n_tiles for v in obs.views):
        return False
    dirs = [np.asarray(v.camera.rotation, dtype=float)[2] for v in obs.views]
    if not any(np.linalg.norm(np.cross(a, b)) > 1e-6 for i, a in enumerate(dirs) for b in dirs[i + 1:]):
        return False
    pos, num, lat = structure.positions, structure.numbers, structure.lattice
    return all(np.linalg.norm(naive.oracle_min_image(pos[j] - pos[i], lat)[0]) > 2 * delta_3d
               for i in range(len(pos)) for j in range(i + 1, len(pos)) if num[i] == num[j])


def decided_phantom_regime(obs, structure, delta, kw) -> bool:
    """Whether the definition alone decides Φ_δ, so the kernel's heuristics cannot change it. Needs the
    exhaustive tuple census (orthographic, δ in Å, strict, single cell, all pairs, deterministic merge) and a
    margin: no tuple whose point is not an atom has its largest residual in the band [δ/2, 2δ], and none with
    residual < δ/2 lies within [δ/2, 2δ] of a same-label atom. Why this band: the definition verifies the
    *seed pair's* point within δ in the other views, the kernel verifies the point refitted after
    nearest-point association within a wider search radius (w·δ·(1 + √2/√(1 − |cos θ|)), up to 4 rounds),
    so a tuple whose residual is comparable to δ (a factor 2 either side) can be reached by one and not the
    other; a tuple above 2δ is rejected by both, one well below δ is reached from every seed pair of its own
    by both. Likewise a merged point moves by up to δ (twin: average; kernel: cluster refit), so a point
    within [δ/2, 2δ] of an atom may be a phantom for one and not for the other."""
    if any(v.camera.kind != "orthographic" for v in obs.views) or obs.model.tiling != (1, 1, 1):
        return False
    if kw.get("delta_unit", "angstrom") != "angstrom" or kw.get("visibility", "strict") != "strict":
        return False
    if kw.get("pairs", "all") != "all" or kw.get("merge", "deterministic") != "deterministic":
        return False
    lat = structure.lattice
    for x, z, _, ratio in naive.definition_tuple_residuals(obs, delta=delta, upto=2.0):
        dist = min(np.linalg.norm(naive.oracle_min_image(x - p, lat)[0])
                   for p, zz in zip(structure.positions, structure.numbers, strict=True) if zz == z)
        if dist <= 1e-7:
            continue  # an atom's own tuple (ideal observations: residual 0)
        if 0.5 <= ratio <= 2.0 or (ratio < 0.5 and 0.5 * delta <= dist <= 2 * delta):
            return False
    return True
