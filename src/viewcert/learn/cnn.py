"""``pixel-cnn``: a convolutional network trained from scratch on the rendered views only (recipe ``RECIPE``).

Input: every view of the protocol (``learn.views``: viewcert's renderer, as the benchmark draws them), each
an RGB image scaled to [0, 1] and inverted (background 0). One shared backbone reads every view — blocks of
3×3 convolution, batch norm, ReLU (``convs`` per block) and 2×2 max pooling, then a global average — and the
per-view vectors are joined (``pooling``: ``concat`` keeps the protocol's view order, ``meanmax`` is the mean
and max over views) into one linear layer over the seven crystal systems.

Training: AdamW with a one-cycle learning rate, cross-entropy with label smoothing, and augmentation that
keeps the crystal system: each view of an item is turned by its own element of the square's symmetry group
D4 (a quarter turn is a camera roll of 90°, a flip a mirror image of the crystal: neither changes its
system), and the item's RGB channels are permuted (the same permutation in every view: element colours stay
consistent within an item but no colour means an element). Prediction averages the softmax over the eight
D4 transforms applied to every view at once (``tta``).

Deterministic: ``torch.manual_seed``, ``torch.use_deterministic_algorithms(True)``, ``threads`` torch threads
(pinned, recorded in the card), batches and augmentations drawn from a seeded ``torch.Generator``; a rerun on
the same machine gives the same predictions. Across CPUs, torch's convolution kernels (oneDNN, chosen by the
CPU's instruction set) may sum in another order; training amplifies the last-bit differences, so another CPU
may give other predictions (``docs/learned-readers.md``). It reads pixels and nothing else: no composition,
no cell, no label-bearing metadata (the images do carry element colours, as the study's do).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from viewcert.learn.data import CRYSTAL_SYSTEMS

RECIPE = "pixel-cnn/2"


@dataclass(frozen=True)
class TrainSettings:
    """One training recipe: network shape, optimisation (lr = the one-cycle peak), augmentation, threads."""

    epochs: int = 12
    batch_size: int = 32
    lr: float = 3e-3
    weight_decay: float = 5e-4
    seed: int = 0
    channels: tuple[int, ...] = (16, 32, 64, 128)
    convs: int = 1
    pooling: str = "concat"
    d4: bool = True
    colour_permutation: bool = True
    label_smoothing: float = 0.1
    tta: bool = True
    threads: int = 1

    def to_dict(self) -> dict:
        d = asdict(self)
        d["channels"] = list(self.channels)
        return d


def _net(n_classes: int, n_views: int, ts: TrainSettings):
    import torch
    from torch import nn

    class ViewCNN(nn.Module):
        def __init__(self):
            super().__init__()
            layers, c_in = [], 3
            for c in ts.channels:
                for _ in range(ts.convs):
                    layers += [nn.Conv2d(c_in, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
                    c_in = c
                layers.append(nn.MaxPool2d(2))
            self.backbone = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
            width = c_in * (n_views if ts.pooling == "concat" else 2)
            self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(width, n_classes))

        def forward(self, x):  # x: (B, V, 3, H, W)
            b, v = x.shape[:2]
            flat = x.reshape(b * v, *x.shape[2:]).contiguous(memory_format=torch.channels_last)
            f = self.backbone(flat).reshape(b, v, -1)
            joined = f.reshape(b, -1) if ts.pooling == "concat" else torch.cat([f.mean(1), f.amax(1)], 1)
            return self.head(joined)

    return ViewCNN().to(memory_format=torch.channels_last)  # oneDNN's faster layout on CPU


def _setup(seed: int, threads: int):
    import torch

    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(threads)
    return torch.Generator().manual_seed(seed)


def _as_input(batch_u8: np.ndarray):
    import torch

    return 1.0 - torch.from_numpy(np.ascontiguousarray(batch_u8)).float() / 255.0


def d4(x, k: int):
    """Element ``k`` (0..7) of the square's symmetry group on the last two axes: ``k % 4`` quarter turns, then a
    left-right flip when ``k >= 4``."""
    import torch

    y = torch.rot90(x, k % 4, dims=(-2, -1))
    return torch.flip(y, dims=(-1,)) if k >= 4 else y


def augment(xb, gen, ts: TrainSettings):
    """A batch (B, V, 3, H, W) with each view's own D4 element and each item's channel permutation."""
    import torch

    b, v = xb.shape[:2]
    if ts.colour_permutation:
        perms = torch.stack([torch.randperm(3, generator=gen) for _ in range(b)])  # (B, 3)
        xb = torch.stack([xb[i][:, perms[i]] for i in range(b)])
    if ts.d4:
        flat = xb.reshape(b * v, *xb.shape[2:])
        ks = torch.randint(0, 8, (b * v,), generator=gen)
        out = flat.clone()
        for k in range(1, 8):
            sel = (ks == k).nonzero().flatten()
            if len(sel):
                out[sel] = d4(flat[sel], k)
        xb = out.reshape(xb.shape)
    return xb


def train_cnn(x: np.ndarray, y: np.ndarray, settings: TrainSettings = TrainSettings(), *, progress=None):
    """Fit on ``x`` (N, V, 3, H, W) uint8 and integer labels ``y``; returns (model, per-epoch curve)."""
    import torch
    from torch import nn

    gen = _setup(settings.seed, settings.threads)
    model = _net(len(CRYSTAL_SYSTEMS), x.shape[1], settings)
    opt = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    steps = -(-len(y) // settings.batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=settings.lr, epochs=settings.epochs,
                                                steps_per_epoch=steps)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=settings.label_smoothing)
    yt = torch.as_tensor(np.asarray(y), dtype=torch.long)
    curve = []
    for epoch in range(settings.epochs):
        model.train()
        perm = torch.randperm(len(yt), generator=gen).numpy()
        total, right = 0.0, 0
        for s in range(0, len(perm), settings.batch_size):
            idx = np.sort(perm[s:s + settings.batch_size])
            xb = augment(_as_input(x[idx]), gen, settings)
            opt.zero_grad()
            out = model(xb)
            loss = loss_fn(out, yt[idx])
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
            right += int((out.argmax(1) == yt[idx]).sum())
            if progress is not None:
                progress(len(idx))
        curve.append({"epoch": epoch + 1, "train_loss": round(total / len(yt), 6), "train_accuracy": right / len(yt)})
    return model, curve


def predict_proba(model, x: np.ndarray, *, tta: bool = True, batch_size: int = 64) -> np.ndarray:
    """(N, 7) class probabilities; with ``tta`` the mean over the eight D4 transforms of every view."""
    import torch

    model.eval()
    out = []
    with torch.no_grad():
        for s in range(0, len(x), batch_size):
            xb = _as_input(x[s:s + batch_size])
            ks = range(8) if tta else (0,)
            out.append(torch.stack([model(d4(xb, k)).softmax(1) for k in ks]).mean(0).numpy())
    return np.concatenate(out) if out else np.zeros((0, len(CRYSTAL_SYSTEMS)))


def predict(model, x: np.ndarray, *, tta: bool = True, batch_size: int = 64) -> np.ndarray:
    """Integer class of each item (argmax of ``predict_proba``)."""
    return predict_proba(model, x, tta=tta, batch_size=batch_size).argmax(1).astype(np.int64)
