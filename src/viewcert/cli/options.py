"""Option parsers shared by every command group (one tiling syntax everywhere)."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import sys
import warnings

import typer
import typer.exceptions

from viewcert.api.report import check_out, one_line  # noqa: F401 - check_out: the commands read it here
from viewcert.errors import InputError
from viewcert.sanitize import console_text

#: what the root command's options set for this invocation: {"debug": bool} (its limits are in force:
#: ``limits.using_limits``, entered on the root command's context)
SESSION: contextvars.ContextVar[dict | None] = contextvars.ContextVar("viewcert_cli_session", default=None)
EXIT_INPUT = 2  # bad input, bad option, limit exceeded, unreadable file: nothing (more) was computed
EXIT_ITEMS = 1  # the run finished and wrote everything, but some items could not be read or certified


#: --workers means one thing in every command: local worker processes, default one per CPU (the bytes written
#: do not depend on it); ``run`` alone defaults to 1 (a fresh machine would compile the kernels in every worker)
WORKERS_HELP = "local worker processes (default: one per CPU; the outputs are the same)"

MOLECULE_SCALE_HELP = ("molecules: common (one Å-per-pixel scale across views, bounding-box centre) | per-view "
                       "(each view fitted alone, the old framing); crystals are always fitted per view")


def guarded(fn):
    """``fn`` with the central handler: no Python traceback reaches a user unless ``--debug`` is given.
    Idempotent: a command guarded already (a group's ``register`` and ``GuardedTyper`` both guard) is returned
    as it is, so one handler, the outermost, decides and ends the session."""
    if getattr(fn, "__viewcert_guarded__", False):
        return fn

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            with escaped_warnings():
                return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.exceptions.TyperException):
            raise
        except KeyboardInterrupt:
            typer.echo("viewcert: interrupted (finished shards are kept; rerun to resume)", err=True)
            sys.stdout.flush()
            sys.stderr.flush()
            # at once: finished shards are on disk (atomic writes), and the interpreter's own exit can take
            # seconds or crash after an interrupted numba compilation
            os._exit(130)
        except Exception as exc:  # noqa: BLE001 - the one place every failure becomes one line
            if _debug():
                raise
            echo(f"viewcert: error: {one_line(exc)}", err=True)
            raise typer.Exit(EXIT_INPUT) from None
        finally:
            _end_session()

    run.__viewcert_guarded__ = True
    return run


def _end_session() -> None:
    """Forget the root command's options when a command ends, so they never reach the next one run in the same
    process (a notebook, a test runner, an embedding program); its limits end with the root command's context."""
    SESSION.set(None)


def item_failures(lines, *, note: str = "(reported apart)", n: int | None = None) -> None:
    """The one failure printer of a run that wrote everything else: each item that could not be read or
    certified, one line on stderr (``viewcert: item error: ...``), then the count (``n``, default the lines)
    and ``note``; exit 1."""
    n = len(lines) if n is None else n
    if n:
        for line in lines:
            echo(f"viewcert: item error: {line}", err=True, one_line=True)
        echo(f"viewcert: {n} items could not be read or certified {note}", err=True)
        raise typer.Exit(EXIT_ITEMS)


def show(report) -> None:
    """Print a library report (``viewcert.api.report.Report``): its lines and tables in order (received text
    escaped), then its item failures (exit 1), then exit with its status when that is not 0."""
    from viewcert.api.report import Table, natural_width, rich_table

    piped = not sys.stdout.isatty()  # a pipe or a file: tables at their natural width (never cut), lines unwrapped
    console = None
    for b in report.blocks:
        if isinstance(b, Table) or b.console:
            if console is None:
                width = natural_width(report.blocks, report.width or 80, safe_console(width=1_000_000)) \
                    if piped else report.width
                console = safe_console(**({"width": width} if width else {}))
            console.print(rich_table(b) if isinstance(b, Table) else b.text,
                          soft_wrap=piped and not isinstance(b, Table))
        elif b.colour:
            typer.secho(console_text(b.text, keep_newlines=False), err=b.err, fg=b.colour)
        else:
            echo(b.text, err=b.err, nl=b.nl, one_line=b.one_line)
    item_failures(report.failures, note=report.note, n=report.n_failures)
    if report.exit_code:
        raise typer.Exit(report.exit_code)


def progress(line: str) -> None:
    """A library job's progress line, on stderr."""
    echo(line, err=True)


def echo(text: object = "", *, err: bool = False, nl: bool = True, one_line: bool = False) -> None:
    """``typer.echo`` with control characters escaped (``sanitize.console_text``): the CLI's one writer of
    plain console lines, so a received item id, file or model name never reaches the terminal raw.
    ``one_line``: newlines and tabs escaped too (a line about one item cannot forge another line)."""
    typer.echo(console_text(text, keep_newlines=not one_line), err=err, nl=nl)


def safe_console(**kwargs):
    """A ``rich`` console (``kwargs`` as for ``rich.console.Console``) that shows every string it renders
    (table cells, titles, printed text) literally: control characters escaped and rich markup inert."""
    from rich.console import Console
    from rich.markup import escape

    class _SafeConsole(Console):
        def render_str(self, text, **kw):
            return super().render_str(escape(console_text(text)), **kw)

    return _SafeConsole(**kwargs)


@contextlib.contextmanager
def escaped_warnings():
    """While the block runs, Python warnings (a parsing library's, quoting a file's content) are printed
    with control characters escaped, like every other console line."""
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        text = warnings.formatwarning(message, category, filename, lineno, line)
        with contextlib.suppress(OSError, ValueError):
            (file or sys.stderr).write(console_text(text))

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown


def _debug() -> bool:
    return bool((SESSION.get() or {}).get("debug")) or os.environ.get("VIEWCERT_DEBUG", "") not in ("", "0")


def usage(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` of the library, its InputError (a bad option value) a usage error, naming the
    option when the error's field is one (``--seeds``)."""
    try:
        return fn(*args, **kwargs)
    except InputError as exc:
        option = exc.field if (exc.field or "").startswith("--") else None
        raise typer.BadParameter(exc.message, param_hint=option) from None


#: the parameters naming a structure INPUT, and those naming view protocols (a name, a file, or names by commas)
INPUT_PARAMS = ("input", "input_spec", "source")
PROTOCOL_PARAMS = ("protocol", "against", "keep_protocol")
_PATH_SCHEMES = ("complex:", "optimade:", "gnome:", "ase:")


def preflight(values: dict) -> None:
    """Names checked before any work (and before the heavy imports): a structure INPUT that is a path exists, and
    every protocol name is a known one (a file is read, and checked, by the command). InputError / CameraError,
    naming the parameter, otherwise."""
    for name in INPUT_PARAMS:
        spec = values.get(name)
        if isinstance(spec, str | os.PathLike):
            check_input_path(os.fspath(spec))
    for name in PROTOCOL_PARAMS:
        given = values.get(name)
        if isinstance(given, str):
            check_protocol_names(given, option="--" + name.replace("_", "-"))


def check_input_path(spec: str) -> None:
    """INPUT as a path (bare, or after ``complex:``/``optimade:``/``gnome:``/``ase:``, without its ``#`` options)
    must exist; other schemes (``builtin:``, ``ccd:``, ``pyxtal:``) are checked by their readers."""
    path = spec
    scheme = next((x for x in _PATH_SCHEMES if spec.startswith(x)), None)
    if scheme is not None:
        path = spec[len(scheme):]
        if "=" in path.split("#", 1)[0]:  # complex:protein=…,ligand=…: its reader names the missing part
            return
    elif ":" in spec.split("/", 1)[0] and not os.path.exists(spec):  # builtin:NAME, ccd:ATP, pyxtal:N
        return
    if not (os.path.exists(os.path.expanduser(path)) or os.path.exists(os.path.expanduser(path.split("#", 1)[0]))):
        raise InputError(f"input {spec!r} does not exist", field="INPUT")


def check_protocol_names(given: str, *, option: str) -> None:
    """Each protocol of ``given`` (comma-separated) that is a name, not a ``.toml``/``.json`` file, is known."""
    from viewcert.cameras.protocols import get_protocol
    from viewcert.errors import ViewcertError

    for name in (x.strip() for x in given.split(",")):
        if name.startswith("fibonacci-"):  # built only after the view limit is checked (max_views), by the command
            continue
        if name and not name.lower().endswith((".toml", ".json")):
            try:
                get_protocol(name)
            except ViewcertError as exc:
                raise InputError(str(exc), field=option) from None


def parse_tiling(text: str) -> tuple[int, int, int]:
    """``--tiling``: 2,2,2 or 2x2x2 (a bad value is a usage error)."""
    from viewcert.api.report import parse_tiling as parse

    return usage(parse, text)
