"""Floats at a stated resolution (issue 37, ``viewcert.resolution``): the rule checked against a twin written
from its definition (decimal arithmetic), by hand on the cases that matter, and as properties."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from viewcert.resolution import (
    AS_GIVEN,
    DEFAULT_RESOLUTION,
    RESOLUTIONS,
    SNAP_DIGITS,
    decimals_of,
    quantize,
    quantize_array,
    quantize_tree,
    resolution_of,
    resolution_record,
)


def _round(x: float, decimals: int) -> float:
    return float(Decimal(x).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_EVEN))


def _twin(x: float, decimals: int) -> float:
    """The definition: the exact binary value of ``x`` rounded half to even at ``decimals + SNAP_DIGITS``
    decimals, as the nearest double, that double's exact value rounded at ``decimals``; never -0.0."""
    v = _round(_round(x, decimals + SNAP_DIGITS), decimals)
    return 0.0 if v == 0 else v


def test_hand_worked_cases():
    assert quantize(9.93013661e-16, 9) == 0.0 == quantize(1.08779196e-15, 9)  # the two CPUs
    assert quantize(-2.220446049250313e-16, 12) == 0.0 and math.copysign(1, quantize(-1e-20, 6)) == 1.0
    assert quantize(2.53378987, 6) == 2.53379 and quantize(0.0156853012, 6) == 0.015685
    assert quantize(1 / 3, 9) == 0.333333333
    assert quantize(math.inf, 6) == math.inf


def test_a_tie_rounds_the_same_whatever_side_the_noise_put_it_on():
    """2.5 × 0.1234567 = 0.30864175 exactly: a tie at 7 decimals. Two CPUs' values a few ulps either side of it
    round apart when rounded once, and the same after the snap."""
    tie = 0.30864175
    above, below = tie + 3e-17, tie - 3e-17
    assert above != below and round(above, 7) != round(below, 7)  # single rounding: the noise decides
    assert quantize(above, 7) == quantize(below, 7) == quantize(tie, 7)
    a = quantize_array([[above, 1e-17], [2.0, -below]], 7)
    b = quantize_array([[below, -1e-17], [2.0, -above]], 7)
    assert a.tobytes() == b.tobytes() and a.dtype.str == "<f8" and a[0, 1] == 0.0 and math.copysign(1, a[0, 1]) == 1


def test_every_listed_resolution_is_a_power_of_ten_with_a_unit():
    for key, (res, unit, what) in RESOLUTIONS.items():
        assert 10.0 ** -decimals_of(res) == res and unit and what, key
    with pytest.raises(ValueError, match="power of ten"):
        decimals_of(2e-6)


def test_the_nearest_listed_key_decides_and_settings_are_as_given():
    tree = {"items": [{"oracle": {"max_position_error": 1.2345678912345e-7, "margin": 1.23456789,
                                  "min_same_label_distance": 2.000000449}},
                      {"phantoms": [[14, 0.1234567891, -2e-17, 3.0000004]]}],
            "protocol": {"views": [{"rotation": [[0.5000000000004, 6.123233995736766e-17, 1.0]]}]},
            "config": {"eps": 1 / 255, "delta": 0.01}, "R1": 2 / 3}
    got = quantize_tree(tree)
    o = got["items"][0]["oracle"]
    assert o == {"max_position_error": 1.23e-7, "margin": 1.234568, "min_same_label_distance": 2.0}
    assert got["items"][1]["phantoms"] == [[14, 0.123457, 0.0, 3.0]]
    assert got["protocol"]["views"][0]["rotation"] == [[0.5, 0.0, 1.0]]
    assert got["config"] == {"eps": 1 / 255, "delta": 0.01}  # a setting is what a recomputation reads back
    assert got["R1"] == 0.666666667
    assert resolution_of(("items", "oracle", "margin")) == 1e-6
    assert resolution_of(("summary", "bound", "lower")) == DEFAULT_RESOLUTION
    assert resolution_of(("config", "delta")) is None and "config" in AS_GIVEN


def test_the_record_states_every_resolution_without_being_rounded_itself():
    rec = resolution_record()
    assert rec["default"] == "1e-09" and rec["fields"]["phantoms"] == {"resolution": "1e-06", "unit": "angstrom"}
    assert set(rec["fields"]) == set(RESOLUTIONS) and rec["as_given"] == sorted(AS_GIVEN)
    assert quantize_tree(rec) == rec


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(finite, st.sampled_from([6, 9, 12]))
def test_quantize_equals_the_decimal_twin(x, decimals):
    assert quantize(x, decimals) == _twin(x, decimals)


@given(st.integers(min_value=-10**9, max_value=10**9), st.floats(min_value=-0.49, max_value=0.49),
       st.sampled_from([6, 9]))
def test_noise_well_below_the_step_is_written_away(k, frac, decimals):
    """A value k steps from zero, moved by noise far smaller than the step (here up to 1e-4 of a step, far
    above a double's rounding noise), writes as the same k steps: what two CPUs computing k·step write."""
    step = 10.0 ** -decimals
    x = k * step
    noisy = x + frac * 1e-4 * step
    assert quantize(noisy, decimals) == quantize(x, decimals) == _twin(x, decimals)


@given(st.recursive(finite | st.integers() | st.booleans() | st.none() | st.text(max_size=3),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(
                        st.sampled_from(["phantoms", "margin", "rotation", "x", "config", "items"]), c, max_size=3),
                    max_leaves=20))
def test_quantizing_twice_changes_nothing_and_keeps_every_non_float(tree):
    once = quantize_tree(tree)
    assert quantize_tree(once) == once

    def kinds(t):
        if isinstance(t, dict):
            return {k: kinds(v) for k, v in t.items()}
        if isinstance(t, list | tuple):
            return [kinds(v) for v in t]
        return type(t).__name__ if isinstance(t, float) else t

    assert kinds(once) == kinds(tree)
