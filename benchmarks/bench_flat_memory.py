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

Run it niced on a shared machine (``nice -n 15 python ...``: every process it starts inherits that). Usage: ``python benchmarks/bench_flat_memory.py [--sizes 1000,4000,10000,20000] [--json-sizes 1000,4000,10000]
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
#: the source measured: this tree's, or a snapshot of it (VIEWCERT_BENCH_SRC) so that editing the tree during a long run
#: changes neither the code measured nor the run's fingerprint (a resumed run reuses shards of the same source only)
SRC = Path(os.environ.get("VIEWCERT_BENCH_SRC") or REPO / "src")
ENV = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
# this tree's viewcert, here and in LocalCluster's worker processes (multiprocessing hands them this sys.path)
sys.path.insert(0, str(SRC))

GENERATE = """
import sys, warnings
from pathlib import Path
import pyarrow as pa, pyarrow.parquet as pq
from viewcert.elements import symbols
n, folder, per, source = int(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if source == "pyxtal":  # a seeded pool: every third space group whose smallest Wyckoff multiplicity m is <= 4,
    from pyxtal import pyxtal  # Si and O at m sites each (2-8 atoms); the label is pyxtal's space group
    from pyxtal.symmetry import Group
    pool = []
    for g in range(1, 231, 3):
        m = min(w.multiplicity for w in Group(g).Wyckoff_positions)
        if m > 4:
            continue
        for attempt in range(4):
            c = pyxtal()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    c.from_random(3, g, ["Si", "O"], [m, m], random_state=42_000 + g + 1000 * attempt)
            except Exception:
                continue
            if c.valid:
                a = c.to_ase()
                pool.append((a.cell[:].tolist(), a.positions.tolist(), a.get_chemical_symbols(), g))
                break
elif source == "e3":  # the study's 1,820 e3 crystals in id order; the label is spglib's space group of the input
    import json, spglib
    from viewcert.io.cif import read_cif_text
    data = json.loads((Path(sys.argv[5]) / "structures.json").read_text())
    pool = []
    for mid in sorted(data):
        s = read_cif_text(data[mid]["cif"], source=mid)
        g = spglib.get_symmetry_dataset((s.lattice, s.frac_coords, s.numbers), symprec=1e-3).number
        pool.append((s.lattice.tolist(), s.positions.tolist(), list(symbols(s.numbers)), int(g)))
else:
    from viewcert.io.builtin import builtin
    pool = [(s.lattice.tolist(), s.positions.tolist(), list(symbols(s.numbers)), int(s.identifier.split("_")[2]))
            for s in builtin("builtin:prototypes")]
folder.mkdir(parents=True, exist_ok=True)
for first in range(0, n, per):
    cols = {k: [] for k in ("immutable_id", "lattice_vectors", "cartesian_site_positions", "species_at_sites",
                            "space_group_number")}
    for k in range(first, min(n, first + per)):
        lat, pos, sp, g = pool[k % len(pool)]
        cols["immutable_id"].append(f"p{k:07d}")
        cols["lattice_vectors"].append(lat)
        cols["cartesian_site_positions"].append(pos)
        cols["species_at_sites"].append(sp)
        cols["space_group_number"].append(g)
    pq.write_table(pa.table(cols), folder / f"shard-{first // per:05d}.parquet", row_group_size=4096)
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
d = load_input(f"optimade:{path}#label=space_group_number")
t_load = time.perf_counter() - t0
rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if mode == "table":
    cert = certify_streamed(d, cfg, out, n_workers=workers, scheduler=scheduler, progress=False, shard_items=shard)
    digest = cert["items_table"]["chain"]
else:
    cert = certify(d, cfg, out=out, n_workers=workers, scheduler=scheduler, plots=False, progress=False,
                   resume=False).to_dict()
    digest = cert["digest"]["value"]
wall = time.perf_counter() - t0
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
me = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"n": len(d), "peak_rss_mb": me.ru_maxrss / 1024, "rss_after_load_mb": rss_loaded / 1024,
                  "load_s": t_load, "wall_s": wall, "coordinator_cpu_s": me.ru_utime + me.ru_stime,
                  "worker_cpu_s": kids.ru_utime + kids.ru_stime, "digest": digest,
                  "R1": cert["summary"]["R1"], "n_errors": cert["summary"]["n_errors"],
                  "items_type": type(d.items).__name__,
                  **({k: json.load(open(f"{out}/run.json"))[k] for k in ("n_resumed", "n_computed")}
                     if mode == "table" else {})}))
"""

INPUT_DRIVER = """
import hashlib, json, resource, sys, time
from viewcert.certify.inputs import Dataset, load_input
path, mode, shard = sys.argv[1], sys.argv[2], int(sys.argv[3])
t0 = time.perf_counter()
d = load_input(f"optimade:{path}#label=space_group_number")
if mode == "input-eager":  # every Item held, as Dataset.items was before the lazy input
    d = Dataset(d.spec, d.kind, tuple(d.items), d.files, location=d.location)
t_load = time.perf_counter() - t0
rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
h, n = hashlib.sha256(), 0
for a in range(0, len(d), shard):  # what certify.stream hands to each shard
    for it in d.items[a:a + shard]:
        h.update(f"{it.id}:{it.sha256}:{it.kind}\\n".encode())
        n += 1
me = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"n": n, "peak_rss_mb": me.ru_maxrss / 1024, "rss_after_load_mb": rss_loaded / 1024,
                  "load_s": t_load, "wall_s": time.perf_counter() - t0, "coordinator_cpu_s": me.ru_utime + me.ru_stime,
                  "digest": h.hexdigest(), "items_type": type(d.items).__name__}))
"""


def measure_input(tmp: Path, n: int, mode: str, shard: int, per: int) -> dict:
    """The input side alone (no certification): load the database and hand its items out shard by shard, lazily
    (``input``) or every Item held (``input-eager``); peak RSS of that process and a digest of the items handed."""
    start = _stamp()
    row = _run([str(_database(tmp, n, per)), mode, str(shard)], INPUT_DRIVER)
    row.update(mode=mode, executor="none", **start, load_avg_end=_stamp()["load_avg"])
    print(f"{mode:>12} n={n:>7}: peak RSS {row['peak_rss_mb']:.0f} MB (after load {row['rss_after_load_mb']:.0f}), "
          f"load {row['load_s']:.1f} s, {row['coordinator_cpu_s']:.1f} s CPU, items digest {row['digest'][:12]}",
          flush=True)
    return row


def _run(args: list[str], driver: str = DRIVER) -> dict:
    res = subprocess.run([sys.executable, "-c", driver, *args], env=ENV, capture_output=True,
                         text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(f"driver failed ({res.returncode}): {res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


SOURCE = "prototypes"  # the structures cycled through: builtin:prototypes, a seeded pyxtal pool or e3 (--source)
E3 = REPO.parent / "shared" / "data" / "render-ceiling" / "data" / "e3"  # the study's data (--source e3)


def _database(tmp: Path, n: int, per: int) -> Path:
    """A folder of OPTIMADE-style Parquet shards of ``per`` rows (row groups of 4096), ``n`` rows in all."""
    path = tmp / f"db{n}"
    if not path.exists():
        subprocess.run([sys.executable, "-c", GENERATE, str(n), str(path), str(per), SOURCE, str(E3)], env=ENV,
                       check=True)
    return path


def _stamp() -> dict:
    """When and on what a row was measured: UTC date, the tree's commit, the machine's load (1, 5, 15 min)."""
    commit = os.environ.get("VIEWCERT_BENCH_COMMIT") or subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
        check=False).stdout.strip()
    dirty = "" if SRC != REPO / "src" else subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--", "src"], capture_output=True, text=True,
        check=False).stdout.strip()
    return {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit + ("+dirty" if dirty else ""),
            "load_avg": [round(x, 2) for x in os.getloadavg()]}


def measure(tmp: Path, n: int, mode: str, workers: int, scheduler: str, shard: int, label: str,
            per: int = 20000, out: Path | None = None, tree_cpu=None) -> dict:
    out = out or tmp / f"out-{label}-{mode}-{n}"
    _database(tmp, n, per)
    start = _stamp()
    cpu0 = tree_cpu() if tree_cpu is not None else 0.0
    row = _run([str(_database(tmp, n, per)), str(out), mode, str(workers), scheduler, str(shard)])
    row.update(mode=mode, executor=label, workers=workers, source=SOURCE, **start, load_avg_end=_stamp()["load_avg"])
    # local workers are reaped children (their CPU counted); Dask workers are not: the CPU their process tree
    # used during the run (``tree_cpu``, read by the caller), else wall × workers, an upper bound
    computed = row.get("n_computed", n)
    if tree_cpu is not None:
        row["worker_cpu_s"] = tree_cpu() - cpu0
    row["cpu_ms_per_item"] = 1000 * (row["worker_cpu_s"] if label == "local" or tree_cpu is not None
                                     else row["wall_s"] * workers) / max(1, computed)
    print(f"{label:>14} {mode:>5} n={n:>7}: peak RSS {row['peak_rss_mb']:.0f} MB (after load "
          f"{row['rss_after_load_mb']:.0f}), wall {row['wall_s']:.1f} s, {row['cpu_ms_per_item']:.2f} ms CPU/item "
          f"({computed} computed), digest {row['digest'][:12]}", flush=True)
    return row


def killed_and_resumed(tmp: Path, n: int, workers: int, shard: int, per: int = 20000) -> list[dict]:
    """SIGKILL a table run once half its shards are written (its peak RSS read from /proc just before), then rerun
    it in the same folder: the rerun computes only the missing shards."""
    import signal

    out = tmp / f"out-killed-{n}"
    total = -(-n // shard)
    cmd = [sys.executable, "-c", DRIVER, str(_database(tmp, n, per)), str(out), "table",
           str(workers), "", str(shard)]
    start = _stamp()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    hwm = 0.0
    while proc.poll() is None and len(list((out / "items").glob("part-*.parquet"))) < max(1, total // 2):
        hwm = max(hwm, _vm_hwm_mb(proc.pid))
        time.sleep(1)
    hwm = max(hwm, _vm_hwm_mb(proc.pid))
    written = len(list((out / "items").glob("part-*.parquet")))
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    killed = {"mode": "table-killed", "executor": "local", "n": n, "workers": workers, "source": SOURCE, **start,
              "shards_written_when_killed": written, "shards": total, "peak_rss_mb": hwm,
              "wall_s": time.perf_counter() - t0}
    print(f"killed at {written}/{total} shards after {killed['wall_s']:.0f} s (peak RSS {hwm:.0f} MB)", flush=True)
    again = measure(tmp, n, "table", workers, "", shard, "local", per, out=out)
    again["mode"] = "table-resumed"
    return [killed, again]


def _vm_hwm_mb(pid: int) -> float:
    """The peak RSS (VmHWM) of a live process, in MB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _tree_cpu_s(procs) -> float:
    """User + system CPU seconds of the processes ``procs`` and all their descendants alive now (psutil)."""
    import psutil

    total = 0.0
    for p in procs:
        try:
            root = psutil.Process(p.pid)
            for q in (root, *root.children(recursive=True)):
                t = q.cpu_times()
                total += t.user + t.system
        except psutil.Error:
            continue
    return total


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
    ap.add_argument("--local-cluster", action="store_true", help="also a Dask LocalCluster run of --dask-size")
    ap.add_argument("--kill-size", type=int, default=0, help="SIGKILL a table run of this size half way, rerun it")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shard-items", type=int, default=5000)
    ap.add_argument("--per-file", type=int, default=20000, help="rows per Parquet file of the input")
    ap.add_argument("--input-sizes", default="", help="the input side alone (lazy and eager) at these sizes")
    ap.add_argument("--source", choices=("prototypes", "pyxtal", "e3"), default="prototypes",
                    help="structures cycled through: builtin:prototypes (20), a seeded pyxtal pool (62, 2-8 atoms) or e3 (1,820)")
    args = ap.parse_args()
    global SOURCE
    SOURCE = args.source
    rows = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        _warm(tmp, args)
        for n in (int(x) for x in args.input_sizes.split(",") if x):
            rows += [measure_input(tmp, n, mode, args.shard_items, args.per_file) for mode in ("input", "input-eager")]
        for n in (int(x) for x in args.json_sizes.split(",") if x):
            rows.append(measure(tmp, n, "json", args.workers, "", args.shard_items, "local", args.per_file))
        for n in (int(x) for x in args.sizes.split(",") if x):
            rows.append(measure(tmp, n, "table", args.workers, "", args.shard_items, "local", args.per_file))
        if args.kill_size:
            rows += killed_and_resumed(tmp, args.kill_size, args.workers, args.shard_items, args.per_file)
        if args.dask_size:
            rows += _dask_rows(tmp, args)
    record(rows, args)


def _warm(tmp: Path, args) -> None:
    """One unmeasured run of 200 items, so that no measured row pays the kernels' compilation (numba's cache is
    keyed by the source path: the first process on a fresh source snapshot compiles, about 80 CPU-s and 300 MB)."""
    measure(tmp, 200, "json", args.workers, "", args.shard_items, "local", args.per_file, out=tmp / "warm")


def _dask_rows(tmp: Path, args) -> list[dict]:
    rows = []
    if args.local_cluster:
        cluster = _local_cluster(args.workers)
        try:
            rows.append(measure(tmp, args.dask_size, "table", args.workers, cluster.scheduler_address,
                                args.shard_items, "LocalCluster", args.per_file))
        finally:
            cluster.close()
    address, procs = _external(tmp, args.workers)
    try:
        rows.append(measure(tmp, args.dask_size, "table", args.workers, address, args.shard_items,
                            "dask-scheduler", args.per_file, tree_cpu=lambda: _tree_cpu_s(procs)))
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(30)
    return rows


def record(rows: list[dict], args) -> None:
    """Append this run's rows (each dated, with its commit and the load) to results/flat_memory.json, earlier rows
    kept, with the run's digest checks (every table run of one size gives one digest)."""
    import fcntl

    path = RESULTS / "flat_memory.json"
    RESULTS.mkdir(parents=True, exist_ok=True)
    by_size: dict = {}
    for r in rows:
        if r["mode"] in ("table", "table-resumed", "input", "input-eager"):
            kind = "input" if r["mode"].startswith("input") else "table"
            by_size.setdefault(f"{kind}:{r['n']}", {})[f"{r['executor']}/{r['mode']}"] = r["digest"]
    run = {"date": rows[0]["date"] if rows else _stamp()["date"], "commit": _stamp()["commit"],
           "args": vars(args), "table_digests": by_size,
           "same_digest_per_size": {n: len(set(d.values())) == 1 for n, d in by_size.items() if len(d) > 1}}
    with open(Path(tempfile.gettempdir()) / "viewcert-flat-memory.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two bench runs may finish together
        result = json.loads(path.read_text()) if path.exists() else {"rows": []}
        result.setdefault("machine", {"cpus": os.cpu_count(), "python": platform.python_version()})
        result["machine"]["note"] = ("shared 2-core machine, other jobs running, the bench niced (nice -n 15): wall "
                                     "times are noisy; load_avg per row; memory is what is compared")
        result["rows"] = result.get("rows", []) + rows
        result["runs"] = result.get("runs", []) + [run]
        path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"wrote {path}; digests per size: {json.dumps(by_size)}; same: {run['same_digest_per_size']}")


if __name__ == "__main__":
    main()
