"""The explorer of an as-published certificate (``viewcert explore`` of a ``certify images:`` output): one static
page that shows each published image with what was read from it (kept small: the explorer is being reworked).

Per item: both outcomes (geometric, as published), whether they differ and why; per image: the image itself,
with its detections drawn over it (a circle per detected atom, its element: green when matched to an atom, red
when no projected atom explains it, orange when its colour is ambiguous) and every drawn atom's projection under
the resolved camera (a small cross). The images and the structures are read only inside the trusted folder
(``certify.trust``), each image only when its bytes hash to the SHA-256 the certificate records; received text is
escaped for HTML (``sanitize.html_text``); the page and the copied images are written through real folders only
(``io.confine.put``)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, cast

import numpy as np

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.certify.images_input import load_images, read_shipped_structure
from viewcert.certify.trust import find_inside, trusted_root
from viewcert.formats.image_sections import ImageProjection
from viewcert.formats.reader import receive
from viewcert.formats.records import PublishedCertificate, as_kind
from viewcert.io.confine import out_folder, put
from viewcert.io.received import read_received_bytes
from viewcert.observe.project import drawn_atoms
from viewcert.sanitize import html_text

__all__ = ["write_published_site"]

_STYLE = ("body{font-family:sans-serif;margin:1.5em}figure{display:inline-block;margin:0 1em 1em 0}"
          ".v{position:relative;display:inline-block}.v svg{position:absolute;left:0;top:0}"
          "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}")


def _overlay(im, projected: np.ndarray) -> str:
    """The SVG drawn over one image: its detections and the projected atoms (pixel frame of the image)."""
    w, h = int(im.width), int(im.height)
    parts = [f'<svg width="{w}" height="{h}" viewBox="0 0 {w} {h}">']
    for u, v in projected:
        if np.isfinite(u) and np.isfinite(v):
            parts.append(f'<path d="M{u - 2:.1f} {v:.1f}h4M{u:.1f} {v - 2:.1f}v4" stroke="#222" stroke-width="0.8"/>')
    for u, v, r, element, atom, _res in im.detections or []:
        colour = "#f39c12" if not element else ("#27ae60" if atom >= 0 else "#e74c3c")
        parts.append(f'<circle cx="{u:.2f}" cy="{v:.2f}" r="{max(r, 1.0):.2f}" fill="none" stroke="{colour}" '
                     f'stroke-width="1.2"><title>{html_text(element or "?")} residual {_res} px</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


def write_published_site(folder: str | Path, out: str | Path, *, inputs: str | Path) -> Path:
    """Write the page of the as-published certificate in ``folder`` into ``out`` (module docstring).

    Parameters
    ----------
    folder : str or Path
        A ``viewcert certify images:...`` output folder (its certificate.json).
    out : str or Path
        The site folder.
    inputs : str or Path
        The trusted folder the images.toml the certificate names is read inside.

    Returns
    -------
    Path
        ``out/index.html``.

    Raises
    ------
    InputError
        Not an as-published certificate, a stale digest, or its images.toml outside the trusted folder.
    """
    got = receive(Path(folder) / "certificate.json")
    cert = as_kind(got.certificate, PublishedCertificate, str(folder), "not an as-published certificate")
    root = trusted_root(inputs)
    spec = cert.inputs.spec or ""
    loc = (cert.location.input if cert.location else "") or ""
    candidates = ([(loc, "location.input")] if loc else []) + [(spec[len("images:"):], "inputs.spec")]
    toml = find_inside(candidates, root, what="input", label=spec, source=str(folder), want_dir=False)
    loaded = load_images(f"images:{toml}")
    by_file = {im.file: im for im in loaded.images}
    items = {it.id: it for it in loaded.items}
    site = out_folder(out)
    rows, figures = [], []
    for k, rec in enumerate(cert.items):
        geo = rec.geometric.outcome if rec.geometric else "error"
        pub = rec.as_published.outcome if rec.as_published else "error"
        rows.append(f"<tr><td>{html_text(rec.id)}</td><td>{geo}</td><td>{pub}</td><td>{bool(rec.differ)}</td>"
                    f"<td>{html_text(', '.join(rec.reasons or []) or rec.error or '')}</td></tr>")
        item = items.get(rec.id)
        structure = read_shipped_structure(item.structure_path, item.structure, item.cell_frame) if item else None
        pos = drawn_atoms(structure, item.tiling if structure.is_periodic else (1, 1, 1))[0] if structure and item else None
        figures.append(f"<h2>{html_text(rec.id)}</h2>")
        for n, im in enumerate(i for i in cert.images if i.item == rec.id):
            entry = by_file.get(im.file or "")
            data = read_received_bytes(entry.path, what="image") if entry else b""
            if not entry or hashlib.sha256(data).hexdigest() != im.sha256:
                figures.append(f"<p>{html_text(im.file)}: not the image certified (its SHA-256 differs)</p>")
                continue
            name = f"images/{k}_{n}.{'jpg' if im.format == 'jpeg' else 'png'}"
            put(site, name, data)
            p = cast(ImageProjection, im.projection)  # every image read has its projection (its SHA-256 above)
            proj = PixelProjection(cast(Any, p.matrix), cast(int, p.width), cast(int, p.height), cast(str, p.kind))
            projected = proj.project(pos)[0] if pos is not None else np.zeros((0, 2))
            figures.append(f'<figure><div class="v"><img src="{name}" width="{im.width}" height="{im.height}" '
                           f'alt="{html_text(im.file)}">{_overlay(im, projected)}</div><figcaption>'
                           f"{html_text(im.file)}: {im.detected} detected, {im.matched} matched, {im.unmatched} "
                           f"unmatched, centre RMS {im.centre_rms_px} px</figcaption></figure>")
    s = cert.summary
    head = (f"<h1>As-published ceiling</h1><p>{html_text(spec)}: as published {s.as_published.k}/{s.as_published.n},"
            f" geometric {s.geometric.k}/{s.geometric.n}; {s.n_differ} items differ. Circles: detections (green "
            "matched, red unmatched, orange ambiguous colour); crosses: every drawn atom projected by the resolved "
            "camera.</p>")
    table = ("<table><tr><th>item</th><th>geometric</th><th>as published</th><th>differ</th><th>why</th></tr>"
             + "".join(rows) + "</table>")
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>as-published ceiling</title><style>{_STYLE}"
            f"</style></head><body>{head}{table}{''.join(figures)}</body></html>\n")
    return put(site, "index.html", page)
