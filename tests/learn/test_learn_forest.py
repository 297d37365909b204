"""cell-forest: the study's 19 cell metrics against a twin written from its definition on hand-worked cells,
the predictions read back by the ladder as the rung "learned reader: cell metrics", and the count on the
study's e3 split inside the range the study's twelve readings span (183-188 of 210)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from viewcert.learn.features import FEATURE_NAMES, cell_features

SI_MASS = 28.0855  # amu (IUPAC standard atomic weight of Si)
AMU_PER_A3_TO_G_PER_CM3 = 1.66053906660


def _twin(matrix: np.ndarray, masses: list[float]) -> list[float]:
    """The 19 features from the definition, from a lattice matrix (rows a, b, c; Å) and the site masses."""
    va, vb, vc = matrix
    a, b, c = (float(np.linalg.norm(v)) for v in (va, vb, vc))

    def angle(u, w):
        return math.degrees(math.acos(float(u @ w) / (np.linalg.norm(u) * np.linalg.norm(w))))

    al, be, ga = angle(vb, vc), angle(va, vc), angle(va, vb)
    vol = abs(float(np.linalg.det(matrix)))
    s = sorted((a, b, c))
    ang_mean = (al + be + ga) / 3
    edge_mean = (a + b + c) / 3
    ang_sd = math.sqrt(sum((x - ang_mean) ** 2 for x in (al, be, ga)) / 3)
    edge_sd = math.sqrt(sum((x - edge_mean) ** 2 for x in (a, b, c)) / 3)
    return [a, b, c, al, be, ga, vol, s[0] / s[1], s[1] / s[2], s[0] / s[2], abs(al - 90), abs(be - 90),
            abs(ga - 90), abs(ga - 120), max(al, be, ga) - min(al, be, ga), ang_sd, edge_sd / edge_mean,
            len(masses), sum(masses) / vol * AMU_PER_A3_TO_G_PER_CM3]


def _pmg(matrix, n_si):
    from pymatgen.core import Lattice, Structure

    return Structure(Lattice(matrix), ["Si"] * n_si, [[0.1 * k, 0.2 * k, 0.3 * k] for k in range(n_si)])


def test_hexagonal_cell_by_hand():
    """a = b = 3, c = 5 Å, γ = 120°, two Si: every feature worked by hand."""
    m = np.array([[3.0, 0, 0], [-1.5, 3 * math.sqrt(3) / 2, 0], [0, 0, 5.0]])
    f = dict(zip(FEATURE_NAMES, cell_features(_pmg(m, 2)), strict=True))
    vol = 9 * 5 * math.sqrt(3) / 2  # a² c sin 120°
    hand = {"a": 3, "b": 3, "c": 5, "alpha": 90, "beta": 90, "gamma": 120, "volume": vol,
            "edge_ratio_min_mid": 1.0, "edge_ratio_mid_max": 0.6, "edge_ratio_min_max": 0.6,
            "abs_alpha_minus_90": 0, "abs_beta_minus_90": 0, "abs_gamma_minus_90": 30, "abs_gamma_minus_120": 0,
            "angle_range": 30, "angle_std_pop": math.sqrt(200.0),  # angles 90, 90, 120: mean 100, var 600/3
            "edge_cv_pop": math.sqrt(8 / 9) / (11 / 3),  # edges 3, 3, 5: mean 11/3, var (4/9+4/9+16/9)/3
            "n_sites": 2, "density": 2 * SI_MASS / vol * AMU_PER_A3_TO_G_PER_CM3}
    for k, v in hand.items():
        assert f[k] == pytest.approx(v, rel=1e-6, abs=1e-9), k


@pytest.mark.parametrize("seed", range(5))
def test_features_match_twin_on_oblique_cells(seed):
    """Random oblique cells (unsorted edges, so sorted and plain ratios differ): the twin agrees."""
    rng = np.random.default_rng(seed)
    m = np.diag(rng.uniform(3, 9, 3)) + rng.uniform(-1.2, 1.2, (3, 3))
    n = int(rng.integers(1, 5))
    got = cell_features(_pmg(m, n))
    assert np.allclose(got, _twin(m, [SI_MASS] * n), rtol=1e-6, atol=1e-9)
    assert len(got) == 19


def test_predictions_are_a_ladder_rung(tmp_path):
    """The native file a reader writes reads back as the rung, with the model named, and the manifest lists it."""
    pytest.importorskip("sklearn")
    from viewcert.attribution.readers import read_file
    from viewcert.attribution.table import load_manifest
    from viewcert.learn.card import write_reader
    from viewcert.learn.data import LearnData, Split

    class _It:
        def __init__(self, i):
            self.id, self.sha256 = i, "0" * 64

    ev = Split(("x1", "x2", "x3"), ("cubic", "hexagonal", "cubic"), tuple(_It(i) for i in ("x1", "x2", "x3")))
    tr = Split(("t1",), ("cubic",), (_It("t1"),))
    data = LearnData(tr, ev, str(tmp_path / "nowhere"), "train", {})
    folder = write_reader(tmp_path, "cell-forest", data, ["cubic", "cubic", "cubic"], {"seed": 23})
    t = read_file(folder / "predictions.csv").frame
    assert set(t["rung"]) == {"learned reader: cell metrics"}
    assert set(t["model"]) == {"viewcert/cell-forest"}
    assert int((t["parsed_answer"] == t["target"]).sum()) == 2
    card = json.loads((folder / "card.json").read_text())
    labels, matrix = card["confusion"]["labels"], card["confusion"]["matrix"]
    cub, hexa = labels.index("cubic"), labels.index("hexagonal")
    assert matrix[cub][cub] == 2 and matrix[hexa][cub] == 1 and sum(map(sum, matrix)) == 3
    assert card["eval"]["correct"] == 2 and card["eval"]["n"] == 3
    lo, hi = card["eval"]["ci95_clopper_pearson"]
    # Clopper-Pearson 2 of 3: upper solves x^3 = 0.975 (Beta(3, 1)); lower solves 3x^2 - 2x^3 = 0.025 (Beta(2, 2))
    assert hi == pytest.approx(0.975 ** (1 / 3), abs=1e-9)
    assert 3 * lo**2 - 2 * lo**3 == pytest.approx(0.025, abs=1e-9)
    m = load_manifest(tmp_path / "ladder.toml")
    assert [e.rung for e in m.entries] == ["learned reader: cell metrics"]


@pytest.mark.shared_data
def test_e3_forest_count_in_study_range(shared_data):
    """The study's own specification on its e3 split: 1,610 train, 210 eval; the twelve defensible readings
    of its prose span 183-188 correct (its classifier_specifications.json), the canonical one 188."""
    pytest.importorskip("sklearn")
    from viewcert.learn.data import load_learn_data
    from viewcert.learn.features import features_of
    from viewcert.learn.forest import train_forest

    d = load_learn_data(shared_data / "data" / "e3")
    assert (len(d.train.ids), len(d.eval.ids)) == (1610, 210)
    res = train_forest(features_of(d.train.structures()), d.train.labels, features_of(d.eval.structures()),
                       d.eval.labels, curve=False)
    correct = sum(p == t for p, t in zip(res.predictions, d.eval.labels, strict=True))
    assert 183 <= correct <= 188


@pytest.mark.parametrize("args, says", [
    (["/nonexistent-input", "--reader", "cell-forest"], "does not exist"),
    (["builtin:prototypes", "--reader", "cell-forest"], "pass --train"),
    (["builtin:prototypes", "--reader", "bad\x1b[31m"], "unknown reader 'bad\\x1b[31m'"),
])
def test_cli_bad_input_is_one_line(tmp_path, args, says):
    """Bad input: one escaped line on stderr, exit 2, no traceback, nothing written."""
    from typer.testing import CliRunner

    from viewcert.cli import app

    r = CliRunner().invoke(app, ["learn", *args, "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    err = r.stderr.strip()
    assert err.startswith("viewcert: error:") and says in err and "\n" not in err and "\x1b" not in err
    assert not (tmp_path / "o").exists()
