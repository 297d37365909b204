"""Learned readers on the study's e3 split (1,610 train / 210 eval): ``cell-forest`` and ``pixel-cnn``.

Runs ``viewcert learn`` (its library entry point ``viewcert.learn.run.run_learn``) for both readers into
``out/bench_learn`` and records, per reader: correct of 210 with the exact (Clopper-Pearson) 95 % interval,
the learning curve (accuracy vs training size 200 / 400 / 800 / all), the confusion matrix, training CPU time
and the process's peak RSS. pixel-cnn is trained twice with the same seed, the second time into its own folder
(so it renders every view afresh, no cache shared), and the two prediction files are compared
(``rerun_identical``).

The ceiling beside it is the protocol's own: ``viewcert certify`` of the 210 eval items under the same
protocol P at δ = 0.01 and 0.15 Å (τ = 0.01 Å, every view pair; ``r1``). Then ``viewcert ladder`` on the
folder's manifest (the study's arms beside both readers and that R1) checks that both rungs appear.

Usage: ``python benchmarks/bench_learn.py [--image-size 64] [--epochs 10] [--no-rerun] [--protocol P]``; writes
``benchmarks/results/learn.json`` (``learn_<P>.json`` for another protocol: the design use, a learned reader
beside its protocol's R1). Skips (exit 0, with the reason) when the e3 data or torch/scikit-learn are absent.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
E3 = ROOT.parent / "shared" / "data" / "render-ceiling" / "data" / "e3"
OUT = ROOT / "benchmarks" / "results" / "learn.json"


def _peak_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _run(reader: str, out: Path, **kw) -> dict:
    from viewcert.learn.run import run_learn

    c0, w0 = time.process_time(), time.perf_counter()
    res = run_learn(str(E3), reader, out, **kw)
    card = res.card
    full = json.loads((res.folder / "card.json").read_text())
    return {"correct": res.correct, "n": res.n, "eval": full["eval"], "training_curve": card["training_curve"],
            "confusion": full["confusion"], "cpu_seconds": round(time.process_time() - c0, 1),
            "wall_seconds": round(time.perf_counter() - w0, 1), "peak_rss_mib": _peak_mib(),
            "card": {k: card[k] for k in ("protocol", "image_size", "element_colours", "seed") if k in card},
            "predictions": (res.folder / "predictions.csv").read_text()}


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
        summ = cert["summary"]
        rows.append({"delta": delta, "correct": summ["correct"], "n": summ["n"], "R1": summ["R1"],
                     "lower_bound_95": summ["bound"]["lower"], "cpu_seconds": round(time.process_time() - c0, 1),
                     "r1": f"{summ['correct']}/{summ['n']}@{delta}"})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--no-rerun", action="store_true")
    ap.add_argument("--protocol", default="render-ceiling-5", help="pixel-cnn's view protocol")
    args = ap.parse_args()
    if not (E3 / "structures.json").is_file():
        print(f"skip: e3 data absent ({E3})")
        return 0
    for mod in ("sklearn", "torch"):
        if importlib.util.find_spec(mod) is None:
            print(f"skip: {mod} not installed (pip install 'viewcert[learn]')")
            return 0
    out = ROOT / "out" / f"bench_learn_{args.protocol}"
    for folder in (out, out.with_name(out.name + "_rerun")):
        shutil.rmtree(folder, ignore_errors=True)
    rec: dict = {"data": str(E3.relative_to(ROOT.parent)), "machine_note": "2 shared cores; torch one thread"}
    rec["cell-forest"] = _run("cell-forest", out)
    cnn_kw = {"image_size": args.image_size, "epochs": args.epochs, "protocol": args.protocol}
    rec["pixel-cnn"] = _run("pixel-cnn", out, **cnn_kw)
    rec["pixel-cnn"]["settings"] = cnn_kw
    if not args.no_rerun:  # a folder of its own: every view rendered again, nothing cached shared
        again = _run("pixel-cnn", out.with_name(out.name + "_rerun"), **cnn_kw)
        rec["pixel-cnn"]["rerun_identical"] = again["predictions"] == rec["pixel-cnn"]["predictions"]
        rec["pixel-cnn"]["rerun_cpu_seconds"] = again["cpu_seconds"]
    for r in ("cell-forest", "pixel-cnn"):
        rec[r].pop("predictions")
        print(f"{r}: {rec[r]['correct']}/{rec[r]['n']} {rec[r]['eval']['ci95_clopper_pearson']} "
              f"cpu {rec[r]['cpu_seconds']} s; curve {rec[r]['training_curve']}")
    from viewcert.attribution.pipeline import run_ladder
    from viewcert.stats import BootstrapSettings

    rec["r1"] = {"protocol": args.protocol, "by_delta": _ceiling(args.protocol)}
    lad, _, _ = run_ladder(manifest=out / "ladder.toml", r1=tuple(r["r1"] for r in rec["r1"]["by_delta"]),
                           bootstrap=BootstrapSettings(n_boot=1000))
    arms = lad.arms[lad.arms["rung"].str.startswith("learned reader")]
    rec["ladder_rungs"] = arms[["model", "rung", "correct", "n", "ci_lo", "ci_hi"]].to_dict("records")
    rec["ladder_r1"] = [{"delta": c.delta, "value": float(c.value)} for c in lad.ceilings]
    out_file = OUT if args.protocol == "render-ceiling-5" else OUT.with_name(f"learn_{args.protocol}.json")
    out_file.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out_file}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.exit(main())
