"""An example of ``viewcert certify images:FOLDER/images.toml`` built by a script (no image is committed): a few of
the render-ceiling study's e3 crystals (../shared/data/render-ceiling, its conventional cells, 2×2×2) drawn

- by matplotlib as MCS-Set draws its benchmark: ``ax.scatter`` in a 3D axes, perspective with focal length 1 (a
  90° field of view), each axis scaled to its own data, the axes off and filling the figure, 8 × 8 in at 64 dpi
  saved as a 512 × 512 JPEG, markers of ``s = 10`` (a few pixels: found as blobs);
- by ASE's PNG writer (the study's look: flat discs with black outlines), 384 × 384;
- by PyMOL (ray-traced, shaded, when PyMOL is installed: the ``[foreign]`` extra), 384 × 384;

three views each, written with their structures and an ``images.toml`` into OUT, then certified into OUT/cert
(the as-published ceiling beside the geometric one, ``images.csv``, ``detections.csv``) and shown by
``viewcert explore OUT/cert --inputs OUT``. Run: ``python benchmarks/make_images_example.py OUT [--structures N]
[--delta Å]`` (a few minutes; PyMOL's truth probes are not needed here and are not run)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.foreign_render import available, example_camera  # noqa: E402
from tests.support.published_images import images_toml, write_structure  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "render-ceiling" / "data" / "e3"
#: the e3 crystals drawn (the first of their crystal systems in eval.jsonl's order)
SYSTEMS = ("cubic", "hexagonal", "tetragonal", "orthorhombic", "monoclinic", "triclinic", "trigonal")


def e3_structures(n: int):
    """(material id, conventional cell, crystal system) of the first eval item of each of ``n`` crystal systems."""
    from viewcert.io.cif import read_cif_text
    from viewcert.symmetry.standardize import conventional_standard_cell

    structures = json.loads((DATA / "structures.json").read_text())
    picked = {}
    for line in (DATA / "eval.jsonl").read_text().splitlines():
        row = json.loads(line)
        cs = row["crystal_system"]
        if cs in SYSTEMS[:n] and cs not in picked:
            cell = read_cif_text(structures[row["material_id"]]["cif"])
            conv = conventional_standard_cell(cell, symprec=0.01, angle_tolerance=5.0, orientation="pymatgen")
            if conv.n_atoms * 8 <= 200:  # a few hundred drawn atoms at most: a small example
                picked[cs] = (row["material_id"], conv, cs)
    return list(picked.values())


def mcs_image(pos, elements, path: Path, elev: float, azim: float) -> dict:
    """MCS-Set's drawing (module docstring) of the drawn atoms; returns its camera table (what ``ax`` states after
    drawing: the autoscaled limits, elev, azim, the default box aspect; focal length 1; the axes filling the
    figure)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from viewcert.detect.palettes import named_palette

    colours = named_palette("jmol").colour_array(elements) / 255.0
    fig = Figure(figsize=(8, 8))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(111, projection="3d")
    ax.view_init(elev=elev, azim=azim)
    ax.set_proj_type("persp", focal_length=1.0)
    for el in sorted(set(elements)):
        idx = [i for i, e in enumerate(elements) if e == el]
        ax.scatter(pos[idx, 0], pos[idx, 1], pos[idx, 2], s=10, color=colours[idx[0]])
    ax.set_axis_off()
    ax.set_position([0, 0, 1, 1])
    fig.canvas.draw()
    fig.savefig(path, dpi=64, pad_inches=0)
    return {"tool": "matplotlib", "elev": elev, "azim": azim, "roll": 0.0,
            "xlim": list(ax.get_xlim3d()), "ylim": list(ax.get_ylim3d()), "zlim": list(ax.get_zlim3d()),
            "box_aspect": [float(x) for x in ax.get_box_aspect()], "proj_type": "persp", "focal_length": 1.0,
            "figsize": [8.0, 8.0], "dpi": 64.0, "position": [0.0, 0.0, 1.0, 1.0], "width": 512, "height": 512}


def draw(tool: str, pos, elements, images: Path, stem: str, seed: int) -> tuple[str, dict]:
    """One image of the drawn atoms by ``tool``: (its file name, its camera table)."""
    from tests.support.foreign_render import _draw_ase, _draw_pymol  # the tools' own drawing, shaded

    if tool == "matplotlib":
        rng = np.random.default_rng(seed)
        file = f"{stem}.jpg"
        return file, mcs_image(pos, elements, images / file, float(rng.uniform(-60, 60)), float(rng.uniform(-180, 180)))
    from viewcert.elements import atomic_number, covalent_radii

    radii = 0.5 * covalent_radii([atomic_number(e) for e in elements])  # the study's radii: half the covalent
    cam = example_camera(tool, pos, seed=seed, size=(384, 384), kind="orthographic", radii=radii)
    file = f"{stem}.png"
    (_draw_ase if tool == "ase" else _draw_pymol)(pos, list(elements), radii, None, cam, images / file, False, None)
    return file, cam


def main(out: Path, n: int, delta: float) -> None:
    from viewcert.api import certify
    from viewcert.certify.config import CertifyConfig
    from viewcert.observe.project import drawn_atoms

    if not DATA.is_dir():
        raise SystemExit(f"the render-ceiling data is not at {DATA} (../shared/data/render-ceiling)")
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "structures").mkdir(exist_ok=True)
    tools = ["matplotlib", "ase"] + (["pymol"] if available("pymol") is None else [])
    entries = []
    for mp, cell, system in e3_structures(n):
        struct = f"structures/{mp}.vasp"
        write_structure(out / struct, cell)
        pos, num, idx, _ = drawn_atoms(cell, (2, 2, 2))
        elements = [str(x) for x in np.asarray(cell.symbols)[idx]]
        for tool in tools:
            for v in range(3):
                file, cam = draw(tool, pos, elements, out / "images", f"{mp}_{tool}_v{v}", seed=17 * v + 3)
                entry = {"file": f"images/{file}", "item": f"{mp}-{tool}", "structure": struct, "tiling": [2, 2, 2],
                         "answer": {"crystal_system": system}, "camera": cam}
                if tool == "pymol":  # PyMOL's own colours, carbon grey70 (as the drawing colours it)
                    entry["palette"] = {"name": "pymol", "C": [180, 180, 180]}
                entries.append(entry)
            print(f"{mp} ({system}) drawn by {tool}", flush=True)
    (out / "images.toml").write_text(images_toml(entries, {"palette": "jmol"}))
    report = certify(f"images:{out / 'images.toml'}", CertifyConfig(delta=delta), out / "cert")
    print(report)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--structures", type=int, default=3, help="crystal systems drawn (one e3 crystal each)")
    ap.add_argument("--delta", type=float, default=0.1, help="the oracle's δ (Å)")
    a = ap.parse_args()
    main(a.out, a.structures, a.delta)
