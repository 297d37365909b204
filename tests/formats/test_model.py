"""The one base of every record (``formats.model.Record``): a key not written stays unset and is left out, null
is written back, unknown keys are kept, the JSON kinds are strict (a value is never coerced: an integer number
stays an integer), and a value that does not fit is one InputError line naming the field's full path. The
expectations are written by hand from the JSON each case plants."""

from __future__ import annotations

import pickle

import pytest
from pydantic import Field

from viewcert.errors import InputError
from viewcert.formats.model import ABSENT, Bool, Count, List, MaybeNumber, Number, Object, Record, Text


class _Inner(Record):
    SOURCE = "x.inner"
    n: Count | None = Field(None, description="a count")
    r: Number | None = Field(None, description="a number")
    d: MaybeNumber = Field(None, description="a number, never null")


class _Outer(Record):
    SOURCE = "x"
    name: Text = Field(description="text")
    flag: Bool | None = Field(None, description="true or false")
    inner: _Inner | None = Field(None, description="a nested record")
    rows: tuple[_Inner, ...] = Field((), description="records")
    by: dict[str, _Inner] | None = Field(None, description="records by key")
    obj: Object | None = Field(None, description="an object")
    lst: List | None = Field(None, description="a list")


def test_round_trip_unset_null_and_unknown_keys():
    d = {"name": "a", "flag": None, "inner": {"n": 3, "r": 1, "zz": [1]}, "rows": [{}, {"r": 2.5}],
         "by": {"k": {"n": None}}, "new": {"kept": True}}
    o = _Outer.from_dict(d)
    assert o.to_dict() == {**d, "rows": (o.rows[0].to_dict(), {"r": 2.5})} and o.rows[0].to_dict() == {}
    assert o.flag is None and o.written("flag") and o.obj is None and not o.written("obj")
    assert o.inner.r == 1 and type(o.inner.r) is int  # not coerced to 1.0: the same bytes back
    assert o.extra == {"new": {"kept": True}} and o.inner.extra == {"zz": [1]}
    assert not o.rows[0] and o.rows[1] and _Inner(n=None)  # an empty object is falsy, as the dict was
    assert _Inner(n=ABSENT, r=2).to_dict() == {"r": 2}  # a producer's ABSENT: not written
    assert pickle.loads(pickle.dumps(o)) == o and pickle.loads(pickle.dumps(ABSENT)) is ABSENT


def test_a_record_is_frozen():
    o = _Outer.from_dict({"name": "a"})
    with pytest.raises(ValueError):
        o.name = "b"


@pytest.mark.parametrize(("d", "where", "said"), [
    ({"name": "a", "inner": {"n": 1.5}}, "here.inner.n", "must be a count, got 1.5"),
    ({"name": "a", "inner": {"n": True}}, "here.inner.n", "must be a count, got True"),
    ({"name": "a", "inner": {"n": "3"}}, "here.inner.n", "must be a count, got '3'"),
    ({"name": "a", "inner": {"r": False}}, "here.inner.r", "must be a number, got False"),
    ({"name": "a", "inner": {"d": None}}, "here.inner.d", "must be a number, got None"),
    ({"name": "a", "rows": [{}, {}, {"r": "x"}]}, "here.rows[2].r", "must be a number, got 'x'"),
    ({"name": "a", "by": {"k 1": {"n": [1]}}}, "here.by.k 1.n", "must be a count, got list"),
    ({"name": "a", "inner": 5}, "here.inner", "must be an object, got 5"),
    ({"name": "a", "obj": [1]}, "here.obj", "must be an object, got list"),
    ({"name": "a", "lst": "ab"}, "here.lst", "must be a list, got 'ab'"),
    ({"name": "a", "flag": 1}, "here.flag", "must be true or false, got 1"),
    ({"name": 7}, "here.name", "must be text, got 7"),
])
def test_a_value_that_does_not_fit_is_one_line_naming_its_path(d, where, said):
    with pytest.raises(InputError) as exc:
        _Outer.from_dict(d, "here")
    assert (exc.value.field, exc.value.message) == (where, f"{where} {said}")
    assert "\n" not in str(exc.value)


def test_a_missing_required_key_and_a_non_object_are_named():
    with pytest.raises(InputError) as exc:
        _Outer.from_dict({}, "items[3]")
    assert (exc.value.field, exc.value.message) == ("items[3].name", "items[3].name is missing")
    with pytest.raises(InputError) as exc:
        _Outer.from_dict([1])  # named under its SOURCE when read on its own
    assert exc.value.message == "x must be an object, got list"
