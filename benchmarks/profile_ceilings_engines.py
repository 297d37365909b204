"""What certify's two ceilings cost per item, and how much of it is symmetry-engine calls: the path ``viewcert
certify`` maps (``certify.ceilings.CeilingRecords``: the geometric and the as-rendered ceiling of the same views in
one pass) against the geometric ceiling alone (``certify.evaluate.CertifyRecords``), both in chunks of 32 as the
workers run them, on all 1,820 e3 structures under the study's configuration (δ = 0.15 Å first pair, greedy
Cartesian merge, τ = 0.01 Å, 5°).

Each path's CPU per item (``time.process_time``) and, inside it, the CPU of every spglib and moyopy call (timed at
the adapters ``symmetry._spglib.symmetry_dataset`` / ``symmetry._moyo.moyo_dataset``, their Python included, as
``bench_anchor.floor_fns`` times them) with the number of calls; the two paths alternate round by round. Not a
speed claim by itself (the ratios against the study live in ``bench_anchor.py`` and ``bench_e3_process.py``): it
says how much of a whole ``certify`` process the engine calls alone take (issue 59, the 4.5× target).

Usage: ``python benchmarks/profile_ceilings_engines.py [--rounds 2] [--tag NAME]`` (run it niced); writes
``benchmarks/results/ceilings_engines.json`` (each run under its tag). Skips (exit 0) when the e3 data is absent.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import json
import os
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
E3 = ROOT.parent / "shared" / "data" / "render-ceiling" / "data" / "e3"
OUT = ROOT / "benchmarks" / "results" / "ceilings_engines.json"
ENGINES = (("viewcert.symmetry._spglib", "symmetry_dataset", "spglib"),
           ("viewcert.symmetry._moyo", "moyo_dataset", "moyopy"))


def _timed_engines(cpu: collections.Counter, calls: collections.Counter) -> None:
    """Wrap each engine adapter so that its CPU and calls are counted (the module attribute the callers read)."""
    for mod_name, name, row in ENGINES:
        mod = importlib.import_module(mod_name)
        fn = getattr(mod, name)

        def timed(*a, _fn=fn, _row=row, **k):
            t = time.process_time()
            try:
                return _fn(*a, **k)
            finally:
                cpu[_row] += time.process_time() - t
                calls[_row] += 1

        setattr(mod, name, timed)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tag", default="current")
    args = ap.parse_args(argv)
    if not (E3 / "structures.json").exists():
        print(f"skipped: the e3 data is absent ({E3})")
        return 0
    warnings.filterwarnings("ignore")
    cpu: collections.Counter = collections.Counter()
    calls: collections.Counter = collections.Counter()
    _timed_engines(cpu, calls)  # before the certify modules bind nothing: they call through the module attribute
    from viewcert.certify import CertifyConfig
    from viewcert.certify.ceilings import CeilingRecords
    from viewcert.certify.evaluate import CertifyRecords
    from viewcert.certify.inputs import load_input

    cfg = CertifyConfig(delta=0.15, tau=0.01, pairs="first", merge="greedy", periodic_merge=False)
    items = list(load_input(E3, subset="all").items)
    paths = {"both_ceilings": CeilingRecords(cfg), "geometric_only": CertifyRecords(cfg)}
    for fn in paths.values():  # warm-up: imports, kernels' cache load
        fn.map_batch(items[:32])
    chunks = [items[i:i + 32] for i in range(0, len(items), 32)]
    runs: dict = {name: [] for name in paths}
    load = [round(os.getloadavg()[0], 2)]
    for r in range(args.rounds):
        for name in (list(paths) if r % 2 == 0 else list(paths)[::-1]):
            cpu.clear()
            calls.clear()
            t = time.process_time()
            for c in chunks:
                paths[name].map_batch(c)
            total = time.process_time() - t
            n = len(items)
            runs[name].append({"ms_per_item": round(1e3 * total / n, 4),
                               "engines_ms_per_item": round(1e3 * sum(cpu.values()) / n, 4),
                               **{f"{e}_ms_per_item": round(1e3 * cpu[e] / n, 4) for _, _, e in ENGINES},
                               **{f"{e}_calls": calls[e] for _, _, e in ENGINES}})
            print(name, runs[name][-1], flush=True)
    load.append(round(os.getloadavg()[0], 2))
    doc = json.loads(OUT.read_text()) if OUT.exists() else {}
    doc[args.tag] = {"n": len(items), "chunk": 32, "load_1min": load, "runs": runs,
                     "config": "study: delta 0.15 A, first pair, greedy Cartesian merge, tau 0.01 A, 5 deg",
                     "timing_note": "this process's CPU (time.process_time); engines timed at their adapters"}
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
