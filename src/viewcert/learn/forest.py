"""``cell-forest``: the study's random forest on the 19 cell metrics of the input cell (``learn.features``).

scikit-learn ``RandomForestClassifier(n_estimators=500, random_state=23)``, every other hyperparameter at
its default, one job (deterministic: same inputs, same predictions). It reads numbers computed from the
structure file, never an image: a learned counterpart of R3 (geometry given), not a vision model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewcert.learn.features import FEATURE_NAMES

N_ESTIMATORS = 500
SEED = 23


@dataclass(frozen=True)
class ForestResult:
    predictions: tuple[str, ...]
    train_accuracy: float
    curve: tuple[dict, ...]  # accuracy on the eval items vs training size
    model: object  # the fitted classifier (for saving)


def _forest(seed: int):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=N_ESTIMATORS, random_state=seed, n_jobs=1)


def curve_sizes(n_train: int, sizes=(200, 400, 800)) -> list[int]:
    """Training sizes of the learning curve: those of ``sizes`` below ``n_train``, then ``n_train``."""
    return [s for s in sizes if s < n_train] + [n_train]


def subset(n_train: int, size: int, seed: int) -> np.ndarray:
    """Indices of the first ``size`` training items in one seeded permutation (nested subsets)."""
    return np.sort(np.random.default_rng(seed).permutation(n_train)[:size])


def train_forest(x_train: np.ndarray, y_train, x_eval: np.ndarray, y_eval, *, seed: int = SEED,
                 curve: bool = True) -> ForestResult:
    """Fit on the training rows, predict the eval rows; the learning curve refits on nested subsets."""
    y_train = np.asarray(y_train)
    y_eval = np.asarray(y_eval)
    assert x_train.shape[1] == len(FEATURE_NAMES)
    rows = []
    model = None
    for size in (curve_sizes(len(y_train)) if curve else [len(y_train)]):
        idx = subset(len(y_train), size, seed) if size < len(y_train) else np.arange(len(y_train))
        m = _forest(seed).fit(x_train[idx], y_train[idx])
        pred = m.predict(x_eval)
        rows.append({"n_train": int(size), "correct": int((pred == y_eval).sum()), "n": int(len(y_eval))})
        model = m
    pred = model.predict(x_eval)
    train_acc = float((model.predict(x_train) == y_train).mean())
    return ForestResult(tuple(str(p) for p in pred), train_acc, tuple(rows), model)
