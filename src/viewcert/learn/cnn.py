"""``pixel-cnn``: a small convolutional network trained from scratch on the rendered views only.

Input: every view of the protocol (``learn.views``: viewcert's renderer, as the benchmark draws them), each
an RGB image scaled to [0, 1] and inverted (background 0). One shared backbone reads every view — four blocks
of 3×3 convolution, batch norm, ReLU and 2×2 max pooling (8, 16, 32, 64 channels), then a global average —
and the per-view vectors are pooled across views (mean and max, concatenated: independent of view order) into
one linear layer over the seven crystal systems. Adam, cross-entropy, random flips of all views of an item
together (a flip keeps the crystal system).

Deterministic: ``torch.manual_seed``, ``torch.use_deterministic_algorithms(True)``, one thread, batches and
flips drawn from a seeded ``torch.Generator``; a rerun gives the same predictions. It reads pixels and nothing
else: no composition, no cell, no label-bearing metadata (the images do carry element colours when the style
draws them, as the study's do).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from viewcert.learn.card import LearnOutcome, library_versions, write_reader
from viewcert.learn.data import CRYSTAL_SYSTEMS
from viewcert.learn.forest import curve_sizes, subset
from viewcert.learn.views import ViewSettings, render_split

CHANNELS = (8, 16, 32, 64)


@dataclass(frozen=True)
class TrainSettings:
    epochs: int = 12
    batch_size: int = 32
    lr: float = 1e-3
    weight_decay: float = 1e-4
    seed: int = 0
    flips: bool = True


def _net(n_classes: int):
    import torch
    from torch import nn

    class ViewPooledCNN(nn.Module):
        def __init__(self):
            super().__init__()
            layers, c_in = [], 3
            for c in CHANNELS:
                layers += [nn.Conv2d(c_in, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                           nn.MaxPool2d(2)]
                c_in = c
            self.backbone = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
            self.head = nn.Linear(2 * c_in, n_classes)

        def forward(self, x):  # x: (B, V, 3, H, W)
            b, v = x.shape[:2]
            f = self.backbone(x.reshape(b * v, *x.shape[2:])).reshape(b, v, -1)
            return self.head(torch.cat([f.mean(dim=1), f.amax(dim=1)], dim=1))

    return ViewPooledCNN()


def _setup(seed: int):
    import torch

    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    return torch.Generator().manual_seed(seed)


def _as_input(batch_u8: np.ndarray):
    import torch

    return 1.0 - torch.from_numpy(np.ascontiguousarray(batch_u8)).float() / 255.0


def train_cnn(x: np.ndarray, y: np.ndarray, settings: TrainSettings = TrainSettings(), *, progress=None):
    """Fit on ``x`` (N, V, 3, H, W) uint8 and integer labels ``y``; returns (model, per-epoch curve)."""
    import torch
    from torch import nn

    gen = _setup(settings.seed)
    model = _net(len(CRYSTAL_SYSTEMS))
    opt = torch.optim.Adam(model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    loss_fn = nn.CrossEntropyLoss()
    yt = torch.as_tensor(np.asarray(y), dtype=torch.long)
    curve = []
    for epoch in range(settings.epochs):
        model.train()
        perm = torch.randperm(len(yt), generator=gen).numpy()
        total, right = 0.0, 0
        for s in range(0, len(perm), settings.batch_size):
            idx = np.sort(perm[s:s + settings.batch_size])
            xb = _as_input(x[idx])
            if settings.flips:
                fl = torch.randint(0, 2, (len(idx), 2), generator=gen)
                for k in range(len(idx)):
                    dims = [d for d, f in zip((-1, -2), fl[k].tolist(), strict=True) if f]
                    if dims:
                        xb[k] = torch.flip(xb[k], dims)
            opt.zero_grad()
            out = model(xb)
            loss = loss_fn(out, yt[idx])
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
            right += int((out.argmax(1) == yt[idx]).sum())
            if progress is not None:
                progress(len(idx))
        curve.append({"epoch": epoch + 1, "train_loss": round(total / len(yt), 6), "train_accuracy": right / len(yt)})
    return model, curve


def predict(model, x: np.ndarray, batch_size: int = 64) -> np.ndarray:
    import torch

    model.eval()
    out = []
    with torch.no_grad():
        for s in range(0, len(x), batch_size):
            out.append(model(_as_input(x[s:s + batch_size])).argmax(1).numpy())
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def run_cnn(data, out: Path, *, seed: int = 0, protocol: str = "render-ceiling-5", image_size: int = 64,
            epochs: int = 12, curve_sizes_: tuple[int, ...] = (200, 400, 800), progress_factory=None):
    """Render both splits, train on the training split (and on nested subsets for the learning curve), predict
    the eval split, write predictions, ``model.pt`` and the card under ``out/pixel-cnn``."""
    import resource

    import torch

    vs = ViewSettings(protocol=protocol, size=image_size)
    ts = TrainSettings(epochs=epochs, seed=seed)
    cache = Path(out) / "pixel-cnn" / "cache"
    t0 = time.perf_counter()
    bar = progress_factory or (lambda what, total: None)
    tick = bar("render train", len(data.train.items))
    x_tr = render_split(data.train.items, vs, cache=cache, progress=tick)
    tick = bar("render eval", len(data.eval.items))
    x_ev = render_split(data.eval.items, vs, cache=cache, progress=tick)
    t_render = time.perf_counter() - t0
    code = {c: i for i, c in enumerate(CRYSTAL_SYSTEMS)}
    y_tr = np.array([code[c] for c in data.train.labels])
    y_ev = np.array([code[c] for c in data.eval.labels])
    sizes = curve_sizes(len(y_tr), curve_sizes_)
    rows, model, epoch_curve = [], None, []
    t1 = time.perf_counter()
    for size in sizes:
        idx = subset(len(y_tr), size, seed) if size < len(y_tr) else np.arange(len(y_tr))
        tick = bar(f"train n={size}", size * epochs)
        model, epoch_curve = train_cnn(x_tr[idx], y_tr[idx], ts, progress=tick)
        pred = predict(model, x_ev)
        rows.append({"n_train": int(size), "correct": int((pred == y_ev).sum()), "n": int(len(y_ev))})
    t_train = time.perf_counter() - t1
    labels = [CRYSTAL_SYSTEMS[i] for i in predict(model, x_ev)]
    card = {
        "what": "convolutional network trained from scratch on the rendered views only (one shared backbone over "
                "every view, pooled across views); an empirical reading of the images, not a certificate",
        "network": {"backbone": "4 x [conv3x3, batchnorm, relu, maxpool2]", "channels": list(CHANNELS),
                    "view_pooling": "mean and max over views, concatenated", "head": "linear",
                    "parameters": int(sum(p.numel() for p in model.parameters()))},
        "input": "RGB / 255, inverted (background 0)", "views": vs.to_dict(), "protocol": protocol,
        "image_size": image_size, "element_colours": vs.to_dict()["element_colours"],
        "training": {**ts.__dict__, "optimizer": "Adam", "loss": "cross-entropy",
                     "augmentation": "random horizontal / vertical flip of all views of an item together"
                     if ts.flips else "none"},
        "determinism": "torch.manual_seed(seed), torch.use_deterministic_algorithms(True), torch.set_num_threads(1)",
        "seed": seed, "epoch_curve": epoch_curve, "training_curve": rows,
        "training_curve_rule": "nested subsets: the first n of one permutation by numpy default_rng(seed), each "
                               "trained from scratch for the same number of epochs",
        "render_seconds": round(t_render, 1), "train_seconds": round(t_train, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "libraries": library_versions("torch", "scipy", "pymatgen", "spglib", "numba"),
    }
    folder = write_reader(Path(out), "pixel-cnn", data, labels, card)
    torch.save(model.state_dict(), folder / "model.pt")
    correct = int(sum(p == t for p, t in zip(labels, data.eval.labels, strict=True)))
    return LearnOutcome("pixel-cnn", folder, correct, len(data.eval.ids), card)
