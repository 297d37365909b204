"""Where one certified crystal item's time goes: CPU per stage of ``certify_item`` under the study's
configuration (δ = 0.15 Å first pair, greedy Cartesian merge, τ = 0.01 Å, 5°), the profile behind
``docs/speed.md``'s per-stage table.

Each stage is timed by wrapping the function ``certify.evaluate`` calls for it (this process's CPU time,
``time.process_time``); the symmetry engines are timed at their adapters (``symmetry._spglib`` /
``symmetry._moyo``), so their rows overlap the stages that call them (standardisation, labels, the doubt
guard). Five items run first as a warm-up (imports, numba cache load). Not a speed claim by itself: the
ratios live in ``bench_anchor.py``.

Usage: ``python benchmarks/profile_item_stages.py [--subset eval|all] [--out FILE.json]``. Skips (exit 0)
when the e3 data (``../shared/data/render-ceiling``) is absent.
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

E3 = Path(__file__).resolve().parents[2] / "shared" / "data" / "render-ceiling" / "data" / "e3"
STAGES = (  # (module, function, row)
    ("viewcert.symmetry._spglib", "symmetry_dataset", "spglib (every call)"),
    ("viewcert.symmetry._moyo", "moyo_dataset", "moyopy (every call)"),
    ("viewcert.certify.inputs", "Item.read", "CIF read (gemmi, validation)"),
    ("viewcert.certify.evaluate", "standardize_with_dataset", "standardisation (incl. its spglib call)"),
    ("viewcert.symmetry.reuse", "doubtful", "doubt guard (incl. its lattice-only spglib call)"),
    ("viewcert.symmetry.reuse", "confirm", "fresh spglib call the guard demands"),
    ("viewcert.certify.evaluate", "item_cameras", "cameras"),
    ("viewcert.certify.evaluate", "observe_as", "observation"),
    ("viewcert.certify.evaluate", "reconstruct", "oracle"),
    ("viewcert.certify.evaluate", "analyse", "phantom analysis"),
    ("viewcert.certify.evaluate", "_perspective_extras", "independence"),
    ("viewcert.certify.evaluate", "_reconstruction_check", "reconstruction's label"),
    ("viewcert.certify.evaluate", "cell_digest", "cell digest"),
    ("viewcert.certify.evaluate", "cameras_digest", "cameras digest"),
    ("viewcert.certify.evaluate", "certify_item", "TOTAL certify_item"),
)


def _wrap(acc: collections.Counter, cnt: collections.Counter, mod, name: str, row: str) -> None:
    if "." in name:  # a method: wrap it on its class
        cls, name = name.split(".")
        mod = getattr(mod, cls)
    fn = getattr(mod, name)

    def timed(*a, **k):
        t = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            acc[row] += time.process_time() - t
            cnt[row] += 1

    setattr(mod, name, timed)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subset", default="eval", choices=("eval", "all"))
    ap.add_argument("--out", type=Path, default=None, help="also write the table as JSON")
    args = ap.parse_args(argv)
    if not (E3 / "structures.json").exists():
        print(f"skipped: the e3 data is absent ({E3})")
        return 0
    warnings.filterwarnings("ignore")
    from viewcert.certify import CertifyConfig
    from viewcert.certify.inputs import load_input

    acc: collections.Counter = collections.Counter()
    cnt: collections.Counter = collections.Counter()
    for mod_name, name, row in STAGES:
        _wrap(acc, cnt, importlib.import_module(mod_name), name, row)
    ev = importlib.import_module("viewcert.certify.evaluate")
    cfg = CertifyConfig(delta=0.15, tau=0.01, pairs="first", merge="greedy", periodic_merge=False)
    items = list(load_input(E3, subset=args.subset).items)
    for it in items[:5]:
        ev.certify_item(it, cfg)
    acc.clear()
    cnt.clear()
    load = os.getloadavg()[0]
    for it in items:
        ev.certify_item(it, cfg)
    n = len(items)
    rows = {row: {"ms_per_item": 1e3 * acc[row] / n, "calls": cnt[row]} for _, _, row in STAGES}
    for row, v in sorted(rows.items(), key=lambda kv: -kv[1]["ms_per_item"]):
        print(f"{row:50s} {v['ms_per_item']:7.3f} ms/item  ({v['calls']} calls)")
    print(f"n = {n}, 1-min load at start {load:.2f}, at end {os.getloadavg()[0]:.2f}")
    if args.out:
        args.out.write_text(json.dumps({"subset": args.subset, "n": n, "load_1min_start": load,
                                        "stages": rows}, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
