"""The one base of every record viewcert writes and reads back: :class:`Record`, a frozen pydantic v2 model.

- **Declared once.** A field is its annotation (one of the JSON kinds below, a nested record, or a list/dict
  of them) and its ``Field(description=...)``: what it is, with its unit and frame. ``docs/formats.md`` is
  generated from these (``formats.doc``).
- **Not written = unset.** A key the JSON object does not have is pydantic's *unset* (it reads as None and is
  left out by :meth:`Record.to_dict`, ``model_dump(exclude_unset=True)``); ``null`` is written back as ``null``.
  A producer may pass :data:`ABSENT` for a key it does not write (dropped before validation).
- **Unknown keys kept** (``extra="allow"``): ``from_dict(d).to_dict() == d``.
- **Strict kinds.** :data:`Count`, :data:`Number`, :data:`Text`, :data:`Bool`, :data:`Object`, :data:`List`
  accept only their JSON kind (a boolean is neither a count nor a number; ``"3"`` is not a count) and keep the
  value as received (an integer number stays an integer: the same bytes back).
- **One error line.** A received object that does not fit is one :class:`InputError` naming the field's full
  path: ``items[2].oracle.n_phantoms must be a count, got 1.5``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, PlainValidator, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from viewcert.errors import InputError

__all__ = ["ABSENT", "Bool", "Count", "List", "MaybeList", "MaybeNumber", "MaybeObject", "MaybeText", "NonEmptyList", "Number", "Object", "PositiveCount", "Record", "Text",
           "TextOrObject", "input_error", "kind"]


class _Absent:
    """The marker a producer passes for a key it does not write (dropped: the field stays unset)."""

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


def _shown(value: Any) -> str:
    """``value`` in an error: a scalar by its repr (text cut at 40 characters), anything else by its type."""
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:40] + "...")
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    return type(value).__name__


def kind(want: str, test: Callable[[Any], bool], convert: Callable[[Any], Any] | None = None) -> PlainValidator:
    """A validator accepting what ``test`` accepts (``convert`` applied), refusing anything else as ``must be
    <want>``: the value is kept as it is (no coercion)."""

    def check(value: Any) -> Any:
        if not test(value):
            raise PydanticCustomError("viewcert_kind", "must be {want}", {"want": want})
        return convert(value) if convert else value

    return PlainValidator(check)


def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _as_json_object(v: Any) -> Any:
    return v.to_dict() if isinstance(v, Record) else v


#: a count: an integer (not a boolean)
Count = Annotated[int, kind("a count", _is_count)]
#: a number: an integer or a float (not a boolean), kept as it is
Number = Annotated[int | float, kind("a number", _is_number)]
Text = Annotated[str, kind("text", lambda v: isinstance(v, str))]
Bool = Annotated[bool, kind("true or false", lambda v: isinstance(v, bool))]
#: a JSON object kept as it is (a record handed by a producer written as its object)
Object = Annotated[dict[str, Any], kind("an object", lambda v: isinstance(v, Mapping | Record), _as_json_object)]
#: a JSON list (a producer's tuple written as a list)
List = Annotated[list[Any], kind("a list", lambda v: isinstance(v, list | tuple), list)]
#: a key written only when it applies and never null: it reads None when not written, an explicit null is refused
MaybeText = Annotated[str | None, kind("text", lambda v: isinstance(v, str))]
MaybeNumber = Annotated[int | float | None, kind("a number", _is_number)]
MaybeObject = Annotated[dict[str, Any] | None, kind("an object", lambda v: isinstance(v, Mapping | Record),
                                                    _as_json_object)]
MaybeList = Annotated[list[Any] | None, kind("a list", lambda v: isinstance(v, list | tuple), list)]
#: a count of at least one (a task item's consistent answers: the truth is one)
PositiveCount = Annotated[int, kind("a count ≥ 1", lambda v: _is_count(v) and v >= 1)]
#: a JSON list with at least one entry
NonEmptyList = Annotated[list[Any], kind("a list that is not empty", lambda v: isinstance(v, list | tuple) and len(v) > 0,
                                         list)]
TextOrObject = Annotated[str | dict[str, Any], kind("text or an object",
                                                    lambda v: isinstance(v, str | Mapping | Record), _as_json_object)]

#: what a pydantic error type says a value must be
_WANT = {"model_type": "an object", "model_attributes_type": "an object", "dict_type": "an object",
         "list_type": "a list", "tuple_type": "a list", "string_type": "text", "int_type": "a count",
         "bool_type": "true or false", "float_type": "a number"}


def _path(root: str, loc: tuple[Any, ...]) -> str:
    out = root
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part[:1].isupper() or part in ("str", "none") or part.startswith("function-"):
            continue  # a union member's tag (``str | TaskProtocol``), not a key
        else:
            out = f"{out}.{part}" if out else part
    return out


def input_error(exc: ValidationError, root: str, source: str | None = None) -> InputError:
    """The first error of ``exc`` as one :class:`InputError` line naming the field's path under ``root``."""
    errors = exc.errors(include_url=False)
    err = max(errors, key=lambda e: len(e["loc"]))  # a union's deepest member names the field
    where = _path(root, tuple(err["loc"]))
    if err["type"] == "missing":
        return InputError(f"{where} is missing", source=source, field=where)
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, InputError):
        return InputError(cause.message, source=source, field=cause.field or where)
    want = (err.get("ctx") or {}).get("want") or _WANT.get(err["type"])
    if want is None:
        return InputError(f"{where}: {err['msg'][:200]}", source=source, field=where)
    return InputError(f"{where} must be {want}, got {_shown(err.get('input'))}", source=source, field=where)


class Record(BaseModel):
    """A JSON object viewcert writes, typed (module docstring). ``SOURCE`` names it in an error when it is read
    where it usually sits (``items[].oracle``); a reader that knows better passes its place to :meth:`from_dict`."""

    model_config = ConfigDict(frozen=True, extra="allow", validate_default=False, populate_by_name=True,
                              protected_namespaces=())

    SOURCE: ClassVar[str] = ""

    @model_validator(mode="before")
    @classmethod
    def _drop_absent(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and any(v is ABSENT for v in data.values()):
            return {k: v for k, v in data.items() if v is not ABSENT}
        return data

    @classmethod
    def from_dict(cls, d: Any, source: str | None = None) -> Self:
        """The record of the JSON object ``d``; one :class:`InputError` naming ``source`` (default ``SOURCE``)
        and the field otherwise.

        Parameters
        ----------
        d : object
            The JSON object as received (or a record of this class, returned as it is).
        source : str or None
            Where the object sits, for an error (``items[3].oracle``).

        Returns
        -------
        Record
            The typed value: ``from_dict(d).to_dict() == d``.
        """
        if isinstance(d, cls):
            return d
        where = cls.SOURCE if source is None else source
        if not isinstance(d, Mapping):
            raise InputError(f"{where} must be an object, got {_shown(d)}", field=where or None)
        try:
            return cls.model_validate(d)
        except ValidationError as exc:
            raise input_error(exc, where) from None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: the fields written (unset ones left out), then the unknown keys.

        Returns
        -------
        dict
            ``from_dict(d).to_dict() == d``.
        """
        return self.model_dump(exclude_unset=True)

    def written(self, name: str) -> bool:
        """Whether the object has the key ``name`` (a field set, null included, or an unknown key)."""
        return name in self.model_fields_set or name in (self.model_extra or {})

    def __bool__(self) -> bool:
        """False for an empty object, as the dict it replaces (``if it.oracle:``)."""
        return bool(self.model_fields_set) or bool(self.model_extra)

    @property
    def extra(self) -> dict[str, Any]:
        """The keys the record does not name, as written (a typed extra as its JSON object)."""
        return {k: v.to_dict() if isinstance(v, Record) else v for k, v in (self.model_extra or {}).items()}
