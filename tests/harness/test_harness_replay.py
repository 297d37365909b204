"""viewcert.harness.replay (the replay models' answers) and the manifest's one-file patterns the shipped
dry-run manifest relies on; hand-made inputs, each outcome stated here."""

from __future__ import annotations

from pathlib import Path

import pytest

from viewcert.attribution.table import load_manifest
from viewcert.errors import InputError
from viewcert.harness.replay import dry_run_answers, load_replay


def test_rule_answers_everything():
    r = load_replay("always-move z 44")
    assert r.answer("q0000") == ("move z 44", False) and r.answer("anything") == ("move z 44", False)
    with pytest.raises(InputError, match="gives no answer"):
        load_replay("always- ")


def test_file_answers_by_id_answer_or_verbatim_response(tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_text('{"id": "q0000", "answer": "B"}\n\n{"id": "q0001", "response": "I think ANSWER: C"}\n')
    r = load_replay("a.jsonl", tmp_path)
    assert r.answer("q0000") == ("B", False) and r.answer("q0001") == ("I think ANSWER: C", True)
    with pytest.raises(InputError, match="no answer for item 'q0002'"):
        r.answer("q0002")


@pytest.mark.parametrize("text, message", [
    ('{"id": "q0000", "answer": "A"}\n{"id": "q0000", "answer": "B"}\n', "line 2: item 'q0000' answered twice"),
    ('{"id": "q0000", "answer": "A", "response": "A"}\n', "line 1: expected"),
    ('{"id": 3, "answer": "A"}\n', "line 1: expected"),
    ('{"id": "q0000", "answer": 1}\n', "line 1: expected"),
    ('{"id": "q0000", "answer": "A", "extra": 1}\n', "line 1: expected"),
    ('["q0000", "A"]\n', "line 1: expected"),
    ('{"id": "q0000", \n', "line 1: not valid JSON"),
    ("\n", "no answers"),
])
def test_bad_answer_files_are_one_input_error_naming_the_line(tmp_path, text, message):
    f = tmp_path / "a.jsonl"
    f.write_text(text)
    with pytest.raises(InputError, match=message):
        load_replay(str(f))


def test_missing_file_names_it(tmp_path):
    with pytest.raises(InputError, match="replay answers not found"):
        load_replay("nope.jsonl", tmp_path)


def test_dry_run_rule():
    recs = [{"id": "q0000", "answer_format": "command", "answer": "move z 41"},
            {"id": "q0001", "answer_format": "command", "answer": "move z 50"}]
    assert dry_run_answers(recs) == [{"id": "q0000", "answer": "move z 41"}, {"id": "q0001", "answer": "move z 41"}]
    mc = [{"id": "q0000", "answer_format": "choice", "answer": "cubic"}]
    assert dry_run_answers(mc) == [{"id": "q0000", "answer": "A"}] and dry_run_answers([]) == []


def _manifest(tmp_path: Path, pattern: str) -> Path:
    m = tmp_path / "m.toml"
    m.write_text(f'[study]\nbenchmark = "."\n[[input]]\npath = "{pattern}"\nrung = "R4"\n')
    return m


def test_a_pattern_names_its_one_file(tmp_path):
    (tmp_path / "logs" / "dry-run").mkdir(parents=True)
    log = tmp_path / "logs" / "dry-run" / "2026-12-02T10-00-00_x_abc.eval"
    log.write_bytes(b"")
    assert load_manifest(_manifest(tmp_path, "logs/dry-run/*.eval")).entries[0].path == log
    assert load_manifest(_manifest(tmp_path, "logs/**/*.eval")).entries[0].path == log


def test_a_pattern_matching_none_or_several_is_an_error(tmp_path):
    (tmp_path / "logs").mkdir()
    with pytest.raises(InputError, match=r"matches 0 files: it must match exactly one"):
        load_manifest(_manifest(tmp_path, "logs/*.eval"))
    for name in ("a.eval", "b.eval"):
        (tmp_path / "logs" / name).write_bytes(b"")
    with pytest.raises(InputError, match=r"matches 2 files \('logs/a\.eval', 'logs/b\.eval'\)"):
        load_manifest(_manifest(tmp_path, "logs/*.eval"))
