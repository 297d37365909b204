"""The resolution every float of a certificate is written at, so that one command gives the same bytes on any CPU.

Floating-point results carry rounding noise that depends on the machine (numpy's SIMD loops, the BLAS kernels,
the instructions numba compiles for): an exact reconstruction's position error is ``9.93e-16`` Å on one CPU and
``1.09e-15`` Å on another. Written to significant digits, that noise reached the digested bytes. Here every
float is rounded (half to even, Python's correctly rounded ``round``) to a fixed *absolute* resolution, a power
of ten stated per quantity in :data:`RESOLUTIONS` and recorded in every certificate (:func:`resolution_record`):
noise far below the resolution is written as the resolution's zero, so two machines write the same bytes.

Which resolution a float gets: that of the nearest enclosing key listed in :data:`RESOLUTIONS` (a value inside a
list or a dict under ``phantoms`` takes ``phantoms``' resolution), else :data:`DEFAULT_RESOLUTION`. Integers,
booleans, strings and ``None`` are left as they are, and so are the settings (:data:`AS_GIVEN`: what a
recomputation reads back, e.g. a task's ``intensity_eps`` of 1/255, is written exactly as it was used; settings
are parsed or defaulted, never computed with machine-dependent rounding).

Exact ties are common in crystals (coordinates given to a few decimals: 2.5 × 0.1234 = 0.3085, whose half at the
6th decimal is an exact decimal tie): one CPU's value lands a hair above the tie and another's a hair below. So
a float is first snapped to a grid :data:`SNAP_DIGITS` decimals finer than its step (far coarser than rounding
noise: the noise vanishes and a tie becomes one and the same double on every machine), then rounded to the step
(:func:`quantize`, :func:`quantize_array`; the content digests of cells and cameras use the same rule). A value
within noise of a boundary of the fine grid that also sits on a tie of the step could still differ (about
noise / fine step × the share of values on ties); ``verify`` reports a difference of at most one step as
rounding at a boundary, never as a different result (``certify.verify``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from viewcert.numeric import SNAP_DIGITS, fixed

__all__ = ["AS_GIVEN", "DEFAULT_RESOLUTION", "RESOLUTIONS", "decimals_of", "quantize", "quantize_array",
           "quantize_tree", "resolution_of", "resolution_record"]

#: the resolution of every float not listed below (rates, bounds, settings as given): 1e-9
DEFAULT_RESOLUTION = 1e-9

#: field name -> (resolution, unit, what): the nearest enclosing key listed here decides a float's resolution
RESOLUTIONS: dict[str, tuple[float, str, str]] = {
    # positions in Å (world frame of the rendered structure)
    "phantoms": (1e-6, "angstrom", "phantom positions [label, x, y, z]"),
    "near_miss_point": (1e-6, "angstrom", "the point of the tightest near miss"),
    "camera_positions": (1e-6, "angstrom", "perspective camera positions per view"),
    "position": (1e-6, "angstrom", "a protocol's perspective camera position"),
    # distances in Å
    "min_same_label_distance": (1e-6, "angstrom", "closest pair of same-label atoms"),
    "delta_star": (1e-6, "angstrom", "uniqueness margin δ*"),
    "delta_exact": (1e-6, "angstrom", "exact δ* of the tightest near miss"),
    "d_min": (1e-6, "angstrom", "closest pair of atoms"),
    "d_da_A": (1e-6, "angstrom", "donor–acceptor distance"),
    "d_ha_A": (1e-6, "angstrom", "hydrogen–acceptor distance"),
    # errors in Å: an exact reconstruction's error is rounding noise (~1e-15 Å) and is written 0
    "max_position_error": (1e-9, "angstrom", "largest reconstruction error of a recovered atom"),
    # margins and conditioning (dimensionless)
    "margin": (1e-6, "delta", "smallest phantom-free margin, in units of δ"),
    "kappa": (1e-6, "1", "condition numbers of the view pairs"),
    # angles
    "angle_deg": (1e-6, "degree", "donor–H–acceptor angle"),
    # direction cosines and rotations (unit vectors; their noise is ~1e-16)
    "rotation": (1e-12, "1", "world→camera rotation rows"),
    "rotations": (1e-12, "1", "world→camera rotation rows"),
    "direction": (1e-12, "1", "viewing direction"),
    "mirror_normal_screen": (1e-12, "1", "a mirror plane's normal in screen axes"),
    "focal_px": (1e-9, "pixel", "perspective focal length"),
}


#: sections holding settings as given (written unrounded, shortest round-trip form)
AS_GIVEN = frozenset({"config", "settings", "tolerances", "observation_model", "policy"})


def decimals_of(resolution: float) -> int:
    """The number of decimals a power-of-ten ``resolution`` keeps (1e-6 -> 6).

    Parameters
    ----------
    resolution : float
        A power of ten (1e-6 Å, 1e-9, ...), in the unit of the values it rounds.

    Returns
    -------
    int
        ``-log10(resolution)``: decimal places kept (negative for a resolution above 1).

    Raises
    ------
    ValueError
        ``resolution`` is not a power of ten.
    """
    d = -math.log10(resolution)
    if abs(d - round(d)) > 1e-9:
        raise ValueError(f"a resolution must be a power of ten, got {resolution!r}")
    return int(round(d))


_DECIMALS = {k: decimals_of(v[0]) for k, v in RESOLUTIONS.items()}
_DEFAULT_DECIMALS = decimals_of(DEFAULT_RESOLUTION)


def quantize(x: float, decimals: int) -> float:
    """``x`` snapped to ``decimals + SNAP_DIGITS`` decimals, then rounded half-to-even at ``decimals`` (both
    correctly rounded, Python's ``round``: ``numeric.fixed``); never -0.0; a non-finite value as it is.

    Parameters
    ----------
    x : float
        The value, in its unit (Å, px, ...; kept).
    decimals : int
        Decimal places of the resolution (:func:`decimals_of`).

    Returns
    -------
    float
        ``x`` at the resolution ``10**-decimals``, same unit; NaN and ±inf unchanged.
    """
    return fixed(x, decimals) if math.isfinite(x) else x


def quantize_array(a, decimals: int) -> np.ndarray:
    """The array form of :func:`quantize` for content digests (numpy's ``round``: scale, round half to even,
    unscale, exact IEEE operations, the same on every CPU), as little-endian float64, never -0.0.

    Parameters
    ----------
    a : array_like of float
        Values of any shape, in their unit (kept).
    decimals : int
        Decimal places of the resolution (:func:`decimals_of`).

    Returns
    -------
    numpy.ndarray of little-endian float64, same shape as ``a``
        ``a`` at the resolution ``10**-decimals``, same unit.
    """
    v = np.round(np.round(np.asarray(a, dtype=np.float64), decimals + SNAP_DIGITS), decimals)
    return v.astype("<f8") + 0.0


def resolution_of(path: tuple[str, ...]) -> float | None:
    """The resolution of a float under the keys ``path`` (outermost first); None for a setting as given.

    Parameters
    ----------
    path : tuple of str
        The keys from the root of a certificate's JSON down to the float, outermost first.

    Returns
    -------
    float or None
        The resolution (a power of ten, in the unit of :data:`RESOLUTIONS`' entry), or None when a key of
        ``path`` is in :data:`AS_GIVEN`.
    """
    if AS_GIVEN.intersection(path):
        return None
    for key in reversed(path):
        if key in RESOLUTIONS:
            return RESOLUTIONS[key][0]
    return DEFAULT_RESOLUTION


def _q(obj: Any, decimals: int) -> Any:
    if type(obj) is float:
        return quantize(obj, decimals)
    if isinstance(obj, Mapping):
        return {k: v if k in AS_GIVEN else _q(v, _DECIMALS.get(k, decimals)) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_q(v, decimals) for v in obj]
    return obj


def quantize_tree(obj: Any) -> Any:
    """A copy of the JSON value ``obj`` with every float at its resolution (module docstring); tuples become
    lists, as JSON writes them.

    Parameters
    ----------
    obj : object
        A JSON value: dicts, lists, tuples, floats, ints, str, bool, None, nested.

    Returns
    -------
    object
        The same structure with tuples as lists and every float (``type(x) is float``) quantized; values under
        an :data:`AS_GIVEN` key and non-floats unchanged.
    """
    return _q(obj, _DEFAULT_DECIMALS)


def resolution_record() -> dict:
    """What a certificate states of its floats: the rule, the default and the resolution of each listed field
    (written as strings, so the record is not itself rounded).

    Returns
    -------
    dict
        JSON-ready: ``rule`` (str), ``as_given`` (sorted keys), ``default`` (str), ``fields`` ({key:
        {``resolution``, ``unit``}}, strings) and ``boundary`` (str).
    """
    return {
        "rule": ("every float is rounded half to even to the resolution of the nearest enclosing key listed in "
                 "'fields' (else 'default'); rounding noise below it is written as 0; the settings under "
                 "'as_given' are written as they were used"),
        "as_given": sorted(AS_GIVEN),
        "default": f"{DEFAULT_RESOLUTION:g}",
        "fields": {k: {"resolution": f"{r:g}", "unit": unit} for k, (r, unit, _what) in sorted(RESOLUTIONS.items())},
        "boundary": "verify reports a difference of at most one step as rounding at a boundary",
    }
