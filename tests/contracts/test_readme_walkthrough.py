"""The README's "Your own benchmark" walkthrough runs as printed (issue 39, Build 7): its bash block is taken from
README.md and run verbatim, as one shell script, in a folder holding three CIFs written here (NaCl, CsCl, Mg),
with the Inspect replay dry run, the Hugging Face hub offline and every HTTP(S) request sent to a closed port.
No file is edited between the commands.

Expected values, from the structures and the replay's rule (not from viewcert's output): NaCl and CsCl are
cubic, Mg hexagonal, and five or three generic views determine all three (R1 = 3/3); the replay answers A to every
question of every arm, so each rung counts the questions whose answer letter is A, R3 = R4 item by item, and the
perception share (R3 − R4)/(R1 − R4) is 0 in every bootstrap resample: 0.0000 [0.0000, 0.0000]."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.support.harness_roundtrip import offline_env
from tests.support.walkthrough import README, walkthrough, write_cifs

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect_ai.*")


def test_readme_keeps_its_quick_start_and_a_short_walkthrough():
    text = README.read_text()
    assert "make run    # creates .venv" in text and "make test   # installs every extra" in text
    cmds = walkthrough()
    assert len(cmds) <= 10
    assert [c.split()[:2] for c in cmds] == [
        ["viewcert", "certify"], ["viewcert", "design"], ["viewcert", "certify"], ["viewcert", "build-benchmark"],
        ["cd", "mybench"], ["inspect", "eval"], ["viewcert", "ladder"], ["viewcert", "explore"]]
    glossary = text.split("### Glossary", 1)[1].split("\n## ", 1)[0]
    for term in ("**R1**", "**R4**", "**R3**", "**Φ_δ**", "**δ\\***", "**τ**", "**κ**", "**perception share**",
                 "**CSR, ISR, DRFR**", "**no-image**", "**choices-only**"):
        assert term in glossary, term


def test_readme_walkthrough_runs_verbatim(tmp_path):
    systems = write_cifs(tmp_path / "mycifs")
    script = "set -euo pipefail\n" + "\n".join(walkthrough()) + "\n"
    r = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=offline_env(), capture_output=True, text=True,
                       timeout=1200)
    assert r.returncode == 0, f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    # certify: R1 = 3/3 under the default views and under the designed ones, truth = each CIF's own symmetry
    for cert in ("mycert", "mycert3"):
        summary = (tmp_path / cert / "summary.txt").read_text()
        assert "truth = the symmetry of the input itself" in summary and "): 3/3 = 1.0000" in summary, cert
        assert "by crystal system: hexagonal 1/1, cubic 2/2" in summary and "δ* (uniqueness margin, Å)" in summary
    bench = tmp_path / "mybench"
    qs = [json.loads(x) for x in (bench / "benchmark.jsonl").read_text().splitlines()]
    assert sorted(q["answer"] for q in qs) == sorted(systems.values())
    hand = sum(q["answer_letter"] == "A" for q in qs)  # the replay answers A everywhere
    assert hand < 3  # so R1 − R4 > 0 and the share is defined
    # the ladder report: the four rungs, each with the replay's count, and the share with its interval
    counts = next(line for line in r.stdout.splitlines() if "┃ model" in line and "R4" in line)
    assert {c.strip() for c in counts.strip("┃ ").split("┃")} == {"model", "choices-only", "no-image", "R4", "R3"}
    row = next(line for line in r.stdout.splitlines() if line.startswith("│ viewcert-replay/dry_run_answers.jsonl"))
    assert [c.strip() for c in row.strip("│ ").split("│")][1:] == [str(hand)] * 4
    assert re.search(r"│ " + str(hand) + r"\s+│ " + str(hand) + r"\s+│ 0\.0000 \[0\.0000, 0\.0000\] │", r.stdout)
    assert "perception share (R3 - R4)/(R1 - R4), R1 = 3/3 (certificate)" in r.stdout
    assert (bench / "ladder" / "report.html").is_file() and (bench / "explore" / "index.html").is_file()
    assert (tmp_path / "mydesign" / "protocol.toml").is_file()


def test_the_glossary_names_every_status():
    """Issue 57, item 10: the ladder prints "hard 15, clean 2"; every status it can give an item, and every
    outcome a certificate gives one, is a glossary entry."""
    from viewcert.attribution.items import STATUSES

    glossary = README.read_text().split("### Glossary", 1)[1].split("\n## ", 1)[0]
    for status in (*STATUSES, "correct", "incorrect", "error"):
        assert f"**{status}**" in glossary, status
