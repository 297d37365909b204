"""Loose ends of issues 20 and 21: the constraints of a crystal-system or molecular export recorded in its
certificate (and ``verify`` clean on it), list answers with their own answer format (the ladder dispatches on
it), the transformation question's "answer only" sentence rewritten under a layout constraint, and the one
line ``build-benchmark`` prints about the harness files. Expected values are the options given here."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.complex_data import COMPLEXES, needs_complexes
from tests.support.export_fixtures import WATER_XYZ as WATER
from tests.support.export_fixtures import export_cli
from viewcert.attribution.shipped import ListParser, load_shipped
from viewcert.benchmark.harness_files import lmms_eval_files, question_record
from viewcert.certify import CertifyConfig
from viewcert.certify.verify import verify_certificate
from viewcert.constraints import plan, reconciled_question, spec_of_record, with_constraints
from viewcert.errors import InputError
from viewcert.formats.versions import SINCE_V1

# water, HOH angle 104.5°, O–H 0.9572 Å (C2v)
ROTATION_Q = ("Which single command `roll AXIS ANGLE` was applied? Answer with the command only, e.g. "
              "`roll y 15`.")


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture(scope="module")
def crystal(tmp_path_factory):
    out = tmp_path_factory.mktemp("cons") / "b"
    # one input structure (a --limit subset verifies too: tests/benchmark/test_export_certificates_verify.py)
    res = CliRunner().invoke(export_cli(), ["build-benchmark", "builtin:aflow:A_hP2_194_c", "--task", "crystal-system",
                                      "--constraints", "structure,format", "--size", "48", "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out, res.output


def test_crystal_export_records_its_constraints_in_jsonl_tsv_and_certificate(crystal):
    out, _ = crystal
    recs = _jsonl(out / "benchmark.jsonl")
    assert len(recs) == 1
    assert all([c["name"] for c in r["constraints"]] == ["format", "structure"] for r in recs)
    tsv = pd.read_csv(out / "benchmark.tsv", sep="\t")
    assert tsv["constraints"].tolist() == ["format,structure"]
    cert = json.loads((out / "certificate.json").read_text(encoding="utf-8"))
    assert_certificate_consistent(cert)
    assert cert["config"]["constraints"] == ["format", "structure"]  # inventory order, as asked
    assert CertifyConfig.from_dict(cert["config"]).scoring.constraints == ("format", "structure")


def test_verify_on_the_constrained_certificate_is_clean(crystal):
    out, _ = crystal
    res = CliRunner().invoke(export_cli(), ["verify", str(out / "certificate.json"), "--workers", "1"])
    assert res.exit_code == 0, res.output
    assert "verified: 1 items recomputed, byte-identical" in res.output


def test_build_benchmark_names_the_harness_files_in_one_line(crystal):
    out, output = crystal
    (line,) = [ln for ln in output.splitlines() if ln.startswith("harness files")]
    for name in ("benchmark.jsonl", "benchmark.tsv", "ids.csv", "inspect_task.py", "HARNESSES.md",
                 "lmms_eval/utils.py", "lmms_eval/viewcert_crystal_system.yaml"):
        assert name in line and (out / name).is_file()


def test_molecule_certificate_records_constraints_and_verifies(tmp_path):
    from viewcert.benchmark.molecule_export import MoleculeExportSettings, build_molecule_benchmark

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "water.xyz").write_text(WATER)
    build_molecule_benchmark(str(tmp_path / "in"), tmp_path / "pg",
                             MoleculeExportSettings.from_options(size=48, supersample=1, constraints=("structure", "letter")))
    (rec,) = _jsonl(tmp_path / "pg" / "benchmark.jsonl")
    assert [c["name"] for c in rec["constraints"]] == ["letter", "structure"]
    cert = json.loads((tmp_path / "pg" / "certificate.json").read_text(encoding="utf-8"))
    assert_certificate_consistent(cert)
    assert cert["config"]["constraints"] == ["letter", "structure"]
    rep = verify_certificate(tmp_path / "pg" / "certificate.json", n_workers=1, progress=False,
                             inputs_root=tmp_path)
    # the recorded constraints recompute as recorded, and the molecular export's certificate verifies clean
    # (its questions recorded as inputs.selection: tests/benchmark/test_export_certificates_verify.py)
    assert rep.ok and rep.byte_identical, rep.lines()


def test_no_constraints_no_field_and_a_v1_reading_drops_it():
    assert "constraints" not in CertifyConfig().to_dict()  # unconstrained certificates keep their bytes
    assert "config.constraints" in {c.path for c in SINCE_V1 if c.action == "drop"}
    with pytest.raises(InputError, match="unknown constraint 'json'") as exc:
        CertifyConfig.from_dict({"constraints": ["json"]})
    assert exc.value.field == "constraints"
    with pytest.raises(InputError, match="a list of names"):
        CertifyConfig.from_dict({"constraints": "format"})


# ---------------------------------------------------------------------- list answers
def test_list_answers_have_their_own_format_and_no_count():
    rec = question_record(0, "cx:LIG", [], "Does residue X bond?", "residue-ligand", "no", answer_format="list")
    assert rec["answer_format"] == "list" and "choices" not in rec
    assert spec_of_record(rec).kind == "list"
    p = plan(["count", "format", "case"], spec_of_record(rec))
    assert p.names() == ("format",)  # the number of entries is the answer's content: not asked
    assert dict(p.skipped)["count"] == "the answer is not a list with a known number of entries"
    with pytest.raises(ValueError):
        question_record(0, "x", [], "?", "rotation", "roll x 15", choices=("a",), answer_format="list")


def _hand_export(folder: Path, fmt: str) -> Path:
    folder.mkdir()
    answers = ["yes: ARG 285 NH1 A, O1", "no"]
    (folder / "ids.csv").write_text("index,id,source_id\n0,q0000,cx:LIG\n1,q0001,cx:LIG\n")
    (folder / "benchmark.jsonl").write_text("".join(json.dumps(
        {"id": f"q{k:04d}", "index": k, "source_id": "cx:LIG", "task": "residue-ligand", "answer": a,
         "answer_format": fmt, "images": [], "question": "?", "category": "x"}) + "\n" for k, a in enumerate(answers)))
    return folder


def test_the_ladder_dispatches_on_the_list_format(tmp_path):
    shipped = load_shipped(_hand_export(tmp_path / "ok", "list"))
    assert shipped.answer_format == "list" and isinstance(shipped.parser(), ListParser)
    assert shipped.chance() == pytest.approx(1 / 2)  # two distinct canonical answers
    with pytest.raises(InputError, match="answer format 'command' does not fit task 'residue-ligand'") as exc:
        load_shipped(_hand_export(tmp_path / "old", "command"))
    assert exc.value.field == "answer_format" and "\n" not in str(exc.value)


# ---------------------------------------------------------------------- the rotation question under structure
@pytest.mark.parametrize("names", [["structure"], ["format"], ["format", "structure"]])
def test_a_layout_constraint_rewrites_the_answer_only_sentence(names):
    rec = {"question": ROTATION_Q, "answer_format": "command", "answer": "roll y 15"}
    out = with_constraints(rec, names)
    assert "only" not in out["question"] and "only" not in out["question_no_image"]
    assert out["question"].startswith("Which single command `roll AXIS ANGLE` was applied? Give the answer as "
                                      "the command, e.g. `roll y 15`.\n\nResponse requirements:\n")
    assert out["answer"] == "roll y 15"


def test_other_constraints_keep_the_sentence():
    assert reconciled_question(ROTATION_Q, plan(["case"], spec_of_record({"answer_format": "command"})).applied) \
        == ROTATION_Q
    out = with_constraints({"question": ROTATION_Q, "answer_format": "command", "answer": "roll y 15"}, ["case"])
    assert out["question"].startswith(ROTATION_Q + "\n\n")


def test_rotation_export_under_structure_has_no_contradiction(tmp_path):
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

    build_task_benchmark("builtin:molecules", tmp_path / "rot",
                         TaskExportSettings.from_options(task="rotation", width=64, height=48, supersample=1,
                                            constraints=("structure",)), limit=1)
    (rec,) = _jsonl(tmp_path / "rot" / "benchmark.jsonl")
    assert "Answer with the command only" not in rec["question"]
    assert "Give the answer as the command, e.g. `roll y 15`." in rec["question"]
    yaml = (tmp_path / "rot" / "lmms_eval" / "viewcert_rotation.yaml").read_text()
    assert 'post_prompt: ""' in yaml  # lmms-eval's post prompt does not ask for the bare command either
    assert 'post_prompt: "Answer with the command only."' in lmms_eval_files("rotation", False)[
        "lmms_eval/viewcert_rotation.yaml"]


# ---------------------------------------------------------------------- Inspect's MCQ template under a layout constraint
def test_inspect_task_template_follows_the_layout_constraint():
    from viewcert.benchmark.harness_files import inspect_task_py

    def solver(layout):
        text = inspect_task_py("crystal-system", True, layout)
        compile(text, "inspect_task.py", "exec")
        return next(ln.strip() for ln in text.splitlines() if "solver=" in ln)

    assert solver(()).startswith("solver=multiple_choice(),")  # unconstrained exports keep their bytes
    assert solver(("structure",)).startswith("solver=multiple_choice(cot=True),")
    assert solver(("format", "structure")).startswith('solver=multiple_choice(template="{question}\\n\\n{choices}"),')


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_inspect_runs_a_structure_constrained_export_without_the_whole_response_rule(tmp_path):
    """Inspect's own run of the shipped task (mockllm): under ``structure`` its prompt asks for reasoning and a
    last ANSWER line (no "entire content" rule), and it scores the stub's two answers as chosen: 1 of 2."""
    pytest.importorskip("inspect_ai", reason="Inspect AI (the test extra) is not installed")
    from tests.support.harness_roundtrip import run_inspect
    from viewcert.benchmark.export import build_benchmark
    from viewcert.benchmark.settings import ExportSettings

    folder = tmp_path / "b"
    build_benchmark("builtin:prototypes", folder, settings=ExportSettings.from_options(size=48, supersample=1,
                                                                          constraints=("structure",)),
                    limit=2, certify=False)
    qs = _jsonl(folder / "benchmark.jsonl")
    wrong = "B" if qs[1]["answer_letter"] != "B" else "C"
    log = run_inspect(folder, [f"The edges are equal.\nAnswer: {qs[0]['answer_letter']}",
                               f"One angle differs.\nAnswer: {wrong}"], tmp_path / "logs")
    assert log.status == "success"
    assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(0.5)
    prompt = str(log.samples[0].messages[0].content)
    assert "The last line of your response" in prompt and "entire content" not in prompt
    assert "Response requirements:" in prompt


# ---------------------------------------------------------------------- interaction exports


@needs_complexes
def test_interaction_export_carries_constraints_with_the_list_format(tmp_path):
    pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")
    from viewcert.benchmark.interaction_export import InteractionExportSettings, build_interaction_benchmark

    cx = [(COMPLEXES / "1pwc", "PNM")]
    plain = build_interaction_benchmark(cx, tmp_path / "a", InteractionExportSettings.from_options(n_boot=50))
    cons = build_interaction_benchmark(cx, tmp_path / "b", InteractionExportSettings.from_options(
        n_boot=50, constraints=("count", "case", "structure", "format")))
    (a,) = _jsonl(tmp_path / "a" / "benchmark.jsonl")
    (b,) = _jsonl(tmp_path / "b" / "benchmark.jsonl")
    assert b["answer"] == a["answer"] and b["answer_format"] == a["answer_format"] == "list"
    assert b["question"].startswith(a["question"] + "\n\nResponse requirements:\n")
    assert [c["name"] for c in b["constraints"]] == ["format", "structure"] and a["constraints"] == []
    assert b["constraints_skipped"] == {"count": "the answer is not a list with a known number of entries",
                                        "case": "the answer is not a word"}
    assert pd.read_csv(tmp_path / "b" / "benchmark.tsv", sep="\t")["constraints"].tolist() == ["format,structure"]
    assert cons.certificate.to_dict()["settings"]["constraints"] == ["format", "structure", "count", "case"]
    assert "constraints" not in plain.certificate.to_dict()["settings"]  # unconstrained: the settings as before
