"""Uniqueness margin δ*: a hand-worked ghost, a brute-force twin written from the definition (every
K-tuple, plain loops) compared by hypothesis, and the oracle on e3 samples just below / above δ*."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.strategies import crystals, molecules, oracle_random_rotations
from viewcert.cameras.policy import FramingPolicy, frame
from viewcert.cameras.pose import look_at
from viewcert.oracle.margin import uniqueness_margin
from viewcert.structures import Structure


def naive_margin(positions, numbers, rotations, lattice=None):
    """δ* from the definition: every same-label K-tuple, least squares by np.linalg.lstsq on the stacked
    projections, residual per view, distance to atoms over 27 images; min over phantoms, capped at d_min/2."""
    pos = np.asarray(positions, float)
    shifts = [np.zeros(3)] if lattice is None else [
        np.array(s, float) @ lattice for s in itertools.product((-1, 0, 1), repeat=3)]
    d_min = math.inf
    for i, j in itertools.product(range(len(pos)), repeat=2):
        if numbers[i] == numbers[j]:
            for s in shifts:
                if i == j and not np.any(s):
                    continue
                d_min = min(d_min, float(np.linalg.norm(pos[i] - pos[j] + s)))
    rots = [np.asarray(r) for r in rotations]
    dirs = [-r[2] for r in rots]
    if all(np.linalg.norm(np.cross(dirs[0], d)) < 1e-9 for d in dirs[1:]):
        return 0.0
    best = 0.5 * d_min
    for z in set(numbers.tolist()):
        idx = [i for i in range(len(pos)) if numbers[i] == z]
        for t in itertools.product(idx, repeat=len(rots)):
            if len(set(t)) == 1:
                continue
            a = np.vstack([r[:2] for r in rots])
            b = np.concatenate([r[:2] @ pos[i] for r, i in zip(rots, t, strict=True)])
            x = np.linalg.lstsq(a, b, rcond=None)[0]
            rho = max(float(np.linalg.norm(r[:2] @ x - r[:2] @ pos[i])) for r, i in zip(rots, t, strict=True))
            dist = min(float(np.linalg.norm(x - pos[j] - s)) for j in idx for s in shifts)
            if rho <= 1e-7 and dist <= 1e-7:
                continue  # coincident projections of one atom: that atom
            if rho < dist:
                best = min(best, rho)
    return best


def test_hand_worked_two_view_ghost():
    # views along −z (identity) and along +x; A = 0, B = (1, 0.3, 1): the rays of A (view z) and of B
    # (view x) pass 0.3 Å apart (along y), so their midpoint (0, 0.15, 1) has residual 0.15 in both views and
    # lies 1.0112 Å from A and B: a phantom for δ ∈ [0.15, 1.0112). d_min/2 = 0.7228 does not bind.
    s = Structure(positions=np.array([[0.0, 0, 0], [1.0, 0.3, 1.0]]), numbers=np.array([6, 6]))
    rots = np.array([np.eye(3), look_at((1.0, 0.0, 0.0), up=(0.0, 1.0, 0.0))])
    m = uniqueness_margin(s, rots)
    assert m.bound == "candidate"
    assert m.delta_star == pytest.approx(0.15, abs=1e-12)
    assert m.point == pytest.approx((0.0, 0.15, 1.0), abs=1e-12)
    assert m.near_miss == (0, 1)
    assert m.near_miss_distance == pytest.approx(math.sqrt(1 + 0.15**2), abs=1e-12)
    assert m.d_min == pytest.approx(math.sqrt(2.09), abs=1e-12)


def test_separation_caps_and_single_view():
    s = Structure(positions=np.array([[0.0, 0, 0], [0.0, 0, 3.0]]), numbers=np.array([8, 8]))
    # both views see the pair separated: no false tuple has ρ < D; the cap is d_min/2 = 1.5
    rots = np.array([look_at((1, 0, 0)), look_at((0, 1, 0), up=(0, 0, 1))])
    m = uniqueness_margin(s, rots)
    assert (m.bound, m.delta_star) == ("separation", 1.5)
    assert uniqueness_margin(s, rots[:1]).bound == "dependent"


@settings(max_examples=60, deadline=None)
@given(st.one_of(molecules(min_atoms=2, max_atoms=6, elements=(6, 8)),
                 crystals(min_atoms=2, max_atoms=5, elements=(8, 14))),
       st.integers(2, 3), st.integers(0, 10_000))
def test_matches_brute_force_twin(s, k, seed):
    rots = np.array(oracle_random_rotations(k, seed))
    m = uniqueness_margin(s, rots)
    ref = naive_margin(s.positions, s.numbers, rots, s.lattice if s.is_periodic else None)
    assert m.delta_star == pytest.approx(ref, rel=1e-9, abs=1e-12)


@pytest.mark.shared_data
def test_oracle_flips_at_delta_star_on_e3(e3_cifs, e3_eval_ids):
    from viewcert.cameras import get_protocol
    from viewcert.io.cif import read_cif_text
    from viewcert.observe import ObservationModel, observe
    from viewcert.oracle import analyse, reconstruct
    from viewcert.symmetry import conventional_standard_cell

    proto = get_protocol("render-ceiling-5")
    rots = np.array([v.rotation for v in proto.views])
    ids = np.random.default_rng(14).choice(sorted(e3_eval_ids), 48, replace=False)
    found_above = checked_above = 0
    for mid in ids:
        s = conventional_standard_cell(read_cif_text(e3_cifs[mid], source=mid), symprec=0.01,
                                       angle_tolerance=5.0, orientation="pymatgen")
        m = uniqueness_margin(s, rots)
        obs = observe(s, frame(proto, s, FramingPolicy(molecule_scale="per-view")), ObservationModel())
        below = m.delta_star * (1 - 1e-6)
        assert analyse(reconstruct(obs, delta=below, lattice=s.lattice), s, below).n_phantoms == 0, mid
        below = m.delta_exact * (1 - 1e-6)  # no false candidate at all: the structure, bit for bit
        rep = analyse(reconstruct(obs, delta=below, lattice=s.lattice), s, below)
        assert rep.exact and rep.max_position_error < 1e-9, mid
        if m.bound == "candidate" and m.delta_star < 0.6:
            above = m.delta_star * (1 + 1e-6)
            checked_above += 1
            # independently of the margin code: the near-miss point is within δ of a same-label observed
            # point in every view, and farther than δ from every same-label atom (27 images)
            x = np.asarray(m.point)
            for v in obs.views:
                same = v.labels == m.label
                uv, _ = v.camera.project(x[None])
                assert np.min(np.linalg.norm(v.uv[same] - uv, axis=1)) / v.camera.scale <= above * (1 + 1e-9)
            imgs = s.positions[s.numbers == m.label][:, None, :] + (
                np.array(list(itertools.product((-1, 0, 1), repeat=3))) @ s.lattice)[None]
            assert np.linalg.norm(imgs - x, axis=-1).min() > above
            found_above += analyse(reconstruct(obs, delta=above, lattice=s.lattice), s, above).n_phantoms > 0
    # viewcert's oracle associates the nearest point per view, so it can miss a consistent point when the
    # association radius (δ × slack) holds several: it finds 7 of these 11 (regression pin, recorded in
    # docs/design.md); δ* is the property of the views, not of one oracle
    assert checked_above == 11 and found_above >= 7
