"""Start-up benchmark (issue 10): CLI ``--help``, one small CIF warm, and (``--cold``) a new user's first run.

Every command runs in a fresh process; figures are medians of wall and CPU time (user + sys of the child),
with the 1-minute load average at start and end (the machine is shared: wall ≈ CPU only when it is idle).

- ``--help``: ``viewcert --help`` against the floor, a bare Typer app with one option and two commands
  (typer + rich + click: what any Typer CLI pays).
- one small CIF, warm cache: ``viewcert certify nacl.cif --no-plots --no-resume`` (8-atom rock salt written
  here), interleaved with the same command after importing what the certify path imported before this
  work (scipy.spatial, scipy.optimize, pymatgen.core, zipfile), so both see the same machine. Floor: numba
  import plus one cached kernel loaded (numba's target context: any run that calls a kernel pays it).
- ``--cold``: an empty ``NUMBA_CACHE_DIR``, then ``viewcert warmup`` (what ``make`` runs after installing),
  then ``viewcert certify builtin:prototypes`` three times.

Usage: ``python benchmarks/bench_startup.py [--repeat N] [--cold]`` → ``benchmarks/results/startup.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from viewcert.io.atomic import write_json_atomic  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"
BIN = Path(sys.executable).parent
NACL = """data_NaCl
_symmetry_space_group_name_H-M 'F m -3 m'
_cell_length_a 5.64
_cell_length_b 5.64
_cell_length_c 5.64
_cell_angle_alpha 90
_cell_angle_beta 90
_cell_angle_gamma 90
loop_
_symmetry_equiv_pos_as_xyz
x,y,z
x,y+1/2,z+1/2
x+1/2,y,z+1/2
x+1/2,y+1/2,z
loop_
_atom_site_label
_atom_site_type_symbol
_atom_site_fract_x
_atom_site_fract_y
_atom_site_fract_z
Na1 Na 0 0 0
Cl1 Cl 0.5 0.5 0.5
"""
BARE_TYPER = """import typer
app = typer.Typer(add_completion=False, no_args_is_help=True, help="bare")
@app.callback()
def main(debug: bool = typer.Option(False, "--debug", help="x")) -> None:
    '''bare'''
@app.command()
def version() -> None:
    '''v'''
@app.command()
def other(x: int = 1) -> None:
    '''o'''
app()
"""
CLI = "import sys\n{pre}from viewcert.cli import app\nsys.argv[0] = 'viewcert'\nsys.exit(app())\n"
BEFORE = "import scipy.spatial, scipy.optimize, pymatgen.core, zipfile  # imported by the certify path before\n"
NUMBA_FLOOR = """import numba, numpy as np
@numba.njit(cache=True)
def f(a):
    s = 0.0
    for x in a:
        s += x
    return s
f(np.ones(3))
"""


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _run(cmd: list[str], env: dict | None = None) -> tuple[float, float]:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t1 - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def interleaved(cases: dict[str, list[str]], repeat: int, env: dict | None = None) -> dict:
    """Medians (s) of each command, run in turn ``repeat`` times (order alternating)."""
    load0 = _load()
    wall: dict[str, list[float]] = {k: [] for k in cases}
    cpu: dict[str, list[float]] = {k: [] for k in cases}
    names = list(cases)
    for i in range(repeat):
        for k in names if i % 2 == 0 else names[::-1]:
            w, c = _run(cases[k], env)
            wall[k].append(w)
            cpu[k].append(c)
    return {k: {"wall_median_s": round(statistics.median(wall[k]), 3), "wall_min_s": round(min(wall[k]), 3),
                "cpu_median_s": round(statistics.median(cpu[k]), 3), "cpu_min_s": round(min(cpu[k]), 3)}
            for k in cases} | {"repeat": repeat, "load_average_1min": [load0, _load()]}


def cold(tmp: Path) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp / "numba-cache"))
    out = {"load_average_1min_start": _load()}
    w, c = _run([str(BIN / "viewcert"), "warmup"], env)
    out["warmup_empty_cache"] = {"wall_s": round(w, 1), "cpu_s": round(c, 1), "load_average_1min_end": _load()}
    runs = []
    for _ in range(3):
        w, c = _run([str(BIN / "viewcert"), "certify", "builtin:prototypes", "--out", str(tmp / "out"),
                     "--no-resume"], env)
        runs.append({"wall_s": round(w, 2), "cpu_s": round(c, 2), "load_average_1min": _load()})
    out["certify_builtin_prototypes_after_warmup"] = runs
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--cold", action="store_true", help="also the empty-cache first run (minutes of CPU)")
    args = ap.parse_args()
    py = sys.executable
    res: dict = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name, text in (("nacl.cif", NACL), ("bare.py", BARE_TYPER), ("before.py", CLI.format(pre=BEFORE)),
                           ("after.py", CLI.format(pre="")), ("floor.py", NUMBA_FLOOR)):
            (tmp / name).write_text(text)
        res["help"] = interleaved({"bare_typer_help": [py, str(tmp / "bare.py"), "--help"],
                                   "viewcert_help": [py, str(tmp / "after.py"), "--help"]}, args.repeat)
        one = ["certify", str(tmp / "nacl.cif"), "--out", str(tmp / "o"), "--no-plots", "--no-resume"]
        _run([py, str(tmp / "floor.py")])  # compile the floor kernel into its cache once
        res["one_small_cif_warm"] = interleaved({"before_imports": [py, str(tmp / "before.py"), *one],
                                                 "after": [py, str(tmp / "after.py"), *one],
                                                 "floor_numba_one_cached_kernel": [py, str(tmp / "floor.py")],
                                                 "floor_bare_typer_command": [py, str(tmp / "bare.py"), "other"]},
                                                max(3, args.repeat // 2))
        if args.cold:
            res["cold"] = cold(tmp)
    old = RESULTS / "startup.json"
    if "cold" not in res and old.exists():  # a warm-only run keeps the last cold measurement (minutes of CPU)
        prev = json.loads(old.read_text())
        if "cold" in prev:
            res["cold"] = prev["cold"]
    write_json_atomic(RESULTS / "startup.json", res)
    print(res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
