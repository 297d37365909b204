"""The slightly sheared monoclinic cell of the symmetry-truth tests (β = 90.655°, atoms on P2's 1a–1d: P2 (3)
at spglib's own angle rule, Pmm2 (25) at a 5° angle tolerance), as a CIF, and spglib's own answer on it (the
independent reference)."""

from __future__ import annotations

import math

import numpy as np
import spglib

A, B, C, BETA = 5.0, 6.0, 4.3, 90.655  # Å, degrees
FRAC = np.array([[0, 0.1, 0], [0, 0.35, 0.5], [0.5, 0.6, 0], [0.5, 0.85, 0.5]])  # P2's 1a, 1b, 1c, 1d

Z = np.array([6, 7, 8, 14])


def _lattice() -> np.ndarray:
    b = math.radians(BETA)
    return np.array([[A, 0, 0], [0, B, 0], [C * math.cos(b), 0, C * math.sin(b)]])


def _spglib_direct(angle: float, lat=None, frac=FRAC, z=Z) -> int:
    """The independent answer: spglib itself on the input cell at symprec 0.01 Å."""
    lat = _lattice() if lat is None else lat
    return int(spglib.get_symmetry_dataset((lat, frac, z), symprec=0.01, angle_tolerance=angle).number)


def _cif() -> str:
    atoms = "\n".join(f"{s}{k} {s} {f[0]:.6f} {f[1]:.6f} {f[2]:.6f}"
                      for k, (s, f) in enumerate(zip(("C", "N", "O", "Si"), FRAC, strict=True)))
    return (f"data_sheared\n_cell_length_a {A}\n_cell_length_b {B}\n_cell_length_c {C}\n"
            f"_cell_angle_alpha 90\n_cell_angle_beta {BETA}\n_cell_angle_gamma 90\n"
            "_symmetry_space_group_name_H-M 'P 1'\nloop_\n_symmetry_equiv_pos_as_xyz\n'x, y, z'\n"
            "loop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n"
            f"_atom_site_fract_z\n{atoms}\n")

