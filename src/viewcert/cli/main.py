"""The ``viewcert`` command: thin subcommands, no science here."""

from __future__ import annotations

from pathlib import Path

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


@app.command()
def observe(
    source: str = typer.Argument("builtin:sample", help="builtin:sample|builtin:prototypes|builtin:molecules or a file"),
    protocol: str = typer.Option("render-ceiling-5", help="named view protocol"),
    tiling: str = typer.Option("1,1,1", help="cell repetitions drawn, e.g. 2,2,2"),
    out: Path = typer.Option(Path("out"), help="output folder"),
) -> None:
    """Project structures through a protocol and write per-view observations (JSON) under OUT/observations."""
    from rich.console import Console
    from rich.table import Table

    from viewcert.cli.main_job import observe_sample
    from viewcert.cli.options import parse_tiling

    structures = _load(source)
    rows = observe_sample(structures, out, protocol_name=protocol, tiling=parse_tiling(tiling))
    table = Table(title=f"observations: {source} through {protocol} (tiling {tiling})")
    for col in ("id", "formula", "kind", "atoms", "points per view", "zone-axis views"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r.identifier, r.formula, "crystal" if r.periodic else "molecule", str(r.n_atoms),
            " ".join(map(str, r.points_per_view)), ",".join(r.zone_axis_views) or "-",
        )
    Console().print(table)
    typer.echo(f"wrote {len(rows)} observation files to {out / 'observations'}")


@app.command()
def run(
    out: Path = typer.Option(Path("out"), help="output folder"),
    workers: int = typer.Option(1, help="local worker processes for certification (20 small items: 1 avoids "
                                        "compiling the numba kernels in every worker on a fresh machine)"),
) -> None:
    """The main job on built-in data (what ``make run`` calls): observations of the built-in sample, the
    certified render ceiling of the built-in prototypes under render-ceiling-5 (δ = τ = 0.01 Å), and a
    gallery contact sheet."""
    from viewcert.benchmark.gallery import write_gallery
    from viewcert.certify import CertifyConfig
    from viewcert.certify.run import certify, summary_text

    observe("builtin:sample", "render-ceiling-5", "1,1,1", out)
    cert = certify("builtin:prototypes", CertifyConfig(protocol="render-ceiling-5"), out=out, n_workers=workers)
    typer.echo(summary_text(cert), nl=False)
    gallery = write_gallery(out / "gallery.png")
    typer.echo(f"wrote {out / 'certificate.json'}, {out / 'items.csv'}, plots, and {gallery}")


def _load(source: str):
    if source.startswith("builtin:"):
        from viewcert.io.builtin import builtin

        return builtin(source)
    from viewcert.io.read import read_structure

    return [read_structure(Path(source))]


def _mount_subcommands() -> None:
    """Each area keeps its commands in its own module; they register themselves here."""
    from viewcert.cli import attribution as cli_attribution
    from viewcert.cli import certify as cli_certify
    from viewcert.cli import render as cli_render

    cli_certify.register(app)
    cli_render.register(app)
    cli_attribution.register(app)


_mount_subcommands()
