"""The spglib-reuse shortcut against the full path (a fresh spglib call) on one cell."""

from __future__ import annotations

from viewcert.structures import Structure
from viewcert.symmetry import reuse
from viewcert.symmetry.labels import analyse_cell
from viewcert.symmetry.standardize import standardize_with_dataset


def _full_and_short(s: Structure, tau: float = 0.01, angle: float = 5.0):
    conv, std = standardize_with_dataset(s, symprec=tau, angle_tolerance=angle)
    full = analyse_cell(conv.lattice, conv.frac_coords, conv.numbers, symprec=tau, angle_tolerance=angle)
    short = reuse.rendered_check(conv.lattice, conv.frac_coords, conv.numbers, std, symprec=tau,
                                     angle_tolerance=angle)
    return conv, std, full, short
