"""Every harness reader on its sample file (tests/data/harness), the round trip through the canonical
table, and malformed files giving errors that name file, row and field."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from viewcert.attribution.readers import detect_harness, read_file, read_manifest
from viewcert.attribution.readers.native import read_native, write_native
from viewcert.attribution.table import COLUMNS, load_manifest
from viewcert.errors import InputError

H = Path(__file__).resolve().parents[1] / "data" / "harness"
VLM = H / "vlmevalkit" / "AcmeVLM-7B_E3CrystalSystem_exact_matching_result.xlsx"
VLM_TSV = H / "vlmevalkit" / "AcmeVLM-7B_E3CrystalSystem.tsv"
LMMS = H / "lmms_eval" / "acme__vlm-7b" / "20250611_103212_samples_e3_crystal_system_r3.jsonl"
EVAL = H / "inspect" / "2025-06-11T10-32-12+00-00_e3-crystal-system-noimage_Hk3pQ2vR8sWm4nTzLj5bXc.eval"
EVAL_JSON = EVAL.with_suffix(".json")
STUDY = H / "study" / "frontier__beta__lab-13b__K3.json"
NATIVE_CSV = H / "native" / "beta_lab-13b_r3.csv"
NATIVE_JSONL = H / "native" / "beta_lab-13b_noimage.jsonl"
CORE = [c for c in COLUMNS if c not in ("source_file", "harness")] + ["parse_reason"]


def _by_key(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.set_index(["item_id", "sample_k"]).sort_index()


@pytest.mark.parametrize(
    "path, harness",
    [(VLM, "vlmevalkit"), (VLM_TSV, "vlmevalkit"), (LMMS, "lmms_eval"), (EVAL, "inspect"), (EVAL_JSON, "inspect"),
     (STUDY, "study"), (NATIVE_CSV, "native"), (NATIVE_JSONL, "native")],
)
def test_detect_harness(path, harness):
    assert detect_harness(path) == harness


def test_vlmevalkit_result_file():
    t = read_file(VLM, model="acme/vlm-7b", rung="pixels", id_column="material_id")
    f = _by_key(t.frame)
    assert len(f) == 8 and set(f["rung"]) == {"R4"} and set(f["harness"]) == {"vlmevalkit"}
    assert f.loc[("mp-1237061", 0), "parsed_answer"] == "monoclinic"  # "Answer: B" through the option columns
    assert f.loc[("mp-1105758", 0), "parsed_answer"] == "orthorhombic"  # bare letter "C"
    assert f.loc[("mp-33615", 0), "target"] == "tetragonal"  # answer letter D resolved
    assert f.loc[("mp-8279", 0), "parse_status"] == "api_error"  # VLMEvalKit's FAIL_MSG
    assert f.loc[("mp-867321", 0), "parse_status"] == "unparseable"
    assert f.loc[("mp-867321", 0), "parse_reason"].startswith("ambiguous: names cubic, tetragonal")
    assert f.loc[("mp-1235466", 0), "parse_reason"] == ""
    # VLMEvalKit's hit, in item-id order: orthorhombic, triclinic, monoclinic, hexagonal, tetragonal, ...
    assert f["score"].tolist() == [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0]
    assert not t.warnings  # the hit column agrees with viewcert's parse on every row
    assert t.inputs[0].sha256 and t.inputs[0].rows == 8


def test_vlmevalkit_prediction_tsv_uses_positional_index():
    t = read_file(VLM_TSV, model="acme/vlm-7b", rung="R4")
    assert sorted(t.frame["item_id"]) == [str(i) for i in range(8)]
    assert (t.frame["score"] == (t.frame["parsed_answer"] == t.frame["target"])).all()  # no hit: computed


def test_lmms_eval_samples_with_repeats():
    t = read_file(LMMS, rung="R3", id_field="material_id")
    f = _by_key(t.frame)
    assert set(f["model"]) == {"acme/vlm-7b"}  # the results file's model_name when the manifest gives none
    assert len(f) == 24 and f.index.get_level_values("sample_k").max() == 2
    assert f.loc[("mp-8279", 1), "parsed_answer"] == "hexagonal"
    assert f.loc[("mp-19213", 2), "parse_status"] == "unparseable"  # empty response
    assert "empty output" not in str(f.loc[("mp-19213", 2), "raw_output"])
    assert f.loc[("mp-1105758", 2), "parse_status"] == "unparseable"  # ambiguous, no marker
    t2 = read_file(LMMS, model="acme/vlm-7b", rung="R3")  # default: doc_id
    assert sorted(set(t2.frame["item_id"])) == [str(i) for i in range(8)]


def test_inspect_eval_zip_and_json_agree():
    a = read_file(EVAL, rung="no-image")
    b = read_file(EVAL_JSON, rung="no-image")
    fa, fb = _by_key(a.frame), _by_key(b.frame)
    assert len(fa) == 16 and set(fa["model"]) == {"acme/vlm-7b"} and set(fa["run"]) == {"Hk3pQ2vR8sWm4nTzLj5bXc"}
    cols = [c for c in CORE if c not in ("item_id", "sample_k")]
    pd.testing.assert_frame_equal(fa[cols], fb[cols])
    assert fa.loc[("mp-33615", 1), "parse_status"] == "api_error"  # sample.error (rate limit)
    assert fa.loc[("mp-1235466", 0), "parse_status"] == "refused"
    assert fa.loc[("mp-1237061", 0), "score"] == 1.0  # the match scorer's "C"
    assert fa.loc[("mp-8279", 0), "category"] == "trigonal"


def test_study_prediction_file():
    t = read_file(STUDY)
    f = _by_key(t.frame)
    assert set(f["model"]) == {"beta/lab-13b"} and set(f["rung"]) == {"R4"} and len(f) == 24
    assert f.loc[("mp-1237061", 0), "parsed_answer"] == "monoclinic"  # vote order kept
    assert f.loc[("mp-1237061", 2), "parse_status"] == "unparseable"
    assert (f.loc["mp-867321", "parse_status"] == "unparseable").all()
    assert not t.warnings


def test_native_files():
    t = read_native(NATIVE_CSV)
    assert set(t.frame["model"]) == {"beta/lab-13b"} and set(t.frame["run"]) == {"beta-r3-2025-06"}
    assert (t.frame["parse_status"] == "ok").all()
    j = read_native(NATIVE_JSONL, model="beta/lab-13b", rung="no-image")
    f = _by_key(j.frame)
    assert f.loc[("mp-33615", 0), "parse_status"] == "api_error"
    assert f.loc[("mp-867321", 0), "parse_status"] == "refused"


@pytest.mark.parametrize(
    "path, kwargs",
    [(VLM, {"model": "acme/vlm-7b", "rung": "R4", "id_column": "material_id"}),
     (LMMS, {"model": "acme/vlm-7b", "rung": "R3", "id_field": "material_id"}),
     (EVAL, {"rung": "no-image"}), (EVAL_JSON, {"rung": "no-image"}), (STUDY, {}),
     (NATIVE_CSV, {}), (NATIVE_JSONL, {"model": "beta/lab-13b", "rung": "no-image"})],
)
@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_round_trip_through_canonical_table(tmp_path, path, kwargs, suffix):
    t = read_file(path, **kwargs)
    out = write_native(t, tmp_path / f"roundtrip{suffix}")
    back = read_native(out)
    a = t.frame[CORE].sort_values(["item_id", "sample_k"], ignore_index=True)
    b = back.frame[CORE].sort_values(["item_id", "sample_k"], ignore_index=True)
    if suffix == ".csv":  # CSV cannot tell an empty output from a missing one (JSONL can)
        a["raw_output"] = a["raw_output"].replace("", None)
    pd.testing.assert_frame_equal(a.fillna("∅"), b.fillna("∅"), check_dtype=False)
    assert set(back.frame["harness"]) == {"native"}


def test_example_manifest_reads_every_format():
    m = load_manifest(H / "manifest_example.toml")
    table, cov = read_manifest(m)
    assert sorted(table.arms) == [("acme/vlm-7b", "R3"), ("acme/vlm-7b", "R4"), ("acme/vlm-7b", "no-image"),
                                  ("beta/lab-13b", "R3"), ("beta/lab-13b", "R4"), ("beta/lab-13b", "no-image")]
    assert set(table.frame["harness"]) == {"vlmevalkit", "lmms_eval", "inspect", "study", "native"}
    assert (cov.frame["missing"] == 0).all() and len(cov.universe) == 8
    assert len(table.inputs) == 6 and all(len(i.sha256) == 64 for i in table.inputs)


# ---------------------------------------------------------------------- malformed files
def _err(exc: pytest.ExceptionInfo) -> str:
    return str(exc.value)


def test_vlmevalkit_missing_column_names_file_and_field(tmp_path):
    p = tmp_path / "bad.tsv"
    pd.read_csv(VLM_TSV, sep="\t").drop(columns=["answer"]).to_csv(p, sep="\t", index=False)
    with pytest.raises(InputError) as e:
        read_file(p, harness="vlmevalkit", model="m", rung="R4")
    assert str(p) in _err(e) and "answer" in _err(e) and e.value.field == "answer"


def test_vlmevalkit_acc_summary_is_not_a_per_sample_file():
    with pytest.raises(InputError, match="index"):
        read_file(H / "vlmevalkit" / "AcmeVLM-7B_E3CrystalSystem_acc.csv", harness="vlmevalkit", model="m",
                  rung="R4")


def test_duplicate_item_ids_name_the_rows(tmp_path):
    df = pd.read_csv(VLM_TSV, sep="\t")
    df.loc[5, "index"] = 2
    p = tmp_path / "dup.tsv"
    df.to_csv(p, sep="\t", index=False)
    with pytest.raises(InputError) as e:
        read_file(p, model="m", rung="R4")
    assert "row 6" in _err(e) and "duplicate item id '2'" in _err(e) and "row 3" in _err(e)
    lines = LMMS.read_text().splitlines()
    p2 = tmp_path / "dup.jsonl"
    p2.write_text("\n".join(lines + [lines[0]]) + "\n")
    with pytest.raises(InputError) as e:
        read_file(p2, model="m", rung="R3")
    assert "line 9" in _err(e) and "duplicate" in _err(e) and e.value.field == "doc_id"


def test_wrong_types_name_the_field(tmp_path):
    bad = [json.loads(x) for x in LMMS.read_text().splitlines()]
    bad[3]["doc_id"] = [3]
    p = tmp_path / "types.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in bad) + "\n")
    with pytest.raises(InputError) as e:
        read_file(p, harness="lmms_eval", model="m", rung="R3")
    assert "line 4" in _err(e) and e.value.field == "doc_id"
    data = json.loads(STUDY.read_text())
    data["predictions"][2]["votes"] = {"cubic": "three"}
    p = tmp_path / "frontier__x__y__K3.json"
    p.write_text(json.dumps(data))
    with pytest.raises(InputError) as e:
        read_file(p)
    assert "row 3" in _err(e) and e.value.field == "votes"
    data = json.loads(STUDY.read_text())
    data["K"] = "3"
    p.write_text(json.dumps(data))
    with pytest.raises(InputError, match="'K' must be int"):
        read_file(p)


def test_unknown_target_and_score_are_named(tmp_path):
    df = pd.read_csv(NATIVE_CSV)
    df.loc[4, "target"] = "quasicrystal"
    p = tmp_path / "t.csv"
    df.to_csv(p, index=False)
    with pytest.raises(InputError) as e:
        read_native(p)
    assert "row 5" in _err(e) and e.value.field == "target" and str(p) in _err(e)
    df = pd.read_csv(NATIVE_CSV).assign(score=["1"] * 7 + ["high"])
    df.to_csv(p, index=False)
    with pytest.raises(InputError) as e:
        read_native(p)
    assert "row 8" in _err(e) and e.value.field == "score"
    df = pd.read_csv(NATIVE_CSV).assign(sample_k=[0] * 7 + [0.5])
    df.to_csv(p, index=False)
    with pytest.raises(InputError, match="sample_k"):
        read_native(p)


def test_inspect_errors(tmp_path):
    p = tmp_path / "broken.eval"
    p.write_bytes(b"not a zip")
    with pytest.raises(InputError, match="not a zip"):
        read_file(p, harness="inspect", rung="no-image")
    p = tmp_path / "noheader.eval"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("samples/a_epoch_1.json", "{}")
    with pytest.raises(InputError, match="header.json"):
        read_file(p, harness="inspect", rung="no-image")
    log = json.loads(EVAL_JSON.read_text())
    log["samples"][1]["epoch"] = 1  # the same id twice at epoch 1
    p = tmp_path / "dup.json"
    p.write_text(json.dumps(log))
    with pytest.raises(InputError) as e:
        read_file(p, rung="no-image")
    assert "samples[1]" in _err(e) and "duplicate" in _err(e)


def test_unknown_format_and_missing_file(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        read_file(tmp_path / "nope.csv")
    p = tmp_path / "x.parquet"
    p.write_bytes(b"PAR1")
    with pytest.raises(InputError, match="no reader"):
        read_file(p)
    p = tmp_path / "x.json"
    p.write_text("[1, 2]")
    with pytest.raises(InputError, match="neither"):
        read_file(p)
    with pytest.raises(InputError, match="does not take"):
        read_file(NATIVE_CSV, id_column="x")


def test_lmms_eval_model_name_falls_back_to_the_folder(tmp_path):
    """Without a usable results file beside the samples, the model is lmms-eval's sanitised folder name; a
    results file that is not JSON is said in the table's warnings."""
    d = tmp_path / "org__model-x"
    d.mkdir()
    samples = d / LMMS.name
    samples.write_bytes(LMMS.read_bytes())
    t = read_file(samples, rung="R3", id_field="material_id")
    assert set(t.frame["model"]) == {"org__model-x"} and not t.warnings
    (d / (LMMS.name.split("_samples_")[0] + "_results.json")).write_text("{not json")
    t = read_file(samples, rung="R3", id_field="material_id")
    assert set(t.frame["model"]) == {"org__model-x"}
    assert any("_results.json: not used for the model name" in w for w in t.warnings)
    (d / (LMMS.name.split("_samples_")[0] + "_results.json")).write_text('{"model_name": "org/model-x"}')
    assert set(read_file(samples, rung="R3", id_field="material_id").frame["model"]) == {"org/model-x"}
