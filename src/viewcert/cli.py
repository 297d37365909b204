"""The ``viewcert`` command: thin subcommands, no science here."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help="viewcert: what do these images determine?")


@app.callback()
def _main() -> None:
    """viewcert command line."""


@app.command()
def version() -> None:
    """Print the viewcert version."""
    from viewcert import __version__

    typer.echo(__version__)
