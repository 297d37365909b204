"""``io.atomic.json_dumps``'s walk over plain JSON trees (``_plain``, issue 59: a certificate's items are walked
without building each node's JSON path) gives the general walk's value bit for bit, and the general walk's
error, path included, wherever that one refuses (reference: ``_normalise``, the walk json_dumps ran before)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viewcert.errors import InputError
from viewcert.io.atomic import _normalise, json_dumps

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**20, 10**20), st.text(max_size=5),
    st.floats(allow_nan=True, allow_infinity=True), st.just(-0.0), st.just(0.0),
    st.builds(np.float64, st.floats(-1e3, 1e3)), st.builds(np.int32, st.integers(-100, 100)),
    st.builds(np.bool_, st.booleans()),
)
keys = st.one_of(st.text(max_size=4), st.integers(-3, 3), st.floats(-2, 2), st.booleans())
trees = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner),
    st.dictionaries(keys, inner, max_size=4),
    st.builds(lambda xs: np.asarray(xs, dtype=np.float64), st.lists(st.floats(-5, 5), max_size=3))),
    max_leaves=20)


def _reference(tree, allow_nan: bool) -> str:
    """What json_dumps wrote before the plain walk: the general walk, then the same json.dumps and escaping."""
    from viewcert.sanitize import json_text

    data = _normalise(tree, allow_nan)
    return json_text(json.dumps(data, sort_keys=True, indent=1, separators=(",", ": "), allow_nan=allow_nan,
                                ensure_ascii=False) + "\n")


def _outcome(fn):
    try:
        return "ok", fn()
    except InputError as exc:
        return "error", (str(exc), exc.field)
    except TypeError as exc:  # json.dumps on keys of mixed types (sort_keys): the same either way
        return "type", str(exc)


@settings(max_examples=300, deadline=None)
@given(trees, st.booleans())
def test_same_text_or_same_error_as_the_general_walk(tree, allow_nan):
    assert _outcome(lambda: json_dumps(tree, allow_nan=allow_nan)) == _outcome(lambda: _reference(tree, allow_nan))


def test_errors_name_the_path_of_the_offending_value():
    # hand-worked: the general walk names $.a[1].b for a NaN there, and a tuple key at $.k
    with pytest.raises(InputError) as exc:
        json_dumps({"a": [1, {"b": math.nan}]})
    assert exc.value.field == "$.a[1].b"
    with pytest.raises(InputError) as exc:
        json_dumps({"k": {(1, 2): 3}})
    assert exc.value.field == "$.k"
    assert json_dumps({"z": -0.0, "n": np.float32(0.5), 2: [True, None]}, indent=None) == \
        '{"2":[true,null],"n":0.5,"z":0.0}\n'
