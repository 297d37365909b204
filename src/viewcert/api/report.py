"""What a library job returns for a person to read: lines and tables in order, the items that failed, an exit
status and the job's result itself (``value``: a certificate, an export, a ladder ...).

The command line prints a ``Report`` through one printer (``viewcert.cli.options.show``); a notebook prints
``report.text()`` or reads ``report.value``. Received text (item ids, file names) is escaped by the printer,
never here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viewcert.errors import InputError, ViewcertError, install_hint
from viewcert.sanitize import console_text


@dataclass(frozen=True)
class Line:
    """One line of a report. ``err``: a note for stderr (progress, warnings); ``one_line``: newlines escaped (a
    line quoting received text cannot forge another line); ``nl``: end with a newline; ``colour``: a warning's
    colour on a terminal; ``console``: printed through the report's rich console (wrapped at its width)."""

    text: str
    err: bool = False
    one_line: bool = False
    nl: bool = True
    colour: str | None = None
    console: bool = False


@dataclass(frozen=True)
class Table:
    """A table of text cells: ``title``, column names, rows; ``right``: the columns justified right."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    right: tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    """The lines and tables of a job in order; ``failures``: one line per item that could not be read or
    certified (``n_failures`` of them in all, when more failed than are listed; ``note`` says where they are
    counted); ``exit_code``: 1 when something differs (``verify``), else 0; ``width``: the console width its
    tables are drawn at (None: the terminal's); ``value``: the job's result."""

    blocks: tuple[Line | Table, ...] = ()
    failures: tuple[str, ...] = ()
    n_failures: int | None = None
    note: str = "(reported apart)"
    exit_code: int = 0
    width: int | None = None
    value: Any = None

    def text(self) -> str:
        """The report as plain text (tables drawn by rich at ``width``, default 120 columns)."""
        import io

        from rich.console import Console  # lazy: start-up (rich is only needed to draw a table)

        buf = io.StringIO()
        width = natural_width(self.blocks, self.width or 120)  # text: no table cut or wrapped
        console = Console(file=buf, width=width, markup=False, highlight=False)
        for b in self.blocks:
            if isinstance(b, Table):
                console.print(rich_table(b))
            else:
                console.print(b.text, end="\n" if b.nl else "", soft_wrap=not b.console)
        for f in self.failures:
            console.print(f"item error: {f}", soft_wrap=True)
        return buf.getvalue()

    def __str__(self) -> str:
        return self.text()


def natural_width(blocks, floor: int, console=None) -> int:
    """The console width at which every table of ``blocks`` is drawn whole (no cell cut or wrapped): the widest
    table's natural width as ``console`` renders it (rich's measure; default a plain console), at least ``floor``
    columns."""
    from rich.console import Console  # lazy: start-up

    tables = [rich_table(b) for b in blocks if isinstance(b, Table)]
    if not tables:
        return floor
    wide = console or Console(width=1_000_000, markup=False, highlight=False)
    return max(floor, *(wide.measure(t).maximum for t in tables))


def rich_table(t: Table):
    """``t`` as a ``rich.table.Table``."""
    from rich.table import Table as RichTable  # lazy: start-up

    out = RichTable(title=t.title)
    for col in t.columns:
        out.add_column(col, justify="right" if col in t.right else "left")
    for row in t.rows:
        out.add_row(*row)
    return out


def lines(*texts: str, **kw) -> tuple[Line, ...]:
    """``Line``s of ``texts`` sharing the keyword settings ``kw``."""
    return tuple(Line(t, **kw) for t in texts)


def one_line(exc: BaseException) -> str:
    """An exception as one line: the message of a viewcert error; type, file and message otherwise."""
    hint = install_hint(exc.name) if isinstance(exc, ModuleNotFoundError) else None
    if hint:  # an optional extra not installed: the command that installs it
        text = f"{exc}: {hint}"
    elif isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    elif isinstance(exc, ViewcertError):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if isinstance(exc, (KeyError, IndexError, AttributeError, TypeError)):
            text += " (unexpected; rerun with --debug and report it)"
    text = console_text(" ".join(text.split()), keep_newlines=False)
    return text[:400] + (" ..." if len(text) > 400 else "")


def parse_tiling(text: str, *, field: str = "tiling") -> tuple[int, int, int]:
    """Cell repetitions from text: ``2,2,2``, ``2x2x2`` or ``2`` (all three); InputError otherwise."""
    parts = [p for p in re.split(r"[,x×\s]+", str(text).strip()) if p]
    if len(parts) == 1:
        parts = parts * 3
    try:
        t = tuple(int(p) for p in parts)
    except ValueError:
        raise InputError(f"tiling must be like 2,2,2 or 2x2x2, got {text!r}", field=field) from None
    if len(t) != 3 or min(t) < 1:
        raise InputError(f"tiling must be three positive integers, got {text!r}", field=field)
    return t  # type: ignore[return-value]


def check_out(out: str | Path, *, option: str = "--out") -> Path:
    """``out`` as a Path: it must be a folder or not exist yet (it is created); InputError otherwise."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out} exists and is not a folder", field=option)
    return out
