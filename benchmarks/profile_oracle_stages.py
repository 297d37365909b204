"""Where the work goes as views and tiling grow: CPU per stage of certifying the built-in prototypes (the
profile behind ``docs/speed.md``'s "Many views and tiled cells").

For each protocol (``render-ceiling-5``, ``fibonacci-27``, ``fibonacci-150`` by default) and tiling (1,1,1 and
2,2,2), every prototype is read and standardised, then its stages are timed one by one (this process's CPU,
``time.process_time``): cameras, observation, the oracle (``reconstruct``) and the phantom analysis
(``analyse``). Inside the oracle the kernel's own stages are timed by calling them one at a time on the same
inputs (rays and grids, seeding and verification, near misses, merge), and the oracle's work counters are
summed (seeds, accepted candidates, distinct supports). Memory: the candidate buffers the seeding stage holds
(bytes, from the counters) and this process's peak RSS after each configuration (``ru_maxrss``: the peak so
far, so configurations run from the lightest to the heaviest).

Not a speed claim by itself (``bench_many_views.py`` holds the before/after ratio). The rows of docs/speed.md
"Many views and tiled cells" are in ``benchmarks/results/oracle_stages.json``.

Usage: ``python benchmarks/profile_oracle_stages.py [--protocols a,b] [--tilings 1,2] [--only N] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import time
from pathlib import Path

import numpy as np

from viewcert.certify.config import CertifyConfig
from viewcert.certify.evaluate import _merge_lattice, _observe, _oracle_options, item_cameras, prepare
from viewcert.certify.inputs import load_input
from viewcert.oracle import _batch, analyse, reconstruct
from viewcert.oracle import _kernels as K
from viewcert.oracle import triangulate as T


def _kernel_stages(obs, lattice, opts) -> dict:
    """CPU seconds of the oracle kernel's stages on one Observations (each stage called on its own)."""
    d, merge, win = T._check_options(opts["delta"], "angstrom", opts["pairs"], opts["merge"], opts["visibility"],
                                     T.DEFAULT_NEAR_MISS_WINDOW)
    P = T._prepare(obs, d, "angstrom", lattice, opts["pairs"], opts["visibility"])
    if P.failure:
        return {}
    kind = np.array(P.kind, dtype=np.int64)
    rot = np.array(P.rot, dtype=np.float64).reshape(-1, 3, 3)
    cen = np.array(P.cen, dtype=np.float64).reshape(-1, 3)
    sf, cx, cy = (np.array(getattr(P, n), dtype=np.float64) for n in ("sf", "cx", "cy"))
    width, height = np.array(P.width, dtype=np.float64), np.array(P.height, dtype=np.float64)
    dmode = np.array(P.dmode, dtype=np.int64)
    delta = np.array(P.delta_k, dtype=np.float64)
    pt_off = np.zeros(len(P.sizes) + 1, dtype=np.int64)
    np.cumsum(P.sizes, out=pt_off[1:])
    uv = np.concatenate(P.uv).reshape(-1, 2)
    labels = np.concatenate(P.labels).astype(np.int64)
    depth = np.concatenate(P.depth).astype(np.float64)
    radius = np.zeros(uv.shape[0])
    greedy, occl, collapse = merge == "greedy", opts["visibility"] == "occlusion", merge == "deterministic"
    has_lat = lattice is not None
    lat = np.asarray(lattice, dtype=np.float64) if has_lat else np.eye(3)
    tiling = np.array(P.tiling, dtype=np.int64)
    out = {}
    t = time.process_time()
    inv = K.lattice_inverse(lat)[0] if has_lat else np.zeros((3, 3))
    w, origins, dirs = _batch._rays(kind, rot, cen, sf, cx, cy, width, height, pt_off, uv)
    uniq, lrank = K.label_ranks(labels)
    g = K.site_grids(kind, sf, dmode, delta, pt_off, w, lrank, uniq.shape[0], depth, win, collapse)
    out["rays and grids"] = time.process_time() - t
    counts = np.zeros(K.N_COUNTS, dtype=np.int64)
    t = time.process_time()
    prune = (T._PRUNE,) if hasattr(T, "_PRUNE") else ()  # the code before issue 59 has no such argument
    sc = K.seed_candidates(kind, rot, cen, sf, cx, cy, dmode, delta, pt_off, w, origins, dirs, lrank, labels, depth,
                           radius, *g, opts["pairs"] == "first", greedy, occl, win, *prune, counts)
    out["seeding and verification"] = time.process_time() - t
    if len(sc) == 13:
        c_x, c_lab, c_sup, c_res, c_rat, c_occ, nc, _, n_x, n_lab, n_sup, n_rat, nn = sc
    else:
        c_x, c_lab, c_sup, c_res, c_rat, c_occ, nc, n_x, n_lab, n_sup, n_rat, nn = sc
    out["candidate rows held"] = int(c_x.shape[0] + n_x.shape[0])
    out["candidate bytes held"] = int(sum(a.nbytes for a in (c_x, c_lab, c_sup, c_res, c_rat, c_occ, n_x, n_lab,
                                                               n_sup, n_rat)))
    t = time.process_time()
    K.near_misses(n_x[:nn], n_lab[:nn], n_sup[:nn], n_rat[:nn], has_lat, lat, inv)
    out["near misses"] = time.process_time() - t
    t = time.process_time()
    K.merge_candidates(c_x[:nc], c_lab[:nc], c_sup[:nc], c_res[:nc], c_rat[:nc], c_occ[:nc], greedy, P.delta3d,
                       has_lat, lat, inv, tiling, kind, rot, cen, sf, cx, cy, dmode, delta, w, origins, dirs, pt_off,
                       counts)
    out["merge"] = time.process_time() - t
    return out


def profile(protocol: str, tiling: tuple, only: int | None) -> dict:
    cfg = CertifyConfig(protocol=protocol, tiling=tiling)
    items = list(load_input("builtin:prototypes").items)[:only]
    stages: collections.Counter = collections.Counter()
    kstages: collections.Counter = collections.Counter()
    work: collections.Counter = collections.Counter()
    atoms = 0
    for it in items:
        prep = prepare(it, cfg)
        if prep.error is not None:
            continue
        cell = prep.cell
        t = time.process_time()
        cams = item_cameras(cell, cfg)
        stages["cameras"] += time.process_time() - t
        t = time.process_time()
        obs = _observe(cell, cams, cfg)
        stages["observation"] += time.process_time() - t
        lat = _merge_lattice(cell, cfg)
        t = time.process_time()
        rec = reconstruct(obs, lattice=lat, **_oracle_options(cfg))
        stages["oracle"] += time.process_time() - t
        t = time.process_time()
        analyse(rec, cell, cfg.oracle.delta)
        stages["phantom analysis"] += time.process_time() - t
        for k, v in rec.counts.items():
            work[k] += v
        atoms += len(obs.views[0].labels)
        kstages.update(_kernel_stages(obs, lat, _oracle_options(cfg)))
    return {"protocol": protocol, "tiling": list(tiling), "items": len(items), "drawn atoms (view 0)": atoms,
            "stages_cpu_s": {k: round(v, 4) for k, v in stages.items()},
            "oracle_kernel_stages": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in kstages.items()},
            "work": dict(work), "peak_rss_mb_so_far": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            "load_1min": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--protocols", default="render-ceiling-5,fibonacci-27,fibonacci-150")
    ap.add_argument("--tilings", default="1,2")
    ap.add_argument("--only", type=int, default=None, help="the first N prototypes only")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    rows = []
    for proto in a.protocols.split(","):
        for t in a.tilings.split(","):
            r = profile(proto, (int(t),) * 3, a.only)
            print(json.dumps(r), flush=True)
            rows.append(r)
    if a.out:
        Path(a.out).write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
