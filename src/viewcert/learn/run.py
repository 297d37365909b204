"""``viewcert learn``'s work: load the splits, train one reader, write predictions, model and card."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import numpy as np

from viewcert.errors import InputError
from viewcert.io.confine import write_inside
from viewcert.learn.card import LearnOutcome, library_versions, write_reader
from viewcert.learn.data import LearnData, load_learn_data
from viewcert.learn.features import FEATURE_NAMES, features_of
from viewcert.learn.forest import N_ESTIMATORS, train_forest
from viewcert.learn.pixel import run_cnn
from viewcert.limits import active_limits


def _need(module: str, reader: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise InputError(f"the {reader} reader needs {module}: pip install 'viewcert[learn]'", field="--reader")


def run_forest(data: LearnData, out: Path, *, seed: int = 23) -> LearnOutcome:
    """Fit ``cell-forest`` on the training split, predict the eval split, write everything under ``out``."""
    _need("sklearn", "cell-forest")
    import joblib

    t0 = time.perf_counter()
    x_tr = features_of(data.train.structures())
    x_ev = features_of(data.eval.structures())
    res = train_forest(x_tr, data.train.labels, x_ev, data.eval.labels, seed=seed)
    seconds = time.perf_counter() - t0
    card = {
        "what": "random forest on 19 metrics of the input cell (lattice lengths and angles, volume, sorted edge "
                "ratios, deviations from 90 and 120 degrees, angle range, population SDs, number of sites, "
                "density); it reads numbers from the structure file, never an image: not a vision model",
        "features": list(FEATURE_NAMES), "cell": "input cell as given (not conventionalised)",
        "protocol": None, "image_size": None, "element_colours": None,
        "hyperparameters": {"n_estimators": N_ESTIMATORS, "random_state": seed, "n_jobs": 1,
                            "others": "scikit-learn defaults"},
        "seed": seed, "train_accuracy": res.train_accuracy, "training_curve": list(res.curve),
        "training_curve_rule": "nested subsets: the first n of one permutation by numpy default_rng(seed)",
        "train_seconds": round(seconds, 1),
        "libraries": library_versions("scikit-learn", "scipy", "pymatgen", "joblib"),
    }
    folder = write_reader(out, "cell-forest", data, res.predictions, card)
    write_inside(folder / "model.joblib", lambda fh: joblib.dump(res.model, fh, compress=3))  # no link followed
    correct = int(sum(p == t for p, t in zip(res.predictions, data.eval.labels, strict=True)))
    return LearnOutcome("cell-forest", folder, correct, len(data.eval.ids), card)


def run_learn(source: str, reader: str, out: Path, *, train: str | None = None, seed: int | None = None,
              progress_factory=None, **cnn_options) -> LearnOutcome:
    """Train ``reader`` (``cell-forest`` | ``pixel-cnn``) on ``source``'s training split (or ``train``).

    Parameters
    ----------
    source : str
        INPUT with the eval items.
    reader : str
        ``"cell-forest"`` or ``"pixel-cnn"``.
    out : Path
        Output folder; the reader's files go to ``out/READER``.
    train : str, optional
        A second INPUT as the training set, or ``pyxtal:N[:SEED]``.
    seed : int, optional
        Training seed (default: the reader's own).
    progress_factory : callable, optional
        ``progress_factory(what, total)`` returns a bar's ``advance(n)``.
    **cnn_options
        pixel-cnn only: protocol, image_size (px), epochs.

    Returns
    -------
    LearnOutcome
        The reader, its folder, correct of n eval items and the model card.
    """
    if reader not in ("cell-forest", "pixel-cnn"):
        raise InputError(f"unknown reader {reader!r}; use cell-forest or pixel-cnn", field="--reader")
    size = cnn_options.get("image_size")
    if reader == "pixel-cnn" and size is not None:  # every view is size x size px: checked before any work
        active_limits().check_pixels(size, size, source="--image-size")
    data = load_learn_data(source, train)
    out = Path(out)
    if reader == "cell-forest":
        return run_forest(data, out, seed=23 if seed is None else seed)
    cnn_options = {k: v for k, v in cnn_options.items() if v is not None}
    _need("torch", "pixel-cnn")
    return run_cnn(data, out, seed=0 if seed is None else seed, progress_factory=progress_factory, **cnn_options)


def eval_correct(pred, truth) -> int:
    return int((np.asarray(pred) == np.asarray(truth)).sum())
