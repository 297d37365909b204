"""``viewcert explore DIR --out SITE [--serve]``: the static explorer of a certificate (``viewcert.explore``)."""

from __future__ import annotations

from pathlib import Path

import typer

from viewcert.cli.options import WORKERS_HELP, echo, guarded, show


def explore_cmd(
    folder: Path = typer.Argument(..., help="a certify output or an export folder (holding certificate.json)"),
    out: Path = typer.Option(None, "--out", "-o", help="site folder (default: FOLDER/explore)"),
    serve: bool = typer.Option(False, "--serve", help="then serve the site on http://127.0.0.1:PORT (Ctrl-C stops)"),
    port: int = typer.Option(8000, help="port of --serve (127.0.0.1 only)"),
    workers: int = typer.Option(None, help=WORKERS_HELP),
    inputs: Path = typer.Option(None, help="the trusted folder (as verify --inputs; default: the current folder): "
                                "inputs, protocol files and complexes the certificate names are read only inside it "
                                "(an interaction export's complexes by name: each bond is drawn over the images)"),
    ladder: Path = typer.Option(None, help="a ladder output (viewcert ladder --out DIR): each item page shows every "
                                "model's answers; default: the ladder report beside FOLDER, if any"),
) -> None:
    """Write a static site of FOLDER's certificate: an index filterable by outcome, one page per item with
    every view and its overlays (phantoms, hidden atoms, the δ* near miss), the summary and plots. Opens from
    file:// (no server, no network); --serve runs a local server instead of opening the file."""
    from viewcert.api.site import explore

    index = explore(folder, out, workers=workers, inputs=inputs, ladder=ladder)
    show(index)
    if serve:
        serve_site(index.value.parent, port)


def serve_site(site: Path, port: int) -> None:
    """Serve ``site`` on 127.0.0.1:``port`` with the standard library's http.server until interrupted; a file
    that resolves outside the site (a planted symlink) is not served (``explore.serve``)."""
    from http.server import ThreadingHTTPServer

    from viewcert.explore.serve import confined_handler

    with ThreadingHTTPServer(("127.0.0.1", port), confined_handler(site)) as httpd:
        echo(f"serving http://127.0.0.1:{httpd.server_address[1]}/index.html (Ctrl-C stops)")
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            echo("stopped")


def register(app: typer.Typer) -> None:
    app.command("explore")(guarded(explore_cmd))
