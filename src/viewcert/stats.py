"""Statistics shared by certify and attribution: the one exact (Clopper–Pearson) binomial bound, the paired item bootstrap, exact McNemar, the
sign test, and Holm's step-down correction.

Conventions (every output records them):

- Clopper–Pearson bounds are exact and always name their side: ``"two-sided"`` puts α/2 in each tail,
  ``"one-sided-lower"`` / ``"one-sided-upper"`` put α in one tail (220/220 at 95 % -> lower bound
  0.05^(1/220) = 0.98648). No scipy.stats at import (it costs ~0.3 s of start-up).
- The bootstrap resamples *items* with replacement (all rungs and all models see the same resampled
  items, so gaps and shares are paired), with ``numpy.random.default_rng(seed)``; intervals are
  percentile intervals (``numpy.quantile``, linear interpolation) at ``alpha/2`` and ``1 - alpha/2``.
- A share (R3 − R4)/(R1 − R4) is *suppressed* (reported as absent, with the reason) when the bootstrap
  lower bound of R1 − R4 falls below ``share_cutoff``; it is never clipped. Resamples with
  R1 − R4 <= 0 (share undefined) are *degenerate*: counted, and left out of the share's percentiles.
- McNemar is the exact two-sided binomial test on the discordant pairs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.special import bdtr, betaincinv

from viewcert.errors import InputError
from viewcert.limits import active_limits

__all__ = ["DEFAULT_ALPHA", "DEFAULT_N_BOOT", "DEFAULT_SEED", "DEFAULT_SHARE_CUTOFF", "SIDES", "BootstrapSettings",
           "Bound", "Interval", "McNemar", "ShareBootstrap", "SignTest", "bootstrap_indices", "bootstrap_median",
           "clopper_pearson", "clopper_pearson_interval", "clopper_pearson_lower", "empirical_percentile", "holm",
           "mcnemar_exact", "percentile_rank",
           "paired_share_bootstrap", "percentile_interval", "share_point", "sign_test"]

DEFAULT_SEED = 20260601
DEFAULT_N_BOOT = 10_000
DEFAULT_ALPHA = 0.05
DEFAULT_SHARE_CUTOFF = 0.05


@dataclass(frozen=True)
class BootstrapSettings:
    """The resampling settings the ladder and the audits pass through as one value: the seed, the number of
    item resamples, α (1 − confidence, two-sided) and the share cutoff (a share is suppressed when the
    bootstrap lower bound of R1 − R4 is below it)."""

    seed: int = DEFAULT_SEED
    n_boot: int = DEFAULT_N_BOOT
    alpha: float = DEFAULT_ALPHA
    share_cutoff: float = DEFAULT_SHARE_CUTOFF

    def __post_init__(self) -> None:
        if int(self.n_boot) <= 0:
            raise InputError(f"n_boot must be positive, got {self.n_boot}", field="n_boot")
        if not 0 < float(self.alpha) < 1:
            raise InputError(f"alpha must be in (0, 1), got {self.alpha}", field="alpha")
        if not 0 <= float(self.share_cutoff) < 1:
            raise InputError(f"share_cutoff must be in [0, 1), got {self.share_cutoff}", field="share_cutoff")

    def to_dict(self) -> dict:
        return {"seed": self.seed, "n_boot": self.n_boot, "alpha": self.alpha, "share_cutoff": self.share_cutoff}


@dataclass(frozen=True)
class Bound:
    """An exact Clopper–Pearson bound for k successes in n trials; ``sided`` names which it is."""

    k: int
    n: int
    confidence: float
    sided: str  # one of SIDES
    lower: float
    upper: float

    @property
    def rate(self) -> float:
        return self.k / self.n

    def to_dict(self) -> dict:
        return {"k": self.k, "n": self.n, "rate": self.rate, "confidence": self.confidence, "sided": self.sided,
                "lower": self.lower, "upper": self.upper, "method": "clopper-pearson"}

    def describe(self) -> str:
        pct = f"{100 * self.confidence:g}%"
        if self.sided == "one-sided-lower":
            return f"{self.k}/{self.n} = {self.rate:.4f}; exact one-sided {pct} lower bound {self.lower:.5f}"
        if self.sided == "one-sided-upper":
            return f"{self.k}/{self.n} = {self.rate:.4f}; exact one-sided {pct} upper bound {self.upper:.5f}"
        return f"{self.k}/{self.n} = {self.rate:.4f}; exact two-sided {pct} interval [{self.lower:.5f}, {self.upper:.5f}]"


SIDES = ("one-sided-lower", "one-sided-upper", "two-sided")


def clopper_pearson(k: int, n: int, *, confidence: float = 1 - DEFAULT_ALPHA, sided: str) -> Bound:
    """The exact (Clopper–Pearson) binomial bound. ``sided="two-sided"`` puts α/2 = (1 − confidence)/2 in
    each tail: [B(α/2; k, n − k + 1), B(1 − α/2; k + 1, n − k)]; ``"one-sided-lower"`` / ``"one-sided-upper"``
    put α in one tail (the other end is 1 or 0). B is the Beta quantile (scipy.special.betaincinv; 0 at k = 0,
    1 at k = n). 210/210 one-sided lower at 95 %: 0.05^(1/210).

    Parameters
    ----------
    k : int
        Successes, 0..n.
    n : int
        Trials, at least 1.
    confidence : float, default 0.95
        Coverage 1 − α, in (0, 1).
    sided : str
        ``"two-sided"``, ``"one-sided-lower"`` or ``"one-sided-upper"`` (:data:`SIDES`).

    Returns
    -------
    Bound
        ``lower`` and ``upper`` as rates (fractions in [0, 1]), with ``k``, ``n``, ``confidence`` and ``sided``.

    Raises
    ------
    InputError
        ``n`` or ``k`` is not an integer in range, ``confidence`` is outside (0, 1) or ``sided`` is unknown
        (the field names the argument).
    """
    if int(n) != n or n < 1:
        raise InputError(f"n must be a positive integer, got {n}", field="n")
    if int(k) != k or not 0 <= k <= n:
        raise InputError(f"k must be an integer in 0..n={n}, got {k}", field="k")
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence}", field="confidence")
    if sided not in SIDES:
        raise InputError(f"sided must be one of {', '.join(SIDES)}, got {sided!r}", field="sided")
    k, n = int(k), int(n)
    tail = (1.0 - confidence) / (2 if sided == "two-sided" else 1)
    lo = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, tail))
    hi = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1.0 - tail))
    if sided == "one-sided-lower":
        hi = 1.0
    elif sided == "one-sided-upper":
        lo = 0.0
    return Bound(k, n, float(confidence), sided, lo, hi)


def clopper_pearson_lower(k: int, n: int, confidence: float = 0.95) -> Bound:
    """One-sided exact lower bound: P(rate ≥ lower) ≥ confidence.

    Parameters
    ----------
    k : int
        Successes, 0..n.
    n : int
        Trials, at least 1.
    confidence : float, default 0.95
        Coverage 1 − α, in (0, 1).

    Returns
    -------
    Bound
        ``sided="one-sided-lower"``: ``lower`` a rate in [0, 1], ``upper`` = 1.

    Raises
    ------
    InputError
        As :func:`clopper_pearson`.
    """
    return clopper_pearson(k, n, confidence=confidence, sided="one-sided-lower")


def clopper_pearson_interval(k: int, n: int, confidence: float = 0.95) -> Bound:
    """Two-sided exact interval with coverage ≥ confidence.

    Parameters
    ----------
    k : int
        Successes, 0..n.
    n : int
        Trials, at least 1.
    confidence : float, default 0.95
        Coverage 1 − α, in (0, 1); α/2 in each tail.

    Returns
    -------
    Bound
        ``sided="two-sided"``: ``lower`` and ``upper`` rates in [0, 1].

    Raises
    ------
    InputError
        As :func:`clopper_pearson`.
    """
    return clopper_pearson(k, n, confidence=confidence, sided="two-sided")


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test between paired correctness vectors a (lower rung) and b (higher rung):
    ``b_only`` = items only b gets right, ``a_only`` = items only a gets right."""

    a_only: int
    b_only: int
    both: int
    neither: int
    p_value: float


def mcnemar_exact(a: np.ndarray, b: np.ndarray) -> McNemar:
    """Exact two-sided McNemar test of paired correctness: twice the binomial tail Bin(m, ½) at the smaller
    discordant count (m discordant pairs), capped at 1; p = 1 when no pair is discordant.

    Parameters
    ----------
    a : array_like of bool, shape (n,)
        Per-item correctness of the lower rung.
    b : array_like of bool, shape (n,)
        Per-item correctness of the higher rung, same items in the same order.

    Returns
    -------
    McNemar
        The four counts (``a_only``, ``b_only``, ``both``, ``neither``) and ``p_value``.

    Raises
    ------
    InputError
        ``a`` and ``b`` are not 1-D of equal length (field ``b``).
    """
    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    if a.shape != b.shape or a.ndim != 1:
        raise InputError(f"paired vectors must be 1-D of equal length, got {a.shape} and {b.shape}", field="b")
    a_only = int((a & ~b).sum())
    b_only = int((~a & b).sum())
    m = a_only + b_only
    p = 1.0 if m == 0 else min(1.0, 2.0 * float(bdtr(min(a_only, b_only), m, 0.5)))
    return McNemar(a_only, b_only, int((a & b).sum()), int((~a & ~b).sum()), p)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (monotone, capped at 1), in the input order.

    Parameters
    ----------
    p_values : sequence of float
        Raw p-values, each in [0, 1].

    Returns
    -------
    list of float
        Adjusted p-values, same length and order as ``p_values``.

    Raises
    ------
    InputError
        A p-value is outside [0, 1] or not finite (field ``p_values``).
    """
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    if m == 0:
        return []
    if np.any((p < 0) | (p > 1) | ~np.isfinite(p)):
        raise InputError("p-values must lie in [0, 1]", field="p_values")
    order = np.argsort(p, kind="stable")
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adj[i] = running
    return adj.tolist()


@dataclass(frozen=True)
class SignTest:
    n_positive: int
    n_negative: int
    n_zero: int
    p_value: float  # exact two-sided binomial test on the non-zero signs


def sign_test(values: Sequence[float | Fraction], *, mu: float = 0.0) -> SignTest:
    """Exact two-sided sign test of ``values`` against ``mu``: twice the binomial tail Bin(n, ½) at the
    smaller sign count over the n non-zero differences, capped at 1; p = 1 when every difference is zero.

    Parameters
    ----------
    values : sequence of float or Fraction
        Paired differences (or any values), in their unit.
    mu : float, default 0.0
        The hypothesised median, same unit.

    Returns
    -------
    SignTest
        Counts of ``values - mu`` above, below and equal to zero, and ``p_value``.
    """
    d = [float(v) - mu for v in values]
    pos = sum(x > 0 for x in d)
    neg = sum(x < 0 for x in d)
    zero = len(d) - pos - neg
    n = pos + neg
    p = 1.0 if n == 0 else min(1.0, 2.0 * float(bdtr(min(pos, n - pos), n, 0.5)))  # exact: Bin(n, ½) is symmetric
    return SignTest(pos, neg, zero, p)


def bootstrap_indices(n_items: int, *, n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED) -> np.ndarray:
    """(n_boot, n_items) item indices drawn with replacement; the same seed gives the same draws.

    Parameters
    ----------
    n_items : int
        Number of items resampled, at least 1.
    n_boot : int, default DEFAULT_N_BOOT
        Number of resamples, at least 1.
    seed : int, default DEFAULT_SEED
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray of int64, shape (n_boot, n_items)
        Row r: the item indices (0..n_items − 1) of resample r.

    Raises
    ------
    InputError
        ``n_items`` or ``n_boot`` is not positive (field ``n_boot``); a ``LimitError`` when n_boot × n_items
        exceeds ``max_bootstrap_draws``.
    """
    if n_items <= 0 or n_boot <= 0:
        raise InputError(f"need n_items > 0 and n_boot > 0, got {n_items}, {n_boot}", field="n_boot")
    active_limits().check_bootstrap(n_boot, n_items, field="n_boot")  # before the (n_boot, n_items) matrix
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_items, size=(n_boot, n_items), dtype=np.int64)


def percentile_interval(samples: np.ndarray, *, alpha: float = DEFAULT_ALPHA) -> tuple[float, float]:
    """Percentile interval of bootstrap samples (``numpy.quantile``, linear interpolation) at α/2 and
    1 − α/2; non-finite samples are left out.

    Parameters
    ----------
    samples : array_like of float
        Bootstrap samples of one statistic, any shape (flattened), in its unit.
    alpha : float, default 0.05
        1 − the interval's coverage, in (0, 1).

    Returns
    -------
    tuple of (float, float)
        (lo, hi) in the samples' unit; (NaN, NaN) when no sample is finite.
    """
    s = np.asarray(samples, dtype=float)
    s = s[np.isfinite(s)]
    if s.size == 0:
        return (float("nan"), float("nan"))
    lo, hi = np.quantile(s, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


@dataclass(frozen=True)
class Interval:
    point: float
    lo: float
    hi: float

    def to_dict(self, name: str) -> dict:
        return {name: self.point, f"{name}_lo": self.lo, f"{name}_hi": self.hi}


@dataclass(frozen=True)
class ShareBootstrap:
    """Bootstrap of one model's decomposition against one ceiling."""

    gap: Interval  # R3 − R4
    residual: Interval  # R1 − R3
    denominator: Interval  # R1 − R4
    share: Interval | None  # None when suppressed
    suppressed: bool
    reason: str
    degenerate: int  # resamples with R1 − R4 <= 0
    n_boot: int
    share_samples: np.ndarray  # NaN where degenerate (kept for the median-across-models bootstrap)


def share_point(r4: int, r3: int, n: int, r1: Fraction) -> Fraction | None:
    """(R3 − R4)/(R1 − R4) from integer counts and an exact R1; None when R1 − R4 <= 0.

    Parameters
    ----------
    r4 : int
        Items correct at rung R4, of ``n``.
    r3 : int
        Items correct at rung R3, of ``n``.
    n : int
        Number of items, at least 1.
    r1 : Fraction
        The exact rate R1 (a fraction in [0, 1]).

    Returns
    -------
    Fraction or None
        The share (dimensionless, exact), or None when R1 − R4 <= 0.
    """
    den = r1 - Fraction(r4, n)
    if den <= 0:
        return None
    return Fraction(r3 - r4, n) / den


def paired_share_bootstrap(
    r4: np.ndarray,
    r3: np.ndarray,
    r1: np.ndarray | Fraction,
    idx: np.ndarray,
    *,
    alpha: float = DEFAULT_ALPHA,
    share_cutoff: float = DEFAULT_SHARE_CUTOFF,
) -> ShareBootstrap:
    """Paired item bootstrap of gap, residual, R1 − R4 and the share. ``r4``/``r3`` are per-item
    correctness over the same items; ``r1`` is a per-item vector (a certificate) or an exact number (held
    fixed: a number carries no item-level variation). ``idx`` comes from :func:`bootstrap_indices`.

    Parameters
    ----------
    r4 : array_like of bool, shape (n,)
        Per-item correctness at rung R4.
    r3 : array_like of bool, shape (n,)
        Per-item correctness at rung R3, same items.
    r1 : numpy.ndarray of bool, shape (n,), or Fraction
        Per-item R1 outcomes (resampled with the others) or the exact rate R1 (held fixed).
    idx : numpy.ndarray of int, shape (n_boot, n)
        Resampled item indices (:func:`bootstrap_indices`).
    alpha : float, default 0.05
        1 − the coverage of every percentile interval.
    share_cutoff : float, default 0.05
        The share is suppressed when the interval's lower end of R1 − R4 is below it (a rate difference).

    Returns
    -------
    ShareBootstrap
        Point values and intervals of gap, residual and R1 − R4 (rate differences) and of the share (None when
        suppressed, with the reason), the count of degenerate resamples and the share samples (NaN where
        degenerate).

    Raises
    ------
    InputError
        ``r4``, ``r3``, ``r1`` and ``idx`` do not cover the same items (field ``idx`` or ``r1``).
    """
    r4 = np.asarray(r4, dtype=bool)
    r3 = np.asarray(r3, dtype=bool)
    n = r4.size
    if r3.shape != r4.shape or idx.ndim != 2 or idx.shape[1] != n:
        raise InputError("r4, r3 and the bootstrap indices must cover the same items", field="idx")
    a4 = r4[idx].mean(axis=1)
    a3 = r3[idx].mean(axis=1)
    if isinstance(r1, np.ndarray):
        r1v = np.asarray(r1, dtype=bool)
        if r1v.shape != r4.shape:
            raise InputError("the per-item R1 vector must cover the same items", field="r1")
        a1 = r1v[idx].mean(axis=1)
        p1 = Fraction(int(r1v.sum()), n)
    else:
        p1 = Fraction(r1)
        a1 = np.full(idx.shape[0], float(p1))
    c4, c3 = int(r4.sum()), int(r3.sum())
    gap_s, res_s, den_s = a3 - a4, a1 - a3, a1 - a4
    gap = Interval(float(Fraction(c3 - c4, n)), *percentile_interval(gap_s, alpha=alpha))
    res = Interval(float(p1 - Fraction(c3, n)), *percentile_interval(res_s, alpha=alpha))
    den = Interval(float(p1 - Fraction(c4, n)), *percentile_interval(den_s, alpha=alpha))
    degenerate = int((den_s <= 0).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        share_s = np.where(den_s > 0, gap_s / np.where(den_s > 0, den_s, 1.0), np.nan)
    point = share_point(c4, c3, n, p1)
    if den.lo < share_cutoff or point is None:
        reason = (
            f"suppressed: bootstrap lower bound of R1 − R4 = {den.lo:.4f} < cutoff {share_cutoff}"
            if point is not None
            else f"suppressed: R1 − R4 = {float(den.point):.4f} <= 0"
        )
        return ShareBootstrap(gap, res, den, None, True, reason, degenerate, idx.shape[0], share_s)
    share = Interval(float(point), *percentile_interval(share_s, alpha=alpha))
    return ShareBootstrap(gap, res, den, share, False, "", degenerate, idx.shape[0], share_s)


def bootstrap_median(samples: Mapping[str, np.ndarray], points: Mapping[str, float], *,
                     alpha: float = DEFAULT_ALPHA) -> tuple[Interval, int]:
    """Median across models with a percentile interval from paired resamples (one row per model, one
    column per resample, the same item draws for every model). Resamples where any model's share is
    undefined are left out and counted.

    Parameters
    ----------
    samples : mapping of str to numpy.ndarray of float, each shape (n_boot,)
        Per model, the share of every resample (NaN where undefined), all from the same item draws.
    points : mapping of str to float
        Per model, the point share; must hold every key of ``samples``.
    alpha : float, default 0.05
        1 − the interval's coverage.

    Returns
    -------
    tuple of (Interval, int)
        The median of ``points`` with the percentile interval of the per-resample medians, and the number of
        resamples left out.

    Raises
    ------
    InputError
        ``samples`` is empty (field ``samples``).
    """
    names = sorted(samples)
    if not names:
        raise InputError("no models to take a median over", field="samples")
    mat = np.vstack([np.asarray(samples[m], dtype=float) for m in names])
    ok = np.all(np.isfinite(mat), axis=0)
    med = np.median(mat[:, ok], axis=0) if ok.any() else np.array([])
    point = float(np.median([float(points[m]) for m in names]))
    lo, hi = percentile_interval(med, alpha=alpha)
    return Interval(point, lo, hi), int((~ok).sum())


def percentile_rank(n: int, percent: float) -> int:
    """The rank k (1-based) of the ``percent``-th percentile among ``n`` sorted values: k = ⌈percent·n/100⌉
    (at least 1), computed exactly (``Fraction``: 5 % of 60 is the 3rd smallest, where 0.05·60 in floats, and
    numpy's ``inverted_cdf``, give the 4th).

    Parameters
    ----------
    n : int
        Number of values (≥ 1).
    percent : float
        The percentile, in (0, 100].

    Returns
    -------
    int
        k in 1..n.
    """
    if n < 1 or not 0 < percent <= 100:
        raise ValueError(f"need n >= 1 and 0 < percent <= 100, got n={n}, percent={percent}")
    return max(1, math.ceil(Fraction(percent) * n / 100))


def empirical_percentile(values: Sequence[float] | np.ndarray, percent: float) -> float:
    """The ``percent``-th percentile of ``values`` as the empirical distribution defines it: the smallest value
    with at least ``percent`` % of the values at or below it (the inverse of the empirical distribution function,
    Hyndman & Fan's definition 1): always one of the values, the ⌈percent·n/100⌉-th smallest, never an
    interpolation between two items. viewcert's one percentile of margins (certify's and design's 5th).

    Parameters
    ----------
    values : sequence of float
        The values (any unit; NaN not allowed), at least one.
    percent : float
        The percentile, in (0, 100].

    Returns
    -------
    float
        The ``percentile_rank(len(values), percent)``-th smallest value.
    """
    v = np.sort(np.asarray(values, dtype=np.float64))
    return float(v[percentile_rank(len(v), percent) - 1])
