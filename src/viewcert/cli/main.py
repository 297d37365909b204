"""The ``viewcert`` command: thin subcommands, no science here.

Errors: every command registered on ``app`` (here or by a group's ``register(app)``) runs inside one handler
(``GuardedTyper``): an exception becomes ``viewcert: error: <one line>`` on stderr and exit code 2 (item
failures inside a run exit 1, decided by the command); ``viewcert --debug CMD`` re-raises with the traceback.
Resource limits (``viewcert.limits``) are options of the root command: ``viewcert --max-atoms 10000 certify``.
"""

from __future__ import annotations

from pathlib import Path

import typer

from viewcert.cli.options import EXIT_ITEMS, SESSION, echo, guarded, safe_console


class GuardedTyper(typer.Typer):
    """A Typer whose every command runs inside ``guarded``."""

    def command(self, *args, **kwargs):
        register = super().command(*args, **kwargs)

        def deco(fn):
            register(guarded(fn))
            return fn

        return deco


app = GuardedTyper(add_completion=False, no_args_is_help=True, help="viewcert: what do these images determine?")


@app.callback()
def _main(
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
    tiling: str = typer.Option("1,1,1", help="cell repetitions drawn, e.g. 2,2,2"),
    out: Path = typer.Option(Path("out"), help="output folder"),
) -> None:
    """Project structures through a protocol and write per-view observations (JSON) under OUT/observations."""
    from rich.table import Table

    from viewcert.cli.main_job import observe_sample
    from viewcert.cli.options import check_out, current_limits, parse_tiling

    limits = current_limits()
    t = parse_tiling(tiling)
    limits.check_tiling(t)
    limits.check_protocol_name(protocol)
    structures, failed = _load(source, limits)
    rows = observe_sample(structures, check_out(out), protocol_name=protocol, tiling=t, limits=limits)
    table = Table(title=f"observations: {source} through {protocol} (tiling {tiling})")
    for col in ("id", "formula", "kind", "atoms", "points per view", "zone-axis views"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r.identifier, r.formula, "crystal" if r.periodic else "molecule", str(r.n_atoms),
            " ".join(map(str, r.points_per_view)), ",".join(r.zone_axis_views) or "-",
        )
    safe_console().print(table)
    echo(f"wrote {len(rows)} observation files to {out / 'observations'}")
    _item_failures(failed)


def _item_failures(failed: list[str]) -> None:
    """Items that could not be read: one line each on stderr, then exit 1 (everything else was written)."""
    if failed:
        for line in failed:
            echo(f"viewcert: item error: {line}", err=True, one_line=True)
        echo(f"viewcert: {len(failed)} items could not be read or certified (reported apart)", err=True)
        raise typer.Exit(EXIT_ITEMS)


@app.command()
def run(
    out: Path = typer.Option(Path("out"), help="output folder"),
    workers: int = typer.Option(1, help="local worker processes for certification (20 small items: 1 avoids "
                                        "compiling the numba kernels in every worker on a fresh machine)"),
) -> None:
    """The main job on built-in data (what ``make run`` calls): observations of the built-in sample, the
    certified render ceiling of the built-in prototypes under render-ceiling-5 (δ = τ = 0.01 Å), and a
    gallery contact sheet, and the certificate's explorer (out/explore/index.html)."""
    from viewcert.cli.warmup import prestage

    # a cold numba cache (a fresh install): the oracle's and the renderer's kernels compile side by side first,
    # before the imports below (some of their modules compile kernels with explicit signatures at import)
    if prestage("main-job", lambda line: echo(line, err=True)):
        echo("viewcert: first run — compiled the oracle's and the renderer's kernels side by side (cached)", err=True)
    from viewcert.benchmark.gallery import write_gallery
    from viewcert.certify import CertifyConfig
    from viewcert.certify.run import certify, summary_text
    from viewcert.explore import write_site
    observe("builtin:sample", "render-ceiling-5", "1,1,1", out)
    cert = certify("builtin:prototypes", CertifyConfig(protocol="render-ceiling-5"), out=out, n_workers=workers)
    echo(summary_text(cert), nl=False)
    gallery = write_gallery(out / "gallery.png")
    site = write_site(out, out / "explore")  # the certificate's explorer (viewcert explore OUT)
    echo(f"wrote {out / 'certificate.json'}, {out / 'items.csv'}, plots, {gallery} and the explorer {site}")


def _load(source: str, limits):
    """(structures that could be read, one line per item that could not)."""
    from viewcert.certify.inputs import load_input
    from viewcert.cli.options import one_line
    from viewcert.errors import ViewcertError

    good, failed = [], []
    for it in load_input(source, subset="all" if not source.startswith("builtin:") else "eval").with_limits(
            limits).items:
        try:
            good.append(it.read())
        except (ViewcertError, ValueError, OSError) as exc:
            failed.append(f"item {it.id}: {one_line(exc)}")
    return good, failed


def _mount_subcommands() -> None:
    """Each area keeps its commands in its own module; they register themselves here."""
    from viewcert.cli import attribution as cli_attribution
    from viewcert.cli import certify as cli_certify
    from viewcert.cli import design as cli_design
    from viewcert.cli import explore as cli_explore
    from viewcert.cli import learn as cli_learn
    from viewcert.cli import render as cli_render
    from viewcert.cli import warmup as cli_warmup

    cli_certify.register(app)
    cli_render.register(app)
    cli_attribution.register(app)
    cli_design.register(app)
    cli_explore.register(app)
    cli_warmup.register(app)
    cli_learn.register(app)


_mount_subcommands()
