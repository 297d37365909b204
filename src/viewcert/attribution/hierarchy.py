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

Fitted without a sampler (scipy only; no MCMC library is in the lock). Given a = (β, θ, δ, w) the items are
independent and each u is one number, so every item is integrated out exactly, by adaptive Gauss–Hermite quadrature
(``NODES`` points centred on the item's mode, scaled by its curvature): p(a | y) is then known up to a constant,
its mode â is found by Newton's method with its exact gradient and Hessian, and the Laplace approximation is used
for a alone (low-dimensional and well determined: every arm has K samples of every item). The variance components σ
are set by that marginal likelihood (empirical Bayes, :func:`_em`: σ_u by EM with each item's moments from its
quadrature; σ_θ, σ_δ, σ_w maximising the Gaussian marginal of a, L-BFGS-B within ``SD_BOUNDS``). Draws:
a from N(â, H⁻¹), each u from its exact posterior at â (its quadrature nodes and weights) moved by (a − â) times the
exact slope of E[u | a]. The rung's accuracy A_r is the mean over every model and item of σ(η) at rung r (a model
without an arm at r is predicted from its ability and the prior of δ), so every rung and every difference A_r − A_r'
averages over the same models and items; intervals are the 2.5 and 97.5 % quantiles of ``draws`` draws
(``numpy.random.default_rng(seed)``).

Why not the joint Laplace approximation (a Gaussian on every u as well; this module's first version): each u rests
on a few Bernoulli samples (5 models × K = 3 in the simulation), its posterior is skewed, and the mean of σ(η) over
Gaussian draws leans towards 0.5: by ~0.004 at a rung, half the interval's standard error, so its R4 and R3 − R4
intervals covered 0.91 at nominal 0.95 (200 replicates, Beta(2, 3) items). Integrating each item by adaptive
Gauss–Hermite quadrature with the Laplace approximation kept for the rest is lme4's ``glmer(nAGQ > 1)`` and nimble's
``buildAGHQ`` (Liu & Pierce 1994, Biometrika 81: 624–629; Pinheiro & Bates 1995, J. Comput. Graph. Stat. 4: 12–35),
here with the crossed effects (θ, δ) in a. The simulated coverage of these intervals is measured by
``benchmarks/bench_hierarchy_coverage.py`` (``benchmarks/results/hierarchy_coverage.json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.special import expit

from viewcert.errors import InputError

__all__ = ["COLUMNS", "METHOD", "HierarchyFit", "fit_hierarchy"]

PRIOR_BETA_SD = 3.0
DEFAULT_DRAWS = 4000
NODES = 15  # adaptive Gauss–Hermite points per item
SD_BOUNDS = (0.01, 20.0)  # each variance component's SD, logits: 0.01 stands for none
COLUMNS = ["quantity", "rung", "other", "mean", "lo", "hi", "observed"]
METHOD = ("hierarchical logistic-binomial model η = β_rung + θ_model + δ_model,rung + u_rung,item (+ w_rung,structure); "
          "each item integrated out by adaptive Gauss–Hermite quadrature, the Laplace approximation for the rest; "
          "variance components by that marginal likelihood (empirical Bayes); intervals from draws of the posterior")


@dataclass(frozen=True)
class HierarchyFit:
    """Posterior summaries (``table``: :data:`COLUMNS`) and the record (variance components, levels, draws)."""

    table: pd.DataFrame
    record: dict


class _Model:
    """The ladder's counts by rung, the layout of a = (β, θ, δ, w), and the posterior of a with the items integrated
    out. Rows of ``counts`` are arms (model ``m_of``, rung ``r_of``); columns items (structure ``s_of``)."""

    def __init__(self, counts: np.ndarray, k: int, m_of: np.ndarray, r_of: np.ndarray, s_of: np.ndarray,
                 n_models: int, n_rungs: int, n_structs: int, with_structure: bool):
        self.k, self.n_models, self.n_rungs, self.n_items = k, n_models, n_rungs, counts.shape[1]
        self.blocks = {"beta": n_rungs, "theta": n_models, "delta": n_models * n_rungs}
        if with_structure:
            self.blocks["w"] = n_rungs * n_structs
        self.start, p = {}, 0
        for name, size in self.blocks.items():
            self.start[name] = p
            p += size
        self.p, self.n_structs, self.with_structure = p, n_structs, with_structure
        self.s_of = s_of
        self.in_struct = np.zeros((self.n_items, n_structs))
        self.in_struct[np.arange(self.n_items), s_of] = 1.0
        # each arm's incidence on (β, θ, δ): its offset is incidence @ a
        self.incidence = np.zeros((counts.shape[0], p))
        rows = np.arange(counts.shape[0])
        self.incidence[rows, self.start["beta"] + r_of] = 1.0
        self.incidence[rows, self.start["theta"] + m_of] = 1.0
        self.incidence[rows, self.start["delta"] + m_of * n_rungs + r_of] = 1.0
        self.rows = [np.flatnonzero(r_of == r) for r in range(n_rungs)]
        self.counts = [counts[rows_r] for rows_r in self.rows]
        x, w = np.polynomial.hermite.hermgauss(NODES)
        self.x, self.logw = x * np.sqrt(2.0), np.log(w) + x ** 2 + 0.5 * np.log(2.0)

    def prior_precision(self, sds: dict) -> np.ndarray:
        out = np.empty(self.p)
        for name, size in self.blocks.items():
            out[self.start[name]:self.start[name] + size] = 1.0 / (PRIOR_BETA_SD if name == "beta" else sds[name]) ** 2
        return out

    def w_cols(self, r: int) -> np.ndarray:
        """The column of a holding each item's structure effect at rung r."""
        return self.start["w"] + r * self.n_structs + self.s_of

    def _rung(self, r: int, a: np.ndarray, prec_u: float, v: np.ndarray) -> dict:
        """Rung r given a: each item's mode in v = u + w, its nodes and posterior weights, log p(y_ri | a), and the
        expected residuals, information and centred residuals over the nodes."""
        c, k = self.counts[r], self.k
        off = self.incidence[self.rows[r]] @ a  # (arms,)
        t = a[self.w_cols(r)] if self.with_structure else np.zeros(self.n_items)
        for _ in range(100):
            p = expit(off[:, None] + v[None, :])
            g = (c - k * p).sum(0) - prec_u * (v - t)
            h = (k * p * (1 - p)).sum(0) + prec_u
            step = np.clip(g / h, -2.0, 2.0)
            v = v + step
            if np.abs(step).max() < 1e-10:
                break
        scale = 1.0 / np.sqrt(h)
        nodes = v[:, None] + scale[:, None] * self.x[None, :]  # (items, nodes), in v
        eta = off[:, None, None] + nodes[None, :, :]  # (arms, items, nodes)
        softplus = np.logaddexp(0.0, eta)  # log(1 + e^η): log σ(η) = η − softplus, log(1 − σ(η)) = −softplus
        loglik = (c[:, :, None] * eta - k * softplus).sum(0)
        logpost = loglik - 0.5 * prec_u * (nodes - t[:, None]) ** 2 + self.logw[None, :]
        top = logpost.max(axis=1, keepdims=True)
        weight = np.exp(logpost - top)
        total = weight.sum(axis=1, keepdims=True)
        post = weight / total
        log_marg = top[:, 0] + np.log(total[:, 0]) + np.log(scale) + 0.5 * np.log(prec_u / (2 * np.pi))
        prob = np.exp(eta - softplus)
        resid = c[:, :, None] - k * prob
        mean_resid = (post[None] * resid).sum(2)
        info = (post[None] * k * prob * (1 - prob)).sum(2)
        centred = np.sqrt(post)[None] * (resid - mean_resid[:, :, None])
        return {"v": v, "t": t, "nodes": nodes - t[:, None], "post": post, "log_marg": log_marg,
                "mean_resid": mean_resid, "info": info, "centred": centred}

    def at(self, prec_a: np.ndarray, prec_u: float, a: np.ndarray, v: list[np.ndarray], steps: int = 100) -> dict:
        """The mode â of log p(a | y) (Newton's method, step halving; at most ``steps`` steps) with, there, the
        negative Hessian and every rung's terms."""
        def state(a, v):
            rungs = [self._rung(r, a, prec_u, v[r]) for r in range(self.n_rungs)]
            value = float(sum(t["log_marg"].sum() for t in rungs) - 0.5 * np.sum(prec_a * a ** 2)
                          + 0.5 * np.sum(np.log(prec_a)))
            return {"a": a, "rungs": rungs, "value": value}

        s = state(a, v)
        grad, hess = self._derivatives(s, prec_a)
        for _ in range(steps):
            step = np.linalg.solve(hess, grad)
            if float(grad @ step) < 1e-8:  # the Newton decrement (twice the step's expected gain) at the quadrature's noise
                break
            t = 1.0
            trial = state(s["a"] + step, [x["v"] for x in s["rungs"]])
            while trial["value"] < s["value"] - 1e-9 and t >= 1e-3:
                t /= 2
                trial = state(s["a"] + t * step, [x["v"] for x in s["rungs"]])
            if trial["value"] < s["value"] - 1e-9:  # no ascent along Newton's direction: the mode, to the
                break  # quadrature's precision (its value moves by ~1e-9 with the nodes)
            s = trial
            grad, hess = self._derivatives(s, prec_a)
        s["grad"], s["hess"], s["decrement"] = grad, hess, float(grad @ np.linalg.solve(hess, grad))
        return s

    def _derivatives(self, s: dict, prec_a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gradient of log p(a | y) and its negative Hessian: −E[information] + Cov[score] over each item's nodes."""
        grad = -prec_a * s["a"]
        hess = np.diag(prec_a)
        for r, t in enumerate(s["rungs"]):
            inc = self.incidence[self.rows[r]]
            cen = t["centred"]
            grad += inc.T @ t["mean_resid"].sum(1)
            h_arms = np.diag(t["info"].sum(1)) - np.einsum("aig,big->ab", cen, cen)
            hess += inc.T @ h_arms @ inc
            if self.with_structure:
                cols = self.start["w"] + r * self.n_structs + np.arange(self.n_structs)
                tot = cen.sum(0)  # (items, nodes): the centred residual summed over the arms
                grad[cols] += t["mean_resid"].sum(0) @ self.in_struct
                cross = inc.T @ ((t["info"] - np.einsum("aig,ig->ai", cen, tot)) @ self.in_struct)
                hess[:, cols] += cross
                hess[cols, :] += cross.T
                hess[cols, cols] += (t["info"].sum(0) - (tot ** 2).sum(1)) @ self.in_struct
        return grad, hess

    def log_marginal(self, s: dict) -> float:
        """log p(y | σ) up to a constant: log p(y, â | σ) (items integrated) − ½ log det H (Laplace over a)."""
        return s["value"] - 0.5 * float(np.linalg.slogdet(s["hess"])[1])

    def draws(self, s: dict, rng: np.random.Generator, n: int) -> tuple[np.ndarray, list[np.ndarray]]:
        """``n`` draws of a (n, p) and, per rung, of every item's u (n, items)."""
        cov = np.linalg.inv(s["hess"])
        a = rng.multivariate_normal(s["a"], (cov + cov.T) / 2, size=n, method="cholesky")
        da = a - s["a"]
        us = []
        for r, t in enumerate(s["rungs"]):
            post, nodes = t["post"], t["nodes"]
            centred_u = np.sqrt(post) * (nodes - (post * nodes).sum(1, keepdims=True))
            slope_arm = np.einsum("ig,aig->ai", centred_u, t["centred"])  # d E[u_i | a] / d offset of arm a
            shift = da @ self.incidence[self.rows[r]].T @ slope_arm
            if self.with_structure:
                shift += da[:, self.w_cols(r)] * slope_arm.sum(0)[None, :]
            cum = np.cumsum(post, axis=1)
            cum[:, -1] = 1.0
            flat = (cum + np.arange(self.n_items)[:, None]).ravel()
            pick = np.searchsorted(flat, rng.random((n, self.n_items)) + np.arange(self.n_items)[None, :], side="right")
            us.append(nodes.ravel()[np.minimum(pick, flat.size - 1)] + shift)
        return a, us

    def rung_accuracy(self, a: np.ndarray, us: list[np.ndarray]) -> np.ndarray:
        """(draws, rungs): mean over every model and item of σ(η) at each rung."""
        st, nm, nr = self.start, self.n_models, self.n_rungs
        out = np.empty((a.shape[0], nr))
        for r in range(nr):
            arm = a[:, [st["beta"] + r]] + a[:, st["theta"]:st["theta"] + nm] + a[:, st["delta"] + np.arange(nm) * nr + r]
            item = us[r] + (a[:, self.w_cols(r)] if self.with_structure else 0.0)
            out[:, r] = expit(arm[:, :, None] + item[:, None, :]).mean(axis=(1, 2))
        return out


def _gaussian_components(model: _Model, names: list[str], h_data: np.ndarray, rhs: np.ndarray, sds: dict) -> dict:
    """σ of the Gaussian blocks (θ, δ, w) maximising the marginal likelihood of a under the quadratic
    approximation of its likelihood, log L(a) ≈ rhs·a − ½ aᵀ h_data a: ½ log det P − ½ log det(h_data + P)
    + ½ μᵀ(h_data + P)μ with μ = (h_data + P)⁻¹ rhs, P the prior precision (L-BFGS-B on log σ within ``SD_BOUNDS``;
    its gradient per block is Σ (P_k (V_kk + μ_k²) − 1), zero where EM stops)."""
    blocks = [np.arange(model.start[n], model.start[n] + model.blocks[n]) for n in names]

    def negative(log_sds):
        prec = model.prior_precision({**sds, **dict(zip(names, np.exp(log_sds), strict=True))})
        h = h_data + np.diag(prec)
        chol = np.linalg.cholesky(h)
        mu = np.linalg.solve(h, rhs)
        cov_diag = np.sum(np.linalg.inv(chol) ** 2, axis=0)
        value = 0.5 * np.sum(np.log(prec)) - np.sum(np.log(np.diag(chol))) + 0.5 * mu @ rhs
        grad = [np.sum(prec[b] * (cov_diag[b] + mu[b] ** 2) - 1.0) for b in blocks]
        return -value, -np.array(grad)

    start = np.log(np.clip([sds[n] for n in names], *SD_BOUNDS))
    res = optimize.minimize(negative, start, jac=True, method="L-BFGS-B",
                            bounds=[tuple(np.log(SD_BOUNDS))] * len(names))
    return dict(zip(names, np.exp(res.x), strict=True))


def _em(model: _Model, comps: list[str], max_iter: int = 200, tol: float = 1e-3) -> tuple[dict, dict, bool]:
    """The variance components (empirical Bayes), one Newton step on a per iteration. σ_u by EM: E[u²] from each
    item's quadrature plus the spread of a through the slope of E[u | a]. σ_θ, σ_δ, σ_w by maximising the marginal
    likelihood of a under the quadratic approximation of its likelihood at the current point
    (:func:`_gaussian_components`: plain EM is slow for them, most of their information missing with a few
    models, and does not stop when one of them is zero)."""
    sds = dict.fromkeys(comps, 0.7)
    gaussian = [n for n in comps if n != "u"]
    a, v = np.zeros(model.p), [np.zeros(model.n_items) for _ in range(model.n_rungs)]
    for _ in range(max_iter):
        prec = model.prior_precision(sds)
        s = model.at(prec, 1.0 / sds["u"] ** 2, a, v, steps=1)
        cov = np.linalg.inv(s["hess"])
        second = 0.0
        for r, t in enumerate(s["rungs"]):
            post, nodes = t["post"], t["nodes"]
            centred_u = np.sqrt(post) * (nodes - (post * nodes).sum(1, keepdims=True))
            per_arm = np.einsum("ig,aig->ai", centred_u, t["centred"])
            slope = model.incidence[model.rows[r]].T @ per_arm  # (p, items): d E[u_i | a] / d a
            if model.with_structure:
                slope[model.w_cols(r), np.arange(model.n_items)] += per_arm.sum(0)
            second += float((post * nodes ** 2).sum() + np.sum(slope * (cov @ slope)))
        new = {"u": float(np.clip(np.sqrt(second / (model.n_rungs * model.n_items)), *SD_BOUNDS))}
        # the likelihood of a as a quadratic about s["a"]: information h_data, linear term rhs
        h_data = s["hess"] - np.diag(prec)
        rhs = h_data @ s["a"] + s["grad"] + prec * s["a"]
        new.update(_gaussian_components(model, gaussian, h_data, rhs, sds))
        a = np.linalg.solve(h_data + np.diag(model.prior_precision(new)), rhs)  # the Newton step under the new σ
        change = max(abs(np.log(new[n] / sds[n])) for n in comps)
        sds, v = new, [t["v"] for t in s["rungs"]]
        if change < tol and s["decrement"] < 1e-6:
            return sds, {"a": a, "v": v}, True
    return sds, {"a": a, "v": v}, False


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
        Draws from the posterior for the intervals.
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
    model = _Model(c, k, np.array([names_m.index(m) for m in models]), np.array([names_r.index(r) for r in rungs]),
                   np.array([names_s.index(s) for s in structs]), len(names_m), len(names_r), len(names_s),
                   with_structure)
    comps = ["theta", "delta", "u"] + (["w"] if with_structure else [])
    sds, start, em_converged = _em(model, comps)
    sds = {n: sds[n] for n in comps}
    post = model.at(model.prior_precision(sds), 1.0 / sds["u"] ** 2, start["a"], start["v"])
    acc = model.rung_accuracy(*model.draws(post, np.random.default_rng(seed), draws))
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
              "draws": draws, "seed": seed, "converged": bool(em_converged and post["decrement"] < 1e-6),
              "note": "" if with_structure else "one item per structure: the structure level is left out (not "
                                                 "identifiable apart from the item)"}
    return HierarchyFit(pd.DataFrame(rows_out, columns=COLUMNS), record)
