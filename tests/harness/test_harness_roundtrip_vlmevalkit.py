"""Round trip through VLMEvalKit (issue 20; run by ``make harness``). VLMEvalKit is not on the package index under
its own name, so two paths:

- when ``vlmeval`` imports in the harness venv (``VIEWCERT_HARNESS_PYTHON``, which ``make harness`` sets):
  its own ``build_dataset`` on the shipped ``benchmark.tsv`` (copied into ``$LMUData`` as the steps in
  HARNESSES.md say) picks ``CustomMCQDataset`` / ``CustomVQADataset``, ``infer_data_job`` runs a ``BaseModel``
  stub with answers chosen here and, for MCQ, ``dataset.evaluate(model="exact_matching")`` scores it; the ladder
  reads VLMEvalKit's own result file back (no id option) and R4 must equal the accuracy VLMEvalKit reports and
  the hand count;
- otherwise (every ``make test``): the TSV is read back exactly as ``CustomMCQDataset`` does with pandas (the
  ``image`` list literal, base64 decoding, the prompt ``build_prompt`` makes) and a prediction file in
  VLMEvalKit's layout is read by the ladder.
"""

from __future__ import annotations

import ast
import base64
import io
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from tests.support.harness_roundtrip import (
    HARNESS_PY,
    crystal_export,
    harness_import_error,
    ladder_manifest,
    questions,
    zoom_export,
)
from viewcert.attribution.pipeline import run_ladder
from viewcert.stats import BootstrapSettings

NAME = {"crystal-system": "ViewcertCrystalSystem", "zoom": "ViewcertZoom"}  # as HARNESSES.md names them

DRIVER = r'''
import json, os, re, shutil, sys
lmu, name, tsv, answers, work = sys.argv[1:]
os.environ["LMUData"] = lmu
os.environ["PRED_FORMAT"] = "tsv"
shutil.copy(tsv, os.path.join(lmu, name + ".tsv"))
from vlmeval.dataset import build_dataset
from vlmeval.inference import infer_data_job
from vlmeval.vlm.base import BaseModel
answers = json.load(open(answers))
seen = {}

class Stub(BaseModel):
    INTERLEAVE = False

    def generate_inner(self, message, dataset=None):
        images = [m["value"] for m in message if m["type"] == "image"]
        qid = re.search(r"(q\d{4})_v0\.png$", images[0]).group(1)
        seen[qid] = {"images": images, "text": "\n".join(m["value"] for m in message if m["type"] == "text")}
        return answers[qid]

dataset = build_dataset(name)
infer_data_job(Stub(), work_dir=work, model_name="Stub", dataset=dataset)
pred = os.path.join(work, "Stub_" + name + ".tsv")
report = {"class": type(dataset).__name__, "seen": seen, "pred": pred}
if dataset.TYPE == "MCQ":
    acc = dataset.evaluate(pred, model="exact_matching", nproc=1)
    report["overall"] = float(acc.loc[0, "Overall"])
    report["result"] = [os.path.join(work, f) for f in os.listdir(work) if f.endswith("_result.tsv")][0]
json.dump(report, open(os.path.join(work, "report.json"), "w"))
'''


VLM = harness_import_error("vlmeval.dataset")
HAS_VLMEVAL = VLM is None
pytestmark = pytest.mark.harness


@pytest.fixture(scope="module")
def crystal(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vlm") / "cs"
    crystal_export(folder, 4)
    qs = questions(folder)
    wrong = "B" if qs[1]["answer_letter"] != "B" else "C"
    # right (letter), wrong (letter), right (the option's text), no answer
    answers = {qs[0]["id"]: qs[0]["answer_letter"], qs[1]["id"]: wrong, qs[2]["id"]: qs[2]["answer"],
               qs[3]["id"]: "I cannot see the structure."}
    return folder, qs, answers, 2


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_tsv_reads_as_custom_mcq_dataset_does(crystal):
    """pandas reading of benchmark.tsv as VLMEvalKit's ImageBaseDataset + ImageMCQDataset.build_prompt do."""
    folder, qs, _, _ = crystal
    data = pd.read_csv(folder / "benchmark.tsv", sep="\t")  # vlmeval.smp.load for .tsv
    assert {"A", "B", "question", "image"} <= set(data.columns)  # build_dataset: A and B → CustomMCQDataset
    for (_, line), q in zip(data.iterrows(), qs, strict=True):
        images = [str(x) for x in ast.literal_eval(line["image"])]  # toliststr on a list literal
        assert len(images) == len(q["images"]) == 5
        for b64, rel in zip(images, q["images"], strict=True):  # decodes pixel-identical to the shipped PNG
            assert np.array_equal(_pixels(base64.b64decode(b64)), _pixels((folder / rel).read_bytes()))
        options = {c: line[c] for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c in line and not pd.isna(line[c])}
        prompt = f"Question: {line['question']}\nOptions:\n" + "".join(f"{k}. {v}\n" for k, v in options.items())
        assert prompt.count("triclinic") == 1  # VLMEvalKit's own "Options:" block is the only list
        assert line["answer"] == q["answer_letter"] and line["id"] == q["id"] and line["index"] == q["index"]
        assert line["category"] == q["answer"]  # a per-class table, not one row named after the task


def test_prediction_file_in_vlmevalkit_layout_reads_back(crystal, tmp_path):
    """VLMEvalKit's inference output: the dataset's columns but the image, plus ``prediction``."""
    folder, qs, answers, hand = crystal
    data = pd.read_csv(folder / "benchmark.tsv", sep="\t").drop(columns=["image"])
    data["prediction"] = [answers[i] for i in data["id"]]
    pred = tmp_path / "Stub_ViewcertCrystalSystem.tsv"
    data.to_csv(pred, sep="\t", index=False)
    lad, table, _ = run_ladder(manifest=ladder_manifest(tmp_path / "m.toml", folder, pred, model="Stub"),
                               bootstrap=BootstrapSettings(n_boot=100), threshold=0.5)
    assert (lad.arms.iloc[0]["correct"], lad.arms.iloc[0]["n"]) == (hand, 4)
    assert sorted(table.frame["item_id"]) == [q["id"] for q in qs]  # index mapped through ids.csv


def _run_vlmevalkit(folder: Path, task: str, answers: dict, tmp: Path) -> dict:
    (tmp / "LMUData").mkdir()
    (tmp / "work").mkdir()
    (tmp / "answers.json").write_text(json.dumps(answers))
    (tmp / "driver.py").write_text(DRIVER)
    r = subprocess.run([str(HARNESS_PY), str(tmp / "driver.py"), str(tmp / "LMUData"), NAME[task],
                        str(folder / "benchmark.tsv"), str(tmp / "answers.json"), str(tmp / "work")],
                       capture_output=True, text=True, timeout=900, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads((tmp / "work" / "report.json").read_text())


@pytest.mark.skipif(not HAS_VLMEVAL, reason=str(VLM))
def test_vlmevalkit_mcq_round_trip(crystal, tmp_path):
    folder, qs, answers, hand = crystal
    rep = _run_vlmevalkit(folder, "crystal-system", answers, tmp_path)
    assert rep["class"] == "CustomMCQDataset"
    for q in qs:
        seen = rep["seen"][q["id"]]
        assert seen["text"].count("triclinic") == 1 and "Options:" in seen["text"]
        for path, rel in zip(seen["images"], q["images"], strict=True):
            assert np.array_equal(_pixels(Path(path).read_bytes()), _pixels((folder / rel).read_bytes()))
    assert rep["overall"] == pytest.approx(hand / 4)
    lad, _, _ = run_ladder(manifest=ladder_manifest(tmp_path / "m.toml", folder, Path(rep["result"]), model="Stub"),
                           bootstrap=BootstrapSettings(n_boot=100), threshold=0.5)
    arm = lad.arms.iloc[0]
    assert (arm["correct"], arm["n"]) == (hand, 4) and arm["accuracy"] == pytest.approx(rep["overall"])
    assert lad.harness_agreement.iloc[0]["harness_correct"] == hand


@pytest.mark.skipif(not HAS_VLMEVAL, reason=str(VLM))
def test_vlmevalkit_vqa_zoom_round_trip(tmp_path):
    folder = tmp_path / "zoom"
    zoom_export(folder)
    qs = questions(folder)
    d = [int(q["answer"].split()[-1]) for q in qs]
    answers = {q["id"]: f"move z {d[-1]}" for q in qs}  # one answer for all: right for the last question
    rep = _run_vlmevalkit(folder, "zoom", answers, tmp_path)
    assert rep["class"] == "CustomVQADataset"  # no option columns: VLMEvalKit's VQA path (predictions only)
    lad, _, _ = run_ladder(manifest=ladder_manifest(tmp_path / "m.toml", folder, Path(rep["pred"]), model="Stub"),
                           bootstrap=BootstrapSettings(n_boot=100), threshold=0.5)
    assert lad.arms.iloc[0]["correct"] == sum(x == d[-1] for x in d) >= 1
    credit = sum(max(0.0, 1 - abs(d[-1] - x) / 10) for x in d) / len(d)
    assert lad.task_scores.iloc[0]["misi_credit"] == pytest.approx(credit, abs=1e-12)
