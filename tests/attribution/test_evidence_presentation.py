"""Issue 56, item 1 and 5: what the report says about its own figures, on hand-built studies. Each concern of the
independent check has a test here that fails on the main before it: a planted answerless arm prints ``unscored``
and no figure; a study with ties prints the tie sensitivity line with the range worked by hand; an image-free K = 3
arm whose smallest attainable p exceeds BH's first threshold prints the low-power statement; the majority-vote
accuracy has one interval, the same in repeated_samples.csv, arms.csv and the page; a K = 3 study prints the
K-too-small warning; every missed item is typed by the documented rule and the types add up."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from viewcert.attribution.diagnostics import diagnose
from viewcert.attribution.evidence import item_evidence
from viewcert.attribution.ladder import Ceiling, build_ladder, ceiling_from_number
from viewcert.attribution.report import write_report
from viewcert.attribution.samples import k_too_small
from viewcert.attribution.table import ResultTable, check_consistency, make_frame
from viewcert.stats import BootstrapSettings, clopper_pearson_interval

BOOT = BootstrapSettings(n_boot=200)


def _rows(model, rung, item, answers, target, statuses=None):
    """One row per sample: an answer, or None with its status (unparseable, api_error, refused)."""
    out = []
    for k, a in enumerate(answers):
        status = "ok" if a is not None else (statuses or "unparseable")
        out.append({"run": "r", "model": model, "rung": rung, "item_id": item, "sample_k": k,
                    "raw_output": a or "", "parsed_answer": a, "target": target,
                    "score": float(a == target), "parse_status": status, "category": target,
                    "source_file": f"{model}_{rung}.csv", "harness": "native"})
    return out


def _ladder(rows, ceiling=None, **kw):
    table = ResultTable(make_frame(rows))
    cov = check_consistency(table)
    c = ceiling if ceiling is not None else ceiling_from_number("1", cov.universe)
    kw.setdefault("bootstrap", BOOT)
    return build_ladder(table, cov, [c], labels=["a", "b", "c"], **kw), table


# ---------------------------------------------------------------------- unscored arms
def _answerless_study():
    """Model m: R4 with answers on 12 items; its no-image arm has no answer at all (every sample unparseable)."""
    rows = []
    for i in range(12):
        t = "abc"[i % 3]
        rows += _rows("m", "R4", f"i{i:02d}", [t, t, "b"] if i < 8 else ["c", "c", "c"], t)
        rows += _rows("m", "no-image", f"i{i:02d}", [None, None, None], t)
    return rows


def test_a_planted_answerless_arm_prints_unscored_and_no_figure(tmp_path):
    lad, table = _ladder(_answerless_study())
    ev = item_evidence(lad, table, bootstrap=BOOT)
    rep = write_report(tmp_path, ladder=lad, table=table, evidence=ev)
    samples = pd.read_csv(rep.csv["repeated_samples"])
    arm = samples[(samples["model"] == "m") & (samples["rung"] == "no-image")]
    assert len(arm) == 1 and arm["point"].isna().all()  # no 0.0000 [0, 0] figure
    assert arm["status"].iloc[0].startswith("unscored: 12/12 items without an answer")
    arms = pd.read_csv(rep.csv["arms"]).set_index("rung")
    assert arms.loc["no-image", "correct"] == 0  # the count is reported, never an interval it has not earned
    assert np.isnan(arms.loc["no-image", "ci_lo"]) and np.isnan(arms.loc["no-image", "ci_hi"])
    md = rep.markdown.read_text(encoding="utf-8")
    row = next(line for line in md.splitlines() if line.startswith("| m | no-image |") and "expected" not in line)
    assert "unscored: 12/12 items without an answer" in row and "0.0000" not in row


# ---------------------------------------------------------------------- ties
def test_a_study_with_ties_prints_the_sensitivity_line(tmp_path):
    """Three models at R4 on 6 items (target a), K = 3. Model x votes (a, b, c) on items 0–2: a three-way tie each,
    right under 'first' (a met first), wrong under 'alphabetical'? no: a is alphabetically first too, so right;
    under 'none' wrong. Model y votes (b, a, c) on items 0–2: right only under 'alphabetical'. Items 3–5 all
    right for x and y. z answers a, a, a everywhere (no tie).
    By hand: x first 6, alphabetical 6, none 3; y first 3, alphabetical 6, none 3; z 6/6/6.
    Spread: x 3/6 = 0.5, y 0.5, z 0; the line says 'moves by up to 0.5000'; ties per arm 0–3.
    Ranking: x vs y: first 6 > 3, alphabetical 6 = 6, none 3 = 3: no strict reversal; y vs z: first 3 < 6,
    alphabetical 6 = 6: none. So no pair changes order."""
    rows = []
    for i in range(6):
        rows += _rows("x", "R4", f"i{i}", ["a", "b", "c"] if i < 3 else ["a"] * 3, "a")
        rows += _rows("y", "R4", f"i{i}", ["b", "a", "c"] if i < 3 else ["a"] * 3, "a")
        rows += _rows("z", "R4", f"i{i}", ["a"] * 3, "a")
    lad, table = _ladder(rows)
    ev = item_evidence(lad, table, bootstrap=BOOT)
    t = ev.ties.arms.set_index("model")
    assert t.loc["x", ["correct_first", "correct_alphabetical", "correct_none"]].tolist() == [6, 6, 3]
    assert t.loc["y", ["correct_first", "correct_alphabetical", "correct_none"]].tolist() == [3, 6, 3]
    assert t["ties"].tolist() == [3, 3, 0]
    rep = write_report(tmp_path, ladder=lad, table=table, evidence=ev)
    md = rep.markdown.read_text(encoding="utf-8")
    assert ("R4: 0–3 tied items per arm; the majority-vote accuracy moves by up to 0.5000 over the tie rules "
            "(first, alphabetical, none; this report uses first); ranking of 3 models") in md
    assert "no pair changes order" in md
    # the tie-free expected accuracy comes first in the accuracy table: x = (3 × 1/3 + 3 × 1)/6 = 2/3
    header = next(line for line in md.splitlines() if line.startswith("| model | rung | expected accuracy"))
    assert header.index("expected accuracy (tie-free)") < header.index("majority vote (tie rule: first)")
    assert "| x | R4 | 0.6667 \\[" in md


def test_no_ties_no_sensitivity_line(tmp_path):
    rows = []
    for i in range(4):
        rows += _rows("x", "R4", f"i{i}", ["a"] * 3, "a") + _rows("y", "R4", f"i{i}", ["b"] * 3, "a")
    lad, table = _ladder(rows)
    ev = item_evidence(lad, table, bootstrap=BOOT)
    assert ev.ties.lines() == []


# ---------------------------------------------------------------------- low power
def test_a_k3_arm_that_cannot_flag_an_item_prints_the_low_power_statement(tmp_path):
    """Ten items (targets a × 5, b × 5), K = 3, no-image arms. Model m answers a and b equally often overall:
    π(a) = π(b) = 1/2, so the smallest attainable p of any item is (1/2)³ = 0.125 > BH's first threshold
    0.05/10 = 0.005: it cannot flag a single item. Model n says 'a' 3 times (item 0, target a) and 'b' 27 times:
    π(a) = 0.1, item 0's p = 0.1³ = 0.001 ≤ 0.005: it can (and does)."""
    rows = []
    for i in range(10):
        t = "a" if i < 5 else "b"
        rows += _rows("m", "no-image", f"i{i}", ["a", "b", "a"] if i % 2 else ["b", "a", "b"], t)
        rows += _rows("n", "no-image", f"i{i}", ["a"] * 3 if i == 0 else ["b"] * 3, t)
        rows += _rows("m", "R4", f"i{i}", [t] * 3, t) + _rows("n", "R4", f"i{i}", [t] * 3, t)
    lad, table = _ladder(rows)
    diag = diagnose(lad, table, bootstrap=BOOT)
    s = diag.shortcuts.set_index("model")
    assert s.loc["m", "smallest_attainable_p"] == pytest.approx(0.125)
    assert s.loc["n", "smallest_attainable_p"] == pytest.approx(0.001)
    assert s.loc["m", "bh_first_threshold"] == pytest.approx(0.005)
    rep = write_report(tmp_path, ladder=lad, table=table, diagnostics=diag)
    md = rep.markdown.read_text(encoding="utf-8")
    low = next(line for line in md.splitlines() if "low power" in line)
    assert "in 1 of 2 image-free arms tested the test cannot flag any single item on its own" in low
    assert "m no-image (smallest attainable p 0.12 &gt; first BH threshold 0.005" in low and "n no-image" not in low
    assert "vision-centric items" not in md  # the old wording, an interval on non-rejections, is gone
    assert "1 of 10 items answered beyond the model's own answer prior" in md


# ---------------------------------------------------------------------- one interval per quantity
def test_majority_vote_accuracy_has_one_interval_across_csv_and_page(tmp_path):
    rows = []
    rng = np.random.default_rng(3)
    for i in range(40):
        t = "abc"[i % 3]
        for model in ("p", "q"):
            ans = [t if rng.random() < (0.7 if model == "p" else 0.4) else "abc"[(i + 1) % 3] for _ in range(3)]
            rows += _rows(model, "R4", f"i{i:02d}", ans, t)
    lad, table = _ladder(rows)
    ev = item_evidence(lad, table, bootstrap=BOOT)
    rep = write_report(tmp_path, ladder=lad, table=table, evidence=ev)
    samples = pd.read_csv(rep.csv["repeated_samples"]).set_index(["model", "metric"])
    arms = pd.read_csv(rep.csv["arms"]).set_index("model")
    html = rep.html.read_text(encoding="utf-8")
    for m in ("p", "q"):
        maj = samples.loc[(m, "majority-vote accuracy")]
        k = int(arms.loc[m, "correct"])
        want = clopper_pearson_interval(k, 40, 0.95)
        assert (maj["lo"], maj["hi"]) == pytest.approx((want.lower, want.upper), abs=1e-12)
        assert (arms.loc[m, "ci_lo"], arms.loc[m, "ci_hi"]) == pytest.approx((want.lower, want.upper), abs=1e-12)
        assert maj["interval"].startswith("exact Clopper-Pearson")
        assert f"{k / 40:.4f} [{want.lower:.4f}, {want.upper:.4f}]" in html
        assert samples.loc[(m, "expected accuracy"), "interval"].startswith("item bootstrap")
    assert "two-level" not in html and "two-level" not in rep.markdown.read_text(encoding="utf-8")
    # the hierarchical model is off unless asked: no hierarchy.csv (test_hierarchy.py writes it when asked)
    assert ev.hierarchy is None and "hierarchy" not in rep.csv


def test_k_too_small_warning_by_its_rule(tmp_path):
    """α^(1/K) < 1/2 ⇔ K < ln 0.05 / ln 0.5 = 4.32: K = 3 and 4 warn, K = 5 does not (0.05^(1/5) = 0.549)."""
    assert "0.368" in k_too_small(3) and k_too_small(4) and not k_too_small(5) and not k_too_small(1)
    lad, table = _ladder(_answerless_study())
    rep = write_report(tmp_path, ladder=lad, table=table, evidence=item_evidence(lad, table, bootstrap=BOOT))
    assert "warning: K = 3 too small for pass^k and consistency" in rep.markdown.read_text(encoding="utf-8")
    status = pd.read_csv(rep.csv["repeated_samples"]).set_index(["rung", "metric", "k"])["status"]
    assert status[("R4", "pass^k", 2)].endswith("K = 3 too small") and status[("R4", "pass@k", 2)] == "ok"


# ---------------------------------------------------------------------- failed items typed
def test_every_missed_item_typed_by_the_rule_and_the_types_add_up(tmp_path):
    """Model m, target a everywhere, K = 3. By the rule of attribution.failure_types:
    i0 R1 fails → not determined; i1 every R4 sample an API error → no response; i2 every R4 sample unparseable →
    format; i3 R4 votes b, no-image votes b, R3 right → shortcut (perception also); i4 R4 c, no-image b, R3 right →
    perception; i5 R4 c, no-image b, R3 wrong → reasoning; i6 R4 right → not a miss. Model w has no R3 arm: its
    miss on i4 → perception or reasoning."""
    r4 = {"i0": ["b"] * 3, "i1": [None] * 3, "i2": [None] * 3, "i3": ["b"] * 3, "i4": ["c"] * 3, "i5": ["c"] * 3,
          "i6": ["a"] * 3}
    rows = []
    for iid, ans in r4.items():
        rows += _rows("m", "R4", iid, ans, "a", statuses="api_error" if iid == "i1" else "unparseable")
        rows += _rows("m", "no-image", iid, ["b"] * 3, "a")
        rows += _rows("m", "R3", iid, ["c"] * 3 if iid == "i5" else ["a"] * 3, "a")
        rows += _rows("w", "R4", iid, ["c"] * 3 if iid == "i4" else ["a"] * 3, "a")
    per_item = np.array([False] + [True] * 6)
    ceiling = Ceiling(Fraction(6, 7), "R1 = 6/7 (test)", "test", 6, 7, per_item)
    lad, table = _ladder(rows, ceiling, threshold=0.99)
    ev = item_evidence(lad, table, bootstrap=BOOT)
    f = ev.failures.set_index(["model", "item_id"])
    assert f.loc[("m", "i0"), "type"] == "not determined by the views"
    assert f.loc[("m", "i1"), "type"] == "no response"
    assert f.loc[("m", "i2"), "type"] == "format"
    assert f.loc[("m", "i3"), "type"] == "shortcut" and f.loc[("m", "i3"), "also"] == "perception"
    assert f.loc[("m", "i4"), "type"] == "perception"
    assert f.loc[("m", "i5"), "type"] == "reasoning"
    assert ("m", "i6") not in f.index
    assert f.loc[("w", "i4"), "type"] == "perception or reasoning" and len(f.loc["w"]) == 1
    shares = ev.failure_shares.set_index("model")
    type_cols = [c for c in shares.columns if c != "missed"]
    for model, arm in (("m", lad.arm_objects[("m", "R4")]), ("w", lad.arm_objects[("w", "R4")])):
        assert shares.loc[model, "missed"] == arm.n_items - arm.correct
        assert shares.loc[model, type_cols].sum() == shares.loc[model, "missed"]
    rep = write_report(tmp_path, ladder=lad, table=table, evidence=ev)
    assert "Every missed item typed" in rep.markdown.read_text(encoding="utf-8")
    assert len(pd.read_csv(rep.csv["failure_types"])) == 7
