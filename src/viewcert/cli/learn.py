"""``viewcert learn``: train a learned reader (cell-forest | pixel-cnn) and write its predictions as a rung.
Mount with ``register(app)``."""

from __future__ import annotations

import contextlib

import typer

from viewcert.cli.options import safe_console, show
from viewcert.cli.vocabulary import mount


def learn(o) -> None:
    """Train a learned reader on the training split and predict the eval items (native results format).
    An empirical reading of the images or the cell, never a certificate: see docs/learned-readers.md."""
    from viewcert.api.learned import learn as run

    with _bars() as bars:
        report = run(o.source, o.reader, o.out, train=o.train, seed=o.seed, force=o.force,
                     protocol=o.protocol, image_size=o.image_size, epochs=o.epochs, progress_factory=bars)
    show(report)


@contextlib.contextmanager
def _bars():
    """A progress-bar factory on stderr: ``bars(what, total)`` adds a bar and returns its ``advance(n)``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=safe_console(stderr=True), transient=False) as p:
        def bars(what: str, total: int):
            task = p.add_task(what, total=total)
            return lambda n: p.advance(task, n)

        yield bars


def register(app: typer.Typer) -> None:
    """Add ``learn`` to a typer app."""
    mount(app, {"learn": learn})
