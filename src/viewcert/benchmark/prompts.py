"""The questions of a benchmark export: the image question (rungs R0–R2, without the options: each harness
adds its own), the geometry-as-text prompt (rung R3, the render-ceiling study's format, which lists the
choices as the study did), the answer choices and letters, and the R3 question file."""

from __future__ import annotations

import numpy as np

from viewcert.benchmark.settings import ExportSettings
from viewcert.io.atomic import json_dumps
from viewcert.io.cell import cell_parameters
from viewcert.render.palette import get_style
from viewcert.structures import Structure
from viewcert.symmetry.labels import CRYSTAL_SYSTEMS

R3_PREAMBLE = (
    "You are given the complete geometry of a crystal structure as text. Identify the crystal system (one of: "
    "{choices}). Reason from the cell geometry and atomic arrangement given below."
)


def crystal_systems() -> tuple[str, ...]:
    return CRYSTAL_SYSTEMS


def image_question(settings: ExportSettings, view_names: tuple[str, ...]) -> str:
    st = get_style(settings.image.style)
    look = {"study": "flat discs with outlines", "ball-and-stick": "ball-and-stick", "spacefill": "space-filling"}
    t = "×".join(str(x) for x in settings.tiling)
    bonds = "bonds drawn" if st.bonds else "no bonds"
    # no list of the choices: every harness adds its own lettered options (benchmark.harness_files)
    return (
        f"You are shown {len(view_names)} standardized multi-view renders of a crystal structure "
        f"({settings.image.kind} projection, {look.get(st.name, st.name)}, {bonds}; the conventional cell tiled {t} with "
        f"the supercell box outlined; views: {', '.join(view_names)}). Identify the crystal system. Reason from "
        "the cell geometry and atomic arrangement visible in the images."
    )


def r3_prompt(cell: Structure) -> str:
    """Geometry as text (rung R3), in the render-ceiling study's format: cell parameters, atom count and
    fractional coordinates (wrapped to [0, 1)) of the rendered conventional cell."""
    a, b, c, al, be, ga = cell_parameters(cell.lattice)
    frac = cell.frac_coords
    frac = frac - np.floor(frac)
    frac[np.round(frac, 5) >= 1.0] = 0.0  # prints as the study does: 0.999996 is 0.00000, never 1.00000 or -0.00000
    lines = [
        R3_PREAMBLE.format(choices=", ".join(crystal_systems())),
        "",
        f"Cell parameters: a={a:.4f} b={b:.4f} c={c:.4f} Angstrom, alpha={al:.3f} beta={be:.3f} gamma={ga:.3f} "
        "degrees.",
        f"Number of atoms in the cell: {cell.n_atoms}.",
        "Fractional coordinates (species x y z):",
    ]
    for sym, f in zip(cell.symbols, frac, strict=True):
        lines.append(f"  {sym} {f[0]:.5f} {f[1]:.5f} {f[2]:.5f}")
    return "\n".join(lines[:2]) + "\n" + "\n".join(lines[2:])


def r3_file(records: list[dict], choices: tuple[str, ...], task: str) -> str:
    """The text of ``r3_prompts.jsonl`` (id, source_id, index, question, choices, answer, task) for the
    exported records (``id`` the input's id, ``index`` the question number, ``r3_prompt`` the text)."""
    r3 = []
    for r in records:
        r3.append(json_dumps({"id": f"q{r['index']:04d}", "source_id": r["id"], "index": r["index"],
                              "question": r["r3_prompt"], "choices": list(choices), "answer": r["answer"],
                              "task": task}, indent=None))
    return "".join(r3)
