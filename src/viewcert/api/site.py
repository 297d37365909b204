"""The explorer of a certificate (``viewcert explore``): a static site of its items, views, phantoms and labels,
written into a folder that opens from ``file://``."""

from __future__ import annotations

import os
from pathlib import Path

from viewcert.api.arguments import validated
from viewcert.api.report import Line, Report
from viewcert.errors import InputError
from viewcert.explore import write_site
from viewcert.explore.published import write_published_site
from viewcert.formats.records import IMAGES_FORMAT
from viewcert.io.confine import trusted_root
from viewcert.io.outputs import claimed
from viewcert.io.received import loads_json_strict, read_received_bytes
from viewcert.parallel import default_workers


def _published(folder: Path) -> bool:
    """Whether ``folder`` holds an as-published certificate (``certify images:...``), by its ``format``."""
    path = folder / "certificate.json"
    if not path.is_file() or path.is_symlink():
        return False
    try:
        return bool(loads_json_strict(read_received_bytes(path, what="certificate")).get("format") == IMAGES_FORMAT)
    except (InputError, AttributeError, ValueError, UnicodeDecodeError):  # the site's own reader says what is wrong
        return False


@validated("explore")
def explore(folder: str | Path, out: str | Path | None = None, *, workers: int | None = None,
            inputs: str | Path | None = None, ladder: str | Path | None = None, force: bool = False) -> Report:
    """Write the site of ``folder``'s certificate (a certify output or an export) into ``out`` (default
    ``FOLDER/explore``): an index filterable by outcome, one page per item with every view and its overlays.
    ``inputs``: the trusted folder the certificate's inputs are read inside (default: the folder explored; a
    certificate naming an input elsewhere: those views are not drawn and the pages say why);
    ``ladder``: a ladder output whose answers each item page shows. The report's value: the index page's path.

    Parameters
    ----------
    folder : str or Path
        A ``viewcert certify`` output folder or an export folder (``build-benchmark``).
    out : str or Path, optional
        Site folder (default ``FOLDER/explore``).
    workers : int, optional
        Processes drawing the views (default: every core).
    inputs : str or Path, optional
        Trusted folder the certificate's inputs are read inside (default: the folder explored).
    ladder : str or Path, optional
        A ``viewcert ladder`` output whose answers the item pages show.
    force : bool
        Replace another site in ``out``; without it, refused.

    Returns
    -------
    Report
        The site's lines; ``value``: the index page's path.
    """
    if not Path(folder).is_dir():
        raise InputError("not a folder", source=str(folder))
    root = trusted_root(folder if inputs is None else inputs)  # one line, exit 2, when not a folder
    if ladder is not None:
        trusted_root(ladder)
    site = Path(out) if out is not None else Path(folder) / "explore"  # a symlink planted there: refused
    with claimed(site, "site", identity={"folder": os.path.realpath(folder), "inputs": root, "ladder": None if
                                         ladder is None else os.path.realpath(ladder)}, force=force,
                 named=out is not None) as claim:  # locked; a folder holding an export or a certify output refused
        if _published(Path(folder)):  # an as-published certificate (certify images:...): its one page
            index = write_published_site(folder, claim.folder, inputs=root)
        else:
            index = write_site(folder, claim.folder, workers=workers or default_workers(), inputs=root, ladder=ladder)
    return Report((Line(f"wrote {index}"),), value=index)
