"""Design table helpers: the Maas-style prediction on a hand-worked pair, and a table row's fields."""

from __future__ import annotations

import numpy as np

from viewcert.cameras.pose import look_at
from viewcert.cameras.protocols import Protocol, View
from viewcert.design.pareto import flat_row, maas_predicted, protocol_row
from viewcert.structures import Structure


def _two_views() -> Protocol:
    return Protocol("zx", (View("z", np.eye(3)), View("x", look_at((1.0, 0.0, 0.0), up=(0.0, 1.0, 0.0)))))


def test_maas_prediction_hand_worked():
    # views along −z and +x share the y axis; the two C atoms differ by 0.03 Å along y (and 2 Å along x, z):
    # |n·Δ| = 0.03 ≤ δ for δ = 0.05 and 0.15, not 0.01; both orders (i, j) and (j, i) are false pairs → 2.
    # The O atom is alone in its label: no pair.
    s = Structure(positions=np.array([[0.0, 0, 0], [2.0, 0.03, 2.0], [5.0, 5.0, 5.0]]), numbers=np.array([6, 6, 8]))
    assert maas_predicted([s], _two_views()) == {"z|x": {"0.01": 0, "0.05": 2, "0.15": 2}}


def test_protocol_row_fields():
    s = Structure(positions=np.array([[0.0, 0, 0], [2.0, 0.03, 2.0]]), numbers=np.array([6, 6]))
    row = protocol_row([s], _two_views())
    # δ* of this pair: the ghost (A in view z, B in view x) has ρ = 0.015 Å (half the 0.03 Å gap), far from
    # both atoms: a phantom at δ = 0.05 and 0.15 for both oracles, not at 0.01
    assert abs(row["margins"]["delta_star"]["min"] - 0.015) < 1e-12
    assert row["phantom_items"] == {"first@0.01": 0, "first@0.05": 1, "first@0.15": 1,
                                    "all@0.01": 0, "all@0.05": 1, "all@0.15": 1}
    flat = flat_row(row)
    assert flat["protocol"] == "zx" and flat["views"] == 2 and "phantom_items_all@0.15" in flat
