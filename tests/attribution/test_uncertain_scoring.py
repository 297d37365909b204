"""Uncertain hydrogen bonds are neutral when a model's answers are scored through the ladder (issue 28 item 3):
an item's ``uncertain`` entries (``benchmark.interaction_export``) are dropped from the answer before MiSI's
list score (``attribution.misi.score_interactions``). Hand-made export: three questions, values by hand."""

from __future__ import annotations

import json

import pytest

from viewcert.attribution.pipeline import run_ladder
from viewcert.formats.records import sealed
from viewcert.stats import BootstrapSettings


def test_naming_an_uncertain_entry_is_neither_rewarded_nor_punished(tmp_path):
    folder = tmp_path / "pl"
    folder.mkdir()
    answers = ["SER 62 OG A, O7; THR 299 OG1 A, O11", "no", "yes: TYR 9 OH A, N1"]
    unsure = [["ARG 285 NE A, O12"], ["HIS 5 NE2 A, O2"], []]
    stub = ["SER 62 OG A, O7; ARG 285 NE A, O12",  # 1 of 2 true + the uncertain one: 0.5, not capped lower
            "yes: HIS 5 NE2 A, O2",  # only uncertain bonds: naming one is neutral, 1
            "yes: TYR 9 OH A, N1; HIS 5 NE2 A, O2"]  # uncertain elsewhere, not here: a fabrication, capped 0.5
    lines = ["index,id,source_id"] + [f"{k},q{k:04d},cx:LIG" for k in range(3)]
    (folder / "ids.csv").write_text("\n".join(lines) + "\n")
    (folder / "benchmark.jsonl").write_text("".join(json.dumps(
        {"id": f"q{k:04d}", "index": k, "source_id": "cx:LIG", "task": "residue-ligand", "answer": a,
         "answer_format": "list", "images": [], "question": "?", "category": "x"}) + "\n"
        for k, a in enumerate(answers)))
    (folder / "certificate.json").write_text(json.dumps(sealed(
        {"format": "viewcert-interaction-benchmark/1", "task": "residue-ligand",
         "items": [{"id": f"q{k:04d}", "rendered": {"ceiling": 1.0}, "ideal": {"ceiling": 1.0}, "uncertain": u}
                   for k, u in enumerate(unsure)]})))
    res = tmp_path / "r.jsonl"
    res.write_text("".join(json.dumps({"model": "stub", "item_id": k, "target": a, "raw_output": o}) + "\n"
                           for k, (a, o) in enumerate(zip(answers, stub, strict=True))))
    (tmp_path / "m.toml").write_text(f'[study]\nbenchmark = "{folder.as_posix()}"\n'
                                     f'[[input]]\npath = "{res.as_posix()}"\nrung = "R4"\n')
    lad, _, _ = run_ladder(manifest=tmp_path / "m.toml", bootstrap=BootstrapSettings(n_boot=100), threshold=0.5)
    assert lad.task_scores.iloc[0]["misi_credit"] == pytest.approx((0.5 + 1.0 + 0.5) / 3)
    scale = lad.item_scale  # the deficit account's scale: the same rule through (answer, target)
    assert scale.score("ser 62 og a, o7; arg 285 ne a, o12", "ser 62 og a, o7; thr 299 og1 a, o11") == 0.5
    assert scale.score("his 5 ne2 a, o2", "no") == 1.0
