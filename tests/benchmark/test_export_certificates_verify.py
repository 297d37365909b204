"""Every certificate a benchmark export ships verifies clean: ``viewcert verify CERT --inputs DIR`` recomputes
exactly the export's questions (``inputs.selection``: a ``--limit`` subset, the molecules shown mirrored) and
exits 0; a tampered certificate (one item's outcome flipped, digest recomputed) is a difference naming the item.

Expected values are derived here, not read from the code: the first N ids in SHA-256 order of the id (the
export's documented order), the mirror rule (lowest bit of SHA-256(id + '/mirror')) and the mirror image
(x → min + max − x) written from their definitions.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.export_fixtures import WATER_XYZ as WATER
from tests.support.export_fixtures import export_cli
from viewcert.certify.certificate import write_certificate
from viewcert.certify.digests import cell_digest
from viewcert.certify.inputs import Selection, load_input
from viewcert.errors import InputError
from viewcert.formats.records import compute_digest
from viewcert.io.builtin import builtin
from viewcert.structures import Structure

# CHBrClF, a tetrahedral carbon with four different substituents: C1, chiral (chemistry)
CHBRCLF = ("5\nbromochlorofluoromethane\nC 0.000 0.000 0.000\nH 0.629 0.629 0.629\nBr -1.114 -1.114 1.114\n"
           "Cl 1.019 -1.019 -1.019\nF -0.780 0.780 -0.780\n")
# water (C2v): achiral, no handedness question


def _run(*args: str):
    return CliRunner().invoke(export_cli(), list(args))


def _sha_order(ids) -> list[str]:
    return sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())


def _mirrored(item_id: str) -> bool:
    """The export's documented mirror rule, from its definition."""
    return bool(hashlib.sha256(f"{item_id}/mirror".encode()).digest()[0] & 1)


def _export(out: Path, *args: str) -> dict:
    res = _run("build-benchmark", *args, "--size", "96", "--out", str(out))
    assert res.exit_code == 0, res.output
    cert = json.loads((out / "certificate.json").read_text(encoding="utf-8"))
    assert_certificate_consistent(cert)
    return cert


def _verify(cert: Path, inputs: Path):
    return _run("verify", str(cert), "--inputs", str(inputs), "--workers", "1")


def _tampered(cert: dict, out: Path) -> tuple[Path, str]:
    """``cert`` with its first item's outcome flipped and the digest recomputed (a well-formed lie)."""
    bad = json.loads(json.dumps(cert))
    it = bad["items"][0]
    it["correct"] = not it["correct"]
    it["outcome"] = "correct" if it["correct"] else "incorrect"
    bad["digest"]["value"] = compute_digest(bad)
    path = out / "tampered.json"
    write_certificate(path, bad)
    return path, it["id"]


@pytest.fixture(scope="module")
def crystal(tmp_path_factory):
    root = tmp_path_factory.mktemp("cs")
    return root, _export(root / "cs", "builtin:prototypes", "--limit", "3")


def test_limit_3_records_the_first_three_in_sha256_order(crystal):
    _, cert = crystal
    everything = [s.identifier for s in builtin("builtin:prototypes")]
    assert len(everything) == 20  # the built-in AFLOW prototypes (viewcert.io.builtin): a strict subset below
    want = set(_sha_order(everything)[:3])
    sel = cert["inputs"]["selection"]
    assert set(sel["ids"]) == want and sel["n"] == 3 and "shown" not in sel
    assert [it["id"] for it in cert["items"]] == [i for i in everything if i in want]  # input order
    assert cert["inputs"]["n_items"] == 3 and len(cert["inputs"]["files"]) == 20  # every input file hashed
    assert all("/" not in i for i in sel["ids"]) and "location" not in cert  # location-free


def test_limit_3_crystal_export_verifies_clean(crystal):
    root, _ = crystal
    res = _verify(root / "cs" / "certificate.json", root)
    assert res.exit_code == 0, res.output
    assert "verified: 3 items recomputed, byte-identical" in res.output
    assert "item not in certificate" not in res.output


def test_tampered_crystal_certificate_names_the_item(crystal):
    root, cert = crystal
    path, iid = _tampered(cert, root)
    res = _verify(path, root)
    assert res.exit_code == 1, res.output
    assert "digest: ok" in res.output  # the lie is well formed: only the recomputation catches it
    assert f"item {iid}: correct: certificate False vs recomputed True" in res.output
    assert "1 of 3 items differ" in res.output


@pytest.fixture(scope="module")
def molecules(tmp_path_factory):
    root = tmp_path_factory.mktemp("mol")
    return root, {task: _export(root / task, "builtin:molecules", "--task", task)
                  for task in ("point-group", "molecule-handedness")}


@pytest.mark.parametrize("task", ["point-group", "molecule-handedness"])
def test_molecular_export_verifies_clean(molecules, task):
    root, certs = molecules
    cert = certs[task]
    ids = [s.identifier for s in builtin("builtin:molecules")]
    assert cert["inputs"]["spec"] == "builtin:molecules" and cert["inputs"]["kind"] == "builtin"
    assert [it["id"] for it in cert["items"]] == ids  # all three have a question (chiral, C1: docs/molecules.md)
    res = _verify(root / task / "certificate.json", root)
    assert res.exit_code == 0, res.output
    assert f"verified: {len(ids)} items recomputed, byte-identical" in res.output


def test_handedness_records_the_mirror_rule_and_the_mirrored_molecules(molecules):
    _, certs = molecules
    cert = certs["molecule-handedness"]
    shown = cert["inputs"]["selection"]["shown"]
    ids = [s.identifier for s in builtin("builtin:molecules")]
    assert shown["items"] == {i: "mirror-x" for i in ids if _mirrored(i)}
    assert "SHA-256(id + '/mirror')" in shown["rule"] and "mirror-x" in shown["as"]
    by_id = {s.identifier: s for s in builtin("builtin:molecules")}
    for it in cert["items"]:
        s = by_id[it["id"]]
        if _mirrored(it["id"]):  # the certified molecule is the one shown: x → min + max − x
            pos = s.positions.copy()
            pos[:, 0] = pos[:, 0].min() + pos[:, 0].max() - pos[:, 0]
            s = Structure(pos, s.numbers)
        assert it["cell_sha256"] == cell_digest(s)


@pytest.mark.parametrize("task", ["point-group", "molecule-handedness"])
def test_tampered_molecular_certificate_names_the_item(molecules, task):
    root, certs = molecules
    path, iid = _tampered(certs[task], root / task)
    res = _verify(path, root)
    assert res.exit_code == 1, res.output
    flipped = next(it for it in json.loads(path.read_text())["items"] if it["id"] == iid)["correct"]
    assert f"item {iid}: correct: certificate {flipped} vs recomputed {not flipped}" in res.output


def test_a_folder_handedness_export_verifies_with_its_folder_trusted(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "chbrclf.xyz").write_text(CHBRCLF)
    (tmp_path / "in" / "water.xyz").write_text(WATER)
    cert = _export(tmp_path / "out", str(tmp_path / "in"), "--task", "molecule-handedness")
    assert [it["id"] for it in cert["items"]] == ["chbrclf"]  # water is achiral: no question, not certified
    assert cert["inputs"]["spec"] == "in" and set(cert["inputs"]["files"]) == {"chbrclf.xyz", "water.xyz"}
    res = _verify(tmp_path / "out" / "certificate.json", tmp_path)
    assert res.exit_code == 0, res.output
    assert "verified: 1 items recomputed, byte-identical" in res.output


def test_a_selected_id_not_in_the_input_is_an_input_change(crystal, tmp_path):
    _, cert = crystal
    bad = json.loads(json.dumps(cert))
    bad["inputs"]["selection"]["ids"][0] = "aflow:NOT_A_PROTOTYPE"
    bad["digest"]["value"] = compute_digest(bad)
    write_certificate(tmp_path / "c.json", bad)
    res = _verify(tmp_path / "c.json", tmp_path)
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "unknown item ids: ['aflow:NOT_A_PROTOTYPE']" in res.output


@pytest.mark.parametrize("sel, field", [
    ({"rule": "r", "ids": "aflow:A_cF4_225_a", "n": 1}, "inputs.selection"),
    ({"rule": "r", "ids": ["a", "a"], "n": 2}, "inputs.selection.ids"),
    ({"rule": "r", "ids": ["a"], "n": 5}, "inputs.selection.ids"),
    ({"rule": "r", "ids": ["a"], "n": 1, "shown": {"rule": "", "items": {"b": "mirror-x"}}},
     "inputs.selection.shown.items"),
    ({"rule": "r", "ids": ["a"], "n": 1, "shown": {"rule": "", "items": {"a": "rm -rf"}}},
     "inputs.selection.shown.items"),
])
def test_a_malformed_selection_is_refused_naming_the_field(sel, field):
    with pytest.raises(InputError) as exc:
        Selection.from_dict(sel)
    assert exc.value.field == field


def test_malformed_selection_via_cli_is_one_line_exit_2(crystal, tmp_path):
    _, cert = crystal
    bad = json.loads(json.dumps(cert))
    bad["inputs"]["selection"]["shown"] = {"rule": "", "items": {bad["items"][0]["id"]: "rotate"}}
    bad["digest"]["value"] = compute_digest(bad)
    write_certificate(tmp_path / "c.json", bad)
    res = _verify(tmp_path / "c.json", tmp_path)
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "inputs.selection.shown" in res.output


def test_selection_round_trip_and_the_shown_item_digest():
    sel = Selection("hand rule", ("ccd:IBP", "ccd:ATP"), (("ccd:IBP", "mirror-x"),), "a coin")
    assert Selection.from_dict(json.loads(json.dumps(sel.to_dict()))) == sel
    ds = load_input("builtin:molecules").with_selection(sel)
    assert [it.id for it in ds.items] == ["ccd:ATP", "ccd:IBP"]  # the input's order, not the selection's
    atp, ibp = ds.items
    raw = {it.id: it for it in load_input("builtin:molecules").items}
    assert atp.sha256 == raw["ccd:ATP"].sha256 and atp.shown == ""
    assert ibp.sha256 == hashlib.sha256(f"{raw['ccd:IBP'].sha256}:mirror-x".encode()).hexdigest()
    a, b = raw["ccd:IBP"].read().positions, ibp.read().positions
    np.testing.assert_allclose(b[:, 0], a[:, 0].min() + a[:, 0].max() - a[:, 0])
    np.testing.assert_array_equal(b[:, 1:], a[:, 1:])


def test_a_shard_fingerprint_tells_a_mirrored_selection_apart():
    from viewcert.certify import CertifyConfig
    from viewcert.certify.run import fingerprint

    ds, cfg = load_input("builtin:molecules"), CertifyConfig(protocol="axes-3")
    ids = tuple(it.id for it in ds.items)
    plain = ds.with_selection(Selection("r", ids))
    mirrored = ds.with_selection(Selection("r", ids, (("ccd:ATP", "mirror-x"),), "a coin"))
    prints = {fingerprint(ds, cfg), fingerprint(plain, cfg), fingerprint(mirrored, cfg)}
    assert len(prints) == 3  # a resumed run never reuses an item shown as read for one shown mirrored
