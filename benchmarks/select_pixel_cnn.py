"""Choosing the pixel reader's recipe on the validation split only: one configuration per call.

Trains ``learn.cnn.train_cnn`` with the given settings (JSON, fields of ``TrainSettings``) on the e3 training
split minus its validation items (``learn.data.validation_split``: 30 per crystal system, seed 44) and scores
those 210 validation items. It renders and reads the training split only: the eval items are never rendered,
loaded as images or scored here. Each call appends one record (the settings, the validation figure with and
without test-time averaging, training CPU seconds, torch threads, peak RSS) to
``benchmarks/results/learn_selection.json``; ``bench_learn.py`` copies that log into ``learn.json``.

Usage: ``python benchmarks/select_pixel_cnn.py '{"epochs": 20}' [--size 64] [--note TEXT]``. Renders are cached
under ``/tmp/viewcert-learn-cache`` (not in the repository); rendering CPU is recorded apart from training.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
E3 = ROOT.parent / "shared" / "data" / "render-ceiling" / "data" / "e3"
LOG = ROOT / "benchmarks" / "results" / "learn_selection.json"
CACHE = Path("/tmp/viewcert-learn-cache")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("settings", help="JSON object of TrainSettings fields")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    import numpy as np
    import torch

    from viewcert.learn.cnn import TrainSettings, predict, train_cnn
    from viewcert.learn.data import CRYSTAL_SYSTEMS, load_learn_data, validation_split
    from viewcert.learn.pixel import cpu_seconds
    from viewcert.learn.views import ViewSettings, render_split

    cfg = {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(args.settings).items()}
    ts = TrainSettings(**cfg)
    d = load_learn_data(E3)
    c0 = cpu_seconds()
    x = render_split(d.train.items, ViewSettings(size=args.size), cache=CACHE)
    c1 = cpu_seconds()
    code = {c: i for i, c in enumerate(CRYSTAL_SYSTEMS)}
    y = np.array([code[c] for c in d.train.labels])
    val = validation_split(d.train.labels)
    fit = np.setdiff1d(np.arange(len(y)), val)
    model, curve = train_cnn(x[fit], y[fit], ts)
    c2 = cpu_seconds()
    rec = {"settings": ts.to_dict(), "image_size": args.size, "note": args.note,
           "val_correct": int((predict(model, x[val], tta=True) == y[val]).sum()),
           "val_correct_no_tta": int((predict(model, x[val], tta=False) == y[val]).sum()), "n_val": int(len(val)),
           "n_fit": int(len(fit)), "train_cpu_seconds": round(c2 - c1, 1), "render_cpu_seconds": round(c1 - c0, 1),
           "torch_threads": torch.get_num_threads(), "last_epoch": curve[-1],
           "parameters": int(sum(p.numel() for p in model.parameters())),
           "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    log = json.loads(LOG.read_text()) if LOG.is_file() else []
    log.append(rec)
    LOG.write_text(json.dumps(log, indent=1) + "\n")
    print(json.dumps(rec))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.exit(main())
