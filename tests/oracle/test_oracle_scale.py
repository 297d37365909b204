"""viewcert.oracle where the work grows (issue 59): the seeding stage's streaming bookkeeping against its naive
twins, known-tuple pruning against the full verification (the same reconstruction, bit for bit, counts
included), and the memory a 150-view reconstruction of a tiled 40-atom cell may take, under an address-space
limit. Tests marked ``nojit`` also run under NUMBA_DISABLE_JIT=1 (Makefile's second pass)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import naive
from tests.support.strategies import crystals, grid_molecules, molecules, oracle_camera_sets
from viewcert.observe.project import ObservationModel, observe
from viewcert.oracle import _kernels as K
from viewcert.oracle import _tuples as TU
from viewcert.oracle import triangulate as T

FEW = settings(max_examples=15, deadline=None)
SOME = settings(max_examples=40, deadline=None)


# ------------------------------------------------------------------------- the distinct-tuple table (_tuples)
@pytest.mark.nojit
@SOME
@given(st.integers(1, 6), st.integers(0, 2**31 - 1), st.integers(1, 300))
def test_tuple_table_keeps_the_first_occurrence_of_every_row(nv, seed, n):
    rng = np.random.default_rng(seed)
    pool = rng.integers(-1, 4, size=(max(1, n // 3), nv))  # few distinct rows: many repeats
    pick = rng.integers(0, len(pool), size=n)
    sups = pool[pick].astype(np.int64)
    labs = rng.integers(1, 3, size=n).astype(np.int64)
    table = TU.tuple_table(1)
    keys = np.empty(n, dtype=np.int64)
    held_lab = np.empty(n, dtype=np.int64)
    held_sup = np.empty((n, nv), dtype=np.int64)
    held, first = 0, []
    for i in range(n):
        key = TU.tuple_key(labs[i], sups[i])
        row = np.concatenate([[labs[i]], sups[i]]).reshape(1, -1)
        assert key == K.row_keys(row)[0]  # the merge's row hash
        slot, r = TU.tuple_find(table, keys, held_lab, held_sup, key, labs[i], sups[i])
        if r >= 0:
            assert held_lab[r] == labs[i] and np.array_equal(held_sup[r], sups[i])
            continue
        keys[held], held_lab[held], held_sup[held] = key, labs[i], sups[i]
        table[slot] = held
        first.append(i)
        held += 1
        if 2 * held >= table.shape[0]:
            table = TU.tuple_rehash(keys, held, 2 * table.shape[0])
    assert first == naive.first_occurrences(labs, sups)
    assert first == K.unique_tuples(labs, sups).tolist()  # what the merge keeps


@pytest.mark.nojit
def test_tuple_table_resolves_a_forced_collision():
    # two different rows with the same key (a key is only a hash): both are held, each found again
    keys = np.array([5, 5], dtype=np.int64)
    labs = np.array([1, 1], dtype=np.int64)
    sups = np.array([[0, 1], [1, 0]], dtype=np.int64)
    table = TU.tuple_rehash(keys, 2, 64)
    assert TU.tuple_find(table, keys, labs, sups, 5, 1, sups[1])[1] == 1
    assert TU.tuple_find(table, keys, labs, sups, 5, 1, sups[0])[1] == 0
    assert TU.tuple_find(table, keys, labs, sups, 5, 2, sups[0])[1] == -1


# ------------------------------------------------------------------------- isolated sites (_tuples)
@pytest.mark.nojit
@SOME
@given(st.integers(0, 2**31 - 1), st.integers(1, 60), st.floats(0.01, 2.0), st.floats(0.05, 1.5))
def test_site_isolated_matches_the_scan(seed, n, rad, h):
    rng = np.random.default_rng(seed)
    w = rng.uniform(-3.0, 3.0, size=(n, 2))
    w[rng.integers(0, n, size=n // 4)] += rng.normal(0.0, 0.01, size=(n // 4, 2))  # close pairs
    labels = rng.integers(1, 3, size=n).astype(np.int64)
    _, lrank = K.label_ranks(labels)
    sites = np.arange(n, dtype=np.int64)
    ox, oy, nx, ny, start, gsites = K.build_grid(w, lrank, sites, h, int(lrank.max()) + 1)
    for p in range(n):
        q = w[p] + rng.normal(0.0, 0.2, size=2)
        got = TU.site_isolated(w, lrank, p, q[0], q[1], rad, h, ox, oy, nx, ny, start, 0, gsites, 0)
        assert got == naive.site_isolated_loop(w, lrank, p, (q[0], q[1]), rad, sites)


# ------------------------------------------------------------------------- pruning changes nothing
def _both(obs, **kw):
    """The reconstruction with known-tuple pruning and with every seed verified."""
    old = T._PRUNE
    try:
        T._PRUNE = True
        a = T.reconstruct(obs, **kw)
        T._PRUNE = False
        b = T.reconstruct(obs, **kw)
    finally:
        T._PRUNE = old
    return a, b


def assert_identical(a, b):
    assert a.status == b.status and a.reason == b.reason
    for name in ("points", "labels", "support", "residuals", "ratios", "occluded", "near_points", "near_labels",
                 "near_ratios"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), name
    assert a.counts == b.counts


@FEW
@given(crystals(min_atoms=1, max_atoms=6), st.data())
def test_pruning_gives_the_same_reconstruction_on_tiled_crystals(cell, data):
    centre = cell.lattice.sum(axis=0)
    cams = data.draw(oracle_camera_sets("orthographic", min_views=3, max_views=9, target=centre))
    tiling = data.draw(st.sampled_from([(1, 1, 1), (2, 2, 2), (2, 1, 1), (1, 2, 3)]))
    delta = data.draw(st.floats(0.002, 0.4))
    obs = observe(cell, cams, ObservationModel(tiling=tiling))
    assert_identical(*_both(obs, delta=delta, lattice=cell.lattice))


@FEW
@given(st.one_of(molecules(min_atoms=2, max_atoms=12), grid_molecules()), oracle_camera_sets(
    "orthographic", min_views=3, max_views=8), st.floats(0.005, 0.6), st.sampled_from([0.0, 0.3, 2.0]))
def test_pruning_gives_the_same_reconstruction_on_molecules_ideal_and_noisy(mol, cams, delta, sigma):
    # grid molecules put phantoms and coincident projections in play; noise puts residuals near δ
    obs = observe(mol, cams, ObservationModel(sigma=sigma, seed=3))
    assert_identical(*_both(obs, delta=delta))
    assert_identical(*_both(obs, delta=delta, delta_unit="px"))


@FEW
@given(molecules(min_atoms=2, max_atoms=10), oracle_camera_sets("mixed", min_views=3, max_views=5))
def test_pruning_leaves_perspective_and_occlusion_alone(mol, cams):
    assert_identical(*_both(observe(mol, cams), delta=0.05))
    obs = observe(mol, cams[::2] + cams[1::2], ObservationModel(occlusion=True))
    assert_identical(*_both(obs, delta=0.05, visibility="occlusion"))


def test_pruning_gives_the_same_reconstruction_at_many_views_on_a_tiled_cell():
    from viewcert.certify.config import CertifyConfig
    from viewcert.certify.evaluate import _observe, item_cameras
    from viewcert.io.builtin import builtin

    cell = builtin("aflow:AB_cF8_225_a_b")[0]  # rock salt: projections coincide along many directions
    cfg = CertifyConfig(protocol="fibonacci-40", tiling=(2, 2, 2))
    obs = _observe(cell, item_cameras(cell, cfg), cfg)
    a, b = _both(obs, delta=0.01, lattice=cell.lattice)
    assert_identical(a, b)
    assert a.n_points == cell.n_atoms and a.counts["accepted_candidates"] > 100 * a.counts["unique_supports"]


# ------------------------------------------------------------------------- bounded memory
#: the stated bound on what one reconstruction may add to the process's address space, in bytes, for m observed
#: points, K views and U distinct candidate tuples (docs/speed.md "Memory"): buffers per observed point (uv,
#: plane coordinates, rays, labels, depth, radii, sites, grids, owner, band buffers; ≤ 40 words) and per
#: distinct tuple (K + 8 words), doubled for the growable buffers, plus 64 MiB for the allocator and the
#: outputs
def memory_bound(m: int, k: int, u: int) -> int:
    return 2 * 8 * (40 * m + (k + 8) * u) + 64 * 2**20


_CHILD = textwrap.dedent("""
    import json, resource, sys
    import numpy as np
    from viewcert.certify.config import CertifyConfig
    from viewcert.certify.evaluate import _observe, item_cameras
    from viewcert.oracle import reconstruct
    from viewcert.structures import Structure

    rng = np.random.default_rng(59)
    lat = np.diag([9.0, 9.5, 10.0])
    lat[1, 0] = 0.4
    pts = np.zeros((0, 3))
    while len(pts) < 40:  # 40 atoms at least 1.5 Å apart (minimum image)
        x = rng.uniform(0, 1, size=3) @ lat
        d = pts - x
        f = np.linalg.solve(lat.T, d.T).T
        d = (f - np.round(f)) @ lat
        if len(pts) == 0 or np.min(np.linalg.norm(d, axis=1)) > 1.5:
            pts = np.vstack([pts, x])
    cell = Structure(pts, rng.choice([6, 8, 14], size=40), lat)
    cfg = CertifyConfig(protocol="fibonacci-150", tiling=(2, 2, 2))
    obs = _observe(cell, item_cameras(cell, cfg), cfg)
    small = Structure(pts[:2], [6, 8], lat)
    reconstruct(_observe(small, item_cameras(small, cfg), cfg), delta=0.01, lattice=lat)  # loads the kernel
    vm = int(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmSize:"))) * 1024
    m = sum(len(v.labels) for v in obs.views)
    k = len(obs.views)
    bound = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    resource.setrlimit(resource.RLIMIT_AS, (vm + bound, vm + bound))
    rec = reconstruct(obs, delta=0.01, lattice=lat)
    print(json.dumps({"m": m, "k": k, "points": rec.n_points, "status": rec.status, "counts": rec.counts}))
""")


def test_memory_stays_under_the_stated_bound_at_150_views_and_a_tiled_40_atom_cell():
    # m = 40 atoms × 8 tiles × 150 views = 48,000 observed points; U ≈ 320 distinct tuples (every drawn atom)
    m, k, u = 48_000, 150, 400
    bound = memory_bound(m, k, u)  # ≈ 95 MiB; the whole candidate list before issue 59 was ≈ 4.3 GB
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    r = subprocess.run([sys.executable, "-c", _CHILD, str(bound)], capture_output=True, text=True, timeout=600,
                       env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert (out["m"], out["k"]) == (m, k)
    assert out["status"] == "ok" and out["points"] == 40
    assert out["counts"]["unique_supports"] <= u
    assert out["counts"]["accepted_candidates"] >= 320 * k * (k - 1) // 2  # every drawn atom from every pair
