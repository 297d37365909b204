"""A folder of published images as a benchmark would ship it, made with a real tool (tests/support/foreign_render),
and the ``images.toml`` that describes it: the fixture of the ``images:`` input's tests, the example
(benchmarks/make_images_example.py) and the benchmarks. Each item is a structure drawn by the tool from a few
cameras; ``truth`` keeps, per image, the tool's own pixel centre and visible pixels of every drawn atom."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from tests.support.foreign_render import _default_radii, _element_colours, _mpl_axes, example_camera, render
from viewcert.observe.project import drawn_atoms


def toml_value(v) -> str:
    """A value in TOML (strings, numbers, booleans, lists and tables; an inline table for a dict)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, float | np.floating):
        return repr(float(v)) if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
    if isinstance(v, list | tuple | np.ndarray):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items() if x is not None) + " }"
    raise TypeError(f"no TOML for {type(v).__name__}")


def images_toml(entries: list[dict], top: dict | None = None) -> str:
    """The text of an images.toml: ``top`` keys, then one ``[[image]]`` table per entry."""
    lines = [f"{k} = {toml_value(v)}" for k, v in (top or {}).items()]
    for e in entries:
        lines += ["", "[[image]]"] + [f"{k} = {toml_value(v)}" for k, v in e.items() if v is not None]
    return "\n".join(lines) + "\n"


def write_structure(path: Path, structure) -> None:
    """A structure file the ``images:`` reader reads back: POSCAR for a crystal (its lattice in Cartesian Å, so the
    frame is the one drawn), XYZ for a molecule."""
    from ase import Atoms
    from ase.io import write

    atoms = Atoms(numbers=structure.numbers, positions=structure.positions,
                  cell=structure.lattice if structure.is_periodic else None, pbc=structure.is_periodic)
    write(path, atoms, format="vasp" if structure.is_periodic else "xyz")


def mcs_redraw(xyz, elements, camera: dict, path: Path, *, jpeg: bool, radii=None) -> Path:
    """The matplotlib image as MCS-Set draws it: mplot3d ``ax.scatter`` with the axes off (no panes, grid or
    ticks; ``set_axis_off`` moves nothing, so the truth of foreign_render's draw under the same camera holds),
    the jmol colours and sizes foreign_render gives, default depth shading; PNG, or JPEG (Pillow's quality 75)."""

    pos = np.asarray(xyz, dtype=float)
    fig, ax = _mpl_axes(camera)  # the axes foreign_render draws (and reads its truth from) under this camera
    ax.set_axis_off()
    radii = _default_radii(elements) if radii is None else np.asarray(radii, dtype=float)
    ppa = fig.bbox.height * 0.6 / max(np.ptp(camera["xlim"]), np.ptp(camera["ylim"]), np.ptp(camera["zlim"]))
    ax.scatter(pos[:, 0], pos[:, 1], pos[:, 2], c=_element_colours(elements),
               s=(2 * radii * ppa * 72 / float(camera["dpi"])) ** 2)
    out = path.with_suffix(".jpg") if jpeg else path
    fig.savefig(out, dpi=float(camera["dpi"]), facecolor="white")
    return out


def make_folder(out: Path, structures, *, tool: str = "ase", views: int = 2, size=(200, 200), seed: int = 0,
                tiling=(2, 2, 2), kind: str | None = None, mode: str = "shaded", palette=None,
                answers: dict | None = None, radii=None) -> tuple[Path, dict]:
    """Render each structure (a crystal as ``tiling`` repetitions of its cell) with ``tool`` from ``views`` cameras
    (``example_camera``, seeds from ``seed``) into ``out/images``, write the structures into ``out/structures`` and
    ``out/images.toml``; return (the toml's path, {image file: ForeignRender}, the truth of each image)."""
    out = Path(out)
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "structures").mkdir(parents=True, exist_ok=True)
    entries, truth = [], {}
    for n, s in enumerate(structures):
        item = s.identifier.replace(":", "_") or f"s{n}"
        t = tiling if s.is_periodic else (1, 1, 1)
        struct = f"structures/{item}.{'vasp' if s.is_periodic else 'xyz'}"
        write_structure(out / struct, s)
        pos, num, idx, _ = drawn_atoms(s, t)
        els = [str(x) for x in np.asarray(s.symbols)[idx]]
        for v in range(views):
            rad = None if radii is None else np.full(len(pos), radii)
            cam = example_camera(tool, pos, seed=seed + 10 * n + v, size=size, kind=kind,
                                 radii=rad if rad is not None else None)
            r = render(tool, pos, els, out / "images", camera=cam, size=size, mode=mode, radii=rad,
                       name=f"{item}_v{v}")
            file = f"images/{item}_v{v}.png"
            if tool == "matplotlib" and mode == "shaded":  # as MCS-Set draws it: the axes off
                mcs_redraw(pos, els, r.camera, out / file, jpeg=False, radii=rad)
            truth[file] = r
            entry = {"file": file, "item": item, "structure": struct,
                     "tiling": list(t) if s.is_periodic else None, "camera": r.camera}
            if answers and item in answers:
                entry["answer"] = answers[item]
            entries.append(entry)
    top = {"palette": palette} if palette is not None else {}
    (out / "images.toml").write_text(images_toml(entries, top))
    return out / "images.toml", truth
