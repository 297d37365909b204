"""Memory of a GNoME-layout database against its number of CIFs (issue 42): the zip is indexed by
``io.zipindex`` (16 bytes per member) where ``zipfile`` held one ``ZipInfo`` per member; this measures both.

Input, made here: ``stable_materials_summary.csv`` (N rows: ``MaterialId``, ``Crystal System``, ``Space Group
Number``, ``Point Group``) beside ``by_id.zip`` holding ``by_id/<id>.CIF`` for each row (one small rock-salt CIF,
stored uncompressed; ids are 10 hex digits as GNoME's). Each measurement runs in a fresh process: ``coordinator``
loads the database (``load_input("gnome:...")``: the zip limits checked, the CSV marked, the zip indexed) and
lists every item id as a run's coordinator does; ``worker`` reads one CIF as a worker does (``read_entry``: the
zip's central directory indexed once). The ``zipfile`` modes are the reader before the index, in the same run:
``coordinator-zipfile`` holds the {id: member} table the former reader held (``zipfile.ZipFile(...).infolist()``)
while it lists the ids as ``coordinator`` does; ``worker-zipfile`` opens the archive with ``zipfile`` and reads the
CIF, as the former worker did. Printed: the process's peak RSS (``VmHWM`` of ``/proc/self/status``: the peak of
the process's own memory; ``ru_maxrss``, recorded too, keeps the peak of the bench process it was started from, which
held the zip writer's member list, so the former figures of this bench started at that floor) and CPU seconds; a
baseline process gives the fixed part (``baseline``: viewcert and pyarrow imported, nothing read, for the coordinators;
``baseline-worker``: one CIF parsed from a file, no zip read, for the workers).

Usage: ``python benchmarks/bench_gnome_zip.py [--sizes 20000,100000,381000]``; writes
``benchmarks/results/gnome_zip.json``. Run it niced on a shared machine.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
sys.path.insert(0, str(REPO))  # tests/support/hostile/corpus.py: the one small rock-salt CIF the tests use too
from tests.support.hostile.corpus import GOOD_CIF as CIF  # noqa: E402

DRIVER = """
import json, resource, sys, time
mode, folder = sys.argv[1], sys.argv[2]
import pyarrow  # noqa: F401 - the baseline imports what a run imports
from viewcert.certify.inputs import load_input
from viewcert.io.database import GNOME_ZIP, read_entry
from viewcert.io.cif import read_cif_text
n = 0
if mode == "baseline-worker":  # a worker's fixed part: one CIF parsed (the CIF reader's libraries loaded)
    n = read_cif_text(open(f"{folder}/one.cif").read(), source="one.cif", identifier="x").n_atoms
if mode.endswith("-zipfile"):
    import zipfile
    zf = zipfile.ZipFile(f"{folder}/{GNOME_ZIP}")
if mode == "coordinator-zipfile":
    held = {i.filename.rsplit("/", 1)[-1].rpartition(".")[0]: i.filename for i in zf.infolist()}
if mode in ("coordinator", "coordinator-zipfile"):
    d = load_input(f"gnome:{folder}")
    n = sum(1 for it in d.items if it.id)
elif mode == "worker":
    s = read_entry("gnome", folder, "by_id/0000000000.CIF", "by_id.zip", "0000000000")
    n = s.n_atoms
elif mode == "worker-zipfile":
    n = read_cif_text(zf.read("by_id/0000000000.CIF").decode(), source="x", identifier="x").n_atoms
me = resource.getrusage(resource.RUSAGE_SELF)
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"n": n, "peak_rss_mb": hwm / 1024, "ru_maxrss_mb": me.ru_maxrss / 1024,
                  "cpu_s": me.ru_utime + me.ru_stime}))
"""


def make(folder: Path, n: int) -> None:
    """A GNoME-layout folder of ``n`` rows and ``n`` CIFs."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "one.cif").write_text(CIF)
    with open(folder / "stable_materials_summary.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Composition", "MaterialId", "Point Group", "Space Group", "Space Group Number", "Crystal System"])
        for k in range(n):
            w.writerow(["NaCl", f"{k:010x}", "m-3m", "Fm-3m", 225, "Cubic"])
    with zipfile.ZipFile(folder / "by_id.zip", "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for k in range(n):
            zf.writestr(f"by_id/{k:010x}.CIF", CIF)


def run(mode: str, folder: Path) -> dict:
    res = subprocess.run([sys.executable, "-c", DRIVER, mode, str(folder)], env=ENV, capture_output=True, text=True,
                         check=False)
    if res.returncode != 0:
        raise SystemExit(f"driver failed: {res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="20000,100000,381000")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as t:
        for n in (int(x) for x in args.sizes.split(",") if x):
            folder = Path(t) / f"gnome{n}"
            make(folder, n)
            for mode in ("baseline", "baseline-worker", "coordinator", "worker", "coordinator-zipfile",
                         "worker-zipfile"):
                row = {"members": n, "mode": mode, **run(mode, folder),
                       "zip_bytes": (folder / "by_id.zip").stat().st_size}
                rows.append(row)
                print(f"{mode:>19} members={n:>7}: peak RSS {row['peak_rss_mb']:.0f} MB, {row['cpu_s']:.1f} s CPU",
                      flush=True)
    base = {(r["members"], r["mode"]): r["peak_rss_mb"] for r in rows if r["mode"].startswith("baseline")}
    for r in rows:
        fixed = "baseline-worker" if r["mode"].startswith(("worker", "baseline-worker")) else "baseline"
        r["above_baseline_mb"] = r["peak_rss_mb"] - base[(r["members"], fixed)]
        r["bytes_per_member"] = round(r["above_baseline_mb"] * 2**20 / r["members"])
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    result = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit,
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                          "note": "shared 2-core machine, niced; memory is what is compared"},
              "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "gnome_zip.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"wrote {RESULTS / 'gnome_zip.json'}")


if __name__ == "__main__":
    main()
