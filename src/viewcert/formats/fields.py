"""The machinery every typed record and section shares: :data:`ABSENT` (a key the JSON object did not have),
the split of a JSON object into a record's fields and its unknown keys (``extra``), the one serialiser, and
:class:`Section`, the base of a JSON object inside a record typed one level further (an item's oracle report, a
summary's bound, a certificate's tolerances, ...).

The round trip is exact: ``from_dict(d).to_dict() == d`` for every object the pipeline writes (a field not
written stays :data:`ABSENT` and is left out; ``None`` is written as ``null``; unknown keys come back from
``extra``). Key order does not matter: every certificate is written with its keys sorted.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import fields
from typing import Any, ClassVar

from viewcert.errors import InputError

__all__ = ["ABSENT", "Section", "record_fields", "record_to_dict", "type_sections", "typed_section"]


class _Absent:
    """The marker of a field the record does not have (left out of ``to_dict``)."""

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


@functools.cache
def field_names(cls) -> tuple[str, ...]:
    """The record fields of ``cls`` (``extra`` aside), computed once per class."""
    return tuple(f.name for f in fields(cls) if f.name != "extra")


@functools.cache
def _name_set(cls) -> frozenset[str]:
    return frozenset(field_names(cls))


def record_fields(cls, d: Mapping, source: str) -> dict:
    """The keyword arguments of ``cls`` from the JSON object ``d`` (unknown keys in ``extra``); InputError naming
    ``source`` when ``d`` is not an object."""
    if not isinstance(d, Mapping):
        raise InputError(f"{source} must be an object, got {type(d).__name__}", field=source)
    names = _name_set(cls)
    kw: dict = {}
    extra: dict = {}
    for k, v in d.items():
        (kw if k in names else extra)[k] = v
    kw["extra"] = extra
    return kw


def record_to_dict(rec) -> dict:
    """The JSON object of the record ``rec``: its fields that are not :data:`ABSENT` (a typed section written as
    its own object), then its ``extra`` keys."""
    out = {}
    for k in field_names(type(rec)):
        v = getattr(rec, k)
        if v is not ABSENT:
            out[k] = v.to_dict() if isinstance(v, Section) else v
    out.update(rec.extra)
    return out


class Section:
    """A JSON object inside a record, typed: each subclass is a frozen dataclass whose fields are the object's
    known keys (each defaulting to :data:`ABSENT`) and a last field ``extra`` (``Mapping``, default ``{}``) for
    keys it does not know. ``SOURCE`` names the object in an error (``items[].oracle``)."""

    SOURCE: ClassVar[str] = "section"

    @classmethod
    def from_dict(cls, d: Mapping, source: str | None = None):
        """The typed section of the JSON object ``d``; InputError naming ``source`` when it is not an object or
        has a key of the wrong kind for a field."""
        where = source or cls.SOURCE
        try:
            return cls(**record_fields(cls, d, where))
        except TypeError as exc:
            raise InputError(f"{where}: {str(exc)[:200]}", field=where) from None

    def to_dict(self) -> dict:
        """The JSON object: ``from_dict(d).to_dict() == d``."""
        return record_to_dict(self)

    def __bool__(self) -> bool:
        """False for an empty object, as the dict it replaces (``if it.oracle:`` keeps its meaning)."""
        return bool(self.extra) or any(getattr(self, k) is not ABSENT for k in field_names(type(self)))


def typed_section(cls: type[Section], value: Any, source: str | None = None) -> Any:
    """``value`` as a ``cls`` section: :data:`ABSENT`, ``None`` and a ``cls`` as they are, a JSON object typed.
    What a record's ``__post_init__`` calls on each of its section fields, so a producer may hand it either."""
    if value is ABSENT or value is None or isinstance(value, cls):
        return value
    return cls.from_dict(value, source)


def type_sections(record: Any, sections: Mapping[str, type[Section]], prefix: str | None = None) -> None:
    """Type each field ``name`` of the frozen ``record`` as its section ``sections[name]`` (:func:`typed_section`;
    called once, from the record's ``__post_init__``). An error names ``prefix.name`` (the bare ``name`` when
    ``prefix`` is empty), or the section's own ``SOURCE`` when ``prefix`` is None."""
    for name, cls in sections.items():
        where = cls.SOURCE if prefix is None else f"{prefix}.{name}" if prefix else name
        object.__setattr__(record, name, typed_section(cls, getattr(record, name), where))
