"""``viewcert explore DIR --out SITE [--serve]``: the static explorer of a certificate (``viewcert.explore``)."""

from __future__ import annotations

from pathlib import Path

import typer

from viewcert.cli.options import echo, guarded


def explore_cmd(
    folder: Path = typer.Argument(..., help="a certify output or an export folder (holding certificate.json)"),
    out: Path = typer.Option(None, help="site folder (default: FOLDER/explore)"),
    serve: bool = typer.Option(False, "--serve", help="then serve the site on http://127.0.0.1:PORT (Ctrl-C stops)"),
    port: int = typer.Option(8000, help="port of --serve (127.0.0.1 only)"),
    workers: int = typer.Option(0, help="processes writing the item pages (0: one per CPU; the bytes are the same)"),
    inputs: Path = typer.Option(None, help="folder of an interaction export's complexes (by name, as verify "
                                "--inputs): each bond is drawn over the images"),
    ladder: Path = typer.Option(None, help="a ladder output (viewcert ladder --out DIR): each item page shows every "
                                "model's answers; default: the ladder report beside FOLDER, if any"),
) -> None:
    """Write a static site of FOLDER's certificate: an index filterable by outcome, one page per item with
    every view and its overlays (phantoms, hidden atoms, the δ* near miss), the summary and plots. Opens from
    file:// (no server, no network); --serve runs a local server instead of opening the file."""
    from viewcert.certify.trust import trusted_root
    from viewcert.cli.options import check_out
    from viewcert.explore import write_site
    from viewcert.parallel import default_workers

    if inputs is not None:
        trusted_root(inputs)  # as verify --inputs: one line, exit 2, when it is not an existing folder
    if ladder is not None:
        trusted_root(ladder)
    site = check_out(out if out is not None else Path(folder) / "explore")
    index = write_site(folder, site, workers=workers if workers > 0 else default_workers(), inputs=inputs,
                       ladder=ladder)
    echo(f"wrote {index}")
    if serve:
        serve_site(site, port)


def serve_site(site: Path, port: int) -> None:
    """Serve ``site`` on 127.0.0.1:``port`` with the standard library's http.server until interrupted."""
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(site))
    with ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        echo(f"serving http://127.0.0.1:{httpd.server_address[1]}/index.html (Ctrl-C stops)")
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            echo("stopped")


def register(app: typer.Typer) -> None:
    app.command("explore")(guarded(explore_cmd))
