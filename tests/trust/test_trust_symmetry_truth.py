"""The truth label of a user's cell is the symmetry of that cell at the stated tolerances (issue 23, item 1).

A slightly sheared monoclinic cell (β = 90.655°, c = 4.3 Å: the c axis leans c·cos β = −0.0492 Å off the
orthogonal setting, five times symprec = 0.01 Å) with atoms only on the special positions 1a–1d of P2
(b unique): at spglib's own angle rule the cell is P2 (3); a 5° angle tolerance squares it, and the squared
cell's mirrors make it Pmm2 (25). The expected groups are derived independently by calling spglib directly
on the input cell. Checked here:

- the CLI's ``--angle-tolerance`` reaches the standardisation, and spglib's own default (−1) is accepted:
  the cell certifies as monoclinic P2;
- at the study's 5° the cell is Pmm2 for spglib at those tolerances (so that is the truth label), and the
  moyopy cross-check of the INPUT cell (moyopy: P2) is reported on the item and in the summary;
- a standardisation at another angle tolerance than the label's raises the symmetry: the item is flagged
  (``symmetry_raised``, the summary's count and list, the summary text) and scored against the input's label;
- on a seeded pyxtal subset (30 groups, all seven crystal systems) the truth label equals spglib's on the
  input cell at the same tolerances, and an item is flagged exactly when the rendered cell's label differs.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import spglib
import typer
from typer.testing import CliRunner

from tests.support.pyxtal_recipes import pyxtal_structure
from tests.support.sheared_cell import FRAC, Z, _cif, _lattice, _spglib_direct
from viewcert.certify import CertifyConfig
from viewcert.certify.evaluate import certify_item, prepare
from viewcert.certify.inputs import Item
from viewcert.certify.summary import summarize
from viewcert.cli.certify import register
from viewcert.errors import InputError
from viewcert.structures import Structure
from viewcert.symmetry.labels import crystal_system_of


def _sheared() -> Structure:
    lat = _lattice()
    return Structure(FRAC @ lat, Z, lat)


def _item() -> Item:
    return Item("sheared", "structure", _sheared(), "hand-built")


def test_the_cell_is_what_the_docstring_says():
    # hand-worked: c·cos(90.655°) = −4.3·sin(0.655°) = −0.04916 Å, five times symprec
    assert _lattice()[2, 0] == pytest.approx(-0.04916, abs=2e-5)
    assert _spglib_direct(-1) == 3 and _spglib_direct(5.0) == 25


def test_spglib_default_angle_certifies_monoclinic_p2():
    expected = _spglib_direct(-1)
    rec = certify_item(_item(), CertifyConfig(delta=0.01, tau=0.01, angle_tolerance=-1, std_angle_tolerance=-1,
                                              score="space_group")).to_dict()
    assert rec["label_rendered"]["space_group"] == expected == 3
    assert rec["label_rendered"]["crystal_system"] == "monoclinic"
    assert rec["correct"] and "symmetry_raised" not in rec and rec["reference_source"] == "rendered"


def test_cli_angle_tolerance_reaches_the_standardisation(tmp_path):
    app = typer.Typer()
    register(app)
    cif = tmp_path / "sheared.cif"
    cif.write_text(_cif())
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["certify", str(cif), "--angle-tolerance", "-1", "--score", "space_group",
                                   "--workers", "1", "--no-plots", "--out", str(out)])
    assert res.exit_code == 0, res.output
    cert = json.loads((out / "certificate.json").read_text())
    assert cert["config"]["angle_tolerance"] == -1 and cert["config"]["std_angle_tolerance"] == -1
    assert cert["tolerances"]["standardization"]["angle_tolerance"] == -1
    (it,) = cert["items"]
    assert it["label_rendered"]["space_group"] == _spglib_direct(-1) and it["correct"]


def test_study_angle_tolerance_reports_the_input_cross_check():
    """At 5° spglib on the input says Pmm2 (the truth at those tolerances); moyopy on the input says P2, and
    that disagreement is on the item (cross_check.input) and listed in the summary."""
    cfg = CertifyConfig(delta=0.01, tau=0.01, score="space_group")
    rec = certify_item(_item(), cfg).to_dict()
    assert rec["label_rendered"]["space_group"] == _spglib_direct(5.0) == 25
    assert "symmetry_raised" not in rec  # the same tolerances: no raise, the input is Pmm2 at 5°
    assert "space_group: spglib 25 vs moyopy 3" in rec["cross_check"]["input"]
    summ = summarize([rec], cfg)
    assert [d["id"] for d in summ["cross_check_disagreements"]] == ["sheared"]
    assert summ["n_symmetry_raised"] == 0


def test_standardisation_at_another_angle_is_flagged():
    """Labels at spglib's own angle rule, the standardisation at 5°: the standardised cell is Pmm2, the input
    P2 at the stated tolerances. Flagged, and scored against the input's label."""
    cfg = CertifyConfig(delta=0.01, tau=0.01, angle_tolerance=-1, std_angle_tolerance=5.0, truth="rendered",
                        score="space_group")
    rec = certify_item(_item(), cfg).to_dict()
    raised = rec["symmetry_raised"]
    assert raised["input"]["space_group"] == _spglib_direct(-1) == 3
    assert raised["rendered"]["space_group"] == rec["label_rendered"]["space_group"] == 25
    assert raised["levels"] == ["crystal_system", "point_group", "space_group"]
    assert rec["reference_source"] == "input" and "symmetry_raised" in rec["reasons"] and not rec["correct"]
    summ = summarize([rec], cfg)
    assert summ["n_symmetry_raised"] == 1 and summ["symmetry_raised"][0]["id"] == "sheared"
    assert summ["failures"][0]["reference"] == 3 and summ["failure_reasons"]["symmetry_raised"] == 1


def test_summary_text_lists_the_flag():
    from viewcert.certify.run import _crystal_check_lines

    cfg = CertifyConfig(delta=0.01, tau=0.01, angle_tolerance=-1, std_angle_tolerance=5.0)
    lines = _crystal_check_lines(summarize([certify_item(_item(), cfg)], cfg), 10)
    assert lines[-1] == "standardisation raised the symmetry (scored against the input's label): 1: sheared 3 -> 25"


@pytest.mark.parametrize("given, kept", [(-1, -1.0), (-5.0, -1.0), (0.5, 0.5), (5, 5)])
def test_angle_tolerance_accepts_spglib_default(given, kept):
    cfg = CertifyConfig(angle_tolerance=given, std_angle_tolerance=given)
    assert cfg.symmetry.angle_tolerance == kept and cfg.symmetry.std_angle_tolerance == kept


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "5", True])
def test_angle_tolerance_refuses_non_numbers(bad):
    for name in ("angle_tolerance", "std_angle_tolerance"):
        with pytest.raises(InputError) as exc:
            CertifyConfig(**{name: bad})
        assert exc.value.field == name


# ----------------------------------------------------------------------------- seeded pyxtal subset
#: 30 groups spanning the seven crystal systems (2 triclinic, 5 monoclinic, 6 orthorhombic, 5 tetragonal,
#: 4 trigonal, 4 hexagonal, 4 cubic)
SUBSET = (1, 2, 3, 5, 9, 12, 14, 16, 25, 33, 43, 62, 70, 75, 82, 99, 123, 141, 143, 148, 160, 166, 168, 176,
          187, 194, 195, 205, 216, 225)


def _perturbed(s: Structure, rng: np.random.Generator) -> Structure:
    """Lattice strained and atoms moved by a few × symprec: cells near a tolerance boundary."""
    lat = s.lattice @ (np.eye(3) + rng.normal(0, 0.004, (3, 3)))
    frac = s.frac_coords + rng.normal(0, 0.004, s.frac_coords.shape) / np.linalg.norm(lat, axis=1)
    return Structure(frac @ lat, s.numbers, lat)


def test_pyxtal_subset_spans_all_seven_systems():
    assert len(SUBSET) == 30 and len({crystal_system_of(g) for g in SUBSET}) == 7


@pytest.mark.parametrize("angle, std_angle", [(5.0, 5.0), (-1.0, -1.0), (-1.0, 5.0)])
def test_pyxtal_subset_truth_is_the_input_symmetry(angle, std_angle):
    pytest.importorskip("pyxtal")
    rng = np.random.default_rng(23)
    cfg = CertifyConfig(delta=0.01, tau=0.01, angle_tolerance=angle, std_angle_tolerance=std_angle,
                        truth="rendered", score="space_group")
    for g in SUBSET:
        exact = pyxtal_structure(g)  # the seeded recipes (tests/support/pyxtal_recipes.py)
        for tag, s in (("exact", exact), ("perturbed", _perturbed(exact, rng))):
            rec = certify_item(Item(f"{g}-{tag}", "structure", s, "pyxtal"), cfg).to_dict()
            assert rec["outcome"] != "error", rec
            truth = (rec.get("symmetry_raised") or {}).get("input") or rec["label_rendered"]
            direct = int(spglib.get_symmetry_dataset((s.lattice, s.frac_coords, s.numbers), symprec=0.01,
                                                     angle_tolerance=angle).number)
            assert truth["space_group"] == direct, (g, tag)
            drawn = prepare(Item("x", "structure", s, "pyxtal"), cfg).cell  # the cell certify renders
            fresh = int(spglib.get_symmetry_dataset((drawn.lattice, drawn.frac_coords, drawn.numbers),
                                                    symprec=0.01, angle_tolerance=angle).number)
            assert ("symmetry_raised" in rec) == (fresh != direct), (g, tag)  # a raise seen by spglib itself
            if tag == "exact":
                assert direct == g  # pyxtal's cell is exactly of its group
