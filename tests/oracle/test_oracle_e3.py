"""The oracle on the render-ceiling study's 210 e3 eval structures (conventional standard cells, pymatgen
orientation, the study's five views): exact recovery, the phantom census at δ = 1e-6 over every view
subset, and the study's released (first-pair, greedy) oracle reproduced per structure. Skips when
../shared/data/render-ceiling is absent."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from tests.support import naive
from tests.support.strategies import e3_conventional_cells
from viewcert.cameras.policy import FramingPolicy, frame
from viewcert.cameras.pose import ase_rotation_matrix
from viewcert.cameras.protocols import RENDER_CEILING_5, get_protocol
from viewcert.observe.project import ObservationModel, Observations, observe
from viewcert.oracle.phantoms import analyse
from viewcert.oracle.triangulate import reconstruct_batch

pytestmark = pytest.mark.shared_data

VIEWS = tuple(RENDER_CEILING_5)
SHORT = {"axis_a": "a", "axis_b": "b", "axis_c": "c", "body_diagonal": "body_diagonal", "oblique2": "oblique2"}
# The study's census (docs/reference.md): structures with Φ ≠ ∅ at τ = 1e-6, single cells, all pairs
CENSUS = {"a+b": 125, "a+c": 52, "b+c": 126, "a+b+c": 39, "b+oblique2": 1, "c+body_diagonal": 1}


@pytest.fixture(scope="module")
def e3(shared_data):
    cells = e3_conventional_cells()
    assert len(cells) == 210
    prot = get_protocol("render-ceiling-5")
    obs = {k: observe(s, frame(prot, s), ObservationModel()) for k, s in cells.items()}
    return cells, obs


def _subset(obs: Observations, idx) -> Observations:
    return Observations(tuple(obs.views[i] for i in idx), obs.model, obs.structure_id)


def test_five_views_recover_every_structure_exactly(e3):
    cells, obs = e3
    ids = list(cells)
    recs = reconstruct_batch([obs[k] for k in ids], delta=0.01, lattice=[cells[k].lattice for k in ids])
    worst = 0.0
    for k, rec in zip(ids, recs, strict=True):
        rep = analyse(rec, cells[k])
        assert rec.ok, (k, rec.reason)
        assert rep.exact, (k, rep.to_dict())
        assert rep.separation_ok
        worst = max(worst, rep.max_position_error)
    assert worst < 1e-6


def test_phantom_census_matches_the_study(e3):
    cells, obs = e3
    ids = list(cells)
    lats = [cells[k].lattice for k in ids]
    census, who = {}, {}
    for r in (2, 3, 4, 5):
        for sub in itertools.combinations(range(5), r):
            recs = reconstruct_batch([_subset(obs[k], sub) for k in ids], delta=1e-6, lattice=lats)
            name = "+".join(SHORT[VIEWS[i]] for i in sub)
            reps = [analyse(rec, cells[k]) for k, rec in zip(ids, recs, strict=True)]
            hit = [k for k, rep in zip(ids, reps, strict=True) if rep.n_phantoms > 0]
            # every atom is always recovered (Theorem 1): failures are phantoms, never losses
            assert all(rep.recovered_all for rep in reps)
            census[name] = len(hit)
            who[name] = hit
    assert {k: v for k, v in census.items() if v} == CENSUS
    assert who["b+oblique2"] == ["mp-756317"] and who["c+body_diagonal"] == ["mp-756317"]
    assert len(census) == 26


def test_released_oracle_reproduced_per_structure(e3):
    """pairs='first' at one tolerance 0.15 Å: per structure, the same points as a plain re-implementation
    of the study's released algorithm (tests/support/naive.py::study_oracle), and the same atom counts as the
    study's own view-subset sweep (results/view_subset_sweep/raw.json) for all 26 view subsets."""
    cells, obs = e3
    ids = list(cells)
    lats = [cells[k].lattice for k in ids]
    recs = reconstruct_batch([obs[k] for k in ids], delta=0.15, pairs="first", lattice=lats)
    ms = [ase_rotation_matrix(RENDER_CEILING_5[v]) for v in VIEWS]
    for k, rec in zip(ids, recs, strict=True):
        pts, z = naive.study_oracle(cells[k].positions, cells[k].numbers, ms, 0.15)
        assert rec.n_points == len(pts), k
        assert np.array_equal(rec.labels, z), k
        for a, b in zip(rec.points, pts, strict=True):  # same first-come order; ours are wrapped
            v, _ = naive.oracle_min_image(a - b, cells[k].lattice)
            assert np.linalg.norm(v) < 1e-9, k
    raw = json.loads((e3_raw_path()).read_text())["per_structure"]
    for r in (2, 3, 4, 5):
        for sub in itertools.combinations(range(5), r):
            key = "|".join(VIEWS[i] for i in sub)
            recs = reconstruct_batch([_subset(obs[k], sub) for k in ids], delta=0.15, pairs="first", lattice=lats)
            got = {k: rec.n_points for k, rec in zip(ids, recs, strict=True)}
            want = {k: raw[k][key]["n_recovered"] for k in ids}
            assert got == want, key


def e3_raw_path():
    from tests.conftest import SHARED_DATA

    return SHARED_DATA / "results" / "view_subset_sweep" / "raw.json"


def test_kernel_matches_twin_on_e3_sample(e3):
    """One structure per crystal system against the definition twin (tests/support/naive.py::oracle_reconstruct):
    Theorem 1's precondition holds (same-element atoms ≥ 1.0951 Å > 2δ), so both recover every atom within
    δ; where the tuple census leaves no false tuple in the [δ/2, 2δ] band (test_oracle.decided_phantom_regime)
    Φ_δ is empty for both or for neither, with the same count when the twin's phantoms are > 2δ apart."""
    from tests.support.oracle_checks import assert_agrees_with_twin

    cells, obs = e3
    ids = list(cells)[7::30]  # one per crystal system
    decided = 0
    for delta, sub in ((0.01, range(5)), (0.15, range(5)), (0.05, (0, 1, 2)), (0.02, (1, 3))):
        for k in ids:
            _, _, dec = assert_agrees_with_twin(_subset(obs[k], tuple(sub)), cells[k], delta=delta,
                                                lattice=cells[k].lattice)
            decided += dec
    # regression pin (measured: 23 of the 28 cases are in the decided regime); guards against a band that
    # silently excludes everything
    assert decided == 23


def test_tiled_observations_recover_every_structure(e3):
    """2×2×2 tiled observations (the study's rendering) with translate consistency: exact at δ = 0.01."""
    cells, _ = e3
    prot = get_protocol("render-ceiling-5")
    ids = list(cells)
    obs = [observe(cells[k], frame(prot, cells[k], FramingPolicy(tiling=(2, 2, 2))), ObservationModel(tiling=(2, 2, 2)))
           for k in ids]
    recs = reconstruct_batch(obs, delta=0.01, lattice=[cells[k].lattice for k in ids])
    for k, rec in zip(ids, recs, strict=True):
        assert analyse(rec, cells[k]).exact, k
