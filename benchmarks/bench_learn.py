"""Learned readers on the study's e3 split (1,610 train / 210 eval): ``cell-forest`` and ``pixel-cnn``.

Runs ``viewcert learn`` (its library entry point ``viewcert.learn.run.run_learn``) for both readers and records,
per reader: correct of 210 with the exact (Clopper-Pearson) 95 % interval, the confusion matrix, CPU time and
peak RSS. ``pixel-cnn`` (recipe ``learn.cnn.RECIPE``, chosen on the validation split by
``benchmarks/select_pixel_cnn.py``, whose log is copied here as ``selection``) is trained once per seed
(``--seeds``, default 0..4), each seed in a process of its own (``--jobs`` at a time, one torch thread each):
each seed's eval and validation figures, CPU minutes and peak RSS, the mean and range over seeds. Seed 0 is
the reader the ladder shows (``viewcert learn``'s default seed); ``--rerun`` trains seed 0 once more into
its own folder and compares the predictions (``rerun_identical``). Renders are cached under
``/tmp/viewcert-learn-cache`` (rendering CPU recorded apart from training).

The ceiling beside it is the protocol's own: ``viewcert certify`` of the 210 eval items under the same
protocol P at δ = 0.01 and 0.15 Å (τ = 0.01 Å, every view pair; ``r1``). Then ``viewcert ladder`` on the
folder's manifest (the study's arms beside both readers and that R1) checks that both rungs appear.

Usage: ``python benchmarks/bench_learn.py [--seeds 0,1,2,3,4] [--jobs 2] [--rerun] [--protocol P]``; writes
``benchmarks/results/learn.json`` (``learn_<P>.json`` for another protocol). Skips (exit 0, with the reason)
when the e3 data or torch/scikit-learn are absent.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import resource
import shutil
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
E3 = ROOT.parent / "shared" / "data" / "render-ceiling" / "data" / "e3"
OUT = ROOT / "benchmarks" / "results" / "learn.json"
SELECTION = ROOT / "benchmarks" / "results" / "learn_selection.json"
CACHE = Path("/tmp/viewcert-learn-cache")
STUDY_RESNET = {"model": "ResNet-50 (the study's vision-only model)", "correct": 188, "n": 210, "accuracy": 0.8952}


def _peak_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _run(reader: str, out: Path, **kw) -> dict:
    sys.path.insert(0, str(ROOT / "src"))
    from viewcert.learn.pixel import cpu_seconds
    from viewcert.learn.run import run_learn

    c0, w0 = cpu_seconds(), time.perf_counter()
    res = run_learn(str(E3), reader, out, **kw)
    full = json.loads((res.folder / "card.json").read_text())
    keep = ("seed", "recipe", "torch_threads", "train_cpu_seconds", "train_cpu_minutes", "render_cpu_seconds",
            "peak_rss_mib", "protocol", "image_size", "element_colours")
    return {"correct": res.correct, "n": res.n, "eval": full["eval"], "confusion": full["confusion"],
            "training_curve": full["training_curve"], "cpu_seconds": round(cpu_seconds() - c0, 1),
            "wall_seconds": round(time.perf_counter() - w0, 1), "peak_rss_mib": _peak_mib(),
            "validation": (full.get("validation") or {}).get("record"),
            "card": {k: full[k] for k in keep if k in full}, "predictions": (res.folder / "predictions.csv").read_text()}


def _pixel(args, out: Path) -> dict:
    """Every seed of the recipe, ``args.jobs`` processes at a time; seed 0 writes into ``out`` (the ladder's)."""
    kw = {"protocol": args.protocol, "cache": str(CACHE)}
    folders = {s: out if s == 0 else out.with_name(f"{out.name}_seed{s}") for s in args.seeds}
    jobs = [(s, folders[s]) for s in args.seeds] + ([("rerun", out.with_name(out.name + "_rerun"))]
                                                    if args.rerun else [])
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=ctx) as pool:
        futs = {s: pool.submit(_run, "pixel-cnn", f, seed=0 if s == "rerun" else s, **kw) for s, f in jobs}
        runs = {s: f.result() for s, f in futs.items()}
    seeds = [runs[s] for s in args.seeds]
    counts = [r["correct"] for r in seeds]
    rec = {**{k: v for k, v in runs[args.seeds[0]].items() if k != "predictions"},
           "seeds": [{"seed": s, "correct": runs[s]["correct"], "val_correct": runs[s]["validation"]["correct"],
                      "train_cpu_minutes": runs[s]["card"]["train_cpu_minutes"],
                      "cpu_seconds": runs[s]["cpu_seconds"], "peak_rss_mib": runs[s]["peak_rss_mib"]}
                     for s in args.seeds],
           "seed_spread": {"counts": counts, "mean": statistics.mean(counts), "min": min(counts), "max": max(counts),
                           "val_counts": [runs[s]["validation"]["correct"] for s in args.seeds]},
           "max_train_cpu_minutes": max(runs[s]["card"]["train_cpu_minutes"] for s in args.seeds),
           "max_peak_rss_mib": max(runs[s]["peak_rss_mib"] for s in args.seeds)}
    if args.rerun:
        rec["rerun_identical"] = runs["rerun"]["predictions"] == runs[args.seeds[0]]["predictions"]
    return rec


def _ceiling(protocol: str) -> list[dict]:
    """R1 of the e3 eval items under ``protocol`` at δ = 0.01 and 0.15 Å (viewcert certify, one worker)."""
    from viewcert.certify import CertifyConfig
    from viewcert.certify.inputs import load_input
    from viewcert.certify.run import run_certification

    ds = load_input(str(E3), subset="eval")
    rows = []
    for delta in (0.01, 0.15):
        c0 = time.process_time()
        cert, _ = run_certification(ds, CertifyConfig(protocol=protocol, delta=delta, tau=0.01), n_workers=1,
                                    progress=False)
        summ = cert.summary
        bound = cert.to_dict()["summary"]["bound"]  # the JSON object of the bound
        rows.append({"delta": delta, "correct": summ.correct, "n": summ.n, "R1": summ.R1,
                     "lower_bound_95": bound["lower"], "cpu_seconds": round(time.process_time() - c0, 1),
                     "r1": f"{summ.correct}/{summ.n}@{delta}"})
    return rows


def _ladder(rec: dict, out: Path, protocol: str) -> None:
    from viewcert.attribution.pipeline import run_ladder
    from viewcert.stats import BootstrapSettings

    rec["r1"] = {"protocol": protocol, "by_delta": _ceiling(protocol)}
    lad, _, _ = run_ladder(manifest=out / "ladder.toml", r1=tuple(r["r1"] for r in rec["r1"]["by_delta"]),
                           bootstrap=BootstrapSettings(n_boot=1000))
    arms = lad.arms[lad.arms["rung"].str.startswith("learned reader")]
    rec["ladder_rungs"] = arms[["model", "rung", "correct", "n", "ci_lo", "ci_hi"]].to_dict("records")
    rec["ladder_r1"] = [{"delta": c.delta, "value": float(c.value)} for c in lad.ceilings]


def _skip_reason() -> str | None:
    if not (E3 / "structures.json").is_file():
        return f"e3 data absent ({E3})"
    for mod in ("sklearn", "torch"):
        if importlib.util.find_spec(mod) is None:
            return f"{mod} not installed (pip install 'viewcert[learn]')"
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rerun", action="store_true")
    ap.add_argument("--protocol", default="render-ceiling-5", help="pixel-cnn's view protocol")
    args = ap.parse_args()
    args.seeds = [int(s) for s in args.seeds.split(",")]
    if (why := _skip_reason()) is not None:
        print(f"skip: {why}")
        return 0
    out = ROOT / "out" / f"bench_learn_{args.protocol}"
    for folder in out.parent.glob(out.name + "*"):
        shutil.rmtree(folder, ignore_errors=True)
    rec: dict = {"data": str(E3.relative_to(ROOT.parent)), "study_vision_only": STUDY_RESNET,
                 "machine_note": "2 shared cores; each pixel-cnn seed one process, one torch thread"}
    rec["cell-forest"] = _run("cell-forest", out)
    rec["pixel-cnn"] = _pixel(args, out)
    rec["cell-forest"].pop("predictions")
    rec["selection"] = json.loads(SELECTION.read_text()) if SELECTION.is_file() else []
    from viewcert.learn.pixel import SELECTION as RULE

    rec["selection_rule"] = RULE
    for r in ("cell-forest", "pixel-cnn"):
        print(f"{r}: {rec[r]['correct']}/{rec[r]['n']} {rec[r]['eval']['ci95_clopper_pearson']} "
              f"cpu {rec[r]['cpu_seconds']} s")
    print("pixel-cnn seeds:", rec["pixel-cnn"]["seed_spread"])
    _ladder(rec, out, args.protocol)
    out_file = OUT if args.protocol == "render-ceiling-5" else OUT.with_name(f"learn_{args.protocol}.json")
    out_file.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out_file}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.exit(main())
