"""The oracle: what a set of views determines.

- ``triangulate``  ``reconstruct`` / ``reconstruct_batch`` → ``Reconstruction`` (points, labels, support, residuals)
- ``phantoms``     ``analyse`` → ``PhantomReport`` (Φ_δ, missing atoms, uniqueness, separation, margin)
- ``noise``        ``noise_sweep``: recovery and phantom rates over 2D noise σ (Monte Carlo, seeded)
- ``_kernels``     the numba kernels' namespace (private; slow twins in tests/support/naive.py), split by stage into
                  ``_codes``, ``_geometry``, ``_grids``, ``_tuples``, ``_seeding``, ``_merge`` and ``_batch``
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.oracle.noise import delta_for_sigma, noise_sweep
    from viewcert.oracle.phantoms import PhantomReport, analyse
    from viewcert.oracle.triangulate import Reconstruction, reconstruct, reconstruct_batch

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "delta_for_sigma": "noise", "noise_sweep": "noise", "analyse": "phantoms", "PhantomReport": "phantoms",
    "reconstruct": "triangulate", "reconstruct_batch": "triangulate", "Reconstruction": "triangulate",
}
lazy_face(__name__, _FACE)

__all__ = ["PhantomReport", "Reconstruction", "analyse", "delta_for_sigma", "noise_sweep", "reconstruct",
           "reconstruct_batch"]
