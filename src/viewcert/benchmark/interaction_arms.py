"""The text arms of an interaction export (``benchmark.arms``): the R3 question, the geometry the images show as
text, and the choices-only question, the answer's form alone, for each of the four interaction tasks.

R3 (``geometry_question``): every atom the images draw (the prepared complex: the ligand and the pocket's
residues, heavy atoms, as ``interactions.ceiling.render_views`` draws them), the ligand's atoms as ``NAME ELEMENT x
y z`` and the pocket's as ``RES SEQ ATOM CHAIN ELEMENT x y z`` (the names the images' labels give:
``interactions.ceiling.label_set``), coordinates in Å in the first view's screen frame (x right, y up, z toward
the viewer, origin at that view's centre: ``Camera.to_camera``, the frame ``interaction_export.location_answer``
reads), then the task's question without the sentence about the images. The text names every atom and places it
exactly: what the ideal ceiling grants a reader (every atom recovered, every label legible), so the R3 arm is
answerable up to that ceiling.
Docking (``docking_question``): the ligand in its native pose, the pocket and the displaced ligand, in the
docking camera's screen frame, then the docking question.

Choices-only (``answer_form``): no view, no geometry, no complex named: the answer's form alone (a list of bond
entries, a residue's yes/no with its entries, or one command).
"""

from __future__ import annotations

import numpy as np

from viewcert.elements import symbols

__all__ = ["ANSWER_FORMS", "answer_form", "docking_question", "geometry_lines", "geometry_question"]

#: the answer format of a bond entry (MiSI's five-tuple), as the image questions state it
ENTRY_FORMAT = "'RESIDUE_TYPE RESIDUE_NUMBER RESIDUE_ATOM CHAIN, LIGAND_ATOM' (e.g. 'ARG 45 NH2 A, O1B')"
LOCATION_FORM = "'move x A, move y B' with A and B in whole Å along the screen axes (x right, y up)"
DOCKING_FORM = ("'roll y A, move x B' (A degrees about the screen y axis through the ligand's centre, then B Å "
                "along screen x)")


def _xyz(p) -> str:
    return " ".join(f"{float(v) + 0.0:.3f}" for v in p)


def _pocket_name(label: str) -> str:
    """``CHAIN/RESseq/ATOM`` as ``RES SEQ ATOM CHAIN`` (the five-tuple's order); anything else as it is."""
    parts = label.split("/")
    if len(parts) != 3:
        return label
    chain, res, atom = parts
    return f"{res[:3]} {res[3:]} {atom} {chain}"


def geometry_lines(structure, ligand_atoms, camera) -> str:
    """The ligand's and the pocket's atoms, one line each (module docstring), in ``camera``'s screen frame (Å,
    0.001 Å)."""
    xyz = np.asarray(camera.to_camera(np.asarray(structure.positions, dtype=np.float64))).reshape(-1, 3)
    el = symbols(structure.numbers)
    labels = structure.site_labels or tuple(str(k) for k in range(structure.n_atoms))
    lig = set(int(k) for k in ligand_atoms)
    ligand = [f"  {labels[k].split('/')[-1]} {el[k]} {_xyz(xyz[k])}" for k in sorted(lig)]
    pocket = [f"  {_pocket_name(labels[k])} {el[k]} {_xyz(xyz[k])}" for k in range(structure.n_atoms)
              if k not in lig]
    return "Ligand atoms (NAME ELEMENT x y z):\n" + "\n".join(ligand) + \
        "\nPocket atoms (RES SEQ ATOM CHAIN ELEMENT x y z):\n" + "\n".join(pocket)


def geometry_question(ask: str, structure, ligand_atoms, camera, pocket: float) -> str:
    """The R3 question of a pocket-ligand, residue-ligand or interaction-location item: the complex as text in
    ``camera``'s screen frame (the first view's), then ``ask`` (the task's question without the images' sentence)."""
    head = (f"You are given one protein–ligand complex as text (the ligand and the protein residues within "
            f"{pocket:g} Å of it, heavy atoms, hydrogens not given): Cartesian coordinates in Å in the "
            f"{camera.name} view's screen frame (x to the right, y up, z toward the viewer), origin at the centre "
            "of that view. ")
    return f"{head}{ask}\n{geometry_lines(structure, ligand_atoms, camera)}"


def _atom_block(numbers, points, camera) -> str:
    xyz = np.asarray(camera.to_camera(np.asarray(points, dtype=np.float64))).reshape(-1, 3)
    return "\n".join(f"  {e} {_xyz(p)}" for e, p in zip(symbols(np.asarray(numbers)), xyz, strict=True))


def docking_question(ligand: np.ndarray, ligand_numbers, pocket_positions: np.ndarray, pocket_numbers,
                     moved: np.ndarray, camera, pocket: float) -> str:
    """The R3 question of a docking item: the native ligand, the pocket and the displaced ligand (positions in
    Å, world frame) as text in the docking camera's screen frame (0.001 Å), then the docking question."""
    return ("You are given as text, in one camera's screen frame (x to the right, y up, z toward the viewer; "
            "Cartesian coordinates in Å), the ligand alone in its native pose, the protein pocket (heavy atoms of "
            f"the residues within {pocket:g} Å of the ligand) and the ligand displaced (its atoms in the same "
            "order). Give the operations that bring the displaced ligand back to its native pose in the pocket, "
            f"as {DOCKING_FORM}.\nNative ligand (ELEMENT x y z):\n{_atom_block(ligand_numbers, ligand, camera)}"
            f"\nPocket (ELEMENT x y z):\n{_atom_block(pocket_numbers, pocket_positions, camera)}"
            f"\nDisplaced ligand (ELEMENT x y z):\n{_atom_block(ligand_numbers, moved, camera)}")


#: the choices-only question of each interaction task: the answer's form alone
ANSWER_FORMS = {
    "pocket-ligand": (f"List hydrogen bonds between a ligand and its protein pocket, one entry per bond as "
                      f"{ENTRY_FORMAT}, entries separated by '; ', or answer 'no' when there is none."),
    "residue-ligand": f"Answer 'no', or 'yes:' followed by hydrogen bonds, each as {ENTRY_FORMAT}, separated by '; '.",
    "interaction-location": f"Give one command as {LOCATION_FORM}. Answer with the command only.",
    "docking": f"Give the operations as {DOCKING_FORM}. Answer with the command only.",
}


def answer_form(task: str) -> str:
    """The choices-only question of an interaction task (``ANSWER_FORMS``)."""
    return ANSWER_FORMS[task]
