"""``--train pyxtal:N[:SEED]``: training crystals drawn from pyxtal for a benchmark without a training split.

Checked independently of the drawing code: the per-system counts worked by hand (N // 7, remainder to the
first systems), every crystal's system recomputed with spglib called directly, compositions compared with
pymatgen's ``Composition`` (not the module's own formula), and a second draw in the same process compared
array for array."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

pytest.importorskip("pyxtal")

from viewcert.errors import InputError  # noqa: E402
from viewcert.learn.draw import draw, parse_spec, per_system, reduced_formula  # noqa: E402

SYSTEM_OF_FIRST_LAST = ((1, 2, "triclinic"), (3, 15, "monoclinic"), (16, 74, "orthorhombic"),
                        (75, 142, "tetragonal"), (143, 167, "trigonal"), (168, 194, "hexagonal"),
                        (195, 230, "cubic"))  # International Tables, vol. A


def _system(structure) -> str:
    import spglib

    n = spglib.get_symmetry_dataset((structure.lattice, structure.frac_coords, structure.numbers), symprec=0.01,
                                    angle_tolerance=5.0).number
    return next(cs for lo, hi, cs in SYSTEM_OF_FIRST_LAST if lo <= n <= hi)


def _composition(structure):
    from pymatgen.core import Composition, Element

    return Composition(Counter(Element.from_Z(int(z)).symbol for z in structure.numbers)).reduced_composition


@pytest.fixture(scope="module")
def prototypes():
    from viewcert.certify.inputs import load_input

    return load_input("builtin:prototypes").items


@pytest.fixture(scope="module")
def ten(prototypes):
    return draw("pyxtal:10", prototypes)


def test_counts_per_system_by_hand():
    # 10 = 7 * 1 + 3: one each, the remainder to triclinic, monoclinic, orthorhombic
    assert per_system(10) == {"triclinic": 2, "monoclinic": 2, "orthorhombic": 2, "tetragonal": 1,
                              "trigonal": 1, "hexagonal": 1, "cubic": 1}
    assert set(per_system(1610).values()) == {230}  # 1,610 = 7 * 230, the size of e3's training split


def test_reduced_formula_by_hand():
    assert reduced_formula([22, 8, 8]) == "O2Ti"
    assert reduced_formula([26, 26, 8, 8, 8, 8]) == "FeO2"  # Fe2O4 / 2
    assert reduced_formula([14, 14, 14]) == "Si"


def test_stratified_and_labelled_by_own_symmetry(ten):
    labels = [it.label["crystal_system"] for it in ten.items]
    assert Counter(labels) == Counter(per_system(10))
    for it in ten.items:
        assert _system(it.payload) == it.label["crystal_system"], it.id  # spglib, called here, agrees
        assert it.id.startswith(f"pyxtal-{it.label['crystal_system']}-")


def test_deterministic_and_nested(ten, prototypes):
    again = draw("pyxtal:10", prototypes)
    assert [it.id for it in again.items] == [it.id for it in ten.items]
    for a, b in zip(ten.items, again.items, strict=True):
        assert a.sha256 == b.sha256
        assert np.array_equal(a.payload.positions, b.payload.positions)
        assert np.array_equal(a.payload.lattice, b.payload.lattice)
    seven = draw("pyxtal:7", prototypes)  # the first crystal of each system does not depend on N
    first = {it.label["crystal_system"]: it for it in ten.items if it.id.endswith("-00000")}
    for it in seven.items:
        assert it.sha256 == first[it.label["crystal_system"]].sha256
    other = draw("pyxtal:7:24", prototypes)  # another seed, other crystals
    assert not {it.sha256 for it in other.items} & {it.sha256 for it in seven.items}


def test_disjoint_from_eval_by_composition(ten, prototypes):
    """Eval items made of the compositions a free draw produces: the draw avoids every one of them."""
    from viewcert.certify.inputs import Item

    free = draw("pyxtal:7", [])
    clash = [Item(f"eval-{k}", "structure", it.payload, it.sha256, dict(it.label), "test")
             for k, it in enumerate(free.items)]
    drawn = draw("pyxtal:7", clash)
    used = {_composition(it.payload) for it in clash}
    assert len(used) == len(clash)
    assert not {_composition(it.payload) for it in drawn.items} & used
    # each system's first draw is the free draw's crystal, so every one of them had to be drawn again
    assert all(a.sha256 != b.sha256 for a, b in zip(free.items, drawn.items, strict=True))
    assert not {it.id for it in drawn.items} & {it.id for it in clash}


def test_an_eval_id_the_draw_would_use_is_refused(prototypes):
    from viewcert.certify.inputs import Item

    p = prototypes[0]
    with pytest.raises(InputError, match="pyxtal-triclinic-00000"):
        draw("pyxtal:7", [Item("pyxtal-triclinic-00000", p.kind, p.payload, p.sha256, p.label)])


@pytest.mark.parametrize("spec", ["pyxtal:6", "pyxtal:x", "pyxtal:7:-1", "pyxtal:7:1:2", "pyxtal:"])
def test_bad_spec(spec):
    with pytest.raises(InputError, match="pyxtal"):
        parse_spec(spec)


def test_cli_forest_trained_on_a_draw(tmp_path):
    """``viewcert learn builtin:prototypes --train pyxtal:14``: the built-in prototypes have no training
    split; the card records the draw and the predictions cover every prototype."""
    pytest.importorskip("sklearn")
    from typer.testing import CliRunner

    from viewcert.certify.inputs import load_input
    from viewcert.cli import app

    r = CliRunner().invoke(app, ["learn", "builtin:prototypes", "--reader", "cell-forest", "--train", "pyxtal:14",
                                 "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    card = json.loads((tmp_path / "o" / "cell-forest" / "card.json").read_text())
    assert card["data"]["train_input"] == "pyxtal:14"
    assert card["data"]["n_train"] == 14
    assert card["data"]["n_eval"] == len(load_input("builtin:prototypes").items)


@pytest.mark.parametrize("train", ["pyxtal:3", "pyxtal:many"])
def test_cli_bad_draw_is_one_line(tmp_path, train):
    from typer.testing import CliRunner

    from viewcert.cli import app

    r = CliRunner().invoke(app, ["learn", "builtin:prototypes", "--reader", "cell-forest", "--train", train,
                                 "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    err = r.stderr.strip()
    assert err.startswith("viewcert: error:") and "pyxtal" in err and "\n" not in err
    assert not (tmp_path / "o").exists()
