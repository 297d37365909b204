"""The offline dry run of an export's HARNESSES.md in lmms-eval and in VLMEvalKit (run by ``make harness``): the
commands of each harness's part of the "Dry run" section, copied unedited, run one by one in bash from the export
folder inside the harness venv (lmms-eval, VLMEvalKit and viewcert installed together, as ``make harness`` builds
it), with the Hugging Face hub offline and every HTTP(S) request sent to a closed local port. The replay models
(``viewcert_replay``: an lmms-eval entry point; ``viewcert-replay``: a VLMEvalKit ``BaseModel`` added by viewcert's
runner) answer from the shipped ``dry_run_answers.jsonl``; the shipped manifests read the results back through
``viewcert ladder``, whose R4 must equal the accuracy counted here from the shipped answers (crystal system: A to
all, right where the truth is the first option; zoom: the first question's command to all), with the threshold
printed beside it. VLMEvalKit on a free-text export without ``--mode infer`` (its ``run.py`` logs a
``NotImplementedError`` and exits 0) must fail loudly through the runner.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.support.harness_roundtrip import (
    crystal_export,
    dry_run_commands,
    questions,
    zoom_export,
)
from tests.support.harness_venv import LMMS, VLM, offline_env

pytestmark = pytest.mark.harness
needs_lmms = pytest.mark.skipif(LMMS is not None, reason=str(LMMS))
needs_vlm = pytest.mark.skipif(VLM is not None, reason=str(VLM))


def run(cmd: str, folder: Path) -> subprocess.CompletedProcess:
    """One HARNESSES.md command, as a user pastes it into a shell in the export folder."""
    return subprocess.run(["bash", "-c", cmd], cwd=folder, env=offline_env(), capture_output=True, text=True,
                          timeout=1200)


def run_dry(folder: Path, harness: str, first_words: list[str]) -> list[subprocess.CompletedProcess]:
    cmds = dry_run_commands(folder, harness)
    assert [c.split()[0] for c in cmds] == first_words
    done = []
    for c in cmds:
        r = run(c, folder)
        assert r.returncode == 0, f"{c}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        done.append(r)
    return done


def r4(out: Path) -> dict:
    (row,) = [r for r in csv.DictReader((out / "arms.csv").open()) if r["rung"] == "R4"]
    return row


def rungs(out: Path) -> dict:
    """``{rung: correct}`` of the ladder's arms (the dry run gives an item the same answer in every arm)."""
    return {r["rung"]: int(r["correct"]) for r in csv.DictReader((out / "arms.csv").open())}


@pytest.fixture(scope="module")
def crystal(tmp_path_factory):
    folder = crystal_export(tmp_path_factory.mktemp("dry") / "cs", 4)
    qs = questions(folder)
    return folder, qs, sum(q["answer_letter"] == "A" for q in qs)  # always A: right where the truth is first


@pytest.fixture(scope="module")
def zoom(tmp_path_factory):
    folder = zoom_export(tmp_path_factory.mktemp("dry") / "zoom")
    qs = questions(folder)
    return folder, qs, sum(q["answer"] == qs[0]["answer"] for q in qs)  # the first question's command to all


@needs_lmms
@pytest.mark.parametrize("export", ["crystal", "zoom"])
def test_lmms_eval_dry_run_from_harnesses_md(export, request):
    folder, qs, hand = request.getfixturevalue(export)
    _, lad = run_dry(folder, "lmms-eval", ["lmms-eval", "viewcert"])
    row = r4(folder / "ladder-dry-run-lmms-eval")
    assert (int(row["correct"]), int(row["n"]), row["scored"]) == (hand, len(qs), "True")
    assert row["model"] == "viewcert_replay (replay=dry_run_answers.jsonl)"  # from the run's config
    # one lmms-eval run over the four arms' tasks fills every rung
    assert rungs(folder / "ladder-dry-run-lmms-eval") == {r: hand for r in ("R4", "R3", "no-image", "choices-only")}
    assert re.search(r"R4 and every rung scored at --threshold 0\.05\b", lad.stdout)
    # lmms-eval's own score agrees, and the model answered each document by its id
    (res,) = (folder / "results" / "dry-run").rglob("*_results.json")
    name = "viewcert_" + qs[0]["task"].replace("-", "_")
    assert json.loads(res.read_text())["results"][name]["exact_match,none"] == pytest.approx(hand / len(qs))
    (samples,) = (folder / "results" / "dry-run").rglob(f"*_samples_{name}.jsonl")
    answer = "A" if export == "crystal" else qs[0]["answer"]
    got = {json.loads(x)["exact_match"]["id"]: json.loads(x)["filtered_resps"] for x in samples.read_text().splitlines()}
    assert got == {q["id"]: answer for q in qs}  # the replayed answer, by item id


@needs_vlm
@pytest.mark.parametrize("export", ["crystal", "zoom"])
def test_vlmevalkit_dry_run_from_harnesses_md(export, request):
    folder, qs, hand = request.getfixturevalue(export)
    copies = ["cp"] * (4 if export == "crystal" else 1)  # a free-text export: the image arm alone in VLMEvalKit
    *_, lad = run_dry(folder, "VLMEvalKit", ["mkdir", *copies, "LMUData=vlmevalkit", "viewcert"])
    row = r4(folder / "ladder-dry-run-vlmevalkit")
    assert (int(row["correct"]), int(row["n"]), row["scored"]) == (hand, len(qs), "True")
    assert row["model"] == "viewcert-replay"  # the folder VLMEvalKit names after the model
    want = ("R4", "R3", "no-image", "choices-only") if export == "crystal" else ("R4",)
    assert rungs(folder / "ladder-dry-run-vlmevalkit") == {r: hand for r in want}
    assert re.search(r"R4 and every rung scored at --threshold 0\.05\b", lad.stdout)
    camel = "ViewcertCrystalSystem" if export == "crystal" else "ViewcertZoom"
    pred = pd.read_excel(folder / "vlmevalkit" / "dry-run" / "viewcert-replay" / f"viewcert-replay_{camel}.xlsx")
    answer = "A" if export == "crystal" else qs[0]["answer"]
    assert dict(zip(pred["id"], pred["prediction"], strict=True)) == {q["id"]: answer for q in qs}
    if export == "crystal":  # VLMEvalKit's own exact-matching score agrees
        (acc,) = (folder / "vlmevalkit" / "dry-run" / "viewcert-replay").glob(f"viewcert-replay_{camel}_*acc*.csv")
        assert pd.read_csv(acc).loc[0, "Overall"] == pytest.approx(hand / len(qs))


@needs_vlm
def test_vlmevalkit_free_text_without_infer_mode_fails_loudly(zoom):
    """run.py alone logs CustomVQADataset's NotImplementedError and exits 0; the runner exits 1 naming it."""
    folder, _, _ = zoom
    (cmd,) = [c for c in dry_run_commands(folder, "VLMEvalKit") if c.startswith("LMUData=")]
    assert " --mode infer " in cmd
    run("mkdir -p vlmevalkit && cp benchmark.tsv vlmevalkit/ViewcertZoom.tsv", folder)
    r = run(cmd.replace(" --mode infer ", " ").replace("vlmevalkit/dry-run", "vlmevalkit/no-infer"), folder)
    assert r.returncode == 1
    (line,) = [x for x in r.stderr.splitlines() if x.startswith("viewcert: error:")]
    assert "NotImplementedError (Model viewcert-replay x Dataset ViewcertZoom combination failed" in line
    assert line.endswith("run it with --mode infer)")


@needs_vlm
def test_vlmevalkit_runner_bad_replay_is_one_line(crystal):
    folder, _, _ = crystal
    r = run("python -m viewcert.harness.vlmevalkit_replay --replay 'no such\x1b.jsonl' --data ViewcertCrystalSystem "
            "--model viewcert-replay --work-dir vlmevalkit/bad", folder)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [f"viewcert: error: file {folder}/no such\\x1b.jsonl: replay answers not "
                                             "found (a JSONL file, or a rule such as always-A)"]
