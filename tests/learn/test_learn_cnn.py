"""pixel-cnn on a task a plain vision model must learn: simple cubic vs simple hexagonal cells (random lattice
constants and elements, so neither size nor colour separates them), rendered small by viewcert's renderer
under the study's five views. Trained briefly from scratch, it must beat chance (1/2) on held-apart
structures by an exact binomial test, and a rerun must give the same predictions (determinism). The whole
``viewcert learn --reader pixel-cnn`` path (tiny: 16 px, one epoch, a pyxtal draw as training set) is run
twice into two folders, each rendering afresh, and must write the same predictions.

torch is in the test extra (``make test`` runs these): about 17 s of CPU here for this file (the wall time
grows with the machine's load)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

# torch is looked for, not imported: collecting this file (every xdist worker collects every file) would
# otherwise import it (about 5 s of CPU) on the workers that do not run these tests
pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")

ELEMENTS = (6, 14, 26, 29, 47, 79)  # C, Si, Fe, Cu, Ag, Au: the same choices for both classes


def _cells(n: int, seed: int):
    from viewcert.structures import Structure

    rng = np.random.default_rng(seed)
    out, labels = [], []
    for k in range(n):
        z = int(rng.choice(ELEMENTS))
        a = float(rng.uniform(3.0, 4.5))
        if k % 2 == 0:
            lat = np.diag([a, a, a])
            labels.append("cubic")
        else:
            c = a * float(rng.uniform(1.4, 1.9))
            lat = np.array([[a, 0, 0], [-a / 2, a * np.sqrt(3) / 2, 0], [0, 0, c]])
            labels.append("hexagonal")
        out.append(Structure(np.zeros((1, 3)), np.array([z]), lat))
    return out, labels


@pytest.fixture(scope="module")
def rendered():
    from viewcert.learn.views import ViewSettings, render_views

    vs = ViewSettings.from_options(size=32, tiling=(2, 2, 2))
    s, lab = _cells(160, seed=5)
    x = np.stack([render_views(c, vs) for c in s])
    code = {"cubic": 1, "hexagonal": 5}  # their indices in CRYSTAL_SYSTEMS
    return x, np.array([code[v] for v in lab])


def test_learns_cubic_vs_hexagonal_above_chance(rendered):
    from scipy.stats import binomtest

    from viewcert.learn.cnn import TrainSettings, predict, train_cnn

    x, y = rendered
    assert x.shape == (160, 5, 3, 32, 32)
    tr, te = slice(0, 100), slice(100, 160)  # held-apart structures (drawn independently)
    model, curve = train_cnn(x[tr], y[tr], TrainSettings(epochs=8, batch_size=16, lr=3e-3, seed=1))
    pred = predict(model, x[te])
    k = int((pred == y[te]).sum())
    assert binomtest(k, 60, 0.5, alternative="greater").pvalue < 0.01, (k, curve)
    print(f"held-apart correct {k}/60")
    model2, _ = train_cnn(x[tr], y[tr], TrainSettings(epochs=8, batch_size=16, lr=3e-3, seed=1))
    assert np.array_equal(predict(model2, x[te]), pred)  # deterministic: same seed, same predictions


def test_cli_pixel_reader_end_to_end_is_deterministic(tmp_path):
    """Two runs of the command into two folders (no render cache shared): identical predictions, a card that
    states the image size, the colours and torch's CPU build, a learning curve row per size and the model."""
    pytest.importorskip("pyxtal")
    import json

    from typer.testing import CliRunner

    from viewcert.cli import app

    texts = []
    for k in range(2):
        out = tmp_path / f"o{k}"
        r = CliRunner().invoke(app, ["learn", "builtin:prototypes", "--reader", "pixel-cnn", "--train", "pyxtal:14",
                                     "--image-size", "16", "--epochs", "1", "--out", str(out)])
        assert r.exit_code == 0, r.output
        texts.append((out / "pixel-cnn" / "predictions.csv").read_text())
    assert texts[0] == texts[1]
    card = json.loads((tmp_path / "o0" / "pixel-cnn" / "card.json").read_text())
    assert card["image_size"] == 16 and card["element_colours"] is True and card["protocol"] == "render-ceiling-5"
    assert card["libraries"]["torch"].endswith("+cpu")
    assert [row["n_train"] for row in card["training_curve"]] == [14]  # 200 / 400 / 800 are not below 14
    assert (tmp_path / "o0" / "pixel-cnn" / "model.pt").is_file()
    assert "## Confusion matrix" in (tmp_path / "o0" / "pixel-cnn" / "report.md").read_text()
