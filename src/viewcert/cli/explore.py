"""``viewcert explore DIR --out SITE [--serve]``: the static explorer of a certificate (``viewcert.api.site``)."""

from __future__ import annotations

import typer

from viewcert.cli.options import echo, show
from viewcert.cli.vocabulary import mount


def explore_cmd(o) -> None:
    """Write a static site of FOLDER's certificate: an index filterable by outcome, one page per item with
    every view and its overlays (phantoms, hidden atoms, the δ* near miss), the summary and plots. Opens from
    file:// (no server, no network); --serve runs a local server instead of opening the file."""
    from viewcert.api.site import explore
    from viewcert.explore.serve import serve_site

    index = explore(o.folder, o.out, workers=o.workers, inputs=o.inputs, ladder=o.ladder, force=o.force)
    show(index)
    if o.serve:
        serve_site(index.value.parent, o.port, echo)


def register(app: typer.Typer) -> None:
    """Add ``explore`` to ``app``."""
    mount(app, {"explore": explore_cmd})
