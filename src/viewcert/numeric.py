"""Small numeric helpers shared by every layer: read-only arrays and the fixed float formatting that
certificates, sidecars and reports use (so the same number always prints the same bytes)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SNAP_DIGITS", "fixed", "readonly", "sig", "snap_round"]


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


#: a float is snapped to a grid this many decimals finer than its step before it is rounded to the step, so the
#: rounding noise of the CPU that computed it never decides an exact decimal tie (``viewcert.resolution``)
SNAP_DIGITS = 4


def snap_round(x: float, decimals: int) -> float:
    """``x`` rounded half to even at ``decimals + SNAP_DIGITS`` decimals, then at ``decimals`` (Python's
    correctly rounded ``round``, twice): the same double on every CPU for values that differ by noise only."""
    return round(round(x, decimals + SNAP_DIGITS), decimals)


def fixed(x: float, decimals: int = 6) -> float:
    """``decimals`` decimal places (pixel and Å values in sidecars), snapped first (:func:`snap_round`);
    never -0.0."""
    v = snap_round(float(x), decimals)
    return 0.0 if v == 0 else v
