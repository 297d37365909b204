"""The ladder manifest (``viewcert.formats.ladder``, issue 41 item 1): one typed value, its reader and its writer.
The expected bytes are written out by hand from the format (TOML basic strings with JSON's ASCII escapes, one empty
line after every table), not taken from the writer."""

from __future__ import annotations

import tomllib

import pytest

from viewcert.errors import InputError
from viewcert.formats.ladder import (
    LadderInput,
    LadderManifest,
    ladder_manifest_of,
    ladder_manifest_text,
    read_ladder_manifest,
    write_ladder_manifest,
)

MANIFEST = LadderManifest(
    inputs=(LadderInput(path="/abs/frontier__g__m__K3.json", rung="R4", harness="study", run="frontier-K3"),
            LadderInput(path="cell_forest/predictions.csv", rung="learned-cell-metrics", model="viewcert/forest",
                        harness="native", run="cell_forest", options={"id_column": "material_id"})),
    name="learned readers: data/é3", task="crystal-system", items="/abs/eval.jsonl")

TEXT = """[study]
name = "learned readers: data/\\u00e93"
task = "crystal-system"
items = "/abs/eval.jsonl"

[[input]]
path = "/abs/frontier__g__m__K3.json"
rung = "R4"
harness = "study"
run = "frontier-K3"

[[input]]
path = "cell_forest/predictions.csv"
model = "viewcert/forest"
rung = "learned-cell-metrics"
harness = "native"
run = "cell_forest"
id_column = "material_id"
"""


def test_writer_bytes_hand_written(tmp_path):
    assert ladder_manifest_text(MANIFEST) == TEXT
    p = write_ladder_manifest(tmp_path / "ladder.toml", MANIFEST)
    assert p.read_bytes() == TEXT.encode()


def test_reader_reads_the_writers_file_back_exactly(tmp_path):
    p = write_ladder_manifest(tmp_path / "ladder.toml", MANIFEST)
    assert read_ladder_manifest(p) == MANIFEST
    d = tomllib.loads(TEXT)
    assert ladder_manifest_of(d).to_dict() == d  # the exact round trip of what TOML holds


@pytest.mark.parametrize(("text", "field"), [
    ('[study]\nname = "a"\nname = "b"\n[[input]]\npath = "x"\nrung = "R4"\n', None),  # a key defined twice
    ('[study]\nname = "a"\n', "input"),
    ('[[input]]\npath = "x"\n', "input[0].rung"),
    ('[[input]]\npath = "x"\nrung = 4\n', "input[0].rung"),
    ('[[input]]\npath = "x"\nrung = "R4"\nharness = "excel"\n', "input[0].harness"),
    ('study = 3\n[[input]]\npath = "x"\nrung = "R4"\n', "study"),
    ('[study]\nbenchmark = 1\n[[input]]\npath = "x"\nrung = "R4"\n', "benchmark"),
])
def test_bad_manifests_are_one_input_error_naming_the_field(tmp_path, text, field):
    p = tmp_path / "m.toml"
    p.write_text(text)
    with pytest.raises(InputError) as exc:
        read_ladder_manifest(p)
    assert exc.value.source == str(p) and exc.value.field == field


def test_writer_refuses_a_value_toml_text_cannot_hold_as_written(tmp_path):
    bad = LadderManifest(inputs=(LadderInput(path="x", rung="R4", options={"id_map": {"a": "b"}}),))
    with pytest.raises(InputError, match="id_map"):
        ladder_manifest_text(bad)
