"""The files every benchmark export shares, written once for all three exporters (crystal system, molecular,
transformation tasks): the VLMEvalKit TSV, the id table, the harness-ready task files and the SHA-256 of
every file.

Question records (one dict per question, the exporters' common form): ``id`` (``qNNNN``, the one item id
everywhere), ``index`` (the integer a harness insists on: VLMEvalKit ``index``, lmms-eval ``doc_id``),
``source_id`` (the input's own id), ``images`` (paths relative to the export), ``question`` (the text
without the options: each harness adds its own), ``task``, ``category`` (the stratum: the true label of
a closed-vocabulary task, the true command's axes of a transformation task), ``answer_format``
(``choice``, ``command`` or ``list``: an interaction list, ``no`` or ``yes: E1; E2``), ``answer`` and, for
choice questions, ``choices`` and ``answer_letter``.

| file | what |
|---|---|
| ``benchmark.tsv`` | VLMEvalKit custom dataset: MCQ layout (A…, answer letter) for choice questions, VQA layout (answer text) otherwise |
| ``ids.csv`` | the id table: ``index,id,source_id`` per question (harness integer → item id → input id) |
| ``inspect_task.py`` | Inspect AI ``@task``: dataset from ``benchmark.jsonl``, images resolved beside the file; ``multiple_choice()`` + ``choice()`` (letter targets) or ``generate()`` + ``match()`` (free text) |
| ``lmms_eval/viewcert_TASK.yaml``, ``lmms_eval/utils.py`` | lmms-eval task folder (``--include_path``); MCQ prompt with lettered options or free text; exact-match score per document |
| ``HARNESSES.md`` | the exact steps for each harness and for reading the results back with ``viewcert ladder`` |
| ``dry_run_answers.jsonl``, ``ladder_dry_run*.toml`` | an offline dry run: the replay models' answers (``viewcert.harness.replay``) and the manifests that read the Inspect, lmms-eval and VLMEvalKit results back, paths relative to the export |
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from viewcert.constraints import LAYOUT
from viewcert.io.atomic import json_dumps, write_text_atomic
from viewcert.io.images import png_base64
from viewcert.io.tables import csv_text, frame_csv_text

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: how an answer is given: one of the shipped choices, a transformation command, or an interaction list
ANSWER_FORMATS = ("choice", "command", "list")
RECORD_KEYS = ("id", "index", "source_id", "images", "question", "task", "category", "answer_format", "answer")

__all__ = ["LETTERS", "file_digests", "harness_tsv", "ids_csv", "inspect_task_py", "lmms_eval_files",
           "question_record", "question_jsonl", "write_harness_files"]


def question_record(index: int, source_id: str, images: list[str], question: str, task: str, answer: str, *,
                    choices: tuple[str, ...] | list[str] | None = None, category: str | None = None,
                    answer_format: str | None = None) -> dict:
    """One question in the exporters' common form (module docstring); ``choices`` None: a free-text answer,
    a ``command`` unless ``answer_format`` says ``list``."""
    fmt = answer_format or ("command" if choices is None else "choice")
    if fmt not in ANSWER_FORMATS or (fmt == "choice") != (choices is not None):
        raise ValueError(f"answer_format {fmt!r} does not fit choices={choices!r}")  # a caller's bug
    rec = {"id": f"q{index:04d}", "index": int(index), "source_id": str(source_id), "images": list(images),
           "question": question, "task": task, "category": answer if category is None else category,
           "answer_format": fmt, "answer": answer}
    if choices is not None:
        rec.update({"choices": list(choices), "answer_letter": LETTERS[list(choices).index(answer)]})
    return rec


def question_jsonl(records: list[dict]) -> str:
    """``benchmark.jsonl``: one compact JSON line per question record."""
    return "".join(json_dumps(r, indent=None) for r in records)


def harness_tsv(records: list[dict], out: Path) -> str:
    """The VLMEvalKit TSV of the records (images read from ``out``): ``index, image`` (JSON list of base64
    PNGs), ``image_path, question``, the options ``A…`` and the answer letter for choice questions (else the
    answer text), ``category, split, id, source_id, constraints`` (the applied constraint names); text cells by
    the table rule (``io.tables``). Empty text when there are no records."""
    import pandas as pd  # lazy: pandas is slow to import and only the TSV needs it

    rows = []
    for r in records:
        row = {"index": r["index"], "image": json.dumps([png_base64((out / p).read_bytes()) for p in r["images"]]),
               "image_path": json.dumps([Path(p).name for p in r["images"]]), "question": r["question"]}
        if r["answer_format"] == "choice":
            row.update(dict(zip(LETTERS, r["choices"], strict=False)))
            row["answer"] = r["answer_letter"]
        else:
            row["answer"] = r["answer"]
        row.update({"category": r["category"], "split": "test", "id": r["id"], "source_id": r["source_id"],
                    "constraints": ",".join(c["name"] for c in r.get("constraints", []))})
        rows.append(row)
    # the cell rule (io.tables): a source id such as "@SUM(1+1)cmd" is no formula in a spreadsheet; the
    # question keeps its line breaks (the harness shows it to the model as it is)
    return frame_csv_text(pd.DataFrame(rows), sep="\t", multiline=("question",)) if rows else ""


def ids_csv(records: list[dict]) -> str:
    """``ids.csv``: ``index,id,source_id`` per question (the harness integer, the item id, the input's id),
    cells by the table rule (``io.tables``; ``attribution.shipped`` reads the ids back through its inverse)."""
    return csv_text(["index", "id", "source_id"], ([r["index"], r["id"], r["source_id"]] for r in records))


def file_digests(out: Path) -> dict[str, str]:
    """SHA-256 of every file under ``out`` but the manifest and hidden files, by relative POSIX path."""
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file() and p.name != "manifest.json" and not p.name.startswith(".")}


def _slug(task: str) -> str:
    return "viewcert_" + task.replace("-", "_")


def _camel(task: str) -> str:
    return "Viewcert" + "".join(w.capitalize() for w in task.replace("_", "-").split("-"))


_INSPECT = '''"""Inspect AI task of this viewcert export ({task}; written by `viewcert build-benchmark`, runs unmodified).

    inspect eval inspect_task.py --model PROVIDER/MODEL

Dataset: benchmark.jsonl beside this file (Inspect's json_dataset), images resolved relative to this file.
{convention}
Sample ids are the item ids (qNNNN) that ids.csv, the certificate's id table and `viewcert ladder` use.
"""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample, json_dataset
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
from inspect_ai.scorer import {scorer}
from inspect_ai.solver import {solver}

HERE = Path(__file__).resolve().parent
MULTIPLE_CHOICE = {mc}


def record_to_sample(record: dict) -> Sample:
    content = [ContentImage(image=str(HERE / p)) for p in record["images"]]
    content.append(ContentText(text=record["question"]))
    meta = {{k: record[k] for k in ("source_id", "index", "task", "category", "answer")}}
    if MULTIPLE_CHOICE:
        return Sample(id=record["id"], input=[ChatMessageUser(content=content)], choices=record["choices"],
                      target=record["answer_letter"], metadata=meta)
    return Sample(id=record["id"], input=[ChatMessageUser(content=content)], target=record["answer"], metadata=meta)


@task
def {name}() -> Task:
    return Task(dataset=json_dataset(str(HERE / "benchmark.jsonl"), record_to_sample, name="{name}"),
                solver={solver_call}, scorer={scorer}(), name="{name}")
'''


def _inspect_solver(multiple_choice: bool, layout: tuple[str, ...]) -> str:
    """The solver call: ``generate()``; ``multiple_choice()`` (its template asks for ``ANSWER: $LETTER`` as the
    whole response), ``multiple_choice(cot=True)`` under ``structure`` (reasoning, then a last ``ANSWER:`` line:
    the same layout), or with ``format`` a template of the question and the options alone (the question's own
    requirements state the JSON form; Inspect's ``choice()`` cannot read it, the ladder does)."""
    if not multiple_choice:
        return "generate()"
    if "format" in layout:
        return 'multiple_choice(template="{question}\\n\\n{choices}")'
    return "multiple_choice(cot=True)" if "structure" in layout else "multiple_choice()"


def inspect_task_py(task: str, multiple_choice: bool, layout: tuple[str, ...] = ()) -> str:
    """The text of ``inspect_task.py`` (Inspect's MCQ convention: ``multiple_choice()`` adds the lettered
    options and the ``ANSWER: $LETTER`` instruction, ``choice()`` scores the letter; free text:
    ``generate()`` and ``match()`` on the end of the completion). ``layout``: the layout constraints the
    questions carry (``viewcert.constraints.LAYOUT``), which set the MCQ template (``_inspect_solver``)."""
    conv = ("Multiple choice: multiple_choice() adds the lettered options; the target is the letter, scored "
            "by choice()." if multiple_choice else
            "Free text: generate(), scored by match() (the completion ends with the answer, case and\n"
            "punctuation aside); `viewcert ladder` adds MiSI partial credit for command answers.")
    return _INSPECT.format(task=task, convention=conv, scorer="choice" if multiple_choice else "match",
                           solver="multiple_choice" if multiple_choice else "generate", mc=multiple_choice,
                           solver_call=_inspect_solver(multiple_choice, layout),
                           name=_slug(task))


_LMMS_YAML = """# lmms-eval task of this viewcert export ({task}); written by `viewcert build-benchmark`, runs unmodified.
# Run from the export folder (data_files is relative to the working directory):
#   lmms-eval --model MODEL --tasks {name} --include_path lmms_eval --log_samples --output_path results
task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: benchmark.jsonl
test_split: test
output_type: generate_until
doc_to_visual: !function utils.doc_to_visual
doc_to_text: !function utils.doc_to_text
doc_to_target: !function utils.doc_to_target
generation_kwargs:
  max_new_tokens: 64
  temperature: 0
  do_sample: false
process_results: !function utils.process_results
metric_list:
  - metric: {metric}
    aggregation: !function utils.aggregate
    higher_is_better: true
lmms_eval_specific_kwargs:
  default:
    pre_prompt: ""
    post_prompt: "{post}"
metadata:
  version: 1.0
"""

_LMMS_UTILS = '''"""lmms-eval hooks of this viewcert export (written by `viewcert build-benchmark`).

Images are read relative to the export folder (this file's parent's parent). {convention}
process_results scores the first response by exact match and logs the item id (qNNNN) beside doc_id.
"""

import re
from pathlib import Path

from PIL import Image

EXPORT = Path(__file__).resolve().parent.parent
MULTIPLE_CHOICE = {mc}
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
METRIC = "{metric}"


def doc_to_visual(doc):
    return [Image.open(EXPORT / p).convert("RGB") for p in doc["images"]]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = lmms_eval_specific_kwargs or {{}}
    text = kw.get("pre_prompt", "") + doc["question"]
    if MULTIPLE_CHOICE:
        text += "\\n" + "\\n".join(f"{{LETTERS[i]}}. {{c}}" for i, c in enumerate(doc["choices"]))
    return text + "\\n" + kw.get("post_prompt", "")


def doc_to_target(doc):
    return doc["answer_letter"] if MULTIPLE_CHOICE else doc["answer"]


def _first(results):
    r = results[0] if results else ""
    return str(r[0] if isinstance(r, list) and r else r)


def _normalise(text):
    return " ".join(re.sub(r"[^a-z0-9.+-]+", " ", text.lower()).split())


def process_results(doc, results):
    pred = _first(results).strip()
    if MULTIPLE_CHOICE:
        m = re.match(r"^\\W*(?:answer\\W*)?\\(?([A-Z])\\)?(?:[.:)]|\\s|$)", pred, re.IGNORECASE)
        hit = m is not None and m.group(1).upper() == doc["answer_letter"]
    else:
        hit = _normalise(pred).endswith(_normalise(doc["answer"]))
    return {{METRIC: {{"id": doc["id"], "category": doc["category"], "score": float(hit)}}}}


def aggregate(results):
    return sum(r["score"] for r in results) / len(results) if results else 0.0
'''


def lmms_eval_files(task: str, multiple_choice: bool, layout: bool = False) -> dict[str, str]:
    """``{relative path: text}`` of the lmms-eval task folder (YAML + ``utils.py``). ``layout``: the questions
    carry a layout constraint (``viewcert.constraints.LAYOUT``), so no post prompt asks for the bare answer."""
    name = _slug(task)
    post = ("" if layout else "Answer with the option's letter from the given choices directly." if multiple_choice
            else "Answer with the command only.")
    conv = ("Multiple choice: the options follow the question as lettered lines (lmms-eval's MCQ convention); "
            "the target is the letter." if multiple_choice else "Free text: the target is the answer text.")
    return {f"lmms_eval/{name}.yaml": _LMMS_YAML.format(task=task, name=name, metric="exact_match", post=post),
            "lmms_eval/utils.py": _LMMS_UTILS.format(convention=conv, mc=multiple_choice, metric="exact_match")}


_README = """# Running this export in a harness ({task}, {n} questions)

Written by `viewcert build-benchmark`. Every harness below reads the shipped files unmodified; every
result file it writes is read back by `viewcert ladder` with no id option: the item id (`qNNNN`) is the
sample id (Inspect), logged beside `doc_id` (lmms-eval) and kept as the `id` column (VLMEvalKit), and
`ids.csv` maps the harness's integer (`index`, `doc_id`) and the input's id (`source_id`, which keys the
crystal and molecule certificates) to it. Run every command below from this folder.

Answer convention: {convention}

## Dry run, offline (no model, no network)

`{dry_file}` answers {rule} to every question, right on {right} of the {n}: the ladder's R4
reads {right}/{n} in each harness below. Each ships with viewcert as a replay model, registered the harness's
own way, that answers every question by its item id from that file (`viewcert-replay/always-A`,
`replay=always-A` or `--replay always-A` answer A to everything without a file; a file of your own holds one
`{{"id": "q0000", "answer": "B"}}` (or `"response": "..."`, verbatim) per line). Each `{dry_manifest_stem}*.toml` is
shipped with paths relative to this folder (it travels with it) and reads back the one result file of its
harness's dry run; `viewcert ladder` prints the `--threshold` in force beside R4 (an arm with a larger share
of unanswered items or API errors is unscored). The harness and viewcert in one environment
(`make harness` builds one: docs/harnesses.md):

### Inspect AI (the model provider `viewcert-replay`)

    inspect eval inspect_task.py --model viewcert-replay/{dry_file} --log-dir logs/dry-run
    viewcert ladder --manifest {dry_manifest} --out ladder-dry-run

### lmms-eval (the model `viewcert_replay`, an entry point of lmms-eval 0.7)

    lmms-eval --model viewcert_replay --model_args replay={dry_file} --tasks {slug} \\
        --include_path lmms_eval --log_samples --output_path results/dry-run
    viewcert ladder --manifest {dry_manifest_lmms} --out ladder-dry-run-lmms-eval

### VLMEvalKit (the `BaseModel` `viewcert-replay`, added to `run.py`'s models by viewcert's runner)

    mkdir -p vlmevalkit && cp benchmark.tsv vlmevalkit/{camel}.tsv
    LMUData=vlmevalkit python -m viewcert.harness.vlmevalkit_replay --replay {dry_file} \\
        --data {camel} --model viewcert-replay --judge exact_matching {vlm_mode}--work-dir vlmevalkit/dry-run
    viewcert ladder --manifest {dry_manifest_vlm} --out ladder-dry-run-vlmevalkit

The runner hands every argument but `--replay` to VLMEvalKit's `run.py` and, because `run.py` logs a failed
dataset and still exits 0, exits 1 naming each exception `run.py` logged.{vlm_note}

## Inspect AI (`pip install inspect-ai`)

    inspect eval inspect_task.py --model PROVIDER/MODEL --log-dir logs/MODEL

## lmms-eval (`pip install lmms-eval`; 0.7.3 needs `filelock<4`)

    lmms-eval --model MODEL --model_args pretrained=ORG/NAME --tasks {slug} --include_path lmms_eval \\
        --log_samples --output_path results

## VLMEvalKit (`pip install ms-vlmeval`, module `vlmeval`; or its source: github.com/open-compass/VLMEvalKit)

    mkdir -p vlmevalkit && cp benchmark.tsv vlmevalkit/{camel}.tsv
    LMUData=vlmevalkit python -m vlmeval --data {camel} --model MODEL --judge exact_matching {vlm_mode}--work-dir vlmevalkit

(`python run.py` in a checkout.) VLMEvalKit treats a TSV it does not know as a custom dataset: with option
columns A, B, … as `CustomMCQDataset` (it adds the "Options:" block itself; `--judge exact_matching` scores the
letters without an LLM judge), otherwise as `CustomVQADataset`, which VLMEvalKit cannot score (hence
`--mode infer`: predictions only; `viewcert ladder` scores them).

## Reading the results back

Copy a dry run's manifest and point its `path` at the run's result file (a pattern must match exactly one):
`logs/MODEL/*.eval` (Inspect), `results/**/*_samples_{slug}.jsonl` (lmms-eval) or VLMEvalKit's
`vlmevalkit/MODEL/**/MODEL_{camel}.xlsx`, with `model = "ORG/NAME"` for VLMEvalKit files (they do not hold it):

    viewcert ladder --manifest ladder.toml --out ladder

The ladder reports R4 beside the certified ceiling R1{misi}, and where the harness's own per-sample
scores disagree with viewcert's parse.
"""

#: the dry runs' ladder manifests, by harness (HARNESSES.md's commands write what they read)
DRY_MANIFEST = "ladder_dry_run.toml"
DRY_MANIFEST_LMMS = "ladder_dry_run_lmms_eval.toml"
DRY_MANIFEST_VLM = "ladder_dry_run_vlmevalkit.toml"


def dry_run_manifests(task: str) -> dict[str, str]:
    """``{file name: text}`` of the three dry runs' manifests: this export as the study and, as R4, the one
    result file its harness's dry run writes (paths relative to the manifest, i.e. to the export folder): the
    Inspect log of ``logs/dry-run``, lmms-eval's samples under ``results/dry-run``, VLMEvalKit's predictions
    under ``vlmevalkit/dry-run`` (which do not hold the model's name: the manifest gives it)."""
    head = "# the {} dry run of HARNESSES.md read back: viewcert ladder --manifest {} --out {}\n[study]\nbenchmark = \".\"\n\n"
    runs = {DRY_MANIFEST: ("Inspect", "ladder-dry-run", 'path = "logs/dry-run/*.eval"'),
            DRY_MANIFEST_LMMS: ("lmms-eval", "ladder-dry-run-lmms-eval",
                                f'path = "results/dry-run/**/*_samples_{_slug(task)}.jsonl"'),
            DRY_MANIFEST_VLM: ("VLMEvalKit", "ladder-dry-run-vlmevalkit",
                               f'path = "vlmevalkit/dry-run/viewcert-replay/viewcert-replay_{_camel(task)}.xlsx"\n'
                               'model = "viewcert-replay/dry_run_answers.jsonl"')}
    return {name: head.format(harness, name, out) + f"[[input]]\n{path}\nrung = \"R4\"\n"
            for name, (harness, out, path) in runs.items()}


def harness_readme(task: str, n: int, multiple_choice: bool, records: list[dict] | None = None) -> str:
    from viewcert.harness.replay import DRY_RUN_FILE, dry_run_answers  # lazy: start-up (only exports use it)

    records = records or []
    conv = ("multiple choice, letter targets with the shipped choices; the question text carries no options "
            "(each harness adds its own)." if multiple_choice else "free text (the answer command).")
    misi = "" if multiple_choice else " and, for command answers, the MiSI partial credit beside its ceiling"
    dry = dry_run_answers(records)
    right = sum(d["answer"] == (r["answer_letter"] if r["answer_format"] == "choice" else r["answer"])
                for d, r in zip(dry, records, strict=True))
    rule = ("A (the first option)" if multiple_choice else
            "the first question's answer" + (f" (`{records[0]['answer']}`)" if records else ""))
    # VLMEvalKit cannot score a custom free-text dataset (CustomVQADataset.evaluate raises): predictions only
    vlm_mode, vlm_note = ("", "") if multiple_choice else (
        "--mode infer ", " A free-text export runs with `--mode infer`: VLMEvalKit has no scorer for a custom\n"
        "free-text dataset (without it, `run.py` logs a `NotImplementedError` traceback), viewcert scores the predictions.")
    return _README.format(task=task, n=n, convention=conv, slug=_slug(task), camel=_camel(task), misi=misi,
                          dry_file=DRY_RUN_FILE, dry_manifest=DRY_MANIFEST, dry_manifest_stem=DRY_MANIFEST[:-5],
                          dry_manifest_lmms=DRY_MANIFEST_LMMS, dry_manifest_vlm=DRY_MANIFEST_VLM, rule=rule,
                          right=right, vlm_mode=vlm_mode, vlm_note=vlm_note)


def write_harness_files(records: list[dict], out: Path, task: str) -> list[Path]:
    """Write ``benchmark.jsonl``, ``benchmark.tsv``, ``ids.csv``, the Inspect task, the lmms-eval folder,
    ``HARNESSES.md`` and the offline dry run (its answers and the three harnesses' ladder manifests) for the records (module
    docstring); returns the paths written."""
    from viewcert.harness.replay import DRY_RUN_FILE, dry_run_answers  # lazy: start-up (only exports use it)

    mc = bool(records) and records[0]["answer_format"] == "choice"
    layout = tuple(n for n in LAYOUT if any(c["name"] == n for r in records for c in r.get("constraints", [])))
    files = {"benchmark.jsonl": question_jsonl(records), "benchmark.tsv": harness_tsv(records, out),
             "ids.csv": ids_csv(records), "inspect_task.py": inspect_task_py(task, mc, layout),
             **lmms_eval_files(task, mc, bool(layout)), "HARNESSES.md": harness_readme(task, len(records), mc, records),
             DRY_RUN_FILE: question_jsonl(dry_run_answers(records)), **dry_run_manifests(task)}
    return [write_text_atomic(out / rel, text) for rel, text in files.items()]
