"""``attribution.table.read_json_hashed``: one read gives the value and the SHA-256 of the file's bytes."""

from __future__ import annotations

import hashlib

import pytest

from viewcert.attribution.table import read_json, read_json_hashed
from viewcert.errors import InputError


def test_the_digest_is_of_the_bytes_on_disk(tmp_path):
    raw = '{"name": "Zürich – αβγ", "n": [1, 2.5, null]}\r\n'.encode()  # non-ASCII and a CRLF line end
    p = tmp_path / "c.json"
    p.write_bytes(raw)
    value, sha = read_json_hashed(p)
    assert value == {"name": "Zürich – αβγ", "n": [1, 2.5, None]}
    assert sha == hashlib.sha256(raw).hexdigest()  # the digest written from the definition
    assert read_json(p) == value


def test_absent_and_malformed_files_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="certificate not found"):
        read_json_hashed(tmp_path / "none.json", missing="certificate not found")
    (tmp_path / "bad.json").write_text('{"a": ')
    with pytest.raises(InputError, match="not valid JSON"):
        read_json_hashed(tmp_path / "bad.json")
