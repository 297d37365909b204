"""Many views and tiled cells (issue 59): ``viewcert certify builtin:prototypes`` before and after, side by side.

Each configuration (protocol × tiling) runs as a fresh ``viewcert certify`` process for the code before (a
commit, extracted with ``git archive`` into a temporary folder) and for this checkout, one after the other in
one run, with the same options (``--no-plots``, ``--workers`` as given: the CLI default is one per CPU). Per
process tree: CPU (user + system of the process and its workers, ``resource.getrusage(RUSAGE_CHILDREN)``),
wall, peak memory as the largest sum of the tree's resident sets and as the largest single process (psutil,
sampled every 50 ms), the 1-minute load before and after. The outputs (``certificate.json``,
``items.csv``, ``summary.txt``) are compared byte for byte; the run fails if any differs. Each side first
certifies one prototype untimed so that numba's cache is warm (the code before compiles its kernels once).

Usage: ``python benchmarks/bench_many_views.py [--before REF] [--configs P:T,...] [--workers N] [--tag NAME]``
(``--configs`` default ``render-ceiling-5:1,render-ceiling-5:2,fibonacci-150:1,fibonacci-150:2``; run it
niced: the before side of ``fibonacci-150:2`` took 246 CPU-s and 6.6 GB). Writes
``benchmarks/results/many_views.json`` (each run under its tag).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "many_views.json"
VIEWCERT = Path(sys.executable).parent / "viewcert"
FILES = ("certificate.json", "items.csv", "summary.txt")


def _tree_rss(p: psutil.Process) -> tuple[int, int]:
    """(sum, largest) of the resident sets of p and its descendants, bytes."""
    try:
        procs = [p, *p.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0, 0
    total = largest = 0
    for q in procs:
        try:
            rss = q.memory_info().rss
        except psutil.NoSuchProcess:
            continue
        total += rss
        largest = max(largest, rss)
    return total, largest


def run(src: Path, args: list[str], out: Path) -> dict:
    """One ``viewcert certify`` process tree with ``src`` first on the path: CPU, wall, peak memory."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0 = os.getloadavg()[0]
    t = time.perf_counter()
    proc = psutil.Popen([str(VIEWCERT), "certify", *args, "--no-plots", "-o", str(out)], env=env,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peak = peak_one = 0
    while proc.poll() is None:
        tot, one = _tree_rss(proc)
        peak, peak_one = max(peak, tot), max(peak_one, one)
        time.sleep(0.05)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = proc.stdout.read().decode("utf-8", "replace")
    if proc.returncode not in (0, 1):
        raise SystemExit(f"viewcert certify {' '.join(args)} failed ({proc.returncode}):\n{text[-2000:]}")
    return {"cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2),
            "wall_s": round(wall, 2), "peak_tree_rss_mb": round(peak / 2**20),
            "peak_process_rss_mb": round(peak_one / 2**20), "load_1min": [round(load0, 2),
                                                                         round(os.getloadavg()[0], 2)]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main", help="git ref of the code before")
    ap.add_argument("--configs", default="render-ceiling-5:1,render-ceiling-5:2,fibonacci-150:1,fibonacci-150:2")
    ap.add_argument("--workers", type=int, default=None, help="--workers of both sides (default: the CLI's)")
    ap.add_argument("--tag", default="current")
    a = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", a.before], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-many-views-") as tmp:
        tmp = Path(tmp)
        archive = subprocess.run(["git", "archive", commit, "src"], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        sides = {"before": tmp / "src", "after": ROOT / "src"}
        for name, src in sides.items():  # warm numba's cache (untimed)
            run(src, ["builtin:aflow:A_cF4_225_a", "--protocol", "fibonacci-27", "--workers", "1"], tmp / f"w-{name}")
        for cfg in a.configs.split(","):
            proto, t = cfg.split(":")
            args = ["builtin:prototypes", "--protocol", proto, "--tiling", ",".join([t] * 3)]
            if a.workers is not None:
                args += ["--workers", str(a.workers)]
            row = {"protocol": proto, "tiling": [int(t)] * 3}
            for name, src in sides.items():
                row[name] = run(src, args, tmp / f"{name}-{proto}-{t}")
                print(cfg, name, row[name], flush=True)
            same = {f: (tmp / f"before-{proto}-{t}" / f).read_bytes() == (tmp / f"after-{proto}-{t}" / f).read_bytes()
                    for f in FILES}
            row["identical_bytes"] = same
            row["cpu_ratio_before_over_after"] = round(row["before"]["cpu_s"] / max(row["after"]["cpu_s"], 1e-9), 2)
            row["peak_ratio_before_over_after"] = round(row["before"]["peak_tree_rss_mb"]
                                                        / max(row["after"]["peak_tree_rss_mb"], 1), 2)
            rows.append(row)
            if not all(same.values()):
                raise SystemExit(f"{cfg}: outputs differ {same}")
    data = json.loads(OUT.read_text()) if OUT.exists() else {}
    data[a.tag] = {"before": commit, "after": head, "workers": a.workers, "cpus": os.cpu_count(),
                   "platform": platform.platform(), "rows": rows,
                   "note": "fresh `viewcert certify builtin:prototypes --no-plots` process trees, before then after "
                           "per configuration, one run; CPU = user + system of the tree"}
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
