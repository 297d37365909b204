"""Issue 56, item 3: the linked item-response fit. Its gradient against finite differences, its Laplace standard
errors against a Hessian built independently from second differences of the objective's value, one ability per
model with rung effects (a planted rung effect recovered within three standard errors), and the stated limits."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import check_grad

from viewcert.attribution.irt import _objective, fit_linked, limits_line
from viewcert.errors import InputError


def _simulate(seed=11, n_models=8, n_items=80, gamma=(0.0, 1.2)):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, n_models)
    b = rng.normal(0, 1, n_items)
    rows, models, rungs = [], [], []
    for r, g in zip(("R4", "R3"), gamma, strict=True):
        for m in range(n_models):
            p = 1 / (1 + np.exp(-(theta[m] + g - b)))
            rows.append(rng.random(n_items) < p)
            models.append(f"m{m}")
            rungs.append(r)
    return np.array(rows, float), models, rungs


def test_gradient_matches_finite_differences():
    y, models, rungs = _simulate(n_models=4, n_items=6)
    mi = np.array([int(m[1:]) for m in models])
    ri = np.array([0 if r == "R4" else 1 for r in rungs])
    x0 = np.random.default_rng(0).normal(0, 0.3, 4 + 1 + 12)
    err = check_grad(lambda x: _objective(x, y, mi, ri, 4, 1)[0], lambda x: _objective(x, y, mi, ri, 4, 1)[1], x0)
    assert err / np.sqrt(x0.size) < 1e-5


def test_laplace_se_equals_an_independent_value_hessian():
    """Second differences of the negative log posterior's value (step 1e-4) at the mode, inverted: the standard
    errors agree with the fit's (built from the analytic gradient) to 1e-3 relative."""
    y, models, rungs = _simulate(n_models=4, n_items=6)
    fit = fit_linked(y, models, rungs)
    mi = np.array([int(m[1:]) for m in models])
    ri = np.array([0 if r == "R4" else 1 for r in rungs])
    x = np.concatenate([fit.theta, fit.gamma[1:], fit.difficulty, np.log(fit.discrimination)])
    n, h = x.size, 1e-4

    def f(v):
        return _objective(v, y, mi, ri, 4, 1)[0]

    hess = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = np.eye(n)[i] * h, np.eye(n)[j] * h
            hess[i, j] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (4 * h * h)
    se = np.sqrt(np.diag(np.linalg.inv(hess)))
    got = np.concatenate([fit.theta_se, fit.gamma_se[1:], fit.difficulty_se, fit.log_a_sd])
    assert got == pytest.approx(se, rel=1e-3)


def test_one_ability_per_model_and_a_planted_rung_effect_recovered():
    y, models, rungs = _simulate()
    fit = fit_linked(y, models, rungs)
    assert fit.record["converged"] and len(fit.theta) == 8 and fit.record["arms"] == 16
    assert fit.rungs == ("R4", "R3") and fit.gamma[0] == 0.0 and fit.gamma_se[0] == 0.0
    assert abs(fit.gamma[1] - 1.2) < 3 * fit.gamma_se[1] and fit.gamma[1] > 0
    resp = fit.respondents()
    assert (resp["kind"] == "model ability θ").sum() == 8 and (resp["se"][:8] > 0).all()
    line = limits_line(fit.record)
    assert "8 models as respondents (16 arms linked by rung effects, reference R4)" in line


def test_too_few_models_refused():
    with pytest.raises(InputError, match="at least 2 models"):
        fit_linked(np.ones((2, 3)), ["a", "a"], ["R4", "R3"])
