"""The harness files every export ships (benchmark.harness_files) and their read-back (attribution.shipped):
the id table, letter targets through per-item shipped choices, both task-name spellings, the lmms-eval hooks
and determinism. Expected values come from the shipped JSONL and the stub answers chosen here."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.attribution.pipeline import run_ladder
from viewcert.attribution.shipped import load_shipped
from viewcert.benchmark.molecule_export import MoleculeExportSettings, build_molecule_benchmark
from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark
from viewcert.errors import InputError
from viewcert.formats.records import sealed
from viewcert.stats import BootstrapSettings

BOOT = BootstrapSettings(n_boot=100)


def _questions(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "benchmark.jsonl").read_text().splitlines()]


def _native_letters(path: Path, qs: list[dict], right: set[int]) -> Path:
    """A native result file: letter targets, the right letter for the questions in ``right``, else another."""
    rows = ["model,item_id,target,raw_output"]
    for k, q in enumerate(qs):
        other = "A" if q["answer_letter"] != "A" else "B"
        rows.append(f"stub,{q['index']},{q['answer_letter']},ANSWER: {q['answer_letter'] if k in right else other}")
    path.write_text("\n".join(rows) + "\n")
    return path


def _manifest(path: Path, folder: Path, results: Path, task: str | None = None) -> Path:
    head = f'[study]\nbenchmark = "{folder.as_posix()}"\n' + (f'task = "{task}"\n' if task else "")
    path.write_text(head + f'[[input]]\npath = "{results.as_posix()}"\nrung = "R4"\n')
    return path


@pytest.fixture(scope="module")
def point_group(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pg") / "b"
    build_molecule_benchmark("builtin:molecules", folder, MoleculeExportSettings.from_options(task="point-group", size=64,
                                                                                  supersample=1), limit=3)
    return folder, _questions(folder)


def test_every_export_ships_the_harness_files(point_group):
    folder, qs = point_group
    for rel in ("benchmark.jsonl", "benchmark.tsv", "ids.csv", "inspect_task.py", "HARNESSES.md",
                "lmms_eval/viewcert_point_group.yaml", "lmms_eval/utils.py"):
        assert (folder / rel).is_file(), rel
    compile((folder / "inspect_task.py").read_text(), "inspect_task.py", "exec")
    ids = (folder / "ids.csv").read_text().splitlines()
    assert ids[0] == "index,id,source_id"
    assert ids[1:] == [f"{q['index']},{q['id']},{q['source_id']}" for q in qs]
    for q in qs:  # the options are the harness's to add: none of them in the question text
        assert q["category"] == q["answer"] and q["answer_format"] == "choice"
        assert "C2v" not in q["question"] and "Choices" not in q["question"]
    m = json.loads((folder / "manifest.json").read_text())
    assert {"ids.csv", "inspect_task.py", "lmms_eval/utils.py"} <= set(m["files"])


def test_lmms_eval_hooks_add_the_options_once_and_score_letters(point_group):
    folder, qs = point_group
    spec = importlib.util.spec_from_file_location("viewcert_lmms_utils", folder / "lmms_eval" / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    q = qs[0]
    text = utils.doc_to_text(q, {"pre_prompt": "", "post_prompt": "Answer with the letter."})
    assert text.count("C2v") == 1 and "G. C2v" in text  # the seventh shipped choice, lettered once
    assert utils.doc_to_target(q) == q["answer_letter"]
    assert [im.size for im in utils.doc_to_visual(q)] == [(64, 64)] * 3
    hit = utils.process_results(q, [q["answer_letter"]])["exact_match"]
    miss = utils.process_results(q, ["Z"])["exact_match"]
    assert (hit["score"], miss["score"], hit["id"]) == (1.0, 0.0, q["id"])


def test_point_group_letters_read_through_the_shipped_choices(point_group, tmp_path):
    folder, qs = point_group
    res = _native_letters(tmp_path / "r.csv", qs, right={0, 2})
    for task in (None, "point-group", "point_group"):  # the export's own task; both spellings
        lad, table, _ = run_ladder(manifest=_manifest(tmp_path / "m.toml", folder, res, task), bootstrap=BOOT,
                                   threshold=0.5)
        assert lad.arms.iloc[0]["correct"] == 2
        assert sorted(table.frame["target"]) == sorted(q["answer"].lower() for q in qs)
    with pytest.raises(InputError, match="not the export's 'point-group'"):
        run_ladder(manifest=_manifest(tmp_path / "m.toml", folder, res, "crystal_system"), bootstrap=BOOT)


def test_trans_rot_letters_map_through_each_items_own_choices(tmp_path):
    folder = tmp_path / "tr"
    build_task_benchmark("builtin:molecules", folder,
                         TaskExportSettings.from_options(task="trans-rot", seed=5, per_structure=2, width=120, height=90,
                                            supersample=1), limit=2)
    qs = _questions(folder)
    assert len({tuple(q["choices"]) for q in qs}) > 1  # per-item options
    shipped = load_shipped(folder)
    assert shipped.resolve("0") == "q0000" and shipped.resolve(qs[0]["source_id"]) == qs[0]["source_id"]
    res = _native_letters(tmp_path / "r.csv", qs, right={1})
    lad, table, _ = run_ladder(manifest=_manifest(tmp_path / "m.toml", folder, res), bootstrap=BOOT, threshold=0.5)
    assert lad.arms.iloc[0]["correct"] == 1
    f = table.frame.set_index("item_id")
    for q in qs:
        assert f.loc[q["id"], "target"] == q["answer"]  # the letter named this item's own true sequence
    # chance: one of four options per item; R1: the certificate's mean choice ceiling
    assert lad.settings.chance == "1/4"
    cert = json.loads((folder / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert float(lad.ceilings[0].value) == pytest.approx(cert["choice_ceiling_mean"])


def test_harness_files_are_deterministic(point_group, tmp_path):
    folder, _ = point_group
    again = tmp_path / "again"
    build_molecule_benchmark("builtin:molecules", again, MoleculeExportSettings.from_options(task="point-group", size=64,
                                                                                 supersample=1), limit=3)
    for rel in ("benchmark.jsonl", "benchmark.tsv", "ids.csv", "inspect_task.py", "HARNESSES.md",
                "lmms_eval/utils.py", "lmms_eval/viewcert_point_group.yaml"):
        assert (again / rel).read_bytes() == (folder / rel).read_bytes(), rel


def test_interaction_lists_get_misis_list_score_beside_the_ceiling(tmp_path):
    """A residue-ligand export in the layout benchmark.interaction_export writes (hand-made: four questions),
    stub answers scored by MiSI's list rule by hand: half the true entries 0.5, a right 'no' 1, a fabricated
    extra entry caps at 0.5, a bond claimed for a negative residue 0."""
    folder = tmp_path / "rl"
    folder.mkdir()
    answers = ["yes: ARG 285 NH1 A, O1; SER 12 OG A, O2", "no", "yes: TYR 9 OH A, N1", "no"]
    stub = ["yes: ARG 285 NH1 A, O1", "No.", "Answer: yes: TYR 9 OH A, N1; GLY 3 N A, O2", "yes: GLY 3 N A, O2"]
    lines = ["index,id,source_id"] + [f"{k},q{k:04d},cx:LIG" for k in range(4)]
    (folder / "ids.csv").write_text("\n".join(lines) + "\n")
    (folder / "benchmark.jsonl").write_text("".join(json.dumps(
        {"id": f"q{k:04d}", "index": k, "source_id": "cx:LIG", "task": "residue-ligand", "answer": a,
         "answer_format": "list", "images": [], "question": "?", "category": "x"}) + "\n"
        for k, a in enumerate(answers)))
    ceilings = [1.0, 1.0, 0.5, 1.0]
    (folder / "certificate.json").write_text(json.dumps(sealed(
        {"format": "viewcert-interaction-benchmark/1", "task": "residue-ligand",
         "items": [{"id": f"q{k:04d}", "rendered": {"ceiling": c}, "ideal": {"ceiling": 1.0}}
                   for k, c in enumerate(ceilings)]})))
    res = tmp_path / "r.jsonl"
    res.write_text("".join(json.dumps({"model": "stub", "item_id": k, "target": a, "raw_output": o}) + "\n"
                           for k, (a, o) in enumerate(zip(answers, stub, strict=True))))
    lad, _, _ = run_ladder(manifest=_manifest(tmp_path / "m.toml", folder, res), bootstrap=BOOT, threshold=0.5)
    assert lad.arms.iloc[0]["correct"] == 1  # only the 'no' is an exact list match
    row = lad.task_scores.iloc[0]
    assert row["misi_credit"] == pytest.approx((0.5 + 1 + 0.5 + 0) / 4)
    assert row["certified_partial_ceiling"] == pytest.approx(sum(ceilings) / 4)
    assert float(lad.ceilings[0].value) == pytest.approx(0.875)
