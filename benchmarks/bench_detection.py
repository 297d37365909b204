"""Issue 53, acceptance "Detection": images drawn by real tools (PyMOL orthographic and perspective, matplotlib's
mplot3d scatter, ASE's PNG writer, OVITO, ASE's POV-Ray writer; tests/support/foreign_render) of the built-in
molecules and the 2×2×2 prototypes (tests/support/tool_corpus); matplotlib as MCS-Set draws it (axes off, PNG
and JPEG), each read by ``viewcert.detect.detect_atoms``
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
from tests.support.published_images import mcs_redraw  # noqa: E402
from tests.support.tool_corpus import structures  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "detection.json"
#: (label, tool, kind); matplotlib as MCS-Set draws it (axes off; PNG, and JPEG as MCS-Set ships it)
GROUPS = (("pymol-orthographic", "pymol", "orthographic"), ("pymol-perspective", "pymol", "perspective"),
          ("matplotlib", "matplotlib", None), ("matplotlib-jpeg", "matplotlib", "jpeg"),
          ("ase", "ase", "orthographic"), ("ovito", "ovito", None), ("ase-povray", "ase-povray", None))
SIZE = (400, 400)
#: PyMOL colours carbon grey70 in foreign_render's shaded draws (``cmd.color("grey70", "elem C")``)
PYMOL_CARBON = (180, 180, 180)


def palette_of(tool: str):
    from viewcert.detect.palettes import named_palette, palette_from_table

    if tool == "pymol":
        return palette_from_table({"C": list(PYMOL_CARBON)}, base=named_palette("pymol"))
    return named_palette("jmol")  # foreign_render colours the other tools' atoms with ASE's jmol_colors


def undrawn_elements(tool: str, palette) -> tuple[str, ...]:
    """The elements a renderer draws indistinguishably from its white page: matplotlib's scatter (flat, no edge)
    in jmol's white (hydrogen); ASE outlines them, the shaded tools shade them."""
    if tool != "matplotlib":
        return ()
    return tuple(e for e, c in palette.colours.items() if min(c) >= 250)


def read_rgb(path) -> np.ndarray:
    from viewcert.io.pictures import read_picture

    return read_picture(path)[0]


def rendered(tool: str, kind, i: int, workdir: Path) -> dict:
    """Image ``i`` of a tool's group: rendered into ``workdir`` with its truth beside it (``.npz`` and the camera
    ``.json``), or read back when an earlier run left them there (``--corpus DIR`` keeps them between runs)."""
    name, xyz, elements = structures()[i % len(structures())]
    stem = f"{tool}-{kind or 'any'}-{i}"
    image, truth, table = workdir / f"{stem}.png", workdir / f"{stem}.npz", workdir / f"{stem}.json"
    if tool == "matplotlib" and kind == "jpeg":
        image = image.with_suffix(".jpg")
    if not (image.is_file() and truth.is_file() and table.is_file()):
        cam = example_camera(tool, xyz, seed=500 + i, size=SIZE, kind=None if kind == "jpeg" else kind)
        r = render(tool, xyz, elements, workdir, camera=cam, size=SIZE, mode="shaded", name=stem)
        if tool == "matplotlib":
            mcs_redraw(xyz, elements, r.camera, workdir / f"{stem}.png", jpeg=kind == "jpeg")
        np.savez(truth, centres=r.centres, visible=r.visible)
        table.write_text(json.dumps(r.camera))
    t = np.load(truth)
    return {"name": name, "xyz": np.asarray(xyz), "elements": list(elements), "image": image,
            "centres": t["centres"], "visible": t["visible"], "camera": json.loads(table.read_text())}


def run_group(tool: str, kind, n: int, workdir: Path) -> tuple[Score, list, float]:
    from viewcert.cameras import resolve_tool_camera
    from viewcert.detect import DetectorSettings, detect_atoms

    workdir.mkdir(parents=True, exist_ok=True)
    pal = palette_of(tool)
    total, rows, seconds = Score(), [], 0.0
    for i in range(n):
        try:
            r = rendered(tool, kind, i, workdir)
        except Exception as exc:  # noqa: BLE001 - a tool that fails on one image: the image is listed, not scored
            rows.append({"image": i, "render_failed": f"{type(exc).__name__}: {str(exc)[:200]}"})
            print(f"{tool} {i:3d} render failed: {exc}", flush=True)
            continue
        name, elements = r["name"], r["elements"]
        rgb = read_rgb(r["image"])
        t0 = time.perf_counter()
        proj = resolve_tool_camera(r["camera"], image_size=SIZE)  # what images.toml states: the camera, its kind
        # spheres through a pinhole differ in radius with depth; matplotlib's markers keep their size in points
        varies = proj.kind == "perspective" and tool != "matplotlib"
        det = detect_atoms(rgb, pal, sorted(set(elements)), DetectorSettings(perspective=varies))
        seconds += time.perf_counter() - t0
        projected, _ = proj.project(r["xyz"])
        s = score(det, r["centres"], r["visible"], elements, projected=projected, undrawn=undrawn_elements(tool, pal),
                  projection=proj)
        total.add(s)
        cam = r["camera"]
        rows.append({"structure": name, "seed": 500 + i, "kind": cam.get("type") or cam.get("proj_type")
                     or cam.get("camera_type") or kind, **{k: v for k, v in s.to_dict().items()
                                                                 if k in ("eligible", "found", "invented")},
                     "misses": s.misses[:10]})
        print(f"{tool} {i:3d} {name:28s} eligible {s.eligible:3d} found {s.found:3d} invented {s.invented}",
              flush=True)
    return total, rows, seconds


def main(labels: list[str], n: int, corpus: str | None) -> None:
    previous = json.loads(OUT.read_text())["results"] if OUT.is_file() else {}
    results = {k: v for k, v in previous.items() if k not in labels}
    with tempfile.TemporaryDirectory() as scratch:
        tmp = corpus or scratch
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
                   "within max(2 px, half its radius) of; undrawn: atoms showing >= 30 pixels in the flat twin but "
                   "drawn in the page's own colour with no edge (matplotlib's white hydrogen), counted apart",
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
    ap.add_argument("--corpus", help="keep the rendered images and their truth in this folder and reuse them")
    a = ap.parse_args()
    main(a.labels or [g[0] for g in GROUPS], a.images, a.corpus)
