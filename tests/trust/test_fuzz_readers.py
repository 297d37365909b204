"""Property-based fuzzing of every reader (issue 11): a valid file, mutated (truncated, bytes replaced,
text inserted, lines dropped or repeated), must give a valid result or a clean ``InputError``, never another
exception. Readers: CIF, POSCAR, XYZ, PDB, SDF (``read_structure``), the five harness formats
(``attribution.readers.read_file``), and certificates (``formats.read`` + the settings ``verify`` would
recompute)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.hostile.corpus import GOOD_CIF
from viewcert.attribution.readers import read_file
from viewcert.certify import CertifyConfig
from viewcert.certify.certificate import certificate_text
from viewcert.certify.inputs import load_builtin
from viewcert.certify.run import run_certification
from viewcert.certify.verify import trusted_input
from viewcert.errors import InputError
from viewcert.formats.reader import read
from viewcert.formats.records import CeilingCertificate
from viewcert.io.read import read_structure
from viewcert.structures import Structure

HARNESS = Path(__file__).resolve().parents[1] / "data" / "harness"

POSCAR = "NaCl\n1.0\n5.64 0 0\n0 5.64 0\n0 0 5.64\nNa Cl\n1 1\nDirect\n0 0 0\n0.5 0.5 0.5\n"
XYZ = "3\nwater\nO 0.000 0.000 0.117\nH 0.000 0.757 -0.469\nH 0.000 -0.757 -0.469\n"
PDB = ("HETATM    1  O   HOH A   1       0.000   0.000   0.117  1.00  0.00           O\n"
       "HETATM    2  H1  HOH A   1       0.000   0.757  -0.469  1.00  0.00           H\n"
       "HETATM    3  H2  HOH A   1       0.000  -0.757  -0.469  1.00  0.00           H\nEND\n")
SDF = """water
  handmade 3D

  3  2  0  0  0  0  0  0  0  0999 V2000
    0.0000    0.0000    0.1170 O   0  0  0  0  0  0  0  0  0  0  0  0
    0.0000    0.7570   -0.4690 H   0  0  0  0  0  0  0  0  0  0  0  0
    0.0000   -0.7570   -0.4690 H   0  0  0  0  0  0  0  0  0  0  0  0
  1  2  1  0
  1  3  1  0
M  END
$$$$
"""
STRUCTURE_SEEDS = {"a.cif": GOOD_CIF, "a.vasp": POSCAR, "a.xyz": XYZ, "a.pdb": PDB, "a.sdf": SDF}

HARNESS_SEEDS = [  # (file, harness, reader options)
    ("native/beta_lab-13b_noimage.jsonl", "native", {}),
    ("native/beta_lab-13b_r3.csv", "native", {}),
    ("study/frontier__beta__lab-13b__K3.json", "study", {}),
    ("vlmevalkit/AcmeVLM-7B_E3CrystalSystem.tsv", "vlmevalkit", {"id_column": "material_id"}),
    ("vlmevalkit/AcmeVLM-7B_E3CrystalSystem_exact_matching_result.xlsx", "vlmevalkit", {"id_column": "material_id"}),
    ("lmms_eval/acme__vlm-7b/20250611_103212_samples_e3_crystal_system_r3.jsonl", "lmms_eval",
     {"id_field": "material_id"}),
    ("inspect/2025-06-11T10-32-12+00-00_e3-crystal-system-noimage_Hk3pQ2vR8sWm4nTzLj5bXc.eval", "inspect", {}),
    ("inspect/2025-06-11T10-32-12+00-00_e3-crystal-system-noimage_Hk3pQ2vR8sWm4nTzLj5bXc.json", "inspect", {}),
]

NOISE = st.sampled_from(["", "-", ".", "e", "E+999", "nan", "inf", "1e308", "-0", "\n", " ", "\t", "_", "'", '"',
                         "#", ";", "loop_", "data_x", "\x00", "\xff", "é", "{", "}", "[", "]", ",", ":", "999999999"])


@st.composite
def mutated(draw, seed: bytes) -> bytes:
    """``seed`` after 1-3 random edits."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["truncate", "replace", "insert", "drop_line", "repeat_line", "bytes"]))
        i = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "truncate":
            del data[i:]
        elif kind == "replace":
            j = min(len(data), i + draw(st.integers(1, 8)))
            data[i:j] = draw(NOISE).encode("utf-8", "surrogatepass")
        elif kind == "insert":
            data[i:i] = draw(NOISE).encode("utf-8")
        elif kind == "bytes":
            j = min(len(data), i + draw(st.integers(1, 16)))
            data[i:j] = draw(st.binary(min_size=1, max_size=16))
        else:
            lines = bytes(data).split(b"\n")
            k = draw(st.integers(0, max(len(lines) - 1, 0)))
            if lines:
                if kind == "drop_line":
                    del lines[k]
                else:
                    lines.insert(k, lines[k])
            data = bytearray(b"\n".join(lines))
    return bytes(data)


def _clean(call) -> None:
    """``call()`` returns or raises InputError: anything else fails the test (it would reach a user)."""
    try:
        call()
    except InputError:
        pass


@pytest.mark.parametrize("name", sorted(STRUCTURE_SEEDS))
def test_structure_seed_is_valid(name, tmp_path):
    p = tmp_path / name
    p.write_text(STRUCTURE_SEEDS[name])
    s = read_structure(p)
    assert isinstance(s, Structure) and s.n_atoms in (2, 3)


@pytest.mark.parametrize("name", sorted(STRUCTURE_SEEDS))
@settings(max_examples=40)
@given(data=st.data())
def test_structure_readers_fail_cleanly(name, data):
    blob = data.draw(mutated(STRUCTURE_SEEDS[name].encode()))
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / name
        p.write_bytes(blob)

        def call():
            s = read_structure(p)
            assert isinstance(s, Structure) and s.n_atoms >= 1

        _clean(call)


@pytest.mark.parametrize("rel,harness,opts", HARNESS_SEEDS, ids=[h[0].split("/")[-1][-30:] for h in HARNESS_SEEDS])
def test_harness_seed_is_valid(rel, harness, opts):
    table = read_file(HARNESS / rel, harness=harness, model="m/x", rung="R4", **opts)
    assert len(table) >= 1 and len(table.frame) == len(table)


@pytest.mark.parametrize("rel,harness,opts", HARNESS_SEEDS, ids=[h[0].split("/")[-1][-30:] for h in HARNESS_SEEDS])
@settings(max_examples=25)
@given(data=st.data())
def test_harness_readers_fail_cleanly(rel, harness, opts, data):
    src = HARNESS / rel
    blob = data.draw(mutated(src.read_bytes()))
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / src.name
        p.write_bytes(blob)
        _clean(lambda: read_file(p, harness=harness, model="m/x", rung="R4", **opts))
        _clean(lambda: read_file(p, model="m/x", rung="R4", **opts))  # detection too


@pytest.fixture(scope="module")
def certificate_bytes() -> bytes:
    ds = load_builtin("builtin:aflow:A_cF4_225_a")
    cert, _ = run_certification(ds, CertifyConfig(), n_workers=1, progress=False)
    return certificate_text(cert.to_dict()).encode()


def test_certificate_reader_fails_cleanly(certificate_bytes):
    @settings(max_examples=60)
    @given(data=st.data())
    def run(data):
        blob = data.draw(mutated(certificate_bytes))
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "c.json"
            p.write_bytes(blob)

            def call():
                cert = read(p, kind=CeilingCertificate)
                cfg = CertifyConfig.from_dict(cert.config.to_dict() if cert.config else cert.config)
                cfg.check_limits()
                trusted_input(cert, d)

            _clean(call)

    run()


@settings(max_examples=60)
@given(value=st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                          lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids,
                                                                                     max_size=3), max_leaves=8),
       key=st.sampled_from(["config", "inputs", "items", "location", "libraries", "format"]))
def test_certificate_fields_of_any_type_fail_cleanly(value, key):
    base = {"format": "viewcert-certificate/1", "inputs": {"spec": "x", "files": {}}, "config": {},
            "items": [], "libraries": {}}
    base[key] = value
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "c.json"
        p.write_text(json.dumps(base))

        def call():
            cert = read(p, kind=CeilingCertificate)
            CertifyConfig.from_dict(cert.config).check_limits()
            trusted_input(cert, d)

        _clean(call)


def test_mutation_strategy_changes_the_seed():
    """The fuzzer is not a no-op: a deterministic draw of edits differs from its seed."""
    seen = set()

    @settings(max_examples=20, database=None)
    @given(blob=mutated(b"abc\ndef\nghi\n"))
    def run(blob):
        seen.add(blob)

    run()
    assert len(seen - {b"abc\ndef\nghi\n"}) >= 5
