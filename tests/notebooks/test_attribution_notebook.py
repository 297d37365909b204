"""Execute notebooks/02_attribution.ipynb with nbclient (kernel python3 = this interpreter's ipykernel).
With the study data it builds the report and shows every arm (checked here against docs/reference.md); without it, it must still run
to the end and say it skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.notebook_runner import run_notebook

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "02_attribution.ipynb"
STUDY = REPO.parent / "shared/data/render-ceiling"


def _run(monkeypatch, study: Path, out: Path) -> str:
    monkeypatch.setenv("VIEWCERT_STUDY_DIR", str(study))
    monkeypatch.setenv("VIEWCERT_REPORT_DIR", str(out))
    monkeypatch.setenv("VIEWCERT_N_BOOT", "1000")
    return run_notebook(NOTEBOOK.name)


def test_notebook_skips_cleanly_without_data(monkeypatch, tmp_path):
    text = _run(monkeypatch, tmp_path / "no-study-here", tmp_path / "out")
    assert "ABSENT: skipping" in text
    assert not (tmp_path / "out").exists()


@pytest.mark.shared_data
@pytest.mark.skipif(not (STUDY / "release" / "predictions").is_dir(), reason=f"study data not found at {STUDY}")
def test_notebook_builds_the_study_report(monkeypatch, tmp_path):
    text = _run(monkeypatch, STUDY, tmp_path / "out")
    # the notebook shows the arms; every scored count of docs/reference.md's ladder table (its one copy lives in
    # test_attribution_study) appears on its model's line
    from tests.support.study import REFERENCE

    lines = text.splitlines()
    for model, counts in REFERENCE.items():
        for rung, want in zip(("R4", "R3", "no-image"), counts, strict=True):
            if want is not None:
                assert any(line.split()[:3] == [model, rung, str(want)] for line in lines), (model, rung, want)
    assert (tmp_path / "out" / "report.html").is_file()
    assert (tmp_path / "out" / "extraction_recall.png").is_file()
    # the adherence and shortcut section (issue 21): identical prompts -> the largest class share, 30 of 210
    assert "text ceiling: 30/210 = 1/7" in text
    assert "adherence 0/210 items adherent" in text  # gpt-4.1-mini's no-image arm, beside its unscored rung
    assert "per-item shortcut test: 0 significant (model, item) pairs over 10 no-image arms" in text
    # the deficit account (issue 27): one sentence per decomposed model, the stacked bars from R4 to R1;
    # perception (179 − 129)/210 from docs/reference.md, shortcut −4/105 a regression pin
    assert (tmp_path / "out" / "deficit_decomposition.png").is_file()
    # grok-4.5: R4 129, R3 179 -> perception 50/210 = 0.2381; shortcut −8/210 (the pin); reasoning
    # 31/210 + 8/210 = 39/210 = 0.1857; the negative shortcut said as points gained back, never "loses -0.0381"
    assert ("x-ai/grok-4.5 loses 0.2381 to perception and 0.1857 to reasoning and gains back 0.0381 on the shortcut "
            "term (negative, −0.0381: without the image it earns less of R4's credit than the text alone gives away), "
            "out of R1 − R4 = 0.3857") in text
    assert "loses -" not in text
