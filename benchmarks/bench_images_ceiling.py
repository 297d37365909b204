"""Issue 53, acceptance "Certification": the as-published ceiling from the detected atoms against the one from the
exact per-atom centres of the same images (the tools' own truth: each atom showing at least ``EXACT_PIXELS`` pixels
in the flat twin render (the detector's own least: an atom it may find), at its true centre and element, given to
the same pipeline as its detections), per item (a structure
drawn from three cameras by one real tool: the built-in molecules and the 2×2×2 prototypes, tests/support/
tool_corpus), same cameras, same δ. Per renderer: the items whose two outcomes (correct, unique) agree, and each
difference with what the detected images showed (``certify.published.REASONS``) →
benchmarks/results/images_ceiling.json. Run: ``python benchmarks/bench_images_ceiling.py [TOOL ...] [--corpus DIR]
[--delta Å]``."""

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

from tests.support.foreign_render import available  # noqa: E402
from tests.support.published_images import make_folder  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "images_ceiling.json"
TOOLS = ("ase", "matplotlib", "pymol", "ovito")
SIZE = (400, 400)
#: the atoms the exact observations hold: those showing at least the detector's least new pixels
EXACT_PIXELS = 12


def corpus_structures():
    from viewcert.io.builtin import builtin_molecules, builtin_prototypes

    return list(builtin_molecules()) + list(builtin_prototypes())


def truth_detections(render, projection):
    """The exact per-atom centres of one image as ``Detections``: each atom showing at least EXACT_PIXELS pixels in
    the flat twin, at the tool's own centre, with its element and its drawn radius (px at its depth)."""
    from viewcert.detect.detector import Detections

    ok = np.flatnonzero((render.visible >= EXACT_PIXELS) & np.isfinite(render.centres).all(axis=1))
    cam, _ = projection.equivalent()
    _, depth = projection.project(render.positions[ok]) if len(ok) else (None, np.zeros(0))
    px = np.asarray(cam.pixel_size(depth), dtype=float) if len(ok) else np.zeros(0)
    radii = render.radii[ok] / np.maximum(px, 1e-12)
    return Detections(render.centres[ok], radii, tuple(render.elements[i] for i in ok), ("",) * len(ok),
                      np.ones(len(ok)), "truth", (255, 255, 255), projection.width, projection.height)


def run_tool(tool: str, workdir: Path, delta: float) -> dict:
    from viewcert.certify.config import CertifyConfig
    from viewcert.certify.images_input import load_images
    from viewcert.certify.published import published_item

    palette = ({"name": "pymol", "C": [180, 180, 180]} if tool == "pymol" else "jmol")
    toml = workdir / "images.toml"
    truth_file = workdir / "truth.npz"
    if not (toml.is_file() and truth_file.is_file()):
        _, truth = make_folder(workdir, corpus_structures(), tool=tool, views=3, size=SIZE, seed=900,
                               kind="orthographic" if tool == "pymol" else None, palette=palette)
        np.savez(truth_file, **{f"{k}|{f}": getattr(r, f) for k, r in truth.items()
                                for f in ("centres", "visible", "positions", "radii")},
                 **{f"{k}|elements": np.array(r.elements) for k, r in truth.items()})
    saved = np.load(truth_file)

    class Saved:  # one image's truth as saved
        def __init__(self, key):
            for f in ("centres", "visible", "positions", "radii"):
                setattr(self, f, saved[f"{key}|{f}"])
            self.elements = tuple(str(x) for x in saved[f"{key}|elements"])

    spec = load_images(f"images:{toml}")
    cfg = CertifyConfig(delta=delta)
    items, agree, differences, seconds = 0, 0, [], 0.0
    for item in spec.items:
        t0 = time.perf_counter()
        detected, _ = published_item(item, cfg)
        seconds += time.perf_counter() - t0
        given = {im.file: truth_detections(Saved(im.file), im.projection) for im in item.images}
        exact, _ = published_item(item, cfg, detections=given)
        if detected.is_error or exact.is_error:
            differences.append({"item": item.id, "error": detected.error or exact.error})
            continue
        items += 1
        a, b = detected.as_published, exact.as_published
        if (a.correct, a.unique) == (b.correct, b.unique):
            agree += 1
        else:
            differences.append({"item": item.id, "detected": {"correct": a.correct, "unique": a.unique},
                                "exact": {"correct": b.correct, "unique": b.unique},
                                "geometric": {"correct": detected.geometric.correct,
                                              "unique": detected.geometric.unique},
                                "why": sorted(set(detected.reasons or []) - set(exact.reasons or []))
                                or detected.reasons or ["centre_error_above_delta"]})
        print(f"{tool} {item.id}: detected {a.outcome}/{a.unique}, exact {b.outcome}/{b.unique}", flush=True)
    return {"items": items, "agree": agree, "share": round(agree / items, 4) if items else None,
            "seconds_per_item_detected": round(seconds / max(items, 1), 2), "differences": differences}


def main(tools: list[str], corpus: str | None, delta: float) -> None:
    previous = json.loads(OUT.read_text())["results"] if OUT.is_file() else {}
    results = {k: v for k, v in previous.items() if k not in tools}
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(corpus or scratch)
        for tool in tools:
            reason = available(tool)
            results[tool] = {"skipped": reason} if reason else run_tool(tool, base / tool, delta)
            print(tool, {k: v for k, v in results[tool].items() if k != "differences"}, flush=True)
            scored = [t for t in TOOLS if t in results and "items" in results[t]]
            n = sum(results[t]["items"] for t in scored)
            k = sum(results[t]["agree"] for t in scored)
            OUT.write_text(json.dumps({
                "what": "issue 53 Certification: the as-published ceiling (correct, unique) from the detected atoms "
                        "against the one from the exact per-atom centres of the same images",
                "rule": f"exact: each atom showing >= {EXACT_PIXELS} pixels in the flat twin, at the tool's own centre "
                        "and element; same cameras, same pipeline (certify.published.published_item)",
                "delta": delta, "image_size": list(SIZE), "views_per_item": 3,
                "overall": {"items": n, "agree": k, "share": round(k / n, 4) if n else None},
                "results": {t: results[t] for t in TOOLS if t in results}}, indent=1) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tools", nargs="*", help=f"tools to run (default {', '.join(TOOLS)})")
    ap.add_argument("--corpus", help="keep the rendered folders here and reuse them")
    ap.add_argument("--delta", type=float, default=0.15, help="the oracle's δ (Å; the study's 0.15)")
    a = ap.parse_args()
    main(a.tools or list(TOOLS), a.corpus, a.delta)
