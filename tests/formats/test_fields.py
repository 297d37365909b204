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
    with pytest.raises(InputError, match=r"items\[3\]\.pair must be an object, got 5"):
        typed_section(_Pair, 5, "items[3].pair")


# ---------------------------------------------------------------------- every section's declared kinds (KINDS)
#: what each kind a section may declare accepts, stated here (not read from ``fields.KIND_NAMES``), and how the
#: one error line says it
ACCEPTS = {"count": lambda v: type(v) is int, "number": lambda v: type(v) in (int, float),
           "text": lambda v: type(v) is str, "object": lambda v: type(v) is dict,
           "list": lambda v: type(v) is list, "null": lambda v: v is None}
SAID = {"count": "a count", "number": "a number", "text": "text", "object": "an object", "list": "a list"}
#: values planted in a field: each is wrong for some kind (a boolean is neither a count nor a number)
PLANTED = [True, 1.5, 3, "x", [1], {"a": 1}, None]
SHOWN = {"[1]": "list", "{'a': 1}": "dict"}  # how the error shows a planted value (a container by its type)


def _every_section() -> list[type]:
    """Every ``Section`` subclass viewcert defines (recursively), after the modules that define them are loaded."""
    from viewcert.formats import item_sections, records, settings_sections, summary_sections  # noqa: F401

    out, todo = [], list(Section.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.__module__.startswith("viewcert."):
            out.append(cls)
    return sorted(out, key=lambda c: c.__qualname__)


def _declared() -> list[tuple[type, str, object]]:
    return [(cls, name, kind) for cls in _every_section() for name, kind in cls.KINDS.items()]


def test_every_section_is_found_and_declares_only_its_fields():
    from dataclasses import fields as dataclass_fields

    from viewcert.formats import item_sections, settings_sections, summary_sections

    found = set(_every_section())
    public = {getattr(m, n) for m in (item_sections, settings_sections, summary_sections) for n in m.__all__}
    assert {c for c in public if isinstance(c, type) and issubclass(c, Section)} <= found
    assert len(found) >= 33  # 8 item, 12 summary, 13 settings sections (and the summaries' private bases)
    for cls in found:
        names = {f.name for f in dataclass_fields(cls)} - {"extra"}
        assert set(cls.KINDS) <= names, (cls.__name__, set(cls.KINDS) - names)
        for kind in cls.KINDS.values():
            assert (isinstance(kind, type) and issubclass(kind, Section)) or set(kind.split(" or ")) <= set(ACCEPTS)


@pytest.mark.parametrize(("cls", "name", "kind"), _declared(),
                         ids=[f"{c.__name__}.{n}" for c, n, _ in _declared()])
def test_a_wrong_kind_planted_in_a_declared_field_is_one_line_naming_it(cls, name, kind):
    """Each declared field refuses every planted value none of its kinds accepts, read (``from_dict``, named
    where it was read) or made by a producer (named under ``SOURCE``), in the one shape ``<path> must be <kind>,
    got <value>``; every value a kind accepts passes and round-trips."""
    if isinstance(kind, type):  # a nested section: an object (or null)
        kinds, said = ["object", "null"], "an object"
    else:
        kinds = kind.split(" or ")
        said = " or ".join(SAID[k] for k in kinds if k != "null") + (" (or null)" if "null" in kinds else "")
    planted = 0
    for value in PLANTED:
        if any(ACCEPTS[k](value) for k in kinds):
            assert cls.from_dict({name: value}).to_dict() == {name: value}
            continue
        planted += 1
        shown = SHOWN.get(repr(value), repr(value))
        for read, where in ((True, f"read[7].here.{name}"), (False, f"{cls.SOURCE}.{name}")):
            with pytest.raises(InputError) as exc:
                cls.from_dict({name: value}, "read[7].here") if read else cls(**{name: value})
            assert (exc.value.field, exc.value.message) == (where, f"{where} must be {said}, got {shown}")
            assert "\n" not in str(exc.value)
    assert planted >= 3
