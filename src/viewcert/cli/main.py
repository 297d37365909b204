"""The ``viewcert`` command: thin subcommands, no science here.

Errors: every command registered on ``app`` (here or by a group's ``register(app)``) runs inside one handler
(``GuardedTyper``): an exception becomes ``viewcert: error: <one line>`` on stderr and exit code 2 (item
failures inside a run exit 1, decided by the command); ``viewcert --debug CMD`` re-raises with the traceback.
Resource limits (``viewcert.limits``) are options of the root command: ``viewcert --max-atoms 10000 certify``.
"""

from __future__ import annotations

import sys

import typer
import typer.core

from viewcert.cli.options import EXIT_INPUT, SESSION, echo, guarded, one_line


class GuardedTyper(typer.Typer):
    """A Typer whose every command runs inside ``guarded``."""

    def command(self, *args, **kwargs):
        register = super().command(*args, **kwargs)

        def deco(fn):
            register(guarded(fn))
            return fn

        return deco


class RootGroup(typer.core.TyperGroup):
    """The root command: its options (the limits, ``--debug``) are accepted after the command too
    (``viewcert certify X --max-atoms 5000`` is ``viewcert --max-atoms 5000 certify X``)."""

    def parse_args(self, ctx, args):
        return super().parse_args(ctx, hoist_root_options(list(args), self.params, set(self.commands)))

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Click's usage errors (a bad option value, an unknown option or command) in the one error style:
        ``viewcert: error: <one line>`` on stderr, exit 2 (the help of a bare command is shown as it is)."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        from typer._click.exceptions import ClickException, NoArgsIsHelpError

        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except NoArgsIsHelpError as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except ClickException as exc:
            message = usage_hint(exc, sys.argv[1:] if args is None else list(args), self) or exc.format_message()
            echo(f"viewcert: error: {message}{_from_settings(exc)}", err=True, one_line=True)
            sys.exit(EXIT_INPUT)
        except typer.Abort:
            echo("viewcert: aborted", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def _from_settings(exc) -> str:
    """" (from the settings file F)" when the bad value of ``exc`` came from ``--settings F``."""
    from typer._click.core import ParameterSource

    ctx, param = getattr(exc, "ctx", None), getattr(exc, "param", None)
    if ctx is None or param is None or ctx.get_parameter_source(param.name) != ParameterSource.DEFAULT_MAP:
        return ""
    return f" (from the settings file {ctx.find_root().params.get('settings')}, key {param.name.replace('_', '-')})"


def usage_hint(exc, args: list[str], group) -> str:
    """Click's message with the fix for two usage slips, or "" when neither applies: a command's option given
    before the command (``viewcert --margin certify X``: options go after the command), and a value given to a
    switch (``certify X --margin 0.05``: ``--margin`` is a switch, it takes no value)."""
    from typer._click.exceptions import NoSuchOption

    commands = [a for a in args if a in group.commands]
    if isinstance(exc, NoSuchOption):
        name = exc.option_name
        for word in commands:
            if any(name in (*p.opts, *p.secondary_opts) for p in group.commands[word].params):
                return (f"No such option before the command: {name} is an option of `{word}`; options go after "
                        f"the command (viewcert {word} ... {name})")
        return ""
    ctx = getattr(exc, "ctx", None)
    if ctx is None or "unexpected extra argument" not in exc.format_message():
        return ""
    switches = {o for p in ctx.command.params if getattr(p, "is_flag", False) for o in (*p.opts, *p.secondary_opts)}
    for before, value in zip(args, args[1:], strict=False):
        if before in switches and not value.startswith("-") and f"({value}" in exc.format_message():
            return (f"{exc.format_message()}; {before} is a switch (on or off) and takes no value: give {before} "
                    f"alone, not {before} {value}")
    return ""


def hoist_root_options(args: list[str], params, commands: set[str]) -> list[str]:
    """``args`` with the root options given after the command moved before it (up to a ``--``)."""
    flags = {o for p in params if getattr(p, "is_flag", False) for o in p.opts}
    valued = {o for p in params if not getattr(p, "is_flag", False) for o in p.opts}
    at = 0
    while at < len(args) and args[at] not in commands:  # the command: the first word not a root option's value
        at += 2 if args[at] in valued else 1
    if at >= len(args):
        return args
    moved, rest, i = [], [], at + 1
    while i < len(args):
        a, name = args[i], args[i].split("=", 1)[0]
        if a == "--":
            rest += args[i:]
            break
        if a in flags or (name in valued and "=" in a):
            moved.append(a)
        elif a in valued and i + 1 < len(args):
            moved += args[i:i + 2]
            i += 1
        else:
            rest.append(a)
        i += 1
    return args[:at] + moved + args[at:at + 1] + rest


app = GuardedTyper(cls=RootGroup, add_completion=False, no_args_is_help=True,
                   help="viewcert: what do these images determine?")


def _main(o) -> None:
    """viewcert command line. Limits are checked before the work; each has an option to raise it."""
    from typer._click.globals import get_current_context

    from viewcert.api.vocabulary import LIMITS
    from viewcert.errors import ViewcertError
    from viewcert.limits import DEFAULT_LIMITS, using_limits

    try:
        limits = DEFAULT_LIMITS.with_overrides(**{name: getattr(o, name) for name in LIMITS})
    except ViewcertError as exc:
        raise typer.BadParameter(str(exc)) from None
    ctx = get_current_context()
    ctx.with_resource(using_limits(limits))  # in force for the command (the settings file read under them too)
    if o.settings is not None:  # the file's values become the commands' defaults (the command line still wins)
        from viewcert.cli.settings import load_settings

        try:
            ctx.default_map = load_settings(o.settings, ctx.command)
        except ViewcertError as exc:
            echo(f"viewcert: error: {one_line(exc)}", err=True)
            raise typer.Exit(EXIT_INPUT) from None
    SESSION.set({"debug": o.debug})


@app.command()
def version() -> None:
    """Print the viewcert version."""
    from viewcert import __version__

    echo(__version__)


def observe(o) -> None:
    """Project structures through a protocol and write per-view observations (JSON) under OUT/observations."""
    from viewcert.api.main import observe as observe_job
    from viewcert.cli.options import check_out, parse_tiling, show

    parse_tiling(o.tiling)  # a bad value: a usage error
    show(observe_job(o.source, check_out(o.out), protocol=o.protocol, tiling=o.tiling, force=o.force))


def run(o) -> None:
    """The main job on built-in data (what ``make run`` calls): observations of the built-in sample, the
    certified render ceiling of the built-in prototypes under render-ceiling-5 (δ = τ = 0.01 Å), and a
    gallery contact sheet, and the certificate's explorer (out/explore/index.html)."""
    from viewcert.api.main import main_job
    from viewcert.cli.options import progress, show

    show(main_job(o.out, workers=o.workers, force=o.force, progress=progress))


def _mount_subcommands() -> None:
    """Each area keeps its commands in its own module; they register themselves here."""
    from viewcert.cli import attribution, certify, design, explore, learn, render, settings, warmup
    from viewcert.cli.vocabulary import command, mount

    app.callback()(command(_main, ""))
    mount(app, {"observe": observe, "run": run})
    for group in (certify, render, attribution, design, explore, warmup, learn, settings):
        group.register(app)


_mount_subcommands()
