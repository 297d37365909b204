"""Issue 53, acceptance "Detection": images drawn by real tools (PyMOL orthographic and perspective, matplotlib's
mplot3d scatter, ASE's PNG writer, OVITO, ASE's POV-Ray writer; tests/support/foreign_render) of the built-in
molecules and the 2×2×2 prototypes (tests/support/tool_corpus), each read by ``viewcert.detect.detect_atoms``
under the tool's palette and scored against the tool's own truth (tests/support/detection_truth): per renderer the
share of the atoms showing at least 30 pixels found within 1 px with the right element, the detections invented
where the structure has no atom, the centre errors, the seconds per image → benchmarks/results/detection.json.
Run: ``python benchmarks/bench_detection.py [LABEL ...] [--images N]`` (`make bench`; ~1 h here: PyMOL's and
POV-Ray's truth is measured with probe renders)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.detection_truth import MIN_VISIBLE, TOLERANCE_PX, Score, score  # noqa: E402
from tests.support.foreign_render import available, example_camera, render  # noqa: E402
from tests.support.tool_corpus import structures  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "detection.json"
#: (label, tool, kind)
GROUPS = (("pymol-orthographic", "pymol", "orthographic"), ("pymol-perspective", "pymol", "perspective"),
          ("matplotlib", "matplotlib", None), ("ase", "ase", "orthographic"), ("ovito", "ovito", None),
          ("ase-povray", "ase-povray", None))
SIZE = (400, 400)
#: PyMOL colours carbon grey70 in foreign_render's shaded draws (``cmd.color("grey70", "elem C")``)
PYMOL_CARBON = (180, 180, 180)


def palette_of(tool: str):
    from viewcert.detect.palettes import named_palette, palette_from_table

    if tool == "pymol":
        return palette_from_table({"C": list(PYMOL_CARBON)}, base=named_palette("pymol"))
    return named_palette("jmol")  # foreign_render colours the other tools' atoms with ASE's jmol_colors


def read_rgb(path) -> np.ndarray:
    from viewcert.io.pictures import read_picture

    return read_picture(path)[0]


def run_group(tool: str, kind, n: int, workdir: Path) -> tuple[Score, list, float]:
    from viewcert.cameras import resolve_tool_camera
    from viewcert.detect import detect_atoms

    corpus = structures()
    pal = palette_of(tool)
    total, rows, seconds = Score(), [], 0.0
    for i in range(n):
        name, xyz, elements = corpus[i % len(corpus)]
        cam = example_camera(tool, xyz, seed=500 + i, size=SIZE, kind=kind)
        r = render(tool, xyz, elements, workdir, camera=cam, size=SIZE, mode="shaded", name=f"{tool}-{i}")
        rgb = read_rgb(r.image)
        t0 = time.perf_counter()
        det = detect_atoms(rgb, pal, sorted(set(elements)))
        seconds += time.perf_counter() - t0
        projected, _ = resolve_tool_camera(r.camera, image_size=SIZE).project(np.asarray(xyz))
        s = score(det, r.centres, r.visible, list(elements), projected=projected)
        total.add(s)
        rows.append({"structure": name, "seed": 500 + i, "kind": r.camera.get("type") or r.camera.get("proj_type")
                     or r.camera.get("camera_type") or kind, **{k: v for k, v in s.to_dict().items()
                                                                 if k in ("eligible", "found", "invented")},
                     "misses": s.misses[:10]})
        print(f"{tool} {i:3d} {name:28s} eligible {s.eligible:3d} found {s.found:3d} invented {s.invented}",
              flush=True)
    return total, rows, seconds


def main(labels: list[str], n: int) -> None:
    previous = json.loads(OUT.read_text())["results"] if OUT.is_file() else {}
    results = {k: v for k, v in previous.items() if k not in labels}
    with tempfile.TemporaryDirectory() as tmp:
        for label, tool, kind in GROUPS:
            if label not in labels:
                continue
            reason = available(tool)
            if reason:
                results[label] = {"skipped": reason}
                continue
            t0 = time.perf_counter()
            total, rows, seconds = run_group(tool, kind, n, Path(tmp) / label)
            results[label] = {"images": n, **total.to_dict(), "detect_seconds_per_image": round(seconds / n, 3),
                              "wall_seconds": round(time.perf_counter() - t0, 1), "images_detail": rows}
            print(label, {k: v for k, v in results[label].items() if k != "images_detail"}, flush=True)
            _write(results)


def _write(results: dict) -> None:
    from importlib.metadata import version

    groups = [g for g in GROUPS if g[0] in results and "eligible" in results[g[0]]]
    el = sum(results[g[0]]["eligible"] for g in groups)
    fo = sum(results[g[0]]["found"] for g in groups)
    doc = {"what": "issue 53 Detection: viewcert.detect.detect_atoms on images drawn by real tools, against the "
                   "tools' own per-atom centres and visible pixels (tests/support/foreign_render, detection_truth)",
           "rule": f"eligible: an atom showing >= {MIN_VISIBLE} pixels; found: a detection within {TOLERANCE_PX} px "
                   "of its centre with its element (one-to-one assignment); invented: a detection no atom projects "
                   "within max(2 px, half its radius) of",
           "image_size": list(SIZE), "palettes": {"pymol": f"PyMOL's own, carbon {PYMOL_CARBON}", "others": "jmol"},
           "versions": {p: version(p) for p in ("scikit-image", "pymol-open-source", "ovito", "matplotlib", "ase")},
           "overall": {"images": sum(results[g[0]]["images"] for g in groups), "renderers": len(groups),
                       "eligible": el, "found": fo, "share": round(fo / el, 5) if el else None,
                       "invented": sum(results[g[0]]["invented"] for g in groups)},
           "missing": [g[0] for g in GROUPS if g[0] not in results],
           "results": {g[0]: results[g[0]] for g in GROUPS if g[0] in results}}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("labels", nargs="*", help="groups to run (default all); the others in the results file are kept")
    ap.add_argument("--images", type=int, default=30, help="images per group")
    a = ap.parse_args()
    main(a.labels or [g[0] for g in GROUPS], a.images)
