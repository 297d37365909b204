"""Option parsers shared by every command group (one tiling syntax everywhere)."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import re
import sys
import warnings
from pathlib import Path

import typer
import typer.exceptions

from viewcert.errors import InputError, ViewcertError
from viewcert.limits import DEFAULT_LIMITS, Limits, active_limits, set_active_limits
from viewcert.sanitize import console_text

#: what the root command's options set for this invocation: {"debug": bool, "limits": Limits}
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
    """Forget the root command's options when a command ends: limits raised or lowered for one command never
    reach the next one run in the same process (a notebook, a test runner, an embedding program)."""
    SESSION.set(None)
    set_active_limits(DEFAULT_LIMITS)


def item_failures(lines: list[str], *, note: str = "reported apart") -> None:
    """The one failure printer of a run that wrote everything else: each item that could not be read or
    certified, one line on stderr (``viewcert: item error: ...``), then the count and ``note``; exit 1."""
    if lines:
        for line in lines:
            echo(f"viewcert: item error: {line}", err=True, one_line=True)
        echo(f"viewcert: {len(lines)} items could not be read or certified ({note})", err=True)
        raise typer.Exit(EXIT_ITEMS)


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


def current_limits() -> Limits:
    """The limits set on the root command (``viewcert --max-atoms N ...``), else the defaults."""
    return (SESSION.get() or {}).get("limits") or active_limits()


def one_line(exc: BaseException) -> str:
    """An exception as one line: the message of a viewcert error; type, file and message otherwise."""
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    elif isinstance(exc, ViewcertError):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if isinstance(exc, (KeyError, IndexError, AttributeError, TypeError)):
            text += " (unexpected; rerun with --debug and report it)"
    text = console_text(" ".join(text.split()), keep_newlines=False)
    return text[:400] + (" ..." if len(text) > 400 else "")


def check_out(out: Path, *, option: str = "--out") -> Path:
    """``out`` must be a folder or not exist yet (it is created)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out} exists and is not a folder", field=option)
    return out


def parse_tiling(text: str) -> tuple[int, int, int]:
    parts = [p for p in re.split(r"[,x×\s]+", text.strip()) if p]
    if len(parts) == 1:
        parts = parts * 3
    try:
        t = tuple(int(p) for p in parts)
    except ValueError:
        raise typer.BadParameter(f"tiling must be like 2,2,2 or 2x2x2, got {text!r}") from None
    if len(t) != 3 or min(t) < 1:
        raise typer.BadParameter(f"tiling must be three positive integers, got {text!r}")
    return t  # type: ignore[return-value]
