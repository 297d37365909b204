"""Produce the real harness output files in this folder by running each real harness package.

Documentation of how the committed files were made; the tests do not run it. Each harness lives in its
own throwaway venv (never the project venv), e.g.::

    python3 -m venv /tmp/harness-venv && /tmp/harness-venv/bin/pip install inspect-ai
    /tmp/harness-venv/bin/python tests/data/harness/real/make_real.py inspect

    python3 -m venv /tmp/harness-venv-lmms && /tmp/harness-venv-lmms/bin/pip install lmms-eval
    /tmp/harness-venv-lmms/bin/python tests/data/harness/real/make_real.py lmms_eval

    python3 -m venv /tmp/harness-venv-vlm && /tmp/harness-venv-vlm/bin/pip install ms-vlmeval
    /tmp/harness-venv-vlm/bin/python tests/data/harness/real/make_real.py vlmevalkit

Every harness gets a stub model that returns a fixed answer per (item, sample): the ``*_ANSWERS`` tables
below. ``tests/attribution/test_harness_real.py`` asserts what the readers make of the files from these tables.
Items: the first six of ``tests/data/harness/make_samples.py`` ITEMS (ids and crystal systems only).
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SYSTEMS = ["triclinic", "monoclinic", "orthorhombic", "tetragonal", "trigonal", "hexagonal", "cubic"]
LETTER = {s: chr(65 + i) for i, s in enumerate(SYSTEMS)}
ITEMS = [
    ("mp-1235466", "triclinic"),
    ("mp-1237061", "monoclinic"),
    ("mp-1105758", "orthorhombic"),
    ("mp-33615", "tetragonal"),
    ("mp-8279", "trigonal"),
    ("mp-19213", "hexagonal"),
]
QUESTION = "Identify the crystal system of the crystal structure (one of: " + ", ".join(SYSTEMS) + ")."

# ---------------------------------------------------------------------- Inspect AI
# (item, epoch) -> stub output; "RAISE" makes the stub raise (a sample error), ("FILTER", text) ends with
# stop_reason content_filter.
INSPECT_ANSWERS = {
    ("mp-1235466", 1): "ANSWER: triclinic",
    ("mp-1235466", 2): "I cannot tell without seeing the structure.",
    ("mp-1237061", 1): "ANSWER: monoclinic",
    ("mp-1237061", 2): "ANSWER: orthorhombic",
    ("mp-1105758", 1): "ANSWER: cubic",
    ("mp-1105758", 2): "RAISE",
    ("mp-33615", 1): "ANSWER: tetragonal",
    ("mp-33615", 2): ("FILTER", ""),
    ("mp-8279", 1): "ANSWER: hexagonal",
    ("mp-8279", 2): "ANSWER: hexagonal",
    ("mp-19213", 1): "ANSWER: hexagonal",
    ("mp-19213", 2): "ANSWER: hexagonal",
}
_TAG = re.compile(r"\[item (\S+) epoch (\d+)\]")


def run_inspect(out: Path) -> None:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, get_model, modelapi
    from inspect_ai.scorer import match
    from inspect_ai.solver import TaskState, generate, solver

    @solver
    def tag_epoch():
        async def solve(state: TaskState, gen):
            # the stub keys its answer on (item, epoch); the epoch is known only to the solver
            state.user_prompt.text = f"{state.user_prompt.text}\n[item {state.sample_id} epoch {state.epoch}]"
            return state

        return solve

    @modelapi(name="stub")
    def stub_api():
        return StubAPI

    class StubAPI(ModelAPI):
        """Fixed answers keyed by (item, epoch); counts tokens as words (no tokenizer download)."""

        def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **model_args):
            super().__init__(model_name, base_url, api_key, [], config)

        async def count_text_tokens(self, text: str) -> int:
            return max(1, len(text.split()))

        async def generate(self, input, tools, tool_choice, config) -> ModelOutput:
            text = "\n".join(m.text for m in input if m.role == "user")
            mid, epoch = _TAG.search(text).groups()
            answer = INSPECT_ANSWERS[(mid, int(epoch))]
            if answer == "RAISE":
                raise RuntimeError(f"stub failure for {mid} epoch {epoch}")
            if isinstance(answer, tuple):
                return ModelOutput.from_content(self.model_name, answer[1], stop_reason="content_filter")
            return ModelOutput.from_content(self.model_name, answer)

    dataset = MemoryDataset(
        [Sample(id=mid, input=QUESTION, target=cs, metadata={"crystal_system": cs}) for mid, cs in ITEMS],
        name="e3_real_stub",
    )
    task = Task(dataset=dataset, solver=[tag_epoch(), generate()], scorer=match(), epochs=2,
                name="e3_crystal_system_stub")
    with tempfile.TemporaryDirectory() as tmp:
        logs = eval(task, model=get_model("stub/crystal-fixed"), log_dir=tmp,
                    log_format="eval", fail_on_error=False, max_samples=1, display="none")
        src = Path(logs[0].location)
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, out / src.name)
        print("wrote", out / src.name, logs[0].status)



# ---------------------------------------------------------------------- lmms-eval
# item -> the stub's three responses (repeats: 3), in call order
LMMS_ANSWERS = {
    "mp-1235466": ["triclinic", "Answer: triclinic", "The crystal system is monoclinic."],
    "mp-1237061": ["monoclinic", "", "Monoclinic."],
    "mp-1105758": ["orthorhombic or tetragonal", "orthorhombic", "cubic"],
    "mp-33615": ["Answer: tetragonal", "tetragonal", "tetragonal"],
    "mp-8279": ["rhombohedral", "hexagonal", "I cannot determine the crystal system."],
    "mp-19213": ["hexagonal", "hexagonal", "hexagonal"],
}
LMMS_TASK_YAML = """\
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
task: {task}
test_split: test
output_type: generate_until
repeats: 3
doc_to_visual: !function e3_utils.doc_to_visual
doc_to_text: !function e3_utils.doc_to_text
doc_to_target: crystal_system
generation_kwargs:
  max_new_tokens: 32
  temperature: 0
  do_sample: false
process_results: !function e3_utils.process_results
metric_list:
  - metric: e3_crystal_system_acc
    aggregation: !function e3_utils.aggregate
    higher_is_better: true
metadata:
  - version: 0.0
"""
# the second task keeps all three responses per document (lmms-eval's default filter keeps the first)
LMMS_KEEP_ALL = """\
filter_list:
  - name: all3
    filter:
      - function: take_first_k
        k: 3
"""
LMMS_UTILS = """\
def doc_to_visual(doc):
    return []


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return doc["question"] + "\\nItem " + doc["material_id"]


def process_results(doc, results):
    # results: the filtered responses of the document's repeats; score = fraction naming the target
    flat = [x for r in results for x in (r if isinstance(r, list) else [r])]
    hits = [doc["crystal_system"] in str(r).lower() for r in flat]
    return {"e3_crystal_system_acc": {"material_id": doc["material_id"], "category": doc["crystal_system"],
                                      "score": sum(hits) / len(hits)}}


def aggregate(results):
    return sum(r["score"] for r in results) / len(results)
"""
LMMS_MODEL = """\
from collections import defaultdict

from lmms_eval.api.model import lmms

ANSWERS = {answers!r}


class CrystalStub(lmms):
    \"\"\"Fixed responses keyed by the item id in the prompt; the k-th call for an item gets the k-th.\"\"\"

    def __init__(self, **kwargs):
        super().__init__()
        self.calls = defaultdict(int)

    def generate_until(self, requests):
        out = []
        for req in requests:
            context = req.args[0]
            key = (req.task_name, context.rsplit("Item ", 1)[1].strip())
            out.append(ANSWERS[key[1]][self.calls[key]])
            self.calls[key] += 1
        return out

    def loglikelihood(self, requests):
        raise NotImplementedError

    def generate_until_multi_round(self, requests):
        return self.generate_until(requests)
"""


def run_lmms_eval(out: Path) -> None:
    import json
    import os

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        with open(t / "e3_items.jsonl", "w", encoding="utf-8") as f:
            for mid, cs in ITEMS:
                f.write(json.dumps({"material_id": mid, "crystal_system": cs, "question": QUESTION}) + "\n")
        tasks = t / "tasks"
        tasks.mkdir()
        data = t / "e3_items.jsonl"
        (tasks / "e3_first.yaml").write_text(LMMS_TASK_YAML.format(data=data, task="e3_crystal_system_stub"))
        (tasks / "e3_all3.yaml").write_text(
            LMMS_TASK_YAML.format(data=data, task="e3_crystal_system_stub_all3") + LMMS_KEEP_ALL)
        (tasks / "e3_utils.py").write_text(LMMS_UTILS)
        (t / "crystal_stub_lmms.py").write_text(LMMS_MODEL.format(answers=LMMS_ANSWERS))
        sys.path.insert(0, str(t))
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        from lmms_eval.__main__ import cli_evaluate
        from lmms_eval.models import MODEL_REGISTRY_V2
        from lmms_eval.models.registry_v2 import ModelManifest

        MODEL_REGISTRY_V2.register_manifest(
            ModelManifest(model_id="crystal_stub", simple_class_path="crystal_stub_lmms.CrystalStub"))
        res = t / "out"
        sys.argv = ["lmms-eval", "--model", "crystal_stub", "--tasks", "e3_crystal_system_stub,e3_crystal_system_stub_all3",
                    "--model_args", "pretrained=stub/crystal-fixed",
                    "--include_path", str(tasks), "--batch_size", "1", "--log_samples",
                    "--output_path", str(res)]
        cli_evaluate()
        out.mkdir(parents=True, exist_ok=True)
        for p in sorted(res.rglob("*")):
            if p.is_file():
                dest = out / p.relative_to(res)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(p, dest)
                print("wrote", dest)


# ---------------------------------------------------------------------- VLMEvalKit
# item -> the stub's prediction; the dataset offers the seven systems as options A-G (in SYSTEMS order)
VLM_ANSWERS = {
    "mp-1235466": "A",
    "mp-1237061": "Answer: B",
    "mp-1105758": "orthorhombic",
    "mp-33615": "F",
    "mp-8279": "Failed to obtain answer via API.",
    "mp-19213": "It is either hexagonal or trigonal.",
}


def _tiny_png_b64() -> str:
    import base64
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 200, 200)).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def run_vlmevalkit(out: Path) -> None:
    import os

    import pandas as pd

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        os.environ["LMUData"] = str(t / "LMUData")
        (t / "LMUData").mkdir()
        img = _tiny_png_b64()
        rows = []
        for i, (mid, cs) in enumerate(ITEMS):
            row = {"index": i, "image": img, "question": f"{QUESTION} Item {mid}"}
            row.update({LETTER[x]: x for x in SYSTEMS})
            row.update({"answer": LETTER[cs], "category": cs, "l2-category": "crystal_system", "split": "eval",
                        "material_id": mid})
            rows.append(row)
        pd.DataFrame(rows).to_csv(t / "LMUData" / "E3CrystalStub.tsv", sep="\t", index=False)

        from vlmeval.dataset.image_mcq import CustomMCQDataset
        from vlmeval.inference import infer_data_job
        from vlmeval.vlm.base import BaseModel

        class CrystalStub(BaseModel):
            """Fixed predictions keyed by the item id in the question."""

            INTERLEAVE = False

            def generate_inner(self, message, dataset=None):
                text = "\n".join(m["value"] for m in message if m["type"] == "text")
                mid = re.search(r"Item (mp-\d+)", text).group(1)
                return VLM_ANSWERS[mid]

        out.mkdir(parents=True, exist_ok=True)
        for fmt in ("xlsx", "tsv"):  # VLMEvalKit's default prediction format, and PRED_FORMAT=tsv
            os.environ["PRED_FORMAT"] = fmt
            dataset = CustomMCQDataset(dataset="E3CrystalStub")
            work = t / f"work_{fmt}"
            work.mkdir()
            infer_data_job(CrystalStub(), work_dir=str(work), model_name="CrystalStub", dataset=dataset)
            dataset.evaluate(str(work / f"CrystalStub_E3CrystalStub.{fmt}"), model="exact_matching", nproc=1)
            for p in sorted(work.iterdir()):
                if p.is_file() and p.suffix in (".xlsx", ".csv", ".tsv", ".json"):
                    shutil.copy(p, out / p.name)
                    print("wrote", out / p.name)

if __name__ == "__main__":
    which = sys.argv[1]
    {"inspect": lambda: run_inspect(HERE / "inspect"),
     "lmms_eval": lambda: run_lmms_eval(HERE / "lmms_eval"),
     "vlmevalkit": lambda: run_vlmevalkit(HERE / "vlmevalkit")}[which]()
