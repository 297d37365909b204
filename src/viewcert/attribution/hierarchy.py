"""The optional hierarchical model of the ladder: every rung's accuracy and every difference of rungs, with posterior
intervals, pooling the models (respondents, their arms linked) and the items (within their structure, within the
rung).

Data: per scored arm on a measured rung (model m, rung r) and item i, c = the samples right of K. Model:

    c ~ Binomial(K, σ(η)),   η = β_r + θ_m + δ_mr + u_ri + w_rs(i)

with β_r the rung's level (prior N(0, 3²)), θ_m ~ N(0, σ_θ²) the model's ability shared by its arms (the arms are
linked through it), δ_mr ~ N(0, σ_δ²) the arm's own effect (a model's perception gap is its δ at R3 against R4),
u_ri ~ N(0, σ_u²) the item at that rung (an item hard from pixels need not be hard from text), and w_rs ~ N(0, σ_s²)
its structure at that rung (only when some structure has two or more items; with one item per structure, as in the
study, w and u cannot be told apart and the structure level is left out, and the record says so).

Fitted without a sampler (scipy only; no MCMC library is in the lock): the variance components σ by maximising the
Laplace approximation of the marginal likelihood (empirical Bayes; ``scipy.optimize.minimize``, Nelder–Mead on
their logs), then the posterior of everything else by the Laplace approximation at the mode (Newton's method on the
sparse design; covariance the inverse Hessian). The rung's accuracy A_r is the mean over every model and item of
σ(η) at rung r (a model without an arm at r is predicted from its ability and the prior of δ), so every rung and
every difference A_r − A_r' averages over the same models and items; intervals are the 2.5 and 97.5 % quantiles of
``draws`` draws from the Laplace posterior (``numpy.random.default_rng(seed)``). The simulated coverage of these
intervals is measured by ``benchmarks/bench_hierarchy_coverage.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import optimize, sparse
from scipy.special import expit

from viewcert.errors import InputError

__all__ = ["COLUMNS", "METHOD", "HierarchyFit", "fit_hierarchy"]

PRIOR_BETA_SD = 3.0
DEFAULT_DRAWS = 4000
COLUMNS = ["quantity", "rung", "other", "mean", "lo", "hi", "observed"]
METHOD = ("hierarchical logistic-binomial model η = β_rung + θ_model + δ_model,rung + u_rung,item (+ w_rung,structure); "
          "variance components by the Laplace marginal likelihood (empirical Bayes), the posterior by the Laplace "
          "approximation at the mode; intervals from draws of that posterior")


@dataclass(frozen=True)
class HierarchyFit:
    """Posterior summaries (``table``: :data:`COLUMNS`) and the record (variance components, levels, draws)."""

    table: pd.DataFrame
    record: dict


class _Design:
    """The sparse design of η over the observations, one column per latent value, with each block's prior SD."""

    def __init__(self, m_idx, r_idx, i_idx, s_idx, n_models, n_rungs, n_items, n_structs, with_structure):
        n = len(m_idx)
        self.blocks = {"beta": n_rungs, "theta": n_models, "delta": n_models * n_rungs, "u": n_rungs * n_items}
        if with_structure:
            self.blocks["w"] = n_rungs * n_structs
        self.start, p = {}, 0
        for k, size in self.blocks.items():
            self.start[k] = p
            p += size
        self.p = p
        cols = [self.start["beta"] + r_idx, self.start["theta"] + m_idx, self.start["delta"] + m_idx * n_rungs + r_idx,
                self.start["u"] + r_idx * n_items + i_idx]
        if with_structure:
            cols.append(self.start["w"] + r_idx * n_structs + s_idx)
        rows = np.concatenate([np.arange(n)] * len(cols))
        self.x = sparse.csr_matrix((np.ones(rows.size), (rows, np.concatenate(cols))), shape=(n, p))

    def prior_precision(self, sds: dict) -> np.ndarray:
        out = np.empty(self.p)
        for k, size in self.blocks.items():
            out[self.start[k]:self.start[k] + size] = 1.0 / (PRIOR_BETA_SD if k == "beta" else sds[k]) ** 2
        return out


class _Posterior:
    """The Laplace posterior at the mode, kept in blocks: a = every latent value but the items' (β, θ, δ, w), whose
    precision is the Schur complement S = A − B D⁻¹ Bᵀ, and u = the items', whose precision given a is the diagonal
    D (each observation has one item column, so the item block of the Hessian is diagonal). The mode's Newton steps,
    the log-determinant (log det D + log det S) and the draws all use the blocks: O(p_a² · p_u) instead of O(p³)."""

    def __init__(self, design: _Design, c: np.ndarray, k: int, prec: np.ndarray, z0: np.ndarray):
        u0, nu = design.start["u"], design.blocks["u"]
        self.iu = np.arange(u0, u0 + nu)
        self.ia = np.setdiff1d(np.arange(design.p), self.iu)
        xa = design.x[:, self.ia].tocsr()
        self.u_col = design.x[:, self.iu].tocsr().indices  # each observation's item column
        z = z0.copy()
        for _ in range(50):
            p = expit(design.x @ z)
            grad = design.x.T @ (k * p - c) + prec * z
            self._blocks(xa, k * p * (1 - p), prec, nu)
            if np.abs(grad).max() < 1e-8:
                break
            ga, gu = grad[self.ia], grad[self.iu]
            sa = np.linalg.solve(self.s, ga - self.b @ (gu / self.d))
            su = (gu - self.b.T @ sa) / self.d
            z[self.ia] -= sa
            z[self.iu] -= su
        self.z = z

    def _blocks(self, xa, w: np.ndarray, prec: np.ndarray, nu: int) -> None:
        xw = sparse.diags(w) @ xa
        a = (xa.T @ xw).toarray() + np.diag(prec[self.ia])
        self.b = np.zeros((self.ia.size, nu))
        coo = xw.tocoo()
        np.add.at(self.b, (coo.col, self.u_col[coo.row]), coo.data)
        self.d = np.bincount(self.u_col, w, minlength=nu) + prec[self.iu]
        self.s = a - (self.b / self.d) @ self.b.T

    def logdet(self) -> float:
        return float(np.sum(np.log(self.d)) + np.linalg.slogdet(self.s)[1])

    def draws(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` draws of every latent value from the Laplace posterior (a from N(â, S⁻¹), then u given a)."""
        cov_a = np.linalg.inv(self.s)
        a = rng.multivariate_normal(self.z[self.ia], (cov_a + cov_a.T) / 2, size=n, method="cholesky")
        mean_u = self.z[self.iu][None, :] - ((a - self.z[self.ia]) @ self.b) / self.d[None, :]
        u = mean_u + rng.standard_normal((n, self.iu.size)) / np.sqrt(self.d)[None, :]
        out = np.empty((n, self.z.size))
        out[:, self.ia], out[:, self.iu] = a, u
        return out


def _neg_marginal(log_sds: np.ndarray, names: list[str], design: _Design, c: np.ndarray, k: int, state: dict) -> float:
    """−log p(c | σ) by the Laplace approximation (up to a constant)."""
    sds = dict(zip(names, np.exp(log_sds), strict=True))
    prec = design.prior_precision(sds)
    post = _Posterior(design, c, k, prec, state["z"])
    state["z"] = post.z
    eta = design.x @ post.z
    loglik = float(np.sum(c * eta - k * np.logaddexp(0.0, eta)))
    logprior = float(-0.5 * np.sum(prec * post.z ** 2) + 0.5 * np.sum(np.log(prec)))
    return -(loglik + logprior - 0.5 * post.logdet())


def fit_hierarchy(counts: np.ndarray, k: int, models: Sequence[str], rungs: Sequence[str],
                  structures: Sequence[str] | None = None, *, draws: int = DEFAULT_DRAWS, seed: int = 0,
                  alpha: float = 0.05) -> HierarchyFit:
    """The model of the module docstring.

    Parameters
    ----------
    counts : numpy.ndarray of int, shape (arms, items)
        Samples right of K per arm (row) and item (column).
    k : int
        Samples per item, K.
    models, rungs : sequence of str
        Each row's model and rung.
    structures : sequence of str, optional
        Each item's structure (default: each item its own, so no structure level).
    draws : int, default 4000
        Draws from the Laplace posterior for the intervals.
    seed : int, default 0
        Seed of the draws.
    alpha : float, default 0.05
        1 − the intervals' probability.

    Returns
    -------
    HierarchyFit
        Per rung its accuracy A_r and per pair of rungs A_r − A_r' (fractions of the items, mean and interval; the
        ``observed`` column the raw mean accuracy over the arms there are), and the record.

    Raises
    ------
    InputError
        Rows and labels disagree, K < 1, or fewer than 2 models (field ``hierarchy``).
    """
    c = np.asarray(counts, float)
    if c.ndim != 2 or len(models) != c.shape[0] or len(rungs) != c.shape[0] or k < 1:
        raise InputError("the hierarchical model needs one model and one rung per row of counts and K ≥ 1",
                         field="hierarchy")
    names_m, names_r = sorted(set(models)), list(dict.fromkeys(rungs))
    if len(names_m) < 2:
        raise InputError(f"the hierarchical model needs at least 2 models, got {len(names_m)}", field="hierarchy")
    n_items = c.shape[1]
    structs = list(structures) if structures is not None else [str(j) for j in range(n_items)]
    names_s = sorted(set(structs))
    with_structure = len(names_s) < n_items
    rows, cols = np.nonzero(np.ones_like(c, bool))
    m_idx = np.array([names_m.index(m) for m in models])[rows]
    r_idx = np.array([names_r.index(r) for r in rungs])[rows]
    s_of = np.array([names_s.index(s) for s in structs])
    design = _Design(m_idx, r_idx, cols, s_of[cols], len(names_m), len(names_r), n_items, len(names_s), with_structure)
    y = c[rows, cols]
    comps = ["theta", "delta", "u"] + (["w"] if with_structure else [])
    state = {"z": np.zeros(design.p)}
    res = optimize.minimize(_neg_marginal, np.log(np.full(len(comps), 0.7)), args=(comps, design, y, k, state),
                            method="Nelder-Mead", options={"xatol": 1e-2, "fatol": 1e-2, "maxiter": 200})
    sds = dict(zip(comps, np.exp(res.x), strict=True))
    post = _Posterior(design, y, k, design.prior_precision(sds), state["z"])
    sample = post.draws(np.random.default_rng(seed), draws)
    acc = _rung_accuracy(sample, design, len(names_m), len(names_r), n_items, len(names_s), s_of, with_structure)
    observed = {r: float(c[np.array(rungs) == r].mean() / k) for r in names_r}
    q = [alpha / 2, 1 - alpha / 2]
    rows_out = [{"quantity": "rung accuracy", "rung": r, "other": "", "mean": float(acc[:, j].mean()),
                 "lo": float(np.quantile(acc[:, j], q[0])), "hi": float(np.quantile(acc[:, j], q[1])),
                 "observed": observed[r]} for j, r in enumerate(names_r)]
    for (i, a), (j, b) in combinations(enumerate(names_r), 2):
        d = acc[:, j] - acc[:, i]
        rows_out.append({"quantity": "difference of rungs", "rung": b, "other": a, "mean": float(d.mean()),
                         "lo": float(np.quantile(d, q[0])), "hi": float(np.quantile(d, q[1])),
                         "observed": observed[b] - observed[a]})
    record = {"method": METHOD, "models": len(names_m), "rungs": names_r, "items": n_items, "K": k,
              "structure_level": with_structure, "variance_components_sd": {n: float(v) for n, v in sds.items()},
              "draws": draws, "seed": seed, "converged": bool(res.success),
              "note": "" if with_structure else "one item per structure: the structure level is left out (not "
                                                 "identifiable apart from the item)"}
    return HierarchyFit(pd.DataFrame(rows_out, columns=COLUMNS), record)


def _rung_accuracy(sample, design, n_m, n_r, n_i, n_s, s_of, with_structure) -> np.ndarray:
    """(draws, rungs): mean over every model and item of σ(η) at each rung."""
    st = design.start
    out = np.empty((sample.shape[0], n_r))
    for r in range(n_r):
        beta = sample[:, st["beta"] + r]
        theta = sample[:, st["theta"]:st["theta"] + n_m]
        delta = sample[:, st["delta"] + np.arange(n_m) * n_r + r]
        u = sample[:, st["u"] + r * n_i:st["u"] + (r + 1) * n_i]
        if with_structure:
            u = u + sample[:, st["w"] + r * n_s + s_of]
        eta = beta[:, None, None] + (theta + delta)[:, :, None] + u[:, None, :]
        out[:, r] = expit(eta).mean(axis=(1, 2))
    return out
