"""The lmms-eval reader checks the id the log itself records (``process_results`` writes the item id beside
``doc_id``) against the id ``doc_id`` maps to through the export's ids.csv, and refuses a disagreement,
listing the ids (issue 26)."""

from __future__ import annotations

import json

import pytest

from viewcert.attribution.readers.lmms_eval import read_lmms_eval
from viewcert.attribution.shipped import load_shipped, task_parser
from viewcert.errors import InputError


def _export(folder):
    folder.mkdir()
    (folder / "ids.csv").write_text("index,id,source_id\n" + "".join(f"{k},q{k:04d},cx:LIG\n" for k in range(3)))
    (folder / "benchmark.jsonl").write_text("".join(json.dumps(
        {"id": f"q{k:04d}", "index": k, "source_id": "cx:LIG", "task": "residue-ligand", "answer": "no",
         "answer_format": "list", "images": [], "question": "?", "category": "x"}) + "\n" for k in range(3)))
    return load_shipped(folder)


def _log(path, logged_ids):
    path.write_text("".join(json.dumps({"doc_id": k, "target": "no", "filtered_resps": ["no"],
                                        "viewcert_score": {"id": i, "category": "x", "score": 1.0}}) + "\n"
                            for k, i in enumerate(logged_ids)))
    return path


def test_logged_ids_that_agree_read(tmp_path):
    shipped = _export(tmp_path / "b")
    table = read_lmms_eval(_log(tmp_path / "s.jsonl", ["q0000", "q0001", "q0002"]), model="m", rung="R4",
                           items=shipped, parser=task_parser("residue-ligand", shipped))
    assert sorted(set(table.frame["item_id"])) == ["q0000", "q0001", "q0002"]


def test_a_log_whose_ids_were_changed_is_refused_listing_them(tmp_path):
    shipped = _export(tmp_path / "b")
    log = _log(tmp_path / "s.jsonl", ["q0000", "q0002", "q0001"])  # two documents' ids swapped
    with pytest.raises(InputError) as err:
        read_lmms_eval(log, model="m", rung="R4", items=shipped, parser=task_parser("residue-ligand", shipped))
    msg = str(err.value)
    assert "2 document(s) whose logged id disagrees with ids.csv" in msg and "\n" not in msg
    assert "line 2: doc_id 1 maps to 'q0001' but the log records 'q0002'" in msg
    assert "line 3: doc_id 2 maps to 'q0002' but the log records 'q0001'" in msg
