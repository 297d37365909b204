"""The arguments of every ``viewcert.api`` function checked as the command line checks its options: each argument
named as an option of the function's command (``api.vocabulary``) against that option's type and bounds, the
others (a configuration object, limits, a progress callback) against their own type, and an unknown keyword
refused naming it. A wrong value is one ``InputError`` naming the argument (the command prints it as one line,
exit 2), raised before any work: a notebook gets the checks a shell gets.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from viewcert.api.vocabulary import COMMANDS
from viewcert.errors import InputError, did_you_mean
from viewcert.limits import Limits

#: a check of an argument that is not a command option: a type (or tuple of types), or a predicate with its words
Check = type | tuple[Any, ...] | tuple[Callable[[Any], bool], str]

P = ParamSpec("P")
R = TypeVar("R")

_WORDS = {int: "an integer", float: "a number", str: "text", bool: "True or False"}


def _is_path(v: Any) -> bool:
    return isinstance(v, str | os.PathLike)


def type_ok(value: Any, kind: Any) -> tuple[bool, str]:
    """(whether ``value`` is of the option type ``kind``, the type in words). ``int``: not a bool; ``float``: an
    int or float, not a bool; ``Path``: text or a path; ``list[T]``: a list or tuple of T; ``str`` on an
    input (``Arg``) also takes a path."""
    origin = typing.get_origin(kind)
    if origin is list:
        (inner,) = typing.get_args(kind)
        ok = isinstance(value, list | tuple) and all(type_ok(v, inner)[0] for v in value)
        return ok, f"a list of {type_ok(None, inner)[1]}"
    if kind is bool:
        return isinstance(value, bool), _WORDS[bool]
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool), _WORDS[int]
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool), _WORDS[float]
    if kind is str:
        return isinstance(value, str), _WORDS[str]
    if kind is Path:
        return _is_path(value), "a path (text or pathlib.Path)"
    return True, str(kind)


def _refuse(name: str, words: str, value: Any) -> InputError:
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return InputError(f"must be {words}, got {type(value).__name__} {shown}", field=name)


def check_option(name: str, value: Any, spec: Any, *, field: str | None = None, path_input: bool = False) -> None:
    """``value`` against the option ``spec`` (``vocabulary.Opt``/``Arg``): None where the default is None, else
    its type (a path too for a text input when ``path_input``) and bounds; InputError naming ``field``."""
    field = field or name
    if value is None and spec.default is None:
        return
    ok, words = type_ok(value, spec.type)
    if not ok and path_input and spec.type is str and _is_path(value):
        ok = True
    if not ok:
        raise _refuse(field, words + (" or None" if spec.default is None else ""), value)
    lo, hi = getattr(spec, "min", None), getattr(spec, "max", None)
    if isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(value, float) and not math.isfinite(value) and (lo is not None or hi is not None):
            raise InputError(f"must be a finite number, got {value!r}", field=field)
        if lo is not None and value < lo or hi is not None and value > hi:
            rng = f"≥ {lo:g}" if hi is None else f"≤ {hi:g}" if lo is None else f"in {lo:g}..{hi:g}"
            raise InputError(f"must be {rng}, got {value!r}", field=field)


def check_value(name: str, value: Any, check: Check) -> None:
    """``value`` against a check that is not a command option (``Check``); InputError naming ``name``."""
    if isinstance(check, tuple) and len(check) == 2 and callable(check[0]) and isinstance(check[1], str) \
            and not isinstance(check[0], type):
        if not check[0](value):
            raise _refuse(name, check[1], value)
        return
    types = check if isinstance(check, tuple) else (check,)
    if not isinstance(value, types):
        words = " or ".join("None" if t is type(None) else getattr(t, "__name__", str(t)) for t in types)
        raise _refuse(name, f"a {words}", value)


def checked_types(values: dict[str, tuple[Any, Any]]) -> None:
    """Each ``{name: (value, option type)}`` of the type; InputError naming the first that is not."""
    for name, (value, kind) in values.items():
        ok, words = type_ok(value, kind)
        if not ok and value is not None:
            raise _refuse(name, words, value)


def validated(command: str | None, *, aliases: dict[str, str] | None = None, inputs: tuple[str, ...] = (),
              **checks: Check) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a ``viewcert.api`` function: before it runs, every argument it is given is checked, one named as
    an option of ``command`` (``api.vocabulary.COMMANDS``; ``aliases`` maps an argument to its option's name,
    ``inputs`` the positional INPUT arguments, which take text or a path) against that option, one in
    ``checks`` against its check, and the keywords a ``**settings`` parameter collects must each be an option
    of the command. A bad one is an InputError naming it (the function's docstring, signature and module are
    kept)."""
    aliases = aliases or {}

    def deco(fn: Callable[P, R]) -> Callable[P, R]:
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            specs = COMMANDS[command].specs() if command is not None else {}
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                known = list(sig.parameters)
                bad = str(exc).rpartition("'")[0].rpartition("'")[2] if "'" in str(exc) else ""
                raise InputError(f"{exc}{did_you_mean(bad, known) if bad else ''}", field=bad or fn.__name__) from None
            for name, value in bound.arguments.items():
                kind = sig.parameters[name].kind
                if kind is inspect.Parameter.VAR_KEYWORD:
                    for key, v in value.items():
                        opt = aliases.get(key, key)
                        if key in checks:
                            check_value(key, v, checks[key])
                        elif opt in specs:
                            check_option(opt, v, specs[opt], field=key)
                        else:
                            known = sorted(k for k in (*specs, *checks) if k not in sig.parameters)
                            raise InputError(f"unknown setting {key!r}{did_you_mean(key, known)}", field=key)
                    continue
                opt = aliases.get(name, name)
                if name in checks:
                    check_value(name, value, checks[name])
                elif opt in specs:
                    check_option(opt, value, specs[opt], field=name, path_input=name in inputs)
            return fn(*args, **kwargs)

        return run

    return deco


#: common checks of arguments that are not command options
OPTIONAL_CALLABLE: Check = (lambda v: v is None or callable(v), "a function (or None)")
PATH: Check = (_is_path, "a path (text or pathlib.Path)")
OPTIONAL_PATH: Check = (lambda v: v is None or _is_path(v), "a path (text or pathlib.Path) or None")


#: the check of a ``limits=`` argument: a ``viewcert.limits.Limits`` or None
LIMITS: Check = (Limits, type(None))
#: cell repetitions: text (``2,2,2``, ``2x2x2``) or three integers
TILING: Check = (lambda v: isinstance(v, str) or isinstance(v, tuple | list) and len(v) == 3 and all(
    isinstance(t, int) and not isinstance(t, bool) for t in v), "text like 2,2,2 or three integers")
#: a list of names (constraints)
TEXTS: Check = (lambda v: isinstance(v, tuple | list) and all(isinstance(t, str) for t in v), "a list of text")
#: a list of paths (result files)
PATHS: Check = (lambda v: isinstance(v, tuple | list) and all(_is_path(t) for t in v), "a list of paths")
