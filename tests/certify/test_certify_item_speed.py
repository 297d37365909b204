"""The per-item path's faster helpers (issue 31 item 3) equal their references bit for bit: the cameras
digest read from the camera fields (was: through ``to_dict``), ``Structure.formula`` without ``np.unique``
on strings, ``Structure.closest_pair`` with one in-place buffer, the oracle's 3-vector cross product, and the
phantom analysis wrapping each array once (``oracle.phantoms._wrap_cached``)."""

from __future__ import annotations

import hashlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.strategies import crystals, molecules, oracle_camera_sets, rotations
from viewcert.certify.digests import cameras_digest
from viewcert.oracle import phantoms
from viewcert.oracle.triangulate import _cross3
from viewcert.structures import _SHELL27


def _cameras_digest_reference(cameras) -> str:
    """The digest as written before: every camera through its ``to_dict``."""
    h = hashlib.sha256()
    for c in cameras:
        d = c.to_dict()
        parts = (np.round(np.asarray(d["rotation"], dtype=np.float64), 12).ravel(),
                 np.round(np.asarray(d.get("center", d.get("position")), dtype=np.float64), 9).ravel(),
                 np.round(np.asarray([d.get("scale_px_per_angstrom", d.get("focal_px", 0.0)), d["width"],
                                      d["height"]], dtype=np.float64), 9))
        for p in parts:
            h.update(np.ascontiguousarray(p.astype("<f8") + 0.0).tobytes())
            h.update(b"|")
    return h.hexdigest()


def _formula_reference(s) -> str:
    syms, counts = np.unique(np.array(s.symbols), return_counts=True)
    return "".join(f"{a}{c if c > 1 else ''}" for a, c in zip(syms, counts, strict=True))


def _closest_pair_reference(s):
    """The periodic small-cell brute force as written before (fresh temporaries per component)."""
    lat = s.lattice
    frac = np.linalg.solve(lat.T, s.positions.T).T
    frac = frac - np.floor(frac)
    cart = frac @ lat
    shifts = _SHELL27 @ lat
    n = s.n_atoms
    d2 = np.zeros((n, n, len(shifts)))
    for c in range(3):
        dc = cart[None, :, None, c] - cart[:, None, None, c] + shifts[None, None, :, c]
        d2 += dc * dc
    d2[np.arange(n), np.arange(n), 13] = np.inf
    flat = int(np.argmin(d2))
    i, j, _ = np.unravel_index(flat, d2.shape)
    return int(i), int(j), float(np.sqrt(d2.ravel()[flat]))


@settings(max_examples=40, deadline=None)
@given(cams=st.one_of(oracle_camera_sets(kind="orthographic"), oracle_camera_sets(kind="perspective")))
def test_cameras_digest_equals_the_to_dict_reference(cams):
    assert cameras_digest(cams) == _cameras_digest_reference(cams)


@settings(max_examples=60, deadline=None)
@given(s=st.one_of(crystals(max_atoms=12), molecules()))
def test_formula_equals_the_np_unique_reference(s):
    assert s.formula == _formula_reference(s)


def test_formula_orders_symbols_by_code_point():
    from viewcert.structures import Structure

    s = Structure(np.array([[0.0, 0, 0], [2, 0, 0], [0, 2, 0], [0, 0, 2]]), np.array([8, 1, 8, 55]))
    assert s.formula == _formula_reference(s) == "CsHO2"


@settings(max_examples=60, deadline=None)
@given(s=crystals(max_atoms=12))
def test_closest_pair_equals_the_reference(s):
    assert s.closest_pair() == _closest_pair_reference(s)


@settings(max_examples=100, deadline=None)
@given(a=rotations(), b=rotations())
def test_cross3_equals_np_cross(a, b):
    assert np.array_equal(_cross3(a[2], b[2]), np.cross(a[2], b[2]))


@settings(max_examples=40, deadline=None)
@given(s=crystals(max_atoms=8), seed=st.integers(0, 2**16))
def test_prewrapped_search_returns_the_same_as_wrapping_inside(s, seed):
    """``analyse`` wraps each array once and searches with ``wrapped=True``: the same distances and indices."""
    rng = np.random.default_rng(seed)
    pts = s.positions + rng.normal(scale=0.05, size=s.positions.shape)
    q, t = phantoms._in_cell(pts, s.lattice), phantoms._in_cell(s.positions, s.lattice)
    for _ in range(2):
        d_new, i_new = phantoms.nearest_same_label(q, s.numbers, t, s.numbers, s.lattice, wrapped=True)
        d_ref, i_ref = phantoms.nearest_same_label(pts, s.numbers, s.positions, s.numbers, s.lattice)
        assert np.array_equal(d_new, d_ref) and np.array_equal(i_new, i_ref)


def test_batch_path_equals_the_per_item_path(monkeypatch):
    """``certify_items`` (stage by stage across the batch) writes the records ``certify_item`` writes, item by
    item: crystals and molecules, an unreadable item, and an item a stage fails on (recorded as the per-item
    path records it, the failing function named)."""
    import importlib

    from viewcert.certify import CertifyConfig
    from viewcert.certify.evaluate import certify_item, certify_items
    from viewcert.certify.inputs import Item, load_input

    items = list(load_input("builtin:prototypes").items)
    broken = Item(id="broken", kind="unreadable", payload=("nowhere.cif", "no such file"), sha256="0" * 64)
    items = [*items[:6], broken, *items[6:]]
    for cfg in (CertifyConfig(), CertifyConfig(delta=0.15, tau=0.01, pairs="first", merge="greedy",
                                               periodic_merge=False)):
        per_item = [certify_item(it, cfg).to_dict() for it in items]
        assert [o.to_dict() for o in certify_items(items, cfg)] == per_item
        assert any(r["outcome"] == "error" for r in per_item)
    doomed = certify_item(items[2], CertifyConfig()).to_dict()["formula"]
    evaluate = importlib.import_module("viewcert.certify.evaluate")  # the module (the package exports a function)
    real = evaluate.analyse

    def analyse(rec, cell, delta):
        if cell.formula == doomed:
            raise ValueError("stage failure")
        return real(rec, cell, delta)

    monkeypatch.setattr(evaluate, "analyse", analyse)
    per_item = [certify_item(it, CertifyConfig()).to_dict() for it in items[:4]]
    assert [o.to_dict() for o in certify_items(items[:4], CertifyConfig())] == per_item
    assert "pipeline (analyse): ValueError: stage failure" in per_item[2]["error"]
