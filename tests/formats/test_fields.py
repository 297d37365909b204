from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import pytest

from viewcert.errors import InputError
from viewcert.formats.fields import ABSENT, Section, typed_section


@dataclass(frozen=True)
class _Pair(Section):
    SOURCE: ClassVar[str] = "x.pair"
    a: int = ABSENT
    b: object = ABSENT
    extra: Mapping = field(default_factory=dict)

def test_round_trip_absent_null_and_unknown_keys():
    d = {"a": 1, "b": None, "zz": [1, 2]}
    s = _Pair.from_dict(d)
    assert (s.a, s.b, dict(s.extra)) == (1, None, {"zz": [1, 2]})
    assert s.to_dict() == d and _Pair.from_dict({}).to_dict() == {}

def test_truth_is_the_dicts():
    assert not _Pair.from_dict({}) and _Pair.from_dict({"b": None}) and _Pair.from_dict({"q": 0})

def test_typed_section_and_errors():
    assert typed_section(_Pair, ABSENT) is ABSENT and typed_section(_Pair, None) is None
    s = _Pair(a=2)
    assert typed_section(_Pair, s) is s and typed_section(_Pair, {"a": 2}) == s
    with pytest.raises(InputError, match=r"items\[3\]\.pair must be an object, got int"):
        typed_section(_Pair, 5, "items[3].pair")
