"""Item response with what it knows: one respondent per model, its arms linked by rung effects, and a standard
error on every parameter.

P(arm of model m at rung r right on item j) = σ(a_j (θ_m + γ_r − b_j)): ability θ_m per model (its R4, R3 and
image-free arms are one respondent, not independent ones), a rung effect γ_r shared by the models (the first rung
in ladder order, R4 where present, is the reference, γ = 0), difficulty b_j and discrimination a_j > 0. Priors
θ ~ N(0, 1), γ ~ N(0, 2²), b ~ N(0, 2²), log a ~ N(0, 0.5²) (``quality``'s); the mode by
``scipy.optimize.minimize`` (L-BFGS-B, analytic gradient), then the **Laplace approximation**: the posterior's
covariance is the inverse of the Hessian of the negative log posterior at the mode (central differences of the
analytic gradient, step 1e-5), and each parameter's standard error is the square root of its diagonal entry
(discrimination's by the delta method, a · SE(log a)).

**What the fit can estimate** (``limits``): with M models each item has M × (rungs) responses, so an item's
discrimination is mostly its prior's unless the data narrow it. The record counts the items whose posterior SD of
log a is at least 0.8 × the prior SD 0.5 ("set by the prior"), and gives the median SE of the difficulties and of
the abilities. Abilities and rung effects rest on all items and are the figures the fit supports best.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.special import expit

from viewcert.errors import InputError

__all__ = ["LINKED_FIT", "LinkedFit", "fit_linked", "limits_line"]

PRIOR_B_SD = 2.0
PRIOR_LOG_A_SD = 0.5
PRIOR_GAMMA_SD = 2.0
PRIOR_BOUND = 0.8  # an item's log-a posterior SD at least this share of the prior SD: set by the prior
STEP = 1e-5
LINKED_FIT = ("two-parameter logistic P = σ(a_j (θ_model + γ_rung − b_j)): one respondent per model, rung effects "
              "(reference γ = 0 at the first rung); MAP under θ ~ N(0, 1), γ ~ N(0, 2²), b ~ N(0, 2²), log a ~ "
              "N(0, 0.5²); standard errors from the Laplace approximation (inverse Hessian at the mode)")


def _split(x: np.ndarray, m: int, g: int, j: int):
    return x[:m], np.concatenate([[0.0], x[m:m + g]]), x[m + g:m + g + j], x[m + g + j:]


def _objective(x: np.ndarray, y: np.ndarray, mi: np.ndarray, ri: np.ndarray, m: int, g: int):
    """Negative log posterior and gradient; x = (θ (m), γ (g, the reference rung left out), b (J), log a (J))."""
    j = y.shape[1]
    th, gam, b, la = _split(x, m, g, j)
    a = np.exp(la)
    d = (th[mi] + gam[ri])[:, None] - b[None, :]
    z = a[None, :] * d
    nll = float(np.sum(np.logaddexp(0.0, z) - y * z))
    nll += float(th @ th / 2 + gam[1:] @ gam[1:] / (2 * PRIOR_GAMMA_SD ** 2) + b @ b / (2 * PRIOR_B_SD ** 2)
                 + la @ la / (2 * PRIOR_LOG_A_SD ** 2))
    r = expit(z) - y
    row = (r * a[None, :]).sum(1)
    g_th = np.bincount(mi, row, minlength=m) + th
    g_gam = np.bincount(ri, row, minlength=g + 1)[1:] + gam[1:] / PRIOR_GAMMA_SD ** 2
    g_b = -(r * a[None, :]).sum(0) + b / PRIOR_B_SD ** 2
    g_la = (r * z).sum(0) + la / PRIOR_LOG_A_SD ** 2
    return nll, np.concatenate([g_th, g_gam, g_b, g_la])


@dataclass(frozen=True)
class LinkedFit:
    """The fitted model: per model ability, per rung effect, per item difficulty and discrimination, each with its
    standard error; the record (convergence, what the fit can estimate)."""

    models: tuple[str, ...]
    rungs: tuple[str, ...]
    theta: np.ndarray
    theta_se: np.ndarray
    gamma: np.ndarray
    gamma_se: np.ndarray
    difficulty: np.ndarray
    difficulty_se: np.ndarray
    discrimination: np.ndarray
    discrimination_se: np.ndarray
    log_a_sd: np.ndarray
    record: dict

    def respondents(self) -> pd.DataFrame:
        """One row per model (ability) and per rung (effect), with standard errors, in logits."""
        rows = [{"kind": "model ability θ", "name": m, "estimate": float(t), "se": float(s)}
                for m, t, s in zip(self.models, self.theta, self.theta_se, strict=True)]
        rows += [{"kind": "rung effect γ", "name": r, "estimate": float(t), "se": float(s)}
                 for r, t, s in zip(self.rungs, self.gamma, self.gamma_se, strict=True)]
        return pd.DataFrame(rows, columns=["kind", "name", "estimate", "se"])


def fit_linked(y: np.ndarray, models: Sequence[str], rungs: Sequence[str]) -> LinkedFit:
    """The fit of the module docstring on a 0/1 matrix with one row per arm.

    Parameters
    ----------
    y : numpy.ndarray, shape (arms, items)
        1 where the arm's vote is right.
    models : sequence of str
        Each row's model.
    rungs : sequence of str
        Each row's rung; the first in order of appearance of ``sorted`` ladder order is the caller's choice: the
        rung of the first row is the reference (γ = 0).

    Returns
    -------
    LinkedFit
        Estimates with standard errors (logits; discrimination per logit) and the record.

    Raises
    ------
    InputError
        Fewer than 2 models or 2 items, or ``models``/``rungs`` not one per row (field ``irt``).
    """
    y = np.asarray(y, float)
    if y.ndim != 2 or len(models) != y.shape[0] or len(rungs) != y.shape[0]:
        raise InputError("an item-response fit needs one model and one rung per row of responses", field="irt")
    names = tuple(dict.fromkeys(models))
    levels = tuple(dict.fromkeys(rungs))
    if len(names) < 2 or y.shape[1] < 2:
        raise InputError(f"an item-response fit needs at least 2 models and 2 items, got {len(names)} and "
                         f"{y.shape[1]}", field="irt")
    mi = np.array([names.index(m) for m in models])
    ri = np.array([levels.index(r) for r in rungs])
    m, g, j = len(names), len(levels) - 1, y.shape[1]
    res = optimize.minimize(_objective, np.zeros(m + g + 2 * j), args=(y, mi, ri, m, g), jac=True, method="L-BFGS-B",
                            options={"maxiter": 5000, "ftol": 1e-13, "gtol": 1e-6})
    x = res.x
    _, grad = _objective(x, y, mi, ri, m, g)
    n = x.size
    hess = np.empty((n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = STEP
        hess[:, k] = (_objective(x + e, y, mi, ri, m, g)[1] - _objective(x - e, y, mi, ri, m, g)[1]) / (2 * STEP)
    hess = (hess + hess.T) / 2
    se = np.sqrt(np.clip(np.diag(np.linalg.inv(hess)), 0.0, None))
    th, gam, b, la = _split(x, m, g, j)
    th_se, gam_se, b_se, la_se = _split(se, m, g, j)
    a = np.exp(la)
    by_prior = int((la_se >= PRIOR_BOUND * PRIOR_LOG_A_SD).sum())
    record = {"fit": LINKED_FIT, "respondents": m, "arms": y.shape[0], "rungs": list(levels), "items": j,
              "converged": bool(res.success), "message": str(res.message), "iterations": int(res.nit),
              "max_abs_gradient": float(np.abs(grad).max()),
              "limits": {"items_discrimination_set_by_prior": by_prior, "prior_bound": PRIOR_BOUND,
                         "median_log_a_sd": float(np.median(la_se)), "prior_log_a_sd": PRIOR_LOG_A_SD,
                         "median_difficulty_se": float(np.median(b_se)), "median_ability_se": float(np.median(th_se))}}
    return LinkedFit(names, levels, th, th_se, gam, gam_se, b, b_se, a, a * la_se, la_se, record)


def limits_line(rec: dict) -> str:
    """What the fit can and cannot estimate at its number of models, in one sentence, from its record
    (``LinkedFit.record``)."""
    lim = rec["limits"]
    return (f"item response with {rec['respondents']} models as respondents ({rec['arms']} arms linked by rung effects, "
            f"reference {rec['rungs'][0]}): abilities and rung effects are what it estimates best (median SE of an "
            f"ability {lim['median_ability_se']:.2f} logits); difficulties to a median SE of "
            f"{lim['median_difficulty_se']:.2f} logits; discriminations are shrunk toward the prior (a = 1): the "
            f"median posterior SD of log a is {lim['median_log_a_sd']:.2f} against the prior's {lim['prior_log_a_sd']} "
            f"(the responses remove {1 - (lim['median_log_a_sd'] / lim['prior_log_a_sd']) ** 2:.0%} of the prior "
            f"variance), and for {lim['items_discrimination_set_by_prior']} of {rec['items']} items it is at least "
            f"{lim['prior_bound']} × the prior's; "
            f"rank items by difficulty, not by discrimination, at {rec['respondents']} models")
