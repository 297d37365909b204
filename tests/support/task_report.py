"""A four-question residue-ligand export written by hand (its answers, a stub model's replies, the
certified ceilings) shared by the ladder report's task-section and deficit-account tests."""

from __future__ import annotations

import json
from pathlib import Path

from viewcert.formats.records import sealed

ANSWERS = ["yes: ARG 285 NH1 A, O1; SER 12 OG A, O2", "no", "yes: TYR 9 OH A, N1", "no"]
# MiSI list scores: half the true entries 0.5; a right 'no' 1; a fabricated extra entry caps at 0.5; a bond
# claimed for a negative residue 0 -> credit (0.5 + 1 + 0.5 + 0)/4 = 0.5; exact match only item 1
STUB = ["yes: ARG 285 NH1 A, O1", "No.", "Answer: yes: TYR 9 OH A, N1; GLY 3 N A, O2", "yes: GLY 3 N A, O2"]
CEILINGS = [1.0, 1.0, 0.5, 1.0]  # certified mean as rendered 3.5/4 = 0.875; ideal 1.0


def _export(folder: Path) -> Path:
    folder.mkdir()
    (folder / "ids.csv").write_text("index,id,source_id\n" + "".join(f"{k},q{k:04d},cx:LIG\n" for k in range(4)))
    (folder / "benchmark.jsonl").write_text("".join(json.dumps(
        {"id": f"q{k:04d}", "index": k, "source_id": "cx:LIG", "task": "residue-ligand", "answer": a,
         "answer_format": "list", "images": [], "question": "?", "category": "x"}) + "\n" for k, a in enumerate(ANSWERS)))
    (folder / "certificate.json").write_text(json.dumps(sealed(
        {"format": "viewcert-interaction-benchmark/1", "task": "residue-ligand",
         "items": [{"id": f"q{k:04d}", "rendered": {"ceiling": c}, "ideal": {"ceiling": 1.0}}
                   for k, c in enumerate(CEILINGS)]})))
    return folder
