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

from viewcert.attribution.readers import detect_harness, read_file, read_manifest
from viewcert.attribution.readers.inspect_ai import read_inspect
from viewcert.attribution.table import load_manifest
from viewcert.errors import InputError

REAL = Path(__file__).resolve().parents[1] / "data" / "harness" / "real"
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


# ---------------------------------------------------------------------- lmms-eval 0.7.3
# The stub's three responses per item (repeats: 3), as in make_real.py LMMS_ANSWERS, with what the
# crystal-system parser makes of each: (response, parsed answer or None, parse_status).
LMMS_DIR = REAL / "lmms_eval" / "stub__crystal-fixed"  # lmms-eval's model_name_sanitized: "/" -> "__"
LMMS_FIRST = next(LMMS_DIR.glob("*_samples_e3_crystal_system_stub.jsonl"))
LMMS_ALL3 = next(LMMS_DIR.glob("*_samples_e3_crystal_system_stub_all3.jsonl"))
LMMS_TARGET = {"mp-1235466": "triclinic", "mp-1237061": "monoclinic", "mp-1105758": "orthorhombic",
               "mp-33615": "tetragonal", "mp-8279": "trigonal", "mp-19213": "hexagonal"}
LMMS_EXPECTED = {
    "mp-1235466": [("triclinic", "triclinic", "ok"), ("Answer: triclinic", "triclinic", "ok"),
                   ("The crystal system is monoclinic.", "monoclinic", "ok")],
    "mp-1237061": [("monoclinic", "monoclinic", "ok"), ("", None, "unparseable"),  # empty output
                   ("Monoclinic.", "monoclinic", "ok")],
    "mp-1105758": [("orthorhombic or tetragonal", None, "unparseable"),  # two labels, no marker
                   ("orthorhombic", "orthorhombic", "ok"), ("cubic", "cubic", "ok")],
    "mp-33615": [("Answer: tetragonal", "tetragonal", "ok"), ("tetragonal", "tetragonal", "ok"),
                 ("tetragonal", "tetragonal", "ok")],
    "mp-8279": [("rhombohedral", "trigonal", "ok"), ("hexagonal", "hexagonal", "ok"),  # synonym
                ("I cannot determine the crystal system.", None, "refused")],
    "mp-19213": [("hexagonal", "hexagonal", "ok")] * 3,
}


def _check_lmms_row(r, mid: str, k: int) -> None:
    raw, answer, status = LMMS_EXPECTED[mid][k]
    assert r["raw_output"] == raw, (mid, k)
    assert r["parse_status"] == status, (mid, k)
    assert (r["parsed_answer"] if status == "ok" else None) == answer, (mid, k)
    assert r["target"] == LMMS_TARGET[mid] and r["category"] == LMMS_TARGET[mid], (mid, k)


def test_lmms_eval_real_default_filter_logs_the_first_response():
    """lmms-eval's default filter (take_first) logs one response per document, even with repeats: 3."""
    assert detect_harness(LMMS_FIRST) == "lmms_eval"
    t = read_file(LMMS_FIRST, rung="R3", id_field="material_id")
    f = _by_key(t.frame)
    assert set(f["model"]) == {"stub/crystal-fixed"}  # model_name of lmms-eval's results file beside it
    assert set(f["run"]) == {LMMS_FIRST.name.split("_samples_")[0]}  # lmms-eval's date id
    assert sorted(f.index) == sorted((mid, 0) for mid in LMMS_EXPECTED)
    for mid in LMMS_EXPECTED:
        _check_lmms_row(f.loc[(mid, 0)], mid, 0)
    # the task's own score (target named anywhere in the response) is the per-sample score with one
    # sample: 1 for every first response except "rhombohedral" (the word "trigonal" does not occur)
    expected = {mid: float(LMMS_TARGET[mid] in LMMS_EXPECTED[mid][0][0].lower()) for mid in LMMS_EXPECTED}
    assert expected["mp-8279"] == 0.0 and expected["mp-1105758"] == 1.0
    assert {mid: f.loc[(mid, 0), "score"] for mid in LMMS_EXPECTED} == expected
    # ...which disagrees with the parse on exactly those two: the ambiguous one and the synonym
    assert any("disagree on 2 sample(s)" in w for w in t.warnings), t.warnings
    # without id_field the item id is lmms-eval's positional doc_id
    t2 = read_file(LMMS_FIRST, model="stub/crystal-fixed", rung="R3")
    assert sorted(t2.frame["item_id"]) == [str(i) for i in range(6)]


def test_lmms_eval_real_take_first_k_logs_all_three():
    t = read_file(LMMS_ALL3, rung="R3", id_field="material_id")
    f = _by_key(t.frame)
    assert len(f) == 18 and sorted(set(f.index.get_level_values("sample_k"))) == [0, 1, 2]
    for mid in LMMS_EXPECTED:
        for k in range(3):
            r = f.loc[(mid, k)]
            _check_lmms_row(r, mid, k)
            # three samples per document: the document-level metric is not a per-sample score
            assert r["score"] == float(r["parse_status"] == "ok" and r["parsed_answer"] == LMMS_TARGET[mid])
    assert not t.warnings


# ---------------------------------------------------------------------- VLMEvalKit (ms-vlmeval 0.0.20)
# The stub's prediction per item (make_real.py VLM_ANSWERS); options A-G are the seven systems in order,
# so a letter resolves through them: (prediction, target, parsed answer or None, parse_status, hit).
# hit is VLMEvalKit's exact matching: a letter or a single option text it can infer; anything else 0.
VLM_DIR = REAL / "vlmevalkit"
VLM_EXPECTED = {
    "mp-1235466": ("A", "triclinic", "triclinic", "ok", 1.0),
    "mp-1237061": ("Answer: B", "monoclinic", "monoclinic", "ok", 1.0),
    "mp-1105758": ("orthorhombic", "orthorhombic", "orthorhombic", "ok", 1.0),
    "mp-33615": ("F", "tetragonal", "hexagonal", "ok", 0.0),  # F = hexagonal, a wrong letter
    "mp-8279": ("Failed to obtain answer via API.", "trigonal", None, "api_error", 0.0),
    "mp-19213": ("It is either hexagonal or trigonal.", "hexagonal", None, "unparseable", 0.0),
}
VLM_ORDER = list(VLM_EXPECTED)  # the dataset's index 0..5 follows this order


def _check_vlm(f: pd.DataFrame, *, scored: bool) -> None:
    assert sorted(f.index) == sorted((mid, 0) for mid in VLM_EXPECTED)
    for mid, (raw, target, answer, status, hit) in VLM_EXPECTED.items():
        r = f.loc[(mid, 0)]
        assert r["raw_output"] == raw, mid
        assert r["target"] == target and r["category"] == target, mid
        assert r["parse_status"] == status, mid
        assert (r["parsed_answer"] if status == "ok" else None) == answer, mid
        computed = float(status == "ok" and answer == target)
        assert r["score"] == (hit if scored else computed), mid


def test_vlmevalkit_real_result_files():
    for name in ("CrystalStub_E3CrystalStub_exact_matching_result.xlsx",
                 "CrystalStub_E3CrystalStub_exact_matching_result.tsv"):
        path = VLM_DIR / name
        assert detect_harness(path) == "vlmevalkit"
        t = read_file(path, model="CrystalStub", rung="R4", id_column="material_id")
        _check_vlm(_by_key(t.frame), scored=True)
        assert not t.warnings  # VLMEvalKit's hit agrees with viewcert's parse on these six


def test_vlmevalkit_real_prediction_files():
    for name in ("CrystalStub_E3CrystalStub.xlsx", "CrystalStub_E3CrystalStub.tsv"):
        path = VLM_DIR / name
        assert detect_harness(path) == "vlmevalkit"
        t = read_file(path, model="CrystalStub", rung="R4", id_column="material_id")
        _check_vlm(_by_key(t.frame), scored=False)  # no hit column: scored from the parse
        # VLMEvalKit's own index column is positional
        t2 = read_file(path, model="CrystalStub", rung="R4")
        assert dict(zip(t2.frame["item_id"], t2.frame["raw_output"], strict=True)) == {
            str(i): VLM_EXPECTED[mid][0] for i, mid in enumerate(VLM_ORDER)}


# ---------------------------------------------------------------------- all three as one study
def test_read_manifest_real_files():
    """The three real files as arms of one model: rows per arm, one target per item across arms, and the
    two items of ../items.jsonl that the real runs did not include listed as missing in every arm."""
    table, coverage = read_manifest(load_manifest(REAL / "manifest.toml"))
    f = table.frame
    counts = f.groupby("rung").size().to_dict()
    assert counts == {"R4": 6, "R3": 18, "no-image": 12}  # 6 items x (1, 3 repeats, 2 epochs)
    assert set(f["model"]) == {"stub/crystal-fixed"}
    assert set(f["item_id"]) == set(VLM_EXPECTED) == set(LMMS_EXPECTED)
    for rung in ("R4", "R3", "no-image"):
        assert coverage.missing("stub/crystal-fixed", rung) == ("mp-862873", "mp-867321")
    # per-arm correct samples, counted from the expectation tables above
    ok = f[f["parsed_answer"] == f["target"]].groupby("rung").size().to_dict()
    assert ok["R4"] == sum(e[2] == e[1] for e in VLM_EXPECTED.values())
    assert ok["R3"] == sum(a == LMMS_TARGET[m] for m, rows in LMMS_EXPECTED.items() for _, a, _ in rows)
    assert ok["no-image"] == sum(e[2] == e[1] for e in INSPECT_EXPECTED.values())
