"""Fabrication audit: periodic minimum-image distances, one-to-one matching, species handling, the null."""

from __future__ import annotations

import json

import numpy as np
import pytest

from viewcert.attribution.extraction import (
    EmittedAtoms,
    TrueCell,
    audit_extraction,
    conventional_cell_from_cif,
    match_atoms,
    match_count,
    periodic_distances,
    read_emitted,
)
from viewcert.errors import InputError

CUBE = np.eye(3) * 4.0


def test_periodic_distance_wraps():
    d = periodic_distances([[0.95, 0.0, 0.0]], [[0.05, 0.0, 0.0]])
    assert d[0, 0] == pytest.approx(0.1)
    d = periodic_distances([[0.9, 0.9, 0.9]], [[0.1, 0.1, 0.1]])
    assert d[0, 0] == pytest.approx(np.sqrt(3) * 0.2)
    # emitted coordinates outside [0, 1) are the same point
    assert periodic_distances([[1.2, -0.3, 2.0]], [[0.2, 0.7, 0.0]])[0, 0] == pytest.approx(0.0)
    d = periodic_distances([[0.95, 0.0, 0.0]], [[0.05, 0.0, 0.0]], lattice=CUBE, metric="cartesian")
    assert d[0, 0] == pytest.approx(0.4)
    with pytest.raises(InputError, match="metric"):
        periodic_distances([[0, 0, 0]], [[0, 0, 0]], metric="manhattan")


def test_cartesian_minimum_image_in_a_skewed_cell():
    # a strongly sheared cell: the wrapped fractional difference is not the nearest image
    lat = np.array([[4.0, 0, 0], [3.6, 1.0, 0], [0, 0, 5.0]])
    a, b = np.array([[0.0, 0.0, 0.0]]), np.array([[0.45, 0.45, 0.0]])
    got = periodic_distances(a, b, lattice=lat, metric="cartesian")[0, 0]
    images = [np.linalg.norm((b[0] - a[0] + [i, j, k]) @ lat) for i in range(-3, 4) for j in range(-3, 4)
              for k in range(-1, 2)]
    assert got == pytest.approx(min(images))


def test_matching_is_one_to_one():
    true = np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]])
    emitted = np.array([[0.01, 0, 0], [0.02, 0, 0], [0.03, 0, 0]])  # three claims on one atom
    n = match_atoms(["Na", "Na"], true, ["Na"] * 3, emitted, 0.1, species_aware=True)
    assert n == 1


def test_matching_maximises_pairs_not_greedy_nearest():
    # greedy nearest would pair e0 with t0 (0.05) and leave e1 (0.09 from t0, 0.2 from t1) unmatched
    dist = np.array([[0.05, 0.08], [0.09, 0.20]])
    count, pairs = match_count(dist, 0.1)
    assert count == 2 and {tuple(p) for p in pairs} == {(0, 1), (1, 0)}
    assert match_count(np.zeros((0, 3)), 0.1)[0] == 0


def test_species_aware_versus_blind():
    true = np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]])
    emitted = np.array([[0.5, 0.5, 0.5], [0.0, 0.0, 0.0]])
    assert match_atoms(["Cs", "Cl"], true, ["Cs", "Cl"], emitted, 0.05, species_aware=True) == 0  # swapped
    assert match_atoms(["Cs", "Cl"], true, ["Cs", "Cl"], emitted, 0.05, species_aware=False) == 2


def _cell(item="x"):
    return TrueCell(item, ("Cs", "Cl"), np.array([[0, 0, 0], [0.5, 0.5, 0.5]]), CUBE)


def test_audit_on_hand_worked_items():
    cells = {"good": _cell("good"), "swap": _cell("swap"), "extra": _cell("extra"), "none": _cell("none")}
    emitted = [
        EmittedAtoms("good", ("Cs", "Cl"), np.array([[0.01, 0, 0], [0.5, 0.5, 0.52]])),
        EmittedAtoms("swap", ("Cl", "Cs"), np.array([[0, 0, 0], [0.5, 0.5, 0.5]])),
        EmittedAtoms("extra", ("Cs", "Cl", "Cl", "Cl"), np.array([[0, 0, 0], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5],
                                                                  [0.25, 0.25, 0.25]])),
        EmittedAtoms("none", (), np.zeros((0, 3)), parseable=False, reason="refused"),
    ]
    a = audit_extraction(emitted, cells, tolerances=(0.05,), headline_tolerance=0.05, null_draws=5, n_boot=200)
    per = a.per_item[a.per_item["tolerance"] == 0.05].set_index(["mode", "item_id"])
    assert per.loc[("species-aware", "good"), "recall"] == 1.0
    assert per.loc[("species-aware", "swap"), "recall"] == 0.0 and per.loc[("species-blind", "swap"), "recall"] == 1.0
    assert per.loc[("species-aware", "extra"), "precision"] == 0.5
    assert per.loc[("species-aware", "extra"), "fabrication_rate"] == 0.5
    h = a.headline
    assert (h["items"], h["parseable"], h["unparseable"]) == (4, 3, 1) and a.unparseable == ["none"]
    assert h["zero_match_items_species_aware"] == 1 and h["species_aware_median_recall"] == 1.0
    assert h["species_blind_median_recall"] == 1.0


def test_null_is_seeded_and_order_free():
    cells = {f"i{k}": _cell(f"i{k}") for k in range(6)}
    emitted = [EmittedAtoms(f"i{k}", ("Cs", "Cl") * 4, np.random.default_rng(k).random((8, 3))) for k in range(6)]
    kw = dict(tolerances=(0.15, 0.3), null_draws=10, n_boot=100, seed=3)
    a = audit_extraction(emitted, cells, **kw)
    b = audit_extraction(list(reversed(emitted)), cells, **kw)
    c = audit_extraction(emitted, cells, **{**kw, "seed": 4})
    assert a.summary.equals(b.summary)
    assert not np.allclose(a.summary["null_median_of_item_means"], c.summary["null_median_of_item_means"])
    aware = a.summary[a.summary["mode"] == "species-aware"]
    assert (aware["null_median_recall"] >= 0).all() and (aware["null_p_value"] <= 1).all()


def test_read_emitted(tmp_path):
    p = tmp_path / "a.json"
    p.write_text(json.dumps([
        {"material_id": "mp-1", "emitted": [["cs", 0, 0, 0], ["Cl", 0.5, 0.5, "0.5"]]},
        {"material_id": "mp-2", "unparseable_extraction": True, "raw_head": "I cannot"},
    ]))
    items = read_emitted(p)
    assert items[0].species == ("Cs", "Cl") and items[0].coords[1, 2] == 0.5
    assert not items[1].parseable and "unparseable" in items[1].reason
    p.write_text(json.dumps([{"material_id": "mp-1", "emitted": [["Cs", 0, "zero", 0]]}]))
    with pytest.raises(InputError) as e:
        read_emitted(p)
    assert "item 1 (mp-1), atom 1" in str(e.value) and e.value.field == "emitted"
    p.write_text(json.dumps([{"material_id": "mp-1", "emitted": []}, {"material_id": "mp-1", "emitted": []}]))
    with pytest.raises(InputError, match="duplicate item id"):
        read_emitted(p)
    p.write_text(json.dumps({"mp-9": [["Na", 0, 0, 0]]}))
    assert read_emitted(p)[0].item_id == "mp-9"


def test_conventional_cell_from_cif_and_cartesian_emission():
    from pymatgen.core import Lattice, Structure

    # a primitive fcc Cu cell: the conventional cell has 4 atoms
    prim = Structure(Lattice.from_parameters(2.556, 2.556, 2.556, 60, 60, 60), ["Cu"], [[0, 0, 0]])
    cell = conventional_cell_from_cif("cu", prim.to(fmt="cif"))
    assert len(cell.species) == 4 and np.allclose(np.linalg.norm(cell.lattice, axis=1), 3.6147, atol=1e-3)
    cart = cell.frac @ cell.lattice
    em = [EmittedAtoms("cu", cell.species, cart + 0.01, coordinates="cartesian")]
    a = audit_extraction(em, {"cu": cell}, tolerances=(0.05,), headline_tolerance=0.05, metric="cartesian",
                         null_draws=3, n_boot=50)
    assert a.headline["species_aware_median_recall"] == 1.0


def test_audit_input_errors():
    with pytest.raises(InputError, match="no true cell"):
        audit_extraction([EmittedAtoms("zz", ("Na",), np.zeros((1, 3)))], {}, null_draws=1)
    with pytest.raises(InputError, match="no parseable"):
        audit_extraction([EmittedAtoms("x", (), np.zeros((0, 3)), parseable=False)], {"x": _cell()}, null_draws=1)
    with pytest.raises(InputError, match="positive"):
        audit_extraction([EmittedAtoms("x", ("Cs",), np.zeros((1, 3)))], {"x": _cell()}, tolerances=(0,))

