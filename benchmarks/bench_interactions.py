"""Pocket–ligand ceilings at six vs 27 views on the six complexes, and the per-item timing (issue 22).

Inputs: ../shared/data/complexes prepared by ``viewcert.io.complex.prepare_complex`` (pocket 8 Å; the
ligand from ligand.sdf, PNM in 1pwc, HEM/A/301 in 19hc), hydrogen bonds by ``viewcert.interactions``
(hydride + biotite Baker–Hubbard; ProLIF cross-check counted). Views: ``axes-6`` (MiSI's six: ±x, ±y, ±z)
and ``fibonacci-27`` (27 near-uniform directions, golden-angle spiral), orthographic, one common scale,
1160×803, ball-and-stick; labels DejaVu Sans 14 px, legible at visible fraction ≥ 0.8; δ = 0.01 Å.
MiSI-Bench's fine-tuned model on the pocket–ligand task: 10.72 (six views) → 23.77 (27 views), humans
82.78 (Li et al., 2025, arXiv:2512.10867): printed beside the ceilings, never compared as if they were the
same quantity (a ceiling bounds any answerer; MiSI's numbers are one model's scores).

Timing: one item of the as-rendered ceiling (27 views: render the ID buffers, draw and measure the labels,
the oracle at δ, margins) on a ~600-atom pocket (1s3v at 10 Å), one core, median of 5, beside the
transformation-task path on the same pocket (``tasks.identify`` of one rotation item, six views, observed
through the rendered ID buffer). Usage: ``python benchmarks/bench_interactions.py [--quick] [--designed-only]``.

Designed views (``designed``): ``viewcert.design.legibility`` chooses six directions among fibonacci-27 and
their antipodes (greedy label coverage) — jointly for the six complexes (written to
``results/legibility-6.toml``, one protocol for the whole benchmark, designed on the complexes it is measured
on), per complex, and leave-one-out (designed on the five others, measured on the held-out one); and jointly
among fibonacci-27 alone (no antipodes). Every ceiling is computed by ``interactions.ceiling`` from the
written protocol file, framed as the export frames it. ``--designed-only`` recomputes only this section and
keeps the rest of the results file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from viewcert.cameras.protocol_files import write_protocol_file  # noqa: E402
from viewcert.design.legibility import LegibilityConfig, certified_ceilings, design_legibility  # noqa: E402
from viewcert.interactions import hbond_truth  # noqa: E402
from viewcert.interactions.ceiling import CeilingSettings, pocket_ligand_ceiling  # noqa: E402
from viewcert.render import frame_cameras  # noqa: E402

COMPLEXES = REPO.parent / "shared" / "data" / "complexes"
CASES = {"1ia1": None, "1of6": None, "1s3v": None, "1uou": None, "1pwc": "PNM", "19hc": "HEM/A/301"}
PROTOCOLS = ("axes-6", "fibonacci-27")
MISI = {"fine_tuned_6_views": 10.72, "fine_tuned_27_views": 23.77, "humans": 82.78, "best_untuned_range": [0.0, 2.55]}
SIZE = (1160, 803)
STYLE = "ball-and-stick"


def ceilings(settings: CeilingSettings) -> dict:
    out = {}
    for name, lig in CASES.items():
        t = hbond_truth(COMPLEXES / name, ligand=lig)
        s = t.protonated.prepared.structure
        row = {"n_atoms": s.n_atoms, "n_bonds": len(t.bonds), "entries": list(t.entries()),
               "crosscheck": {k: t.crosscheck[k] for k in ("n_primary", "n_crosscheck", "n_both")}}
        for proto in PROTOCOLS:
            cams = frame_cameras(s, proto, style=STYLE, width=SIZE[0], height=SIZE[1])
            for mode in ("ideal", "rendered"):
                c = pocket_ligand_ceiling(t, cams, settings, mode)
                row[f"{proto}/{mode}"] = {k: c[k] for k in ("ceiling", "n_true", "n_determined", "losses",
                                                           "margin_candidates", "observation")}
        out[name] = row
        print(name, {k: v["ceiling"] for k, v in row.items() if "/" in k}, flush=True)
    return out


def _designed_row(truths: dict, cfg: LegibilityConfig, path: Path, measured=None) -> dict:
    """Design on ``truths``, write ``path``, certify ``measured`` (default: the same complexes) from it."""
    d = design_legibility(truths, cfg, name=f"legibility-{cfg.views}")
    write_protocol_file(d.spec(), path)
    return {"views": [v.name for v in d.protocol.views], "designed": d.designed, "checked": d.checked,
            "ceilings": certified_ceilings(measured or truths, path, cfg)}


def designed(settings: CeilingSettings) -> dict:
    """Pocket–ligand ceilings through designed six-view sets (module docstring), from the written files."""
    import tempfile

    truths = {n: hbond_truth(COMPLEXES / n, ligand=lig, crosscheck=False) for n, lig in CASES.items()}
    cfg = LegibilityConfig(views=6, candidates=27, ceiling=settings, width=SIZE[0], height=SIZE[1])
    out = {"config": cfg.to_dict(), "protocol_file": "legibility-6.toml",
           "joint": _designed_row(truths, cfg, REPO / "benchmarks" / "results" / "legibility-6.toml")}
    with tempfile.TemporaryDirectory() as tmp:
        hemi = LegibilityConfig(views=6, candidates=27, antipodes=False, ceiling=settings, width=SIZE[0],
                                height=SIZE[1])
        out["joint_fibonacci_27_only"] = _designed_row(truths, hemi, Path(tmp) / "hemi.toml")
        bonded = [n for n, t in truths.items() if t.bonds]
        out["per_complex"] = {n: _designed_row({n: truths[n]}, cfg, Path(tmp) / f"{n}.toml") for n in bonded}
        out["leave_one_out"] = {n: _designed_row({m: truths[m] for m in bonded if m != n}, cfg,
                                                 Path(tmp) / f"loo_{n}.toml", {n: truths[n]}) for n in bonded}
    for k in ("joint", "joint_fibonacci_27_only"):
        print(k, {n: v["rendered"]["ceiling"] for n, v in out[k]["ceilings"].items()}, flush=True)
    print("leave_one_out", {n: v["ceilings"][n]["rendered"]["ceiling"] for n, v in out["leave_one_out"].items()})
    return out


def _median_time(fn, n: int) -> float:
    fn()  # warm (numba compile, font cache)
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def timing(settings: CeilingSettings, n: int) -> dict:
    from viewcert.tasks.identify import identify
    from viewcert.tasks.model import ViewSetup, make_item

    t = hbond_truth(COMPLEXES / "1s3v", pocket=10.0, crosscheck=False)
    s = t.protonated.prepared.structure
    cams = frame_cameras(s, "fibonacci-27", style=STYLE, width=SIZE[0], height=SIZE[1])
    ours = _median_time(lambda: pocket_ligand_ceiling(t, cams, settings, "rendered"), n)
    six = frame_cameras(s, "axes-6", style=STYLE, width=SIZE[0], height=SIZE[1])
    ours6 = _median_time(lambda: pocket_ligand_ceiling(t, six, settings, "rendered"), n)
    item = make_item("1s3v", s.positions, s.numbers, "rotation", 7, ViewSetup.from_options(protocol="axes-6", observe="visible"))
    task = _median_time(lambda: identify(item), n)
    return {"structure": "1s3v pocket 10 A", "n_atoms": s.n_atoms, "size": list(SIZE), "repeats": n,
            "interaction_ceiling_27_views_s": round(ours, 3), "interaction_ceiling_6_views_s": round(ours6, 3),
            "transformation_task_identify_6_views_visible_s": round(task, 3),
            "ratio_27_view_interaction_item_to_transformation_item": round(ours / task, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="timing repeated twice instead of five times")
    ap.add_argument("--designed-only", action="store_true", help="recompute only the designed views' section")
    args = ap.parse_args()
    if not COMPLEXES.is_dir():
        sys.exit(f"complexes not found at {COMPLEXES}")
    settings = CeilingSettings()
    path = REPO / "benchmarks" / "results" / "interactions.json"
    if args.designed_only:
        out = json.loads(path.read_text())
        out["designed"] = designed(settings)
        path.write_text(json.dumps(out, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        return
    out = {"settings": settings.to_dict(), "protocols": list(PROTOCOLS), "size": list(SIZE), "style": STYLE,
           "misi_reported": MISI, "complexes": ceilings(settings), "designed": designed(settings),
           "timing": timing(settings, 2 if args.quick else 5),
           "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                       "numba_threads": os.environ.get("NUMBA_NUM_THREADS"),
                       "libraries": {p: metadata.version(p) for p in ("numpy", "numba", "biotite", "hydride",
                                                                     "prolif", "pillow")}}}
    path.write_text(json.dumps(out, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(json.dumps(out["timing"], indent=1))


if __name__ == "__main__":
    main()
