"""The sidecar framing record (``cameras.framing.framing_record``): one function, one vocabulary of method
strings, for the crystal and molecular exporters and ``viewcert render`` (issue 26, item 5). Expected records
are written from the definition (pad = the style's radius scale × the largest covalent radius) and from the
records the exporters wrote by hand before (their literal method strings)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from viewcert.cameras.framing import FRAMING_METHODS, framing_record
from viewcert.render.palette import STYLES
from viewcert.render.raster import drawn_policy
from viewcert.structures import Structure

# the method strings the exporters wrote by hand before the one function (benchmark/export.py,
# molecule_export.py): kept, so their sidecars keep their bytes
CRYSTAL = ("letterbox: drawn atoms grown by the largest drawn radius, plus the supercell box; one scale for both "
           "axes, centred")
MOLECULE = "molecule: drawn atoms grown by the largest drawn radius"
COVALENT = {1: 0.31, 8: 0.66, 11: 1.66, 17: 1.02}  # Å (ASE's covalent radii of H, O, Na, Cl)


def _water() -> Structure:
    return Structure(np.array([[0.0, 0.0, 0.0], [0.96, 0.0, 0.0], [-0.24, 0.93, 0.0]]), np.array([8, 1, 1]), None)


def _rock_salt() -> Structure:
    return Structure(np.array([[0.0, 0.0, 0.0], [2.82, 2.82, 2.82]]), np.array([11, 17]), 5.64 * np.eye(3))


def test_the_three_records_from_their_definitions():
    st = STYLES["ball-and-stick"]
    mol = framing_record(drawn_policy("ball-and-stick", molecule_scale="per-view"), _water(), perspective=False)
    assert mol == {"method": MOLECULE, "margin_px": 16.0, "pad_angstrom": round(st.radius_scale * COVALENT[8], 6),
                   "scale": "per-view"}
    xtal = framing_record(drawn_policy("study", tiling=(2, 2, 2)), _rock_salt(), perspective=False)
    assert xtal == {"method": CRYSTAL, "margin_px": 16.0, "tiling": [2, 2, 2],
                    "pad_angstrom": round(STYLES["study"].radius_scale * COVALENT[11], 6)}
    assert framing_record(drawn_policy("study", tiling=(2, 1, 1)), _rock_salt(), perspective=True) == {
        "method": FRAMING_METHODS["perspective"], "tiling": [2, 1, 1]}
    assert framing_record(drawn_policy("study"), _water(), perspective=True) == {
        "method": FRAMING_METHODS["perspective"]}
    assert set(FRAMING_METHODS.values()) == {CRYSTAL, MOLECULE, FRAMING_METHODS["perspective"]}


def test_render_cli_sidecars_use_the_exporters_record(tmp_path):
    from viewcert.cli import app

    xyz = tmp_path / "w.xyz"
    xyz.write_text("3\nwater\nO 0 0 0\nH 0.96 0 0\nH -0.24 0.93 0\n")
    r = CliRunner().invoke(app, ["render", str(xyz), "-o", str(tmp_path / "out"), "--protocol", "axes-3",
                                 "--size", "96", "--supersample", "1", "--style", "ball-and-stick"])
    assert r.exit_code == 0, r.output
    side = json.loads((tmp_path / "out" / "w_front.json").read_text())
    assert side["framing"] == {"method": MOLECULE, "margin_px": 16.0, "scale": "common",
                               "pad_angstrom": pytest.approx(STYLES["ball-and-stick"].radius_scale * COVALENT[8],
                                                             abs=5e-7)}
