"""viewcert.oracle: kernels against their naive twins, the full oracle against its twin on seeded and
hypothesis-generated structures and cameras, invariances, constructed phantoms, occlusion, tiling, failures
as values. Tests marked ``nojit`` also run under NUMBA_DISABLE_JIT=1 (Makefile's second pass)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import naive
from tests.support.oracle_checks import assert_agrees_with_twin
from tests.support.strategies import (
    AXIS_ROTATIONS,
    crystals,
    grid_molecules,
    molecules,
    oracle_camera_sets,
    oracle_orthographic,
    oracle_perspective,
    oracle_random_molecule,
    oracle_tiled_cell,
    rotations,
)
from viewcert.errors import InputError
from viewcert.observe.project import ObservationModel, Observations, ViewObservation, observe
from viewcert.oracle import _kernels as K
from viewcert.oracle.noise import delta_for_sigma, noise_sweep
from viewcert.oracle.phantoms import analyse, min_same_label_distance, nearest_same_label
from viewcert.oracle.triangulate import Reconstruction, reconstruct, reconstruct_batch
from viewcert.structures import Structure

FEW = settings(max_examples=15)
SOME = settings(max_examples=30)


# ----------------------------------------------------------------------------------------------- helpers
def ideal(structure, cams, tiling=(1, 1, 1), occlusion=False):
    return observe(structure, cams, ObservationModel(tiling=tiling, occlusion=occlusion))


def match_sets(p1, l1, p2, l2, lattice=None, tol=1e-7):
    """True when both point sets have the same size and every point of p1 has a same-label partner in p2
    within tol (minimum image when periodic), one to one."""
    p1, p2 = np.asarray(p1).reshape(-1, 3), np.asarray(p2).reshape(-1, 3)
    if len(p1) != len(p2) or sorted(np.asarray(l1).tolist()) != sorted(np.asarray(l2).tolist()):
        return False
    used = np.zeros(len(p2), dtype=bool)
    for x, z in zip(p1, l1, strict=True):
        found = False
        for j in range(len(p2)):
            if used[j] or l2[j] != z:
                continue
            v, _ = naive.oracle_min_image(p2[j] - x, lattice)
            if np.linalg.norm(v) <= tol:
                used[j] = found = True
                break
        if not found:
            return False
    return True


# ----------------------------------------------------------------------------------------------- kernels
@pytest.mark.nojit
def test_solve3_and_triangulate_match_numpy():
    rng = np.random.default_rng(1)
    for _ in range(50):
        a = rng.normal(size=(3, 3))
        a = a @ a.T + 0.1 * np.eye(3)
        b = rng.normal(size=3)
        x, ok = K.solve3(a, b)
        assert ok and np.allclose(x, naive.oracle_solve3(a, b), atol=1e-10)
        n = rng.integers(2, 6)
        o = rng.normal(size=(n, 3)) * 5
        d = rng.normal(size=(n, 3))
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        x, ok = K.triangulate_rays(o, d, np.arange(n))
        assert ok and np.allclose(x, naive.oracle_triangulate(o, d), atol=1e-9)
    x, ok = K.solve3(np.ones((3, 3)), np.ones(3))
    assert not ok
    # parallel rays cannot be triangulated
    _, ok = K.triangulate_rays(np.array([[0.0, 0, 0], [1.0, 0, 0]]), np.array([[0.0, 0, 1], [0.0, 0, 1]]),
                               np.array([0, 1]))
    assert not ok


@pytest.mark.nojit
def test_orthographic_closed_form_and_line_gap():
    rng = np.random.default_rng(2)
    for _ in range(30):
        k = rng.integers(2, 6)
        rots = [naive.rotation_about(rng.normal(size=3), rng.uniform(0, 360)) for _ in range(k)]
        cens = [rng.normal(size=3) for _ in range(k)]
        x = rng.normal(size=3) * 3
        plane = [(r @ (x - c))[:2] + rng.normal(size=2) * 0.01 for r, c in zip(rots, cens, strict=True)]
        o = np.array([c + y[0] * r[0] + y[1] * r[1] for r, c, y in zip(rots, cens, plane, strict=True)])
        d = np.array([-r[2] for r in rots])
        xk, ok = K.triangulate_rays(o, d, np.arange(k))
        assert ok
        assert np.allclose(xk, naive.oracle_triangulate_orthographic(rots, cens, plane), atol=1e-9)
        g = K.line_gap(o[0], d[0], o[1], d[1])
        assert g == pytest.approx(naive.oracle_line_gap(o[0], d[0], o[1], d[1]), abs=1e-9)
        # for two orthographic rays the midpoint has residual gap/2 in both views
        x2, _ = K.triangulate_rays(o, d, np.array([0, 1]))
        for j in (0, 1):
            assert np.linalg.norm((rots[j] @ (x2 - cens[j]))[:2] - plane[j]) == pytest.approx(g / 2, abs=1e-9)


@pytest.mark.nojit
def test_grid_nearest_matches_scan():
    rng = np.random.default_rng(3)
    for trial in range(20):
        m = int(rng.integers(1, 60))
        w = rng.uniform(-5, 5, size=(m, 2))
        if trial % 2:
            w = np.round(w)  # exact coincidences and ties
        lab = rng.integers(0, 3, size=m)
        sites = np.arange(m)
        h = float(rng.uniform(0.05, 2.0))
        ox, oy, nx, ny, start, gs = K.build_grid(w, lab, sites, h, 3)
        for _ in range(30):
            q = rng.uniform(-6, 6, size=2)
            z = int(rng.integers(0, 3))
            rad = float(rng.uniform(0, 3))
            p, d = K.grid_nearest(w, start, 0, gs, 0, ox, oy, nx, ny, h, z, q[0], q[1], rad)
            assert p == naive.oracle_nearest(w, lab, q, z, rad)


@pytest.mark.nojit
def test_collapse_lexsort_box():
    rng = np.random.default_rng(4)
    w = np.round(rng.uniform(0, 3, size=(40, 2)))
    lab = rng.integers(0, 2, size=40)
    is_site = K.collapse_sites(w, lab, 1e-6)
    for i in range(40):
        first = min(j for j in range(40) if lab[j] == lab[i] and np.array_equal(w[j], w[i]))
        assert is_site[i] == (first == i)
    cols = rng.integers(-3, 3, size=(50, 4))
    assert np.array_equal(K.lexsort_rows(cols), np.lexsort(cols.T[::-1]))
    for _ in range(30):
        tiling = tuple(int(t) for t in rng.integers(1, 3, size=3))
        tr = rng.integers(-1, 3, size=(int(rng.integers(1, 12)), 3))
        assert K._box_ok(tr, np.array(tiling)) == naive.oracle_box_ok(tr, tiling)
    box = np.array([(a, b, c) for a in range(2) for b in range(2) for c in range(2)]) - 1
    assert K._box_ok(box, np.array([2, 2, 2])) and not K._box_ok(box[:-1], np.array([2, 2, 2]))


@pytest.mark.nojit
@FEW
@given(crystals(min_atoms=2, max_atoms=8), st.floats(0.3, 3.0))
def test_components_and_greedy_merge(cell, h):
    lat = cell.lattice
    inv = np.linalg.inv(lat)
    rng = np.random.default_rng(cell.n_atoms)
    # candidate clouds: atoms plus jittered copies, some across the cell boundary
    pos = np.concatenate([cell.positions, cell.positions + rng.normal(size=cell.positions.shape) * 0.3 * h,
                          cell.positions + lat[0]])
    lab = np.tile(cell.numbers, 3)
    _, lr = K.label_ranks(lab)
    for periodic in (False, True):
        L = lat if periodic else None
        want = naive.oracle_components(len(pos), naive.oracle_neighbour_pairs(pos, lab, L, h, False))
        assert K.components_within(pos, lr, periodic, lat, inv, h).tolist() == want
        kept = K.merge_greedy(pos, lab, h, periodic, lat, inv)
        assert kept.tolist() == naive.oracle_merge_greedy(pos, lab, h, L)
        for x in pos[:5]:
            assert np.allclose(K.wrap_point(x, lat, inv), naive.oracle_wrap(x, lat), atol=1e-12)
            dv = x - pos[-1]
            v, n = K.min_image(dv, lat, inv)
            vn, _ = naive.oracle_min_image(dv, lat)
            assert np.linalg.norm(v) == pytest.approx(np.linalg.norm(vn), abs=1e-12)
            assert np.allclose(dv - v, n @ lat, atol=1e-9)


# ----------------------------------------------------------------------------------------------- whole oracle vs twin
@pytest.mark.nojit
def test_seeded_small_cases_match_twin():
    """A few small seeded cases of every mode; also the nojit pass's coverage of reconstruct_one."""
    mol = oracle_random_molecule(8, seed=5)
    rots = [naive.rotation_about(a, t) for a, t in (((1, 0, 0), 0), ((0, 1, 0), 70), ((1, 1, 0), 50), ((1, 2, 3), 33))]
    ortho = [oracle_orthographic(r, name=f"o{i}") for i, r in enumerate(rots)]
    persp = [oracle_perspective(r, name=f"p{i}") for i, r in enumerate(rots)]
    obs = ideal(mol, ortho)
    assert_agrees_with_twin(obs, mol, delta=0.05)
    assert_agrees_with_twin(obs, mol, delta=0.05, pairs="first")
    assert_agrees_with_twin(Observations(obs.views[:2], obs.model), mol, delta=0.3)
    assert_agrees_with_twin(ideal(mol, persp), mol, delta=0.05)
    assert_agrees_with_twin(ideal(mol, persp), mol, delta=1.0, delta_unit="px")
    cell, _ = oracle_tiled_cell(8, seed=1, cell_atoms=3)
    cams = [oracle_orthographic(r, center=cell.lattice.sum(axis=0) / 2) for r in rots[:3]]
    assert_agrees_with_twin(ideal(cell, cams), cell, delta=0.05, lattice=cell.lattice)
    assert_agrees_with_twin(ideal(cell, cams, tiling=(2, 1, 1)), cell, delta=0.05, lattice=cell.lattice)
    assert_agrees_with_twin(ideal(cell, cams), cell, delta=0.05, lattice=cell.lattice, merge="greedy")


@SOME
@given(molecules(min_atoms=2, max_atoms=12), oracle_camera_sets("orthographic"), st.floats(0.005, 0.4))
def test_orthographic_molecules_match_twin(mol, cams, delta):
    assert_agrees_with_twin(ideal(mol, cams), mol, delta=delta)


@SOME
@given(grid_molecules(), st.lists(st.sampled_from("xyz"), min_size=2, max_size=3, unique=True),
       st.integers(0, 2), st.floats(0.01, 0.2))
def test_grid_molecules_with_axis_views_match_twin(mol, axes, n_oblique, delta):
    """Exact coincidences of projections (the phantom regime)."""
    cams = [oracle_orthographic(AXIS_ROTATIONS[a], name=a) for a in axes]
    cams += [oracle_orthographic(naive.rotation_about((1, 2, 3 + i), 37 + 20 * i), name=f"ob{i}")
             for i in range(n_oblique)]
    assert_agrees_with_twin(ideal(mol, cams), mol, delta=delta)


@FEW
@given(molecules(min_atoms=2, max_atoms=10), oracle_camera_sets("perspective"), st.floats(0.01, 0.3))
def test_perspective_molecules_match_twin(mol, cams, delta):
    assert_agrees_with_twin(ideal(mol, cams), mol, delta=delta)
    assert_agrees_with_twin(ideal(mol, cams), mol, delta=delta * 20, delta_unit="px")


@FEW
@given(molecules(min_atoms=2, max_atoms=10), oracle_camera_sets("mixed", min_views=3))
def test_mixed_cameras_match_twin(mol, cams):
    assert_agrees_with_twin(ideal(mol, cams), mol, delta=0.05)


@FEW
@given(crystals(min_atoms=1, max_atoms=6), st.data())
def test_crystals_match_twin(cell, data):
    centre = cell.lattice.sum(axis=0) / 2
    cams = data.draw(oracle_camera_sets("orthographic", min_views=2, max_views=4, target=centre))
    delta = data.draw(st.floats(0.005, 0.2))
    assert_agrees_with_twin(ideal(cell, cams), cell, delta=delta, lattice=cell.lattice)
    small = Structure(cell.positions[:3], cell.numbers[:3], cell.lattice)
    assert_agrees_with_twin(ideal(small, cams[:3], tiling=(2, 1, 1)), small, delta=delta, lattice=cell.lattice)


@SOME
@given(st.one_of(molecules(min_atoms=2, max_atoms=12), grid_molecules()), st.data())
def test_first_mode_greedy_matches_twin_exactly(mol, data):
    """pairs='first' / merge='greedy': the study's released rules decide every point and the first-come
    order, so arrays are compared, not sets; of the support only the seed pair is decided (the rules verify
    "some" same-label point in the other views, not which one)."""
    cams = data.draw(oracle_camera_sets("orthographic", min_views=2, max_views=5))
    if data.draw(st.booleans()):
        cams = (oracle_orthographic(AXIS_ROTATIONS["x"]), oracle_orthographic(AXIS_ROTATIONS["y"])) + cams
    delta = data.draw(st.floats(0.01, 0.5))
    obs = ideal(mol, cams)
    rec = reconstruct(obs, delta=delta, pairs="first")
    ref = naive.oracle_reconstruct(obs, delta=delta, pairs="first")
    assert rec.merge == "greedy"
    assert np.allclose(rec.points, ref["points"], atol=1e-9)
    assert np.array_equal(rec.labels, ref["labels"])
    assert np.array_equal(rec.support[:, :2], ref["support"][:, :2])
    rec_all = reconstruct(obs, delta=delta, pairs="all", merge="greedy")
    ref_all = naive.oracle_reconstruct(obs, delta=delta, pairs="all", merge="greedy")
    assert np.allclose(rec_all.points, ref_all["points"], atol=1e-9)


@FEW
@given(molecules(min_atoms=3, max_atoms=12), oracle_camera_sets("orthographic", min_views=3))
def test_occlusion_mode_matches_twin(mol, cams):
    """Definition step 6: an atom drawn in every view but at most one, where it is hidden by a nearer atom's
    disc, is recovered by both (same-label atoms > 2δ apart). Which points get the occluded flag is not
    compared: a point seen in every view may also be reachable with one view excused (the kernel tries the
    excuse only after a failed full tuple, the definition does not rank the two)."""
    obs = ideal(mol, cams, occlusion=True)
    delta = 0.02
    rec = reconstruct(obs, delta=delta, visibility="occlusion")
    ref = naive.oracle_reconstruct(obs, delta=delta, visibility="occlusion")
    seen = [sum(a in set(v.atom_index.tolist()) for v in obs.views) for a in range(mol.n_atoms)]
    if mol.min_same_label_distance() <= 2 * delta:
        return
    want = [a for a in range(mol.n_atoms) if seen[a] >= len(cams) - 1]
    for pts, labs in ((rec.points, rec.labels), (ref["points"], ref["labels"])):
        missing = naive.oracle_phantoms(mol.positions[want], mol.numbers[want], pts, labs, delta)
        assert not missing, (missing, seen)


def check_against_definition(mol, cams, delta):
    """Kernel against the definition itself (``naive.definition_consistent_tuples``: every same-label tuple, one
    point per view, whose least-squares point lies within δ of each of its rays), not a twin of the kernel's
    search. The definition decides (1) that every atom is recovered (its tuple has residual 0: Theorem 1's
    regime, ideal observations); (2) that every kernel point within δ in every view is the least-squares
    point of a consistent tuple (its reported support); (3) exactly which points are accepted when nothing
    needs choosing: the consistent points are pairwise > 2δ apart within a label (no merge) and either there
    are two views (a tuple is a seed pair: nothing to associate) or no 2D point is in two tuples. Otherwise the
    kernel's nearest-point association and cluster refit (search radius, refit rounds: heuristics the
    definition does not rank) choose among overlapping tuples, so only (1) and (2) are asserted there.
    Returns whether (3) applied."""
    obs = ideal(mol, cams)
    rec = reconstruct(obs, delta=delta)
    tuples = naive.definition_consistent_tuples(obs, delta=delta)
    for x, z in zip(mol.positions, mol.numbers, strict=True):  # (1)
        assert any(lab == z and np.linalg.norm(p - x) <= 1e-7 for p, lab in zip(rec.points, rec.labels, strict=True))
    consistent = {(lab, sup) for _, lab, sup in tuples}
    for p, lab, sup, r in zip(rec.points, rec.labels, rec.support, rec.ratios, strict=True):  # (2)
        if r <= 1.0 and (sup >= 0).all():
            # coincident 2D points: the kernel reports the lowest index of a collapsed site
            assert (int(lab), tuple(int(i) for i in sup)) in consistent or any(
                lab2 == lab and np.linalg.norm(x2 - p) <= 1e-7 for x2, lab2, _ in tuples), (p, lab, sup)
    pts = []  # coincident 2D points give identical tuples' points: one 3D point (the kernel collapses sites)
    for x, lab, _ in tuples:
        if not any(l2 == lab and np.linalg.norm(x2 - x) <= 1e-9 for x2, l2 in pts):
            pts.append((x, lab))
    shared = len({(k, s[k]) for _, _, s in tuples for k in range(len(cams))}) < len(tuples) * len(cams)
    close = any(l1 == l2 and np.linalg.norm(x1 - x2) <= 2 * delta
                for i, (x1, l1) in enumerate(pts) for x2, l2 in pts[i + 1:])
    decided = (len(cams) == 2 or not shared) and not close
    if decided:  # (3)
        assert match_sets(rec.points, rec.labels, [x for x, _ in pts], [lab for _, lab in pts], tol=1e-7)
    return decided


@SOME
@given(molecules(min_atoms=2, max_atoms=8), oracle_camera_sets("orthographic", min_views=2, max_views=4),
       st.floats(0.005, 0.3))
def test_kernel_agrees_with_the_definition_where_it_decides(mol, cams, delta):
    check_against_definition(mol, cams, delta)


@FEW
@given(grid_molecules(max_atoms=8), st.lists(st.sampled_from("xyz"), min_size=2, max_size=3, unique=True),
       st.floats(0.01, 0.2))
def test_kernel_agrees_with_the_definition_in_the_phantom_regime(mol, axes, delta):
    """Axis views of grid molecules: projections coincide exactly, phantoms are common (the case the
    definition's Φ_δ is about; in a probe of 150 examples (3) applied to 127, 91 of them with phantoms)."""
    cams = [oracle_orthographic(AXIS_ROTATIONS[a], name=a) for a in axes]
    check_against_definition(mol, cams, delta)
    assert_agrees_with_twin(ideal(mol, cams), mol, delta=delta)


@pytest.mark.parametrize("seed", range(8))
def test_noisy_observations_match_twin(seed):
    """Noise comparable to δ (orthographic views, so the tuple census decides the phantom regime): the
    released rules (pairs='first', merge='greedy') must give the same points in the same order; the default
    oracle the same Φ_δ emptiness and phantom count where ``decided_phantom_regime`` holds (Theorem 1 does
    not apply to noisy observations, so recovery itself is not compared)."""
    from tests.support.strategies import oracle_random_rotations

    rng = np.random.default_rng(seed)
    delta = float(rng.uniform(0.03, 0.25))
    model = ObservationModel(sigma=delta * float(rng.uniform(0.1, 0.5)), sigma_unit="angstrom", seed=seed)
    mol = oracle_random_molecule(int(rng.integers(4, 12)), seed=seed, density=0.3, min_dist=1.0, elements=(6, 8))
    rots = oracle_random_rotations(int(rng.integers(3, 6)), seed)
    obs = observe(mol, [oracle_orthographic(r) for r in rots], model)
    for kw in ({}, {"pairs": "first"}, {"merge": "greedy"}):
        assert_agrees_with_twin(obs, mol, delta=delta, **kw)


# ----------------------------------------------------------------------------------------------- properties
@pytest.mark.nojit
def test_study_twin_matches_first_mode_on_a_grid_molecule():
    """study_oracle (ASE convention, raw coordinates) and pairs='first' (viewcert cameras) agree."""
    from viewcert.cameras.pose import ase_rotation_matrix, from_ase_string
    from viewcert.cameras.protocols import RENDER_CEILING_5

    mol = Structure(np.array([(0, 0, 0), (1.5, 0, 0), (0, 1.5, 0), (1.5, 1.5, 1.5), (0, 0, 1.5), (3, 1.5, 0)], float),
                    [6, 6, 8, 6, 8, 6])
    cams = [oracle_orthographic(from_ase_string(s), center=(0.7, 0.3, 0.2)) for s in RENDER_CEILING_5.values()]
    for sub in ([0, 1], [0, 1, 2], [0, 1, 3, 4], [1, 2]):
        pts, z = naive.study_oracle(mol.positions, mol.numbers,
                                    [ase_rotation_matrix(list(RENDER_CEILING_5.values())[i]) for i in sub], 0.15)
        rec = reconstruct(ideal(mol, [cams[i] for i in sub]), delta=0.15, pairs="first")
        assert np.allclose(rec.points, pts, atol=1e-9) and np.array_equal(rec.labels, z)


@FEW
@given(molecules(min_atoms=2, max_atoms=12), oracle_camera_sets("orthographic", min_views=3, max_views=5))
def test_generic_views_recover_molecules_exactly(mol, cams):
    rec = reconstruct(ideal(mol, cams), delta=1e-5)
    rep = analyse(rec, mol)
    assert rec.ok and rep.recovered_all and rep.max_position_error < 1e-8
    assert rep.separation_ok


@pytest.mark.nojit
def test_perspective_recovery_exact():
    mol = oracle_random_molecule(10, seed=9)
    cams = [oracle_perspective(naive.rotation_about(a, t)) for a, t in (((1, 0, 0), 10), ((0, 1, 0), 80),
                                                                        ((1, 1, 1), 120))]
    rec = reconstruct(ideal(mol, cams), delta=1e-4)
    rep = analyse(rec, mol)
    assert rep.exact and rep.max_position_error < 1e-8
    rec_px = reconstruct(ideal(mol, cams), delta=0.01, delta_unit="px")
    assert analyse(rec_px, mol).exact


@FEW
@given(molecules(min_atoms=2, max_atoms=10), oracle_camera_sets("orthographic", min_views=2, max_views=4),
       rotations(), st.tuples(*(st.floats(-20, 20) for _ in range(3))), st.floats(0.01, 0.3))
def test_invariant_under_rigid_motion(mol, cams, q, t, delta):
    t = np.array(t)
    moved = Structure(mol.positions @ q.T + t, mol.numbers)
    cams2 = [oracle_orthographic(c.rotation @ q.T, center=q @ c.center + t, scale=c.scale) for c in cams]
    r1 = reconstruct(ideal(mol, cams), delta=delta)
    r2 = reconstruct(ideal(moved, cams2), delta=delta)
    assert match_sets(r1.points @ q.T + t, r1.labels, r2.points, r2.labels, tol=1e-6)
    assert r1.margin == pytest.approx(r2.margin, rel=1e-6)


@FEW
@given(crystals(min_atoms=1, max_atoms=6), rotations(), st.floats(0.01, 0.2))
def test_periodic_invariant_under_rigid_motion(cell, q, delta):
    centre = cell.lattice.sum(axis=0) / 2
    cams = [oracle_orthographic(naive.rotation_about(a, th), center=centre)
            for a, th in (((1, 0, 0), 0), ((0, 1, 0), 75), ((1, 1, 1), 40))]
    moved = Structure(cell.positions @ q.T, cell.numbers, cell.lattice @ q.T)
    cams2 = [oracle_orthographic(c.rotation @ q.T, center=q @ c.center, scale=c.scale) for c in cams]
    r1 = reconstruct(ideal(cell, cams), delta=delta, lattice=cell.lattice)
    r2 = reconstruct(ideal(moved, cams2), delta=delta, lattice=moved.lattice)
    assert match_sets(r1.points @ q.T, r1.labels, r2.points, r2.labels, moved.lattice, tol=1e-6)


def _permuted(obs: Observations, rng) -> tuple[Observations, list[np.ndarray]]:
    views, perms = [], []
    for v in obs.views:
        p = rng.permutation(len(v))
        views.append(ViewObservation(v.camera, v.uv[p], v.depth[p], v.labels[p], v.atom_index[p], v.tile[p]))
        perms.append(p)
    return Observations(tuple(views), obs.model, obs.structure_id), perms


@SOME
@given(st.one_of(molecules(min_atoms=2, max_atoms=12), grid_molecules()), st.data())
def test_invariant_under_permutation_of_observations(mol, data):
    cams = data.draw(oracle_camera_sets("orthographic", min_views=2, max_views=4))
    if data.draw(st.booleans()):
        cams = (oracle_orthographic(AXIS_ROTATIONS["x"]), oracle_orthographic(AXIS_ROTATIONS["z"])) + cams[:1]
    delta = data.draw(st.floats(0.01, 0.3))
    obs = ideal(mol, cams)
    r1 = reconstruct(obs, delta=delta)
    obs2, perms = _permuted(obs, np.random.default_rng(data.draw(st.integers(0, 1000))))
    r2 = reconstruct(obs2, delta=delta)
    assert r1.n_points == r2.n_points
    assert np.array_equal(r1.labels, r2.labels)  # canonical order: same order, not only same set
    assert np.allclose(r1.points, r2.points, atol=1e-9)
    # supports are the same 2D points, renamed by the permutation (up to coincident duplicates)
    for k, p in enumerate(perms):
        a = obs.views[k].uv[r1.support[:, k]]
        b = obs.views[k].uv[p[r2.support[:, k]]]  # p maps a permuted index back to the original one
        assert np.allclose(a, b, atol=1e-9)
    assert r1.margin == pytest.approx(r2.margin, rel=1e-9)
    # and permuting the order of the views does not change the set of points either
    rev = Observations(obs.views[::-1], obs.model)
    r3 = reconstruct(rev, delta=delta)
    assert match_sets(r1.points, r1.labels, r3.points, r3.labels, tol=1e-7)


# ----------------------------------------------------------------------------------------------- constructed cases
@pytest.mark.nojit
def test_constructed_phantom_where_back_projections_cross():
    """Atoms A (0,1,0) and B (1,0,0) of one element seen along x and along y: their rays also cross at
    (0,0,0) and (1,1,0). Those two points are consistent with both views: Φ_δ = {(0,0,0), (1,1,0)}. A view
    along z removes them."""
    mol = Structure(np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]) * 2.0, [6, 6])
    cx, cy, cz = (oracle_orthographic(AXIS_ROTATIONS[a], name=a) for a in "xyz")
    rec = reconstruct(ideal(mol, [cx, cy]), delta=0.01)
    rep = analyse(rec, mol)
    assert rep.n_phantoms == 2 and rep.recovered_all and not rep.unique
    got = sorted(map(tuple, np.round(rep.phantoms, 9).tolist()))
    assert got == [(0.0, 0.0, 0.0), (2.0, 2.0, 0.0)]
    rep3 = analyse(reconstruct(ideal(mol, [cx, cy, cz]), delta=0.01), mol)
    assert rep3.unique and rep3.exact and rep3.n_phantoms == 0
    # naive twin agrees
    ref = naive.oracle_reconstruct(ideal(mol, [cx, cy]), delta=0.01)
    assert match_sets(rec.points, rec.labels, ref["points"], ref["labels"])


@pytest.mark.nojit
def test_near_miss_margin():
    """Move B's z slightly: the crossing rays now miss by 0.03 Å, a near miss at δ = 0.01 (ratio 1.5 for
    each of the two phantom candidates), a phantom at δ = 0.02."""
    mol = Structure(np.array([[0.0, 2.0, 0.0], [2.0, 0.0, 0.03]]), [6, 6])
    cams = [oracle_orthographic(AXIS_ROTATIONS[a]) for a in "xy"]
    rec = reconstruct(ideal(mol, cams), delta=0.01)
    rep = analyse(rec, mol)
    assert rep.n_phantoms == 0 and rep.unique
    assert rep.margin == pytest.approx(1.5, rel=1e-9)
    assert rec.margin == pytest.approx(1.5, rel=1e-9)
    rep2 = analyse(reconstruct(ideal(mol, cams), delta=0.02), mol)
    assert rep2.n_phantoms == 2
    # near misses outside the window are not reported
    assert math.isinf(reconstruct(ideal(mol, cams), delta=0.01, near_miss_window=1.2).margin)


@pytest.mark.nojit
def test_zone_axis_tiled_cell_has_the_expected_phantoms():
    """Cubic cell (a = 3 Å), C at (0,0,0) and (1.5,1.5,0), drawn 2×2×2 and seen along a and b (zone axes):
    every translate of (0,1.5,0) and (1.5,0,0) is consistent with both views, so Φ = those two points; a
    view along c removes them. Translate-inconsistent candidates are counted, never reported."""
    lat = 3.0 * np.eye(3)
    cell = Structure(np.array([[0.0, 0.0, 0.0], [1.5, 1.5, 0.0]]), [6, 6], lat)
    centre = lat.sum(axis=0)
    cams = [oracle_orthographic(AXIS_ROTATIONS[a], center=centre, name=a) for a in "xyz"]
    obs = ideal(cell, cams[:2], tiling=(2, 2, 2))
    rec = reconstruct(obs, delta=0.01, lattice=lat)
    rep = analyse(rec, cell)
    assert rep.recovered_all and rep.n_phantoms == 2
    assert sorted(map(tuple, np.round(rep.phantoms, 9).tolist())) == [(0.0, 1.5, 0.0), (1.5, 0.0, 0.0)]
    assert any("zone axis" in w for w in rec.warnings)
    assert rec.n_points == 4
    ref = naive.oracle_reconstruct(obs, delta=0.01, lattice=lat)
    assert match_sets(rec.points, rec.labels, ref["points"], ref["labels"], lat)
    rec3 = reconstruct(ideal(cell, cams, tiling=(2, 2, 2)), delta=0.01, lattice=lat)
    assert analyse(rec3, cell).exact


@pytest.mark.nojit
def test_translate_consistency_rejects_partial_phantoms():
    """A phantom that is consistent in the single cell is rejected when one of its drawn translates is not
    matched: atoms C (0,0,0) and (1,1.5,0) in a 3×3×3 Å cell, seen along x and y. Single cell: two
    phantoms ((0,1.5,0), (1,0,0)). Tiled 2×1×1 along a: every translate is still matched (a is the x view's
    axis), so they stay; tiled 1×2×1: the y-translate of (1,0,0) ... is matched too; the census is exact
    against the twin either way."""
    lat = 3.0 * np.eye(3)
    lat[1, 0] = 0.7  # skew b so tiles along b shift the x view's projections
    cell = Structure(np.array([[0.0, 0.0, 0.0], [1.0, 1.5, 0.0]]), [6, 6], lat)
    cams = [oracle_orthographic(AXIS_ROTATIONS[a], center=(3, 3, 0)) for a in "xy"]
    single = analyse(reconstruct(ideal(cell, cams), delta=0.01, lattice=lat), cell)
    assert single.n_phantoms == 2
    for tiling in ((2, 1, 1), (1, 2, 1), (2, 2, 1)):
        obs = ideal(cell, cams, tiling=tiling)
        rec, ref, _ = assert_agrees_with_twin(obs, cell, delta=0.01, lattice=lat)
        assert rec.counts["translate_rejected"] == ref["translate_rejected"]
        assert analyse(rec, cell).recovered_all
    rec = reconstruct(ideal(cell, cams, tiling=(1, 2, 1)), delta=0.01, lattice=lat)
    assert rec.counts["translate_rejected"] > 0


@pytest.mark.nojit
def test_tiled_observations_recover_the_cell():
    cell, _ = oracle_tiled_cell(30, seed=2, cell_atoms=4)
    centre = cell.lattice.sum(axis=0)
    cams = [oracle_orthographic(naive.rotation_about(a, t), center=centre)
            for a, t in (((1, 0, 0), 0), ((0, 1, 0), 90), ((1, 0, 0), 90), ((1, 1, 1), 40))]
    rec = reconstruct(ideal(cell, cams, tiling=(2, 2, 2)), delta=0.01, lattice=cell.lattice)
    rep = analyse(rec, cell)
    assert rep.exact and rep.max_position_error < 1e-9
    f = np.linalg.solve(cell.lattice.T, rec.points.T).T
    assert (f >= 0).all() and (f < 1).all()


@pytest.mark.nojit
def test_occlusion_excuses_a_hidden_atom():
    """O at (0,0,−3) hides behind C at (0,0,0) in the view along z: strict misses it, occlusion recovers it
    and flags it as seen in K−1 of K views."""
    mol = Structure(np.array([[0.0, 0, 0], [0, 0, -3.0], [1.7, 0.3, 0.4], [-1.1, 1.6, -1.2]]), [6, 8, 6, 7])
    cams = [oracle_orthographic(AXIS_ROTATIONS["z"], name="z"),
            oracle_orthographic(naive.rotation_about((1, 0, 0), 70), name="a"),
            oracle_orthographic(naive.rotation_about((0, 1, 1), 110), name="b")]
    obs = ideal(mol, cams, occlusion=True)
    assert len(obs.views[0]) == 3  # the oxygen is hidden in the z view
    strict = analyse(reconstruct(obs, delta=0.01), mol)
    assert strict.missing_atoms == (1,)
    rec = reconstruct(obs, delta=0.01, visibility="occlusion")
    rep = analyse(rec, mol)
    assert rep.exact
    i = int(np.flatnonzero(rec.labels == 8)[0])
    assert rec.occluded[i] and rec.support[i, 0] == -1 and rec.occluded.sum() == 1
    assert rec.counts["occluded"] == 1


@pytest.mark.nojit
def test_delta_in_px_equals_angstrom_over_scale():
    mol = oracle_random_molecule(12, seed=3)
    cams = [oracle_orthographic(naive.rotation_about(a, t), scale=25.0) for a, t in (((1, 0, 0), 5), ((0, 1, 0), 70),
                                                                                   ((1, 1, 0), 130))]
    obs = ideal(mol, cams)
    a = reconstruct(obs, delta=0.1)
    b = reconstruct(obs, delta=2.5, delta_unit="px")
    assert np.allclose(a.points, b.points) and b.delta_3d == pytest.approx(0.1)


# ----------------------------------------------------------------------------------------------- values, errors
@pytest.mark.nojit
def test_failures_are_values():
    mol = oracle_random_molecule(5, seed=1)
    cx, cy = (oracle_orthographic(AXIS_ROTATIONS[a]) for a in "xy")
    one = reconstruct(ideal(mol, [cx]), delta=0.1)
    assert one.status == "failed" and "two views" in one.reason and one.n_points == 0
    obs = ideal(mol, [cx, cy])
    empty = Observations((obs.views[0], ViewObservation(cy, np.zeros((0, 2)), np.zeros(0), np.zeros(0, int),
                                                          np.zeros(0, int), np.zeros(0, int))), obs.model)
    r = reconstruct(empty, delta=0.1)
    assert r.status == "failed" and "no points" in r.reason
    anti = oracle_orthographic(np.diag([-1.0, 1.0, -1.0]) @ AXIS_ROTATIONS["x"])  # looks along +x
    r = reconstruct(ideal(mol, [cx, anti]), delta=0.1)
    assert r.status == "failed" and "independent" in r.reason
    r = reconstruct(ideal(mol, [cx, anti, cy]), delta=0.1, pairs="first")
    assert r.status == "failed" and "parallel" in r.reason
    # a far-off second structure: nothing consistent
    other = Observations((obs.views[0], ideal(Structure(mol.positions + 50, mol.numbers), [cy]).views[0]), obs.model)
    r = reconstruct(other, delta=0.01)
    assert r.status == "failed" and "consistent" in r.reason
    json.dumps(r.to_dict())
    batch = reconstruct_batch([ideal(mol, [cx]), obs], delta=0.1)
    assert [b.status for b in batch] == ["failed", "ok"]


def test_misuse_raises():
    mol = oracle_random_molecule(4, seed=1)
    obs = ideal(mol, [oracle_orthographic(AXIS_ROTATIONS[a]) for a in "xy"])
    for kw in ({"delta": -1}, {"delta": float("nan")}, {"delta": "x"}, {"delta": 0.1, "pairs": "some"},
               {"delta": 0.1, "merge": "fast"}, {"delta": 0.1, "visibility": "maybe"},
               {"delta": 0.1, "delta_unit": "nm"}, {"delta": 0.1, "lattice": np.eye(2)},
               {"delta": 0.1, "near_miss_window": 0.5}):
        with pytest.raises(InputError):
            reconstruct(obs, **kw)
    with pytest.raises(InputError):
        reconstruct([obs], delta=0.1)
    cell, tiling = oracle_tiled_cell(20, seed=0, cell_atoms=3)
    with pytest.raises(InputError, match="lattice"):
        reconstruct(ideal(cell, obs.cameras, tiling=(2, 1, 1)), delta=0.1)


def test_reconstruction_is_frozen_and_serialisable():
    cell, _ = oracle_tiled_cell(20, seed=4, cell_atoms=4)
    cams = [oracle_orthographic(naive.rotation_about(a, t)) for a, t in (((1, 0, 0), 5), ((0, 1, 0), 70),
                                                                       ((1, 1, 0), 130))]
    rec = reconstruct(ideal(cell, cams), delta=0.01, lattice=cell.lattice)
    assert isinstance(rec, Reconstruction)
    with pytest.raises(AttributeError):
        rec.status = "x"
    with pytest.raises(ValueError):
        rec.points[0, 0] = 1.0
    d = json.loads(json.dumps(rec.to_dict()))
    assert d["status"] == "ok" and d["pairs"] == "all" and d["merge"] == "deterministic" and len(d["points"]) == 4
    rep = analyse(rec, cell)
    json.dumps(rep.to_dict())
    # certify builds a Structure from the points
    s = Structure(rec.points, rec.labels, cell.lattice)
    assert s.n_atoms == cell.n_atoms


@pytest.mark.nojit
def test_analyse_separation_and_helpers():
    cell = Structure(np.array([[0.0, 0, 0], [1.0, 0, 0], [0, 2.0, 0]]), [6, 6, 8], 4.0 * np.eye(3))
    assert min_same_label_distance(cell.positions, cell.numbers, cell.lattice) == pytest.approx(
        cell.min_same_label_distance())
    cams = [oracle_orthographic(naive.rotation_about(a, t)) for a, t in (((1, 0, 0), 5), ((0, 1, 0), 70),
                                                                       ((1, 1, 0), 130))]
    rec = reconstruct(ideal(cell, cams), delta=0.6, lattice=cell.lattice)
    rep = analyse(rec, cell)
    assert not rep.separation_ok and any("separation" in n for n in rep.notes)
    rep2 = analyse(reconstruct(ideal(cell, cams), delta=0.01, lattice=cell.lattice), cell)
    assert rep2.separation_ok and rep2.exact and rep2.min_same_label_distance == pytest.approx(1.0)
    d, i = nearest_same_label([[3.9, 0, 0]], [6], cell.positions, cell.numbers, cell.lattice)
    assert d[0] == pytest.approx(0.1) and i[0] == 0
    d, i = nearest_same_label([[3.9, 0, 0]], [7], cell.positions, cell.numbers, cell.lattice)
    assert math.isinf(d[0]) and i[0] == -1


def test_noise_sweep():
    mols = [oracle_random_molecule(8, seed=s) for s in range(4)]
    cams = [oracle_orthographic(naive.rotation_about(a, t)) for a, t in (((1, 0, 0), 5), ((0, 1, 0), 70),
                                                                       ((1, 1, 0), 130))]
    out = noise_sweep(mols, lambda s: cams, [0.0, 0.05], delta=lambda s: max(0.01, 4 * s), seeds=(0, 1))
    assert [p.n_runs for p in out] == [8, 8]
    assert out[0].recovery_rate == 1.0 and out[0].exact_rate == 1.0 and out[0].phantom_rate == 0.0
    assert out[1].delta == pytest.approx(0.2)
    # regression pin (issue 11: was 0 ≤ rate ≤ 1): at σ = 0.05 Å with δ = 4σ every one of the 8 noisy runs
    # recovers every atom, exactly, without phantoms; per-structure counts agree with the rate
    assert (out[1].recovery_rate, out[1].exact_rate, out[1].phantom_rate) == (1.0, 1.0, 0.0)
    assert out[1].per_structure_recovered == {str(i): 2 for i in range(4)}
    again = noise_sweep(mols, lambda s: cams, [0.05], delta=0.2, seeds=(0, 1))
    assert again[0].to_dict() == out[1].to_dict()  # seeded: reproducible
    with pytest.raises(InputError):
        noise_sweep([], lambda s: cams, [0.0], delta=0.1)
    # the study's δ(σ) rule: 0.0155 Å at σ = 0.001 Å for κ = 2.7321, 0.0477 Å off-axis (κ = 8.4258)
    assert round(delta_for_sigma(0.001, kappa=2.7321), 4) == 0.0155
    assert round(delta_for_sigma(0.01, kappa=2.7321), 4) == 0.1546
    assert round(delta_for_sigma(0.001, kappa=8.4258), 4) == 0.0477
    assert delta_for_sigma(0.0, kappa=2.7321, floor=0.01) == 0.01
