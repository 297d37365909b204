"""Write the sample harness files in this folder (run once; the outputs are committed).

Each file follows the format its harness writes (see the reader modules in
``viewcert.attribution.readers`` for the field-by-field description). Eight items of the render-ceiling
e3 evaluation split (ids and true crystal systems only), two fictitious models:

- ``acme/vlm-7b``: R4 in VLMEvalKit (MCQ result xlsx + prediction tsv), R3 in lmms-eval
  (``--log_samples`` JSONL, 3 repeats), no-image in Inspect AI (``.eval`` zip and ``.json``, 2 epochs);
- ``beta/lab-13b``: R4 in the study's prediction JSON (K = 3), R3 as native CSV, no-image as native JSONL.

Run: ``python tests/data/harness/make_samples.py``.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pandas as pd

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
    ("mp-862873", "cubic"),
    ("mp-867321", "cubic"),
]
IMAGE_Q = ("You are shown standardized multi-view ball-and-stick renders of a crystal structure (principal-axis and "
           "oblique views of the conventional cell). Identify the crystal system.")
TEXT_Q = "You are given the complete geometry of a crystal structure as text. Identify the crystal system."
NOIMG_Q = "Identify the crystal system of the crystal structure (one of: " + ", ".join(SYSTEMS) + ")."


def h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def write_json(path: Path, obj, indent: int | None = 2) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------- items
def items() -> None:
    with open(HERE / "items.jsonl", "w", encoding="utf-8") as f:
        for mid, cs in ITEMS:
            f.write(json.dumps({"material_id": mid, "crystal_system": cs, "source": "MP", "split": "eval"}) + "\n")


# ---------------------------------------------------------------------- VLMEvalKit
VLM_PRED = [
    "Looking at the oblique views, no axis is special.\nAnswer: A",
    "The c-axis view shows a centred rectangle; beta is not 90 degrees. Answer: B",
    "C",
    "The a and b views look identical and the cell is square in projection.\nAnswer: F",
    "Failed to obtain answer via API.",
    "Hexagonal close packing of the metal atoms is visible along c. The answer is (F).",
    "G",
    "It could be cubic or tetragonal, the images are too small to tell.",
]


def vlmevalkit() -> None:
    rows = []
    for i, ((mid, cs), pred) in enumerate(zip(ITEMS, VLM_PRED, strict=True)):
        row = {"index": i, "question": IMAGE_Q}
        row.update({LETTER[s]: s for s in SYSTEMS})
        row.update({"answer": LETTER[cs], "category": cs, "l2-category": "crystal_system", "split": "eval",
                    "material_id": mid, "prediction": pred})
        rows.append(row)
    pred = pd.DataFrame(rows)
    d = HERE / "vlmevalkit"
    d.mkdir(parents=True, exist_ok=True)
    pred.to_csv(d / "AcmeVLM-7B_E3CrystalSystem.tsv", sep="\t", index=False)
    hits = [1, 1, 1, 0, 0, 1, 1, 0]
    logs = [
        "Match Log: Option A extracted from the prediction.",
        "Match Log: Option B extracted from the prediction.",
        "Match Log: Prediction is a single option letter.",
        "Match Log: Option F extracted from the prediction.",
        "Failed to obtain answer via API.",
        "Match Log: Option F extracted from the prediction.",
        "Match Log: Prediction is a single option letter.",
        "Match Log: Cannot infer an option; judged wrong.",
    ]
    res = pred.assign(hit=hits, log=logs)
    res.to_excel(d / "AcmeVLM-7B_E3CrystalSystem_exact_matching_result.xlsx", index=False, engine="openpyxl")
    acc = pd.DataFrame({"split": ["eval"], "Overall": [sum(hits) / len(hits)],
                        **{s: [res.loc[res["category"] == s, "hit"].mean()] for s in sorted(set(res["category"]))}})
    acc.to_csv(d / "AcmeVLM-7B_E3CrystalSystem_acc.csv", index=False)


# ---------------------------------------------------------------------- lmms-eval
LMMS_RESPS = [
    ["All angles differ from 90 degrees, so the crystal system is triclinic.", "Triclinic.", "triclinic"],
    ["alpha = gamma = 90, beta = 104.2: monoclinic.", "Monoclinic", "The cell is monoclinic."],
    ["a != b != c with right angles: orthorhombic.", "orthorhombic", "Tetragonal? No: a != b. Orthorhombic."],
    ["a = b != c, all angles 90: the crystal system is tetragonal.", "tetragonal", "Answer: tetragonal"],
    ["The rhombohedral setting suggests trigonal.", "Hexagonal axes, gamma = 120: hexagonal.",
     "Answer: trigonal"],
    ["gamma = 120 and a = b: hexagonal.", "hexagonal", ""],
    ["a = b = c and 90 degree angles: cubic.", "cubic", "cubic"],
    ["a = b = c, all angles 90: cubic.", "Looks tetragonal or cubic.", "tetragonal"],
]


def lmms_eval() -> None:
    d = HERE / "lmms_eval" / "acme__vlm-7b"
    d.mkdir(parents=True, exist_ok=True)
    date_id = "20250611_103212"
    task = "e3_crystal_system_r3"
    lines = []
    for doc_id, ((mid, cs), resps) in enumerate(zip(ITEMS, LMMS_RESPS, strict=True)):
        prompt = f"{TEXT_Q}\n\nCell parameters: (omitted in this sample)\nItem {mid}"
        lines.append({
            "doc_id": doc_id,
            "target": cs,
            "filtered_resps": [resps],
            "doc_hash": h(json.dumps({"material_id": mid, "crystal_system": cs})),
            "prompt_hash": h(prompt),
            "target_hash": h(cs),
            "e3_crystal_system_acc": {"material_id": mid, "category": cs,
                                      "score": sum(cs in r.lower() for r in resps) / len(resps)},
            "input": prompt,
        })
    with open(d / f"{date_id}_samples_{task}.jsonl", "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    write_json(d / f"{date_id}_results.json", {
        "results": {task: {"alias": task, "e3_crystal_system_acc,none": 0.79, "e3_crystal_system_acc_stderr,none": "N/A"}},
        "configs": {task: {"task": task, "dataset_path": "local/e3_eval_r3", "test_split": "eval", "repeats": 3,
                           "output_type": "generate_until", "generation_kwargs": {"max_new_tokens": 512,
                                                                                  "temperature": 0.7}}},
        "versions": {task: 0}, "n-shot": {task: 0}, "config": {"model": "acme_vlm", "model_args": "pretrained=acme/vlm-7b",
                                                                "batch_size": "1", "limit": None},
        "model_name": "acme/vlm-7b", "model_name_sanitized": "acme__vlm-7b", "date": date_id,
    })


# ---------------------------------------------------------------------- Inspect AI
INSPECT_OUT = {
    ("mp-1235466", 1): ("I can't determine the crystal system without seeing the structure.", "I"),
    ("mp-1235466", 2): ("Without images I will guess: cubic.", "I"),
    ("mp-1237061", 1): ("ANSWER: monoclinic", "C"),
    ("mp-1237061", 2): ("ANSWER: orthorhombic", "I"),
    ("mp-1105758", 1): ("ANSWER: cubic", "I"),
    ("mp-1105758", 2): ("ANSWER: cubic", "I"),
    ("mp-33615", 1): ("ANSWER: tetragonal", "C"),
    ("mp-33615", 2): (None, None),  # API error
    ("mp-8279", 1): ("ANSWER: hexagonal", "I"),
    ("mp-8279", 2): ("ANSWER: cubic", "I"),
    ("mp-19213", 1): ("ANSWER: hexagonal", "C"),
    ("mp-19213", 2): ("ANSWER: hexagonal", "C"),
    ("mp-862873", 1): ("ANSWER: cubic", "C"),
    ("mp-862873", 2): ("ANSWER: cubic", "C"),
    ("mp-867321", 1): ("ANSWER: cubic", "C"),
    ("mp-867321", 2): ("ANSWER: tetragonal", "I"),
}


def _inspect_sample(mid: str, cs: str, epoch: int) -> dict:
    text, value = INSPECT_OUT[(mid, epoch)]
    user = {"id": f"u-{mid}-{epoch}", "content": NOIMG_Q, "source": "input", "role": "user"}
    sample = {
        "id": mid,
        "epoch": epoch,
        "input": [user],
        "target": cs,
        "messages": [user],
        "metadata": {"crystal_system": cs, "source": "MP"},
        "store": {},
        "events": [],
        "model_usage": {},
        "total_time": 2.4,
        "working_time": 2.3,
        "uuid": h(f"{mid}-{epoch}")[:22],
        "attachments": {},
    }
    if text is None:
        sample["output"] = {"model": "acme/vlm-7b", "choices": [], "completion": "", "time": 30.0}
        sample["error"] = {"message": "RateLimitError('Error code: 429 - rate limit exceeded')",
                           "traceback": "Traceback (most recent call last): ...", "traceback_ansi": ""}
        return sample
    msg = {"id": f"a-{mid}-{epoch}", "content": text, "source": "generate", "role": "assistant",
           "model": "acme/vlm-7b"}
    sample["messages"] = [user, msg]
    sample["output"] = {
        "model": "acme/vlm-7b",
        "choices": [{"message": msg, "stop_reason": "stop"}],
        "completion": text,
        "usage": {"input_tokens": 61, "output_tokens": 9, "total_tokens": 70},
        "time": 1.7,
    }
    sample["scores"] = {"match": {"value": value, "answer": text.replace("ANSWER: ", ""),
                                  "explanation": text, "history": []}}
    sample["model_usage"] = {"acme/vlm-7b": {"input_tokens": 61, "output_tokens": 9, "total_tokens": 70}}
    return sample


def inspect_ai() -> None:
    d = HERE / "inspect"
    d.mkdir(parents=True, exist_ok=True)
    samples = [_inspect_sample(mid, cs, e) for mid, cs in ITEMS for e in (1, 2)]
    spec = {
        "eval_id": "Z8fK2mQp4RvT6wYx9aBcDe",
        "run_id": "Hk3pQ2vR8sWm4nTzLj5bXc",
        "created": "2025-06-11T10:32:12+00:00",
        "task": "e3_crystal_system_noimage",
        "task_id": "Qm7sVt2Kp9LxRz4NwB3yFh",
        "task_version": 0,
        "task_file": "e3_tasks.py",
        "task_attribs": {},
        "task_args": {},
        "dataset": {"name": "e3_eval", "location": "e3_eval.jsonl", "samples": len(ITEMS),
                    "sample_ids": [m for m, _ in ITEMS], "shuffled": False},
        "model": "acme/vlm-7b",
        "model_generate_config": {"temperature": 0.7},
        "model_args": {},
        "config": {"epochs": 2, "epochs_reducer": ["mean"], "fail_on_error": False, "log_samples": True,
                   "log_images": False, "score_display": True},
        "packages": {"inspect_ai": "0.3.105"},
        "scorers": [{"name": "match", "options": {"location": "any"}, "metrics": [{"name": "accuracy", "options": {}},
                                                                                  {"name": "stderr", "options": {}}],
                     "metadata": {}}],
    }
    plan = {"name": "plan", "steps": [{"solver": "generate", "params": {}}], "config": {}}
    n_scored = sum(1 for s in samples if "scores" in s)
    correct = sum(1 for s in samples if s.get("scores", {}).get("match", {}).get("value") == "C")
    results = {"total_samples": len(samples), "completed_samples": n_scored,
               "scores": [{"name": "match", "scorer": "match", "reducer": "mean", "params": {},
                           "metrics": {"accuracy": {"name": "accuracy", "value": correct / n_scored, "params": {}},
                                       "stderr": {"name": "stderr", "value": 0.12, "params": {}}}}]}
    stats = {"started_at": "2025-06-11T10:32:12+00:00", "completed_at": "2025-06-11T10:33:40+00:00",
             "model_usage": {"acme/vlm-7b": {"input_tokens": 915, "output_tokens": 150, "total_tokens": 1065}}}
    header = {"version": 2, "status": "success", "eval": spec, "plan": plan, "results": results, "stats": stats}
    summaries = [{"id": s["id"], "epoch": s["epoch"], "input": s["input"], "target": s["target"],
                  "scores": s.get("scores", {}), "error": (s.get("error") or {}).get("message")} for s in samples]
    reductions = [{"scorer": "match", "reducer": "mean",
                   "samples": [{"sample_id": m, "value": 0.5, "answer": None} for m, _ in ITEMS]}]
    name = "2025-06-11T10-32-12+00-00_e3-crystal-system-noimage_Hk3pQ2vR8sWm4nTzLj5bXc"
    members = [("_journal/start.json", {"version": 2, "eval": spec, "plan": plan})]
    members += [(f"samples/{s['id']}_epoch_{s['epoch']}.json", s) for s in samples]
    members += [("_journal/summaries/1.json", summaries), ("summaries.json", summaries),
                ("reductions.json", reductions), ("header.json", header)]
    with zipfile.ZipFile(d / f"{name}.eval", "w", compression=zipfile.ZIP_DEFLATED) as z:
        for member, obj in members:
            info = zipfile.ZipInfo(member, date_time=(2025, 6, 11, 10, 33, 40))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, json.dumps(obj, indent=2))
    write_json(d / f"{name}.json", {**header, "samples": samples, "reductions": reductions})


# ---------------------------------------------------------------------- the study's format + native
STUDY_VOTES = [
    {"triclinic": 2, "monoclinic": 1},
    {"monoclinic": 1, "triclinic": 1},  # tie: first occurrence wins
    {"orthorhombic": 3},
    {"tetragonal": 2},  # one sample failed
    {"hexagonal": 3},
    {"hexagonal": 3},
    {"cubic": 3},
    {},  # no answer at all
]


def study() -> None:
    preds = []
    for (mid, cs), votes in zip(ITEMS, STUDY_VOTES, strict=True):
        pred = next(iter(votes)) if votes else None
        if votes and max(votes.values()) == 1:
            pred = next(iter(votes))
        preds.append({"material_id": mid, "truth": cs, "pred": pred, "votes": votes})
    correct = sum(p["pred"] == p["truth"] for p in preds)
    write_json(HERE / "study" / "frontier__beta__lab-13b__K3.json",
               {"model": "beta/lab-13b", "arm": "frontier zero-shot", "K": 3, "n": len(preds),
                "micro": round(correct / len(preds), 4), "predictions": preds}, indent=None)


NATIVE_R3 = ["triclinic", "Answer: monoclinic", "orthorhombic", "tetragonal", "The answer is trigonal.",
             "hexagonal", "cubic", "cubic"]
NATIVE_NOIMG = ["cubic", "monoclinic", "cubic", None, "hexagonal", "hexagonal", "cubic", "I'm unable to answer."]


def native() -> None:
    d = HERE / "native"
    d.mkdir(parents=True, exist_ok=True)
    rows = [{"run": "beta-r3-2025-06", "model": "beta/lab-13b", "rung": "R3", "item_id": mid, "sample_k": 0,
             "raw_output": out, "target": cs, "category": cs}
            for (mid, cs), out in zip(ITEMS, NATIVE_R3, strict=True)]
    pd.DataFrame(rows).to_csv(d / "beta_lab-13b_r3.csv", index=False)
    with open(d / "beta_lab-13b_noimage.jsonl", "w", encoding="utf-8") as f:
        for (mid, cs), out in zip(ITEMS, NATIVE_NOIMG, strict=True):
            rec = {"item_id": mid, "sample_k": 0, "raw_output": out, "target": cs, "category": cs}
            if out is None:
                rec["parse_status"] = "api_error"
            f.write(json.dumps(rec) + "\n")


def certificate() -> None:
    write_json(HERE / "certificate_example.json", {
        "kind": "viewcert certificate (example)", "delta": 0.01, "tau": 0.01, "angle_tolerance": 5.0,
        "ceiling": {"correct": 7, "n": 8, "sided": "two"},
        "items": [{"item_id": mid, "status": "certified" if mid != "mp-1105758" else "phantom",
                   "reason": "" if mid != "mp-1105758" else "phantom atoms at delta"} for mid, _ in ITEMS],
        "digest": "0" * 64,
    })


if __name__ == "__main__":
    items()
    vlmevalkit()
    lmms_eval()
    inspect_ai()
    study()
    native()
    certificate()
    print("wrote sample harness files to", HERE)
