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

The floor (``floor_fns``): the symmetry-engine calls the product cannot drop under the current rules —
spglib on the input (standardisation, truth label), moyopy on the input and on the rendered cell (the two
cross-checks), and the fresh spglib calls the doubt guard demands — each timed in the same interleaving;
the guard's own lattice-only call is timed beside it, not in it. ``viewcert_over_floor`` is the issue-19
figure (target ≤ 1.3). The full floor (issue 59) adds spglib on the reconstruction where the product makes that
call (not the rendered cell atom for atom): ``*_over_full_floor``.
Sets: the 210 e3 evaluation items and all 1,820 e3 structures (``--eval-only`` for the 210 only).

Batch path (issue 31): ``--batch N`` times chunks of N items, every part over the whole chunk (the study
per item, viewcert's per-item path, its batch path ``certify.evaluate.certify_items``, each floor call), the
order of the parts alternating per chunk; answers of all three equal item by item.

Usage: ``python benchmarks/bench_anchor.py [--eval-only] [--limit N] [--tag NAME] [--batch N]``; writes
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
        return certify_item(item, cfg).label("reconstructed").get("crystal_system")

    return ours, cfg


def viewcert_batch_fn(cfg):
    """The batch path (``certify.evaluate.certify_items``): the crystal-system answers of a chunk of items."""
    from viewcert.certify.evaluate import certify_items

    def ours_batch(chunk) -> list:
        return [o.label("reconstructed").get("crystal_system") for o in certify_items(chunk, cfg)]

    return ours_batch


FLOOR_PARTS = ("spglib_input", "moyopy_input", "moyopy_rendered", "spglib_fresh")
#: the floor's part added in issue 59 (``floor_fns``): timed in every run, reported as the full floor beside the
#: floor of issue 23 (``FLOOR_PARTS``, the figures of earlier runs)
RECONSTRUCTION_PARTS = ("spglib_reconstruction",)
GUARD_PARTS = ("spglib_lattice_guard",)


def floor_fns(cfg):
    """The symmetry-engine calls viewcert's product path cannot drop under the current rules (issue 23's
    truth label and cross-checks), each on cells prepared outside the timing, exactly as the product calls
    them:

    - ``spglib_input``: ONE spglib dataset of the cell as read, at the standardisation's tolerances: it is
      the standardisation, the truth label of the input (issue 23) and, by shortcut 1, the rendered cell's;
    - ``moyopy_input``: moyopy on the cell as read (the input cross-check, required by issue 23);
    - ``moyopy_rendered``: moyopy on the rendered cell (the reference label's cross-check);
    - ``spglib_fresh``: a fresh spglib dataset of the rendered cell, only on items where the doubt guard
      demands one (``reuse.doubtful``): its label replaces shortcut 1's, so dropping it can change an
      answer (on the seeded pyxtal set it does).

    Not in the floor, timed beside it: ``spglib_lattice_guard``, the guard's own lattice-only spglib call
    (one point on the rendered lattice), on the items where the product still makes it (not where
    ``reuse.holohedral_metric`` decides). Its result enters no label; it only decides whether
    ``spglib_fresh`` runs, and a cheaper test with the same outcome would do (the metric tests already
    replace it on cubic, hexagonal and rhombohedral cells and on exact orthorhombic and tetragonal metrics:
    ``reuse.needs_lattice_call``).

    Since issue 23 the floor gains the input's moyopy call and the guard's fresh calls; nothing was
    dropped. Issue 59 adds ``spglib_reconstruction``: spglib on the reconstruction (wrapped into the rendered
    cell, on its lattice, at τ and the angle tolerance), on the items where the product makes that call — where
    the reconstruction is not the rendered cell atom for atom (``reuse.same_cell``, shortcut 2). Its label is
    the answer scored (the study's harness makes this call on every item), so the product cannot drop it; the
    full floor is ``FLOOR_PARTS`` + ``RECONSTRUCTION_PARTS``. Returns (prepare, {part: fn}); ``prepare``
    (``floor_cells``) runs untimed."""
    from viewcert.symmetry import _moyo, _spglib

    moyo_angle = cfg.symmetry.angle_tolerance if cfg.symmetry.cross_check_angle else -1.0

    def prepared(item):
        return floor_cells(item, cfg)

    def spglib_input(c) -> None:
        _spglib.symmetry_dataset(*c["src"], symprec=cfg.symmetry.std_symprec, angle_tolerance=cfg.symmetry.std_angle_tolerance)

    def moyopy_input(c) -> None:
        _moyo.moyo_dataset(*c["src"], symprec=cfg.symmetry.tau, angle_tolerance=moyo_angle)

    def moyopy_rendered(c) -> None:
        _moyo.moyo_dataset(*c["conv"], symprec=cfg.symmetry.tau, angle_tolerance=moyo_angle)

    def spglib_fresh(c) -> None:
        if c["fresh"]:
            _spglib.symmetry_dataset(*c["conv"], symprec=cfg.symmetry.tau, angle_tolerance=cfg.symmetry.angle_tolerance)

    def spglib_reconstruction(c) -> None:
        if c["reconstruction"] is not None:
            _spglib.symmetry_dataset(*c["reconstruction"], symprec=cfg.symmetry.tau,
                                     angle_tolerance=cfg.symmetry.angle_tolerance)

    def spglib_lattice_guard(c) -> None:
        if c["lattice_call"]:
            _spglib.symmetry_dataset(c["conv"][0], *c["one"], symprec=cfg.symmetry.tau, angle_tolerance=cfg.symmetry.angle_tolerance)

    fns = {"spglib_input": spglib_input, "moyopy_input": moyopy_input, "moyopy_rendered": moyopy_rendered,
           "spglib_fresh": spglib_fresh, "spglib_reconstruction": spglib_reconstruction,
           "spglib_lattice_guard": spglib_lattice_guard}
    return prepared, fns


def floor_cells(item, cfg) -> dict:
    """The cells ``floor_fns`` times (untimed): the input and rendered cells as the product prepares them,
    whether the doubt guard makes its lattice-only call (``lattice_call``) and whether it demands a fresh
    spglib call (``fresh``, ``reuse.in_doubt``: the very predicate ``reuse.label_cell`` decides by), and the
    reconstruction's cell where the product labels it with spglib (``reconstruction``: lattice, wrapped fractional
    coordinates, labels, as ``evaluate._reconstruction_check`` passes them; None where shortcut 2 reuses the
    rendered cell's label or there is nothing to label)."""
    import numpy as np

    from viewcert.certify.evaluate import prepare, views_of
    from viewcert.symmetry import reuse

    moyo_angle = cfg.symmetry.angle_tolerance if cfg.symmetry.cross_check_angle else None
    prep = prepare(item, cfg)
    src, conv = prep.source, prep.cell
    chk = reuse.rendered_check(conv.lattice, conv.frac_coords, conv.numbers, prep.std, symprec=cfg.symmetry.tau,
                                   angle_tolerance=cfg.symmetry.angle_tolerance, cross_check=cfg.symmetry.cross_check,
                                   moyo_angle_tolerance=moyo_angle)
    guarded = reuse.applies(prep.std, symprec=cfg.symmetry.tau, angle_tolerance=cfg.symmetry.angle_tolerance)
    inp = prep.input_check(cfg)
    lattice_call = bool(guarded and reuse.needs_lattice_call(chk, inp, conv.lattice))
    rec = views_of(conv, cfg)[2]  # the product's cameras, observations and oracle on the rendered cell
    recon = None
    if rec.status == "ok" and len(rec.points):
        pts = np.asarray(rec.points, dtype=np.float64).reshape(-1, 3)
        frac = np.linalg.solve(conv.lattice.T, pts.T).T
        frac = frac - np.floor(frac)
        labels = np.asarray(rec.labels)
        rendered = prep.rendered_check(cfg)  # the earlier label shortcut 2 would reuse
        reused = (cfg.symmetry.label_shortcuts and rendered is not None and rendered.spglib is not None
                  and reuse.same_cell(conv.lattice, conv.frac_coords, conv.numbers, frac, labels))
        recon = None if reused else (conv.lattice, frac, labels)
    return {"reconstruction": recon,"src": (src.lattice, src.frac_coords, src.numbers), "conv": (conv.lattice, conv.frac_coords, conv.numbers),
            "fresh": reuse.in_doubt(chk, reuse.Reuse(prep.std, conventional=True, input_check=inp), conv.lattice),
            "lattice_call": lattice_call,
            "one": (np.zeros((1, 3)), np.ones(1, dtype=np.intc))}


def _chunk_parts(chunk, study, ours, ours_batch, floor) -> tuple[list, list]:
    """(tag, fn over the whole chunk, arg) of every timed part of one chunk (``run_set_batched``)."""
    parts = [("s", lambda ch: [study(it.payload) for it in ch], chunk),
             ("o", lambda ch: [ours(it) for it in ch], chunk), ("b", ours_batch, chunk)]
    cells = [floor[0](it) for it in chunk]
    for part, fn in floor[1].items():
        parts.append((part, lambda cs, fn=fn: [fn(c) for c in cs], cells))
    return parts, cells


def run_set_batched(name: str, items, study, ours, ours_batch, floor, size: int) -> dict:
    """Chunks of ``size`` items, every part timed over the whole chunk, the order of the parts alternating per
    chunk: the study per item, viewcert's per-item path (``o``), its batch path (``b``, ``certify_items``) and
    each floor call; answers of all three asserted equal item by item. Per-item CPU = chunk CPU / chunk."""
    cpu: dict[str, float] = {}
    chunk_ms: dict[str, list[float]] = {"s": [], "o": [], "b": []}
    differ, counts = [], {"spglib_fresh": 0, "spglib_reconstruction": 0, "spglib_lattice_guard": 0}
    for k in range(0, len(items), size):
        chunk = list(items[k:k + size])
        parts, cells = _chunk_parts(chunk, study, ours, ours_batch, floor)
        counts["spglib_fresh"] += sum(c["fresh"] for c in cells)
        counts["spglib_reconstruction"] += sum(c["reconstruction"] is not None for c in cells)
        counts["spglib_lattice_guard"] += sum(c["lattice_call"] for c in cells)
        res = {}
        for tag, fn, arg in (parts if (k // size) % 2 == 0 else parts[::-1]):
            res[tag] = timed(fn, arg)
            cpu[tag] = cpu.get(tag, 0.0) + res[tag][1]
            if tag in chunk_ms:
                chunk_ms[tag].append(1e3 * res[tag][1] / len(chunk))
        differ += [(it.id, a, b, c) for it, a, b, c in zip(chunk, res["s"][0], res["o"][0], res["b"][0], strict=True)
                   if not a == b == c]
    n = len(items)
    fl = sum(cpu[p] for p in FLOOR_PARTS)
    full = fl + sum(cpu[p] for p in RECONSTRUCTION_PARTS)
    guard = sum(cpu[p] for p in GUARD_PARTS)
    out = {"n": n, "batch_size": size, "full_floor_ms_per_item": 1e3 * full / n,
           "viewcert_over_full_floor": cpu["o"] / full, "viewcert_batch_over_full_floor": cpu["b"] / full, "answers_identical": n - len(differ), "answers_differ": differ,
           "study_ms_per_item": 1e3 * cpu["s"] / n, "viewcert_ms_per_item": 1e3 * cpu["o"] / n,
           "viewcert_batch_ms_per_item": 1e3 * cpu["b"] / n, "floor_ms_per_item": 1e3 * fl / n,
           "guard_ms_per_item": 1e3 * guard / n, "floor_calls": counts,
           **{f"floor_{p}_ms_per_item": 1e3 * cpu[p] / n for p in FLOOR_PARTS + RECONSTRUCTION_PARTS + GUARD_PARTS},
           "viewcert_over_floor": cpu["o"] / fl, "viewcert_batch_over_floor": cpu["b"] / fl,
           "batch_over_per_item": cpu["b"] / cpu["o"], "ratio_cpu_total": cpu["s"] / cpu["o"],
           "ratio_cpu_total_batch": cpu["s"] / cpu["b"], "ratio_ceiling_cpu_total": cpu["s"] / fl,
           "median_chunk_ms_per_item": {t: statistics.median(v) for t, v in chunk_ms.items()}}
    print(f"{name} (chunks of {size}): study {out['study_ms_per_item']:.2f}, viewcert per-item "
          f"{out['viewcert_ms_per_item']:.2f}, batch {out['viewcert_batch_ms_per_item']:.2f}, floor "
          f"{out['floor_ms_per_item']:.2f} (guard {out['guard_ms_per_item']:.2f}) ms/item; per-item "
          f"{out['viewcert_over_floor']:.2f}x floor, batch {out['viewcert_batch_over_floor']:.2f}x floor, batch/per-item "
          f"{out['batch_over_per_item']:.3f}; full floor (+ the reconstruction's spglib calls) "
          f"{out['full_floor_ms_per_item']:.2f} ms/item: per-item {out['viewcert_over_full_floor']:.2f}x, batch "
          f"{out['viewcert_batch_over_full_floor']:.2f}x; answers identical {out['answers_identical']}/{n}", flush=True)
    return out


def timed(fn, arg) -> tuple[object, float, float]:
    w, t = time.perf_counter(), time.process_time()
    out = fn(arg)
    return out, time.process_time() - t, time.perf_counter() - w


def run_set(name: str, items, study, ours, floor=None) -> dict:
    """Interleaved passes over ``items``; asserts identical crystal-system answers item by item. ``floor``
    (prepare, {part: fn}): the symmetry-engine calls of ``floor_fns``, each timed in the same interleaving."""
    cpu: dict[str, list[float]] = {"s": [], "o": []}
    wall: dict[str, list[float]] = {"s": [], "o": []}
    differ, counts = [], {}
    for k, it in enumerate(items):
        pair = [("s", study, it.payload), ("o", ours, it)]
        if floor is not None:
            cells = floor[0](it)
            counts["spglib_fresh"] = counts.get("spglib_fresh", 0) + cells["fresh"]
            counts["spglib_lattice_guard"] = counts.get("spglib_lattice_guard", 0) + cells["lattice_call"]
            counts["spglib_reconstruction"] = counts.get("spglib_reconstruction", 0) + (cells["reconstruction"]
                                                                                       is not None)
            pair += [(part, fn, cells) for part, fn in floor[1].items()]
        if k % 2:
            pair.reverse()
        res = {}
        for tag, fn, arg in pair:
            res[tag] = timed(fn, arg)
            cpu.setdefault(tag, []).append(res[tag][1])
            wall.setdefault(tag, []).append(res[tag][2])
        if res["s"][0] != res["o"][0]:
            differ.append((it.id, res["s"][0], res["o"][0]))
    n = len(items)
    s_cpu, o_cpu = cpu["s"], cpu["o"]
    out = {
        "n": n,
        "study_cpu_s": sum(s_cpu), "viewcert_cpu_s": sum(o_cpu),
        "study_wall_s": sum(wall["s"]), "viewcert_wall_s": sum(wall["o"]),
        "study_per_s_per_core": n / sum(s_cpu), "viewcert_per_s_per_core": n / sum(o_cpu),
        "ratio_cpu_total": sum(s_cpu) / sum(o_cpu), "ratio_wall_total": sum(wall["s"]) / sum(wall["o"]),
        "ratio_cpu_median": statistics.median(s_cpu) / statistics.median(o_cpu),
        "study_median_ms": 1e3 * statistics.median(s_cpu), "viewcert_median_ms": 1e3 * statistics.median(o_cpu),
        "viewcert_ms_per_item": 1e3 * sum(o_cpu) / n, "study_ms_per_item": 1e3 * sum(s_cpu) / n,
        "answers_identical": n - len(differ), "answers_differ": differ,
    }
    ceiling = ""
    if floor is not None:
        fl = sum(sum(cpu[p]) for p in FLOOR_PARTS)
        full = fl + sum(sum(cpu[p]) for p in RECONSTRUCTION_PARTS)
        guard = sum(sum(cpu[p]) for p in GUARD_PARTS)
        out.update({f"floor_{p}_ms_per_item": 1e3 * sum(cpu[p]) / n
                    for p in FLOOR_PARTS + RECONSTRUCTION_PARTS + GUARD_PARTS})
        out.update({
            "floor_ms_per_item": 1e3 * fl / n, "guard_ms_per_item": 1e3 * guard / n,
            "full_floor_ms_per_item": 1e3 * full / n, "viewcert_over_full_floor": sum(o_cpu) / full,
            "floor_calls": {"spglib_input": n, "moyopy_input": n, "moyopy_rendered": n,
                            "spglib_fresh": counts["spglib_fresh"],
                            "spglib_reconstruction": counts["spglib_reconstruction"]},
            "guard_calls": {"spglib_lattice_guard": counts["spglib_lattice_guard"]},
            "viewcert_over_floor": sum(o_cpu) / fl, "viewcert_over_floor_and_guard": sum(o_cpu) / (fl + guard),
            "ratio_ceiling_cpu_total": sum(s_cpu) / fl, "floor_share_of_viewcert": fl / sum(o_cpu),
            "floor_note": "floor = spglib dataset of the input (standardisation, truth label, shortcut 1) + "
                          "moyopy on the input + moyopy on the rendered cell + the fresh spglib calls the doubt "
                          "guard demands; the guard's own lattice-only spglib call is timed beside it "
                          "(guard_ms_per_item), not in it (bench_anchor.floor_fns); full floor = floor + spglib on "
                          "the reconstructions that are not the rendered cell atom for atom (issue 59)"})
        ceiling = (f"; floor {out['floor_ms_per_item']:.2f} ms/item (" + ", ".join(
            f"{p} {out[f'floor_{p}_ms_per_item']:.2f}" for p in FLOOR_PARTS) + f"), guard "
            f"{out['guard_ms_per_item']:.2f}; viewcert {out['viewcert_ms_per_item']:.2f} ms/item = "
            f"{out['viewcert_over_floor']:.2f}x floor ({out['viewcert_over_floor_and_guard']:.2f}x floor + guard)")
    print(f"{name}: study {out['study_per_s_per_core']:.1f}/s/core, viewcert {out['viewcert_per_s_per_core']:.1f}"
          f"/s/core, ratio {out['ratio_cpu_total']:.2f}x total CPU ({out['ratio_cpu_median']:.2f}x median); "
          f"answers identical {n - len(differ)}/{n}{ceiling}", flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval-only", action="store_true", help="the 210 evaluation items only")
    ap.add_argument("--limit", type=int, default=None, help="first N items of each set (smoke runs)")
    ap.add_argument("--tag", default="current", help="key under which this run is stored in anchor.json")
    ap.add_argument("--batch", type=int, default=0, help="chunks of N items: per-item and batch path side by side "
                                                        "(run_set_batched); 0 = item by item (run_set)")
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
    load_start = os.getloadavg()[0]
    for name, items in sets.items():
        items = list(items[: args.limit] if args.limit else items)
        if args.batch:
            run["sets"][name] = run_set_batched(name, items, study, ours, viewcert_batch_fn(cfg), floor, args.batch)
        else:
            run["sets"][name] = run_set(name, items, study, ours, floor)
    run["viewcert_config"] = cfg.to_dict()
    run["anchor"] = {"path": "../shared/anchors/render_ceiling_release", "commit":
                     "8ff45f81fb99310e323e186036ee7da7b35a8c4f", "delta": DELTA, "symprec": TAU,
                     "views": "VIEW_ORDER (first pair axis_a/axis_b, three verifying views)"}
    run["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform(), "load_avg_1min_at_start":
                      load_start, "load_avg_1min_at_end": os.getloadavg()[0]}
    run["versions"] = {p: version(p) for p in ("numpy", "spglib", "moyopy", "pymatgen", "gemmi", "numba", "ase")}
    run["versions"]["python"] = platform.python_version()
    if args.batch:
        run["batch_note"] = (f"chunks of {args.batch} items: study, viewcert per item, viewcert batch "
                             "(certify_items) and each floor call timed over the whole chunk, order alternating")
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
