"""The dry-run path and the ladder with hostile or early input (issue 58, class 6):

- a replay file with lines for items the export does not have: those lines are never asked for, the dry run runs,
  and the replay counts them (``Replay.ignored``, one escaped line);
- replayed responses holding terminal control sequences and ``<script>``: the Inspect dry run and the ladder run, the
  response is read as it shows (``sanitize.response_text``: an answer in colour codes or after a title sequence is
  scored) and nothing reaches the console or the report unescaped;
- the ladder read before its harness ran: the error says which result files it looked for ("no results file
  matched PATTERN");
- ``ladder --study-dir`` on a study folder holding the predictions without ``data/e3``: scored from the predictions,
  as docs/formats.md says (the item list is used "when present"); before, a refusal naming eval.jsonl.

Each fails on the main branch before issue 58 (the hostile responses: answers wrapped in colour codes were
unparseable, so the arms went unscored)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.export_fixtures import CHFCLBR_XYZ, SMALL
from tests.support.harness_roundtrip import crystal_export, offline_env, questions
from tests.support.trust_probe import one_error, run
from viewcert.harness.replay import load_replay

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect_ai.*")

HOSTILE = "\x1b]0;pwned\x07\x1b[31m<script>alert(1)</script> \x1b[1mmove\x1b[0m z 49"


@pytest.fixture
def export(tmp_path) -> Path:
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

    (tmp_path / "chfclbr.xyz").write_text(CHFCLBR_XYZ)
    build_task_benchmark(tmp_path / "chfclbr.xyz", tmp_path / "export",
                         TaskExportSettings.from_options(task="zoom", seed=1, **SMALL))
    return tmp_path / "export"


def test_replay_lines_for_items_the_export_lacks_are_ignored_and_counted(export):
    (export / "dry_run_answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (
        {"id": "q0000", "answer": "move z 49"}, {"id": "q9999", "answer": "B"}, {"id": "zz\x1b[2J", "answer": "C"})))
    replay = load_replay("dry_run_answers.jsonl", export)
    assert replay.answer("q0000") == ("move z 49", False)
    assert replay.ignored == ("q9999", "zz\x1b[2J")
    note = replay.note()
    assert note.startswith("viewcert-replay: 2 answer line(s)") and "\x1b" not in note and "\\x1b[2J" in note


def test_hostile_replayed_responses_are_scored_and_neutralised(export, monkeypatch):
    """An Inspect dry run whose replayed response holds an OSC title sequence, a colour and a script tag, plus a
    line for an item the export lacks: every arm runs, the ladder scores the response's answer (the replay's text
    is the zoom's answer in bold, ``move z 49``: 1/1 in every rung) and writes no raw control byte or script tag into
    its console lines or its report (before: the bold command was unparseable)."""
    from inspect_ai import eval as inspect_eval

    for k, v in offline_env().items():
        if k not in ("PATH", "PYTHONPATH"):
            monkeypatch.setenv(k, v)
    # a file of its own name: Inspect keeps one model per name in a process, and other tests replay
    # dry_run_answers.jsonl
    (export / "hostile_answers.jsonl").write_text(
        json.dumps({"id": "q0000", "response": HOSTILE}) + "\n" + json.dumps({"id": "q0404", "answer": "A"}) + "\n")
    monkeypatch.chdir(export)
    logs = inspect_eval("inspect_task.py", model="viewcert-replay/hostile_answers.jsonl", log_dir="logs/dry-run",
                        display="none")
    assert logs and all(log.status == "success" for log in logs)
    code, out, _ = run(["ladder", str(export), "--r1", "1", "--n-boot", "200"])
    assert code == 0, out
    assert _correct(export / "ladder") == {"R4": "1", "R3": "1", "no-image": "1", "choices-only": "1"}
    assert "\x1b" not in out and "\x07" not in out
    html = (export / "ladder" / "report.html").read_text()
    assert "<script>alert" not in html and "\x1b" not in html


def _correct(ladder: Path) -> dict[str, str]:
    """{rung: correct} of the ladder's arms.csv."""
    rows = (ladder / "arms.csv").read_text().splitlines()
    header = rows[0].split(",")
    return {r.split(",")[header.index("rung")]: r.split(",")[header.index("correct")] for r in rows[1:]}


def test_crystal_answers_in_colour_codes_are_scored_as_they_show(tmp_path, monkeypatch):
    """A crystal-system export of three prototypes replayed with hostile responses that still say the right answer
    as a terminal shows them: the option letter in bold (``ESC[1m B ESC[0m``), the system's name in 8-bit CSI
    colour codes, ``ANSWER: X`` after a window-title sequence and a script tag. Every arm scores 3 of 3 (the
    answers are the export's own, benchmark.jsonl); the console and the report hold no raw control byte or script
    tag. Before issue 58 the first two were unparseable (``mcubic`` is no word), every arm 1 of 3 and unscored."""
    from inspect_ai import eval as inspect_eval

    for k, v in offline_env().items():
        if k not in ("PATH", "PYTHONPATH"):
            monkeypatch.setenv(k, v)
    export = crystal_export(tmp_path / "export", 3)
    qs = {q["id"]: q for q in questions(export)}
    assert len(qs) == 3
    said = [lambda q: f"\x1b[1m{q['answer_letter']}\x1b[0m",
            lambda q: f"\x9b32m{q['answer']}\x9b0m",
            lambda q: f"\x1b]0;pwned\x07<script>alert(1)</script>\x1b[32mANSWER: {q['answer_letter']}\x1b[0m"]
    (export / "colour_answers.jsonl").write_text("".join(
        json.dumps({"id": i, "response": say(qs[i])}) + "\n" for i, say in zip(sorted(qs), said, strict=True)))
    monkeypatch.chdir(export)
    logs = inspect_eval("inspect_task.py", model="viewcert-replay/colour_answers.jsonl", log_dir="logs/dry-run",
                        display="none")
    assert logs and all(log.status == "success" for log in logs)
    code, out, _ = run(["ladder", str(export), "--r1", "1", "--n-boot", "200"])
    assert code == 0, out
    assert _correct(export / "ladder") == {"R4": "3", "R3": "3", "no-image": "3", "choices-only": "3"}
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    html = (export / "ladder" / "report.html").read_text()
    assert "<script>alert" not in html and "\x1b" not in html and "\x9b" not in html


def test_the_ladder_read_before_its_harness_ran_says_what_it_looked_for(export):
    code, out, _ = run(["ladder", str(export), "--results", str(export / "logs" / "dry-run")])
    err = one_error(out)
    assert code == 2 and f"no results file matched {export / 'logs' / 'dry-run'}/**/*.eval" in err, out
    code, out, _ = run(["ladder", str(export)])
    err = one_error(out)
    assert code == 2 and "no results file matched logs/**/*.eval, results/**/*_samples_*.jsonl" in err, out
    assert str(export) in err and "HARNESSES.md" in err


def test_ladder_study_dir_without_the_item_list_scores_the_predictions(tmp_path):
    """A study folder of prediction files alone (no data/e3): the ladder is built from them, the items the
    predictions name; R4 counts the correct votes by hand: 3 of 4, R3 4 of 4."""
    pred = tmp_path / "study" / "release" / "predictions"
    pred.mkdir(parents=True)
    truth = {"mp-1": "cubic", "mp-2": "hexagonal", "mp-3": "cubic", "mp-4": "triclinic"}
    said = {"frontier": {"mp-1": "cubic", "mp-2": "hexagonal", "mp-3": "tetragonal", "mp-4": "triclinic"},
            "r3coords": dict(truth)}
    for arm, answers in said.items():
        (pred / f"{arm}__org__m__K1.json").write_text(json.dumps({
            "model": "org/m", "arm": arm, "K": 1, "n": 4,
            "predictions": [{"material_id": i, "truth": t, "pred": answers[i], "votes": {answers[i]: 1}}
                            for i, t in truth.items()]}))
    code, out, _ = run(["ladder", "--study-dir", str(tmp_path / "study"), "--r1", "1", "--n-boot", "200",
                        "--out", str(tmp_path / "o")])
    assert code == 0, out
    arms = (tmp_path / "o" / "arms.csv").read_text().splitlines()
    header = arms[0].split(",")
    rows = {r.split(",")[header.index("rung")]: r.split(",") for r in arms[1:]}
    assert rows["R4"][header.index("correct")] == "3" and rows["R3"][header.index("correct")] == "4"
