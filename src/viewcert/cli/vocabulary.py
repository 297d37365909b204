"""Typer commands built from the one vocabulary (``viewcert.api.vocabulary``): a command is a plain function of
one namespace of values (``o.protocol``, ``o.out``) that parses what the library does not, calls one
``viewcert.api`` function and prints the report it returns; ``mount`` gives it its options from the table, so an
option name has one type and one default in every command by construction."""

from __future__ import annotations

import functools
import inspect
from types import SimpleNamespace

import typer

from viewcert.api.vocabulary import COMMANDS, Arg
from viewcert.cli.options import guarded, preflight


def command(fn, name: str):
    """``fn(namespace)`` as a Typer command function taking the parameters of ``COMMANDS[name]``, its
    settings-file options hidden from ``--help`` (still accepted on the command line and from ``--settings``)."""
    spec = COMMANDS[name]
    rare = set(spec.rare.split())

    def info(n: str, s):
        if isinstance(s, Arg):
            return typer.Argument(s.default, help=s.help, metavar=s.metavar)
        bounds = {k: v for k, v in (("min", s.min), ("max", s.max)) if v is not None}
        return typer.Option(s.default, *s.flags, help=s.help, hidden=n in rare, **bounds)

    @functools.wraps(fn)
    def run(**values):
        preflight(values)  # names checked before any work
        return fn(SimpleNamespace(**values))

    specs = spec.specs()
    run.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=info(n, s),
                                                             annotation=s.type) for n, s in specs.items()])
    run.__annotations__ = {n: s.type for n, s in specs.items()}
    del run.__wrapped__  # Typer reads the signature built here, not fn's
    return run


def mount(app: typer.Typer, commands: dict) -> None:
    """Add each ``{name: fn}`` to ``app`` as the command ``name`` (built by ``command``, inside ``guarded``)."""
    for name, fn in commands.items():
        app.command(name)(guarded(command(fn, name)))
