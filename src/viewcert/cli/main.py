"""The ``viewcert`` command: thin subcommands, no science here.

Errors: every command registered on ``app`` (here or by a group's ``register(app)``) runs inside one handler
(``GuardedTyper``): an exception becomes ``viewcert: error: <one line>`` on stderr and exit code 2 (item
failures inside a run exit 1, decided by the command); ``viewcert --debug CMD`` re-raises with the traceback.
Resource limits (``viewcert.limits``) are options of the root command: ``viewcert --max-atoms 10000 certify``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer
import typer.core

from viewcert import defaults
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
            echo(f"viewcert: error: {exc.format_message()}{_from_settings(exc)}", err=True, one_line=True)
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


@app.callback()
def _main(
    ctx: typer.Context,
    settings: Path = typer.Option(None, "--settings", help="TOML file of the rarely changed options, a table "
                                  "per command (viewcert settings show [COMMAND] prints them)"),
    debug: bool = typer.Option(False, "--debug", help="show Python tracebacks instead of one-line errors"),
    max_atoms: int = typer.Option(None, help="limit: atoms per structure (default 2000)"),
    max_tiling: int = typer.Option(None, help="limit: product of cell repetitions (default 125)"),
    max_views: int = typer.Option(None, help="limit: views in a protocol (default 500)"),
    max_pixels: int = typer.Option(None, help="limit: pixels per image, width x height (default 4096²)"),
    max_observations: int = typer.Option(None, help="limit: projected points per structure (default 5e6)"),
    max_zip_member_bytes: int = typer.Option(None, help="limit: uncompressed bytes of a zip member (512 MiB)"),
    max_zip_ratio: float = typer.Option(None, help="limit: compression ratio of a zip member (default 200)"),
    max_json_bytes: int = typer.Option(None, help="limit: bytes of a JSON/JSONL input (default 256 MiB)"),
    max_symmetry_operations: int = typer.Option(None, help="limit: symmetry operations listed in a CIF (default 384)"),
    max_symmetry_images: int = typer.Option(None, help="limit: a CIF's atom rows x operations (default 200000)"),
    max_questions: int = typer.Option(None, help="limit: questions of a transformation export (default 100000)"),
    max_bootstrap_draws: int = typer.Option(None, help="limit: bootstrap resamples x items (default 5e7)"),
) -> None:
    """viewcert command line. Limits are checked before the work; each has an option to raise it."""
    from viewcert.errors import ViewcertError
    from viewcert.limits import DEFAULT_LIMITS, set_active_limits

    try:
        limits = DEFAULT_LIMITS.with_overrides(
            max_atoms=max_atoms, max_tiling=max_tiling, max_views=max_views, max_pixels=max_pixels,
            max_observations=max_observations, max_zip_member_bytes=max_zip_member_bytes,
            max_zip_ratio=max_zip_ratio, max_json_bytes=max_json_bytes,
            max_symmetry_operations=max_symmetry_operations, max_symmetry_images=max_symmetry_images,
            max_questions=max_questions, max_bootstrap_draws=max_bootstrap_draws)
    except ViewcertError as exc:
        raise typer.BadParameter(str(exc)) from None
    if settings is not None:  # the file's values become the commands' defaults (the command line still wins)
        from viewcert.cli.settings import load_settings

        try:
            ctx.default_map = load_settings(settings, ctx.command)
        except ViewcertError as exc:
            echo(f"viewcert: error: {one_line(exc)}", err=True)
            raise typer.Exit(EXIT_INPUT) from None
    SESSION.set({"debug": debug, "limits": limits})
    set_active_limits(limits)  # for readers deep inside a command (harness files, zip members, JSON)


@app.command()
def version() -> None:
    """Print the viewcert version."""
    from viewcert import __version__

    echo(__version__)


@app.command()
def observe(
    source: str = typer.Argument("builtin:sample", help="builtin:sample|builtin:prototypes|builtin:molecules, a "
                                                        "structure file, a folder of them or the study layout"),
    protocol: str = typer.Option("render-ceiling-5", help="named view protocol"),
    tiling: str = typer.Option(defaults.TILING_TEXT, help="cell repetitions observed, e.g. 1,1,1 (a molecule is "
                                                          "never tiled)"),
    out: Path = typer.Option(Path("out"), "--out", "-o", help="output folder"),
) -> None:
    """Project structures through a protocol and write per-view observations (JSON) under OUT/observations."""
    from viewcert.api.main import observe as observe_job
    from viewcert.cli.options import check_out, current_limits, parse_tiling, show

    parse_tiling(tiling)  # a bad value: a usage error
    show(observe_job(source, check_out(out), protocol=protocol, tiling=tiling, limits=current_limits()))


@app.command()
def run(
    out: Path = typer.Option(Path("out"), "--out", "-o", help="output folder"),
    workers: int = typer.Option(1, help="local worker processes for certification (20 small items: 1 avoids "
                                        "compiling the numba kernels in every worker on a fresh machine)"),
) -> None:
    """The main job on built-in data (what ``make run`` calls): observations of the built-in sample, the
    certified render ceiling of the built-in prototypes under render-ceiling-5 (δ = τ = 0.01 Å), and a
    gallery contact sheet, and the certificate's explorer (out/explore/index.html)."""
    from viewcert.api.main import main_job
    from viewcert.cli.options import progress, show

    show(main_job(out, workers=workers, progress=progress))


def _mount_subcommands() -> None:
    """Each area keeps its commands in its own module; they register themselves here."""
    from viewcert.cli import attribution as cli_attribution
    from viewcert.cli import certify as cli_certify
    from viewcert.cli import design as cli_design
    from viewcert.cli import explore as cli_explore
    from viewcert.cli import learn as cli_learn
    from viewcert.cli import render as cli_render
    from viewcert.cli import settings as cli_settings
    from viewcert.cli import warmup as cli_warmup

    cli_certify.register(app)
    cli_render.register(app)
    cli_attribution.register(app)
    cli_design.register(app)
    cli_explore.register(app)
    cli_warmup.register(app)
    cli_learn.register(app)
    cli_settings.register(app)


_mount_subcommands()
