"""Certify benchmark: the whole per-structure pipeline, viewcert vs the tools a user would otherwise call.

The "tools" side uses the oracle twins of ``tests/support/naive.py``: configuration (A)'s ratio is **vs our naive
reference implementation** of the all-pairs oracle, never a speed-up over the study. The study's own code
is the anchor of ``benchmarks/bench_anchor.py`` (docs/speed.md): against it the whole pipeline is ~3×.

Pipeline per structure (the e3 evaluation split, 210 CIFs): read → conventional standard cell → label of the
rendered cell (R0) → observe through the study's five views → oracle → label of the reconstruction.

- viewcert: ``viewcert.certify.certify_item`` — gemmi CIF reader, ``viewcert.symmetry.standardize`` (one spglib
  call), spglib + moyopy cross-check on the rendered cell, ``observe.project.observe``, the numba oracle, the
  phantom analysis, spglib + moyopy on the reconstruction, certificate record (hashes).
- tools: pymatgen ``Structure.from_str`` and ``SpacegroupAnalyzer(...).get_conventional_standard_structure()``,
  spglib via pymatgen (``SpacegroupAnalyzer(...).get_crystal_system()``) on the rendered cell and on the
  reconstruction, and the naive oracle twin of ``tests/support/naive.py``: ``oracle_reconstruct`` (the oracle written from
  its definition, plain loops, every tuple tried) for the default configuration, ``study_oracle`` (the study's released first-pair
  oracle) for the released-oracle configuration. Both sides observe with ``observe.project.observe``.

Two configurations: (A) viewcert's default, all view pairs, δ = τ = 0.01 Å; (B) the released oracle, first
pair, δ = 0.15 Å, τ = 0.01 Å. Items are interleaved (viewcert then tools, item by item) and timed with this
process's CPU time (robust to other jobs on a shared machine); wall time is reported alongside. Structures
per second per core = items / CPU seconds. The answers are compared item by item. A stage breakdown of the
viewcert pipeline shows where the time goes (spglib is a floor: three dataset calls per structure).

Usage: ``python benchmarks/bench_certify.py [--limit N] [--all]``. Writes ``benchmarks/results/certify.json``;
``--all`` also times ``viewcert certify E3 --subset all`` (1,820 structures, all CPUs) end to end and writes
``benchmarks/results/certify_e3_all.json``. ``--reproduce`` instead recomputes the study's figures (R1 at
δ = τ = 0.01 Å, the δ = 0.15 Å variants, the view-subset table, the δ frontiers, the noise sweep) into
``benchmarks/results/certify_reproduction.json`` (see docs/certify_results.md). Skips (exit 0, message) when
the study data is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from importlib.metadata import version
from pathlib import Path

import numpy as np

from viewcert.cameras.policy import frame

REPO = Path(__file__).resolve().parents[1]
E3 = REPO.parent / "shared" / "data" / "render-ceiling" / "data" / "e3"
RESULTS = REPO / "benchmarks" / "results"
sys.path.insert(0, str(REPO))  # tests/support/naive.py: the naive oracle twins

CONFIGS = {
    "A_all_pairs_delta_0.01": {"delta": 0.01, "tau": 0.01, "pairs": "all"},
    "B_released_first_pair_delta_0.15": {"delta": 0.15, "tau": 0.01, "pairs": "first"},
}


def tools_item(cif: str, cfg, protocol, stages: dict) -> str | None:
    """The user's pipeline; returns the crystal system of the reconstruction (None when spglib fails)."""
    from pymatgen.core import Lattice
    from pymatgen.core import Structure as PmgStructure
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    from tests.support import naive
    from viewcert.io.pymatgen_adapter import from_pymatgen
    from viewcert.observe.project import observe

    t = time.process_time()
    s = PmgStructure.from_str(cif, fmt="cif")
    t1 = time.process_time()
    conv = SpacegroupAnalyzer(s, symprec=0.01, angle_tolerance=5.0).get_conventional_standard_structure()
    t2 = time.process_time()
    SpacegroupAnalyzer(conv, symprec=cfg.symmetry.tau, angle_tolerance=5.0).get_crystal_system()
    t3 = time.process_time()
    vs = from_pymatgen(conv)
    obs = observe(vs, frame(protocol, vs))
    t4 = time.process_time()
    if cfg.oracle.pairs == "all":
        rec = naive.oracle_reconstruct(obs, delta=cfg.oracle.delta, lattice=vs.lattice, pairs="all")
        pts, labs = np.asarray(rec["points"], dtype=float).reshape(-1, 3), np.asarray(rec["labels"], dtype=int)
    else:
        pts, labs = naive.study_oracle(vs.positions, vs.numbers, [v.rotation.T for v in protocol.views], cfg.oracle.delta)
    t5 = time.process_time()
    out = None
    if len(pts):
        frac = np.asarray(conv.lattice.get_fractional_coords(pts)) % 1.0
        try:
            rs = PmgStructure(Lattice(conv.lattice.matrix), [int(z) for z in labs], frac)
            out = SpacegroupAnalyzer(rs, symprec=cfg.symmetry.tau, angle_tolerance=5.0).get_crystal_system()
        except Exception:  # noqa: BLE001 - the user's pipeline fails on this item; counted as wrong
            out = None
    t6 = time.process_time()
    for k, a, b in (("parse", t, t1), ("conventional cell", t1, t2), ("R0 spglib", t2, t3), ("observe", t3, t4),
                    ("oracle", t4, t5), ("reconstruction spglib", t5, t6)):
        stages[k] += b - a
    return out


def ours_breakdown(items, cfg) -> dict:
    """One pass timing each stage of the viewcert pipeline separately (CPU seconds, summed)."""
    from viewcert.certify import conventional_cell
    from viewcert.observe.project import observe
    from viewcert.oracle.phantoms import analyse
    from viewcert.oracle.triangulate import reconstruct
    from viewcert.symmetry.labels import analyse_cell

    st: dict[str, float] = defaultdict(float)
    for it in items:
        t = time.process_time()
        s = it.read()
        t1 = time.process_time()
        c = conventional_cell(s, symprec=0.01, angle_tolerance=5.0, orientation="pymatgen")
        t2 = time.process_time()
        analyse_cell(c.lattice, c.frac_coords, c.numbers, symprec=cfg.symmetry.tau, angle_tolerance=5.0, cross_check=False)
        t3 = time.process_time()
        analyse_cell(c.lattice, c.frac_coords, c.numbers, symprec=cfg.symmetry.tau, angle_tolerance=5.0, cross_check=True)
        t4 = time.process_time()
        obs = observe(c, frame(cfg.protocol, c, cfg.framing_policy()), cfg.observation_model())
        t5 = time.process_time()
        rec = reconstruct(obs, delta=cfg.oracle.delta, pairs=cfg.oracle.pairs, lattice=c.lattice)
        t6 = time.process_time()
        analyse(rec, c, cfg.oracle.delta)
        t7 = time.process_time()
        frac = np.linalg.solve(c.lattice.T, rec.points.T).T % 1.0
        analyse_cell(c.lattice, frac, rec.labels, symprec=cfg.symmetry.tau, angle_tolerance=5.0, cross_check=True)
        t8 = time.process_time()
        for k, a, b in (("read (gemmi)", t, t1), ("conventional cell (1 spglib call)", t1, t2),
                        ("R0 spglib", t2, t3), ("R0 moyopy cross-check", t3 + (t3 - t2), t4),
                        ("cameras + observe", t4, t5), ("oracle", t5, t6), ("phantom analysis", t6, t7),
                        ("reconstruction spglib + moyopy", t7, t8)):
            st[k] += max(0.0, b - a)
    return dict(st)


def run(limit: int | None) -> dict:
    from viewcert.certify import CertifyConfig, certify_item
    from viewcert.certify.inputs import load_input

    ds = load_input(E3)
    items = list(ds.items[:limit] if limit else ds.items)
    out: dict = {"n_structures": len(items), "configs": {}}
    for name, kw in CONFIGS.items():
        cfg = CertifyConfig(**kw)
        prot = cfg.protocol.protocol
        for it in items[:3]:  # warm up: numba (cached), imports, pymatgen tables
            certify_item(it, cfg)
            tools_item(it.payload, cfg, prot, defaultdict(float))
        ours_cpu, tools_cpu, ours_wall, tools_wall = [], [], [], []
        stages: dict[str, float] = defaultdict(float)
        agree = 0
        ours_correct = tools_correct = 0
        for it in items:
            w = time.perf_counter()
            t = time.process_time()
            o = certify_item(it, cfg)
            ours_cpu.append(time.process_time() - t)
            ours_wall.append(time.perf_counter() - w)
            w = time.perf_counter()
            t = time.process_time()
            cs = tools_item(it.payload, cfg, prot, stages)
            tools_cpu.append(time.process_time() - t)
            tools_wall.append(time.perf_counter() - w)
            mine = o.label("reconstructed").get("crystal_system")
            agree += mine == cs
            ours_correct += bool(o.correct)
            tools_correct += cs == it.label["crystal_system"]
        brk = ours_breakdown(items, cfg)
        n = len(items)
        res = {
            "config": kw,
            "ours_cpu_s": sum(ours_cpu), "tools_cpu_s": sum(tools_cpu),
            "ours_wall_s": sum(ours_wall), "tools_wall_s": sum(tools_wall),
            "ours_structures_per_s_per_core": n / sum(ours_cpu),
            "tools_structures_per_s_per_core": n / sum(tools_cpu),
            "ratio_cpu": sum(tools_cpu) / sum(ours_cpu),
            "ratio_wall": sum(tools_wall) / sum(ours_wall),
            "ours_median_ms": 1e3 * statistics.median(ours_cpu), "tools_median_ms": 1e3 * statistics.median(tools_cpu),
            "tools_stage_cpu_s": dict(stages),
            "tools_without_oracle_cpu_s": sum(tools_cpu) - stages["oracle"],
            "ours_stage_cpu_s": brk,
            "ours_spglib_share": (brk["conventional cell (1 spglib call)"] + brk["R0 spglib"]
                                  + brk["reconstruction spglib + moyopy"]) / max(1e-12, sum(brk.values())),
            "reconstruction_crystal_system_agrees": agree,
            "ours_correct": ours_correct, "tools_correct": tools_correct,
        }
        out["configs"][name] = res
        print(f"{name}: viewcert {res['ours_structures_per_s_per_core']:.1f}/s/core, tools "
              f"{res['tools_structures_per_s_per_core']:.2f}/s/core, ratio {res['ratio_cpu']:.1f}x (CPU), "
              f"{res['ratio_wall']:.1f}x (wall); answers agree {agree}/{n}; correct {ours_correct} vs {tools_correct}",
              flush=True)
    out["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform(),
                      "load_avg_1min_at_end": os.getloadavg()[0]}
    out["versions"] = {p: version(p) for p in ("numpy", "spglib", "moyopy", "pymatgen", "gemmi", "numba")}
    out["versions"]["python"] = platform.python_version()
    out["timing_note"] = ("CPU = this process's CPU time, items interleaved viewcert/tools; wall = perf_counter; "
                          "structures per second per core = items / CPU seconds")
    return out


def run_all() -> dict:
    """``viewcert certify E3 --subset all`` end to end, every CPU, fresh output folder."""
    with tempfile.TemporaryDirectory(prefix="viewcert-e3-all-") as tmp:
        cmd = [str(Path(sys.executable).parent / "viewcert"), "certify", str(E3), "--subset", "all", "--protocol",
               "render-ceiling-5", "--delta", "0.01", "--symprec", "0.01", "--tiling", "1,1,1", "--out", tmp,
               "--no-plots"]  # the single cell this bench has always timed (certify's default is now 2,2,2)
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            raise SystemExit(proc.stdout + proc.stderr)
        cert = json.loads((Path(tmp) / "certificate.json").read_text())
        s = cert["summary"]
        return {"command": "viewcert certify <e3> --subset all --protocol render-ceiling-5 --delta 0.01 "
                           "--symprec 0.01 --out DIR --no-plots",
                "wall_s": wall, "n": s["n"], "correct": s["correct"], "bound": s["bound"]["text"],
                "label_mismatches": [m["id"] for m in s["label_mismatches"]],
                "cross_check_disagreements": s["cross_check_disagreements"],
                "failures": s["failures"], "errors": s["errors"], "phantom_census": s["phantom_census"],
                "digest": cert["digest"]["value"], "cpus": os.cpu_count(),
                "load_avg_1min_at_end": os.getloadavg()[0], "stdout": proc.stdout}


def reproduce(n_workers: int | None) -> dict:
    """The study's figures (docs/reference.md) recomputed by viewcert on the e3 evaluation split."""
    from viewcert.certify import CertifyConfig
    from viewcert.certify.inputs import load_input
    from viewcert.certify.run import run_certification
    from viewcert.certify.sweep import STUDY_DELTAS, SweepPlan, run_configs, run_sweep

    root = E3.parent.parent
    ref = json.loads((root / "results" / "option_a_frontier" / "results.json").read_text())["frontier_n210"]
    subsets_ref = json.loads((root / "results" / "view_subset_sweep" / "summary.json").read_text())["acc_by_subset"]
    raw = json.loads((root / "results" / "view_subset_sweep" / "raw.json").read_text())["per_structure"]
    ds = load_input(E3)
    ids = [it.id for it in ds.items]
    out: dict = {}
    t = time.perf_counter()
    typed, _ = run_certification(ds, CertifyConfig(delta=0.01, tau=0.01), n_workers=n_workers, progress=False)
    cert = typed.to_dict()  # the JSON object: its sections are written to the results as they are
    s = cert["summary"]
    out["delta_tau_0.01"] = {"correct": s["correct"], "n": s["n"], "bound": s["bound"]["text"],
                             "interval": s["interval"]["text"], "by_level": s["by_level"],
                             "label_mismatches": s["label_mismatches"], "errors": s["errors"],
                             "cross_check_disagreements": s["cross_check_disagreements"],
                             "items_certified": s["phantom_census"]["items_certified"],
                             "digest": cert["digest"]["value"]}
    print("delta=tau=0.01:", s["bound"]["text"], flush=True)

    variants = {
        "released_first_pair_greedy_min_image": CertifyConfig(delta=0.15, tau=0.01, pairs="first"),
        "released_first_pair_greedy_cartesian": CertifyConfig(delta=0.15, tau=0.01, pairs="first",
                                                              periodic_merge=False),
        "all_pairs_greedy": CertifyConfig(delta=0.15, tau=0.01, pairs="all", merge="greedy"),
        "all_pairs_greedy_cartesian": CertifyConfig(delta=0.15, tau=0.01, pairs="all", merge="greedy",
                                                    periodic_merge=False),
        "all_pairs_viewcert": CertifyConfig(delta=0.15, tau=0.01, pairs="all"),
    }
    res = run_configs(ds, list(variants.values()), n_workers=n_workers)
    out["delta_0.15"] = {}
    for j, name in enumerate(variants):
        wrong = [(ids[i], row[j]["reasons"], row[j]["predicted"], row[j]["n_phantoms"])
                 for i, row in enumerate(res) if not row[j]["correct"]]
        out["delta_0.15"][name] = {"correct": len(ids) - len(wrong), "n": len(ids), "failures": wrong}
        print(f"delta=0.15 {name}: {len(ids) - len(wrong)}/210", [w[0] for w in wrong], flush=True)

    for merge_name, pm in (("min_image", True), ("cartesian", False)):
        sw = run_sweep(ds, CertifyConfig(delta=0.15, tau=0.01, pairs="first", periodic_merge=pm),
                       SweepPlan(subsets=True), n_workers=n_workers, progress=False)
        table = []
        for j, tg in enumerate(sw.configs):
            if tg.study != "subset":
                continue
            key = "|".join(tg.views)
            ours = [row[j]["correct"] for row in sw.per_item]
            study = [raw[m][key]["correct"] for m in ids]
            table.append({"subset": key, "ours": sum(ours), "study": round(subsets_ref[key] * 210),
                          "per_structure_disagreements": [m for m, a, b in zip(ids, ours, study, strict=True)
                                                          if a != b]})
        out[f"subsets_delta_0.15_{merge_name}"] = table
        print(f"subsets ({merge_name}): max |diff| =", max(abs(r["ours"] - r["study"]) for r in table), flush=True)

    def frontier(base, protocols):
        sw = run_sweep(ds, base, SweepPlan(protocols=tuple(protocols), deltas=STUDY_DELTAS), n_workers=n_workers,
                       progress=False)
        return {p: [r["correct"] for r in sw.rows("delta") if r["protocol"] == p] for p in protocols}

    fr = {"study": {"deltas": list(STUDY_DELTAS), "frozen": ref["frozen_k"], "offaxis": ref["offaxis_k"],
                    "tiled": ref["tiled_k"]}}
    both = ["render-ceiling-5", "render-ceiling-5-offaxis"]
    fr["released_first_pair"] = frontier(CertifyConfig(tau=0.01, pairs="first"), both)
    fr["released_first_pair_cartesian"] = frontier(CertifyConfig(tau=0.01, pairs="first", periodic_merge=False), both)
    fr["all_pairs_viewcert"] = frontier(CertifyConfig(tau=0.01, pairs="all"), both)
    fr["tiled_2x2x2_translate_consistent_first_pair"] = frontier(
        CertifyConfig(tau=0.01, pairs="first", tiling=(2, 2, 2)), ["render-ceiling-5"])
    fr["tiled_2x2x2_translate_consistent_all_pairs"] = frontier(
        CertifyConfig(tau=0.01, pairs="all", tiling=(2, 2, 2)), ["render-ceiling-5"])
    fr["supercell_2x2x2_as_cell_study_style"] = frontier(
        CertifyConfig(tau=0.01, pairs="first", supercell=(2, 2, 2), periodic_merge=False), ["render-ceiling-5"])
    out["frontier"] = fr
    print("frontier done", flush=True)

    sw = run_sweep(ds, CertifyConfig(delta=0.01, tau=0.01),
                   SweepPlan(protocols=("render-ceiling-5",), sigmas=(0.001, 0.003, 0.01, 0.02), seeds=10,
                             tie_tau=True), n_workers=n_workers, progress=False)
    out["noise_tau_equals_delta"] = sw.noise_rows()
    out["wall_s"] = time.perf_counter() - t
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="first N eval items only")
    ap.add_argument("--all", action="store_true", help="also certify all 1,820 e3 structures end to end")
    ap.add_argument("--reproduce", action="store_true",
                    help="only recompute the study's figures (writes benchmarks/results/certify_reproduction.json)")
    ap.add_argument("--workers", type=int, default=None, help="worker processes for --reproduce")
    ap.add_argument("--skip-pipeline", action="store_true", help="with --all: only the 1,820 run")
    args = ap.parse_args()
    if not (E3 / "structures.json").is_file():
        print(f"skipped: the study data is absent ({E3})")
        return
    warnings.filterwarnings("ignore")
    from viewcert.io.atomic import write_json_atomic

    if args.reproduce:
        rep = reproduce(args.workers)
        write_json_atomic(RESULTS / "certify_reproduction.json", rep)
        print(f"wrote {RESULTS / 'certify_reproduction.json'}")
        return
    if not args.skip_pipeline:
        res = run(args.limit)
        write_json_atomic(RESULTS / "certify.json", res)
        print(f"wrote {RESULTS / 'certify.json'}")
    if args.all:
        allres = run_all()
        write_json_atomic(RESULTS / "certify_e3_all.json", allres)
        print(f"1,820 structures in {allres['wall_s']:.1f} s wall: {allres['correct']}/{allres['n']}; "
              f"{allres['bound']}")


if __name__ == "__main__":
    main()
