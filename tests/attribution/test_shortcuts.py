"""Shortcut rungs (issue 21): the per-item test against the model's own answer prior (exact binomial, BH
across items), the vision-centric fraction, image-free arms against the text ceiling; and on the study's data
the rungs the report shows (gpt-4.1-mini's unscored no-image arm beside its adherence, every other no-image arm
tested against the text ceiling 1/7, the per-item test's count and method)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from viewcert.attribution.shortcuts import (
    METHOD,
    against_text_ceiling,
    item_tests,
    shortcut_summary,
    vision_centric,
)
from viewcert.attribution.table import make_frame

STUDY = Path(__file__).resolve().parents[3] / "shared" / "data" / "render-ceiling"


def _rows(model: str, answers: dict[str, list[str | None]], targets: dict[str, str], rung: str = "no-image"):
    out = []
    for iid, samples in answers.items():
        for k, a in enumerate(samples):
            out.append({"run": "t", "model": model, "rung": rung, "item_id": iid, "sample_k": k, "raw_output": a,
                        "parsed_answer": a, "target": targets[iid], "score": float(a == targets[iid]),
                        "parse_status": "ok" if a else "unparseable", "category": targets[iid],
                        "source_file": "t", "harness": "native", "parse_reason": "" if a else "none"})
    return out


def test_a_models_own_bias_is_not_a_shortcut():
    # a model answering "cubic" to everything: π(cubic) = 1, so the cubic item is no surprise (p = 1)
    targets = {"i1": "cubic", "i2": "triclinic", "i3": "hexagonal"}
    frame = make_frame(_rows("biased", {i: ["cubic"] * 3 for i in targets}, targets))
    t = item_tests(frame, list(targets))
    assert t["p_value"].tolist() == [1.0, 1.0, 1.0]
    assert not t["significant"].any()


def test_per_item_binomial_against_the_prior_hand_worked():
    # 10 items, 3 samples each = 30 answers; the model says "a" 3 times (item i0), "b" 27 times
    # π(a) = 3/30 = 0.1: item i0 (target a, k = 3 of 3): p = 0.1³ = 0.001
    # items i1..i9 (target b, k = 3 of 3): π(b) = 0.9, p = 0.9³ = 0.729
    targets = {"i0": "a", **{f"i{j}": "b" for j in range(1, 10)}}
    answers = {"i0": ["a", "a", "a"], **{f"i{j}": ["b"] * 3 for j in range(1, 10)}}
    t = item_tests(make_frame(_rows("m", answers, targets)), list(targets))
    assert t.loc[0, "p_value"] == pytest.approx(0.001)
    assert t.loc[1, "p_value"] == pytest.approx(0.729)
    # BH over 10 p-values: the smallest 0.001 × 10 / 1 = 0.01; the others all 0.729
    assert t.loc[0, "p_bh"] == pytest.approx(0.01)
    assert t.loc[5, "p_bh"] == pytest.approx(0.729)
    assert t["significant"].tolist() == [True] + [False] * 9
    s = shortcut_summary(t, n_boot=200)
    # excess per item: i0 1 − 0.1 = 0.9; i1..i9 1 − 0.9 = 0.1 → mean (0.9 + 0.9)/10 = 0.18
    assert s.loc[0, "shortcut_share"] == pytest.approx(0.18)
    assert s.loc[0, "significant_items"] == 1 and s.loc[0, "method"] == METHOD
    vc = vision_centric(t, list(targets))
    assert (vc["vision_centric"], vc["n"], vc["shortcut_items"]) == (9, 10, 1)
    # a count of non-rejections gets no interval (issue 56: the test cannot support one)
    assert "ci_lo" not in vc and "ci_hi" not in vc


def test_image_free_arms_against_the_text_ceiling():
    arms = pd.DataFrame([
        {"model": "m1", "rung": "no-image", "correct": 30, "n": 210, "accuracy": 30 / 210, "scored": True,
         "unscored_reason": ""},
        {"model": "m2", "rung": "no-image", "correct": 0, "n": 210, "accuracy": 0.0, "scored": False,
         "unscored_reason": "210/210 items without an answer"},
        {"model": "m1", "rung": "R4", "correct": 100, "n": 210, "accuracy": 100 / 210, "scored": True,
         "unscored_reason": ""},
    ])
    out = against_text_ceiling(arms, 1 / 7, {("m2", "no-image"): "0/210 items adherent"}, {("m2", "no-image"): 0})
    assert out["model"].tolist() == ["m1", "m2"]  # R4 is not an image-free arm
    from scipy.stats import binom

    assert out.loc[0, "p_above_ceiling"] == pytest.approx(binom.sf(29, 210, 1 / 7))  # P(X ≥ 30)
    assert out.loc[1, "status"].startswith("unscored") and out.loc[1, "status"].endswith("no answer to test")
    assert out.loc[1, "adherence"] == "0/210 items adherent"
    assert pd.isna(out.loc[1, "p_above_ceiling"])


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    if not STUDY.is_dir():
        pytest.skip("render-ceiling study data not available at ../shared/data")
    from viewcert.attribution.pipeline import run_ladder, study_diagnostics
    from viewcert.stats import BootstrapSettings

    boot = BootstrapSettings(n_boot=500)
    ladder, table, _ = run_ladder(study_dir=STUDY, bootstrap=boot)
    return ladder, table, study_diagnostics(STUDY, ladder, table, bootstrap=boot)


def test_study_rungs_and_adherence(study):
    _, _, d = study
    assert d.settings.text_ceiling == pytest.approx(1 / 7)
    mini = d.rungs.set_index("model").loc["openai/gpt-4.1-mini"]
    assert mini["no-image"].startswith("unscored") and "adherence 0/210 items adherent" in mini["no-image"]
    free = d.free_vs_ceiling.set_index("model")
    assert free.loc["openai/gpt-4.1-mini", "status"].startswith("unscored")
    assert free.loc["openai/gpt-4.1-mini", "status"].endswith("no answer to test")
    assert pd.isna(free.loc["openai/gpt-4.1-mini", "p_above_ceiling"])
    others = free.drop(index="openai/gpt-4.1-mini")
    # every other no-image arm is tested (the two unscored ones, gemini-2.5-flash and grok-4.5, conservatively)
    assert len(others) == 10 and others["p_above_ceiling"].between(0, 1).all() and others["p_holm"].notna().all()
    assert (others["status"] != "tested").sum() == 2
    # claude-opus-4.8: 35 of 210 against 1/7 (exact one-sided binomial, P(X >= 35) for Bin(210, 1/7))
    from scipy.stats import binom

    assert others.loc["anthropic/claude-opus-4.8", "p_above_ceiling"] == pytest.approx(binom.sf(34, 210, 1 / 7))
    assert (others["p_holm"] > 0.05).all()  # no no-image arm beats what the prompt text alone allows


def test_study_shortcut_test_reports_count_and_method(study):
    _, _, d = study
    assert set(d.shortcuts["rung"]) == {"no-image"}
    assert len(d.shortcuts) == 10  # gpt-4.1-mini's arm has no answer to test
    assert (d.shortcuts["method"] == METHOD).all()
    vc = d.vision_centric
    assert vc["n"] == 210 and vc["vision_centric"] + vc["shortcut_items"] == 210
    # regression pin (the study's K = 3 answers): no (model, item) pair is significant after BH
    assert int(d.shortcuts["significant_items"].sum()) == 0


def test_study_report_shows_every_rung(study, tmp_path):
    from viewcert.attribution.report import write_report

    ladder, table, d = study
    rep = write_report(tmp_path, ladder=ladder, table=table, diagnostics=d)
    md = rep.markdown.read_text(encoding="utf-8")
    assert "Every rung (chance, text ceiling, choices-only, no-image, R4, R3, R1)" in md
    assert "0/210 items adherent" in md
    assert ("per\\-item shortcut test: 0 of 210 items" in md or "per-item shortcut test: 0 of 210 items" in md)
    assert {"rungs", "adherence", "shortcuts", "text_ceiling"} <= set(rep.csv)
    assert "per_model_split" not in rep.csv  # one account of the deficit (issue 27): the old mixed split is gone
    assert "deficit_decomposition" in rep.figures and "deficit_decomposition" in rep.csv
