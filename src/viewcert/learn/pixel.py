"""``viewcert learn --reader pixel-cnn``'s run: render both splits, carve the validation split out of the
training split (``data.validation_split``), train the recipe (``cnn.TrainSettings``) on the rest, score the
validation items, then predict the eval items once; write predictions, ``model.pt`` and the card.

The card records the recipe, the seed, the pinned torch thread count, the validation figure beside the eval
figure, the validation ids, how many configurations the recipe was chosen among (``SELECTION``: the log is
``benchmarks/results/learn.json``'s ``selection``), the CPU seconds of rendering and of training (this
process and its children, ``resource.getrusage``) and the peak resident memory.
"""

from __future__ import annotations

import resource
from dataclasses import replace
from pathlib import Path

import numpy as np

from viewcert.io.confine import write_inside
from viewcert.learn.card import LearnOutcome, accuracy_record, library_versions, write_reader
from viewcert.learn.cnn import RECIPE, TrainSettings, predict, train_cnn
from viewcert.learn.data import CRYSTAL_SYSTEMS, VAL_PER_SYSTEM, VAL_SEED, validation_split
from viewcert.learn.forest import curve_sizes, subset
from viewcert.learn.views import ViewSettings, render_split

#: how the recipe was chosen (benchmarks/select_pixel_cnn.py; every configuration with its validation figure
#: is in benchmarks/results/learn.json under "selection")
SELECTION = {"configurations_tried": 4, "chosen": "12 epochs, views concatenated (the first configuration)",
             "chosen_val_correct": 195, "best_val_correct": 197, "n_val": 210,
             "rule": "the cheapest configuration (training CPU) within 2 validation items of the best, stated "
                     "before the last configuration's figure was read; the eval items scored once, after",
             "log": "benchmarks/results/learn.json#selection"}


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its waited-for children."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def _render(data, vs: ViewSettings, cache: Path, bar):
    c0 = cpu_seconds()
    x_tr = render_split(data.train.items, vs, cache=cache, progress=bar("render train", len(data.train.items)))
    x_ev = render_split(data.eval.items, vs, cache=cache, progress=bar("render eval", len(data.eval.items)))
    return x_tr, x_ev, cpu_seconds() - c0


def _check_disjoint(data, val: np.ndarray) -> dict:
    """The eval ids are in neither the fitted nor the validation items (ids compared); the record for the card."""
    ev = set(data.eval.ids)
    val_ids = [data.train.ids[i] for i in val]
    if ev & set(data.train.ids):
        raise RuntimeError("an eval id is in the training split")  # load_learn_data refuses this first
    return {"seed": VAL_SEED, "per_system": VAL_PER_SYSTEM, "n": len(val_ids), "ids": val_ids,
            "eval_ids_in_training_or_validation": 0}


def _curve(x_fit, y_fit, x_ev, y_ev, ts: TrainSettings, sizes) -> list[dict]:
    rows = []
    for size in sizes:
        model, _ = train_cnn(x_fit[subset(len(y_fit), size, ts.seed)], y_fit[subset(len(y_fit), size, ts.seed)],
                             ts)
        rows.append({"n_train": int(size), "correct": int((predict(model, x_ev, tta=ts.tta) == y_ev).sum()),
                     "n": int(len(y_ev))})
    return rows


def run_cnn(data, out: Path, *, seed: int = 0, protocol: str = "render-ceiling-5", image_size: int = 64,
            epochs: int | None = None, curve_sizes_: tuple[int, ...] = (), progress_factory=None,
            settings: TrainSettings | None = None, cache: str | Path | None = None):
    """Train the recipe on ``data``'s training split minus its validation items, score those, predict the
    eval split; write predictions, ``model.pt`` and the card under ``out/pixel-cnn``. ``curve_sizes_``
    adds learning-curve rows (nested subsets of the fitted items, each trained from scratch); renders are
    cached in ``cache`` (default ``out/pixel-cnn/cache``)."""
    import torch

    ts = replace(settings or TrainSettings(), seed=seed, **({} if epochs is None else {"epochs": epochs}))
    vs = ViewSettings.from_options(protocol=protocol, size=image_size)
    bar = progress_factory or (lambda what, total: None)
    x_tr, x_ev, render_cpu = _render(data, vs, Path(cache or Path(out) / "pixel-cnn" / "cache"), bar)
    code = {c: i for i, c in enumerate(CRYSTAL_SYSTEMS)}
    y_tr, y_ev = (np.array([code[c] for c in s.labels], dtype=np.int64) for s in (data.train, data.eval))
    val = validation_split(data.train.labels)
    fit = np.setdiff1d(np.arange(len(y_tr)), val)
    split = _check_disjoint(data, val)
    c0 = cpu_seconds()
    model, epoch_curve = train_cnn(x_tr[fit], y_tr[fit], ts, progress=bar("train", len(fit) * ts.epochs))
    train_cpu = cpu_seconds() - c0
    val_pred = predict(model, x_tr[val], tta=ts.tta) if len(val) else np.zeros(0, dtype=np.int64)
    ev_pred = predict(model, x_ev, tta=ts.tta)
    rows = _curve(x_tr[fit], y_tr[fit], x_ev, y_ev, ts, [s for s in curve_sizes(len(fit), curve_sizes_)
                                                           if s < len(fit)])
    rows.append({"n_train": int(len(fit)), "correct": int((ev_pred == y_ev).sum()), "n": int(len(y_ev))})
    card = _card(ts, vs, model, split, epoch_curve, rows, {
        "val": accuracy_record(int((val_pred == y_tr[val]).sum()), len(val)) if len(val) else None,
        "render_cpu_seconds": round(render_cpu, 1), "train_cpu_seconds": round(train_cpu, 1),
        "train_cpu_minutes": round(train_cpu / 60, 2), "torch_threads": torch.get_num_threads()})
    labels = [CRYSTAL_SYSTEMS[i] for i in ev_pred]
    folder = write_reader(Path(out), "pixel-cnn", data, labels, card)
    write_inside(folder / "model.pt", lambda fh: torch.save(model.state_dict(), fh))  # no link followed
    correct = int(sum(p == t for p, t in zip(labels, data.eval.labels, strict=True)))
    return LearnOutcome("pixel-cnn", folder, correct, len(data.eval.ids), card)


def _card(ts: TrainSettings, vs: ViewSettings, model, split: dict, epoch_curve, rows, measured: dict) -> dict:
    return {
        "what": "convolutional network trained from scratch on the rendered views only (one shared backbone over "
                "every view, the views' features joined in protocol order); an empirical reading of the images, "
                "not a certificate",
        "recipe": RECIPE,
        "network": {"backbone": f"{len(ts.channels)} x [{ts.convs} x (conv3x3, batchnorm, relu), maxpool2], "
                                "global average", "channels": list(ts.channels), "view_pooling": ts.pooling,
                    "head": "dropout 0.2, linear", "parameters": int(sum(p.numel() for p in model.parameters()))},
        "input": "RGB / 255, inverted (background 0)", "views": vs.to_dict(), "protocol": vs.image.protocol.label,
        "image_size": vs.image.size, "element_colours": vs.to_dict()["element_colours"],
        "training": {**ts.to_dict(), "optimizer": "AdamW, one-cycle learning rate (peak lr)",
                     "loss": f"cross-entropy, label smoothing {ts.label_smoothing}",
                     "augmentation": ("each view its own D4 element (quarter turns = camera rolls, flips = mirror "
                                      "images); " if ts.d4 else "") + ("one RGB permutation per item"
                                                                       if ts.colour_permutation else ""),
                     "test_time": "mean softmax over the 8 D4 transforms of every view" if ts.tta else "none"},
        "determinism": f"torch.manual_seed(seed), torch.use_deterministic_algorithms(True), "
                       f"torch.set_num_threads({ts.threads}); same machine, same seed: same predictions",
        "seed": ts.seed, "validation": {**split, "record": measured["val"]}, "selection": SELECTION,
        "epoch_curve": epoch_curve, "training_curve": rows,
        "training_curve_rule": "the fitted items (training split minus validation); earlier rows: nested "
                               "subsets, the first n of one permutation by numpy default_rng(seed)",
        **{k: v for k, v in measured.items() if k != "val"},
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "libraries": library_versions("torch", "scipy", "pymatgen", "spglib", "numba"),
    }
