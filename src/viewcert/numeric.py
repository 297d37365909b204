"""Small numeric helpers shared by every layer: read-only arrays and the fixed float formatting that
certificates, sidecars and reports use (so the same number always prints the same bytes)."""

from __future__ import annotations

import math

import numpy as np


def readonly(a, dtype=None) -> np.ndarray:
    """A C-contiguous copy-or-view of ``a`` (as ``dtype``) that cannot be written."""
    a = np.ascontiguousarray(a, dtype=dtype)
    a.setflags(write=False)
    return a


def sig(x: float | None, digits: int = 9) -> float | None:
    """``digits`` significant digits (certificates); None for None and non-finite; never -0.0."""
    if x is None:
        return None
    x = float(x)
    if not math.isfinite(x):
        return None
    y = float(f"{x:.{digits}g}")
    return 0.0 if y == 0.0 else y


def fixed(x: float, decimals: int = 6) -> float:
    """``decimals`` decimal places (pixel and Å values in sidecars); never -0.0."""
    v = round(float(x), decimals)
    return 0.0 if v == 0 else v
