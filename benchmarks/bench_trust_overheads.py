"""What the trust-boundary writers of issue 23 cost, side by side with the plain writers they replaced.

On the certificate of ``builtin:prototypes`` (render-ceiling-5, δ = τ = 0.01 Å, certified in this process):

- ``items.csv``: ``certify.run.items_table`` (every string cell through ``io.tables``, OWASP's rule) vs the
  same rows written by a plain ``csv.writer``;
- certificate JSON: ``io.atomic.json_dumps`` with ``sanitize.json_text`` vs without it;
- shards: ``parallel.map_items`` writing one shard per item with its SHA-256 digest and a resume reading
  and checking every one, vs the same writes and reads of shards without a digest (the format before);
- and, for scale, the CPU time of certifying the items (the work those writers record).

CPU time of this process (``time.process_time``) per call, averaged over 50 calls (3 for the shards, whose
writes fsync), best of ``--repeat`` runs, interleaved. Usage:
``python benchmarks/bench_trust_overheads.py [--repeat 15]``; writes ``benchmarks/results/trust_overheads.json``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import platform
import tempfile
import time
from pathlib import Path

import viewcert.io.atomic as atomic
from viewcert.certify import CertifyConfig
from viewcert.certify.inputs import load_input
from viewcert.certify.run import TABLE_COLUMNS, items_table, run_certification
from viewcert.io.atomic import json_dumps, write_json_atomic
from viewcert.parallel import map_items

RESULTS = Path(__file__).resolve().parent / "results" / "trust_overheads.json"


def _cpu(fn, loops: int) -> float:
    """CPU seconds of one call, averaged over ``loops`` calls."""
    t0 = time.process_time()
    for _ in range(loops):
        fn()
    return (time.process_time() - t0) / loops


def _plain_table(rows: list[list[str]]) -> str:
    """The same rows as ``items_table`` through a plain csv.writer (the writer before issue 23)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(TABLE_COLUMNS)
    w.writerows(rows)
    return buf.getvalue()


def _record(rec: dict) -> dict:
    return rec


def _shards_new(records: list[dict], folder: Path) -> None:
    """``map_items`` writing one shard per item (with its digest), then a resume reading and checking them."""
    wd = Path(tempfile.mkdtemp(dir=folder))
    keys = [r["id"] for r in records]
    map_items(_record, records, keys=keys, workdir=wd, chunk_size=1, n_workers=1, progress=False)
    again = map_items(_record, records, keys=keys, workdir=wd, chunk_size=1, n_workers=1, progress=False)
    assert again.n_resumed == len(records) and not again.shards_recomputed


def _shards_plain(records: list[dict], folder: Path) -> None:
    """The same shard writes and reads without a digest (the shard format before issue 23)."""
    wd = Path(tempfile.mkdtemp(dir=folder))
    for k, rec in enumerate(records):
        write_json_atomic(wd / f"shard-{k:06d}.json", {"keys": [rec["id"]], "results": [rec]}, indent=None,
                          allow_nan=True)
        json.loads((wd / f"shard-{k:06d}.json").read_text())  # read back once when written ...
    for k, rec in enumerate(records):
        data = json.loads((wd / f"shard-{k:06d}.json").read_text())  # ... and once on resume
        assert data["keys"] == [rec["id"]]


def _json_plain(data: dict) -> str:
    """``json_dumps`` as it was before issue 23 (without ``sanitize.json_text``)."""
    keep = atomic.json_text
    atomic.json_text = lambda text: text
    try:
        return atomic.json_dumps(data)
    finally:
        atomic.json_text = keep


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    dataset = load_input("builtin:prototypes")
    cfg = CertifyConfig(protocol="render-ceiling-5", delta=0.01, tau=0.01)
    t0 = time.process_time()
    cert, _ = run_certification(dataset, cfg, n_workers=1, progress=False)
    certify_cpu = time.process_time() - t0
    data = json.loads(json_dumps(cert.to_dict()))
    rows = list(csv.reader(io.StringIO(items_table(cert))))[1:]
    out = {"items": len(cert.items), "certify_cpu_s": round(certify_cpu, 4)}
    pairs = {
        "items_csv": (lambda: items_table(cert), lambda: _plain_table(rows)),
        "certificate_json": (lambda: json_dumps(data), lambda: _json_plain(data)),
    }
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp, "a"), Path(tmp, "b")
        a.mkdir()
        b.mkdir()
        pairs["shards_write_and_reuse"] = (lambda: _shards_new(data["items"], a),
                                           lambda: _shards_plain(data["items"], b))
        for name, (new, old) in pairs.items():
            loops = 3 if name.startswith("shards") else 50
            t_new = t_old = float("inf")
            for _ in range(args.repeat):  # interleaved, best of repeat
                t_new = min(t_new, _cpu(new, loops))
                t_old = min(t_old, _cpu(old, loops))
            out[name] = {"new_cpu_s": round(t_new, 6), "plain_cpu_s": round(t_old, 6),
                         "ratio_new_over_plain": round(t_new / t_old, 3) if t_old else None,
                         "extra_share_of_certify_cpu": round((t_new - t_old) / certify_cpu, 6)}
    out["python"] = platform.python_version()
    RESULTS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
