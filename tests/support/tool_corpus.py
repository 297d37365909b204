"""The corpus of issue 53's acceptance "Projection": structures (built-in molecules, prototypes as 2×2×2
supercells) rendered by each real tool under example cameras, and the distance between each atom as the tool
placed it (tests/support/foreign_render.py's truth) and as the resolved projection draws it. Used by
tests/cameras/test_tool_cameras_real.py (a cover set) and benchmarks/bench_tool_cameras.py (40 images per
tool, median and maximum in benchmarks/results/tool_cameras.json)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.support.foreign_render import example_camera, render
from viewcert.cameras import resolve_tool_camera

#: (label, tool, kind) of the acceptance: PyMOL orthographic and perspective, matplotlib (both), ASE's PNG
#: writer, OVITO (both), ASE's POV-Ray writer (both) and Jmol (both)
GROUPS = (("pymol-orthographic", "pymol", "orthographic"), ("pymol-perspective", "pymol", "perspective"),
          ("matplotlib", "matplotlib", None), ("ase", "ase", "orthographic"), ("ovito", "ovito", None),
          ("ase-povray", "ase-povray", None), ("jmol", "jmol", None))


def structures() -> list[tuple[str, np.ndarray, tuple]]:
    """(name, positions Å, elements): the three built-in molecules and the twenty prototypes (2×2×2)."""
    from viewcert.io.builtin import builtin_molecules, builtin_prototypes
    out = []
    for s in builtin_molecules():
        out.append((s.identifier, np.asarray(s.positions), tuple(s.symbols)))
    for s in builtin_prototypes():
        c = s.supercell((2, 2, 2)) if s.n_atoms < 8 else s
        out.append((s.identifier, np.asarray(c.positions), tuple(c.symbols)))
    return out


def measure(tool: str, kind: str | None, name: str, xyz, elements, out: Path, seed: int,
            size=(320, 240)) -> dict:
    """Render one image and compare: {image, camera, n, measured, max_px, median_px, distances}."""
    radii = np.full(len(xyz), 0.35)
    cam = example_camera(tool, xyz, seed=seed, size=size, kind=kind, radii=radii)
    r = render(tool, xyz, elements, out, camera=cam, mode="flat", radii=radii, name=f"{tool}-{seed}")
    proj = resolve_tool_camera(r.camera, where=f"{tool} {name}", image_size=size)
    uv, _ = proj.project(xyz)
    d = np.linalg.norm(uv - r.centres, axis=1)
    ok = np.isfinite(d)
    return {"structure": name, "seed": seed, "kind": proj.kind, "atoms": len(xyz), "measured": int(ok.sum()),
            "max_px": float(d[ok].max()) if ok.any() else None,
            "median_px": float(np.median(d[ok])) if ok.any() else None, "distances": d[ok]}
