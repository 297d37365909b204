"""``viewcert learn``: train a learned reader (cell-forest | pixel-cnn) and write its predictions as a rung.
Mount with ``register(app)``."""

from __future__ import annotations

import contextlib
from pathlib import Path

import typer

from viewcert.cli.options import check_out, current_limits, echo, guarded, safe_console


def learn(
    source: str = typer.Argument(..., metavar="INPUT", help="the benchmark: the study layout (data/e3) or any input with --train"),
    reader: str = typer.Option(..., "--reader", help="cell-forest (19 cell metrics) | pixel-cnn (rendered views)"),
    out: Path = typer.Option(Path("out/learn"), "--out", "-o", help="output folder (one subfolder per reader)"),
    train: str | None = typer.Option(None, "--train", help="training input, or pyxtal:N[:SEED] (N crystals drawn from pyxtal, stratified by crystal system, disjoint from the eval items); default: the input's training split"),
    protocol: str = typer.Option("render-ceiling-5", "--protocol", help="pixel-cnn: view protocol rendered"),
    image_size: int = typer.Option(64, "--image-size", help="pixel-cnn: image width = height (px)"),
    epochs: int | None = typer.Option(None, "--epochs", help="pixel-cnn: training epochs (default: the recipe's)"),
    seed: int | None = typer.Option(None, "--seed", help="seed (default: 23 for the forest, 0 for the CNN)"),
) -> None:
    """Train a learned reader on the training split and predict the eval items (native results format).
    An empirical reading of the images or the cell, never a certificate: see docs/learned-readers.md."""
    from viewcert.learn.run import run_learn

    with _bars() as bars:
        res = run_learn(source, reader, check_out(out), train=train, seed=seed, limits=current_limits(),
                        protocol=protocol, image_size=image_size, epochs=epochs, progress_factory=bars)
    acc = res.card
    echo(f"{res.reader}: {res.correct}/{res.n} eval items correct; card {res.folder / 'card.json'}")
    if acc.get("training_curve"):
        echo("training curve: " + ", ".join(f"{r['n_train']}: {r['correct']}/{r['n']}" for r in acc["training_curve"]))
    echo(f"ladder: viewcert ladder --manifest {Path(out) / 'ladder.toml'} --r1 VALUE")


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
    app.command("learn")(guarded(learn))
