"""The pixel reader's recipe (``learn.cnn.TrainSettings``, run by ``learn.pixel.run_cnn``) on a small subset of the
study's e3 data: two runs with the same seed into two folders (each rendering afresh) give the same validation
and eval predictions, and the eval items never reach training or validation (ids checked against eval.jsonl).
The validation split itself is checked on hand-built label lists. Kept under a minute of CPU: 10 training
structures per system, 14 eval items, 24 px, two epochs (the recipe's network, augmentation and test-time
averaging, fewer epochs); its accuracy is not the point (benchmarks/bench_learn.py measures it)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from viewcert.learn.data import CRYSTAL_SYSTEMS, validation_split


def test_validation_split_is_stratified_seeded_and_small_sets_keep_a_seventh():
    big = [cs for cs in CRYSTAL_SYSTEMS for _ in range(230)]  # the e3 training split's shape: 230 per system
    v = validation_split(big)
    assert len(v) == 210 and np.all(np.diff(v) > 0)
    for k, cs in enumerate(CRYSTAL_SYSTEMS):  # 30 of each system, each index of that system's block
        assert ((v >= 230 * k) & (v < 230 * (k + 1))).sum() == 30, cs
    assert np.array_equal(v, validation_split(big))  # seeded
    assert not np.array_equal(v, validation_split(big, seed=45))
    small = [cs for cs in CRYSTAL_SYSTEMS for _ in range(8)]  # 8 per system: 8 // 7 = 1 each
    assert len(validation_split(small)) == 7
    assert len(validation_split([cs for cs in CRYSTAL_SYSTEMS for _ in range(2)])) == 0  # too few: none


@pytest.mark.shared_data
def test_recipe_on_a_subset_is_deterministic_and_never_sees_eval_items(shared_data, tmp_path):
    pytest.importorskip("torch")
    from viewcert.learn.cnn import TrainSettings
    from viewcert.learn.data import Split, load_learn_data
    from viewcert.learn.pixel import run_cnn

    e3 = shared_data / "data" / "e3"
    d = load_learn_data(e3)
    keep = [k for cs in CRYSTAL_SYSTEMS for k in [i for i, lab in enumerate(d.train.labels) if lab == cs][:10]]
    ev_keep = [k for cs in CRYSTAL_SYSTEMS for k in [i for i, lab in enumerate(d.eval.labels) if lab == cs][:2]]
    pick = lambda s, ks: Split(*(tuple(getattr(s, f)[k] for k in ks) for f in ("ids", "labels", "items")))  # noqa: E731
    small = replace(d, train=pick(d.train, keep), eval=pick(d.eval, ev_keep))
    ts = replace(TrainSettings(), epochs=2)
    cards, preds = [], []
    for k in range(2):  # two folders: no render cache shared
        res = run_cnn(small, tmp_path / f"o{k}", seed=3, image_size=24, settings=ts)
        cards.append(json.loads((res.folder / "card.json").read_text()))
        preds.append((res.folder / "predictions.csv").read_text())
    assert preds[0] == preds[1]
    assert cards[0]["validation"] == cards[1]["validation"]  # the same validation ids and figure
    eval_ids = {json.loads(line)["material_id"] for line in (e3 / "eval.jsonl").read_text().splitlines() if line.strip()}
    assert len(eval_ids) == 210
    val_ids = cards[0]["validation"]["ids"]
    assert len(val_ids) == 7  # 10 per system: one each (10 // 7)
    fit_ids = set(small.train.ids) - set(val_ids)
    assert len(fit_ids) == 63 and not (fit_ids | set(val_ids)) & eval_ids
    assert set(val_ids) <= set(small.train.ids)
    assert cards[0]["training_curve"][-1]["n_train"] == 63
    assert cards[0]["torch_threads"] == ts.threads == 1 and cards[0]["recipe"] == "pixel-cnn/2"
    assert cards[0]["seed"] == 3 and cards[0]["validation"]["record"]["n"] == 7
