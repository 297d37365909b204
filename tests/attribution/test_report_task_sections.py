"""The ladder report's task-score and harness-agreement sections (issue 20): MiSI partial credit beside the
certified ceiling and the harness's own per-item scores against viewcert's, read back from report.html,
summary.md and the CSVs, with a hostile model name shown literally. Expected values are worked by hand from
the hand-made export and the stub answers and scores chosen here."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.support.task_report import ANSWERS, STUB, _export
from viewcert.attribution.pipeline import run_ladder
from viewcert.attribution.report import SHOWN_IDS, agreement_table, write_report
from viewcert.stats import BootstrapSettings

BOOT = BootstrapSettings(n_boot=100)
EVIL = "=cmd<img src=x onerror=alert(1)>[link](http://x)|col"
# the harness's own scores: right on items 0 and 1 -> harness 2/4, viewcert 1/4, they disagree on q0000 only
HARNESS = [1.0, 1.0, 0.0, 0.0]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("rep")
    folder = _export(root / "rl")
    res = root / "r.jsonl"
    res.write_text("".join(json.dumps({"model": EVIL, "item_id": k, "target": a, "raw_output": o, "score": s}) + "\n"
                           for k, (a, o, s) in enumerate(zip(ANSWERS, STUB, HARNESS, strict=True))))
    (root / "m.toml").write_text(f'[study]\nbenchmark = "{folder.as_posix()}"\n[[input]]\npath = "{res.as_posix()}"\n'
                                 'rung = "R4"\n')
    lad, table, _ = run_ladder(manifest=root / "m.toml", bootstrap=BOOT, threshold=0.5)
    return write_report(root / "out", ladder=lad, table=table), lad


def test_markdown_has_both_sections_with_the_hand_worked_values(report):
    rep, _ = report
    md = rep.markdown.read_text(encoding="utf-8")
    assert "## Task scores: MiSI partial credit (voted answers) beside the certified ceiling" in md
    assert "## Harness agreement: the harness's own scores vs viewcert's" in md
    task_rows = [ln for ln in md.splitlines() if "| 1/4 |" in ln and "0.8750" in ln]
    assert len(task_rows) == 1 and "| 0.5000 | 0.8750 | 1.0000 |" in task_rows[0]
    (agree,) = [ln for ln in md.splitlines() if "| 1/4 | 2/4 |" in ln]
    assert agree.endswith("| 1 | q0000 |")
    assert "1 (arm, item) disagreement(s)" in md


def test_html_has_both_sections_and_escapes_the_model_name(report):
    rep, _ = report
    page = rep.html.read_text(encoding="utf-8")
    assert "<h2>Task scores: MiSI partial credit (voted answers) beside the certified ceiling</h2>" in page
    assert "<h2>Harness agreement: the harness&#x27;s own scores vs viewcert&#x27;s</h2>" in page
    assert "<td>q0000</td>" in page and "<td>0.5000</td>" in page and "<td>0.8750</td>" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_markdown_shows_the_hostile_name_literally(report):
    rep, _ = report
    md = rep.markdown.read_text(encoding="utf-8")
    assert "<img" not in md and "[link](" not in md and "\\[link\\](http://x)\\|col" in md


def test_csvs_read_back_equal_the_ladder(report):
    rep, lad = report
    scores = pd.read_csv(rep.csv["task_scores"])
    assert scores["misi_credit"].tolist() == pytest.approx([0.5])
    assert scores["certified_partial_ceiling"].tolist() == pytest.approx([0.875])
    agree = pd.read_csv(rep.csv["harness_agreement"])
    assert (agree["viewcert_correct"].tolist(), agree["harness_correct"].tolist()) == ([1], [2])
    assert agree["disagreeing_ids"].tolist() == ["q0000"]
    assert str(agree["model"][0]).startswith("'=cmd")  # no formula cell


def test_a_long_disagreement_list_is_cut_in_the_page():
    ids = " ".join(f"q{k:04d}" for k in range(SHOWN_IDS + 5))
    t = agreement_table(pd.DataFrame([{"model": "m", "rung": "R4", "n": 30, "viewcert_correct": 0,
                                       "harness_correct": 25, "disagreements": 25, "disagreeing_ids": ids}]))
    shown = t["disagreeing ids"][0]
    assert shown.endswith(" …") and len(shown.split()) == SHOWN_IDS + 1
