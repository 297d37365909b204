"""The render-ceiling study's 19 cell metrics (its ``random_forest_lattice19`` specification).

Computed on the INPUT cell as given (not conventionalised), from pymatgen's ``Lattice`` and ``Structure``,
in this order (lengths Å, angles degrees, volume Å³, density g/cm³):

    a, b, c, alpha, beta, gamma, volume,
    edge_ratio_min_mid, edge_ratio_mid_max, edge_ratio_min_max      (ratios of the SORTED edge lengths)
    abs_alpha_minus_90, abs_beta_minus_90, abs_gamma_minus_90, abs_gamma_minus_120,
    angle_range        max(angles) - min(angles)
    angle_std_pop      population SD (ddof = 0) of the three angles
    edge_cv_pop        population SD (ddof = 0) of the three edges / their mean
    n_sites            number of sites of the input cell
    density            pymatgen ``Structure.density``

No symmetry output (space group, Wyckoff, Bravais) and no composition enter: they would leak the label.
"""

from __future__ import annotations

import numpy as np

from viewcert.io.pymatgen_adapter import to_pymatgen

FEATURE_NAMES: tuple[str, ...] = (
    "a", "b", "c", "alpha", "beta", "gamma", "volume",
    "edge_ratio_min_mid", "edge_ratio_mid_max", "edge_ratio_min_max",
    "abs_alpha_minus_90", "abs_beta_minus_90", "abs_gamma_minus_90", "abs_gamma_minus_120",
    "angle_range", "angle_std_pop", "edge_cv_pop", "n_sites", "density",
)


def cell_features(structure) -> np.ndarray:
    """(19,) float64 features of a pymatgen ``Structure`` (its own cell, as given)."""
    lat = structure.lattice
    a, b, c = (float(x) for x in lat.abc)
    al, be, ga = (float(x) for x in lat.angles)
    lo, mid, hi = sorted((a, b, c))
    edges = np.array([a, b, c])
    angles = np.array([al, be, ga])
    return np.array([
        a, b, c, al, be, ga, float(lat.volume),
        lo / mid, mid / hi, lo / hi,
        abs(al - 90.0), abs(be - 90.0), abs(ga - 90.0), abs(ga - 120.0),
        float(angles.max() - angles.min()), float(angles.std(ddof=0)), float(edges.std(ddof=0) / edges.mean()),
        float(len(structure)), float(structure.density),
    ], dtype=np.float64)


def features_of(structures) -> np.ndarray:
    """(N, 19) feature matrix of viewcert ``Structure`` objects (periodic), via pymatgen."""
    rows = [cell_features(to_pymatgen(s)) for s in structures]
    return np.vstack(rows) if rows else np.zeros((0, len(FEATURE_NAMES)))
