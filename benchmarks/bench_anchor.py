"""viewcert vs the study's real code: the whole per-structure pipeline, side by side (the anchor for every
speed claim).

Anchor: the render-ceiling study's released harness (``../shared/anchors/render_ceiling_release``,
unmodified, MIT), run as its README states:

    conv = conventional_cell(Structure.from_str(cif, fmt="cif"))
    rec = reconstruct_positions(conv, VIEW_ORDER, tol=0.15)        # first pair, greedy merge
    sym = recover_symmetry(rec, conv.lattice, symprec=0.01)          # spglib via pymatgen
    sym["crystal_system"]

viewcert: ``viewcert.certify.evaluate.certify_item`` under the study's configuration (δ = 0.15 Å first pair,
greedy Cartesian merge like the released oracle, τ = 0.01 Å, 5°, pymatgen-oriented conventional cell) —
the whole product path: gemmi CIF read, standardisation, rendered-cell label with its moyopy cross-check,
observation, oracle, phantom analysis, reconstruction label, record with digests.

Protocol: items interleaved (anchor, viewcert, item by item, the order alternating per item), each timed
with this process's CPU time (``time.process_time``; robust to other jobs on the shared 2-core machine),
wall time alongside. Structures per second per core = items / CPU seconds. The crystal-system answer of the
reconstruction is asserted equal item by item (the run fails otherwise). Oracle only: no rendering.
Sets: the 210 e3 evaluation items and all 1,820 e3 structures (``--eval-only`` for the 210 only).

Usage: ``python benchmarks/bench_anchor.py [--eval-only] [--limit N] [--tag NAME]``; writes
``benchmarks/results/anchor.json`` (each run stored under its tag, default "current"). Skips (exit 0, with
the reason) when ``../shared`` (the anchor or the e3 data) is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
ANCHORS = SHARED / "anchors"
E3 = SHARED / "data" / "render-ceiling" / "data" / "e3"
RESULTS = REPO / "benchmarks" / "results"
OUT = RESULTS / "anchor.json"
DELTA, TAU = 0.15, 0.01


def skip_reason() -> str | None:
    if not (ANCHORS / "render_ceiling_release" / "reconstruct.py").exists():
        return f"the study's released harness is absent ({ANCHORS / 'render_ceiling_release'})"
    if not (E3 / "structures.json").exists():
        return f"the e3 data is absent ({E3})"
    return None


def anchor_fns():
    sys.path.insert(0, str(ANCHORS))
    from pymatgen.core import Structure as PmgStructure
    from render_ceiling_release.reconstruct import reconstruct_positions, recover_symmetry
    from render_ceiling_release.render import VIEW_ORDER, conventional_cell

    def study(cif: str) -> str | None:
        conv = conventional_cell(PmgStructure.from_str(cif, fmt="cif"))
        rec = reconstruct_positions(conv, VIEW_ORDER, tol=DELTA)
        return recover_symmetry(rec, conv.lattice, symprec=TAU)["crystal_system"]

    return study


def viewcert_fns():
    from viewcert.certify import CertifyConfig
    from viewcert.certify.evaluate import certify_item

    cfg = CertifyConfig(delta=DELTA, tau=TAU, pairs="first", merge="greedy", periodic_merge=False)

    def ours(item) -> str | None:
        rec = certify_item(item, cfg)
        return (rec.get("label_reconstructed") or {}).get("crystal_system")

    return ours, cfg


def floor_fns(cfg):
    """The symmetry-engine calls viewcert's product path cannot avoid, on cells parsed outside the timing:
    ONE spglib dataset (the standardisation, whose dataset also labels the rendered cell) and the moyopy
    cross-check of the rendered cell. Their CPU is a floor: study CPU / floor CPU bounds any ratio."""
    import spglib

    from viewcert.symmetry._moyo import moyo_dataset
    from viewcert.symmetry.standardize import standardize_with_dataset

    def prepared(item):
        s = item.read()
        conv, _ = standardize_with_dataset(s, symprec=cfg.std_symprec, angle_tolerance=cfg.std_angle_tolerance)
        return s, conv

    def spglib_call(cells) -> None:
        s, _ = cells
        spglib.get_symmetry_dataset((s.lattice, s.frac_coords, s.numbers), symprec=cfg.std_symprec,
                                    angle_tolerance=cfg.std_angle_tolerance)

    def moyopy_call(cells) -> None:
        _, conv = cells
        moyo_dataset(conv.lattice, conv.frac_coords, conv.numbers, symprec=cfg.tau)

    return prepared, spglib_call, moyopy_call


def timed(fn, arg) -> tuple[object, float, float]:
    w, t = time.perf_counter(), time.process_time()
    out = fn(arg)
    return out, time.process_time() - t, time.perf_counter() - w


def run_set(name: str, items, study, ours, floor=None) -> dict:
    """Interleaved passes over ``items``; asserts identical crystal-system answers item by item. ``floor``
    (prepared, fn): the unavoidable symmetry-engine calls, timed in the same interleaving."""
    s_cpu, o_cpu, s_wall, o_wall, differ, f_cpu, m_cpu = [], [], [], [], [], [], []
    for k, it in enumerate(items):
        pair = [("s", study, it.payload), ("o", ours, it)]
        if floor is not None:
            cells = floor[0](it)
            pair += [("f", floor[1], cells), ("m", floor[2], cells)]
        if k % 2:
            pair.reverse()
        res = {}
        for tag, fn, arg in pair:
            res[tag] = timed(fn, arg)
        s_cpu.append(res["s"][1])
        s_wall.append(res["s"][2])
        o_cpu.append(res["o"][1])
        o_wall.append(res["o"][2])
        if floor is not None:
            f_cpu.append(res["f"][1])
            m_cpu.append(res["m"][1])
        if res["s"][0] != res["o"][0]:
            differ.append((it.id, res["s"][0], res["o"][0]))
    n = len(items)
    out = {
        "n": n,
        "study_cpu_s": sum(s_cpu), "viewcert_cpu_s": sum(o_cpu),
        "study_wall_s": sum(s_wall), "viewcert_wall_s": sum(o_wall),
        "study_per_s_per_core": n / sum(s_cpu), "viewcert_per_s_per_core": n / sum(o_cpu),
        "ratio_cpu_total": sum(s_cpu) / sum(o_cpu), "ratio_wall_total": sum(s_wall) / sum(o_wall),
        "ratio_cpu_median": statistics.median(s_cpu) / statistics.median(o_cpu),
        "study_median_ms": 1e3 * statistics.median(s_cpu), "viewcert_median_ms": 1e3 * statistics.median(o_cpu),
        "answers_identical": n - len(differ), "answers_differ": differ,
    }
    if f_cpu:
        fl = sum(f_cpu) + sum(m_cpu)
        out.update({"floor_spglib_ms_per_item": 1e3 * sum(f_cpu) / n, "floor_moyopy_ms_per_item": 1e3 * sum(m_cpu) / n,
                    "floor_ms_per_item": 1e3 * fl / n, "ratio_ceiling_cpu_total": sum(s_cpu) / fl,
                    "ratio_ceiling_without_cross_check": sum(s_cpu) / sum(f_cpu),
                    "floor_share_of_viewcert": fl / sum(o_cpu),
                    "floor_note": "one spglib dataset (standardisation) + one moyopy dataset (rendered-cell "
                                  "cross-check) per item: no viewcert pipeline at this configuration can beat "
                                  "ratio_ceiling_cpu_total"})
    ceiling = (f", floor {out['floor_ms_per_item']:.2f} ms/item: spglib {out['floor_spglib_ms_per_item']:.2f} + "
               f"moyopy {out['floor_moyopy_ms_per_item']:.2f} (ceiling {out['ratio_ceiling_cpu_total']:.2f}x, "
               f"{out['ratio_ceiling_without_cross_check']:.2f}x without the cross-check)") if f_cpu else ""
    print(f"{name}: study {out['study_per_s_per_core']:.1f}/s/core, viewcert {out['viewcert_per_s_per_core']:.1f}"
          f"/s/core, ratio {out['ratio_cpu_total']:.2f}x total CPU ({out['ratio_cpu_median']:.2f}x median); "
          f"answers identical {n - len(differ)}/{n}{ceiling}", flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval-only", action="store_true", help="the 210 evaluation items only")
    ap.add_argument("--limit", type=int, default=None, help="first N items of each set (smoke runs)")
    ap.add_argument("--tag", default="current", help="key under which this run is stored in anchor.json")
    args = ap.parse_args(argv)
    reason = skip_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0
    warnings.filterwarnings("ignore")  # pymatgen's CIF/occupancy notes on the anchor side
    from viewcert.certify.inputs import load_input

    study = anchor_fns()
    ours, cfg = viewcert_fns()
    floor = floor_fns(cfg)
    sets = {"e3_eval_210": load_input(E3).items}
    if not args.eval_only:
        sets["e3_all_1820"] = load_input(E3, subset="all").items
    for it in list(sets["e3_eval_210"])[:3]:  # warm-up: imports, numba cache load, pymatgen tables
        study(it.payload)
        ours(it)
    run: dict = {"sets": {}}
    for name, items in sets.items():
        items = list(items[: args.limit] if args.limit else items)
        run["sets"][name] = run_set(name, items, study, ours, floor)
    run["viewcert_config"] = cfg.to_dict()
    run["anchor"] = {"path": "../shared/anchors/render_ceiling_release", "commit":
                     "8ff45f81fb99310e323e186036ee7da7b35a8c4f", "delta": DELTA, "symprec": TAU,
                     "views": "VIEW_ORDER (first pair axis_a/axis_b, three verifying views)"}
    run["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform(), "load_avg_1min_at_end":
                      os.getloadavg()[0]}
    run["versions"] = {p: version(p) for p in ("numpy", "spglib", "moyopy", "pymatgen", "gemmi", "numba", "ase")}
    run["versions"]["python"] = platform.python_version()
    run["timing_note"] = ("CPU = this process's CPU time per item, anchor and viewcert interleaved item by item "
                          "(order alternating); wall = perf_counter; per_s_per_core = items / CPU seconds")
    RESULTS.mkdir(parents=True, exist_ok=True)
    allr = json.loads(OUT.read_text()) if OUT.exists() else {}
    allr[args.tag] = run
    OUT.write_text(json.dumps(allr, indent=1, sort_keys=True) + "\n")
    bad = {k: v["answers_differ"] for k, v in run["sets"].items() if v["answers_differ"]}
    if bad:
        print(f"ANSWERS DIFFER: {bad}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
