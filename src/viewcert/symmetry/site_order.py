"""pymatgen's site order, reproduced without pymatgen objects: its Pauling electronegativity table (the
package's copy in ``data/pauling_electronegativity.json``, pinned against pymatgen in the tests) and its
``Site.__lt__`` comparison (electronegativity, then symbol; NaN compares False both ways, so sorting with
it depends on the input order exactly as in pymatgen). Used by ``io.cif`` and ``standardize``."""

from __future__ import annotations

import json
import math
from functools import lru_cache
from importlib import resources

import numpy as np

from viewcert.elements import SYMBOLS


@lru_cache(maxsize=1)
def electronegativity() -> tuple[np.ndarray, np.ndarray]:
    """(Pauling X by Z with NaN where pymatgen has none, rank by (X, symbol) over the finite ones; −1 for
    the others). Read-only arrays indexed by atomic number."""
    raw = json.loads(resources.files("viewcert").joinpath("data/pauling_electronegativity.json").read_text())
    x = np.full(len(SYMBOLS), np.nan)
    for z, sym in enumerate(SYMBOLS):
        val = raw["X"].get(sym) if z else None
        if val is not None:
            x[z] = float(val)
    finite = [z for z in range(1, len(SYMBOLS)) if math.isfinite(x[z])]
    rank = np.full(len(SYMBOLS), -1, dtype=np.int64)
    for r, z in enumerate(sorted(finite, key=lambda z: (x[z], SYMBOLS[z]))):
        rank[z] = r
    x.setflags(write=False)
    rank.setflags(write=False)
    return x, rank


class SiteKey:
    """pymatgen ``Site.__lt__`` for an ordered single-element site: electronegativity, then symbol."""

    __slots__ = ("x", "s")

    def __init__(self, x: float, s: str):
        self.x = x
        self.s = s

    def __lt__(self, other: SiteKey) -> bool:
        if self.x < other.x:
            return True
        if self.x > other.x:
            return False
        return self.s < other.s


def replay_sort(z) -> np.ndarray:
    """The permutation Python's stable ``sorted`` gives with ``Site.__lt__`` on sites of elements ``z``."""
    x, _ = electronegativity()
    keys = [SiteKey(float(x[zi]), SYMBOLS[zi]) for zi in np.asarray(z).tolist()]
    return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)
