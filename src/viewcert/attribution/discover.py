"""The result files of an export's harness runs, found with no manifest (``viewcert ladder EXPORT``).

An export ships one harness task per arm (``benchmark.arms``: the image arm R4, the geometry-as-text arm R3,
no-image, choices-only), named each harness's own way; the names are restated here (``benchmark`` is a sibling
unit: not imported; a test holds the two equal). What the commands of the export's ``HARNESSES.md`` write,
inside the export, and how each file's arm and model are known:

| harness | files | arm from | model from |
|---|---|---|---|
| Inspect AI | ``logs/**/*.eval`` | ``eval.task`` of the log's header (``viewcert_TASK_r3``) | ``eval.model`` |
| lmms-eval | ``results/**/*_samples_viewcert_TASK*.jsonl`` | the task in the file name | ``model_name`` of the results file beside it, else the folder |
| VLMEvalKit | ``vlmevalkit/**/MODEL/MODEL_ViewcertTask*.{xlsx,tsv,csv}`` | the dataset in the file name | the folder (the file does not hold it) |

``--results PATH...`` names files or folders instead (a folder is searched for all three kinds, anywhere in
it). Refused, naming the file (one ``InputError``): a result of a task or dataset this export does not ship
(another export's), two results of one model and arm, and, for results found in a folder, a model without
every arm the export ships; an arm file of the export whose items or answers are not the export's
(``ids.csv``, ``benchmark.jsonl``). Items of another benchmark inside a result file are refused later, by the
ladder's coverage check (``table.check_consistency``), naming the file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from viewcert.attribution.readers.inspect_ai import read_header
from viewcert.attribution.readers.lmms_eval import model_from_results
from viewcert.attribution.shipped import ShippedBenchmark, load_shipped
from viewcert.attribution.table import Manifest, ManifestEntry
from viewcert.errors import InputError
from viewcert.io.received import iter_json_lines, read_received_text

#: the arms, in ladder order of the export (``benchmark.arms.ARMS``), with their rung and name suffixes
ARMS = ("image", "r3", "no-image", "choices-only")
RUNG = {"image": "R4", "r3": "R3", "no-image": "no-image", "choices-only": "choices-only"}
SUFFIX = {"image": "", "r3": "_r3", "no-image": "_no_image", "choices-only": "_choices_only"}
CAMEL = {"image": "", "r3": "R3", "no-image": "NoImage", "choices-only": "ChoicesOnly"}
#: where the commands of HARNESSES.md write, inside the export
FOLDERS = {"inspect": "logs", "lmms_eval": "results", "vlmevalkit": "vlmevalkit"}
_VLM_SUFFIXES = (".xlsx", ".tsv", ".csv")
_SAMPLES = "_samples_"

__all__ = ["ARMS", "Found", "arm_file", "export_arms", "find_results", "manifest_from_export", "task_names"]


def task_names(task: str) -> dict[str, str]:
    """``{Inspect / lmms-eval task name: arm}`` of an export's task (``viewcert_crystal_system_r3``)."""
    return {"viewcert_" + task.replace("-", "_") + SUFFIX[a]: a for a in ARMS}


def dataset_names(task: str) -> dict[str, str]:
    """``{VLMEvalKit dataset name: arm}`` (``ViewcertCrystalSystemR3``)."""
    camel = "Viewcert" + "".join(w.capitalize() for w in task.split("-"))
    return {camel + CAMEL[a]: a for a in ARMS}


def arm_file(arm: str) -> str:
    """The arm's questions in the export (``benchmark_r3.jsonl``)."""
    return f"benchmark{SUFFIX[arm]}.jsonl"


def _check_arm(path: Path, shipped: ShippedBenchmark) -> None:
    """An arm's questions hold exactly the export's items, in order, with the export's answers."""
    src = str(path)
    n = 0
    for n, q in iter_json_lines(read_received_text(path, what="arm questions"), source=src):
        iid = q.get("id") if isinstance(q, dict) else None
        want = shipped.ids[n - 1] if n <= len(shipped.ids) else None
        if iid != want:
            raise InputError(f"line {n}: item {str(iid)[:40]!r} is not the export's item {want!r} (ids.csv): an arm "
                             "of another benchmark", source=src, field="id")
        if q.get("answer") != shipped.answers[want]:
            raise InputError(f"line {n}: item {want!r} answers {str(q.get('answer'))[:40]!r}, the export "
                             f"{shipped.answers[want]!r}: an arm of another benchmark", source=src, field="answer")
    if n != len(shipped.ids):
        raise InputError(f"{n} questions, the export has {len(shipped.ids)} (ids.csv)", source=src, field="id")


def export_arms(shipped: ShippedBenchmark) -> tuple[str, ...]:
    """The arms the export ships: the image arm, and each other arm whose questions file is present, checked
    to hold the export's items and answers (module docstring)."""
    arms = ["image"]
    for a in ARMS[1:]:
        path = shipped.folder / arm_file(a)
        if path.exists():
            _check_arm(path, shipped)
            arms.append(a)
    return tuple(arms)


@dataclass(frozen=True)
class Found:
    """One result file: its harness, the model that answered and the arm it answers."""

    path: Path
    harness: str
    model: str
    arm: str


def _refuse(path: Path, what: str, name: str, names: dict[str, str]) -> InputError:
    return InputError(f"a result of {what} {name[:80]!r}, which this export does not ship (its {what}s: "
                      f"{', '.join(names)}): a result of another export?", source=str(path), field=what)


def _inspect(path: Path, names: dict[str, str]) -> Found:
    spec = read_header(path)["eval"]
    task, model = str(spec.get("task", "")), spec.get("model")
    if task not in names:
        raise _refuse(path, "task", task, names)
    if not isinstance(model, str) or not model:
        raise InputError("no model (eval.model)", source=str(path), field="eval.model")
    return Found(path, "inspect", model, names[task])


def _lmms(path: Path, names: dict[str, str]) -> Found:
    task = path.stem.split(_SAMPLES, 1)[1]
    if task not in names:
        raise _refuse(path, "task", task, names)
    model, _ = model_from_results(path)
    return Found(path, "lmms_eval", model or path.parent.name, names[task])


def _vlm_dataset(path: Path) -> str | None:
    """The dataset of a VLMEvalKit predictions file ``MODEL/MODEL_DATASET.xlsx`` (None: another file, such as
    ``..._exact_matching_result.xlsx`` or a dataset TSV)."""
    prefix = path.parent.name + "_"
    if path.suffix.lower() not in _VLM_SUFFIXES or not path.name.startswith(prefix):
        return None
    rest = path.stem[len(prefix):]
    return rest if re.fullmatch(r"Viewcert[A-Za-z0-9]*", rest) else None


def _vlm(path: Path, names: dict[str, str]) -> Found:
    data = _vlm_dataset(path) or ""
    if data not in names:
        raise _refuse(path, "dataset", data, names)
    return Found(path, "vlmevalkit", path.parent.name, names[data])


def _in_folder(root: Path, task: str, within_export: bool) -> list[Found]:
    """Every result under ``root`` (an export: only where HARNESSES.md writes), its arm read and checked."""
    tasks, datasets = task_names(task), dataset_names(task)
    base = {h: (root / f if within_export else root) for h, f in FOLDERS.items()}
    found = [_inspect(p, tasks) for p in sorted(base["inspect"].rglob("*.eval")) if p.is_file()]
    found += [_lmms(p, tasks) for p in sorted(base["lmms_eval"].rglob(f"*{_SAMPLES}*.jsonl")) if p.is_file()]
    found += [_vlm(p, datasets) for p in sorted(base["vlmevalkit"].rglob("*"))
              if p.is_file() and _vlm_dataset(p) is not None]
    return found


def _one_file(path: Path, task: str) -> Found:
    """A result file named with ``--results``: its harness from its kind, its arm from its name or header."""
    if path.suffix.lower() == ".eval":
        return _inspect(path, task_names(task))
    if path.suffix.lower() == ".jsonl" and _SAMPLES in path.stem:
        return _lmms(path, task_names(task))
    if _vlm_dataset(path) is not None:
        return _vlm(path, dataset_names(task))
    raise InputError("not a result file viewcert finds by name: an Inspect .eval log, lmms-eval's "
                     "*_samples_TASK.jsonl or VLMEvalKit's MODEL/MODEL_DATASET.xlsx (other files: --manifest)",
                     source=str(path))


def _harness_arms(folder: Path, harness: str, arms: tuple[str, ...]) -> tuple[str, ...]:
    """The arms the export ships for ``harness``: all of them, except VLMEvalKit, which gets only the arms
    whose TSV is in the export (a free-text task's text arms have none: VLMEvalKit has no custom free-text
    dataset without an image, docs/harnesses.md)."""
    if harness != "vlmevalkit":
        return arms
    return tuple(a for a in arms if (folder / f"benchmark{SUFFIX[a]}.tsv").is_file())


def _checked(found: list[Found], arms: tuple[str, ...], complete: set[tuple[str, str]],
             folder: Path) -> list[Found]:
    """One file per (harness, model, arm); every arm the export ships for that harness (``_harness_arms``)
    for each (harness, model) in ``complete`` (results found in a folder); an arm the export does not ship
    refused."""
    seen: dict[tuple[str, str, str], Found] = {}
    for f in found:
        if f.arm not in arms:
            raise InputError(f"a result of the {f.arm} arm, which this export does not ship ({arm_file(f.arm)} "
                             "is missing)", source=str(f.path), field="arm")
        key = (f.harness, f.model, f.arm)
        if key in seen:
            raise InputError(f"two results of model {f.model[:80]!r}, arm {f.arm} ({seen[key].path} and this one): "
                             "keep one, or name the files with --results", source=str(f.path), field="arm")
        seen[key] = f
    for harness, model in sorted(complete):
        have = {a for (h, m, a) in seen if (h, m) == (harness, model)}
        missing = [a for a in _harness_arms(folder, harness, arms) if a not in have]
        if missing:
            first = next(f for f in found if (f.harness, f.model) == (harness, model))
            raise InputError(f"model {model[:80]!r} has no result for the arm(s) {', '.join(missing)} of this "
                             "export: run every arm (HARNESSES.md), or name the files with --results",
                             source=str(first.path), field="arm")
    return list(seen.values())


#: the result files of each harness, as glob patterns (what a message names)
PATTERNS = {"inspect": "**/*.eval", "lmms_eval": f"**/*{_SAMPLES}*.jsonl", "vlmevalkit": "**/MODEL/MODEL_Viewcert*.xlsx"}


def results_patterns(where: Path, harness: str | None = None) -> str:
    """The result files viewcert finds under the folder ``where`` (of ``harness``; None: every harness), as glob
    patterns, for a message."""
    return ", ".join(f"{where}/{PATTERNS[h]}" for h in ([harness] if harness else PATTERNS))


def find_results(export: str | Path, results: Sequence[str | Path] = ()) -> tuple[ShippedBenchmark, list[Found]]:
    """The export read back and its result files (module docstring): those inside the export, else the files
    and folders ``results`` names."""
    export = Path(export)
    shipped = load_shipped(export)
    arms = export_arms(shipped)
    found: list[Found] = []
    complete: set[tuple[str, str]] = set()
    for p in [Path(r) for r in results] or [export]:
        if p.is_dir():
            here = _in_folder(p, shipped.task, within_export=not results)
            complete |= {(f.harness, f.model) for f in here}
            found += here
        elif p.exists():
            found.append(_one_file(p, shipped.task))
        else:
            raise InputError(f"no such file or folder: no results file matched {results_patterns(p)} (has its "
                             "harness run? HARNESSES.md's command writes it)", source=str(p), field="results")
    if not found:
        where = (", ".join(results_patterns(Path(f), h) for h, f in FOLDERS.items()) + " in the export"
                 if not results else "; ".join(results_patterns(Path(r)) for r in results))
        raise InputError(f"no harness results: no results file matched {where}: run the commands of HARNESSES.md "
                         "first, or name the files with --results", source=str(export))
    return shipped, _checked(found, arms, complete, shipped.folder)


def manifest_from_export(export: str | Path, results: Sequence[str | Path] = ()) -> Manifest:
    """The ladder manifest of an export's results (module docstring): the export as the benchmark, one entry
    per result file with its model and rung."""
    shipped, found = find_results(export, results)
    order = {a: k for k, a in enumerate(ARMS)}
    entries = tuple(ManifestEntry(path=f.path, model=f.model, rung=RUNG[f.arm], harness=f.harness)
                    for f in sorted(found, key=lambda f: (f.harness, f.model, order[f.arm], str(f.path))))
    return Manifest(entries=entries, source=str(export), name=Path(export).resolve().name, benchmark=shipped.folder)
