"""What a learned reader writes: predictions in viewcert's native results format (read by ``viewcert ladder``
as the rung ``learned reader: cell metrics`` or ``learned reader: pixels``), the model card (JSON) and a
ladder manifest listing every reader in the output folder (plus the study's prediction files when the input is
the study layout).

Layout of ``--out DIR``::

    DIR/<reader>/predictions.csv   item_id, target, parsed_answer, model, rung, run, category
    DIR/<reader>/card.json         data digests, protocol, image size, seed, library versions, curve, confusion
    DIR/<reader>/model.*           the fitted model (joblib for the forest, a torch state dict for the CNN)
    DIR/ladder.toml                manifest: ``viewcert ladder --manifest DIR/ladder.toml --r1 ...``
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from viewcert.attribution.table import LEARNED_CELL, LEARNED_PIXELS, STUDY_ARMS
from viewcert.io.atomic import write_text_atomic
from viewcert.learn.data import CRYSTAL_SYSTEMS, LearnData

READERS = {"cell-forest": LEARNED_CELL, "pixel-cnn": LEARNED_PIXELS}
MODEL_NAMES = {"cell-forest": "viewcert/cell-forest", "pixel-cnn": "viewcert/pixel-cnn"}
CARD_FORMAT = "viewcert-learned-reader/1"


def library_versions(*names: str) -> dict:
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for n in ("viewcert", "numpy", *names):
        try:
            out[n] = md.version(n)
        except md.PackageNotFoundError:
            out[n] = None
    return out


def confusion(truth, pred) -> dict:
    """Counts: ``matrix[i][j]`` = items of true system ``labels[i]`` answered ``labels[j]``."""
    idx = {c: i for i, c in enumerate(CRYSTAL_SYSTEMS)}
    m = [[0] * len(CRYSTAL_SYSTEMS) for _ in CRYSTAL_SYSTEMS]
    for t, p in zip(truth, pred, strict=True):
        m[idx[t]][idx[p]] += 1
    return {"labels": list(CRYSTAL_SYSTEMS), "rows": "truth", "columns": "prediction", "matrix": m}


def accuracy_record(correct: int, n: int) -> dict:
    from viewcert import stats as st

    b = st.clopper_pearson_interval(correct, n, 0.95)
    return {"correct": int(correct), "n": int(n), "accuracy": correct / n,
            "ci95_clopper_pearson": [b.lower, b.upper]}


def predictions_frame(reader: str, data: LearnData, pred) -> pd.DataFrame:
    return pd.DataFrame({
        "item_id": list(data.eval.ids), "target": list(data.eval.labels), "parsed_answer": [str(p) for p in pred],
        "model": MODEL_NAMES[reader], "rung": READERS[reader], "run": reader, "category": list(data.eval.labels),
    })


def write_reader(out: Path, reader: str, data: LearnData, pred, card: dict) -> Path:
    """Write ``predictions.csv`` and ``card.json`` under ``out/reader`` and refresh ``out/ladder.toml``."""
    folder = Path(out) / reader
    folder.mkdir(parents=True, exist_ok=True)
    frame = predictions_frame(reader, data, pred)
    write_text_atomic(folder / "predictions.csv", frame.to_csv(index=False, lineterminator="\n"))
    correct = int((np.asarray(frame["parsed_answer"]) == np.asarray(frame["target"])).sum())
    full = {"format": CARD_FORMAT, "reader": reader, "rung": READERS[reader], "model": MODEL_NAMES[reader],
            "data": data.to_dict(), "eval": accuracy_record(correct, len(frame)),
            "confusion": confusion(data.eval.labels, frame["parsed_answer"]), **card}
    write_text_atomic(folder / "card.json", json.dumps(full, indent=1, sort_keys=True) + "\n")
    write_manifest(Path(out), data)
    return folder


def _toml_str(s: str) -> str:
    return json.dumps(str(s), ensure_ascii=True)  # a JSON string with ASCII escapes is a TOML basic string


def study_prediction_files(source: str) -> tuple[Path | None, list[Path]]:
    """(eval.jsonl, the study's prediction files) when ``source`` is the study's ``data/e3`` folder."""
    p = Path(source)
    pred = p.parent.parent / "release" / "predictions"
    items = p / "eval.jsonl"
    if not (items.is_file() and pred.is_dir()):
        return (items if items.is_file() else None), []
    return items, sorted(f for f in pred.glob("*.json") if f.name.split("__", 1)[0] in STUDY_ARMS)


def write_manifest(out: Path, data: LearnData) -> Path:
    """``out/ladder.toml``: every reader folder with predictions in ``out``, plus the study's arms."""
    items, study_files = study_prediction_files(data.source)
    lines = ["[study]", f"name = {_toml_str('learned readers: ' + data.source)}", 'task = "crystal-system"']
    if items is not None:
        lines.append(f"items = {_toml_str(items.resolve())}")
    lines.append("")
    for f in study_files:
        arm = f.name.split("__", 1)[0]
        k = f.stem.rsplit("__K", 1)[-1]
        lines += ["[[input]]", f"path = {_toml_str(f.resolve())}", f"rung = {_toml_str(STUDY_ARMS[arm])}",
                  'harness = "study"', f"run = {_toml_str(f'{arm}-K{k}')}", ""]
    for reader in READERS:
        pred = out / reader / "predictions.csv"
        if pred.is_file():
            lines += ["[[input]]", f"path = {_toml_str(Path(reader) / 'predictions.csv')}",
                      f"model = {_toml_str(MODEL_NAMES[reader])}", f"rung = {_toml_str(READERS[reader])}",
                      'harness = "native"', f"run = {_toml_str(reader)}", ""]
    return write_text_atomic(out / "ladder.toml", "\n".join(lines))
