"""Read + standardize benchmark: CIF text → conventional standard cell, over the 1,820 e3 CIFs.

Side by side in one run (interleaved repeats, medians):

- ours:     ``viewcert.io.cif.read_cif_text`` (gemmi fast path) + ``viewcert.symmetry.standardize
            .conventional_standard_cell(symprec=0.01, angle_tolerance=5)`` (backend="spglib", the default:
            one spglib dataset call);
- ours_moyopy: the same with ``backend="moyopy"`` (moyopy's std cell, no angle tolerance; falls back to
            spglib when moyopy fails or moves symprec). Not identical to pymatgen: its own identical count
            is reported, not required;
- pymatgen: ``Structure.from_str(cif, fmt="cif")`` + ``SpacegroupAnalyzer(s, symprec=0.01,
            angle_tolerance=5).get_conventional_standard_structure()`` (spglib twice: dataset + refine_cell).

Outputs are checked to be identical (lattice and positions to 1e-6 Å, same site order and species); the
exit status reflects the default (spglib) backend only.
Every repeat also times the parts on their own: each side's CIF parse, and spglib alone on the same cells
(the one ``get_symmetry_dataset`` we make; plus ``refine_cell``, pymatgen's second call). spglib is a
floor no port of pymatgen's Python can go below, so the table also gives the ratio without it. Ratios use
this process's CPU time (robust to other jobs on a shared machine); wall times are reported alongside.
Nothing is cached between repeats (pymatgen's own 32-entry lru_cache on the dataset never hits across a
pass over 1,820 distinct cells). Target (issue): ≥ 10× faster end to end.

Usage: ``python benchmarks/bench_read_standardize.py [--repeats N]``. Writes
``benchmarks/results/read_standardize.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
import warnings
from importlib.metadata import version
from pathlib import Path

import gemmi
import numpy as np
import spglib
from pymatgen.core import Structure
from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

from viewcert.io.atomic import write_json_atomic
from viewcert.io.cif import read_cif_text
from viewcert.symmetry import _moyo, _spglib
from viewcert.symmetry.standardize import _first_appearance_types, conventional_standard_cell

REPO = Path(__file__).resolve().parents[1]
E3 = REPO.parent / "shared" / "data" / "render-ceiling" / "data" / "e3"
RESULTS = REPO / "benchmarks" / "results"
SYMPREC, ANGLE_TOL = 0.01, 5.0


def ours_one(mid: str, cif: str):
    s = read_cif_text(cif, source=mid)
    return conventional_standard_cell(s, symprec=SYMPREC, angle_tolerance=ANGLE_TOL)


def ours_moyopy_one(mid: str, cif: str):
    s = read_cif_text(cif, source=mid)
    return conventional_standard_cell(s, symprec=SYMPREC, angle_tolerance=ANGLE_TOL, backend="moyopy")


def pymatgen_one(mid: str, cif: str):
    s = Structure.from_str(cif, fmt="cif")
    return SpacegroupAnalyzer(s, symprec=SYMPREC, angle_tolerance=ANGLE_TOL).get_conventional_standard_structure()


def timed_pass(fn, items) -> tuple[float, float, list[float], list]:
    """(wall s, CPU s of this process, per-item wall s, outputs) for one pass over ``items``."""
    per, outs = [], []
    c0, t0 = time.process_time(), time.perf_counter()
    for item in items:
        t = time.perf_counter()
        outs.append(fn(*item))
        per.append(time.perf_counter() - t)
    return time.perf_counter() - t0, time.process_time() - c0, per, outs


def compare(ours, ref) -> str | None:
    d_lat = float(np.abs(ours.lattice - ref.lattice.matrix).max())
    if d_lat > 1e-6:
        return f"lattice {d_lat:.3g} Å"
    z = np.array([sp.Z for sp in ref.species])
    if len(z) != ours.n_atoms or not np.array_equal(z, ours.numbers):
        return "species/order"
    d_pos = float(np.abs(ours.positions - ref.cart_coords).max())
    return f"positions {d_pos:.3g} Å" if d_pos > 1e-6 else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="interleaved passes per side (median reported)")
    args = ap.parse_args(argv)
    if not (E3 / "structures.json").is_file():
        print(f"skipped: shared data absent: {E3}")
        return 0
    warnings.simplefilter("ignore")
    data = json.loads((E3 / "structures.json").read_text())
    items = [(mid, v["cif"]) for mid, v in data.items()]
    n = len(items)

    # warm-up (imports, lazily built tables) on a few items, not timed
    for mid, cif in items[:5]:
        ours_one(mid, cif)
        ours_moyopy_one(mid, cif)
        pymatgen_one(mid, cif)

    parsed = [(read_cif_text(cif, source=mid),) for mid, cif in items]

    def parse_ours(mid, cif):
        return read_cif_text(cif, source=mid)

    def parse_pymatgen(mid, cif):
        return Structure.from_str(cif, fmt="cif")

    def spglib_dataset(s):  # what conventional_standard_cell asks of spglib (one call)
        _, types = _first_appearance_types(s.numbers)
        return _spglib.standardized_cell(s.lattice, s.frac_coords, types, symprec=SYMPREC, angle_tolerance=ANGLE_TOL)

    def spglib_refine(s):  # pymatgen's second spglib call
        _, types = _first_appearance_types(s.numbers)
        return _spglib.refine_cell(s.lattice, s.frac_coords, types, symprec=SYMPREC, angle_tolerance=ANGLE_TOL)

    def moyopy_std(s):  # what backend="moyopy" asks of moyopy (one dataset, no angle tolerance)
        _, types = _first_appearance_types(s.numbers)
        return _moyo.standardized_cell(s.lattice, s.frac_coords, types, symprec=SYMPREC)

    passes = {
        "ours": (ours_one, items),
        "ours_moyopy": (ours_moyopy_one, items),
        "pymatgen": (pymatgen_one, items),
        "ours_parse": (parse_ours, items),
        "pymatgen_parse": (parse_pymatgen, items),
        "spglib_dataset": (spglib_dataset, parsed),
        "spglib_refine_cell": (spglib_refine, parsed),
        "moyopy_std_cell": (moyopy_std, parsed),
    }
    wall = {k: [] for k in passes}
    cpu = {k: [] for k in passes}
    per_item = {k: [] for k in passes}
    outs = {}
    for _ in range(args.repeats):  # interleaved
        for name, (fn, its) in passes.items():
            w, c, per, o = timed_pass(fn, its)
            wall[name].append(w)
            cpu[name].append(c)
            per_item[name].append(per)
            if name in ("ours", "ours_moyopy", "pymatgen"):
                outs[name] = o

    # identical outputs?
    diffs, diffs_moyopy = {}, {}
    for (mid, _), a, am, b in zip(items, outs["ours"], outs["ours_moyopy"], outs["pymatgen"], strict=True):
        why = compare(a, b)
        if why:
            diffs[mid] = why
        why = compare(am, b)
        if why:
            diffs_moyopy[mid] = why
    kinds_moyopy: dict[str, int] = {}
    for why in diffs_moyopy.values():
        kind = why.split(" ")[0]
        kinds_moyopy[kind] = kinds_moyopy.get(kind, 0) + 1

    med = statistics.median
    W = {k: med(v) for k, v in wall.items()}
    C = {k: med(v) for k, v in cpu.items()}
    P = {k: med(float(np.median(p)) for p in v) for k, v in per_item.items()}
    spg_ours = C["spglib_dataset"]
    spg_pmg = C["spglib_dataset"] + C["spglib_refine_cell"]
    rest_ours = C["ours"] - C["ours_parse"] - spg_ours
    rest_pmg = C["pymatgen"] - C["pymatgen_parse"] - spg_pmg
    result = {
        "what": "CIF text -> conventional standard cell (pymatgen orientation), 1,820 e3 CIFs",
        "n_structures": n,
        "repeats": args.repeats,
        "default_backend": "spglib",
        "identical_outputs": n - len(diffs),
        "differences": diffs,
        "moyopy_backend": {
            "identical_outputs": n - len(diffs_moyopy),
            "differences_by_kind": kinds_moyopy,
            "example_differences": dict(list(diffs_moyopy.items())[:20]),
            "cpu_s": C["ours_moyopy"], "wall_s": W["ours_moyopy"],
            "ratio_cpu_vs_pymatgen": C["pymatgen"] / C["ours_moyopy"],
            "ratio_wall_vs_pymatgen": W["pymatgen"] / W["ours_moyopy"],
            "median_per_structure_ms": P["ours_moyopy"] * 1e3,
            "moyopy_std_cell_cpu_s": C["moyopy_std_cell"],
            "note": "not the default: not identical to pymatgen / the spglib backend (other equivalent "
                    "origins, axes and site orders); see viewcert.symmetry.standardize's module docstring",
        },
        "timing_note": "medians over interleaved passes; CPU = this process's CPU time (robust to other "
                       "load on the machine), wall = perf_counter",
        "ours_cpu_s": C["ours"], "pymatgen_cpu_s": C["pymatgen"], "ratio_cpu": C["pymatgen"] / C["ours"],
        "ours_wall_s": W["ours"], "pymatgen_wall_s": W["pymatgen"], "ratio_wall": W["pymatgen"] / W["ours"],
        "ours_median_per_structure_ms": P["ours"] * 1e3,
        "pymatgen_median_per_structure_ms": P["pymatgen"] * 1e3,
        "ratio_median_per_structure": P["pymatgen"] / P["ours"],
        "breakdown_cpu_s": {
            "ours": {"parse": C["ours_parse"], "spglib (1 dataset call)": spg_ours, "rest": rest_ours},
            "pymatgen": {"parse": C["pymatgen_parse"], "spglib (dataset + refine_cell)": spg_pmg,
                         "rest": rest_pmg},
            "spglib_share_of_ours": spg_ours / C["ours"],
            "spglib_share_of_pymatgen": spg_pmg / C["pymatgen"],
            "ratio_parse": C["pymatgen_parse"] / C["ours_parse"],
            "ratio_rest": rest_pmg / rest_ours if rest_ours > 0 else None,
            "ratio_without_spglib": (C["pymatgen"] - spg_pmg) / (C["ours"] - spg_ours),
            "best_possible_ratio_with_one_spglib_call": C["pymatgen"] / spg_ours,
        },
        "wall_s": wall,
        "cpu_s": cpu,
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "spglib": spglib.__version__,
            "moyopy": _moyo.VERSION,
            "pymatgen": version("pymatgen"),
            "gemmi": gemmi.__version__,
        },
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                    "load_avg_1min_at_end": os.getloadavg()[0] if hasattr(os, "getloadavg") else None},
    }

    def r(a, b):
        return f"{b / a:.1f}×" if a > 0 else "-"

    rows = [
        ("CPU time", "ours", "pymatgen", "ratio"),
        ("total, 1,820 CIFs (s)", f"{C['ours']:.2f}", f"{C['pymatgen']:.2f}", r(C["ours"], C["pymatgen"])),
        ("total, backend=moyopy (s)", f"{C['ours_moyopy']:.2f}", f"{C['pymatgen']:.2f}",
         r(C["ours_moyopy"], C["pymatgen"])),
        ("  moyopy std cell alone (s)", f"{C['moyopy_std_cell']:.2f}", "", ""),
        ("  CIF parse (s)", f"{C['ours_parse']:.2f}", f"{C['pymatgen_parse']:.2f}",
         r(C["ours_parse"], C["pymatgen_parse"])),
        ("  spglib (s)", f"{spg_ours:.2f} (1 call)", f"{spg_pmg:.2f} (2 calls)", r(spg_ours, spg_pmg)),
        ("  conventional cell, rest (s)", f"{rest_ours:.2f}", f"{rest_pmg:.2f}", r(rest_ours, rest_pmg)),
        ("  all but spglib (s)", f"{C['ours'] - spg_ours:.2f}", f"{C['pymatgen'] - spg_pmg:.2f}",
         r(C["ours"] - spg_ours, C["pymatgen"] - spg_pmg)),
        ("wall total (s)", f"{W['ours']:.2f}", f"{W['pymatgen']:.2f}", r(W["ours"], W["pymatgen"])),
        ("median per structure (ms, wall)", f"{P['ours'] * 1e3:.3f}", f"{P['pymatgen'] * 1e3:.3f}",
         r(P["ours"], P["pymatgen"])),
    ]
    width = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, width, strict=True))))
    print(f"identical outputs (backend=spglib, default): {n - len(diffs)}/{n}" + (f"; differ: {diffs}" if diffs else ""))
    print(f"identical outputs (backend=moyopy): {n - len(diffs_moyopy)}/{n}; differ by kind: {kinds_moyopy}")
    print(f"spglib is {spg_ours / C['ours']:.0%} of our CPU time ({spg_pmg / C['pymatgen']:.0%} of pymatgen's); "
          f"with one spglib call per structure the best possible end-to-end ratio is "
          f"{C['pymatgen'] / spg_ours:.1f}×. Medians of {args.repeats} interleaved passes; 1-min load average "
          f"{result['machine']['load_avg_1min_at_end']:.2f} on {os.cpu_count()} CPUs.")

    RESULTS.mkdir(parents=True, exist_ok=True)
    write_json_atomic(RESULTS / "read_standardize.json", result)
    print(f"wrote {RESULTS / 'read_standardize.json'}")
    return 0 if not diffs else 1


if __name__ == "__main__":
    raise SystemExit(main())
