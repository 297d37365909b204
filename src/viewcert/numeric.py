"""Small numeric helpers shared by every layer: read-only arrays and the fixed float formatting that
certificates, sidecars and reports use (so the same number always prints the same bytes)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SNAP_DIGITS", "fixed", "readonly", "sig", "snap_round"]


def readonly(a, dtype=None) -> np.ndarray:
    """A C-contiguous copy-or-view of ``a`` (as ``dtype``) that cannot be written.

    Parameters
    ----------
    a : array_like
        Any array of any shape.
    dtype : numpy.dtype or type, optional
        The dtype of the result; None keeps ``a``'s.

    Returns
    -------
    numpy.ndarray
        Same shape and values as ``a``, C-contiguous, ``writeable`` False (a view when ``a`` already is
        C-contiguous of that dtype, then ``a`` itself is made read-only too).
    """
    a = np.ascontiguousarray(a, dtype=dtype)
    a.setflags(write=False)
    return a


def sig(x: float | None, digits: int = 9) -> float | None:
    """``digits`` significant digits (certificates); None for None and non-finite; never -0.0.

    Parameters
    ----------
    x : float or None
        The value, in any unit (kept).
    digits : int, default 9
        Significant digits kept.

    Returns
    -------
    float or None
        ``x`` rounded to ``digits`` significant digits, same unit; None when ``x`` is None, NaN or infinite.
    """
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
    correctly rounded ``round``, twice): the same double on every CPU for values that differ by noise only.

    Parameters
    ----------
    x : float
        The value, in any unit (kept).
    decimals : int
        Decimal places of the result.

    Returns
    -------
    float
        ``x`` rounded to ``decimals`` decimal places, same unit (may be -0.0; :func:`fixed` never is).
    """
    return round(round(x, decimals + SNAP_DIGITS), decimals)


def fixed(x: float, decimals: int = 6) -> float:
    """``decimals`` decimal places (pixel and Å values in sidecars), snapped first (:func:`snap_round`);
    never -0.0.

    Parameters
    ----------
    x : float
        The value, in its unit (px, Å, ...; kept).
    decimals : int, default 6
        Decimal places of the result.

    Returns
    -------
    float
        ``x`` rounded half to even to ``decimals`` decimal places, same unit.
    """
    v = snap_round(float(x), decimals)
    return 0.0 if v == 0 else v
