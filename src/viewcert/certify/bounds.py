"""Exact (Clopper–Pearson) binomial confidence bounds, via scipy.stats.beta.

One-sided lower bound at confidence 1 − α: the α quantile of Beta(k, n − k + 1) (0 when k = 0); for k = n
it is α^(1/n). Two-sided interval: [Beta(α/2; k, n − k + 1), Beta(1 − α/2; k + 1, n − k)] with 0 and 1 at
the ends. Every result says which it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from scipy.stats import beta

from viewcert.errors import InputError


@dataclass(frozen=True)
class Bound:
    k: int
    n: int
    confidence: float
    sided: str  # "one-sided-lower" | "two-sided"
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
        return f"{self.k}/{self.n} = {self.rate:.4f}; exact two-sided {pct} interval [{self.lower:.5f}, {self.upper:.5f}]"


def _check(k: int, n: int, confidence: float) -> None:
    if int(n) != n or n < 1:
        raise InputError(f"n must be a positive integer, got {n}", field="n")
    if int(k) != k or not 0 <= k <= n:
        raise InputError(f"k must be an integer in 0..n={n}, got {k}", field="k")
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence}", field="confidence")


def clopper_pearson_lower(k: int, n: int, confidence: float = 0.95) -> Bound:
    """One-sided exact lower bound: P(rate ≥ lower) ≥ confidence."""
    _check(k, n, confidence)
    alpha = 1.0 - confidence
    lo = 0.0 if k == 0 else float(beta.ppf(alpha, k, n - k + 1))
    return Bound(int(k), int(n), float(confidence), "one-sided-lower", lo, 1.0)


def clopper_pearson_interval(k: int, n: int, confidence: float = 0.95) -> Bound:
    """Two-sided exact interval with coverage ≥ confidence."""
    _check(k, n, confidence)
    alpha = 1.0 - confidence
    lo = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return Bound(int(k), int(n), float(confidence), "two-sided", lo, hi)


def clopper_pearson(k: int, n: int, *, confidence: float = 0.95, sided: str = "one-sided-lower") -> Bound:
    if sided in ("one-sided-lower", "one-sided", "lower"):
        return clopper_pearson_lower(k, n, confidence)
    if sided in ("two-sided", "two"):
        return clopper_pearson_interval(k, n, confidence)
    raise InputError(f"sided must be 'one-sided-lower' or 'two-sided', got {sided!r}", field="sided")
