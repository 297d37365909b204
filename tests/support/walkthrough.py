"""The README's "Your own benchmark" walkthrough: its commands as printed and the three CIFs it runs on."""

from __future__ import annotations

from pathlib import Path

from pymatgen.core import Lattice, Structure
from pymatgen.io.cif import CifWriter

README = Path(__file__).resolve().parents[2] / "README.md"


def walkthrough() -> list[str]:
    """The commands of the README's "Your own benchmark" section: the lines of its first bash block."""
    section = README.read_text().split("\n## Your own benchmark\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def write_cifs(folder: Path) -> dict[str, str]:
    """Three CIFs (P1, every atom listed) and their crystal systems."""
    folder.mkdir()
    made = {
        "NaCl": (Structure.from_spacegroup("Fm-3m", Lattice.cubic(5.64), ["Na", "Cl"],
                                           [[0, 0, 0], [0.5, 0.5, 0.5]]), "cubic"),
        "CsCl": (Structure.from_spacegroup("Pm-3m", Lattice.cubic(4.12), ["Cs", "Cl"],
                                           [[0, 0, 0], [0.5, 0.5, 0.5]]), "cubic"),
        "Mg": (Structure.from_spacegroup("P6_3/mmc", Lattice.hexagonal(3.21, 5.21), ["Mg"],
                                         [[1 / 3, 2 / 3, 0.25]]), "hexagonal"),
    }
    for name, (s, _) in made.items():
        CifWriter(s).write_file(folder / f"{name}.cif")
    return {name: system for name, (_, system) in made.items()}
