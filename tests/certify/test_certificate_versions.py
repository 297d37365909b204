"""Certificates written before a format change still verify (issue 19, item 3): the versioned reader.

The fixtures in ``tests/data/certificates/v1/`` are real /1 certificates written by the code of that format
(see the README there): received files, verified with only their ``inputs/`` folder trusted. Checked here:

- each of them verifies under the current code: identical results at the resolution /3 states (exit 0 from the CLI);
- the table of fields added since /1 (``versions.SINCE_V1``) names every field a recomputed certificate
  has and a /1 certificate lacks (key paths compared, independent of the table);
- a /1 certificate whose item the current truth rule scores otherwise (the sheared monoclinic cell: /1
  scored the standardised Pmm2 cell, the input is P2 at 0.5°, spglib asked directly) is reported as a
  difference naming the item and the reason, and nothing else differs outside the score it changes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import spglib
import typer
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.certify import CertifyConfig
from viewcert.certify.certificate import FORMAT
from viewcert.certify.inputs import load_input
from viewcert.certify.run import run_certification
from viewcert.certify.verify import verify_certificate
from viewcert.cli.certify import register
from viewcert.formats.reader import read
from viewcert.formats.records import CeilingCertificate
from viewcert.formats.versions import KEPT_IN_V1, SINCE_V1, SINCE_V2, V1, in_format

HERE = Path(__file__).parents[1] / "data" / "certificates" / "v1"
INPUTS = HERE / "inputs"
VERIFYING = ("crystals", "perspective", "observe_visible", "margin", "molecules", "sample", "sheared")


def _verify(name: str):
    return verify_certificate(HERE / f"{name}.json", inputs_root=INPUTS, n_workers=1, progress=False)


def test_the_fixtures_are_format_1_as_written():
    for name in (*VERIFYING, "sheared_raised"):
        cert = read(HERE / f"{name}.json", kind=CeilingCertificate)
        assert cert.format == V1 != FORMAT
        assert not cert.config.written("frame_on") and "policy" not in cert.protocol.camera


@pytest.mark.parametrize("name", VERIFYING)
def test_a_format_1_certificate_verifies(name):
    rep = _verify(name)
    assert rep.digest_ok and not rep.input_changes, rep.lines()
    # written at 9 significant digits (rounding noise included) before /3: the same results at the resolution
    # /3 states, never byte for byte (viewcert.resolution; issue 37)
    assert rep.ok and not rep.byte_identical, rep.lines()
    assert rep.n_items == len(json.loads((HERE / f"{name}.json").read_text())["items"])


def _cli_verify(name: str):
    app = typer.Typer()
    register(app)
    return CliRunner().invoke(app, ["verify", str(HERE / f"{name}.json"), "--inputs", str(INPUTS), "--workers", "1"])


@pytest.mark.parametrize("name, n", [("perspective", 4), ("molecules", 3)])
def test_verify_cli_exit_0_on_a_format_1_certificate(name, n):
    res = _cli_verify(name)
    assert res.exit_code == 0, res.output
    assert f"verified: {n} items recomputed, identical results" in res.output


def test_verify_cli_exit_1_names_the_item_scored_otherwise():
    res = _cli_verify("sheared_raised")
    assert res.exit_code == 1, res.output
    assert "item sheared: reasons: certificate [] vs recomputed ['symmetry_raised']" in res.output
    assert "1 of 1 items differ" in res.output and "Traceback" not in res.output


def _paths(node, prefix: str = "") -> set[str]:
    """Every key path of a JSON value; list elements as ``[]`` (so ``items[].x`` covers every item)."""
    out: set[str] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            p = f"{prefix}.{k}" if prefix else k
            out |= {p} | _paths(v, p)
    elif isinstance(node, list):
        for v in node:
            out |= _paths(v, f"{prefix}[]")
    return out


def _covered(path: str, listed: set[str]) -> bool:
    return any(path == p or path.startswith(p + ".") or path.startswith(p + "[]") for p in listed)


@pytest.mark.parametrize("name", ["sheared", "crystals", "molecules", "perspective"])
def test_the_table_names_every_field_added_since_format_1(name):
    old = read(HERE / f"{name}.json", kind=CeilingCertificate).to_dict()
    spec = old["inputs"]["spec"]
    ds = load_input(spec if spec.startswith("builtin:") else str(INPUTS / spec))
    cfg_d = {**old["config"], "frame_on": "centres"}
    if cfg_d.get("protocol_sha256"):
        cfg_d["protocol"] = str(INPUTS / cfg_d["protocol"])
    typed, _ = run_certification(ds, CertifyConfig.from_dict(cfg_d), n_workers=1, progress=False)
    new = typed.to_dict()  # the JSON object: its key paths against the older formats'
    assert_certificate_consistent(new)
    added = {p for p in _paths(new) - _paths(old) if not p.startswith(("location", "digest"))}
    listed = {c.path for c in (*SINCE_V1, *SINCE_V2)}
    assert added and all(_covered(p, listed) for p in added), sorted(added)
    back = _paths(in_format(new, V1))
    dropped = {c.path for c in SINCE_V1 if c.action == "drop"}
    assert not {p for p in back if _covered(p, dropped)}


def test_the_sheared_cell_is_what_the_readme_says():
    """spglib itself on the input cell (the fixture's CIF) at symprec 0.01 Å: P2 at 0.5°, Pmm2 at 5°."""
    b = math.radians(90.655)
    lat = np.array([[5.0, 0, 0], [0, 6.0, 0], [4.3 * math.cos(b), 0, 4.3 * math.sin(b)]])
    frac = np.array([[0, 0.1, 0], [0, 0.35, 0.5], [0.5, 0.6, 0], [0.5, 0.85, 0.5]])
    cell = (lat, frac, [6, 7, 8, 14])
    assert spglib.get_symmetry_dataset(cell, symprec=0.01, angle_tolerance=0.5).number == 3
    assert spglib.get_symmetry_dataset(cell, symprec=0.01, angle_tolerance=5.0).number == 25
    assert "90.655" in (INPUTS / "sheared" / "sheared.cif").read_text()


def test_a_format_1_item_scored_otherwise_now_is_reported():
    """/1 labelled the standardised cell (Pmm2 = 25) and scored it correct; the truth is now the input's
    label at the certificate's own 0.5° (P2 = 3): verify names the item, the flag and the reason."""
    old = read(HERE / "sheared_raised.json", kind=CeilingCertificate)
    (it,) = old.items
    assert old.config.angle_tolerance == 0.5 and old.config.std_angle_tolerance == 5.0
    assert it.label_rendered["space_group"] == 25 and it.correct is True
    rep = _verify("sheared_raised")
    assert rep.digest_ok and not rep.input_changes and not rep.ok
    assert list(rep.item_diffs) == ["sheared"]
    diffs = {k: (a, b) for k, a, b in rep.item_diffs["sheared"]}
    raised = diffs["symmetry_raised"]
    assert raised[0] == "<absent>" and raised[1]["input"]["space_group"] == 3
    assert raised[1]["rendered"]["space_group"] == 25
    assert diffs["reasons"] == ([], ["symmetry_raised"])
    assert diffs["correct"] == (True, False) and diffs["reference_source"] == ("rendered", "input")
    # nothing but the score it changes: every other section reads as /1 wrote it
    assert rep.section_diffs and all(k.startswith("summary.") for k, _, _ in rep.section_diffs)
    assert ("summary.failure_reasons.symmetry_raised", "<absent>", 1) in rep.section_diffs
    lines = rep.lines()
    assert any(ln.startswith("item sheared: symmetry_raised: certificate '<absent>'") for ln in lines)
    assert lines[-1] == "1 of 1 items differ"


def test_kept_fields_are_not_dropped():
    assert {c.path for c in KEPT_IN_V1}.isdisjoint({c.path for c in SINCE_V1})
    assert all(c.action in ("drop", "restate") for c in SINCE_V1)
