"""The machinery every typed record and section shares: :data:`ABSENT` (a key the JSON object did not have),
the split of a JSON object into a record's fields and its unknown keys (``extra``), the one serialiser, and
:class:`Section`, the base of a JSON object inside a record typed one level further (an item's oracle report, a
summary's bound, a certificate's tolerances, ...).

What a section's values must be is declared once, on the class (:attr:`Section.KINDS`: field -> its kind, e.g.
``"count or null"``, or the section class of a nested object), and checked in one place
(``Section.__post_init__``): a value of the wrong kind is one :class:`InputError` line naming the field's full path
(``items[2].oracle.n_phantoms must be a count (or null), got 1.5``).

The round trip is exact: ``from_dict(d).to_dict() == d`` for every object the pipeline writes (a field not
written stays :data:`ABSENT` and is left out; ``None`` is written as ``null``; unknown keys come back from
``extra``). Key order does not matter: every certificate is written with its keys sorted.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any, ClassVar

from viewcert.errors import InputError

__all__ = ["ABSENT", "KIND_NAMES", "Section", "check_kind", "record_fields", "record_to_dict", "rerooted",
           "type_sections", "typed_section"]


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


def _shown(value: Any) -> str:
    """``value`` in an error: a scalar by its repr (text cut at 40 characters), anything else by its type."""
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:40] + "...")
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    return type(value).__name__


def _wrong(where: str, want: str, value: Any) -> InputError:
    """The one shape of a wrong-kind error: ``<path> must be <want>, got <value>``, naming the path."""
    return InputError(f"{where} must be {want}, got {_shown(value)}", field=where)


#: the kinds a section may declare of a field (:attr:`Section.KINDS`), joined with `` or ``: what each accepts and
#: how an error says it. A boolean is neither a count nor a number; a typed section is an object.
KIND_NAMES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "count": ("a count", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "number": ("a number", lambda v: isinstance(v, int | float) and not isinstance(v, bool)),
    "text": ("text", lambda v: isinstance(v, str)),
    "object": ("an object", lambda v: isinstance(v, Mapping | Section)),
    "list": ("a list", lambda v: isinstance(v, list)),
    "null": ("null", lambda v: v is None),
}


@functools.cache
def _kind(kind: str) -> tuple[str, tuple[Callable[[Any], bool], ...]]:
    """(how an error says ``kind``, its tests): ``"count or null"`` -> ("a count (or null)", ...)."""
    names = kind.split(" or ")
    unknown = [n for n in names if n not in KIND_NAMES]
    if unknown:
        raise ValueError(f"unknown kind {unknown[0]!r} (known: {', '.join(KIND_NAMES)})")
    said = " or ".join(KIND_NAMES[n][0] for n in names if n != "null") or "null"
    if "null" in names and said != "null":
        said += " (or null)"
    return said, tuple(KIND_NAMES[n][1] for n in names)


def check_kind(value: Any, kind: str, where: str) -> None:
    """Refuse ``value`` unless it is of ``kind`` (:data:`ABSENT`, a key not written, always passes).

    Parameters
    ----------
    value : object
        A field's value as received or handed by a producer.
    kind : str
        Names of :data:`KIND_NAMES` joined with `` or `` (``"count or null"``, ``"text or object or null"``).
    where : str
        The field's full path, for the error (``summary.phantom_census.items_unique``).

    Raises
    ------
    InputError
        One line, ``<where> must be <kind>, got <value>``, naming ``where``.
    """
    if value is ABSENT:
        return
    said, tests = _kind(kind)
    if not any(test(value) for test in tests):
        raise _wrong(where, said, value)


def rerooted(exc: InputError, old: str, new: str) -> InputError:
    """``exc`` with the path ``old`` at the head of its field (and of its message) named ``new`` instead: a
    section names its fields under its ``SOURCE``; where it was read (``summary.axis y``, ``items[3]``) is known
    only to its reader.

    Parameters
    ----------
    exc : InputError
        The error raised while the section (or record) was made.
    old : str
        The path it names (a section's ``SOURCE``, ``items[]``).
    new : str
        The path where the object was read.

    Returns
    -------
    InputError
        A new error naming ``new`` (its ``source`` kept); ``exc`` itself when its field is not under ``old``.
    """
    fld = exc.field or ""
    if old == new or not (fld == old or fld.startswith((old + ".", old + "["))):
        return exc
    named = new + fld[len(old):]
    message = named + exc.message[len(fld):] if exc.message.startswith(fld) else exc.message
    return InputError(message, source=exc.source, field=named)


def record_fields(cls, d: Mapping, source: str) -> dict:
    """The keyword arguments of ``cls`` from the JSON object ``d`` (unknown keys in ``extra``); InputError naming
    ``source`` when ``d`` is not an object."""
    if not isinstance(d, Mapping):
        raise _wrong(source, "an object", d)
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
    keys it does not know. ``SOURCE`` names the object in an error (``items[].oracle``).

    ``KINDS`` declares what code relies on, field -> kind: names of :data:`KIND_NAMES` joined with `` or ``
    (``"count or null"``), or a ``Section`` subclass (a nested object, typed as that section; null kept). They are
    checked, and the nested sections typed, once, when the section is made (``__post_init__``: a subclass that
    needs more calls it first); an error names the field under ``SOURCE`` and :meth:`from_dict` names it under
    where the object was read."""

    SOURCE: ClassVar[str] = "section"
    KINDS: ClassVar[Mapping[str, str | type[Section]]] = {}

    def __post_init__(self) -> None:
        for name, kind in self.KINDS.items():
            where = f"{self.SOURCE}.{name}"
            if isinstance(kind, str):
                check_kind(getattr(self, name), kind, where)
            else:
                object.__setattr__(self, name, typed_section(kind, getattr(self, name), where))

    @classmethod
    def from_dict(cls, d: Mapping, source: str | None = None):
        """The typed section of the JSON object ``d``; InputError naming ``source`` (default ``SOURCE``) when it
        is not an object, or ``source.<field>`` when a field is not of its kind (``KINDS``)."""
        where = source or cls.SOURCE
        kw = record_fields(cls, d, where)
        try:
            return cls(**kw)
        except InputError as exc:
            raise rerooted(exc, cls.SOURCE, where) from None
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
