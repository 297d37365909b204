"""Coordinator memory against the number of items: the JSON certificate (every record held until one
certificate.json is written) against the streamed certificate (``certify.stream``: records written shard by shard
into a Parquet item table), locally, through a Dask ``LocalCluster`` and through ``dask scheduler`` + ``dask
worker`` processes (issue 42).

Input: an OPTIMADE-style Parquet file (``immutable_id``, ``lattice_vectors``, ``cartesian_site_positions``,
``species_at_sites`` and a ``space_group_number`` label column) of N rows cycling through the 20 AFLOW prototypes of
``builtin:prototypes`` (1-12 atoms), ids ``p0000000``..., read lazily (``io.database``). Each measurement runs in a
fresh process (``python -c`` driver below): load the database, certify, print the coordinator's own peak RSS
(``ru_maxrss`` of that process, workers excluded), its wall time, the CPU time of the local workers
(``RUSAGE_CHILDREN`` after the pool is reaped) and the table's chain digest (or the JSON certificate's digest).

Settings: ``render-ceiling-5``, δ = τ = 0.01 Å, ideal observations, one cell observed (``--tiling 1``, the cheap
level: 2×2×2 costs about 1.5× the CPU per item and the same memory per record). Every run's items are the same
prototypes, so per-item CPU is comparable across N and paths.

Usage: ``python benchmarks/bench_flat_memory.py [--sizes 1000,4000,10000,20000] [--json-sizes 1000,4000,10000]
[--dask-size 4000] [--workers 2] [--shard-items 5000]``; the issue's scale is ``--sizes 10000,100000,400000
--json-sizes 10000,100000 --dask-size 100000`` (hours of CPU on a 2-core machine; ``make bench`` runs the
defaults). Writes ``benchmarks/results/flat_memory.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
# this tree's viewcert, here and in LocalCluster's worker processes (multiprocessing hands them this sys.path)
sys.path.insert(0, str(REPO / "src"))

GENERATE = """
import sys
import pyarrow as pa, pyarrow.parquet as pq
from viewcert.elements import symbols
from viewcert.io.builtin import builtin
ss, n = builtin("builtin:prototypes"), int(sys.argv[1])
cols = {k: [] for k in ("immutable_id", "lattice_vectors", "cartesian_site_positions", "species_at_sites",
                        "space_group_number")}
for k in range(n):
    s = ss[k % len(ss)]
    cols["immutable_id"].append(f"p{k:07d}")
    cols["lattice_vectors"].append(s.lattice.tolist())
    cols["cartesian_site_positions"].append(s.positions.tolist())
    cols["species_at_sites"].append(list(symbols(s.numbers)))
    cols["space_group_number"].append(int(s.identifier.split("_")[2]))
pq.write_table(pa.table(cols), sys.argv[2], row_group_size=4096)
"""

DRIVER = """
import json, resource, sys, time
from viewcert.certify import CertifyConfig, certify
from viewcert.certify.inputs import load_input
from viewcert.certify.run import certify_streamed
path, out, mode, workers, scheduler, shard = sys.argv[1:7]
workers, shard = int(workers), int(shard)
scheduler = scheduler or None
cfg = CertifyConfig(tiling=(1, 1, 1))
t0 = time.perf_counter()
d = load_input(f"{path}#label=space_group_number")
t_load = time.perf_counter() - t0
rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if mode == "table":
    cert = certify_streamed(d, cfg, out, n_workers=workers, scheduler=scheduler, progress=False, shard_items=shard)
    digest = cert["items_table"]["chain"]
else:
    cert = certify(d, cfg, out=out, n_workers=workers, scheduler=scheduler, plots=False, progress=False,
                   resume=False)
    digest = cert["digest"]["value"]
wall = time.perf_counter() - t0
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
me = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"n": len(d), "peak_rss_mb": me.ru_maxrss / 1024, "rss_after_load_mb": rss_loaded / 1024,
                  "load_s": t_load, "wall_s": wall, "coordinator_cpu_s": me.ru_utime + me.ru_stime,
                  "worker_cpu_s": kids.ru_utime + kids.ru_stime, "digest": digest,
                  "R1": cert["summary"]["R1"], "n_errors": cert["summary"]["n_errors"]}))
"""


def _run(args: list[str]) -> dict:
    res = subprocess.run([sys.executable, "-c", DRIVER, *args], env=ENV, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(f"driver failed ({res.returncode}): {res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _database(tmp: Path, n: int) -> Path:
    path = tmp / f"db{n}.parquet"
    if not path.exists():
        subprocess.run([sys.executable, "-c", GENERATE, str(n), str(path)], env=ENV, check=True)
    return path


def measure(tmp: Path, n: int, mode: str, workers: int, scheduler: str, shard: int, label: str) -> dict:
    out = tmp / f"out-{label}-{mode}-{n}"
    row = _run([str(_database(tmp, n)), str(out), mode, str(workers), scheduler, str(shard)])
    row.update(mode=mode, executor=label, workers=workers)
    # local workers are reaped children (their CPU counted); Dask workers are not: wall × workers, an upper bound
    row["cpu_ms_per_item"] = 1000 * (row["worker_cpu_s"] if label == "local" else row["wall_s"] * workers) / n
    print(f"{label:>14} {mode:>5} n={n:>7}: peak RSS {row['peak_rss_mb']:.0f} MB (after load "
          f"{row['rss_after_load_mb']:.0f}), wall {row['wall_s']:.1f} s, {row['cpu_ms_per_item']:.2f} ms CPU/item, "
          f"digest {row['digest'][:12]}", flush=True)
    return row


def _local_cluster(workers: int):
    from distributed import LocalCluster

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)


def _external(tmp: Path, workers: int):
    """``dask scheduler`` and ``dask worker`` as processes (a scheduler file names the address)."""
    sched_file = tmp / "scheduler.json"
    dask = Path(sys.executable).parent / "dask"
    procs = [subprocess.Popen([str(dask), "scheduler", "--scheduler-file", str(sched_file), "--no-dashboard",
                               "--port", "0"], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    for _ in range(60):
        if sched_file.exists():
            break
        time.sleep(0.5)
    procs.append(subprocess.Popen([str(dask), "worker", "--scheduler-file", str(sched_file), "--nworkers",
                                   str(workers), "--nthreads", "1", "--no-dashboard"], env=ENV,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(8)
    return json.loads(sched_file.read_text())["address"], procs


def main() -> None:
    os.environ["PYTHONPATH"] = ENV["PYTHONPATH"]  # LocalCluster's worker processes import this tree's viewcert
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,4000,10000,20000")
    ap.add_argument("--json-sizes", default="1000,4000,10000")
    ap.add_argument("--dask-size", type=int, default=4000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shard-items", type=int, default=5000)
    ap.add_argument("--append", action="store_true", help="keep the rows of results/flat_memory.json that this run "
                                                          "does not measure again")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for n in (int(x) for x in args.json_sizes.split(",") if x):
            rows.append(measure(tmp, n, "json", args.workers, "", args.shard_items, "local"))
        for n in (int(x) for x in args.sizes.split(",") if x):
            rows.append(measure(tmp, n, "table", args.workers, "", args.shard_items, "local"))
        if args.dask_size:
            cluster = _local_cluster(args.workers)
            try:
                rows.append(measure(tmp, args.dask_size, "table", args.workers, cluster.scheduler_address,
                                    args.shard_items, "LocalCluster"))
            finally:
                cluster.close()
            address, procs = _external(tmp, args.workers)
            try:
                rows.append(measure(tmp, args.dask_size, "table", args.workers, address, args.shard_items,
                                    "dask-scheduler"))
            finally:
                for p in reversed(procs):
                    p.terminate()
                    p.wait(30)
    if args.append and (RESULTS / "flat_memory.json").exists():
        again = {(r["executor"], r["mode"], r["n"]) for r in rows}
        old = json.loads((RESULTS / "flat_memory.json").read_text())["rows"]
        rows = [r for r in old if (r["executor"], r["mode"], r["n"]) not in again] + rows
    same = {r["executor"]: r["digest"] for r in rows if r["n"] == args.dask_size and r["mode"] == "table"}
    result = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "note": "shared 2-core machine, other jobs running: wall times are noisy"},
              "settings": {"protocol": "render-ceiling-5", "delta": 0.01, "tau": 0.01, "tiling": [1, 1, 1],
                           "workers": args.workers, "shard_items": args.shard_items},
              "rows": rows, "dask_digests": same,
              "dask_same_digest": len(set(same.values())) == 1 if same else None}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "flat_memory.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"wrote {RESULTS / 'flat_memory.json'}; same table digest local / LocalCluster / dask-scheduler: "
          f"{result['dask_same_digest']}")


if __name__ == "__main__":
    main()
