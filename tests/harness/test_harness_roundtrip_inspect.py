"""Round trip through the real Inspect AI (issue 20): export a benchmark, run Inspect's ``eval()`` on the shipped
``inspect_task.py`` UNMODIFIED with ``mockllm/model`` and stub answers chosen here (some right, some wrong, one
unparseable), read the real ``.eval`` log back with the ladder and compare with (a) the accuracy derived by hand
from the stub's answers and the shipped answers, and (b) the accuracy Inspect itself reports.

Inspect is a test dependency (``inspect-ai`` in the ``test`` extra); nothing is installed at test time.
Workaround recorded in docs/harnesses.md: ``mockllm`` counts tokens with a tiktoken encoding it downloads on
first use unless the output carries ``usage``, so every stub output is given a ``ModelUsage``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.harness_roundtrip import (
    crystal_export,
    ladder_manifest,
    questions,
    run_inspect,
    zoom_export,
)
from viewcert.attribution.pipeline import run_ladder
from viewcert.cli import app
from viewcert.formats.records import sealed
from viewcert.stats import BootstrapSettings

runner = CliRunner()
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect_ai.*")  # its own retry settings


@pytest.fixture(scope="module")
def crystal(tmp_path_factory):
    """Four built-in prototypes, the stub's answers and Inspect's log."""
    tmp = tmp_path_factory.mktemp("cs")
    folder = tmp / "bench"
    crystal_export(folder, 4)
    qs = questions(folder)
    assert [q["id"] for q in qs] == ["q0000", "q0001", "q0002", "q0003"]
    wrong = "B" if qs[1]["answer_letter"] != "B" else "C"
    # right (letter), wrong (letter), right (letter after prose), unparseable
    answers = [f"ANSWER: {qs[0]['answer_letter']}", f"ANSWER: {wrong}",
               f"The lattice looks like this.\nANSWER: {qs[2]['answer_letter']}", "I have no idea."]
    log = run_inspect(folder, answers, tmp / "logs")
    return tmp, folder, qs, answers, log


def test_inspect_ran_the_shipped_crystal_task_with_letter_targets(crystal):
    _, _, qs, answers, log = crystal
    by_id = {s.id: s for s in log.samples}
    assert sorted(by_id) == [q["id"] for q in qs]  # sample ids are the item ids
    for q, a in zip(qs, answers, strict=True):
        s = by_id[q["id"]]
        assert s.target == q["answer_letter"] and s.choices == q["choices"]  # Inspect's MCQ convention
        assert s.output.completion == a  # mockllm answered in sample order
        prompt = s.messages[0].content  # the user turn as sent, after multiple_choice() formatted it
        assert sum(p.type == "image" for p in prompt) == len(q["images"]) == 5
        text = "".join(p.text for p in prompt if p.type == "text")
        # the options appear once: the ones multiple_choice() adds ("A) triclinic"), never in the question
        assert text.count("triclinic") == 1 and "A) triclinic" in text


def test_crystal_ladder_r4_equals_hand_count_and_inspects_accuracy(crystal):
    tmp, folder, qs, _, log = crystal
    hand = 2  # q0000 and q0002 name the right letter; q0001 the wrong one; q0003 no letter
    inspect_acc = log.results.scores[0].metrics["accuracy"].value
    assert inspect_acc == pytest.approx(hand / 4)
    lad, table, _ = run_ladder(manifest=ladder_manifest(tmp / "m.toml", folder, Path(log.location)),
                               bootstrap=BootstrapSettings(n_boot=200), threshold=0.5)
    arm = lad.arms.set_index(["model", "rung"]).loc[("mockllm/model", "R4")]
    assert (arm["correct"], arm["n"]) == (hand, 4)
    assert arm["accuracy"] == pytest.approx(inspect_acc)
    f = table.frame.set_index("item_id")
    assert f.loc["q0000", "target"] == qs[0]["answer"]  # the letter mapped through the shipped choices
    assert f.loc["q0003", "parse_status"] == "unparseable"
    agree = lad.harness_agreement.iloc[0]
    assert (agree["harness_correct"], agree["disagreements"]) == (hand, 0)
    # R1: the export's certificate (keyed by the input's ids), matched through ids.csv with no option
    cert = json.loads((folder / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert lad.ceilings[0].correct == sum(bool(it["correct"]) for it in cert["items"])
    assert lad.settings.chance == "1/7"


@pytest.fixture(scope="module")
def zoom(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("zoom")
    folder = tmp / "bench"
    zoom_export(folder)
    qs = questions(folder)
    assert len(qs) == 4 and all(q["answer_format"] == "command" for q in qs)
    d = [int(q["answer"].split()[-1]) for q in qs]
    off = d[1] - 3 if d[1] - 3 >= 40 else d[1] + 3
    far = 40 if d[3] >= 50 else 60
    answers = [f"move z {d[0]}", f"move z {off}", "I cannot tell from these images.", f"Answer: move z {far}"]
    log = run_inspect(folder, answers, tmp / "logs")
    return tmp, folder, qs, answers, d, log


def test_zoom_ladder_misi_partial_credit_beside_the_ceiling(zoom):
    tmp, folder, qs, _, d, log = zoom
    # by hand: MiSI credit max(0, 1 − |d̂ − d| / 10) (zoom: half of the 40…60 Å range); exact-match right once
    far = 40 if d[3] >= 50 else 60
    credit = [1.0, 1.0 - 3 / 10, 0.0, max(0.0, 1.0 - abs(far - d[3]) / 10)]
    inspect_acc = log.results.scores[0].metrics["accuracy"].value
    assert inspect_acc == pytest.approx(1 / 4)  # match(): only the first completion ends with its target
    lad, _, _ = run_ladder(manifest=ladder_manifest(tmp / "m.toml", folder, Path(log.location), task="zoom"),
                           bootstrap=BootstrapSettings(n_boot=200), threshold=0.5)
    arm = lad.arms.iloc[0]
    assert (arm["correct"], arm["n"]) == (1, 4) and arm["accuracy"] == pytest.approx(inspect_acc)
    row = lad.task_scores.iloc[0]
    assert row["misi_credit"] == pytest.approx(sum(credit) / 4, abs=1e-12)
    cert = json.loads((folder / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert row["certified_partial_ceiling"] == pytest.approx(sum(it["partial_ceiling"] for it in cert["items"]) / 4)
    assert row["certified_exact_ceiling"] == pytest.approx(sum(1 / it["n_consistent"] for it in cert["items"]) / 4)
    assert float(lad.ceilings[0].value) == pytest.approx(row["certified_exact_ceiling"])
    assert lad.settings.chance == "1/21"  # the 21 answers move z 40 … 60


def test_ladder_cli_prints_misi_and_writes_tables(zoom):
    tmp, folder, _, _, _, log = zoom
    m = ladder_manifest(tmp / "cli.toml", folder, Path(log.location))  # no task: the export's own
    r = runner.invoke(app, ["ladder", "--manifest", str(m), "--out", str(tmp / "lad"), "--n-boot", "100"])
    assert r.exit_code == 0, r.output
    assert "MiSI partial credit" in r.output
    assert (tmp / "lad" / "task_scores.csv").is_file() and (tmp / "lad" / "harness_agreement.csv").is_file()


# ---------------------------------------------------------------------- hostile result files
def _one_line_error(r) -> str:
    assert r.exit_code == 2, r.output
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("viewcert: error: "), r.output
    assert "Traceback" not in r.output
    return lines[0]


def test_truncated_log_is_one_line_exit_2(crystal, tmp_path):
    _, folder, _, _, log = crystal
    data = Path(log.location).read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(data[: len(data) // 2])
    r = runner.invoke(app, ["ladder", "--manifest", str(ladder_manifest(tmp_path / "m.toml", folder, cut)),
                            "--out", str(tmp_path / "o")])
    assert "cut.eval" in _one_line_error(r)


def _native(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    path.write_text("model,item_id,target,raw_output\n" + "".join(f"stub,{a},{b},{c}\n" for a, b, c in rows))
    return path


def test_ids_missing_from_the_export_are_listed_with_their_count(crystal, tmp_path):
    _, folder, _, _, _ = crystal
    f = _native(tmp_path / "r.csv", [("q0000", "A", "A"), ("q0098", "A", "A"), ("q0099", "B", "B")])
    m = ladder_manifest(tmp_path / "m.toml", folder, f)
    line = _one_line_error(runner.invoke(app, ["ladder", "--manifest", str(m), "--out", str(tmp_path / "o")]))
    assert "2 item id(s) are not in the item list: 'q0098', 'q0099'" in line


def test_ids_missing_from_the_certificate_are_listed_with_their_count(crystal, tmp_path):
    import shutil

    _, folder, qs, _, log = crystal
    copy = tmp_path / "bench"
    shutil.copytree(folder, copy)
    cert = json.loads((copy / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    gone = [it["id"] for it in cert["items"][:2]]
    cert["items"] = cert["items"][2:]
    cert["summary"]["n"] -= 2
    cert["summary"]["correct"] = sum(bool(it["correct"]) for it in cert["items"])
    (copy / "certificate.json").write_text(json.dumps(sealed(cert)))  # resealed: the reader checks the digest first
    ids = {src: qid for _, qid, src in (x.split(",") for x in (copy / "ids.csv").read_text().splitlines()[1:])}
    m = ladder_manifest(tmp_path / "m.toml", copy, Path(log.location))
    line = _one_line_error(runner.invoke(app, ["ladder", "--manifest", str(m), "--out", str(tmp_path / "o")]))
    assert "2 item(s) of the results are not in the certificate" in line
    assert all(repr(ids[g]) in line for g in gone)


def test_target_outside_the_shipped_choices_is_one_line(crystal, tmp_path):
    _, folder, _, _, _ = crystal
    f = _native(tmp_path / "r.csv", [("q0000", "H", "H")])  # seven choices: A…G
    m = ladder_manifest(tmp_path / "m.toml", folder, f)
    line = _one_line_error(runner.invoke(app, ["ladder", "--manifest", str(m), "--out", str(tmp_path / "o")]))
    assert "target 'H' is not one of the options A, B, C, D, E, F, G" in line


def test_inspect_letters_read_through_the_logs_own_choices_without_the_export(crystal):
    """With no export at hand, the choices Inspect logged with each sample map its letter target."""
    from viewcert.attribution.readers.inspect_ai import read_inspect

    _, _, qs, _, log = crystal
    f = read_inspect(Path(log.location), rung="R4").frame.set_index("item_id")
    assert [f.loc[q["id"], "target"] for q in qs] == [q["answer"] for q in qs]
    assert f.loc["q0000", "parsed_answer"] == qs[0]["answer"] and f.loc["q0001", "score"] == 0.0
