"""The whole PDB Chemical Component Dictionary through viewcert certify, one protocol per command.

    python benchmarks/bench_ccd.py run --protocol axes-3 [--stride N] [--views front,top] [--workers 2]
                                       [--scheduler ADDR] [--executor dask|processes]
    python benchmarks/bench_ccd.py scaling --stride 20            # 1 -> 2 local workers on a slice
    python benchmarks/bench_ccd.py crosscheck --stride 50         # ours vs pymatgen point groups + CIP

``run`` is ``viewcert certify builtin:ccd --protocol P`` (``--stride N`` keeps every N-th component, a
deterministic slice written to the run folder as ``codes.txt``) through a Dask ``LocalCluster`` (2 single-
threaded worker processes by default; ``--scheduler tcp://...`` for a cluster) with resumable shards under
``out/ccd_runs/<name>/.shards`` (``$VIEWCERT_CCD_RUNS``): kill it and run the same command again to resume. It records
wall time, throughput (components/s and per core), the peak resident memory of each worker process (psutil,
polled every 0.5 s) and the census: components with Φ_δ ≠ ∅, point-group-ambiguous (the reconstruction's
group ≠ the input's), handedness-ambiguous (status not_determined or undecided among chiral components),
with examples. The pymatgen cross-check is off in ``run`` (0.2–40 s per molecule); ``crosscheck`` measures
it on a slice, with RDKit's CIP labels against the dictionary's own. Results merge into
``benchmarks/results/ccd.json`` under one key per run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import psutil

from viewcert.certify import CertifyConfig
from viewcert.certify.inputs import load_input
from viewcert.certify.run import certify
from viewcert.io.ccd import ccd_codes, ccd_record
from viewcert.parallel import map_items
from viewcert.symmetry.pointgroup import point_group, pymatgen_point_group

RESULTS = Path(__file__).parent / "results"
RUNS = Path(os.environ.get("VIEWCERT_CCD_RUNS", Path(__file__).parent.parent / "out" / "ccd_runs"))


class MemoryPoll:
    """Peak RSS (MB) of every child process of this one, polled every ``dt`` seconds in a thread."""

    def __init__(self, dt: float = 0.5):
        self.dt, self.peak, self.cpu, self._stop = dt, {}, {}, threading.Event()

    def _loop(self):
        me = psutil.Process()
        while not self._stop.is_set():
            for c in me.children(recursive=True):
                try:
                    rss = c.memory_info().rss / 1e6
                    name = " ".join(c.cmdline()[:3])[-60:]
                    t = c.cpu_times()
                    self.cpu[c.pid] = t.user + t.system  # last seen: CPU seconds of this worker
                except psutil.Error:
                    continue
                key = f"{c.pid}"
                self.peak[key] = max(self.peak.get(key, (0.0, name))[0], rss), name
            self._stop.wait(self.dt)

    def __enter__(self):
        self._t = threading.Thread(target=self._loop, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


def slice_spec(folder: Path, stride: int) -> str:
    if stride <= 1:
        return "builtin:ccd"
    folder.mkdir(parents=True, exist_ok=True)
    codes = ccd_codes()[::stride]
    (folder / "codes.txt").write_text("\n".join(codes) + "\n")
    return f"ccd:@{folder / 'codes.txt'}"


def census(cert: dict, n_examples: int = 8) -> dict:
    """Φ ≠ ∅, point-group-ambiguous and handedness-ambiguous components, with examples."""
    items = [it for it in cert["items"] if it["outcome"] != "error"]
    mol = [it for it in items if it.get("molecule")]

    def ex(rows):
        return [{"id": it["id"], "formula": it["formula"], "point_group": it["molecule"]["point_group"]["input"],
                 "reconstructed": it["molecule"]["point_group"]["reconstructed"],
                 "n_phantoms": it["oracle"]["n_phantoms"], "handedness": it["molecule"]["handedness"]["status"]}
                for it in rows[:n_examples]]

    phi = [it for it in mol if it["oracle"]["n_phantoms"]]
    not_unique = [it for it in mol if not it["unique"]]
    pg_amb = [it for it in mol if not it["correct_by_level"].get("point_group", True)]
    chiral = [it for it in mol if it["molecule"]["handedness"]["chiral"]]
    hand_amb = [it for it in chiral if it["molecule"]["handedness"]["status"] in ("not_determined", "undecided")]
    status: dict[str, int] = {}
    for it in mol:
        s = it["molecule"]["handedness"]["status"]
        status[s] = status.get(s, 0) + 1
    stereo = [it for it in mol if (it["molecule"].get("stereocentres") or {}).get("source")]
    return {
        "n_molecules": len(mol),
        "n_errors": len(cert["items"]) - len(items),
        "phi_nonempty": len(phi),
        "not_unique": len(not_unique),
        "point_group_ambiguous": len(pg_amb),
        "chiral": len(chiral),
        "handedness_ambiguous": len(hand_amb),
        "handedness_determined_of_chiral": sum(1 for it in chiral
                                               if it["molecule"]["handedness"]["status"] == "determined"),
        "handedness_status": dict(sorted(status.items())),
        "stereocentre_bearing": len(stereo),
        "stereocentres_rdkit_agree_with_ccd": sum(1 for it in stereo if it["molecule"]["stereocentres"]["agree"]),
        "examples": {"phi_nonempty": ex(phi), "point_group_ambiguous": ex(pg_amb),
                     "handedness_ambiguous": ex(hand_amb)},
        "error_reasons": _error_reasons(cert),
    }


def _error_reasons(cert: dict) -> dict:
    out: dict[str, int] = {}
    for it in cert["items"]:
        if it["outcome"] == "error":
            msg = it.get("error", "")
            key = msg.split("field ccd: ")[-1].split(" for ")[0].split(" (")[0][:60]
            if "apart" in msg:
                key = "atoms closer than 0.5 Å (duplicated sites)"
            out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _cluster(workers: int, scheduler: str | None):
    if scheduler:
        return scheduler, None
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                           memory_limit="1.5GB")
    return Client(cluster, set_as_default=False), cluster


def do_run(args) -> dict:
    name = args.name or (args.protocol + (f"-{args.views.replace(',', '+')}" if args.views else "")
                         + (f"-stride{args.stride}" if args.stride > 1 else ""))
    folder = RUNS / name
    spec = slice_spec(folder, args.stride)
    cfg = CertifyConfig(protocol=args.protocol, views=tuple(args.views.split(",")) if args.views else None,
                        molecule_cross_check=False, observe=args.observe)
    n = len(load_input(spec))
    client = cluster = None
    if args.executor == "dask":
        client, cluster = _cluster(args.workers, args.scheduler)
    t0 = time.perf_counter()
    with MemoryPoll() as mem:
        cert = certify(spec, cfg, out=folder, scheduler=client, n_workers=args.workers, plots=False,
                       progress=False)
    wall = time.perf_counter() - t0
    if cluster is not None:
        client.close()
        cluster.close()
    workers = sorted((v[0] for v in mem.peak.values()), reverse=True)[: args.workers]
    cpu = sum(sorted(mem.cpu.values(), reverse=True)[: args.workers])  # the busiest processes: the workers
    run = json.loads((folder / "run.json").read_text())
    return {
        "name": name, "input": spec if args.stride <= 1 else f"every {args.stride}th CCD component ({n})",
        "protocol": args.protocol, "views": args.views, "observe": args.observe, "n_items": n,
        "executor": args.executor, "workers": args.workers, "scheduler": args.scheduler or "LocalCluster",
        "wall_seconds": round(wall, 1), "n_resumed": run.get("n_resumed"),
        "components_per_second": round(n / wall, 2),
        "components_per_second_per_core": round(n / wall / max(1, args.workers), 2),
        "peak_rss_mb_per_worker": [round(w) for w in workers],
        "worker_cpu_seconds": round(cpu, 1),
        "components_per_cpu_second": round(n / cpu, 2) if cpu else None,
        "load_average_1min_at_end": round(os.getloadavg()[0], 2),
        "certificate_digest": cert["digest"]["value"], "census": census(cert),
    }


def do_scaling(args) -> dict:
    out = {}
    for w in (1, 2):
        a = argparse.Namespace(**{**vars(args), "workers": w, "executor": "processes",
                                  "name": f"scaling-{args.protocol}-stride{args.stride}-w{w}"})
        folder = RUNS / a.name
        if (folder / ".shards").exists():
            for p in (folder / ".shards").rglob("*.json"):
                p.unlink()  # time a fresh run
        r = do_run(a)
        out[f"{w}_workers"] = {k: r[k] for k in ("n_items", "wall_seconds", "components_per_second",
                                                 "peak_rss_mb_per_worker")}
    out["scaling_2_vs_1_workers"] = round(out["2_workers"]["components_per_second"] / out["1_workers"]["components_per_second"], 2)
    return out


def crosscheck_one(code: str) -> dict:
    """Our point group vs pymatgen's at τ = 0.01 Å, and RDKit's CIP labels vs the dictionary's."""
    from viewcert.certify.molecule import stereocentres

    warnings.filterwarnings("ignore")
    r = ccd_record(code)
    if r.structure is None:
        return {"code": code, "skipped": r.reason}
    s = r.structure
    t = time.perf_counter()
    ours = point_group(s.positions, s.numbers, 0.01)
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    try:
        theirs = pymatgen_point_group(s.positions, s.numbers, 0.01)
    except Exception as exc:  # noqa: BLE001 - recorded
        theirs = f"error: {type(exc).__name__}"
    t_pmg = time.perf_counter() - t
    st = stereocentres(s, r.bonds, charges=r.charges, source_labels=r.stereo)
    return {"code": code, "n_atoms": s.n_atoms, "ours": ours.symbol, "closed": ours.closed, "pymatgen": theirs,
            "t_ours": t_ours, "t_pymatgen": t_pmg, "stereo_status": st.status, "n_stereo_ccd": len(st.source),
            "n_stereo_rdkit": len(st.rdkit), "stereo_agree": st.agree}


def do_crosscheck(args) -> dict:
    codes = list(ccd_codes()[:: args.stride])
    folder = RUNS / f"crosscheck-stride{args.stride}"
    t0 = time.perf_counter()
    run = map_items(crosscheck_one, codes, keys=codes, workdir=folder / ".shards", n_workers=args.workers,
                    fingerprint=f"crosscheck-v1-{args.stride}", progress=False)
    wall = time.perf_counter() - t0
    rows = [r for r in run.results if "skipped" not in r]
    dis = [r for r in rows if r["ours"] != r["pymatgen"]]
    stereo = [r for r in rows if r["n_stereo_ccd"]]
    tp = np.array([r["t_pymatgen"] for r in rows])
    to = np.array([r["t_ours"] for r in rows])
    return {
        "input": f"every {args.stride}th CCD component ({len(codes)}; {len(rows)} with ideal coordinates)",
        "tolerance_A": 0.01, "wall_seconds": round(wall, 1),
        "agree": len(rows) - len(dis), "n": len(rows), "agree_fraction": round((len(rows) - len(dis)) / len(rows), 5),
        "disagreements": [{k: r[k] for k in ("code", "n_atoms", "ours", "closed", "pymatgen")} for r in dis],
        "seconds_per_molecule": {"ours_median": round(float(np.median(to)), 4), "ours_mean": round(float(to.mean()), 4),
                                 "pymatgen_median": round(float(np.median(tp)), 4),
                                 "pymatgen_mean": round(float(tp.mean()), 4), "pymatgen_max": round(float(tp.max()), 2)},
        "stereocentre_bearing": len(stereo),
        "stereo_rdkit_agree_with_ccd": sum(1 for r in stereo if r["stereo_agree"]),
        "stereo_rdkit_failed": sum(1 for r in stereo if r["stereo_status"] != "ok"),
        "stereo_disagreements": [r["code"] for r in stereo if not r["stereo_agree"]][:50],
    }


def markdown_table(data: dict) -> str:
    """The census table of docs/molecules.md from ccd.json (one row per run)."""
    rows = ["| run | components | Φ_δ ≠ ∅ | point-group-ambiguous | chiral | handedness determined | "
            "handedness-ambiguous | wall s | comp/s | comp/CPU-s | peak RSS/worker MB |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, r in data.items():
        if not isinstance(r, dict) or "census" not in r:
            continue
        c = r["census"]
        rows.append(f"| {key} | {c['n_molecules']} (+{c['n_errors']} unreadable) | {c['phi_nonempty']} | "
                    f"{c['point_group_ambiguous']} | {c['chiral']} | {c['handedness_determined_of_chiral']} | "
                    f"{c['handedness_ambiguous']} | {r['wall_seconds']} | {r['components_per_second']} | "
                    f"{r.get('components_per_cpu_second')} | {', '.join(map(str, r['peak_rss_mb_per_worker']))} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("run", "scaling", "crosscheck", "table"))
    ap.add_argument("--protocol", default="axes-3")
    ap.add_argument("--views", default=None)
    ap.add_argument("--observe", default="ideal")
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--executor", choices=("dask", "processes"), default="dask")
    ap.add_argument("--scheduler", default=None)
    ap.add_argument("--name", default=None)
    args = ap.parse_args()
    if args.mode == "table":
        print(markdown_table(json.loads((RESULTS / "ccd.json").read_text())))
        return
    result = {"run": do_run, "scaling": do_scaling, "crosscheck": do_crosscheck}[args.mode](args)
    key = {"run": lambda: result["name"], "scaling": lambda: f"scaling-{args.protocol}-stride{args.stride}",
           "crosscheck": lambda: f"crosscheck-stride{args.stride}"}[args.mode]()
    path = RESULTS / "ccd.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault("machine", {"platform": platform.platform(), "cpus": os.cpu_count(),
                                "python": platform.python_version()})
    data[key] = result
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(result, indent=1, ensure_ascii=False)[:3000])


if __name__ == "__main__":
    main()
