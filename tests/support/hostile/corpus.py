"""The hostile-input corpus (issue 11): every command and reader fed what a careless user or an attacker
would give it. Each case: the files it needs (written under a fresh folder), the command line (``{d}`` is
that folder, ``{broken}`` the checked-in broken structure files, ``{cert}`` a valid certificate's folder),
the exit code expected and a fragment the one-line message must contain.

Exit codes (``viewcert.cli``): 2 = bad input, option or resource limit, nothing computed; 1 = the run wrote
its outputs but some items could not be read or certified (reported apart, never in R1's denominator).
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from viewcert.formats.records import sealed

BROKEN = Path(__file__).resolve().parents[2] / "data" / "broken"

GOOD_CIF = """data_NaCl
_cell_length_a 5.64
_cell_length_b 5.64
_cell_length_c 5.64
_cell_angle_alpha 90
_cell_angle_beta 90
_cell_angle_gamma 90
_symmetry_space_group_name_H-M 'P 1'
loop_
_atom_site_label
_atom_site_type_symbol
_atom_site_fract_x
_atom_site_fract_y
_atom_site_fract_z
Na1 Na 0 0 0
Cl1 Cl 0.5 0.5 0.5
"""
GOOD_CIF_2 = GOOD_CIF.replace("data_NaCl", "data_CsCl").replace("Na1 Na", "Cs1 Cs").replace("5.64", "4.12")


def _zip(members: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _manifest(path: str, harness: str) -> str:
    return (f'[study]\nname = "hostile"\ntask = "crystal_system"\nr1 = "1"\n\n[[input]]\npath = "{path}"\n'
            f'harness = "{harness}"\nmodel = "m/x"\nrung = "R4"\n')


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]
    code: int
    message: str
    files: dict = field(default_factory=dict)  # relative path -> str | bytes


C: list[Case] = []


def case(name, argv, code, message, files=None):
    C.append(Case(name, tuple(argv), code, message, dict(files or {})))


# --- every checked-in broken structure file, through certify (the item is reported apart, exit 1) -------------
_BROKEN_MESSAGES = {
    "POSCAR_wrong_count": "atom counts", "cif_bad_number.cif": "_atom_site_fract_y",
    "cif_bad_symop.cif": "symmetry operation", "cif_close_atoms.cif": "apart",
    "cif_missing_cell_length.cif": "_cell_length_b", "cif_nan_coordinate.cif": "not finite",
    "cif_negative_length.cif": "_cell_length_a", "cif_no_atoms.cif": "no atoms",
    "cif_occupancy_over_one.cif": "occupancy", "cif_partial_occupancy.cif": "partial occupancy",
    "cif_same_site.cif": "same position", "cif_truncated.cif": "syntax", "cif_unknown_element.cif": "'Xx'",
    "cif_zero_volume.cif": "zero-volume", "pdb_no_atoms.pdb": "no atoms", "poscar_bad_lattice.vasp": "lattice",
    "sdf_2d_depiction.sdf": "2D coordinates", "sdf_malformed.sdf": "malformed molecule record",
    "structure.unknownext": "unknown structure file extension", "xyz_bad_count.xyz": "atom count",
    "xyz_non_numeric.xyz": "not a number", "xyz_too_few_atoms.xyz": "atom lines",
    "xyz_unknown_element.xyz": "'Qq'",
}
for _f, _m in _BROKEN_MESSAGES.items():
    # a single file that is no structure file at all is bad input, one line, exit 2 (issue 57 item 9)
    case(f"certify-broken-{_f}", ["certify", f"{{broken}}/{_f}", "--workers", "1", "--no-plots", "--out", "{d}/o"],
         2 if _f == "structure.unknownext" else 1, _m)

# --- more structure files, generated ----------------------------------------------------------------------
_W = ["--workers", "1", "--no-plots", "--out", "{d}/o"]
case("cif-empty", ["certify", "{d}/empty.cif", *_W], 1, "no data block", {"empty.cif": ""})
case("cif-two-blocks", ["certify", "{d}/two.cif", *_W], 1, "2 data blocks with atoms",
     {"two.cif": GOOD_CIF + "\n" + GOOD_CIF_2})
case("cif-1e300", ["certify", "{d}/far.cif", *_W], 1, "beyond 1e6",
     {"far.cif": GOOD_CIF.replace("Cl1 Cl 0.5 0.5 0.5", "Cl1 Cl 1e300 0.5 0.5")})
case("cif-binary", ["certify", "{d}/bin.cif", *_W], 1, "bin.cif", {"bin.cif": bytes(range(256)) * 4})
# a Latin-1 byte in a comment is harmless: a valid result, not an error
case("cif-latin1-comment", ["certify", "{d}/l1.cif", *_W], 0, "certificate digest",
     {"l1.cif": GOOD_CIF.encode() + b"# caf\xe9\n"})
case("xyz-nan", ["certify", "{d}/nan.xyz", *_W], 1, "nan.xyz", {"nan.xyz": "2\n\nC 0 0 0\nO nan 0 0\n"})
case("xyz-huge", ["certify", "{d}/big.xyz", *_W], 1, "from the origin", {"big.xyz": "2\n\nC 0 0 0\nO 1e300 0 0\n"})
case("poscar-negative-count", ["certify", "{d}/POSCAR", *_W], 1, "POSCAR",
     {"POSCAR": "x\n1.0\n3 0 0\n0 3 0\n0 0 3\nNa\n-1\nDirect\n0 0 0\n"})
case("pdb-garbage", ["certify", "{d}/g.pdb", *_W], 1, "g.pdb", {"g.pdb": "HELLO WORLD\n" * 5})
case("sdf-empty", ["certify", "{d}/e.sdf", *_W], 1, "e.sdf", {"e.sdf": ""})
case("limit-atoms", ["--max-atoms", "1", "certify", "{d}/a.cif", *_W], 1, "max_atoms", {"a.cif": GOOD_CIF})
case("limit-observations", ["--max-observations", "9", "certify", "{d}/a.cif", "--tiling", "1,1,1", *_W], 1,
     "max_observations", {"a.cif": GOOD_CIF})  # 2 atoms × 5 views = 10 > 9 (one cell: the default tiling is 2,2,2)
case("limit-observations-exact", ["--max-observations", "10", "certify", "{d}/a.cif", "--tiling", "1,1,1", *_W], 0,
     "certificate digest", {"a.cif": GOOD_CIF})  # = 10 passes (limits are inclusive); the 2x1x1 tiling below doubles it
case("limit-observations-tiled", ["--max-observations", "10", "certify", "{d}/a.cif", "--tiling", "2,1,1", *_W], 1,
     "max_observations", {"a.cif": GOOD_CIF})
case("limit-bad-value", ["--max-atoms", "0", "certify", "{d}/a.cif", *_W], 2, "max_atoms", {"a.cif": GOOD_CIF})

# --- certify: inputs, layouts and options -------------------------------------------------------------------
case("certify-missing", ["certify", "{d}/nope", *_W], 2, "does not exist")
case("certify-out-is-file", ["certify", "{d}/a.cif", "--workers", "1", "--out", "{d}/file"], 2,
     "exists and is not a folder", {"a.cif": GOOD_CIF, "file": "x"})
case("certify-fibonacci-100000", ["certify", "{d}/a.cif", "--protocol", "fibonacci-100000", *_W], 2, "max_views",
     {"a.cif": GOOD_CIF})
case("certify-tiling-1000", ["certify", "{d}/a.cif", "--tiling", "1000,1000,1000", *_W], 2, "max_tiling",
     {"a.cif": GOOD_CIF})
# a negative angle tolerance is spglib's own rule (recorded as -1; issue 23), so it certifies; NaN, 0 and more
# than 90 degrees are refused
case("certify-angle-negative", ["certify", "{d}/a.cif", "--angle-tolerance", "-5", *_W], 0, "certificate digest",
     {"a.cif": GOOD_CIF})
case("certify-angle-nan", ["certify", "{d}/a.cif", "--angle-tolerance", "nan", *_W], 2, "angle_tolerance",
     {"a.cif": GOOD_CIF})
case("certify-angle-zero", ["certify", "{d}/a.cif", "--angle-tolerance", "0", *_W], 2, "angle_tolerance",
     {"a.cif": GOOD_CIF})
case("certify-angle-over-90", ["certify", "{d}/a.cif", "--angle-tolerance", "91", *_W], 2, "(0, 90]",
     {"a.cif": GOOD_CIF})
case("certify-sigma-negative", ["certify", "{d}/a.cif", "--sigma", "-1", *_W], 2, "sigma", {"a.cif": GOOD_CIF})
case("certify-empty-folder", ["certify", "{d}/empty", *_W], 2, "no structure files", {"empty/README": "x"})
case("study-eval-not-utf8", ["certify", "{d}/s", *_W], 2, "not UTF-8",
     {"s/structures.json": json.dumps({"a": {"cif": GOOD_CIF}}), "s/eval.jsonl": b'{"material_id": "\xff"}\n'})
case("study-structures-garbage", ["certify", "{d}/s", *_W], 2, "not valid JSON",
     {"s/structures.json": "{not json", "s/eval.jsonl": '{"material_id": "a"}\n'})
case("study-structures-list", ["certify", "{d}/s", *_W], 2, "JSON object",
     {"s/structures.json": "[1, 2]", "s/eval.jsonl": '{"material_id": "a"}\n'})
case("study-eval-no-id", ["certify", "{d}/s", *_W], 2, "material_id",
     {"s/structures.json": json.dumps({"a": {"cif": GOOD_CIF}}), "s/eval.jsonl": '{"id": "a"}\n'})
case("study-eval-bad-line", ["certify", "{d}/s", *_W], 2, "line 2",
     {"s/structures.json": json.dumps({"a": {"cif": GOOD_CIF}}), "s/eval.jsonl": '{"material_id": "a"}\n{oops\n'})
case("study-cif-not-text", ["certify", "{d}/s", *_W], 2, "no CIF text",
     {"s/structures.json": json.dumps({"a": {"cif": 5}}), "s/eval.jsonl": '{"material_id": "a"}\n'})
case("folder-labels-garbage", ["certify", "{d}/f", *_W], 2, "labels.json",
     {"f/a.cif": GOOD_CIF, "f/labels.json": "[["})

# --- observe ----------------------------------------------------------------------------------------------------
_O = ["--out", "{d}/o"]
case("observe-missing", ["observe", "{d}/nope", *_O], 2, "does not exist")
case("observe-bad-file", ["observe", "{broken}/cif_bad_number.cif", *_O], 1, "_atom_site_fract_y")
case("observe-folder-with-bad", ["observe", "{d}/f", *_O], 1, "unknown element",
     {"f/a.cif": GOOD_CIF, "f/b.xyz": "1\n\nZz 0 0 0\n"})
case("observe-fibonacci", ["observe", "{d}/a.cif", "--protocol", "fibonacci-100000", *_O], 2, "max_views",
     {"a.cif": GOOD_CIF})
case("observe-tiling", ["observe", "{d}/a.cif", "--tiling", "1000,1000,1000", *_O], 2, "max_tiling",
     {"a.cif": GOOD_CIF})
case("observe-out-is-file", ["observe", "{d}/a.cif", "--out", "{d}/file"], 2, "not a folder",
     {"a.cif": GOOD_CIF, "file": "x"})
case("observe-bad-tiling", ["observe", "{d}/a.cif", "--tiling", "a,b", *_O], 2, "tiling", {"a.cif": GOOD_CIF})

# --- render, build-benchmark, gallery -------------------------------------------------------------------------
_R = ["--out", "{d}/r"]
case("render-size-60000", ["render", "{d}/a.cif", "--size", "60000", *_R], 2, "max_pixels", {"a.cif": GOOD_CIF})
case("render-tiling", ["render", "{d}/a.cif", "--tiling", "1000,1000,1000", *_R], 2, "max_tiling",
     {"a.cif": GOOD_CIF})
case("render-fibonacci", ["render", "{d}/a.cif", "--protocol", "fibonacci-100000", *_R], 2, "max_views",
     {"a.cif": GOOD_CIF})
case("render-bad-file", ["render", "{broken}/xyz_bad_count.xyz", *_R], 1, "atom count")
case("render-out-is-file", ["render", "{d}/a.cif", "--out", "{d}/file"], 2, "not a folder",
     {"a.cif": GOOD_CIF, "file": "x"})
case("render-unknown-style", ["render", "{d}/a.cif", "--style", "cartoon", *_R], 2, "style", {"a.cif": GOOD_CIF})
case("benchmark-size", ["build-benchmark", "{d}/a.cif", "--size", "60000", "--out", "{d}/b"], 2, "max_pixels",
     {"a.cif": GOOD_CIF})
case("benchmark-tiling", ["build-benchmark", "{d}/a.cif", "--tiling", "1000,1,1", "--out", "{d}/b"], 2,
     "max_tiling", {"a.cif": GOOD_CIF})
case("benchmark-out-is-file", ["build-benchmark", "{d}/a.cif", "--out", "{d}/file"], 2, "not a folder",
     {"a.cif": GOOD_CIF, "file": "x"})
case("gallery-huge-tiles", ["gallery", "--tile-px", "100000", "--out", "{d}/g.png"], 2, "max_pixels")

# --- sweep ------------------------------------------------------------------------------------------------------
_S = ["--workers", "1", "--out", "{d}/s"]
case("sweep-sigma-negative", ["sweep", "{d}/a.cif", "--sigmas", "-1", *_S], 2, "sigmas", {"a.cif": GOOD_CIF})
case("sweep-delta-zero", ["sweep", "{d}/a.cif", "--deltas", "0", *_S], 2, "deltas", {"a.cif": GOOD_CIF})
case("sweep-seeds-zero", ["sweep", "{d}/a.cif", "--sigmas", "0.01", "--seeds", "0", *_S], 2, "seeds",
     {"a.cif": GOOD_CIF})
case("sweep-sigma-px", ["sweep", "{d}/a.cif", "--sigmas", "1", "--sigma-unit", "px", *_S], 2, "sigma_unit",
     {"a.cif": GOOD_CIF})
case("sweep-fibonacci", ["sweep", "{d}/a.cif", "--protocol", "axes-3,fibonacci-100000", *_S], 2, "max_views",
     {"a.cif": GOOD_CIF})
case("sweep-unreadable-item", ["sweep", "{d}/f", "--deltas", "0.01,0.1", *_S], 1, "item error: item b",
     {"f/a.cif": GOOD_CIF, "f/b.cif": ""})
case("sweep-only-unreadable", ["sweep", "{d}/b.cif", "--deltas", "0.01", *_S], 1, "no data block", {"b.cif": ""})
case("sweep-not-numbers", ["sweep", "{d}/a.cif", "--deltas", "x", *_S], 2, "deltas", {"a.cif": GOOD_CIF})

# --- verify (certificates from elsewhere) ---------------------------------------------------------------------
case("verify-missing", ["verify", "{d}/nope.json"], 2, "cannot read certificate")
case("verify-not-json", ["verify", "{d}/c.json"], 2, "cannot read certificate", {"c.json": "{"})
case("verify-not-utf8", ["verify", "{d}/c.json"], 2, "cannot read certificate", {"c.json": b'{"a": "\xff"}'})
case("verify-not-object", ["verify", "{d}/c.json"], 2, "not a JSON object", {"c.json": "[1]"})
case("verify-wrong-format", ["verify", "{d}/c.json"], 2, "format", {"c.json": '{"format": "x"}'})
# the cases below edit a real certificate (see tests/trust/test_hostile.py: "{cert}" variants)

# --- harness files (ladder) and the extraction audit ------------------------------------------------------------
_L = ["ladder", "--manifest", "{d}/m.toml", "--out", "{d}/l"]
case("ladder-manifest-missing", ["ladder", "--manifest", "{d}/none.toml", "--out", "{d}/l"], 2, "manifest not found")
case("ladder-manifest-not-utf8", _L, 2, "not UTF-8", {"m.toml": b"[study]\nname = \"\xff\"\n"})
case("ladder-manifest-not-toml", _L, 2, "not valid TOML", {"m.toml": "[study\n"})
case("ladder-xlsx-corrupt", _L, 2, "bad.xlsx",
     {"m.toml": _manifest("bad.xlsx", "vlmevalkit"), "bad.xlsx": b"PK\x03\x04" + b"\x00" * 200})
case("ladder-xlsx-not-zip", _L, 2, "bad.xlsx",
     {"m.toml": _manifest("bad.xlsx", "vlmevalkit"), "bad.xlsx": "index\tprediction\n1\tA\n"})
case("ladder-xlsx-zip-not-workbook", _L, 2, "bad.xlsx",
     {"m.toml": _manifest("bad.xlsx", "vlmevalkit"), "bad.xlsx": _zip({"hello.txt": b"hi"})})
case("ladder-xlsx-truncated", _L, 2, "bad.xlsx",
     {"m.toml": _manifest("bad.xlsx", "vlmevalkit"), "bad.xlsx": "TRUNCATE:AcmeVLM-7B_E3CrystalSystem_exact_matching_result.xlsx"})
case("ladder-jsonl-not-utf8", _L, 2, "bad.jsonl",
     {"m.toml": _manifest("bad.jsonl", "native"), "bad.jsonl": b'{"id": "\xff\xfe", "answer": "A"}\n'})
case("ladder-lmms-not-utf8", _L, 2, "bad.jsonl",
     {"m.toml": _manifest("bad.jsonl", "lmms_eval"), "bad.jsonl": b'{"doc_id": 0, "resps": "\xff"}\n'})
case("ladder-eval-not-zip", _L, 2, "bad.eval", {"m.toml": _manifest("bad.eval", "inspect"), "bad.eval": "hello"})
case("ladder-eval-zip-bomb", _L, 2, "max_zip",
     {"m.toml": _manifest("bomb.eval", "inspect"),
      "bomb.eval": _zip({"header.json": b"{" + b" " * (3 << 20) + b"}"})})
case("ladder-study-garbage", _L, 2, "bad.json", {"m.toml": _manifest("bad.json", "study"), "bad.json": "[[["})
case("ladder-json-too-big", ["--max-json-bytes", "10", *_L], 2, "max_json_bytes",
     {"m.toml": _manifest("x.jsonl", "native"), "x.jsonl": '{"id": "a", "answer": "cubic"}\n'})
_A = ["audit-extraction", "--emitted", "{d}/e.json", "--structures", "{d}/s.json", "--out", "{d}/x"]
_S_JSON = json.dumps({"a": {"cif": GOOD_CIF}})
case("audit-structures-garbage", _A, 2, "s.json", {"e.json": '{"a": [["Na", 0, 0, 0]]}', "s.json": "{{{"})
case("audit-structures-list", _A, 2, "s.json", {"e.json": '{"a": [["Na", 0, 0, 0]]}', "s.json": "[1, 2, 3]"})
case("audit-element-Zz", _A, 2, "unknown element", {"e.json": '{"a": [["Zz", 0, 0, 0]]}', "s.json": _S_JSON})
case("audit-1e308", _A, 2, "beyond", {"e.json": '{"a": [["Na", 1e308, 0, 0]]}', "s.json": _S_JSON})
case("audit-emitted-not-utf8", _A, 2, "e.json", {"e.json": b'{"a": "\xff"}', "s.json": _S_JSON})
case("audit-emitted-missing", ["audit-extraction", "--emitted", "{d}/none.json", "--structures", "{d}/s.json",
                                "--out", "{d}/x"], 2, "none.json", {"s.json": _S_JSON})

case("audit-json-too-big", ["--max-json-bytes", "10", *_A], 2, "max_json_bytes",
     {"e.json": '{"a": [["Na", 0, 0, 0]]}', "s.json": _S_JSON})

# --- viewcert explore: a folder's certificate, benchmark.jsonl and sidecars are received ------------------------
_X = ["explore", "{d}/f", "--out", "{d}/site"]
# sealed: a digest that holds, and an item the task record accepts (n_consistent), so each case reaches the
# received field it plants (an undigested or untyped certificate is refused before, by every reader)
_TASK = json.dumps(sealed({"format": "viewcert.tasks.certificate", "items": [{"id": "q0", "n_consistent": 1}]}))
case("explore-no-certificate", _X, 2, "no certificate.json", {"f/items.csv": "id\n"})
case("explore-certificate-garbage", _X, 2, "certificate.json", {"f/certificate.json": "{{{"})
case("explore-certificate-duplicate-key", _X, 2, "duplicate", {"f/certificate.json": '{"format": 1, "format": 2}'})
case("explore-unknown-format", _X, 2, "not a certificate the explorer knows",
     {"f/certificate.json": '{"format": "<script>x</script>", "items": []}'})
case("explore-item-id-not-text", _X, 2, "item 0 has no text 'id'",
     {"f/certificate.json": '{"format": "viewcert.tasks.certificate", "items": [{"id": ["q0"]}]}'})
case("explore-image-escapes-folder", _X, 2, "leaves the folder",
     {"f/certificate.json": _TASK, "f/benchmark.jsonl": '{"id": "q0", "images": ["../../etc/passwd"]}\n'})
case("explore-images-not-a-list", _X, 2, "images must be a list",
     {"f/certificate.json": _TASK, "f/benchmark.jsonl": '{"id": "q0", "images": "a.png"}\n'})
case("explore-jsonl-garbage", _X, 2, "benchmark.jsonl", {"f/certificate.json": _TASK, "f/benchmark.jsonl": "{\n"})
case("explore-image-not-png", _X, 2, "cannot be read as a PNG",
     {"f/certificate.json": _TASK, "f/benchmark.jsonl": '{"id": "q0", "images": ["i.png"]}\n',
      "f/i.png": b"not a png"})
case("explore-inputs-missing", [*_X, "--inputs", "{d}/none"], 2, "not an existing folder", {"f/certificate.json": _TASK})
case("explore-json-too-big", ["--max-json-bytes", "10", *_X], 2, "max_json_bytes", {"f/certificate.json": _TASK})

CASES = tuple(C)


#: the checked-in VLMEvalKit harness files (``TRUNCATE:NAME`` cases cut one in half)
HARNESS = Path(__file__).resolve().parents[2] / "data" / "harness" / "vlmevalkit"


def write_case_files(d: Path, files: dict) -> None:
    """Write a corpus case's files under ``d`` (``TRUNCATE:NAME``: the first half of a checked-in harness file)."""
    for rel, content in files.items():
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str) and content.startswith("TRUNCATE:"):
            data = (HARNESS / content.split(":", 1)[1]).read_bytes()
            p.write_bytes(data[: len(data) // 2])
        elif isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)

