"""The refinement's camera model (``viewcert.recover.fit``): a parameter vector's matrix draws every point where the
module docstring's formulas put it (written here from the definition, with scipy's rotation vector)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from tests.support.strategies import rotations
from viewcert.recover.evidence import project
from viewcert.recover.fit import FitModel, matrix_of

MODELS = [FitModel("orthographic"), FitModel("orthographic", per_axis=True), FitModel("perspective"),
          FitModel("perspective", free_principal=True), FitModel("perspective", per_axis=True, free_principal=True)]
PRINCIPAL = (256.0, 200.0)


def _params(model: FitModel, rng: np.random.Generator, tiny_rotation: bool) -> np.ndarray:
    p = rng.normal(size=model.n_params)
    p[:3] = rng.normal(size=3) * (1e-13 if tiny_rotation else 1.0)
    p[3] = rng.uniform(0.5, 3.5)  # log px per Å
    p[4:6] = rng.uniform(50, 450, size=2)
    if model.kind == "perspective":
        p[6] = rng.uniform(0.0, 0.05)
        if model.free_principal:
            p[7:9] = rng.uniform(150, 350, size=2)
    if model.per_axis:
        p[-2:] = rng.uniform(-1, 1, size=2)
    return p


def _drawn_by_definition(p: np.ndarray, model: FitModel, r0: np.ndarray, xyz: np.ndarray) -> np.ndarray:
    """(u, v) px from the module docstring: (x, y, z) = R D X with R = exp([rotvec]×) r0 (scipy's rotation
    vector), D = diag(1, e^a, e^b); orthographic u = u₀ + s x, v = v₀ − s y; perspective
    u = cx + s (x + tx)/(1 − κz), v = cy − s (y + ty)/(1 − κz), tx = (u₀ − cx)/s, ty = −(v₀ − cy)/s."""
    rot = Rotation.from_rotvec(p[:3]).as_matrix() @ r0
    d = np.array([1.0, math.exp(p[-2]), math.exp(p[-1])]) if model.per_axis else np.ones(3)
    x, y, z = (rot @ (d * xyz).T)
    s, u0, v0 = math.exp(p[3]), p[4], p[5]
    if model.kind == "orthographic":
        return np.stack([u0 + s * x, v0 - s * y], axis=1)
    kappa = p[6]
    cx, cy = (p[7], p[8]) if model.free_principal else PRINCIPAL
    tx, ty = (u0 - cx) / s, -(v0 - cy) / s
    w = 1.0 - kappa * z
    return np.stack([cx + s * (x + tx) / w, cy - s * (y + ty) / w], axis=1)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(range(len(MODELS))), rotations(), st.integers(0, 2**32 - 1), st.booleans())
def test_matrix_draws_points_as_the_definition(m_index, r0, seed, tiny):
    model = MODELS[m_index]
    rng = np.random.default_rng(seed)
    p = _params(model, rng, tiny)
    xyz = rng.normal(size=(9, 3)) * 4.0
    uv, _ = project(matrix_of(p, model, r0, PRINCIPAL), xyz)
    np.testing.assert_allclose(uv, _drawn_by_definition(p, model, r0, xyz), rtol=1e-10, atol=1e-8)
