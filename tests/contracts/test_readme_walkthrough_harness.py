"""The README's "Your own benchmark" walkthrough under ``make harness`` (issue 39, acceptance): its commands as the
README prints them, on the three CIFs of ``test_readme_walkthrough`` (NaCl, CsCl, Mg), run in bash from the folder
holding ``mycifs/`` inside the harness venv (its ``bin`` first on ``PATH``, this checkout's ``src`` first on
``PYTHONPATH``), offline; the dry-run line (Inspect's) replaced by the same dry run in lmms-eval (``make harness``)
or VLMEvalKit (``make harness-vlmevalkit``): that harness's commands of the export's ``HARNESSES.md``, every arm
with viewcert's replay model, copied unedited, its ``viewcert ladder --results`` line left out; then the README's
own ``viewcert ladder .`` (no manifest, no ``--results``: the results are found inside the export) and
``viewcert explore .``.

Expected values, from the structures and the replay's rule (not from viewcert's output): R1 = 3/3 (two cubic, one
hexagonal crystal, determined by the designed views); the replay answers A to every question of every arm, so each
of the four rungs counts the questions whose answer letter is A, and the perception share (R3 − R4)/(R1 − R4) is
0 in every bootstrap resample: 0.0000 [0.0000, 0.0000]."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.harness_roundtrip import ROOT, dry_run_commands
from tests.support.harness_venv import LMMS, VLM, offline_env
from tests.support.walkthrough import walkthrough, write_cifs

pytestmark = [pytest.mark.harness, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
#: harness -> (why it skips, or None; the first word of each of its dry-run commands; the model the ladder names).
#: VLMEvalKit imports in the venv of make harness-vlmevalkit only (ms-vlmeval needs torchvision, left out of
#: make harness's venv), so under make harness its case skips, saying so.
HARNESSES = {
    "lmms-eval": (LMMS, ["lmms-eval"], "viewcert_replay (replay=dry_run_answers.jsonl)"),
    "VLMEvalKit": (VLM, ["mkdir", "cp", "cp", "cp", "cp", "LMUData=vlmevalkit"], "viewcert-replay"),
}


def bash(script: str, folder: Path) -> subprocess.CompletedProcess:
    """``script`` in bash from ``folder``, in the harness venv with this checkout's viewcert, offline."""
    env = {**offline_env(), "PYTHONPATH": str(ROOT / "src")}
    r = subprocess.run(["bash", "-c", "set -euo pipefail\n" + script], cwd=folder, env=env, capture_output=True,
                       text=True, timeout=3600)
    assert r.returncode == 0, f"{script}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.mark.parametrize("harness", list(HARNESSES))
def test_readme_walkthrough_with_a_harness_fills_every_rung(harness, tmp_path):
    skip, first_words, model = HARNESSES[harness]
    if skip is not None:
        pytest.skip(skip)
    write_cifs(tmp_path / "mycifs")
    cmds = walkthrough()
    (dry,) = [k for k, c in enumerate(cmds) if c.startswith("inspect eval ")]
    assert cmds[dry - 1] == "cd mybench" and cmds[dry + 1] == "viewcert ladder ."
    bash("\n".join(cmds[:dry - 1]), tmp_path)  # certify, design, certify, build-benchmark
    bench = tmp_path / "mybench"
    runs = [c for c in dry_run_commands(bench, harness) if not c.startswith("viewcert ladder")]
    assert [c.split()[0] for c in runs] == first_words
    bash("\n".join(runs), bench)
    r = bash("\n".join(cmds[dry + 1:]), bench)  # the README's own: viewcert ladder . and viewcert explore .
    qs = [json.loads(x) for x in (bench / "benchmark.jsonl").read_text().splitlines()]
    hand = sum(q["answer_letter"] == "A" for q in qs)  # the replay answers A everywhere
    assert len(qs) == 3 and hand < 3  # so R1 − R4 > 0 and the share is defined
    counts = next(line for line in r.stdout.splitlines() if "┃ model" in line and "R4" in line)
    assert {c.strip() for c in counts.strip("┃ ").split("┃")} == {"model", "choices-only", "no-image", "R4", "R3"}
    row = next(line for line in r.stdout.splitlines() if line.startswith(f"│ {model}"))
    assert [c.strip() for c in row.strip("│ ").split("│")][1:] == [str(hand)] * 4
    assert re.search(r"│ " + str(hand) + r"\s+│ " + str(hand) + r"\s+│ 0\.0000 \[0\.0000, 0\.0000\] │", r.stdout)
    assert "perception share (R3 - R4)/(R1 - R4), R1 = 3/3 (certificate)" in r.stdout
    assert (bench / "ladder" / "report.html").is_file() and (bench / "explore" / "index.html").is_file()
    if harness == "lmms-eval":  # lmms-eval's own exact-match score of each arm's task agrees
        (res,) = (bench / "results" / "dry-run").rglob("*_results.json")
        scores = json.loads(res.read_text())["results"]
        arms = ("", "_r3", "_no_image", "_choices_only")
        assert {f"viewcert_crystal_system{a}" for a in arms} <= set(scores)
        for a in arms:
            assert scores[f"viewcert_crystal_system{a}"]["exact_match,none"] == pytest.approx(hand / 3), a
