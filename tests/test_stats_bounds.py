"""Exact Clopper–Pearson bounds: closed forms and scipy's exact binomial interval."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from viewcert.certify.bounds import clopper_pearson, clopper_pearson_interval, clopper_pearson_lower
from viewcert.errors import InputError


def test_all_correct_one_sided_is_alpha_to_the_one_over_n():
    b = clopper_pearson_lower(210, 210, 0.95)
    assert b.lower == pytest.approx(0.05 ** (1 / 210), abs=1e-12)
    assert round(b.lower, 5) == 0.98584 and b.sided == "one-sided-lower"
    assert "one-sided 95% lower bound 0.98584" in b.describe()


def test_zero_correct_lower_is_zero_and_upper_closed_form():
    assert clopper_pearson_lower(0, 50).lower == 0.0
    two = clopper_pearson_interval(0, 50, 0.95)
    assert two.lower == 0.0 and two.upper == pytest.approx(1 - 0.025 ** (1 / 50), abs=1e-12)


@pytest.mark.parametrize(("k", "n"), [(200, 210), (198, 210), (1, 7), (13, 20), (5, 5)])
def test_two_sided_matches_scipy_exact(k, n):
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    b = clopper_pearson_interval(k, n, 0.95)
    assert b.lower == pytest.approx(ci.low, abs=1e-12) and b.upper == pytest.approx(ci.high, abs=1e-12)
    assert b.sided == "two-sided" and "two-sided" in b.describe()


def test_one_sided_equals_two_sided_at_double_alpha():
    one = clopper_pearson_lower(200, 210, 0.95)
    two = clopper_pearson_interval(200, 210, 0.90)
    assert one.lower == pytest.approx(two.lower, abs=1e-12)


def test_dispatch_and_errors():
    assert clopper_pearson(3, 4, sided="two-sided").sided == "two-sided"
    assert clopper_pearson(3, 4).sided == "one-sided-lower"
    for bad in [dict(k=5, n=4), dict(k=-1, n=4), dict(k=1, n=0)]:
        with pytest.raises(InputError):
            clopper_pearson(**bad)
    with pytest.raises(InputError, match="confidence"):
        clopper_pearson(1, 2, confidence=1.0)
    with pytest.raises(InputError, match="sided"):
        clopper_pearson(1, 2, sided="left")
