"""Design studies: view subsets, δ sweeps, noise sweeps (oracle noise module), κ; tables and plots."""

from __future__ import annotations

import csv
import json

import pytest
import typer
from typer.testing import CliRunner

from viewcert.cameras import get_protocol
from viewcert.cameras.conditioning import protocol_kappa
from viewcert.certify import CertifyConfig
from viewcert.certify.inputs import load_input
from viewcert.certify.sweep import SweepPlan, build_configs, noise_delta, run_configs, run_sweep
from viewcert.cli.certify import register
from viewcert.errors import InputError


@pytest.fixture(scope="module")
def small():
    ds = load_input("builtin:prototypes")
    return ds.select(["aflow:A_cF4_225_a", "aflow:A_hP4_194_bc", "aflow:AB3C_hR10_148_c_f_c", "aflow:A_oC4_63_c"])


def test_build_configs_counts():
    base = CertifyConfig()
    tagged = build_configs(base, SweepPlan(protocols=("render-ceiling-5",), subsets=True, deltas=(0.01, 0.1),
                                           sigmas=(0.0, 0.01), seeds=3))
    studies = [t.study for t in tagged]
    assert studies.count("subset") == 26  # 10 + 10 + 5 + 1 subsets of 5 views with ≥ 2 views
    assert studies.count("delta") == 2 and studies.count("noise") == 1 + 3 and studies.count("base") == 1


def test_noise_delta_rule_reproduces_the_study():
    # the study's δ per σ (results/option_a_frontier ck_2_2_noise10), computed with κ rounded to 4 decimals
    k = protocol_kappa(get_protocol("render-ceiling-5"))["max"]
    for sigma, delta in [(0.001, 0.0155), (0.003, 0.0464), (0.01, 0.1546), (0.02, 0.3091)]:
        assert noise_delta(sigma, k, 0.01) == pytest.approx(delta, abs=1.1e-4)
    ko = protocol_kappa(get_protocol("render-ceiling-5-offaxis"))["max"]
    assert noise_delta(0.001, ko, 0.01) == pytest.approx(0.0477, abs=1.1e-4)
    assert noise_delta(0.0, k, 0.01) == 0.01


def test_noise_delta_keeps_the_floor_and_refuses_pixels():
    """issue 11: the path that ran ignored δ₀ and sigma_unit. Hand-worked: 4·√2·2.7321·0.0005 = 0.007727 Å < δ₀."""
    k = 2.7321
    assert noise_delta(0.0005, k, 0.01) == 0.01  # 0.0077276 Å (below) is under the floor δ₀ = 0.01
    assert noise_delta(0.0005, k, 0.005) == pytest.approx(0.0077276, abs=1e-7)  # above δ₀ = 0.005: the rule
    assert noise_delta(0.0005, k, 0.0) == pytest.approx(0.0077276, abs=1e-7)
    with pytest.raises(InputError, match="sigma_unit"):
        noise_delta(2.0, k, 0.01, "px")  # 2 px used to become 30.9 "Å"
    with pytest.raises(InputError, match="sigma"):
        noise_delta(-1.0, k, 0.01)


def test_axis_view_subsets_of_fcc_and_diamond_hand_worked():
    """Hand-worked phantoms. Views along the cube axes x and y of fcc Cu show every (y, z) and every (x, z) of
    the half-cell grid {0, 1/2}: all 8 points of {0, 1/2}^3 agree with both, 4 are atoms, the other 4 (the
    octahedral sites) are phantoms, and the third axis view, showing every (x, y), rejects none of them.
    Diamond is fcc plus fcc + (1/4, 1/4, 1/4): an axis view shows the pairs of quarter coordinates of equal
    parity, so the consistent points are {0, 1/2}^3 and {1/4, 3/4}^3, 16 points for 8 atoms: 8 phantoms, with
    two axis views or three. Both point sets are cubic (simple and body-centred cubic of edge a/2), so the
    crystal system survives: correct, yet not unique."""
    ds = load_input("builtin:prototypes").select(["aflow:A_cF4_225_a", "aflow:A_cF8_227_a"])
    res = run_sweep(ds, CertifyConfig(), SweepPlan(protocols=("axes-3",), subsets=True), n_workers=1,
                    progress=False)
    assert [t.study for t in res.configs] == ["base", "subset", "subset", "subset", "subset"]
    assert sorted(len(t.views) for t in res.configs) == [2, 2, 2, 3, 3]
    for j, _ in enumerate(res.configs):
        cu, diamond = (row[j] for row in res.per_item)
        assert (cu["n_phantoms"], cu["n_points"]) == (4, 8)
        assert (diamond["n_phantoms"], diamond["n_points"]) == (8, 16)
        assert cu["n_missing"] == diamond["n_missing"] == 0
        assert cu["predicted"] == diamond["predicted"] == "cubic"
        assert "phantoms" in cu["reasons"] and not cu["unique"]
    for row in res.rows():
        assert (row["correct"], row["n"], row["items_with_phantoms"]) == (2, 2, 2)
        assert row["mean_phantoms"] == 6.0 and row["phantom_rate"] == 1.0  # (4 + 8) / 2 items


def test_sweep_tables_and_plots(small, tmp_path):
    res = run_sweep(small, CertifyConfig(), SweepPlan(subsets=True, deltas=(0.01, 0.2), sigmas=(0.01,), seeds=2),
                    n_workers=1, out=tmp_path, progress=False)
    for name in ("subsets", "deltas", "noise", "kappa", "items", "base"):
        assert (tmp_path / f"{name}.csv").is_file(), name
    assert (tmp_path / "ceiling_vs_delta.png").stat().st_size > 1000
    assert (tmp_path / "phantom_rate_by_subset.png").stat().st_size > 1000
    subsets = list(csv.DictReader((tmp_path / "subsets.csv").open()))
    assert len(subsets) == 26 and {r["n"] for r in subsets} == {"4"}
    full = [r for r in subsets if r["n_views"] == "5"][0]
    assert full["correct"] == "4" and full["items_with_phantoms"] == "0"
    two = [r for r in subsets if r["subset"] == "axis_a|axis_b"][0]
    assert int(two["items_with_phantoms"]) >= 2  # graphite and ilmenite show phantoms with two axis views
    kappa = {r["pair"]: float(r["kappa"]) for r in csv.DictReader((tmp_path / "kappa.csv").open())}
    assert kappa["axis_a|oblique2"] == pytest.approx(2.7321, abs=1e-4) and kappa["max"] == pytest.approx(2.7321,
                                                                                                           abs=1e-4)
    (noise,) = res.noise_rows()
    assert noise["seeds"] == 2
    # recovery ("every atom recovered") from the noise module equals the certification's own record of the
    # same draws (n_missing == 0 and the oracle ran): two code paths, one answer
    runs = [row[j] for row in res.per_item for j, t in enumerate(res.configs) if t.study == "noise"]
    assert len(runs) == 2 * len(small)
    assert noise["recovery_rate"] == pytest.approx(
        sum(1 for r in runs if r["n_missing"] == 0 and r["outcome"] != "error") / len(runs), abs=1e-6)
    # the oracle's noise module saw the same draws as the certification
    assert noise["phantom_rate"] == noise["phantom_rate_certify"]
    assert "axis_a|axis_b" in res.text()


def test_sweep_is_deterministic_and_resumable(small, tmp_path):
    cfgs = [CertifyConfig(delta=d) for d in (0.01, 0.3)]
    a = run_configs(small, cfgs, n_workers=1, workdir=tmp_path)
    b = run_configs(small, cfgs, n_workers=2, workdir=tmp_path)  # read back from the shards
    c = run_configs(small, cfgs, n_workers=2)
    assert a == b == c
    with pytest.raises(InputError, match="standardization"):
        run_configs(small, [CertifyConfig(), CertifyConfig(std_symprec=0.1)], n_workers=1)


def test_sweep_command_honours_molecule_scale_and_refuses_a_stray_ligand(tmp_path):
    """viewcert sweep accepted --molecule-scale, --ligand and --pocket and ignored them: the scale now reaches
    every configuration (sweep.json), and --ligand on an input that is not complex:PATH is a bad option."""
    app = typer.Typer()
    register(app)
    r = CliRunner()
    res = r.invoke(app, ["sweep", "builtin:aflow:A_cF4_225_a", "--protocol", "axes-3", "--molecule-scale",
                         "per-view", "--workers", "1", "--out", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output
    configs = json.loads((tmp_path / "a" / "sweep.json").read_text())["configs"]
    assert [c["config"]["molecule_scale"] for c in configs] == ["per-view"]
    res = r.invoke(app, ["sweep", "builtin:aflow:A_cF4_225_a", "--ligand", "PNM", "--out", str(tmp_path / "b")])
    assert res.exit_code == 2 and "--ligand/--pocket apply to a complex:PATH input" in res.output
    assert not (tmp_path / "b").exists()
