"""Strict readers (issue 23): a duplicate JSON key is refused naming the key and the file, never read
last-wins (certificates, protocol files, ladder/audit JSON, a manifest's item list); TOML refuses duplicates
itself (tomllib), checked here for protocol files and manifests; an unknown protocol key is refused naming
the key, the file and the nearest valid key. Every shipped protocol still reads: each built-in written by
``viewcert protocol show`` reads back to the same matrices, and the protocol files in benchmarks/results."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from viewcert.cameras.protocol_files import read_protocol_file
from viewcert.cameras.protocols import PROTOCOL_NAMES, get_protocol
from viewcert.cli import app
from viewcert.errors import InputError
from viewcert.io.received import loads_json_strict, refuse_unknown_keys

REPO = Path(__file__).resolve().parents[2]
VIEW = 'name = "front"\nrotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\n'


def invoke(argv: list[str]) -> tuple[int, str]:
    res = CliRunner().invoke(app, argv)
    assert "Traceback" not in res.output, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res.exit_code, res.output


def one_error(out: str) -> str:
    errors = [line for line in out.splitlines() if line.startswith("viewcert: error:")]
    assert len(errors) == 1, out
    return errors[0]


# ------------------------------------------------------------------------------------ duplicate keys
def test_python_json_is_last_wins_and_the_strict_reader_refuses():
    """The ambiguity being closed: the standard library keeps the last value silently."""
    text = '{"delta": 0.01, "nested": {"tau": 1, "tau": 2}, "delta": 0.5}'
    assert json.loads(text) == {"delta": 0.5, "nested": {"tau": 2}}
    with pytest.raises(InputError, match=r"file c\.json, field tau: duplicate key 'tau'"):
        loads_json_strict(text, source="c.json")  # the inner object closes first, so 'tau' is found first
    assert loads_json_strict('{"a": [{"b": 1}, {"b": 2}], "c": {}}') == {"a": [{"b": 1}, {"b": 2}], "c": {}}


@pytest.mark.parametrize("text,key", [
    ('{"format": "viewcert-certificate/1", "format": "x", "inputs": {}}', "format"),
    ('{"format": "viewcert-certificate/1", "config": {"delta": 0.01, "delta": 0.5}}', "delta"),
    ('{"format": "viewcert-certificate/1", "items": [{"id": "a", "id": "b"}]}', "id"),
])
def test_a_certificate_with_a_duplicate_key_is_refused(tmp_path, text, key):
    (tmp_path / "c.json").write_text(text)
    code, out = invoke(["verify", str(tmp_path / "c.json"), "--inputs", str(tmp_path)])
    line = one_error(out)
    assert code == 2 and f"duplicate key {key!r}" in line and "c.json" in line


def test_a_ladder_certificate_with_a_duplicate_key_is_refused(tmp_path):
    """``ladder --certificate`` reads a certificate through attribution's read_json: strict too."""
    from viewcert.attribution.ladder import ceiling_from_certificate

    (tmp_path / "c.json").write_text('{"summary": {"correct": 1, "n": 2, "correct": 2}}')
    with pytest.raises(InputError, match=r"c\.json.*duplicate key 'correct'"):
        ceiling_from_certificate(tmp_path / "c.json")


def test_a_json_protocol_file_with_a_duplicate_key_is_refused(tmp_path):
    p = tmp_path / "p.json"
    p.write_text('{"protocol": {"name": "a", "name": "b"}, "views": [{"name": "front", '
                 '"rotation": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}]}')
    with pytest.raises(InputError, match=r"p\.json.*duplicate key 'name'"):
        read_protocol_file(p)
    code, out = invoke(["certify", "builtin:aflow:A_cF4_225_a", "--protocol", str(p), "--out", str(tmp_path / "o")])
    assert code == 2 and "duplicate key 'name'" in one_error(out)


def test_toml_refuses_duplicate_keys_itself(tmp_path):
    """tomllib raises on a key defined twice; the protocol reader and the manifest reader name the file and
    the line, and quote it, so the key is named (a TOML table is not JSON: no hook needed)."""
    p = tmp_path / "p.toml"
    p.write_text(f'[protocol]\nname = "a"\nname = "b"\n\n[[views]]\n{VIEW}')
    with pytest.raises(InputError, match=r"p\.toml.*not valid TOML.*line 3.*'name = \"b\"'"):
        read_protocol_file(p)
    m = tmp_path / "m.toml"
    m.write_text('[study]\nname = "s"\nname = "t"\n')
    code, out = invoke(["ladder", "--manifest", str(m), "--out", str(tmp_path / "l")])
    line = one_error(out)
    assert code == 2 and "m.toml" in line and "not valid TOML" in line and "line 3" in line
    assert line.endswith("""'name = "t"'""")


def test_an_item_list_with_a_duplicate_key_is_refused(tmp_path):
    from viewcert.attribution.table import read_items

    (tmp_path / "items.jsonl").write_text('{"material_id": "a", "crystal_system": "cubic"}\n'
                                          '{"material_id": "b", "material_id": "c"}\n')
    with pytest.raises(InputError, match=r"items\.jsonl line 2.*duplicate key 'material_id'"):
        read_items(tmp_path / "items.jsonl")


# ------------------------------------------------------------------------------------ unknown keys
@pytest.mark.parametrize("text,field,message", [
    ('[[views]]\nname = "v"\ndirection = [1, 0, 0]\nupp = [0, 0, 1]\n', "views[v].upp",
     "unknown key 'upp'; did you mean 'up'?"),
    (f'[protocol]\nheigth = 512\n\n[[views]]\n{VIEW}', "protocol.heigth",
     "unknown key 'heigth'; did you mean 'height'?"),
    (f'[[view]]\n{VIEW}', "view", "unknown key 'view'; did you mean 'views'?"),
    (f'[[views]]\n{VIEW}rotaton = 1\n', "views[front].rotaton", "unknown key 'rotaton'; did you mean 'rotation'?"),
    (f'[[views]]\n{VIEW}zzzz = 1\n', "views[front].zzzz",  # nothing close: every valid key is listed
     "unknown key 'zzzz'; valid keys: ase, ase_string, chimerax, direction, name, position, pymol, rotation, up"),
])
def test_an_unknown_protocol_key_is_refused_with_the_nearest_valid_key(tmp_path, text, field, message):
    p = tmp_path / "mine.toml"
    p.write_text(text)
    with pytest.raises(InputError) as exc:
        read_protocol_file(p)
    assert str(exc.value) == f"file {p}, field {field}: {message}"
    code, out = invoke(["certify", "builtin:aflow:A_cF4_225_a", "--protocol", str(p), "--out", str(tmp_path / "o")])
    assert code == 2 and message in one_error(out) and str(p) in one_error(out)


def test_refuse_unknown_keys_by_hand():
    refuse_unknown_keys(["up", "name"], ("name", "up"))  # all valid: nothing raised
    with pytest.raises(InputError, match=r"^file f, field t\.nmae: unknown key 'nmae'; did you mean 'name'\?$"):
        refuse_unknown_keys(["name", "nmae"], ("name", "up"), source="f", where="t")


# ------------------------------------------------------------------------------------ shipped protocols
@pytest.mark.parametrize("fmt", ["toml", "json"])
@pytest.mark.parametrize("name", [*PROTOCOL_NAMES, "fibonacci-7"])
def test_every_built_in_round_trips_through_protocol_show(tmp_path, name, fmt):
    code, out = invoke(["protocol", "show", name, "--format", fmt])
    assert code == 0, out
    p = tmp_path / f"{name}.{fmt}"
    p.write_text(out)
    spec = read_protocol_file(p)
    want = get_protocol(name)
    assert [v.name for v in spec.protocol.views] == [v.name for v in want.views]
    for got, ref in zip(spec.protocol.views, want.views, strict=True):
        assert np.array_equal(got.rotation, ref.rotation)  # bit-identical (shortest round-trip floats)


@pytest.mark.parametrize("path", sorted((REPO / "benchmarks" / "results").glob("*.toml")), ids=lambda p: p.name)
def test_the_shipped_protocol_files_read(path):
    spec = read_protocol_file(path)
    # the designer names its files by their view count K: design_protocol_K.toml, legibility-K.toml
    assert len(spec.protocol) == int(re.split(r"[_-]", path.stem)[-1])


# ------------------------------------------------------------------------ JSONL: one object per line
HARNESS = REPO / "tests" / "data" / "harness"
LMMS = HARNESS / "lmms_eval" / "acme__vlm-7b" / "20250611_103212_samples_e3_crystal_system_r3.jsonl"
NATIVE = HARNESS / "native" / "beta_lab-13b_noimage.jsonl"


def _twice(path: Path, out: Path, line: int, key: str, value) -> Path:
    """A copy of the JSONL ``path`` whose line ``line`` (1-based) defines ``key`` a second time, first."""
    lines = path.read_text().splitlines()
    assert f'"{key}":' in lines[line - 1]  # the key is there already: the copy defines it twice
    lines[line - 1] = "{" + json.dumps(key) + ": " + json.dumps(value) + ", " + lines[line - 1][1:]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.mark.parametrize("line", [1, 3])
@pytest.mark.parametrize("log,harness", [(NATIVE, "native"), (NATIVE, None), (LMMS, "lmms_eval"), (LMMS, None)],
                         ids=["native", "native-detected", "lmms-eval", "lmms-eval-detected"])
def test_a_harness_jsonl_line_with_a_duplicate_key_is_refused(tmp_path, log, harness, line):
    """Last-wins would silently score the second target; the reader names the file, the line and the key
    (line 1 also in harness detection, which reads the first record)."""
    from viewcert.attribution.readers import read_file

    p = _twice(log, tmp_path / log.parent.name / log.name, line, "target", "cubic")
    assert json.loads(p.read_text().splitlines()[line - 1])["target"] != "cubic"  # last-wins: the other one
    options = {"id_field": "material_id"} if log == LMMS else {}
    with pytest.raises(InputError) as exc:
        read_file(p, harness=harness, model="m", rung="R3", **options)
    assert str(exc.value) == (f"file {p}, field target: line {line}: duplicate key 'target' in one JSON object "
                              "(refused, never last-wins)")


def test_the_ladder_refuses_a_duplicate_key_in_a_harness_log_in_one_line(tmp_path):
    p = _twice(NATIVE, tmp_path / "log.jsonl", 2, "raw_output", "triclinic")
    (tmp_path / "m.toml").write_text(f'[study]\nname = "s"\ntask = "crystal_system"\nr1 = "1"\n\n[[input]]\n'
                                     f'path = "{p}"\nmodel = "m"\nrung = "R4"\n')
    code, out = invoke(["ladder", "--manifest", str(tmp_path / "m.toml"), "--out", str(tmp_path / "l")])
    line = one_error(out)
    assert code == 2 and "log.jsonl" in line and "line 2: duplicate key 'raw_output'" in line
    assert not (tmp_path / "l").exists() or not any((tmp_path / "l").iterdir())


def test_an_export_read_back_refuses_a_duplicate_key(tmp_path):
    """benchmark.jsonl of an export, the constraints and prompt JSONL of the adherence rungs."""
    from viewcert.attribution.adherence import read_item_constraints
    from viewcert.attribution.diagnostics import read_prompts
    from viewcert.attribution.shipped import load_shipped

    (tmp_path / "ids.csv").write_text("index,id,source_id\n0,a,a\n1,b,b\n")
    (tmp_path / "benchmark.jsonl").write_text('{"id": "a", "answer": "cubic", "question": "q", "constraints": []}\n'
                                              '{"id": "b", "answer": "cubic", "question": "q", "answer": "triclinic"}\n')
    want = "line 2: duplicate key 'answer' in one JSON object"
    for read in (lambda: load_shipped(tmp_path), lambda: read_item_constraints(tmp_path / "benchmark.jsonl"),
                 lambda: read_prompts(tmp_path / "benchmark.jsonl", ["a", "b"])):
        with pytest.raises(InputError, match="benchmark.jsonl") as exc:
            read()
        assert want in str(exc.value) and "field answer" in str(exc.value)


def test_a_study_layout_with_a_duplicate_key_is_one_line(tmp_path):
    """eval.jsonl of the study layout (an item list: which items, which labels) and structures.json."""
    from tests.support.hostile.corpus import GOOD_CIF

    s = tmp_path / "s"
    s.mkdir()
    (s / "structures.json").write_text(json.dumps({"a": {"cif": GOOD_CIF}}))
    (s / "eval.jsonl").write_text('{"material_id": "a", "material_id": "b"}\n')
    code, out = invoke(["certify", str(s), "--workers", "1", "--out", str(tmp_path / "o")])
    assert code == 2 and "eval.jsonl" in one_error(out) and "line 1: duplicate key 'material_id'" in one_error(out)
    (s / "eval.jsonl").write_text('{"material_id": "a"}\n')
    (s / "structures.json").write_text('{"a": {"cif": "x"}, "a": {"cif": "y"}}')
    code, out = invoke(["certify", str(s), "--workers", "1", "--out", str(tmp_path / "o")])
    assert code == 2 and "structures.json" in one_error(out) and "duplicate key 'a'" in one_error(out)


def test_lmms_id_map_inspect_json_and_eval_members_refuse_duplicate_keys(tmp_path):
    import zipfile

    from viewcert.attribution.readers import read_file

    (tmp_path / "map.json").write_text('{"0": "mp-1", "0": "mp-2"}')
    with pytest.raises(InputError, match=r"map\.json.*duplicate key '0'"):
        read_file(LMMS, harness="lmms_eval", model="m", rung="R3", id_map=tmp_path / "map.json")
    (tmp_path / "log.json").write_text('{"eval": {"task": "t"}, "eval": {"task": "u"}, "samples": []}')
    with pytest.raises(InputError, match=r"log\.json.*duplicate key 'eval'"):
        read_file(tmp_path / "log.json", harness="inspect", model="m", rung="R3")
    with zipfile.ZipFile(tmp_path / "log.eval", "w") as zf:
        zf.writestr("header.json", '{"version": 2, "eval": {"task": "t"}, "version": 3}')
    with pytest.raises(InputError, match=r"log\.eval:header\.json.*duplicate key 'version'"):
        read_file(tmp_path / "log.eval", harness="inspect", model="m", rung="R3")
