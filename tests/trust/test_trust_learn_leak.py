"""A learned reader's training set holding an eval structure under another id (issue 38, class 7) is refused:
the same species and cell (``learn.data.cell_key``) is a leak whatever the ids, one line naming both, exit 2,
before any training."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.support.hostile.corpus import GOOD_CIF, GOOD_CIF_2
from tests.support.trust_probe import one_error, run
from viewcert.errors import InputError
from viewcert.learn.data import cell_key, load_learn_data


def _folder(d: Path, files: dict[str, str]) -> Path:
    d.mkdir()
    for name, text in files.items():
        (d / f"{name}.cif").write_text(text)
    (d / "labels.json").write_text(json.dumps({name: {"crystal_system": "cubic"} for name in files}))
    return d


def test_a_training_set_holding_an_eval_structure_under_another_id_is_refused(tmp_path):
    ev = _folder(tmp_path / "eval", {"nacl": GOOD_CIF})
    clean = _folder(tmp_path / "clean", {"cscl": GOOD_CIF_2})
    assert load_learn_data(str(ev), str(clean)).train.ids == ("cscl",)  # the control: no shared structure
    leak = _folder(tmp_path / "leak", {"cscl": GOOD_CIF_2, "renamed": GOOD_CIF.replace("data_NaCl", "data_X")})
    with pytest.raises(InputError, match="training item 'renamed' has the species and cell of eval item 'nacl'"):
        load_learn_data(str(ev), str(leak))
    code, out, _ = run(["learn", str(ev), "--train", str(leak), "--reader", "cell-forest", "--out",
                        str(tmp_path / "o")])
    err = one_error(out)
    assert code == 2 and "'renamed'" in err and "'nacl'" in err and "field --train" in err, out
    assert not (tmp_path / "o" / "cell-forest").exists()


def test_cell_key_is_the_species_and_the_cell_whatever_the_order():
    """By hand: a 4 x 5 x 6 Å orthorhombic cell of Na and Cl, its axes permuted and its atoms reordered, is the
    same key; another species or a cell 0.01 Å longer is not."""
    from viewcert.structures import Structure

    def s(lat, numbers):
        return Structure(positions=np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]), numbers=np.array(numbers),
                         lattice=np.diag(lat))

    a = cell_key(s([4.0, 5.0, 6.0], [11, 17]))
    assert a == ((11, 17), (4.0, 5.0, 6.0), (90.0, 90.0, 90.0))
    assert cell_key(s([6.0, 4.0, 5.0], [17, 11])) == a
    assert cell_key(s([4.0, 5.0, 6.0], [11, 11])) != a and cell_key(s([4.01, 5.0, 6.0], [11, 17])) != a
