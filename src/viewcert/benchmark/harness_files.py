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
| ``inspect_task.py`` | Inspect AI: one ``@task`` per arm, dataset from the arm's JSONL, images resolved beside the file; ``multiple_choice()`` + ``choice()`` (letter targets) or ``generate()`` + ``match()`` (free text) |
| ``lmms_eval/viewcert_TASK*.yaml``, ``lmms_eval/utils.py`` | lmms-eval task folder (``--include_path``), one task per arm; MCQ prompt with lettered options or free text; exact-match score per document |
| ``benchmark_r3.jsonl``, ``benchmark_no_image.jsonl``, ``benchmark_choices_only.jsonl`` and their ``.tsv`` | the other arms (``benchmark.arms``: rungs R3, no-image, choices-only), when the exporter gives R3 texts; TSVs for choice tasks |
| ``HARNESSES.md`` | the exact steps for each harness and for reading the results back with ``viewcert ladder .`` |
| ``dry_run_answers.jsonl`` | an offline dry run: the replay models' answers (``viewcert.harness.replay``) to every arm |
"""

from __future__ import annotations

import json
from pathlib import Path

from viewcert.benchmark.arms import ARMS, arm_records, dataset_name, jsonl_name, task_name, tsv_name
from viewcert.benchmark.arms import RUNG as RUNG_OF
from viewcert.constraints import LAYOUT
from viewcert.io.atomic import json_dumps, write_text_atomic
from viewcert.io.images import png_base64
from viewcert.io.tables import csv_text, frame_csv_text

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: how an answer is given: one of the shipped choices, a transformation command, or an interaction list
ANSWER_FORMATS = ("choice", "command", "list")
RECORD_KEYS = ("id", "index", "source_id", "images", "question", "task", "category", "answer_format", "answer")

__all__ = ["LETTERS", "harness_tsv", "ids_csv", "inspect_task_py", "lmms_eval_files",
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
    PNGs; no image column for a text arm's records, which have none), ``image_path, question``, the options ``A…`` and the answer letter for choice questions (else the
    answer text), ``category, split, id, source_id, constraints`` (the applied constraint names); text cells by
    the table rule (``io.tables``). Empty text when there are no records."""
    import pandas as pd  # lazy: pandas is slow to import and only the TSV needs it

    rows = []
    for r in records:
        row = {"index": r["index"]}
        if r["images"]:  # a text arm has no image columns: VLMEvalKit reads it as a text dataset
            row.update({"image": json.dumps([png_base64((out / p).read_bytes()) for p in r["images"]]),
                        "image_path": json.dumps([Path(p).name for p in r["images"]])})
        row["question"] = r["question"]
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


_INSPECT = '''"""Inspect AI tasks of this viewcert export ({task}; written by `viewcert build-benchmark`, runs unmodified).

    inspect eval inspect_task.py --model PROVIDER/MODEL{every}

{arms}
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


def arm(questions: str, name: str) -> Task:
    """One arm: the questions of the JSONL file ``questions`` beside this file, as the task ``name``."""
    return Task(dataset=json_dataset(str(HERE / questions), record_to_sample, name=name),
                solver={solver_call}, scorer={scorer}(), name=name)
{tasks}'''

_INSPECT_ARM = '''

@task
def {name}() -> Task:
    """{doc}"""
    return arm("{file}", "{name}")
'''

#: what each arm shows, in the task files' docstrings
ARM_DOC = {"image": "Rung R4: the images and the question.",
           "r3": "Rung R3: the geometry the images show, as text; no image.",
           "no-image": "Rung no-image: the image question without its images.",
           "choices-only": "Rung choices-only: no question and no image, the options (or the answer's form) alone."}


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


def inspect_task_py(task: str, multiple_choice: bool, layout: tuple[str, ...] = (),
                    arms: tuple[str, ...] = ("image",)) -> str:
    """The text of ``inspect_task.py``: one ``@task`` per arm (``benchmark.arms``; ``inspect eval`` on the file
    runs them all, one log each). Inspect's MCQ convention: ``multiple_choice()`` adds the lettered options and
    the ``ANSWER: $LETTER`` instruction, ``choice()`` scores the letter; free text: ``generate()`` and
    ``match()`` on the end of the completion. ``layout``: the layout constraints the questions carry
    (``viewcert.constraints.LAYOUT``), which set the MCQ template (``_inspect_solver``)."""
    conv = ("Multiple choice: multiple_choice() adds the lettered options; the target is the letter, scored "
            "by choice()." if multiple_choice else
            "Free text: generate(), scored by match() (the completion ends with the answer, case and\n"
            "punctuation aside); `viewcert ladder` adds MiSI partial credit for command answers.")
    names = [(a, task_name(task, a)) for a in arms]
    listing = "\n".join(f"- {n} ({jsonl_name(a)}): {ARM_DOC[a]}" for a, n in names)
    every = ("   # every arm, one log each\n    inspect eval inspect_task.py@"
             f"{names[0][1]} --model PROVIDER/MODEL   # one arm" if len(arms) > 1 else "")
    tasks = "".join(_INSPECT_ARM.format(name=n, doc=ARM_DOC[a], file=jsonl_name(a)) for a, n in names)
    return _INSPECT.format(task=task, convention=conv, scorer="choice" if multiple_choice else "match",
                           solver="multiple_choice" if multiple_choice else "generate", mc=multiple_choice,
                           solver_call=_inspect_solver(multiple_choice, layout), every=every,
                           arms=("Tasks, one per arm (questions from the JSONL beside this file, images relative "
                                 "to it):\n" + listing), tasks=tasks)


_LMMS_YAML = """# lmms-eval task of this viewcert export ({task}, {doc}); written by `viewcert build-benchmark`, runs
# unmodified. Run from the export folder (data_files is relative to the working directory):
#   lmms-eval --model MODEL --tasks {name} --include_path lmms_eval --log_samples --output_path results
task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {file}
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
    return [Image.open(EXPORT / p).convert("RGB") for p in doc["images"]]  # none in a text arm


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


def lmms_eval_files(task: str, multiple_choice: bool, layout: bool = False,
                    arms: tuple[str, ...] = ("image",)) -> dict[str, str]:
    """``{relative path: text}`` of the lmms-eval task folder: one YAML per arm (``benchmark.arms``) and the
    shared ``utils.py``. ``layout``: the questions carry a layout constraint (``viewcert.constraints.LAYOUT``),
    so no post prompt asks for the bare answer."""
    post = ("" if layout else "Answer with the option's letter from the given choices directly." if multiple_choice
            else "Answer with the command only.")
    conv = ("Multiple choice: the options follow the question as lettered lines (lmms-eval's MCQ convention); "
            "the target is the letter." if multiple_choice else "Free text: the target is the answer text.")
    files = {f"lmms_eval/{task_name(task, a)}.yaml": _LMMS_YAML.format(
        task=task, doc=ARM_DOC[a].split(":")[0].lower(), name=task_name(task, a), file=jsonl_name(a),
        metric="exact_match", post=post) for a in arms}
    files["lmms_eval/utils.py"] = _LMMS_UTILS.format(convention=conv, mc=multiple_choice, metric="exact_match")
    return files


_README = """# Running this export in a harness ({task}, {n} questions)

Written by `viewcert build-benchmark`. Every harness below reads the shipped files unmodified; every
result file it writes is read back by `viewcert ladder` with no id option: the item id (`qNNNN`) is the
sample id (Inspect), logged beside `doc_id` (lmms-eval) and kept as the `id` column (VLMEvalKit), and
`ids.csv` maps the harness's integer (`index`, `doc_id`) and the input's id (`source_id`, which keys the
crystal and molecule certificates) to it. Run every command below from this folder.

Answer convention: {convention}

{arms}

## Dry run, offline (no model, no network)

`{dry_file}` answers {rule} to every question{of_every_arm}, right on {right} of the {n}: the
ladder's R4 reads {right}/{n} in each harness below{every_rung}. Each harness's replay model ships with viewcert,
registered the harness's own way, that answers every question by its item id from that file (`viewcert-replay/always-A`,
`replay=always-A` or `--replay always-A` answer A to everything without a file; a file of your own holds one
`{{"id": "q0000", "answer": "B"}}` (or `"response": "..."`, verbatim) per line). `viewcert ladder .` reads the
results back from this folder with no manifest (`--results` names the one harness's folder); it prints the
`--threshold` in force beside R4 (an arm with a larger share of unanswered items or API errors is unscored).
The harness and viewcert in one environment (`make harness` builds one: docs/harnesses.md):

### Inspect AI (the model provider `viewcert-replay`)

    inspect eval inspect_task.py --model viewcert-replay/{dry_file} --log-dir logs/dry-run
    viewcert ladder . --results logs/dry-run --out ladder-dry-run

### lmms-eval (the model `viewcert_replay`, an entry point of lmms-eval 0.7)

    lmms-eval --model viewcert_replay --model_args replay={dry_file} \\
        --tasks {lmms_tasks} \\
        --include_path lmms_eval --log_samples --output_path results/dry-run
    viewcert ladder . --results results/dry-run --out ladder-dry-run-lmms-eval

### VLMEvalKit (the `BaseModel` `viewcert-replay`, added to `run.py`'s models by viewcert's runner)

    mkdir -p vlmevalkit{vlm_copy}
    LMUData=vlmevalkit python -m viewcert.harness.vlmevalkit_replay --replay {dry_file} \\
        --data {vlm_data} \\
        --model viewcert-replay --judge exact_matching {vlm_mode}--work-dir vlmevalkit/dry-run
    viewcert ladder . --results vlmevalkit/dry-run --out ladder-dry-run-vlmevalkit

The runner hands every argument but `--replay` to VLMEvalKit's `run.py` and, because `run.py` logs a failed
dataset and still exits 0, exits 1 naming each exception `run.py` logged.{vlm_note}

## Inspect AI (`pip install inspect-ai`): every arm, one log each

    inspect eval inspect_task.py --model PROVIDER/MODEL --log-dir logs/MODEL

## lmms-eval (`pip install lmms-eval`; 0.7.3 needs `filelock<4`)

    lmms-eval --model MODEL --model_args pretrained=ORG/NAME \\
        --tasks {lmms_tasks} \\
        --include_path lmms_eval --log_samples --output_path results

## VLMEvalKit (`pip install ms-vlmeval`, module `vlmeval`; or its source: github.com/open-compass/VLMEvalKit)

    mkdir -p vlmevalkit{vlm_copy}
    LMUData=vlmevalkit python -m vlmeval --data {vlm_data} \\
        --model MODEL --judge exact_matching {vlm_mode}--work-dir vlmevalkit

(`python run.py` in a checkout.) VLMEvalKit treats a TSV it does not know as a custom dataset: with option
columns A, B, … as `CustomMCQDataset` (it adds the "Options:" block itself; `--judge exact_matching` scores the
letters without an LLM judge), the same without image columns (a text arm) as `CustomTextMCQDataset`,
otherwise as `CustomVQADataset`, which VLMEvalKit cannot score (hence `--mode infer`: predictions only;
`viewcert ladder` scores them).

## Reading the results back

    viewcert ladder .

finds every result file the commands above write in this folder: Inspect's `logs/**/*.eval`, lmms-eval's
`results/**/*_samples_viewcert_*.jsonl` and VLMEvalKit's `vlmevalkit/**/MODEL/MODEL_Viewcert*.xlsx`, each
file's arm from its task or dataset name, one file per model and arm. `viewcert ladder . --results PATH...`
reads the files or folders named instead (anywhere); `viewcert ladder --manifest M.toml` any other layout. A
result of another export, of a task this export does not ship, or a model without every arm is refused,
naming the file. The ladder reports every rung beside the certified ceiling R1{misi}, the perception share
(R3 − R4)/(R1 − R4) with its interval, and where the harness's own per-sample scores disagree with
viewcert's parse.
"""

_ARMS_MD = """## The arms: one per rung

| arm | rung | questions | Inspect task / lmms-eval task | VLMEvalKit dataset (TSV) |
|---|---|---|---|---|
{rows}

Every arm holds the same items, answers and choices; only the question and the images differ. One
harness run over all of them fills every rung of `viewcert ladder`.{vlm_text}"""

ARM_QUESTION = {"image": "the images and the question", "r3": "the geometry the images show, as text",
                "no-image": "the image question, no image", "choices-only": "the options (or the answer's form) alone"}


def vlm_arms(arms: tuple[str, ...], multiple_choice: bool) -> tuple[str, ...]:
    """The arms VLMEvalKit can run: all of a choice export's (a text arm is a ``CustomTextMCQDataset``), the
    image arm alone of a free-text one (VLMEvalKit has no custom text dataset for free text)."""
    return arms if multiple_choice else arms[:1]


def _arms_md(task: str, arms: tuple[str, ...], multiple_choice: bool) -> str:
    vlm = vlm_arms(arms, multiple_choice)
    rows = "\n".join(f"| {a} | {RUNG_OF[a]} | `{jsonl_name(a)}`: {ARM_QUESTION[a]} | `{task_name(task, a)}` | "
                      + (f"`{dataset_name(task, a)}` (`{tsv_name(a)}`)" if a in vlm else "—") + " |" for a in arms)
    note = ("" if vlm == arms else "\n\nVLMEvalKit runs the image arm only here: it has no custom dataset for a "
            "free-text question without an image (`CustomVQADataset` needs one); Inspect and lmms-eval run every arm.")
    return _ARMS_MD.format(rows=rows, vlm_text=note)


def harness_readme(task: str, n: int, multiple_choice: bool, records: list[dict] | None = None,
                   arms: tuple[str, ...] = ("image",)) -> str:
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
    vlm = vlm_arms(arms, multiple_choice)
    return _README.format(
        task=task, n=n, convention=conv, misi=misi, dry_file=DRY_RUN_FILE, rule=rule, right=right,
        vlm_mode=vlm_mode, vlm_note=vlm_note, arms=_arms_md(task, arms, multiple_choice),
        every_rung=(", and so does every other rung (the same answers to the same items)" if len(arms) > 1 else ""),
        of_every_arm=" of every arm" if len(arms) > 1 else "",
        lmms_tasks=",".join(task_name(task, a) for a in arms), vlm_data=" ".join(dataset_name(task, a) for a in vlm),
        vlm_copy="".join(f"\n    cp {tsv_name(a)} vlmevalkit/{dataset_name(task, a)}.tsv" for a in vlm))


def write_harness_files(records: list[dict], out: Path, task: str, *, r3: list[str] | None = None,
                        choices_only: list[str] | None = None) -> list[Path]:
    """Write ``benchmark.jsonl``, ``benchmark.tsv``, ``ids.csv``, the Inspect tasks, the lmms-eval folder,
    ``HARNESSES.md`` and the offline dry run's answers for the records (module docstring); returns the paths
    written. ``r3`` (one geometry-as-text question per record) adds the other arms (``benchmark.arms``: R3,
    no-image, choices-only; ``choices_only``: a command task's answer form per record), each its own JSONL,
    Inspect task, lmms-eval task and (a choice task) VLMEvalKit TSV."""
    from viewcert.harness.replay import DRY_RUN_FILE, dry_run_answers  # lazy: start-up (only exports use it)

    mc = bool(records) and records[0]["answer_format"] == "choice"
    layout = tuple(n for n in LAYOUT if any(c["name"] == n for r in records for c in r.get("constraints", [])))
    arms = ARMS if r3 is not None else ("image",)
    by_arm = arm_records(records, r3, choices_only) if r3 is not None else {"image": records}
    files = {"benchmark.jsonl": question_jsonl(records), "benchmark.tsv": harness_tsv(records, out),
             "ids.csv": ids_csv(records), "inspect_task.py": inspect_task_py(task, mc, layout, arms),
             **lmms_eval_files(task, mc, bool(layout), arms),
             "HARNESSES.md": harness_readme(task, len(records), mc, records, arms),
             DRY_RUN_FILE: question_jsonl(dry_run_answers(records))}
    for a in arms[1:]:
        files[jsonl_name(a)] = question_jsonl(by_arm[a])
        if a in vlm_arms(arms, mc):
            files[tsv_name(a)] = harness_tsv(by_arm[a], out)
    return [write_text_atomic(out / rel, text) for rel, text in files.items()]
