"""The one exact Clopper–Pearson bound (viewcert.stats): closed forms and scipy's exact binomial interval."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from viewcert.errors import InputError
from viewcert.stats import clopper_pearson, clopper_pearson_interval, clopper_pearson_lower


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
    assert clopper_pearson(3, 4, sided="one-sided-lower").sided == "one-sided-lower"
    with pytest.raises(TypeError):  # the side is never implied
        clopper_pearson(3, 4)  # type: ignore[call-arg]
    for bad in [dict(k=5, n=4), dict(k=-1, n=4), dict(k=1, n=0)]:
        with pytest.raises(InputError):
            clopper_pearson(**bad, sided="two-sided")
    with pytest.raises(InputError, match="confidence"):
        clopper_pearson(1, 2, confidence=1.0, sided="two-sided")
    with pytest.raises(InputError, match="sided"):
        clopper_pearson(1, 2, sided="left")


def test_closed_forms_all_sides():
    # all successes: one-sided lower bound alpha^(1/n); 220/220 at 95 % -> 0.98648
    b = clopper_pearson(220, 220, confidence=0.95, sided="one-sided-lower")
    assert b.lower == pytest.approx(0.05 ** (1 / 220), abs=1e-12) and round(b.lower, 5) == 0.98648 and b.upper == 1.0
    # two-sided all successes: (alpha/2)^(1/n)
    b = clopper_pearson_interval(210, 210)
    assert b.lower == pytest.approx(0.025 ** (1 / 210)) and b.upper == 1.0
    # one-sided upper with no successes: 1 - alpha^(1/n)
    b = clopper_pearson(0, 50, confidence=0.95, sided="one-sided-upper")
    assert b.lower == 0.0 and b.upper == pytest.approx(1 - 0.05 ** (1 / 50))
