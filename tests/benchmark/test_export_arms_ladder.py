"""Every rung is a harness task (issue 39, Build 1): an export ships the image arm (R4), the geometry-as-text arm
(R3), the no-image arm and the choices-only arm for Inspect, lmms-eval and VLMEvalKit, and ``viewcert ladder
EXPORT`` finds the results the documented commands write inside the export with no manifest.

Inputs: NaCl, CsCl (cubic) and Mg (hexagonal) from the certificate fixtures, exported at 256 px, where the
as-rendered ceiling certifies all three (R1 = 3/3; rutile, which is not here, loses atoms at that size). The
shipped dry run answers A (triclinic) everywhere, so every rung reads 0 of 3 and the perception share
(R3 − R4)/(R1 − R4) is 0/1 = 0. Expected counts come from the shipped answers and the answers chosen here."""

from __future__ import annotations

import csv
import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.support.harness_roundtrip import dry_run_commands, offline_env
from viewcert.attribution import discover
from viewcert.attribution.pipeline import run_ladder
from viewcert.benchmark import arms
from viewcert.benchmark.export import ExportSettings, build_benchmark
from viewcert.cli.main import app
from viewcert.constraints import NO_IMAGE_SENTENCE
from viewcert.stats import BootstrapSettings

CRYSTALS = Path(__file__).parents[1] / "data" / "certificates" / "v1" / "inputs" / "crystals"
ARM_FILES = {"image": "benchmark.jsonl", "r3": "benchmark_r3.jsonl", "no-image": "benchmark_no_image.jsonl",
             "choices-only": "benchmark_choices_only.jsonl"}
BOOT = BootstrapSettings(n_boot=200)
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect_ai.*")


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    root = tmp_path_factory.mktemp("arms")
    (root / "in").mkdir()
    for name in ("NaCl", "CsCl", "Mg"):
        shutil.copy(CRYSTALS / f"{name}.cif", root / "in" / f"{name}.cif")
    build_benchmark(root / "in", root / "bench", settings=ExportSettings.from_options(size=256, supersample=1))
    return root / "bench"


def _copy(export: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "bench"
    shutil.copytree(export, dst)
    return dst


def test_every_arm_ships_the_same_items_with_its_own_question(export):
    qs = {a: _jsonl(export / f) for a, f in ARM_FILES.items()}
    image = qs["image"]
    assert sorted(q["answer"] for q in image) == ["cubic", "cubic", "hexagonal"]  # NaCl, CsCl; Mg
    for a, recs in qs.items():
        assert [(q["id"], q["answer"], q["choices"], q["answer_letter"]) for q in recs] == \
            [(q["id"], q["answer"], q["choices"], q["answer_letter"]) for q in image], a
        if a != "image":
            assert all(q["images"] == [] and q["arm"] == a for q in recs), a
    r3 = {json.loads(x)["id"]: json.loads(x)["question"] for x in (export / "r3_prompts.jsonl").read_text().splitlines()}
    assert [q["question"] for q in qs["r3"]] == [r3[q["id"]] for q in image]  # the study-format R3 prompts
    assert all(n["question"] == f"{i['question']} {NO_IMAGE_SENTENCE}" for n, i in zip(qs["no-image"], image,
                                                                                       strict=True))
    assert {q["question"] for q in qs["choices-only"]} == {"Choose the correct option."}  # the harness adds options
    # VLMEvalKit: the text arms' TSVs have no image column (read as CustomTextMCQDataset), the same rows
    for a in ("r3", "no-image", "choices-only"):
        tsv = pd.read_csv(export / arms.tsv_name(a), sep="\t")
        assert "image" not in tsv and "image_path" not in tsv and {"A", "B", "question"} <= set(tsv.columns)
        assert list(tsv["id"]) == [q["id"] for q in image] and list(tsv["answer"]) == [q["answer_letter"] for q in image]
    assert "image" in pd.read_csv(export / "benchmark.tsv", sep="\t")


def test_each_harness_registers_every_arm_its_own_way(export):
    text = (export / "inspect_task.py").read_text()
    for a, f in ARM_FILES.items():
        name = arms.task_name("crystal-system", a)
        assert f'def {name}() -> Task:\n' in text and f'return arm("{f}", "{name}")' in text
        yaml = (export / "lmms_eval" / f"{name}.yaml").read_text()
        assert f"task: {name}\n" in yaml and f"    test: {f}\n" in yaml
    compile(text, "inspect_task.py", "exec")
    md = (export / "HARNESSES.md").read_text()
    assert "--tasks viewcert_crystal_system,viewcert_crystal_system_r3,viewcert_crystal_system_no_image," \
           "viewcert_crystal_system_choices_only" in md
    assert "--data ViewcertCrystalSystem ViewcertCrystalSystemR3 ViewcertCrystalSystemNoImage " \
           "ViewcertCrystalSystemChoicesOnly" in md
    assert "cp benchmark_r3.tsv vlmevalkit/ViewcertCrystalSystemR3.tsv" in md


def test_the_ladder_restates_the_exports_names():
    """attribution.discover restates benchmark.arms (sibling units): the two agree on every task and arm."""
    from viewcert.attribution.table import TASKS

    assert discover.ARMS == arms.ARMS and discover.RUNG == arms.RUNG
    for task in TASKS:
        assert discover.task_names(task) == {arms.task_name(task, a): a for a in arms.ARMS}
        assert discover.dataset_names(task) == {arms.dataset_name(task, a): a for a in arms.ARMS}
        assert all(discover.arm_file(a) == arms.jsonl_name(a) for a in arms.ARMS)


def _arms_csv(out: Path) -> dict[tuple[str, str], tuple[int, int]]:
    return {(r["model"], r["rung"]): (int(r["correct"]), int(r["n"])) for r in csv.DictReader((out / "arms.csv").open())}


def test_inspect_dry_run_fills_every_rung_and_the_ladder_finds_it(export, tmp_path):
    """HARNESSES.md's Inspect dry run, its inspect command copied unedited, then ``viewcert ladder .`` with no
    manifest: R4, R3, no-image and choices-only at 0/3 (A = triclinic is no item's answer) and the share 0."""
    folder = _copy(export, tmp_path)
    inspect_cmd = dry_run_commands(folder, "Inspect AI")[0]
    for cmd in (inspect_cmd, "viewcert ladder . --out ladder-all --n-boot 200"):
        r = subprocess.run(shlex.split(cmd), cwd=folder, env=offline_env(), capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, f"{cmd}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    assert len(list((folder / "logs" / "dry-run").glob("*.eval"))) == 4  # one log per arm
    model = "viewcert-replay/dry_run_answers.jsonl"
    assert _arms_csv(folder / "ladder-all") == {(model, r): (0, 3) for r in ("R4", "R3", "no-image", "choices-only")}
    (share,) = list(csv.DictReader((folder / "ladder-all" / "shares.csv").open()))
    assert share["r1"] == "R1 = 3/3 (certificate)" and share["status"] == "ok"
    assert (float(share["share"]), float(share["share_lo"]), float(share["share_hi"])) == (0.0, 0.0, 0.0)
    assert "perception share" in r.stdout and "0.0000 [0.0000, 0.0000]" in r.stdout


def _inspect_arm(folder: Path, arm: str, answers: list[str], log_dir: Path) -> None:
    """Inspect's eval() of one arm's task with mockllm giving ``answers`` in sample order."""
    import os

    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    outs = []
    for a in answers:
        o = ModelOutput.from_content(model="mockllm/model", content=a)
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        outs.append(o)
    here = os.getcwd()
    os.chdir(folder)
    try:
        (log,) = inspect_eval(f"inspect_task.py@{arms.task_name('crystal-system', arm)}", log_dir=str(log_dir),
                              model=get_model("mockllm/model", custom_outputs=outs), display="none", max_samples=1)
    finally:
        os.chdir(here)
    assert log.status == "success"


def test_a_share_from_arms_answered_differently(export, tmp_path):
    """Inspect logs written by Inspect itself, one per arm: R4 right on none, R3 right on the first two items,
    the other arms on the first: share = (2/3 − 0)/(3/3 − 0) = 2/3, inside its interval."""
    folder = _copy(export, tmp_path)
    qs = _jsonl(folder / "benchmark.jsonl")
    right = [f"ANSWER: {q['answer_letter']}" for q in qs]
    wrong = ["ANSWER: A"] * 3  # triclinic: no item's answer
    plan = {"image": wrong, "r3": right[:2] + wrong[2:], "no-image": right[:1] + wrong[1:],
            "choices-only": right[:1] + wrong[1:]}
    for a, answers in plan.items():
        _inspect_arm(folder, a, answers, folder / "logs" / "mock")
    lad, _, m = run_ladder(export=folder, bootstrap=BOOT)
    assert {(e.rung, e.harness) for e in m.entries} == {(r, "inspect") for r in ("R4", "R3", "no-image", "choices-only")}
    got = {r["rung"]: r["correct"] for _, r in lad.arms.iterrows()}
    assert got == {"R4": 0, "R3": 2, "no-image": 1, "choices-only": 1}
    (d,) = [r for _, r in lad.decomposition.iterrows()]
    assert d["status"] == "ok" and d["share"] == pytest.approx(2 / 3)
    assert d["share_lo"] <= 2 / 3 <= d["share_hi"]


# ---------------------------------------------------------------- lmms-eval and VLMEvalKit result files
def _lmms_samples(folder: Path, run: Path, arm: str, letters: list[str], qs: list[dict]) -> Path:
    """lmms-eval's --log_samples file of one arm, as lmms-eval 0.7 writes it (``{date_id}_samples_{task}.jsonl``
    beside ``{date_id}_results.json``), with the export's ``process_results`` record per document."""
    run.mkdir(parents=True, exist_ok=True)
    (run / "20261203_120000_results.json").write_text(json.dumps({"model_name": "org/lmm"}))
    path = run / f"20261203_120000_samples_{arms.task_name('crystal-system', arm)}.jsonl"
    path.write_text("".join(json.dumps({
        "doc_id": q["index"], "target": q["answer_letter"], "filtered_resps": [letter], "doc_hash": "x",
        "exact_match": {"id": q["id"], "category": q["category"], "score": float(letter == q["answer_letter"])}})
        + "\n" for q, letter in zip(qs, letters, strict=True)))
    return path


def _vlm_predictions(folder: Path, model_dir: Path, arm: str, letters: list[str]) -> Path:
    """VLMEvalKit's inference output of one arm: the dataset TSV's columns but the image, plus ``prediction``,
    at ``{work_dir}/{model}/{model}_{dataset}.tsv`` (PRED_FORMAT=tsv)."""
    model_dir.mkdir(parents=True, exist_ok=True)
    data = pd.read_csv(folder / arms.tsv_name(arm), sep="\t").drop(columns=["image", "image_path"], errors="ignore")
    data["prediction"] = letters
    path = model_dir / f"{model_dir.name}_{arms.dataset_name('crystal-system', arm)}.tsv"
    data.to_csv(path, sep="\t", index=False)
    return path


def test_lmms_eval_and_vlmevalkit_results_fill_every_rung(export, tmp_path):
    folder = _copy(export, tmp_path)
    qs = _jsonl(folder / "benchmark.jsonl")
    truth = [q["answer_letter"] for q in qs]
    plan = {"image": ["A"] * 3, "r3": truth, "no-image": truth[:1] + ["A"] * 2, "choices-only": ["A"] * 3}
    for a, letters in plan.items():
        _lmms_samples(folder, folder / "results" / "run1" / "org__lmm", a, letters, qs)
        _vlm_predictions(folder, folder / "vlmevalkit" / "run1" / "vlm", a, letters)
    # VLMEvalKit's other files beside the predictions are not results to read
    (folder / "vlmevalkit" / "run1" / "vlm" / "vlm_ViewcertCrystalSystem_exact_matching_result.xlsx").write_bytes(b"")
    shutil.copy(folder / "benchmark.tsv", folder / "vlmevalkit" / "ViewcertCrystalSystem.tsv")
    res = CliRunner().invoke(app, ["ladder", str(folder), "--n-boot", "200"])
    assert res.exit_code == 0, res.output
    got = _arms_csv(folder / "ladder")
    want = {"R4": 0, "R3": 3, "no-image": 1, "choices-only": 0}
    assert got == {(m, r): (c, 3) for m in ("org/lmm", "vlm") for r, c in want.items()}
    shares = {r["model"]: r for r in csv.DictReader((folder / "ladder" / "shares.csv").open())}
    assert {m: float(s["share"]) for m, s in shares.items()} == {"org/lmm": 1.0, "vlm": 1.0}  # (3/3 − 0)/(3/3 − 0)


# ---------------------------------------------------------------- bad input: one line naming the file, exit 2
def _refused(args: list[str]) -> str:
    res = CliRunner().invoke(app, ["ladder", *args])
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("viewcert: error: "), res.output
    return lines[0]


def test_results_of_another_export_are_refused_naming_the_file(export, tmp_path):
    folder = _copy(export, tmp_path)
    qs = _jsonl(folder / "benchmark.jsonl")
    for a in arms.ARMS:
        _lmms_samples(folder, folder / "results" / "r" / "m", a, ["A"] * 3, qs)
    stray = folder / "results" / "r" / "m" / "20261203_120000_samples_viewcert_point_group.jsonl"
    stray.write_text("{}\n")
    line = _refused([str(folder)])
    assert str(stray) in line and "'viewcert_point_group', which this export does not ship" in line


def test_a_missing_arm_is_refused_naming_the_file(export, tmp_path):
    folder = _copy(export, tmp_path)
    qs = _jsonl(folder / "benchmark.jsonl")
    for a in ("image", "r3", "no-image"):
        _lmms_samples(folder, folder / "results" / "r" / "m", a, ["A"] * 3, qs)
    line = _refused([str(folder)])
    assert "has no result for the arm(s) choices-only of this export" in line and "_samples_viewcert_crystal" in line
    # named explicitly, one file is read as it is (any subset of arms)
    one = next((folder / "results").rglob("*_samples_viewcert_crystal_system.jsonl"))
    lad, _, _ = run_ladder(export=folder, results=[one], bootstrap=BOOT)
    assert list(lad.arms["rung"]) == ["R4"]


def test_an_arm_with_ids_of_another_benchmark_is_refused_naming_the_file(export, tmp_path):
    folder = _copy(export, tmp_path)
    qs = _jsonl(folder / "benchmark.jsonl")
    for a in arms.ARMS:
        _lmms_samples(folder, folder / "results" / "r" / "m", a, ["A"] * 3, qs)
    r3 = folder / "benchmark_r3.jsonl"
    recs = _jsonl(r3)
    recs[1]["id"] = "q0007"
    r3.write_text("".join(json.dumps(r) + "\n" for r in recs))
    line = _refused([str(folder)])
    assert str(r3) in line and "line 2: item 'q0007' is not the export's item 'q0001'" in line


def test_a_result_with_items_of_another_benchmark_is_refused_naming_it(export, tmp_path):
    folder = _copy(export, tmp_path)
    qs = _jsonl(folder / "benchmark.jsonl")
    paths = [_lmms_samples(folder, folder / "results" / "r" / "m", a, ["A"] * 3, qs) for a in arms.ARMS]
    lines = paths[1].read_text().splitlines()
    doc = json.loads(lines[2])
    doc["doc_id"], doc["exact_match"]["id"] = 9, "q0009"
    paths[1].write_text("\n".join([*lines[:2], json.dumps(doc)]) + "\n")
    line = _refused([str(folder)])
    assert str(paths[1]) in line and "'q0009'" in line


def test_two_results_of_one_model_and_arm_and_an_empty_folder_are_refused(export, tmp_path):
    folder = _copy(export, tmp_path)
    line = _refused([str(folder)])
    assert "no results file matched logs/**/*.eval, results/**/*_samples_*.jsonl, " in line
    assert "run the commands of HARNESSES.md first" in line
    qs = _jsonl(folder / "benchmark.jsonl")
    for run in ("20261203_120000", "20261204_120000"):
        d = folder / "results" / "m"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{run}_results.json").write_text(json.dumps({"model_name": "org/lmm"}))
        (d / f"{run}_samples_viewcert_crystal_system.jsonl").write_text("".join(json.dumps(
            {"doc_id": q["index"], "target": q["answer_letter"], "filtered_resps": ["A"]}) + "\n" for q in qs))
    line = _refused([str(folder)])
    assert "two results of model 'org/lmm', arm image" in line and "20261204_120000_samples" in line
    missing = _refused([str(folder), "--results", str(tmp_path / "nope")])
    assert str(tmp_path / "nope") in missing and "no such file or folder" in missing
    assert f"no results file matched {tmp_path / 'nope'}/**/*.eval" in missing  # issue 58: what was looked for


# ---------------------------------------------------------------- molecule and transformation exports
def _atoms(block: str) -> list[list[float]]:
    return [[float(x) for x in line.split()[1:]] for line in block.strip().splitlines()]


def test_molecule_and_transformation_exports_ship_every_arm(tmp_path):
    """Point group: the R3 question lists the shown molecule's atoms (one line per atom, centred: their mean is
    0). Zoom (``move z D``): the R3 geometry after the command is the geometry before it moved by D Å along the
    screen z axis, item by item; its choices-only arm states the answer's form; no VLMEvalKit text arm (free
    text)."""
    from tests.support.harness_roundtrip import zoom_export
    from viewcert.benchmark.molecule_export import MoleculeExportSettings, build_molecule_benchmark

    pg = tmp_path / "pg"
    build_molecule_benchmark("builtin:molecules", pg, MoleculeExportSettings.from_options(task="point-group", size=64,
                                                                             supersample=1), limit=2)
    man = {it["id"]: it for it in json.loads((pg / "manifest.json").read_text())["items"]}
    for q in _jsonl(pg / "benchmark_r3.jsonl"):
        xyz = _atoms(q["question"].split("Geometry:\n", 1)[1])
        assert len(xyz) == man[q["source_id"]]["n_atoms"] and q["images"] == []
        assert all(abs(sum(c) / len(xyz)) < 1e-3 for c in zip(*xyz, strict=True))  # centred (4-decimal rounding)
    assert (pg / "benchmark_choices_only.tsv").is_file() and (pg / "lmms_eval" / "viewcert_point_group_r3.yaml").is_file()

    zoom = zoom_export(tmp_path / "zoom")
    for q in _jsonl(zoom / "benchmark_r3.jsonl"):
        before, after = q["question"].split("Before:\n", 1)[1].split("\nAfter:\n")
        d = int(q["answer"].split()[-1])
        for b, a in zip(_atoms(before), _atoms(after), strict=True):
            assert a == pytest.approx([b[0], b[1], b[2] + d], abs=2e-4)
    only = {q["question"] for q in _jsonl(zoom / "benchmark_choices_only.jsonl")}
    assert only == {"Give one command `move z DISTANCE` with DISTANCE a whole number of Å from 40 to 60 (positive "
                    "brings the molecule toward the viewer and makes atoms appear larger). Answer with the command "
                    "only."}
    assert not list(zoom.glob("benchmark_*.tsv"))  # VLMEvalKit: no custom free-text dataset without an image
    assert "VLMEvalKit runs the image arm only here" in (zoom / "HARNESSES.md").read_text()


def test_an_inspect_log_or_vlmevalkit_file_of_another_task_is_refused_naming_it(export, tmp_path):
    """An Inspect log's task is read from its header alone (a zip holding header.json, as Inspect writes it);
    a VLMEvalKit predictions file's dataset from its name."""
    import zipfile

    folder = _copy(export, tmp_path)
    log = folder / "logs" / "other" / "2026-12-03T10-00-00_viewcert-zoom_abc.eval"
    log.parent.mkdir(parents=True)
    with zipfile.ZipFile(log, "w") as z:
        z.writestr("header.json", json.dumps({"version": 2, "status": "success",
                                              "eval": {"task": "viewcert_zoom", "model": "m/x"}}))
    line = _refused([str(folder)])
    assert str(log) in line and "a result of task 'viewcert_zoom', which this export does not ship" in line
    shutil.rmtree(folder / "logs")
    pred = folder / "vlmevalkit" / "m" / "m_ViewcertPointGroup.tsv"
    pred.parent.mkdir(parents=True)
    pred.write_text("index\tprediction\n0\tA\n")
    line = _refused([str(folder)])
    assert str(pred) in line and "a result of dataset 'ViewcertPointGroup'" in line
