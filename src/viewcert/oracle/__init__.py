"""The oracle: what a set of views determines.

- ``triangulate``  ``reconstruct`` / ``reconstruct_batch`` → ``Reconstruction`` (points, labels, support, residuals)
- ``phantoms``     ``analyse`` → ``PhantomReport`` (Φ_δ, missing atoms, uniqueness, separation, margin)
- ``noise``        ``noise_sweep``: recovery and phantom rates over 2D noise σ (Monte Carlo, seeded)
- ``_kernels``     the numba kernels (private; slow twins in tests/naive.py)

See the package docstring of viewcert for the map.
"""
