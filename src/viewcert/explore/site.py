"""``viewcert explore DIR --out SITE``: a static site of a certificate that opens from ``file://`` (no server, no
network; one small script and style sheet shipped in the package, ``explore/assets``).

Layout of SITE:

| file | what |
|---|---|
| ``index.html`` | every item in a table (client-side pages of ``PAGE_SIZE`` rows), sortable by column and filterable by outcome (``explore.outcomes``), with the count of each filter and the certificate's own count beside it |
| ``summary.html`` | the benchmark: its summary, settings, the plots that exist, the ladder report when one is beside it |
| ``items/NNNN.html`` | one item: its record, labels, and every view's image with an SVG overlay (``explore.overlays``) |
| ``views/NNNN_vK.png``, ``thumbs/NNNN.png`` | the views (hard links to the export's images, else copies) and index thumbnails (Pillow, at most ``THUMB_PX``) |
| ``plots/*.png``, ``assets/*`` | the certify plots, the script and style sheet |

Every received string (ids, names, labels, file names) is written through ``sanitize.html_text``; file names
in the site are the site's own (item index, view number), never received ones; the index's data is JSON in a
``<script type="application/json">`` block with ``< > &`` escaped as ``\\u003c`` … (no tag can close it).
Deterministic: the same folder gives the same bytes (no time stamps; items in certificate order).
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import stat
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from viewcert.certify import records
from viewcert.certify.records import ABSENT
from viewcert.errors import InputError
from viewcert.explore.outcomes import FILTERS, TITLES, certificate_counts, tags
from viewcert.explore.overlays import (
    ViewMarks,
    bond_marks,
    candidate_marks,
    interaction_scenes,
    item_cameras_from_inputs,
    missing_atoms,
    schematic_marks,
    sidecar_marks,
    task_items_from_input,
)
from viewcert.explore.source import Folder, Item, read_folder
from viewcert.io.atomic import json_dumps, write_text_atomic
from viewcert.io.confine import out_folder, put, target, trusted_root
from viewcert.io.images import check_png_pixels
from viewcert.io.received import read_received_bytes
from viewcert.limits import DEFAULT_LIMITS, active_limits
from viewcert.sanitize import console_text, json_text
from viewcert.sanitize import html_text as h

#: an image copied into the site is read whole: up to 1 GiB (the pixel limit is checked from its header first)
_FILE_LIMITS = DEFAULT_LIMITS.with_overrides(max_json_bytes=1 << 30)
PAGE_SIZE = 200
CHUNK = 40  # items a worker writes at a time (write_site's workers)
THUMB_PX = 96
ASSETS = ("explore.js", "explore.css")
#: what an item page says when an overlay cannot be drawn
NOTES = {"missing": "The missing atoms are not marked: the oracle run again on the inputs did not give the "
                    "certificate's number of missing atoms.",
         "task": "The consistent answers' poses are not drawn: the question could not be rebuilt as the certificate "
                 "has it from the export's input and settings (input moved, or a protocol file).",
         "interaction": "The bonds are not drawn over the images: the complexes were not found (give their folder: "
                        "viewcert explore DIR --inputs COMPLEXES)."}
LEGEND = (("atom", "atom seen (ID buffer)"), ("hidden", "atom with no pixel"), ("missing", "atom not recovered"),
          ("phantom", "phantom point"), ("near-miss", "near-miss point of δ*"), ("near-atom", "near-miss tuple's atom"),
          ("candidate", "atoms in a consistent answer's pose"), ("bond", "hydrogen bond (donor to acceptor)"))


def item_name(index: int) -> str:
    return f"{index:04d}"


def _page(title: str, body: str, *, root: str = "", script: bool = False) -> str:
    js = f'<script src="{root}assets/explore.js" defer></script>' if script else ""
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src 'self' data:; "
            "style-src 'self'; script-src 'self'\">"
            f"<title>{h(title)}</title><link rel=\"stylesheet\" href=\"{root}assets/explore.css\">{js}</head>\n"
            f"<body>\n{body}\n</body></html>\n")


def _json_block(obj) -> str:
    text = json_text(json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _fmt(x) -> str:
    if x is None or x is ABSENT:
        return "–"
    if isinstance(x, float):
        return f"{x:.6g}"
    if isinstance(x, list | dict):
        return json.dumps(x, ensure_ascii=False, sort_keys=True)
    return str(x)


def _kv_table(d: dict, cls: str = "kv") -> str:
    rows = "".join(f"<tr><th>{h(k)}</th><td>{h(_fmt(v))}</td></tr>" for k, v in d.items())
    return f'<table class="{cls}">{rows}</table>'


def _d(x) -> dict:
    return x if isinstance(x, dict) else {}


def _words(x) -> str:
    """A received list of names as one line of text (anything else as its text)."""
    return ", ".join(map(_fmt, x)) if isinstance(x, list) else ("" if x is None or x is ABSENT else _fmt(x))


# --- index --------------------------------------------------------------------------------------------------

def _columns(kind: str) -> tuple[str, ...]:
    if kind == "crystal":
        return ("formula", "atoms", "outcome", "reasons", "phantoms", "missing", "δ* (Å)")
    if kind == "task":
        return ("structure", "truth", "consistent", "exact ceiling", "partial ceiling")
    return ("complex", "bonds", "determined (rendered)", "ceiling (rendered)", "ceiling (ideal)")


def _row_values(kind: str, rec) -> list:
    """The index columns of one typed item (``_columns``)."""
    if kind == "crystal":
        orc = _d(rec.oracle)
        return [rec.formula, rec.n_atoms, rec.outcome, _words(rec.reasons), orc.get("n_phantoms"),
                orc.get("n_missing"), _d(rec.uniqueness_margin).get("delta_star")]
    if kind == "task":
        return [rec.structure_id, rec.truth, rec.n_consistent, rec.exact_ceiling, rec.partial_ceiling]
    r, i = _d(rec.rendered), _d(rec.ideal)
    return [rec.source_id, rec.n_bonds, r.get("n_determined"), r.get("ceiling"), i.get("ceiling")]


def _cell(v):
    """An index cell: numbers stay numbers (sorted as such), anything else becomes text."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int | float):
        return v if v == v and abs(v) != float("inf") else str(v)
    return "" if v is None or v is ABSENT else console_text(_fmt(v), keep_newlines=False)


def index_html(folder: Folder, item_tags: list[tuple[str, ...]], thumbs: dict[int, str]) -> str:
    kind = folder.kind
    cols = _columns(kind)
    counts = {f: sum(f in t for t in item_tags) for f in FILTERS}
    stated = certificate_counts(kind, folder.certificate)
    buttons = [f'<button type="button" data-filter="all" class="on">all <span class="count">{len(item_tags)}'
               "</span></button>"]
    for f in FILTERS:
        note = f' <span class="stated" title="the certificate\'s own count">(certificate: {stated[f]})</span>' \
            if f in stated else ""
        buttons.append(f'<button type="button" data-filter="{f}">{h(TITLES[f])} '
                       f'<span class="count">{counts[f]}</span>{note}</button>')
    rows = [[it.index, console_text(it.id, keep_newlines=False), list(t), [_cell(v) for v in _row_values(kind, it.record)],
             f"items/{item_name(it.index)}.html", thumbs.get(it.index, "")]
            for it, t in zip(folder.items, item_tags, strict=True)]
    head = "".join(f'<th data-col="{k}">{h(c)}</th>' for k, c in enumerate(cols))
    title = f"{_kind_title(kind)}: {len(folder.items)} items"
    body = (f"<header><h1>{h(title)}</h1><nav><a href=\"summary.html\">summary</a></nav></header>\n"
            f'<div id="filters">{"".join(buttons)}</div>\n'
            '<p id="shown" aria-live="polite"></p>\n'
            '<table id="items" class="index"><thead><tr><th data-col="index">#</th><th data-col="id">id</th>'
            f'<th>view</th>{head}<th>outcomes</th></tr></thead><tbody></tbody></table>\n'
            '<nav id="pager"></nav>\n'
            "<noscript><p>The index needs JavaScript (shipped with the site, no network); every item has its own "
            "page under items/.</p></noscript>\n"
            f'<script type="application/json" id="index-data">{_json_block({"page_size": PAGE_SIZE, "titles": TITLES, "rows": rows})}'
            "</script>")
    return _page(title, body, script=True)


def _kind_title(kind: str) -> str:
    return {"crystal": "certificate", "task": "transformation-task certificate",
            "interaction": "interaction certificate"}[kind]


# --- item pages ---------------------------------------------------------------------------------------------

def _svg(vm: ViewMarks, image: str | None) -> str:
    marks = []
    for m in vm.marks:
        group = f' data-group="{h(m.group)}"' if m.group else ""
        if m.u2 is not None:
            marks.append(f'<line class="mk {m.kind}"{group} x1="{m.u:.3f}" y1="{m.v:.3f}" x2="{m.u2:.3f}" '
                         f'y2="{m.v2:.3f}"><title>{h(m.title)}</title></line>')
            continue
        fill = f' fill="{h(m.colour)}"' if m.kind == "disc" and m.colour else ""
        marks.append(f'<circle class="mk {m.kind}"{group} data-u="{m.u:.3f}" data-v="{m.v:.3f}" cx="{m.u:.3f}" '
                     f'cy="{m.v:.3f}" r="{m.r:.2f}"{fill}><title>{h(m.title)}</title></circle>')
    img = f'<img src="{h(image)}" width="{vm.width}" height="{vm.height}" alt="{h(vm.name)}">' if image else ""
    camera = f' data-camera="{h(json.dumps(vm.camera, sort_keys=True))}"' if vm.camera is not None else ""
    return (f'<div class="view{" schematic" if vm.schematic else ""}" data-width="{vm.width}">'
            f'{img}<svg class="overlay"{camera} width="{vm.width}" height="{vm.height}" '
            f'viewBox="0 0 {vm.width} {vm.height}" xmlns="http://www.w3.org/2000/svg">{"".join(marks)}</svg></div>')


def _views_html(views: list[tuple[ViewMarks | None, str | None, str]], note: str = "") -> str:
    if not views:
        return '<p class="note">No images for this item (a certify output whose inputs could not be read).</p>'
    legend = "" if all(vm is None for vm, _, _ in views) else "".join(f'<label><input type="checkbox" data-layer="{k}" checked> <span class="swatch {k}"></span>'
                     f"{h(t)}</label>" for k, t in LEGEND)
    figs = []
    for k, (vm, image, name) in enumerate(views):
        cap = f"view {k}: {name}"
        if vm is None:
            figs.append(f'<figure class="fig" data-view="{k}"><img src="{h(image)}" alt="{h(name)}">'
                        f"<figcaption>{h(cap)}</figcaption></figure>")
            continue
        n_ph = sum(m.kind == "phantom" for m in vm.marks)
        if vm.schematic:
            cap += " (schematic: the drawn atoms projected through the item's cameras; no image in the folder)"
        figs.append(f'<figure class="fig" data-view="{k}" data-phantoms="{n_ph}">{_svg(vm, image)}'
                    f"<figcaption>{h(cap)}</figcaption></figure>")
    told = f'<p class="note overlay-note">{h(note)}</p>' if note else ""
    return f'{told}<div class="legend">{legend}</div><div class="views">{"".join(figs)}</div>'


def _labels_table(rec) -> str:
    levels = ("crystal_system", "point_group", "space_group", "symbol")
    rows = []
    for name, which in (("dataset (truth)", "dataset"), ("rendered cell", "rendered"),
                        ("reconstruction", "reconstructed")):
        lab = _d(rec.label(which))
        rows.append(f"<tr><th>{h(name)}</th>" + "".join(f"<td>{h(_fmt(lab.get(lv)))}</td>" for lv in levels) + "</tr>")
    head = "".join(f"<th>{h(lv)}</th>" for lv in levels)
    return f'<table class="labels"><tr><th></th>{head}</tr>{"".join(rows)}</table>'


def _crystal_body(rec) -> str:
    """The record section of a crystal or molecule item (``records.ItemOutcome``)."""
    parts = [f"<h2>outcome: {h(_fmt(rec.outcome))}</h2>",
             f"<p>reasons: {h(_words(rec.reasons) or 'none')}</p>"]
    if rec.error:
        parts.append(f'<p class="error">error: {h(rec.error)}</p>')
    parts.append("<h3>labels</h3>" + _labels_table(rec))
    if rec.label_mismatch:
        parts.append(f"<p>label mismatch at: {h(_fmt(rec.label_mismatch))}</p>")
    if rec.symmetry_raised:
        parts.append("<h3>symmetry raised</h3>" + _kv_table(_d(rec.symmetry_raised)))
    mol = _d(rec.molecule)
    if mol:
        parts.append("<h3>molecule</h3>" + _kv_table(mol))
    if rec.oracle:
        parts.append("<h3>oracle</h3>" + _kv_table(_d(rec.oracle)))
    ph = rec.phantoms or []
    if isinstance(ph, list) and ph:
        rows = "".join(f"<tr><td>{k + 1}</td>" + "".join(f"<td>{h(_fmt(x))}</td>" for x in (r if isinstance(r, list)
                                                                                             else [r])) + "</tr>"
                       for k, r in enumerate(ph))
        n = _d(rec.oracle).get("n_phantoms")
        more = f" (the certificate lists {len(ph)} of {h(_fmt(n))})" if isinstance(n, int) and n > len(ph) else ""
        parts.append(f'<h3>phantoms{more}</h3><table class="phantoms"><tr><th>#</th><th>Z</th><th>x (Å)</th>'
                     f"<th>y (Å)</th><th>z (Å)</th></tr>{rows}</table>")
    if rec.uniqueness_margin:
        parts.append("<h3>uniqueness margin δ* and its near-miss tuple</h3>" + _kv_table(_d(rec.uniqueness_margin)))
    return "".join(parts)


def _task_body(rec) -> str:
    """The record section of a transformation item (``records.TaskItemRecord``)."""
    consistent = rec.consistent if isinstance(rec.consistent, list) else []
    lis = "".join(f'<li class="{"truth" if a == rec.truth else ""}">{h(_fmt(a))}'
                  + (" (truth)" if a == rec.truth else "") + "</li>" for a in consistent)
    expl = rec.explanations if isinstance(rec.explanations, list) else []
    erows = "".join("<tr>" + "".join(f"<td>{h(_fmt(x))}</td>" for x in (e if isinstance(e, list) else [e])) + "</tr>"
                    for e in expl)
    shown = {"task": rec.task, "structure_id": rec.structure_id, "truth": rec.truth, "best_guess": rec.best_guess,
             "n_consistent": rec.n_consistent, "exact_ceiling": rec.exact_ceiling,
             "partial_ceiling": rec.partial_ceiling, "mirror": rec.mirror, "n_atoms": rec.n_atoms}
    return (f"<h2>truth: {h(_fmt(rec.truth))}</h2>" + _kv_table({k: v for k, v in shown.items() if v is not ABSENT})
            + f'<h3>consistent-answer set ({len(consistent)} answers the views cannot tell apart)</h3>'
            f'<ol class="consistent">{lis}</ol>'
            + (f'<h3>why each other answer draws the same images</h3><table class="kv">{erows}</table>' if erows else ""))


def _interaction_body(rec, truth: dict) -> str:
    """The record section of an interaction item (``records.InteractionItemRecord``) and its ground truth."""
    parts = [f"<h2>{h(_fmt(rec.source_id))}: {h(_fmt(rec.n_bonds))} bonds</h2>"]
    for which, views in (("rendered", rec.rendered), ("ideal", rec.ideal)):
        r = _d(views)
        entries = r.get("entries") if isinstance(r.get("entries"), list) else []
        rows = "".join(
            f'<tr class="{"det" if _d(e).get("determined") else "undet"}"><td>{h(_fmt(_d(e).get("entry")))}</td>'
            f'<td>{h(_fmt(_d(e).get("residue")))}</td><td>{"determined" if _d(e).get("determined") else "not determined"}'
            f'</td><td>{h(_fmt(_d(e).get("loss")))}</td></tr>' for e in entries)
        parts.append(f"<h3>{which} views: ceiling {h(_fmt(r.get('ceiling')))}, {h(_fmt(r.get('n_determined')))} of "
                     f"{h(_fmt(r.get('n_true')))} determined</h3>"
                     f'<table class="entries" data-views="{which}"><tr><th>bond</th><th>residue</th><th>verdict</th>'
                     f"<th>loss</th></tr>{rows}</table>" + _kv_table(_d(r.get("losses"))))
    bonds = _d(truth).get("bonds") if isinstance(_d(truth).get("bonds"), list) else []
    if bonds:
        keys = ("entry", "donor", "acceptor", "ligand_role", "d_da_A", "d_ha_A", "angle_deg")
        rows = "".join("<tr>" + "".join(f"<td>{h(_fmt(_d(b).get(k)))}</td>" for k in keys) + "</tr>" for b in bonds)
        parts.append("<h3>each bond's atoms (ground truth: atom indices of the complex, distances Å, angle °)</h3>"
                     f'<table class="bonds"><tr>{"".join(f"<th>{h(k)}</th>" for k in keys)}</tr>{rows}</table>')
    return "".join(parts)


def item_html(folder: Folder, it: Item, views, n: int, note: str = "") -> str:
    """One item's page; ``note``: what its overlays could not draw, and why."""
    rec = it.record
    prev_link = f'<a href="{item_name(it.index - 1)}.html">previous</a>' if it.index > 0 else ""
    next_link = f'<a href="{item_name(it.index + 1)}.html">next</a>' if it.index + 1 < n else ""
    nav = f'<nav><a href="../index.html">index</a> <a href="../summary.html">summary</a> {prev_link} {next_link}</nav>'
    if folder.kind == "crystal":
        body = _crystal_body(rec)
    elif folder.kind == "task":
        body = _task_body(rec)
    else:
        sid = rec.source_id
        gt = _d(folder.certificate.ground_truth).get(sid) if isinstance(sid, str) else None
        body = _interaction_body(rec, _d(gt))
    q = it.question or {}
    question = f'<details><summary>question</summary><p class="question">{h(_fmt(q.get("question")))}</p></details>' \
        if q.get("question") else ""
    raw = f"<details><summary>the certificate's record</summary><pre>{h(json_dumps(rec.to_dict()))}</pre></details>"
    page = (f'<header><h1 class="item-id">{h(it.id)}</h1>{nav}</header>\n<section class="record">{body}</section>\n'
            f"<section><h2>views</h2>{_views_html(views, note)}</section>\n{question}{raw}")
    return _page(f"item {it.id}", page, root="../", script=True)


# --- summary ------------------------------------------------------------------------------------------------

def summary_html(folder: Folder, site: Path, plots: list[str]) -> str:
    cert = folder.certificate
    parts = ["<header><h1>summary</h1><nav><a href=\"index.html\">index</a></nav></header>"]
    if folder.summary_text:
        parts.append(f"<pre class=\"summary\">{h(folder.summary_text)}</pre>")
    summary = cert.summary.to_dict() if isinstance(cert.summary, records.Summary) else cert.summary
    parts.append("<h2>certificate summary</h2>" + _kv_table(_d(summary)))
    parts.append("<h2>settings</h2>" + _kv_table(_settings(cert)))
    if plots:
        parts.append("<h2>plots</h2>" + "".join(f'<figure><img src="{h(p)}" alt="{h(p)}"><figcaption>{h(p)}'
                                                 "</figcaption></figure>" for p in plots))
    if folder.ladder is not None:
        rel = os.path.relpath(folder.ladder.resolve(), site.resolve())
        parts.append(f'<h2>attribution</h2><p><a id="ladder-report" href="{h(Path(rel).as_posix())}">the ladder '
                     "report beside this certificate</a></p>")
    return _page("summary", "\n".join(parts))


def _settings(cert: records.Certificate) -> dict:
    """The sections the summary page shows as the certificate's settings, those it has, in one order (format,
    task, protocol, tolerances, config, settings, observation model, libraries, digest)."""
    if isinstance(cert, records.ViewCertificate):
        shown = {"format": cert.format, "protocol": cert.protocol, "tolerances": cert.tolerances,
                 "config": cert.config, "observation_model": cert.observation_model, "libraries": cert.libraries,
                 "digest": cert.digest}
    elif isinstance(cert, records.TaskCertificate):
        shown = {"format": cert.format, "task": cert.task, "protocol": cert.protocol, "tolerances": cert.tolerances,
                 "settings": cert.settings, "observation_model": cert.observation_model,
                 "libraries": cert.libraries, "digest": cert.digest}
    else:
        shown = {"format": cert.format, "task": cert.task, "settings": cert.settings, "libraries": cert.libraries,
                 "digest": cert.digest}
    return {k: v for k, v in shown.items() if v is not ABSENT}


# --- writing ------------------------------------------------------------------------------------------------

def _put(site: Path, rel: str, data: bytes | str) -> None:
    """Write one page or thumbnail ``rel`` inside the site (``io.confine.put``: a temporary file renamed over
    the target, no symlink followed), without the fsyncs of ``io.atomic`` per file: the site is derived output
    that a rerun rewrites, and two fsyncs for each of 3,600 files of a 1,820-item site cost more than everything
    else on a busy disk. The index, written last, goes through ``write_text_atomic``."""
    put(site, rel, data)


def _link_or_copy(src: Path, site: Path, rel: str) -> str:
    """Put the folder's file ``src`` (inside the folder, ``explore.source.inside``) at ``rel`` in the site: a
    hard link, else a copy; never through a symlink standing at ``rel`` (``io.confine.target``)."""
    dst = target(site, rel)
    real = os.path.realpath(src)
    try:
        st, st_src = os.lstat(dst), os.stat(real)
        if stat.S_ISREG(st.st_mode) and (st.st_ino, st.st_dev) == (st_src.st_ino, st_src.st_dev):
            return dst.name
    except FileNotFoundError:
        pass
    tmp = dst.with_name(dst.name + ".tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(real, tmp)
        os.replace(tmp, dst)
    except OSError:
        tmp.unlink(missing_ok=True)
        put(site, rel, read_received_bytes(real, what="image", limits=_FILE_LIMITS))
    return dst.name


def _thumb(src: Path, site: Path, rel: str) -> None:
    from PIL import Image

    check_png_pixels(src, active_limits())  # from the header, before anything is decoded
    try:
        with Image.open(src) as im:
            im = im.convert("RGB")
            im.thumbnail((THUMB_PX, THUMB_PX))
            buf = io.BytesIO()
            im.save(buf, format="PNG", optimize=False)
    except (OSError, ValueError, Image.DecompressionBombError):
        raise InputError("image cannot be read as a PNG", source=str(src)) from None
    _put(site, rel, buf.getvalue())


@dataclass(frozen=True)
class Sources:
    """What overlays are drawn from besides the folder: a crystal certificate's item cameras from its inputs
    (``item_cameras_from_inputs``), a task export's questions rebuilt (``task_items_from_input``), an interaction
    export's complexes ({source id: (structure, cameras)}, ``interaction_scenes``)."""

    cameras: Callable | None = None
    tasks: dict | None = None
    scenes: dict = field(default_factory=dict)


def _n_missing(rec) -> int:
    n = _d(rec.oracle).get("n_missing")
    return n if isinstance(n, int) and not isinstance(n, bool) else 0


def _overlay_source(folder: Folder, it: Item, src: Sources):
    """(cell, cameras, cfg) or None, the missing atoms (cell indices), the after view's candidate marks, the
    views' bond marks of one item (each None where it does not apply or cannot be drawn), and a note saying what
    cannot be drawn and why."""
    got, missing, after, bonds, note = None, (), None, None, ""
    if folder.kind == "crystal" and src.cameras is not None and (not it.views or _n_missing(it.record) > 0):
        got = src.cameras(it.id)
        if got is not None:
            cell, _, cfg = got
            missing = missing_atoms(cell, cfg, it.record)
            if missing is None:
                missing, note = (), NOTES["missing"]
    elif folder.kind == "task":
        after = candidate_marks(src.tasks[it.id], it.record) if src.tasks and it.id in src.tasks else None
        note = "" if after is not None else NOTES["task"]
    elif folder.kind == "interaction":
        sid = it.record.source_id if isinstance(it.record.source_id, str) else ""
        truth = _d(folder.certificate.ground_truth).get(sid)
        gt_bonds = _d(truth).get("bonds") if isinstance(_d(truth).get("bonds"), list) else []
        if sid not in src.scenes:
            note = NOTES["interaction"] if gt_bonds else ""
        else:
            entries = _d(it.record.rendered).get("entries")
            verdicts = {str(_d(e).get("entry")): _d(e).get("determined")
                        for e in (entries if isinstance(entries, list) else [])}
            bonds = bond_marks(*src.scenes[sid], gt_bonds, verdicts)
    return got, missing, after, bonds, note


def _item_views(folder: Folder, it: Item, site: Path, src: Sources) -> tuple[list, str]:
    """([(marks or None, image href relative to items/, view name)], note) of one item; copies its images."""
    got, missing, after, bonds, note = _overlay_source(folder, it, src)
    out = []
    for k, v in enumerate(it.views):
        href = None
        if v.image is not None:
            name = f"{item_name(it.index)}_v{k}.png"
            _link_or_copy(v.image, site, f"views/{name}")
            href = f"../views/{name}"
        vm = None
        if folder.kind == "crystal" and v.sidecar is not None:
            vm = sidecar_marks(v, it.record, k, missing)
        elif after is not None and k == len(it.views) - 1:  # the after view: the consistent answers' poses
            vm = after
        elif bonds is not None and len(bonds) == len(it.views):
            vm = bonds[k]
        if vm is None and href is None:
            continue
        out.append((vm, href, v.name))
    if not out and got is not None:
        cell, cams, cfg = got
        out = [(vm, None, vm.name) for vm in schematic_marks(cell, cams, cfg, it.record, missing)]
    return out, note


def _write_items(folder: Folder, site: Path, src: Sources, indices) -> dict[int, str]:
    """Write the thumbnails, views and pages of the items at ``indices``; their thumbnails' hrefs by index."""
    thumbs: dict[int, str] = {}
    n = len(folder.items)
    for i in indices:
        it = folder.items[i]
        if it.views and it.views[0].image is not None:
            _thumb(it.views[0].image, site, f"thumbs/{item_name(it.index)}.png")
            thumbs[it.index] = f"thumbs/{item_name(it.index)}.png"
        views, note = _item_views(folder, it, site, src)
        _put(site, f"items/{item_name(it.index)}.html", item_html(folder, it, views, n, note))
    return thumbs


#: what forked workers write from (set by ``write_site`` before it forks; inherited, never pickled)
_JOB: tuple = ()


def _write_chunk(indices) -> dict[int, str]:
    return _write_items(*_JOB, indices)


def write_site(folder_path: str | os.PathLike, out: str | os.PathLike, *, progress=None, workers: int = 1,
               inputs: str | os.PathLike | None = None) -> Path:
    """Write the explorer of ``folder_path`` into ``out`` (module docstring); returns ``out/index.html``.
    ``inputs``: the trusted folder (as ``verify --inputs``; ``io.confine``): what the certificate names (a certify
    output's inputs, a task export's input, an interaction export's complexes by name) is read only inside it,
    to draw the overlays those need; None: nothing it names is read. ``out`` is written through real folders only
    (``io.confine.out_folder``, ``put``: no symlink followed out of it).
    ``workers`` > 1: the item pages are written by that many forked processes, CHUNK items at a time (each
    page depends only on its item: the same bytes as one process)."""
    global _JOB
    folder = read_folder(folder_path)
    root = None if inputs is None else trusted_root(inputs)
    site = out_folder(out)
    for name in ASSETS:
        _put(site, f"assets/{name}", files("viewcert.explore").joinpath("assets", name).read_bytes())
    src = Sources()
    if folder.kind == "crystal" and (not any(it.views for it in folder.items)
                                     or any(_n_missing(it.record) for it in folder.items)):
        src = Sources(cameras=item_cameras_from_inputs(folder.certificate, root,
                                                       str(Path(folder_path) / "certificate.json")))
    elif folder.kind == "task":
        src = Sources(tasks=task_items_from_input(folder.certificate, root))
    elif folder.kind == "interaction":
        src = Sources(scenes=interaction_scenes(folder.certificate, root))
    item_tags = [tags(folder.kind, it.record) for it in folder.items]
    n = len(folder.items)
    chunks = [range(k, min(k + CHUNK, n)) for k in range(0, n, CHUNK)]
    thumbs: dict[int, str] = {}
    if workers > 1 and len(chunks) > 1 and "fork" in multiprocessing.get_all_start_methods():
        _JOB = (folder, site, src)
        try:
            with ProcessPoolExecutor(min(workers, len(chunks)), mp_context=multiprocessing.get_context("fork")) as ex:
                for chunk, got in zip(chunks, ex.map(_write_chunk, chunks), strict=True):
                    thumbs.update(got)
                    if progress is not None:
                        progress(chunk[-1] + 1, n)
        finally:
            _JOB = ()
    else:
        for chunk in chunks:
            thumbs.update(_write_items(folder, site, src, chunk))
            if progress is not None:
                progress(chunk[-1] + 1, n)
    plots = [f"plots/{_link_or_copy(p, site, f'plots/{p.name}')}" for p in folder.plots]
    _put(site, "summary.html", summary_html(folder, site, plots))
    return write_text_atomic(target(site, "index.html"), index_html(folder, item_tags, thumbs))
