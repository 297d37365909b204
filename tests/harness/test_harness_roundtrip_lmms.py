"""Round trip through the real lmms-eval (issue 20; run by ``make harness``): export a crystal-system and a zoom
benchmark, run lmms-eval's own CLI on the shipped task folder UNMODIFIED with its ``dummy`` model (one fixed
response for every question: the stub), read the real ``--log_samples`` file back with the ladder (no id
option, no id map) and compare with the accuracy derived by hand from the stub's response and the shipped
answers, and with the accuracy lmms-eval itself reports.

lmms-eval lives in its own venv (it pins torch and, at 0.7.3, needs ``filelock<4``): ``VIEWCERT_HARNESS_PYTHON``
names its interpreter (``make harness`` sets it); unset, or without lmms-eval there, the tests skip.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.harness_roundtrip import (
    HARNESS_PY,
    crystal_export,
    harness_import_error,
    ladder_manifest,
    questions,
    zoom_export,
)
from viewcert.attribution.pipeline import run_ladder
from viewcert.stats import BootstrapSettings

LMMS = harness_import_error("lmms_eval")
pytestmark = [pytest.mark.harness, pytest.mark.skipif(LMMS is not None, reason=str(LMMS))]


def _run_lmms(folder: Path, task: str, response: str) -> tuple[Path, dict]:
    """lmms-eval's CLI in the export folder, as HARNESSES.md says; (samples file, results JSON)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "disabled"}
    name = "viewcert_" + task.replace("-", "_")
    r = subprocess.run([str(HARNESS_PY), "-m", "lmms_eval", "--model", "dummy", "--model_args",
                        f"response={response}", "--tasks", name, "--include_path", "lmms_eval", "--log_samples",
                        "--output_path", "results"], cwd=folder, env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    (samples,) = sorted((folder / "results").rglob(f"*_samples_{name}.jsonl"))
    (results,) = sorted((folder / "results").rglob("*_results.json"))
    return samples, json.loads(results.read_text())["results"][name]


def test_lmms_eval_crystal_system_letter_targets(tmp_path):
    folder = tmp_path / "cs"
    crystal_export(folder, 7)
    qs = questions(folder)
    samples, reported = _run_lmms(folder, "crystal-system", "A")
    hand = sum(q["answer_letter"] == "A" for q in qs)  # the dummy answers A (triclinic) to every question
    assert reported["exact_match,none"] == pytest.approx(hand / len(qs))
    lad, table, _ = run_ladder(manifest=ladder_manifest(tmp_path / "m.toml", folder, samples),
                               bootstrap=BootstrapSettings(n_boot=100))
    arm = lad.arms.iloc[0]
    assert (arm["correct"], arm["n"]) == (hand, len(qs))
    assert arm["accuracy"] == pytest.approx(reported["exact_match,none"])
    assert arm["model"] == "dummy (response=A)"  # lmms-eval leaves model_name empty for dummy: its config
    assert sorted(table.frame["item_id"]) == [q["id"] for q in qs]  # doc_id mapped through ids.csv
    assert set(table.frame["target"]) == {q["answer"] for q in qs}  # letter targets through the choices
    assert lad.harness_agreement.iloc[0]["disagreements"] == 0


def test_lmms_eval_zoom_misi_partial_credit(tmp_path):
    folder = tmp_path / "zoom"
    zoom_export(folder)
    qs = questions(folder)
    d = [int(q["answer"].split()[-1]) for q in qs]
    stub = d[-1]  # the dummy's one response: the last question's answer (right there, partly right elsewhere)
    samples, reported = _run_lmms(folder, "zoom", f"move z {stub}")
    hand = sum(x == stub for x in d)
    assert hand >= 1
    assert reported["exact_match,none"] == pytest.approx(hand / len(qs))
    lad, _, _ = run_ladder(manifest=ladder_manifest(tmp_path / "m.toml", folder, samples),
                           bootstrap=BootstrapSettings(n_boot=100))
    assert lad.arms.iloc[0]["correct"] == hand
    # MiSI: max(0, 1 − |stub − d| / 10) per item (zoom: half the 40…60 Å range)
    credit = sum(max(0.0, 1 - abs(stub - x) / 10) for x in d) / len(d)
    assert lad.task_scores.iloc[0]["misi_credit"] == pytest.approx(credit, abs=1e-12)
    cert = json.loads((folder / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    ceiling = sum(it["partial_ceiling"] for it in cert["items"]) / len(cert["items"])
    assert lad.task_scores.iloc[0]["certified_partial_ceiling"] == pytest.approx(ceiling)
