"""The offline dry run of an export's HARNESSES.md in Inspect, run as a user would: the commands of its "Dry run"
section's Inspect part copied unedited and run from the export folder as subprocesses (Inspect's own ``inspect eval`` CLI
with the replay model ``viewcert-replay``, then ``viewcert ladder`` on the shipped manifest), with the
Hugging Face hub offline and every HTTP(S) request sent to a closed local port. R4 must equal the accuracy
counted here from the shipped answers and the replay's rule (always A; the first question's command)."""

from __future__ import annotations

import csv
import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.support.harness_roundtrip import (
    crystal_export,
    dry_run_commands,
    offline_env,
    questions,
    zoom_export,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect_ai.*")


def run_dry(folder: Path) -> list[subprocess.CompletedProcess]:
    cmds = dry_run_commands(folder, "Inspect AI")
    assert [c.split()[0] for c in cmds] == ["inspect", "viewcert"]
    done = []
    for c in cmds:
        r = subprocess.run(shlex.split(c), cwd=folder, env=offline_env(), capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, f"{c}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        done.append(r)
    return done


def _r4(folder: Path) -> tuple[int, int]:
    rows = list(csv.DictReader((folder / "ladder-dry-run" / "arms.csv").open()))
    (row,) = [r for r in rows if r["rung"] == "R4"]
    assert row["model"] == "viewcert-replay/dry_run_answers.jsonl" and row["scored"] == "True"
    return int(row["correct"]), int(row["n"])


def _one_log(folder: Path) -> dict:
    """``{sample id: completion}`` of the dry run's image-arm log, read by Inspect's own reader."""
    from inspect_ai.log import read_eval_log

    task = "viewcert_" + questions(folder)[0]["task"].replace("-", "_")

    logs = sorted((folder / "logs" / "dry-run").glob("*.eval"))
    assert len(logs) == 4  # one per arm (R4, R3, no-image, choices-only): the image arm's log is read here
    (path,) = [p for p in logs if read_eval_log(str(p), header_only=True).eval.task == task]
    log = read_eval_log(str(path))
    assert log.status == "success"  # Inspect exits 0 even when samples fail: check the log
    return {s.id: s.output.completion for s in log.samples}


def test_crystal_dry_run_from_harnesses_md(tmp_path):
    folder = crystal_export(tmp_path / "bench", 4)
    qs = questions(folder)
    hand = sum(q["answer_letter"] == "A" for q in qs)  # always A: right where the true option is the first
    _, lad = run_dry(folder)
    assert _r4(folder) == (hand, 4)
    md = " ".join((folder / "HARNESSES.md").read_text().split())
    assert (f"right on {hand} of the 4: the ladder's R4 reads {hand}/4 in each harness below, and so does every "
            "other rung") in md
    rows = list(csv.DictReader((folder / "ladder-dry-run" / "arms.csv").open()))  # every arm, the same answers
    assert {r["rung"]: (int(r["correct"]), int(r["n"])) for r in rows} == {
        r: (hand, 4) for r in ("R4", "R3", "no-image", "choices-only")}
    assert re.search(r"R4 and every rung scored at --threshold 0\.05\b", lad.stdout)
    # the replay answered every sample in Inspect's multiple-choice form, by sample id
    assert _one_log(folder) == {q["id"]: "ANSWER: A" for q in qs}


def test_zoom_dry_run_from_harnesses_md(tmp_path):
    folder = zoom_export(tmp_path / "bench")
    qs = questions(folder)
    hand = sum(q["answer"] == qs[0]["answer"] for q in qs)  # the first question's command to all
    run_dry(folder)
    assert _r4(folder) == (hand, len(qs)) and hand >= 1
    assert _one_log(folder) == {q["id"]: qs[0]["answer"] for q in qs}  # free text: the answer verbatim
    assert json.loads((folder / "dry_run_answers.jsonl").read_text().splitlines()[0])["answer"] == qs[0]["answer"]
