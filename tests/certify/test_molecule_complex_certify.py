"""complex:PATH as a certify input (ligand + pocket, viewcert.io.complex) on a real X-ray complex (skipped when
../shared/data/complexes is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.complex_data import COMPLEXES as DATA
from tests.support.complex_data import needs_complexes as needs_data
from viewcert.certify import CertifyConfig
from viewcert.certify.digests import cell_digest
from viewcert.certify.inputs import load_input, parse_complex_spec
from viewcert.certify.run import certify
from viewcert.errors import InputError


def test_parse_complex_spec_hand_worked():
    assert parse_complex_spec("complex:/d/1pwc#ligand=PNM,pocket=4") == (Path("/d/1pwc"), "PNM", 4.0)
    assert parse_complex_spec("complex:/d/1ia1") == (Path("/d/1ia1"), None, 8.0)
    assert parse_complex_spec("complex:x#ligand=HEM/A/201") == (Path("x"), "HEM/A/201", 8.0)
    for bad, field in (("complex:x#lig=PNM", "ligand=RES"), ("complex:x#pocket=far", "pocket"), ("complex:", "path")):
        with pytest.raises(InputError, match=field):
            parse_complex_spec(bad)


@needs_data
def test_certify_complex_pnm_pocket(tmp_path):
    spec = f"complex:{DATA / '1pwc'}#ligand=PNM,pocket=4"
    cert = certify(spec, CertifyConfig(protocol="axes-3", molecule_cross_check=False), out=tmp_path / "o",
                   n_workers=1, plots=False, progress=False).to_dict()  # the JSON object written
    assert_certificate_consistent(cert)
    (item,) = cert["items"]
    assert item["id"] == "1pwc:PNM:pocket4" and item["periodic"] is False
    from viewcert.io.complex import prepare_complex

    prep = prepare_complex(DATA / "1pwc", ligand="PNM", pocket=4)
    assert item["cell_sha256"] == cell_digest(prep.structure)  # the certified molecule is prepare_complex's
    assert len(prep.ligand_atoms) == 23  # penicillin G C16H18N2O4S: 16 + 2 + 4 + 1 heavy atoms
    assert item["n_atoms"] == prep.structure.n_atoms > 23  # the pocket residues are in
    assert cert["inputs"]["spec"] == spec and cert["inputs"]["kind"] == "complex"
    assert item["molecule"]["truth"] == "input"


@needs_data
def test_cli_ligand_pocket_and_bad_ligand(tmp_path):
    from viewcert.cli import app

    runner = CliRunner()
    base = ["certify", f"complex:{DATA / '1pwc'}", "--protocol", "axes-3", "--workers", "1", "--no-plots"]
    r = runner.invoke(app, [*base, "--ligand", "PNM", "--pocket", "4", "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    cert = json.loads((tmp_path / "a" / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert cert["inputs"]["spec"].endswith("1pwc#ligand=PNM,pocket=4") and cert["items"][0]["id"] == "1pwc:PNM:pocket4"
    r = runner.invoke(app, [*base, "--ligand", "XYZ", "--pocket", "4", "--out", str(tmp_path / "b")])
    assert r.exit_code == 1 and "ligand 'XYZ' is not in the file" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["certify", "builtin:molecules", "--ligand", "PNM", "--out", str(tmp_path / "c")])
    assert r.exit_code == 2 and "--ligand/--pocket apply to a complex:PATH input" in r.output
    assert "Traceback" not in r.output


def test_missing_complex_is_input_error(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_input(f"complex:{tmp_path / 'nope'}#ligand=PNM")


@needs_data
def test_verify_trusts_a_complex_inside_inputs_and_refuses_it_outside(tmp_path):
    from viewcert.certify.verify import verify_certificate

    spec = f"complex:{DATA / '1pwc'}#ligand=PNM,pocket=4"
    certify(spec, CertifyConfig(protocol="axes-3", molecule_cross_check=False), out=tmp_path / "o",
            n_workers=1, plots=False, progress=False)
    rep = verify_certificate(tmp_path / "o" / "certificate.json", inputs_root=DATA.parent, n_workers=1,
                             progress=False)
    assert rep.ok and not rep.input_changes
    with pytest.raises(InputError, match="outside the trusted folder"):
        verify_certificate(tmp_path / "o" / "certificate.json", inputs_root=tmp_path, n_workers=1, progress=False)
