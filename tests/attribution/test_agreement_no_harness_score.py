"""A VLMEvalKit predictions-only file (no ``hit``/``score`` column) has no harness score: its arm's harness
column in ``harness_agreement`` says "no harness score" rather than viewcert's own parse, which would agree
with itself trivially (issue 26); a scored file of the same arm still gets its count."""

from __future__ import annotations

from pathlib import Path

from viewcert.attribution.pipeline import run_ladder
from viewcert.attribution.task_scores import NO_HARNESS_SCORE
from viewcert.stats import BootstrapSettings

H = Path(__file__).resolve().parents[1] / "data" / "harness"


def _manifest(tmp_path: Path, name: str) -> Path:
    m = tmp_path / "m.toml"
    m.write_text(f'[study]\ntask = "crystal_system"\nitems = "{(H / "items.jsonl").as_posix()}"\n'
                 'items_id_field = "material_id"\nitems_target_field = "crystal_system"\nr1 = "1"\n'
                 f'[[input]]\npath = "{(H / "vlmevalkit" / name).as_posix()}"\nharness = "vlmevalkit"\n'
                 'model = "acme/vlm-7b"\nrung = "R4"\nid_column = "material_id"\n')
    return m


def test_predictions_only_file_has_no_harness_score(tmp_path):
    lad, _, _ = run_ladder(manifest=_manifest(tmp_path, "AcmeVLM-7B_E3CrystalSystem.tsv"),
                           bootstrap=BootstrapSettings(n_boot=100), threshold=0.5)
    row = lad.harness_agreement.iloc[0]
    assert row["harness_correct"] == NO_HARNESS_SCORE == "no harness score"
    assert row["disagreements"] == 0 and row["disagreeing_ids"] == ""


def test_a_scored_file_keeps_its_count(tmp_path):
    lad, _, _ = run_ladder(manifest=_manifest(tmp_path, "AcmeVLM-7B_E3CrystalSystem_exact_matching_result.xlsx"),
                           bootstrap=BootstrapSettings(n_boot=100), threshold=0.5)
    # the file's own hit column: 5 of its 8 items right (regression pin of the example file, as
    # tests/data/harness/manifest_example.toml's R4 count)
    assert lad.harness_agreement.iloc[0]["harness_correct"] == 5
