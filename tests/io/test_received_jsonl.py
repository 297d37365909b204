"""``io.received.iter_json_lines``: the one JSONL line loop of the readers (hand-worked inputs)."""

from __future__ import annotations

import pytest

from viewcert.errors import InputError
from viewcert.io.received import iter_json_lines


def test_blank_lines_are_skipped_and_keep_the_file_line_numbers():
    text = '{"a": 1}\n\n   \n[2, 3]\n"x"\n'
    assert list(iter_json_lines(text, source="f.jsonl")) == [(1, {"a": 1}), (4, [2, 3]), (5, "x")]


def test_no_lines_yield_nothing():
    assert list(iter_json_lines("\n \n", source="f.jsonl")) == []


def test_a_duplicate_key_is_refused_naming_the_line_and_the_key():
    with pytest.raises(InputError) as exc:
        list(iter_json_lines('{"id": "a"}\n\n{"id": "b", "id": "c"}\n', source="f.jsonl"))
    assert str(exc.value) == ("file f.jsonl, field id: line 3: duplicate key 'id' in one JSON object "
                              "(refused, never last-wins)")


def test_malformed_json_names_the_line_the_file_and_the_field():
    with pytest.raises(InputError) as exc:
        list(iter_json_lines('{"id": "a"}\n{"id": \n', source="f.jsonl", field="constraints"))
    assert str(exc.value).startswith("file f.jsonl, field constraints: line 2: not valid JSON (")
    assert (exc.value.source, exc.value.field) == ("f.jsonl", "constraints")


def test_nesting_past_the_recursion_limit_is_one_input_error():
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(InputError, match=r"^file f\.jsonl: line 2: not valid JSON \("):
        list(iter_json_lines('{"ok": true}\n' + deep + "\n", source="f.jsonl"))


def test_lines_are_parsed_one_at_a_time():
    """A consumer that stops after the first record never parses (nor refuses) a later line."""
    first = next(iter_json_lines('{"doc_id": 0}\nnot json\n', source="f.jsonl"))
    assert first == (1, {"doc_id": 0})
