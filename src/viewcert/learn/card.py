"""What a learned reader writes: predictions in viewcert's native results format (read by ``viewcert ladder``
as the rung ``learned reader: cell metrics`` or ``learned reader: pixels``), the model card (JSON) and a
ladder manifest listing every reader in the output folder (plus the study's prediction files when the input is
the study layout).

Layout of ``--out DIR``::

    DIR/<reader>/predictions.csv   item_id, target, parsed_answer, model, rung, run, category
    DIR/<reader>/card.json         data digests, protocol, image size, seed, library versions, curve, confusion
    DIR/<reader>/model.*           the fitted model (joblib for the forest, a torch state dict for the CNN)
    DIR/<reader>/report.md         accuracy with its interval, the learning curve and the confusion matrix
    DIR/ladder.toml                manifest: ``viewcert ladder --manifest DIR/ladder.toml --r1 ...``
"""

from __future__ import annotations

import importlib.metadata as md
import json
import platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from viewcert import stats as st
from viewcert.attribution.table import LEARNED_CELL, LEARNED_PIXELS, STUDY_ARMS
from viewcert.formats.ladder import LadderInput, LadderManifest, write_ladder_manifest
from viewcert.io.atomic import write_text_atomic
from viewcert.io.confine import inner_folder
from viewcert.io.tables import frame_csv_text
from viewcert.learn.data import CRYSTAL_SYSTEMS, LearnData
from viewcert.sanitize import markdown_text

READERS = {"cell-forest": LEARNED_CELL, "pixel-cnn": LEARNED_PIXELS}
MODEL_NAMES = {"cell-forest": "viewcert/cell-forest", "pixel-cnn": "viewcert/pixel-cnn"}
CARD_FORMAT = "viewcert-learned-reader/1"


@dataclass(frozen=True)
class LearnOutcome:
    """What one ``viewcert learn`` run wrote: the reader, its folder, correct of n eval items, the card."""

    reader: str
    folder: Path
    correct: int
    n: int
    card: dict


def library_versions(*names: str) -> dict:
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
    b = st.clopper_pearson_interval(correct, n, 0.95)
    return {"correct": int(correct), "n": int(n), "accuracy": correct / n,
            "ci95_clopper_pearson": [b.lower, b.upper]}


def predictions_frame(reader: str, data: LearnData, pred) -> pd.DataFrame:
    return pd.DataFrame({
        "item_id": list(data.eval.ids), "target": list(data.eval.labels), "parsed_answer": [str(p) for p in pred],
        "model": MODEL_NAMES[reader], "rung": READERS[reader], "run": reader, "category": list(data.eval.labels),
    })


def write_reader(out: Path, reader: str, data: LearnData, pred, card: dict) -> Path:
    """Write ``predictions.csv`` (every text cell by the table rule, ``io.tables``), ``card.json`` and
    ``report.md`` under ``out/reader`` and refresh ``out/ladder.toml``."""
    folder = inner_folder(Path(out) / reader)  # no symlink on the way (refused, one line)
    frame = predictions_frame(reader, data, pred)
    write_text_atomic(folder / "predictions.csv", frame_csv_text(frame))
    correct = int((np.asarray(frame["parsed_answer"]) == np.asarray(frame["target"])).sum())
    full = {"format": CARD_FORMAT, "reader": reader, "rung": READERS[reader], "model": MODEL_NAMES[reader],
            "data": data.to_dict(), "eval": accuracy_record(correct, len(frame)),
            "confusion": confusion(data.eval.labels, frame["parsed_answer"]), **card}
    write_text_atomic(folder / "card.json", json.dumps(full, indent=1, sort_keys=True) + "\n")
    write_text_atomic(folder / "report.md", report_markdown(full))
    write_manifest(Path(out), data)
    return folder


def _interval(rec: dict) -> str:
    return f"[{rec['ci95_clopper_pearson'][0]:.3f}, {rec['ci95_clopper_pearson'][1]:.3f}]"


def report_markdown(card: dict) -> str:
    """The reader's report page: what it is, accuracy with its exact interval, the learning curve (correct
    vs training size, each with its interval) and the confusion matrix (rows truth, columns prediction)."""
    ev, conf = card["eval"], card["confusion"]
    lines = [f"# {markdown_text(card['reader'])}: {markdown_text(card['rung'])}", "",
             markdown_text(card.get("what", "")), "",
             f"- eval input: {markdown_text(card['data']['input'])}",
             f"- training input: {markdown_text(card['data']['train_input'])} ({card['data']['n_train']} items)",
             f"- seed: {card.get('seed')}" + ("" if card.get("protocol") is None else
                                                f"; protocol: {markdown_text(card['protocol'])}; "
                                                f"image size: {card.get('image_size')} px"),
             f"- **{ev['correct']}/{ev['n']} = {ev['accuracy']:.3f}**, exact 95 % interval {_interval(ev)} "
             "(an empirical reading, not a certificate)", "",
             "## Learning curve", "", "| training items | correct | accuracy | exact 95 % interval |",
             "|---:|---:|---:|---|"]
    for r in card.get("training_curve", []):
        rec = accuracy_record(r["correct"], r["n"])
        lines.append(f"| {r['n_train']} | {r['correct']}/{r['n']} | {rec['accuracy']:.3f} | {_interval(rec)} |")
    labels = conf["labels"]
    lines += ["", "## Confusion matrix", "", "Rows: truth; columns: prediction.", "",
              "| truth | " + " | ".join(labels) + " | n |", "|---|" + "---:|" * (len(labels) + 1)]
    for lab, row in zip(conf["labels"], conf["matrix"], strict=True):
        lines.append(f"| {lab} | " + " | ".join(str(v) for v in row) + f" | {sum(row)} |")
    return "\n".join(lines) + "\n"


def study_prediction_files(source: str) -> tuple[Path | None, list[Path]]:
    """(eval.jsonl, the study's prediction files) when ``source`` is the study's ``data/e3`` folder."""
    p = Path(source)
    pred = p.parent.parent / "release" / "predictions"
    items = p / "eval.jsonl"
    if not (items.is_file() and pred.is_dir()):
        return (items if items.is_file() else None), []
    return items, sorted(f for f in pred.glob("*.json") if f.name.split("__", 1)[0] in STUDY_ARMS)


def write_manifest(out: Path, data: LearnData) -> Path:
    """``out/ladder.toml`` (``formats.ladder``): every reader folder with predictions in ``out``, plus the study's
    arms."""
    items, study_files = study_prediction_files(data.source)
    inputs = []
    for f in study_files:
        arm = f.name.split("__", 1)[0]
        k = f.stem.rsplit("__K", 1)[-1]
        inputs.append(LadderInput(path=str(f.resolve()), rung=STUDY_ARMS[arm], harness="study", run=f"{arm}-K{k}"))
    for reader in READERS:
        if (out / reader / "predictions.csv").is_file():
            inputs.append(LadderInput(path=str(Path(reader) / "predictions.csv"), rung=READERS[reader],
                                      model=MODEL_NAMES[reader], harness="native", run=reader))
    manifest = LadderManifest(inputs=tuple(inputs), name="learned readers: " + data.source, task="crystal-system",
                              items=None if items is None else str(items.resolve()))
    return write_ladder_manifest(out / "ladder.toml", manifest)
