"""Issue 53, acceptance "Speed": reading a published item (per image: the camera resolved from its tool's terms,
the image decoded, the atoms detected and matched) beside certifying the same item from viewcert's own render (the
same structure, the same view rotations, ``observe = visible``: viewcert renders the atom-ID buffer and certifies),
in one run: per item both times (CPU seconds of this process) and their ratio, and the whole as-published item
(reading, both ceilings) → benchmarks/results/images_speed.json. The items: rock salt, rutile and ATP drawn by
ASE's PNG writer and PyMOL from three cameras, 400 × 400 px. Run: ``python benchmarks/bench_images_speed.py``."""

from __future__ import annotations

import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.foreign_render import available  # noqa: E402
from tests.support.published_images import make_folder  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "images_speed.json"
NAMES = ("aflow:AB_cF8_225_a_b", "aflow:A2B_tP6_136_f_a", "ccd:ATP")
SIZE = (400, 400)


def cpu() -> float:
    return time.process_time()


def read_item(item) -> float:
    """CPU seconds to resolve, decode, detect and match every image of ``item``."""
    from viewcert.cameras import resolve_tool_camera
    from viewcert.certify.images_input import read_shipped_structure
    from viewcert.detect import detect_atoms, match_detections
    from viewcert.elements import SYMBOLS
    from viewcert.io.pictures import read_picture
    from viewcert.observe.project import drawn_atoms

    s = read_shipped_structure(item.structure_path, item.structure, item.cell_frame)
    pos, num, _, _ = drawn_atoms(s, item.tiling if s.is_periodic else (1, 1, 1))
    symbols = sorted({SYMBOLS[int(z)] for z in num})
    t0 = cpu()
    for im in item.images:
        proj = resolve_tool_camera(im.camera, image_size=im.header[1:3], name=im.name)
        rgb, _ = read_picture(im.path, name=im.file)
        det = detect_atoms(rgb, im.palette, symbols)
        match_detections(det, proj, pos, num)
    return cpu() - t0


def own_render_item(item, delta: float) -> float:
    """CPU seconds to certify the same structure from viewcert's own render: the views' rotations as a protocol,
    the atom-ID buffer rendered at the images' size (``observe = visible``), the oracle, the labels."""
    from viewcert.cameras.protocols import Protocol, View
    from viewcert.certify.config import CertifyConfig
    from viewcert.certify.evaluate import certify_item
    from viewcert.certify.images_input import read_shipped_structure
    from viewcert.certify.inputs import Item

    s = read_shipped_structure(item.structure_path, item.structure, item.cell_frame)
    views = tuple(View(im.name, im.projection.equivalent()[0].rotation) for im in item.images)
    cfg = CertifyConfig(Protocol("published views", views), delta=delta, observe="visible", image_size=SIZE[0],
                        standardize=False, tiling=item.tiling if s.is_periodic else (1, 1, 1))
    it = Item(item.id, "structure", s, "speed")
    certify_item(it, cfg)  # warm: the kernels compiled, the labels' caches made
    t0 = cpu()
    certify_item(it, cfg)
    return cpu() - t0


def main() -> None:
    from viewcert.certify.config import CertifyConfig
    from viewcert.certify.images_input import load_images
    from viewcert.certify.published import published_item
    from viewcert.io.builtin import builtin_molecules, builtin_prototypes

    structures = [s for s in list(builtin_prototypes()) + list(builtin_molecules()) if s.identifier in NAMES]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for tool in ("ase", "pymol"):
            if available(tool):
                continue
            palette = {"name": "pymol", "C": [180, 180, 180]} if tool == "pymol" else "jmol"
            toml, _ = make_folder(Path(tmp) / tool, structures, tool=tool, views=3, size=SIZE, seed=40,
                                  kind="orthographic", palette=palette)
            spec = load_images(f"images:{toml}")
            cfg = CertifyConfig(delta=0.15)
            for item in spec.items:
                read_item(item)  # warm: skimage and scipy imported
                reading = min(read_item(item) for _ in range(2))
                own = own_render_item(item, 0.15)
                t0 = cpu()
                published_item(item, cfg)
                whole = cpu() - t0
                rows.append({"tool": tool, "item": item.id, "images": len(item.images),
                             "read_cpu_s": round(reading, 3), "own_render_certify_cpu_s": round(own, 3),
                             "ratio_read_over_own": round(reading / own, 2) if own > 0 else None,
                             "as_published_item_cpu_s": round(whole, 3)})
                print(rows[-1], flush=True)
    from importlib.metadata import version

    ratios = [r["ratio_read_over_own"] for r in rows if r["ratio_read_over_own"]]
    OUT.write_text(json.dumps({
        "what": "issue 53 Speed: per item, resolving every image's camera, decoding it, detecting and matching its "
                "atoms, beside certifying the same item from viewcert's own render (observe = visible), CPU seconds "
                "in one process, one run",
        "machine": {"python": platform.python_version(), "cpu": platform.processor() or platform.machine(),
                    "note": "2 cores shared with other jobs: CPU time, not wall time"},
        "versions": {p: version(p) for p in ("scikit-image", "numpy", "scipy")},
        "image_size": list(SIZE), "median_ratio": round(float(np.median(ratios)), 2) if ratios else None,
        "items": rows}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
