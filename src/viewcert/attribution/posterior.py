"""Small-sample posteriors of an arm's per-sample accuracy: the Beta-Binomial model of K samples per item.

Per arm (model × rung), item i has c_i right of its K samples (a sample without an answer is wrong). Model: the
items' per-sample accuracies p_i ~ Beta(μκ, (1 − μ)κ) and c_i | p_i ~ Binomial(K, p_i), so
c_i ~ BetaBinomial(K, μκ, (1 − μ)κ): μ is the arm's accuracy on the population the items are drawn from (what the
expected accuracy estimates) and κ how alike the items are (small κ: items either always right or always wrong).

Posterior by the Laplace approximation (no sampler; scipy only): on η = logit μ and λ = log κ, with weakly
informative priors η ~ N(0, 3²) and λ ~ N(log 10, 3²) (they keep an arm right or wrong on every item finite), the
mode by ``scipy.optimize.minimize`` (L-BFGS-B) and the curvature there by central differences (step 1e-4); the 95 %
interval of μ is expit(η̂ ± z σ_η). This is the empirical-Bayes / conjugate route the issue allows in place of MCMC;
its simulated coverage at n = 210, K = 3, p_i ~ Beta is measured by ``benchmarks/bench_interval_coverage.py``
(``benchmarks/results/interval_coverage.json``) and held to 93–97 % by ``tests/stats/test_interval_coverage.py``.
Where K = 1 the model reduces to a Binomial count (κ not identified): the exact Jeffreys interval, the Beta(c + ½,
n − c + ½) quantiles, is given instead, and it lies within the Clopper–Pearson interval (checked in the tests).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.special import betaincinv, betaln, expit, ndtri

from viewcert.attribution.samples import arm_samples
from viewcert.errors import InputError

__all__ = ["METHOD", "POSTERIOR_COLUMNS", "BetaBinomialPosterior", "arm_posteriors", "beta_binomial_posterior",
           "jeffreys_interval"]

PRIOR_ETA_SD = 3.0
PRIOR_LOG_KAPPA = (float(np.log(10.0)), 3.0)
STEP = 1e-4
METHOD = ("Beta-Binomial posterior of the arm's per-sample accuracy μ (items p_i ~ Beta(μκ, (1−μ)κ)); Laplace "
          "approximation on (logit μ, log κ) under N(0, 3²) and N(log 10, 3²) priors")


@dataclass(frozen=True)
class BetaBinomialPosterior:
    """The posterior of μ (a fraction in [0, 1]): its mode, the interval's ends, κ's mode, and the method."""

    mu: float
    lo: float
    hi: float
    kappa: float
    method: str


def _neg_log_post(x: np.ndarray, c: np.ndarray, k: int) -> float:
    eta, lam = x
    mu, kappa = expit(eta), np.exp(lam)
    a, b = mu * kappa, (1 - mu) * kappa
    ll = float(np.sum(betaln(c + a, k - c + b)) - c.size * betaln(a, b))
    prior = eta ** 2 / (2 * PRIOR_ETA_SD ** 2) + (lam - PRIOR_LOG_KAPPA[0]) ** 2 / (2 * PRIOR_LOG_KAPPA[1] ** 2)
    return -ll + prior


def _hessian(f, x: np.ndarray) -> np.ndarray:
    """Central-difference Hessian of ``f`` at ``x`` (step :data:`STEP`)."""
    n = x.size
    h = np.zeros((n, n))
    e = np.eye(n) * STEP
    for i in range(n):
        for j in range(i, n):
            v = (f(x + e[i] + e[j]) - f(x + e[i] - e[j]) - f(x - e[i] + e[j]) + f(x - e[i] - e[j])) / (4 * STEP ** 2)
            h[i, j] = h[j, i] = v
    return h


def jeffreys_interval(c: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The equal-tailed interval of the Beta(c + ½, n − c + ½) posterior (Jeffreys prior) of a binomial rate.

    Parameters
    ----------
    c : int
        Successes, 0..n.
    n : int
        Trials, at least 1.
    confidence : float, default 0.95
        The interval's probability, in (0, 1).

    Returns
    -------
    tuple of (float, float)
        The interval's ends, rates in [0, 1] (0 at c = 0, 1 at c = n, as the Jeffreys interval is usually given).
    """
    tail = (1 - confidence) / 2
    lo = 0.0 if c == 0 else float(betaincinv(c + 0.5, n - c + 0.5, tail))
    hi = 1.0 if c == n else float(betaincinv(c + 0.5, n - c + 0.5, 1 - tail))
    return lo, hi


def beta_binomial_posterior(correct: np.ndarray, *, confidence: float = 0.95) -> BetaBinomialPosterior:
    """The posterior of the module docstring from an arm's (n, K) per-sample correctness.

    Parameters
    ----------
    correct : numpy.ndarray of bool, shape (n, K)
        Whether each of the K samples of each of the n items is right.
    confidence : float, default 0.95
        The interval's probability, in (0, 1).

    Returns
    -------
    BetaBinomialPosterior
        μ's mode and interval (fractions in [0, 1]) and κ's mode; at K = 1 the Jeffreys interval of the count.

    Raises
    ------
    InputError
        ``correct`` is not a 2-D array with at least one item and one sample (field ``correct``).
    """
    x = np.asarray(correct, dtype=bool)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise InputError(f"per-sample correctness must be (items, K) with both ≥ 1, got {x.shape}", field="correct")
    n, k = x.shape
    c = x.sum(1).astype(float)
    if k == 1:
        lo, hi = jeffreys_interval(int(c.sum()), n, confidence)
        return BetaBinomialPosterior(float(c.mean()), lo, hi, float("nan"),
                                     "Jeffreys Beta(c + 1/2, n − c + 1/2) interval (K = 1: a binomial count)")
    m = float(np.clip(c.mean() / k, 0.5 / (n * k), 1 - 0.5 / (n * k)))
    start = np.array([np.log(m / (1 - m)), PRIOR_LOG_KAPPA[0]])
    res = optimize.minimize(_neg_log_post, start, args=(c, k), method="L-BFGS-B")
    h = _hessian(lambda v: _neg_log_post(v, c, k), res.x)
    cov = np.linalg.inv(h)
    sd = float(np.sqrt(max(cov[0, 0], 0.0)))
    z = float(ndtri(1 - (1 - confidence) / 2))
    eta = float(res.x[0])
    return BetaBinomialPosterior(float(expit(eta)), float(expit(eta - z * sd)), float(expit(eta + z * sd)),
                                 float(np.exp(res.x[1])), METHOD)


POSTERIOR_COLUMNS = ["model", "rung", "K", "n", "mu", "mu_lo", "mu_hi", "kappa", "method"]


def arm_posteriors(frame: pd.DataFrame, universe: Sequence[str], scored: Mapping[tuple[str, str], bool]) -> pd.DataFrame:
    """One row per scored arm whose items all carry K samples: the posterior of its μ (module docstring).

    Parameters
    ----------
    frame : pandas.DataFrame
        The canonical table's rows over ``universe``.
    universe : sequence of str
        The ladder's items.
    scored : mapping of (model, rung) to bool
        Which arms the ladder scored (``Ladder.arm_objects``); others are left out.

    Returns
    -------
    pandas.DataFrame
        :data:`POSTERIOR_COLUMNS`; μ and its interval fractions in [0, 1].
    """
    rows = []
    for (model, rung), g in frame.groupby(["model", "rung"], sort=True):
        if not scored.get((str(model), str(rung)), False):
            continue
        s = arm_samples(g, universe)
        if isinstance(s, str):
            continue
        p = beta_binomial_posterior(s.correct)
        rows.append({"model": str(model), "rung": str(rung), "K": s.k, "n": s.correct.shape[0], "mu": p.mu,
                     "mu_lo": p.lo, "mu_hi": p.hi, "kappa": p.kappa, "method": p.method})
    return pd.DataFrame(rows, columns=POSTERIOR_COLUMNS)
