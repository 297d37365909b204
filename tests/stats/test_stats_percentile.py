"""The one percentile of margins (issue 57 item 1): ``stats.empirical_percentile`` is the inverse of the empirical
distribution function (Hyndman & Fan's definition 1), the same in certify and design. On the main of session 52
certify interpolated (numpy's linear rule) where design took the ⌈0.05·n⌉-th smallest."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viewcert.stats import empirical_percentile, percentile_rank


@pytest.mark.parametrize(("n", "k"), [(1, 1), (3, 1), (20, 1), (21, 2), (60, 3), (61, 4), (210, 11), (1820, 91)])
def test_the_rank_worked_by_hand(n, k):
    # 5 % of n items: the smallest rank k with k/n ≥ 0.05 (60 items: the 3rd, exactly 5 %, where 0.05·60 in floats
    # is 3.0000000000000004 and a float ceiling gives the 4th)
    assert percentile_rank(n, 5) == k


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 10, allow_nan=False), min_size=1, max_size=300), st.sampled_from([1, 5, 50, 95, 100]))
def test_it_is_the_smallest_value_with_that_share_at_or_below_it(values, percent):
    # twin from the definition: the smallest value x with #{v ≤ x}/n ≥ percent/100, in exact arithmetic
    n = len(values)
    want = min(x for x in values if Fraction(sum(v <= x for v in values), n) >= Fraction(percent, 100))
    assert empirical_percentile(values, percent) == want
    assert empirical_percentile(np.array(values), percent) in values  # always one of the values


def test_certify_and_design_use_it():
    from viewcert.certify import run
    from viewcert.design import designer

    assert run.empirical_percentile is empirical_percentile
    assert designer.percentile_rank is percentile_rank and designer.empirical_percentile is empirical_percentile
