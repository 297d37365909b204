"""All 1,820 e3 structures as whole processes: the study's harness against ``viewcert certify``, CPU time, same run.

Study: one Python process that imports the released harness (``../shared/anchors/render_ceiling_release``,
unmodified) and runs, for every structure of ``structures.json``, exactly its README's pipeline
(``conventional_cell(Structure.from_str(cif))`` → ``reconstruct_positions(conv, VIEW_ORDER, tol=0.15)`` →
``recover_symmetry(rec, conv.lattice, symprec=0.01)["crystal_system"]``). viewcert: one process running
``viewcert.api.certify`` on the study layout (``subset="all"``) under the same configuration as
``bench_anchor.py`` (δ = 0.15 Å, first pair, greedy Cartesian merge, τ = 0.01 Å, 5°), the default workers (one
per CPU), no plots, writing its certificate. Both sides' CPU is their whole process tree's (imports, reading,
workers, writing; ``RUSAGE_CHILDREN``), the order ABBA (study, viewcert, viewcert, study) so both meet the same
machine; the answers (the reconstruction's crystal system per structure) are compared item by item and the run
fails on any difference.

Bytecode: before timing, viewcert's modules are compiled to ``.pyc`` (``compileall``, untimed), as an installed
package has them. A machine with ``PYTHONDONTWRITEBYTECODE=1`` (this one) never writes them, so every process
compiled viewcert's ~150 imported modules from source (≈ 0.2 CPU-s a process, issue 59) while the study's
dependencies (pymatgen, numpy) import from the ``.pyc`` their installation wrote; the study's own three modules
(30 kB, read-only in ``../shared``) are compiled in each of its processes as before.

Usage: ``python benchmarks/bench_e3_process.py [--tag NAME] [--rounds 1]`` (run it niced); writes
``benchmarks/results/e3_process.json`` (each run under its tag). Skips (exit 0) when ``../shared`` is absent.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
E3 = SHARED / "data" / "render-ceiling" / "data" / "e3"
ANCHORS = SHARED / "anchors"
OUT = ROOT / "benchmarks" / "results" / "e3_process.json"

STUDY = """
import json, sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
from pymatgen.core import Structure
from render_ceiling_release.reconstruct import reconstruct_positions, recover_symmetry
from render_ceiling_release.render import VIEW_ORDER, conventional_cell
data = json.load(open(sys.argv[2]))
out = {}
for mid, row in data.items():
    conv = conventional_cell(Structure.from_str(row["cif"], fmt="cif"))
    rec = reconstruct_positions(conv, VIEW_ORDER, tol=0.15)
    out[mid] = recover_symmetry(rec, conv.lattice, symprec=0.01)["crystal_system"]
json.dump(out, open(sys.argv[3], "w"))
"""

VIEWCERT = """
import sys
from viewcert.api import certify
from viewcert.certify import CertifyConfig
cfg = CertifyConfig(delta=0.15, tau=0.01, pairs="first", merge="greedy", periodic_merge=False)
certify(sys.argv[1], cfg, out=sys.argv[2], subset="all", plots=False, resume=False)
"""


def _timed(argv: list[str]) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0 = os.getloadavg()[0]
    t = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 1):
        raise SystemExit(f"{argv[:3]} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return {"cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2),
            "wall_s": round(wall, 2), "load_1min": [round(load0, 2), round(os.getloadavg()[0], 2)]}


def _compile_viewcert() -> str:
    """Compile the viewcert package the children import (this interpreter, this PYTHONPATH) to ``.pyc``; returns
    its folder."""
    where = subprocess.run([sys.executable, "-c", "import viewcert, pathlib; print(pathlib.Path(viewcert.__file__).parent)"],
                           capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([sys.executable, "-m", "compileall", "-q", where], check=True, capture_output=True)
    return where


def _viewcert_answers(folder: Path) -> dict:
    with (folder / "items.csv").open(newline="", encoding="utf-8") as f:
        return {row["id"]: row["reconstructed_crystal_system"] or None for row in csv.DictReader(f)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tag", default="current")
    ap.add_argument("--rounds", type=int, default=1, help="ABBA rounds")
    a = ap.parse_args()
    if not (E3 / "structures.json").is_file() or not (ANCHORS / "render_ceiling_release").is_dir():
        print("skip: ../shared (e3 data or the study's harness) is absent")
        return
    runs = {"study": [], "viewcert": []}
    with tempfile.TemporaryDirectory(prefix="bench-e3-process-") as tmp:
        tmp = Path(tmp)
        # viewcert's bytecode (module docstring), numba's cache and the OS file cache, all untimed
        compiled = _compile_viewcert()
        subprocess.run([sys.executable, "-c", VIEWCERT, str(E3), str(tmp / "warm")], check=True, capture_output=True)
        answers = {}
        k = 0
        for _ in range(a.rounds):
            for side in ("study", "viewcert", "viewcert", "study"):
                k += 1
                if side == "study":
                    dest = tmp / f"study-{k}.json"
                    row = _timed([sys.executable, "-c", STUDY, str(ANCHORS), str(E3 / "structures.json"), str(dest)])
                    ans = json.loads(dest.read_text())
                else:
                    dest = tmp / f"viewcert-{k}"
                    row = _timed([sys.executable, "-c", VIEWCERT, str(E3), str(dest)])
                    ans = _viewcert_answers(dest)
                runs[side].append(row)
                answers.setdefault(side, ans)
                print(side, row, flush=True)
        study, ours = answers["study"], answers["viewcert"]
        differ = sorted(m for m in study if study[m] != ours.get(m))
        if differ or len(ours) != len(study):
            raise SystemExit(f"answers differ on {len(differ)} items: {differ[:10]}")
    s_cpu = sum(r["cpu_s"] for r in runs["study"])
    v_cpu = sum(r["cpu_s"] for r in runs["viewcert"])
    data = json.loads(OUT.read_text()) if OUT.exists() else {}
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    data[a.tag] = {"commit": head, "n": len(study), "answers_identical": len(study), "runs": runs,
                   "study_cpu_s_per_run": round(s_cpu / len(runs["study"]), 2),
                   "viewcert_cpu_s_per_run": round(v_cpu / len(runs["viewcert"]), 2),
                   "ratio_cpu": round(s_cpu / v_cpu, 2), "cpus": os.cpu_count(), "platform": platform.platform(),
                   "note": "whole processes, CPU of each process tree, order ABBA; viewcert with its default workers",
                   "bytecode": f"viewcert compiled to .pyc before timing ({compiled}); the study's harness compiles its "
                               "own three modules in each process (read-only), its dependencies from their .pyc"}
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(json.dumps(data[a.tag], indent=1))


if __name__ == "__main__":
    main()
