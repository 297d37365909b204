"""The readers on files written by the real harness packages (tests/data/harness/real, made by make_real.py).

Each harness ran a stub model with fixed answers (the ``*_ANSWERS`` tables in make_real.py, restated
here as the expected rows); every expectation below is derived from what the stub returned and from the
parsing rules of :mod:`viewcert.attribution.parsing`, not from a reader's output.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pandas as pd
import pytest

from viewcert.attribution.readers import detect_harness, read_file
from viewcert.attribution.readers.inspect_ai import read_inspect
from viewcert.errors import InputError

REAL = Path(__file__).resolve().parent / "data" / "harness" / "real"
EVAL = next((REAL / "inspect").glob("*.eval"))


def _by_key(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.set_index(["item_id", "sample_k"]).sort_index()


# ---------------------------------------------------------------------- Inspect AI 0.3.285
# (item, epoch) -> (stub output, target, parsed answer, parse_status, Inspect's match() value as a score)
# match() compares the end of the completion with the target: "ANSWER: x" scores C exactly when x is the
# target; an empty completion (content filter) scores I; a sample whose model call raised has no score.
INSPECT_EXPECTED = {
    ("mp-1235466", 1): ("ANSWER: triclinic", "triclinic", "triclinic", "ok", 1.0),
    ("mp-1235466", 2): ("I cannot tell without seeing the structure.", "triclinic", None, "refused", 0.0),
    ("mp-1237061", 1): ("ANSWER: monoclinic", "monoclinic", "monoclinic", "ok", 1.0),
    ("mp-1237061", 2): ("ANSWER: orthorhombic", "monoclinic", "orthorhombic", "ok", 0.0),
    ("mp-1105758", 1): ("ANSWER: cubic", "orthorhombic", "cubic", "ok", 0.0),
    ("mp-1105758", 2): ("", "orthorhombic", None, "api_error", 0.0),  # stub raised RuntimeError
    ("mp-33615", 1): ("ANSWER: tetragonal", "tetragonal", "tetragonal", "ok", 1.0),
    ("mp-33615", 2): ("", "tetragonal", None, "refused", 0.0),  # stop_reason content_filter
    ("mp-8279", 1): ("ANSWER: hexagonal", "trigonal", "hexagonal", "ok", 0.0),
    ("mp-8279", 2): ("ANSWER: hexagonal", "trigonal", "hexagonal", "ok", 0.0),
    ("mp-19213", 1): ("ANSWER: hexagonal", "hexagonal", "hexagonal", "ok", 1.0),
    ("mp-19213", 2): ("ANSWER: hexagonal", "hexagonal", "hexagonal", "ok", 1.0),
}


def test_inspect_real_eval_is_detected():
    assert detect_harness(EVAL) == "inspect"


def test_inspect_real_eval_rows():
    t = read_inspect(EVAL, rung="no-image")
    f = _by_key(t.frame)
    assert len(f) == len(INSPECT_EXPECTED)
    assert set(f["model"]) == {"stub/crystal-fixed"}  # eval.model in the header
    assert set(f["harness"]) == {"inspect"}
    for (mid, epoch), (raw, target, answer, status, score) in INSPECT_EXPECTED.items():
        r = f.loc[(mid, epoch - 1)]
        assert r["target"] == target, (mid, epoch)
        assert r["parse_status"] == status, (mid, epoch)
        assert (r["parsed_answer"] if status == "ok" else None) == answer, (mid, epoch)
        assert r["score"] == score, (mid, epoch)
        if status != "api_error":
            assert r["raw_output"] == raw, (mid, epoch)
    # the errored sample keeps the harness's error message as the reason
    assert "stub failure for mp-1105758 epoch 2" in f.loc[("mp-1105758", 1), "parse_reason"]
    assert f.loc[("mp-1235466", 0), "category"] == "triclinic"  # metadata.crystal_system


def test_inspect_real_eval_through_read_file():
    t = read_file(EVAL, rung="no-image", scorer="match")
    assert len(t.frame) == 12 and t.inputs[0].rows == 12 and t.inputs[0].items == 6


def test_inspect_real_eval_corrupt_zstd_member_is_a_clean_error(tmp_path):
    """A damaged zstd member gives an InputError naming the member, not a decompressor exception."""
    data = bytearray(EVAL.read_bytes())
    with zipfile.ZipFile(EVAL) as zf:
        info = zf.getinfo("header.json")
        assert info.compress_type == 93  # Inspect wrote it zstd-compressed
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for k in range(start + 8, start + info.compress_size - 4):
        data[k] ^= 0x5A
    bad = tmp_path / EVAL.name
    bad.write_bytes(bytes(data))
    with pytest.raises(InputError, match="header.json"):
        read_inspect(bad, rung="no-image")
