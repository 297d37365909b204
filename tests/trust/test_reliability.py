"""Issue 11 pieces below the CLI: resource limits (hand-worked), R1 without unreadable items, the
build-benchmark certificate drawn in the shipped style, the R3 prompt at the wrap boundary, one-line errors."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from tests.support.hostile.corpus import GOOD_CIF
from viewcert.benchmark.prompts import r3_prompt
from viewcert.certify import CertifyConfig
from viewcert.certify.summary import summarize
from viewcert.cli.options import one_line
from viewcert.errors import InputError
from viewcert.limits import LimitError, Limits, using_limits
from viewcert.render.palette import get_style
from viewcert.structures import Structure


def test_limits_are_inclusive_and_name_their_option():
    lim = Limits(max_atoms=10, max_tiling=8, max_views=5, max_pixels=100, max_json_bytes=50)
    lim.check_atoms(10)
    with pytest.raises(LimitError, match=r"atoms in one structure = 11 exceeds the limit max_atoms = 10 "
                                         r"\(raise it with --max-atoms\)"):
        lim.check_atoms(11)
    lim.check_tiling((2, 2, 2))
    with pytest.raises(LimitError, match="3x1x3 = 9"):
        lim.check_tiling((3, 1, 3))
    lim.check_protocol_name("fibonacci-5")
    lim.check_protocol_name("render-ceiling-5")  # named protocols are counted once built
    with pytest.raises(LimitError, match="max_views"):
        lim.check_protocol_name("fibonacci-6")
    lim.check_pixels(10, 10)
    with pytest.raises(LimitError, match="max_pixels"):
        lim.check_pixels(10, 11)
    with pytest.raises(LimitError, match="positive"):
        lim.check_pixels(0, 10)
    with pytest.raises(InputError, match="max_atoms"):
        Limits(max_atoms=0)
    assert Limits().with_overrides(max_atoms=None, max_views=7) == Limits(max_views=7)


def test_zip_limits_read_the_central_directory_only(tmp_path):
    lim = Limits(max_zip_member_bytes=4 << 20, max_zip_ratio=200.0)
    p = tmp_path / "bomb.eval"
    with zipfile.ZipFile(p, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", b" " * (3 << 20))  # 3 MiB of spaces deflate ~1000-fold
    with pytest.raises(LimitError, match="expands .*-fold"):
        lim.check_zip(p)
    Limits(max_zip_ratio=1e6).check_zip(p)  # the ratio is the only limit it breaks
    with pytest.raises(LimitError, match="max_zip_member_bytes"):
        Limits(max_zip_member_bytes=1 << 20, max_zip_ratio=1e6).check_zip(p)
    (tmp_path / "plain.txt").write_text("not a zip")
    lim.check_zip(tmp_path / "plain.txt")  # not a zip: the reader decides


def test_config_limits_before_any_camera_is_built():
    with pytest.raises(LimitError, match="max_views"):
        CertifyConfig(protocol="fibonacci-100000").check_limits()  # would build 100,000 cameras otherwise
    with pytest.raises(LimitError, match="tiling x supercell product 4x4x4 = 64"):
        with using_limits(Limits(max_tiling=63)):
            CertifyConfig(tiling=(2, 2, 2), supercell=(2, 2, 2)).check_limits()
    with pytest.raises(LimitError, match="max_pixels"):
        CertifyConfig(image_size=5000).check_limits()
    # a negative angle tolerance is spglib's own rule, recorded as -1 (issue 23); NaN, 0 and > 90 degrees are not
    assert CertifyConfig(angle_tolerance=-5).symmetry.angle_tolerance == -1.0
    for bad in (float("nan"), 0.0, 90.5, float("inf")):
        with pytest.raises(InputError, match="angle_tolerance"):
            CertifyConfig(angle_tolerance=bad)
    with pytest.raises(InputError, match="sigma"):
        CertifyConfig(sigma=-1)


def _outcome(i, correct, outcome="correct"):
    return {"id": f"i{i}", "outcome": outcome, "correct": correct, "reasons": [] if correct else ["error"],
            "correct_by_level": None if outcome == "error" else {"crystal_system": correct, "point_group": correct,
                                                                  "space_group": correct},
            "label_dataset": {"crystal_system": "cubic"}, "error": "read: file x.cif: bad" if outcome == "error"
            else None}


def test_r1_denominator_leaves_out_unreadable_items():
    """2 correct + 1 wrong + 3 unreadable: R1 = 2/3 (hand-worked), the three listed apart with their reason."""
    outs = [_outcome(0, True), _outcome(1, True), _outcome(2, False, "incorrect")]
    outs[2]["reasons"] = ["symmetry_changed"]
    outs += [_outcome(k, False, "error") for k in (3, 4, 5)]
    s = summarize(outs, CertifyConfig())
    assert (s["n"], s["correct"], s["n_errors"]) == (3, 2, 3)
    assert s["R1"] == pytest.approx(2 / 3, abs=1e-4)
    assert [f["id"] for f in s["failures"]] == ["i2"]
    assert [e["error"] for e in s["errors"]] == ["read: file x.cif: bad"] * 3
    # exact one-sided 95 % Clopper–Pearson lower bound for 2/3: solve P(X ≥ 2 | p) = 0.05, i.e.
    # 3p²(1-p) + p³ = 0.05 → p = 0.13535
    assert s["bound"]["lower"] == pytest.approx(0.13535, abs=2e-5)
    only_errors = summarize([_outcome(0, False, "error")], CertifyConfig())
    assert only_errors["n"] == 0 and only_errors["R1"] is None and "no bound" in only_errors["bound"]["text"]


def test_spacefill_certificate_draws_spacefill_radii():
    """issue 11: build-benchmark probed CertifyConfig for style/radius_scale fields that did not exist, so a
    spacefill benchmark was certified on study-style (radius 0.5 × covalent) ID buffers."""
    cfg = CertifyConfig(observe="visible", style="spacefill")
    assert cfg.observation_model().radius_scale == get_style("spacefill").radius_scale == 1.0
    assert CertifyConfig().observation_model().radius_scale == 0.5
    assert cfg.to_dict()["style"] == "spacefill" and "style" not in CertifyConfig().to_dict()
    with pytest.raises(InputError, match="style"):
        CertifyConfig(style="cartoon")


def test_build_benchmark_certificate_uses_the_shipped_style(tmp_path):
    from viewcert.benchmark.export import ExportSettings, build_benchmark

    src = tmp_path / "in"
    src.mkdir()
    (src / "nacl.cif").write_text(GOOD_CIF)
    m = build_benchmark(str(src), tmp_path / "b", settings=ExportSettings.from_options(style="spacefill", size=96,
                                                                          tiling=(1, 1, 1)), n_workers=1)
    cert = json.loads((tmp_path / "b" / "certificate.json").read_text())
    assert m.settings.style == "spacefill"
    assert cert["config"]["style"] == "spacefill" and cert["config"]["observe"] == "visible"
    assert cert["observation_model"]["radius_scale"] == 1.0


def test_r3_prompt_prints_a_wrapped_coordinate_as_zero():
    s = Structure(np.array([[0.0, 0.0, 0.0], [0.999996 * 4.0, 2.0, 2.0]]), [11, 17], np.eye(3) * 4.0)
    text = r3_prompt(s)
    assert text.endswith("  Na 0.00000 0.00000 0.00000\n  Cl 0.00000 0.50000 0.50000")


def test_one_line_errors():
    assert one_line(InputError("bad\nvalue", source="a.cif", field="x")) == "file a.cif, field x: bad value"
    assert one_line(FileNotFoundError(2, "No such file or directory", "/x")) == "No such file or directory: /x"
    assert one_line(KeyError("config")).startswith("KeyError: 'config' (unexpected; rerun with --debug")
    assert len(one_line(ValueError("x" * 1000))) <= 404


def test_limits_apply_to_the_conventional_cell_standardisation_makes():
    """A primitive fcc cell (1 atom) becomes a 4-atom conventional cell (F centring, hand-worked): with
    max_atoms = 3 the file reads but the rendered cell is refused before any view is observed; with 4 it
    certifies. The observed-points limit is checked on the conventional cell too (4 atoms × 5 views)."""
    from viewcert.certify.evaluate import prepare
    from viewcert.certify.inputs import Item

    a = 3.61
    prim = Structure(np.zeros((1, 3)), [29], a * np.array([[0, 0.5, 0.5], [0.5, 0, 0.5], [0.5, 0.5, 0]]))
    cfg = CertifyConfig()

    item = Item(id="cu-prim", kind="structure", payload=prim, sha256="0" * 64, points_per_atom=5)

    def prepared(**lim):
        with using_limits(Limits(**lim)):
            return prepare(item, cfg)

    with using_limits(Limits(max_atoms=3)):
        assert item.read().n_atoms == 1  # the file itself is within the limit
    p = prepared(max_atoms=3)
    assert p.cell is None
    assert p.error == ("conventional cell: file cu-prim, field max_atoms: atoms in one structure = 4 exceeds the "
                       "limit max_atoms = 3 (raise it with --max-atoms)")
    p = prepared(max_atoms=4, max_observations=19)
    assert p.cell is None and "observed points (atoms x tiling x views) = 20 exceeds" in p.error
    p = prepared(max_atoms=4, max_observations=20)
    assert p.error is None and p.cell.n_atoms == 4
