"""Instruction adherence scored apart from correctness (issue 21): the constraint inventory and its strict
verifiers, an exported benchmark with ``--constraints format,precision,structure`` round-tripped through stub
models (CSR, ISR, DRFR, the 2×2, φ and Fisher's p derived by hand), hostile answers, and the study's
gpt-4.1-mini no-image arm (0/210 adherent)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.attribution.adherence import adherence_for_table, fisher_p, phi, read_item_constraints
from viewcert.attribution.parsing import crystal_system_parser
from viewcert.attribution.table import make_frame
from viewcert.constraints import (
    NO_IMAGE_SENTENCE,
    AnswerSpec,
    choices_only_prompt,
    constrained_prompt,
    parse_names,
    plan,
    verify,
    with_constraints,
)
from viewcert.errors import InputError

SYSTEMS = ("triclinic", "monoclinic", "orthorhombic", "tetragonal", "trigonal", "hexagonal", "cubic")
STUDY = Path(__file__).resolve().parents[3] / "shared" / "data" / "render-ceiling"
CHOICE = AnswerSpec("choice", SYSTEMS)


def _wrong(label: str) -> str:
    return SYSTEMS[(SYSTEMS.index(label) + 1) % len(SYSTEMS)]


# ---------------------------------------------------------------------- inventory and verifiers
def test_plan_keeps_what_fits_and_says_why_the_rest_is_skipped():
    p = plan(["structure", "precision", "format"], CHOICE)
    assert p.names() == ("format", "structure")  # inventory order
    assert dict(p.skipped) == {"precision": "the answer is not a number"}
    q = plan(["letter", "case"], CHOICE)
    assert q.names() == ("letter",)
    assert "conflicts with letter" in dict(q.skipped)["case"]
    num = plan(["precision", "unit"], AnswerSpec("numeric", unit="Å", decimals=3))
    assert num.names() == ("precision", "unit")
    with pytest.raises(InputError, match="unknown constraint 'json'"):
        parse_names("format,json")


def test_constrained_prompt_appends_and_keeps_the_question():
    p = plan(["format", "structure"], CHOICE)
    text = constrained_prompt("Identify the crystal system.", p.applied)
    assert text.startswith("Identify the crystal system.\n\nResponse requirements:\n- ")
    assert text.count("\n- ") == 2
    assert constrained_prompt("Q", ()) == "Q"


@pytest.mark.parametrize(("text", "expect"), [
    ('I compared the edges.\nAnswer: {"answer": "cubic"}', (True, True)),
    ("I compared the edges.\nAnswer: cubic", (False, True)),       # structure right, not a JSON object
    ('{"answer": "cubic"}', (True, False)),                         # the object alone: no reasoning, no Answer: line
    ('Answer: {"answer": "cubic"}', (True, False)),                 # no reasoning before the line
    ('edges\nAnswer: {"answer": "cubic"}\nthat is all', (True, False)),  # text after the line
    ('edges\nAnswer: {"answer": "x"}\nAnswer: {"answer": "cubic"}', (True, False)),  # two Answer: lines
    ('edges\nAnswer: {"label": "cubic"}', (False, True)),           # no 'answer' key
    ("edges\nAnswer: {'answer': 'cubic'}", (False, True)),          # not JSON (single quotes)
])
def test_format_and_structure_verifiers_hand_cases(text, expect):
    p = plan(["format", "structure"], CHOICE)
    assert tuple(c.ok for c in verify(text, p.applied)) == expect


@pytest.mark.parametrize(("name", "spec", "value", "ok"), [
    ("letter", CHOICE, "G", True), ("letter", CHOICE, "H", False), ("letter", CHOICE, "cubic", False),
    ("precision", AnswerSpec("numeric", decimals=2), "3.14", True),
    ("precision", AnswerSpec("numeric", decimals=2), "3.1", False),
    ("precision", AnswerSpec("numeric", decimals=2), "3.140", False),
    ("precision", AnswerSpec("numeric", decimals=0), "90", True),
    ("unit", AnswerSpec("numeric", unit="Å"), "2.35 Å", True), ("unit", AnswerSpec("numeric", unit="Å"), "2.35", False),
    ("unit", AnswerSpec("numeric", unit="°"), "109.5°", True),
    ("count", AnswerSpec("list", entries=3), "Na, Cl, O", True), ("count", AnswerSpec("list", entries=3), "Na, Cl", False),
    ("count", AnswerSpec("list", entries=2), '["Na", "Cl"]', True),
    ("case", CHOICE, "cubic", True), ("case", CHOICE, "Cubic", False),
    # a command's magnitudes (transformation tasks): every component judged
    ("precision", AnswerSpec("command", decimals=1), "move x 3.0", True),
    ("precision", AnswerSpec("command", decimals=1), "move x 3.0, roll y -45.0", True),
    ("precision", AnswerSpec("command", decimals=1), "move x 3.0, roll y -45", False),
    ("precision", AnswerSpec("command", decimals=0), "move z 44 Å", True),
    ("precision", AnswerSpec("command", decimals=1), "three angstroms along x", False),
    ("unit", AnswerSpec("command"), "move x 3 Å, roll y 45°", True),
    ("unit", AnswerSpec("command"), "move x 3 °", False),
    ("unit", AnswerSpec("command"), "move x 3 Å, turn z 90", False),
])
def test_value_verifiers_hand_cases(name, spec, value, ok):
    (c,) = plan([name], spec).applied
    (chk,) = verify(value, (c,))
    assert chk.ok is ok
    assert (chk.reason == "") is ok


# ---------------------------------------------------------------------- hostile answers
HOSTILE = {
    "empty": "",
    "one megabyte": "cubic " * 174_763,
    "not UTF-8": b"\xff\xfe cubic \x80",
    "JSON nested 10^4 deep": "[" * 10_000 + "]" * 10_000,
    "object nested 10^4 deep": '{"answer":' * 10_000 + '"cubic"' + "}" * 10_000,
    "Answer: line repeated": "reasoning\n" + "Answer: cubic\n" * 500,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_answers_are_adherence_outcomes(name):
    cons = plan(["format", "structure", "case"], CHOICE).applied
    checks = verify(HOSTILE[name], cons)
    assert [c.name for c in checks] == ["format", "structure", "case"]
    assert not all(c.ok for c in checks)  # never compliant with the whole set
    assert all(c.reason for c in checks if not c.ok)
    raw = HOSTILE[name]
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    crystal_system_parser().parse(text)  # the lenient parser never raises either


def test_hostile_reasons_say_what_is_wrong():
    cons = plan(["format", "structure"], CHOICE).applied
    assert verify("", cons)[0].reason == "empty output"
    assert "longer than" in verify("x" * 1_000_000, cons)[0].reason
    assert "not UTF-8" in verify(b"\xff", cons)[0].reason
    deep = "why\nAnswer: " + '{"answer":' * 100 + '"cubic"' + "}" * 100  # short, but 100 deep: not parsed
    assert "nested deeper than 32" in verify(deep, cons)[0].reason
    assert "JSON longer than 10000" in verify("why\nAnswer: " + '{"answer":' * 2_000 + '"cubic"' + "}" * 2_000,
                                              cons)[0].reason
    assert "500 'Answer:' lines" in verify(HOSTILE["Answer: line repeated"], cons)[1].reason


def test_hostile_answers_through_the_adherence_table():
    items = [f"q{i:04d}" for i in range(len(HOSTILE))]
    cons = plan(["format", "structure"], CHOICE).applied
    recs = []
    parser = crystal_system_parser()
    for iid, (_, raw) in zip(items, sorted(HOSTILE.items()), strict=True):
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        recs.append(_row("hostile", iid, 0, raw, parser.parse(text[:200_000]), "cubic"))
    frame = make_frame(recs)
    _, summary = adherence_for_table(frame, items, dict.fromkeys(items, cons))
    r = summary.iloc[0]
    assert r["ISR"] == 0.0 and r["items_adherent"] == 0 and r["responses"] == len(HOSTILE)


# ---------------------------------------------------------------------- φ and Fisher by hand
def test_phi_and_fisher_hand_worked():
    # [[3, 1], [1, 3]]: φ = (9 − 1)/√(4·4·4·4) = 1/2; hypergeometric P(a=k) = C(4,k)C(4,4−k)/70 = 1,16,36,16,1 /70;
    # two-sided p = P(a ∈ {0, 1, 3, 4}) = 34/70
    assert phi(3, 1, 1, 3) == pytest.approx(0.5)
    assert fisher_p(3, 1, 1, 3) == pytest.approx(34 / 70)
    # [[4, 0], [0, 4]]: φ = 1; p = 2/70
    assert phi(4, 0, 0, 4) == pytest.approx(1.0)
    assert fisher_p(4, 0, 0, 4) == pytest.approx(2 / 70)
    assert phi(4, 4, 0, 0) is None  # an empty row: φ undefined


# ---------------------------------------------------------------------- the export round trip
def _row(model, iid, k, raw, parsed, target, rung="R4"):
    return {"run": "stub", "model": model, "rung": rung, "item_id": iid, "sample_k": k, "raw_output": raw,
            "parsed_answer": parsed.answer, "target": target, "score": float(parsed.answer == target),
            "parse_status": parsed.status, "category": target, "source_file": "stub", "harness": "native",
            "parse_reason": parsed.reason}


STUBS = {
    # right substance, wrong form: a bare label (no JSON object, no reasoning, no Answer: line)
    "right-substance": lambda i, t: t,
    # wrong substance, right form
    "right-form": lambda i, t: f'I compared the cell edges and angles.\nAnswer: {{"answer": "{_wrong(t)}"}}',
    # 3 CF, 1 C¬F (structure met, format not: 1 of 2), 1 ¬CF, 3 ¬C¬F (0 of 2)
    "mixed": lambda i, t: (f'I compared the edges.\nAnswer: {{"answer": "{t}"}}' if i < 3 else
                           f"I compared the edges.\nAnswer: {t}" if i == 3 else
                           f'I compared the edges.\nAnswer: {{"answer": "{_wrong(t)}"}}' if i == 4 else _wrong(t)),
}


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    from viewcert.benchmark.export import build_benchmark
    from viewcert.benchmark.settings import ExportSettings

    root = tmp_path_factory.mktemp("constrained")
    plain = build_benchmark("builtin:prototypes", root / "plain", settings=ExportSettings.from_options(size=48, supersample=1),
                            limit=8, certify=False)
    cons = build_benchmark("builtin:prototypes", root / "cons",
                           settings=ExportSettings.from_options(size=48, supersample=1,
                                                   constraints=("format", "precision", "structure")),
                           limit=8, certify=False)
    return root, plain, cons


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_export_records_constraints_and_keeps_the_reference_answer(export):
    root, plain, cons = export
    a, b = _jsonl(root / "plain" / "benchmark.jsonl"), _jsonl(root / "cons" / "benchmark.jsonl")
    assert len(a) == len(b) == 8
    for x, y in zip(a, b, strict=True):
        assert (y["id"], y["answer"], y["answer_letter"], y["choices"]) == (x["id"], x["answer"], x["answer_letter"],
                                                                            x["choices"])
        assert y["question"].startswith(x["question"] + "\n\nResponse requirements:\n")
        assert [c["name"] for c in y["constraints"]] == ["format", "structure"]
        assert y["constraints_skipped"] == {"precision": "the answer is not a number"}
        assert x["constraints"] == []
        assert y["question_no_image"].startswith(x["question"] + " " + NO_IMAGE_SENTENCE)
        assert y["question_choices_only"].startswith(choices_only_prompt(x["choices"]))
        assert x["question"] not in y["question_choices_only"]
    import pandas as pd

    tsv = pd.read_csv(root / "cons" / "benchmark.tsv", sep="\t")
    assert list(tsv.columns)[-1] == "constraints"
    assert (tsv["constraints"] == "format,structure").all()
    assert tsv["question"].tolist() == [r["question"] for r in b]  # the harness sees the constrained prompt
    assert cons.settings.constraints == ["format", "precision", "structure"]
    assert set(cons.manifest["details"]["constraints"]) == {r["id"] for r in b}


def _stub_table(records: list[dict]):
    parser = crystal_system_parser()
    rows = []
    for model, answer in STUBS.items():
        for i, r in enumerate(records):
            raw = answer(i, r["answer"])
            rows.append(_row(model, r["id"], 0, raw, parser.parse(raw), r["answer"]))
    return make_frame(rows)


def test_round_trip_correctness_and_adherence_apart(export):
    root, _, _ = export
    records = _jsonl(root / "cons" / "benchmark.jsonl")
    cons = read_item_constraints(root / "cons" / "benchmark.jsonl")
    universe = [r["id"] for r in records]
    _, s = adherence_for_table(_stub_table(records), universe, cons)
    s = s.set_index("model")
    good = s.loc["right-substance"]  # 8 correct, 0 of 2 constraints met each
    assert good["lenient_correct"] == 8 and good["ISR"] == 0.0 and good["CSR"] == 0.0 and good["DRFR"] == 0.0
    assert (good["CF"], good["C_notF"], good["notC_F"], good["notC_notF"]) == (0, 8, 0, 0)
    assert good["format_limited"] == 8 and good["strict_correct"] == 0
    assert good["phi"] is None or good["phi"] != good["phi"]  # a margin is empty: no φ
    form = s.loc["right-form"]
    assert form["lenient_correct"] == 0 and form["ISR"] == 1.0 and form["CSR"] == 1.0 and form["DRFR"] == 1.0
    assert (form["CF"], form["C_notF"], form["notC_F"], form["notC_notF"]) == (0, 0, 8, 0)
    mixed = s.loc["mixed"]
    # CSR = (1+1+1+½+1+0+0+0)/8 = 9/16; ISR = 4/8; DRFR = (2+2+2+1+2)/16 = 9/16; φ = 1/2; p = 34/70
    assert Fraction(mixed["CSR_exact"]) == Fraction(9, 16)
    assert Fraction(mixed["ISR_exact"]) == Fraction(1, 2)
    assert Fraction(mixed["DRFR_exact"]) == Fraction(9, 16)
    assert (mixed["CF"], mixed["C_notF"], mixed["notC_F"], mixed["notC_notF"]) == (3, 1, 1, 3)
    assert mixed["phi"] == pytest.approx(0.5)
    assert mixed["fisher_p"] == pytest.approx(34 / 70)
    assert mixed["fisher_p_bonferroni"] == pytest.approx(34 / 70)  # the only model of the rung with a φ
    assert mixed["format_limited"] == 1  # item 3: right label, JSON object missing
    assert mixed["failures_by_constraint"] == "format 4; structure 3"  # items 3, 5, 6, 7 and 5, 6, 7: 16 − 7 = 9 met


def test_with_constraints_on_a_command_question():
    rec = {"question": "Which move?", "answer_format": "command", "answer": "rotate x 30"}
    out = with_constraints(rec, ["letter", "structure", "case"])
    assert [c["name"] for c in out["constraints"]] == ["structure", "case"]
    assert out["constraints_skipped"] == {"letter": "the answer has no lettered options"}
    assert "question_choices_only" not in out and out["answer"] == "rotate x 30"


# ---------------------------------------------------------------------- the study's data
@pytest.mark.skipif(not STUDY.is_dir(), reason="render-ceiling study data not available at ../shared/data")
def test_study_gpt41_mini_no_image_is_an_adherence_failure():
    from viewcert.attribution.readers import read_manifest
    from viewcert.attribution.table import manifest_from_study_dir

    m = manifest_from_study_dir(STUDY)
    table, cov = read_manifest(m, parser=crystal_system_parser())
    _, s = adherence_for_table(table.frame, cov.universe)
    row = s[(s["model"] == "openai/gpt-4.1-mini") & (s["rung"] == "no-image")].iloc[0]
    # the file: "unparseable": 210, "api_errors": 0 and no votes on any of its 210 items
    assert (row["items_adherent"], row["items_with_response"]) == (0, 210)
    assert row["responses"] == 630 and row["ISR"] == 0.0
    other = s[(s["rung"] == "no-image") & (s["model"] != "openai/gpt-4.1-mini")]
    assert (other["items_adherent"] > 0).all()


def test_round_trip_through_the_ladder_command(export, tmp_path):
    """The stubs' answers as native result files of the exported benchmark, read by ``viewcert ladder``: the
    item constraints come from the export's benchmark.jsonl, the report shows adherence beside the rungs."""
    from typer.testing import CliRunner

    from viewcert.attribution.pipeline import ladder_diagnostics, run_ladder
    from viewcert.cli.main import app
    from viewcert.stats import BootstrapSettings

    root, _, _ = export
    records = _jsonl(root / "cons" / "benchmark.jsonl")
    entries = []
    for model, answer in STUBS.items():
        path = tmp_path / f"{model}.jsonl"
        path.write_text("".join(json.dumps({"item_id": r["id"], "target": r["answer"],
                                            "raw_output": answer(i, r["answer"])}) + "\n"
                                for i, r in enumerate(records)), encoding="utf-8")
        entries.append(f'[[input]]\npath = "{path.name}"\nmodel = "{model}"\nrung = "R4"\nharness = "native"\n')
    manifest = tmp_path / "m.toml"
    manifest.write_text(f'[study]\nbenchmark = "{(root / "cons").as_posix()}"\nr1 = "1"\n\n' + "\n".join(entries),
                        encoding="utf-8")
    boot = BootstrapSettings(n_boot=200)
    lad, table, m = run_ladder(manifest=manifest, bootstrap=boot)
    d = ladder_diagnostics(lad, table, m, bootstrap=boot)
    s = d.adherence.set_index("model")
    assert (s.loc["right-substance", "lenient_correct"], s.loc["right-substance", "ISR"]) == (8, 0.0)
    assert (s.loc["right-form", "lenient_correct"], s.loc["right-form", "ISR"]) == (0, 1.0)
    assert s.loc["mixed", "phi"] == pytest.approx(0.5)
    assert d.settings.constraints == "explicit (per item)"
    res = CliRunner().invoke(app, ["ladder", "--manifest", str(manifest), "--out", str(tmp_path / "out"),
                                   "--n-boot", "200"])
    assert res.exit_code == 0, res.output
    adh = (tmp_path / "out" / "adherence.csv").read_text(encoding="utf-8")
    assert "right-substance" in adh and "explicit" in adh


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=400), st.binary(max_size=400)),
       st.lists(st.sampled_from(["format", "letter", "structure", "case"]), unique=True))
def test_verify_never_raises_and_answers_every_constraint(raw, names):
    cons = plan(names, CHOICE).applied
    checks = verify(raw, cons)
    assert [c.name for c in checks] == [c.name for c in cons]
    assert all(c.ok or c.reason for c in checks)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SYSTEMS), st.text(alphabet="abcdefghij ,.;", min_size=1, max_size=80).filter(str.strip))
def test_a_response_built_to_the_constraints_complies(label, reasoning):
    # twin from the definition: reasoning line(s), then one Answer: line holding the JSON object, lowercase
    cons = plan(["format", "structure", "case"], CHOICE).applied
    text = f"{reasoning.strip()}\nAnswer: {json.dumps({'answer': label})}"
    assert all(c.ok for c in verify(text, cons))
    assert crystal_system_parser().parse(text).answer == label


def test_transformation_and_molecule_exports_carry_constraints(tmp_path):
    from viewcert.benchmark.molecule_export import MoleculeExportSettings, build_molecule_benchmark
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

    build_task_benchmark("builtin:molecules", tmp_path / "rot",
                         TaskExportSettings.from_options(task="rotation", width=64, height=48, supersample=1,
                                            constraints=("structure", "letter")), limit=1)
    (rec,) = _jsonl(tmp_path / "rot" / "benchmark.jsonl")
    assert [c["name"] for c in rec["constraints"]] == ["structure"]  # a command answer has no letters
    assert rec["constraints_skipped"] == {"letter": "the answer has no lettered options"}
    assert "question_choices_only" not in rec and rec["answer"].startswith("roll ")
    cert = json.loads((tmp_path / "rot" / "certificate.json").read_text(encoding="utf-8"))
    assert_certificate_consistent(cert)
    assert cert["settings"]["constraints"] == ["letter", "structure"]  # inventory order
    build_molecule_benchmark("builtin:molecules", tmp_path / "pg",
                             MoleculeExportSettings.from_options(size=48, supersample=1, constraints=("letter", "case")),
                             limit=1, certify=False)
    (mol,) = _jsonl(tmp_path / "pg" / "benchmark.jsonl")
    assert [c["name"] for c in mol["constraints"]] == ["letter"]
    assert "conflicts with letter" in mol["constraints_skipped"]["case"]
    assert mol["question_choices_only"].startswith(choices_only_prompt(mol["choices"]))


def test_received_names_are_escaped_in_the_adherence_sections(export, tmp_path):
    """A model name is received text: the report's new sections show it literally (HTML escaped, Markdown
    metacharacters escaped, CSV cells made safe)."""
    from viewcert.attribution.pipeline import ladder_diagnostics, run_ladder
    from viewcert.attribution.report import write_report
    from viewcert.stats import BootstrapSettings

    root, _, _ = export
    records = _jsonl(root / "cons" / "benchmark.jsonl")
    evil = "=cmd<img src=x onerror=alert(1)>[link](http://x)"
    path = tmp_path / "evil.jsonl"
    path.write_text("".join(json.dumps({"item_id": r["id"], "target": r["answer"], "raw_output": r["answer"]}) + "\n"
                            for r in records), encoding="utf-8")
    manifest = tmp_path / "m.toml"
    manifest.write_text(f'[study]\nbenchmark = "{(root / "cons").as_posix()}"\nr1 = "1"\n\n[[input]]\n'
                        f'path = "evil.jsonl"\nmodel = {json.dumps(evil)}\nrung = "no-image"\nharness = "native"\n',
                        encoding="utf-8")
    boot = BootstrapSettings(n_boot=100)
    lad, table, m = run_ladder(manifest=manifest, bootstrap=boot)
    rep = write_report(tmp_path / "out", ladder=lad, table=table,
                       diagnostics=ladder_diagnostics(lad, table, m, bootstrap=boot))
    page = rep.html.read_text(encoding="utf-8")
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    md = rep.markdown.read_text(encoding="utf-8")
    assert "<img" not in md and "[link](" not in md and "\\[link\\](http://x)" in md  # no link can form
    for name in ("rungs", "adherence", "shortcuts"):
        text = (tmp_path / "out" / f"{name}.csv").read_text(encoding="utf-8")
        assert "'=cmd<img" in text and ",=cmd" not in text and not text.startswith("=")  # OWASP: no formula
