"""``viewcert explore DIR --out SITE``: a static site of a certificate that opens from ``file://`` (no server, no
network; one small script and style sheet and the 3D pane's viewer, 3Dmol.js with its licence, shipped in the
package, ``explore/assets``).

Layout of SITE:

| file | what |
|---|---|
| ``index.html`` | every item in a table (client-side pages of ``PAGE_SIZE`` rows), sortable by column and filterable by outcome (``explore.outcomes``), with the count of each filter and the certificate's own count beside it |
| ``map.html`` | every item a point of a scatter plot (``explore.chart``: δ* against atoms for crystals, the atoms not recovered against atoms where no δ* is recorded; the points drawn on a canvas from the page's data), a click opens it |
| ``summary.html`` | the benchmark: its summary and headline settings in words and units (``explore.summary_words``; the settings as written folded), the plots that exist, the ladder report when one is beside it |
| ``items/NNNN.html`` | one item: every view's image with an SVG overlay (``explore.overlays``) in a grid that fits one screen, the 3D pane (a certify output's cell drawn again, an export's from its sidecars: ``explore.rendered``), then its record in words (``explore.wording``) and, with a ladder output, every model's answers (``explore.answers``) |
| ``views/NNNN_vK.png``, ``thumbs/NNNN.png`` | the views (hard links to the export's images, else copies; a certify output's drawn by the explorer, ``explore.rendered``) and index thumbnails (Pillow, at most ``THUMB_PX``) |
| ``plots/*.png``, ``assets/*`` | the certify plots, the script and style sheet, the 3D viewer (``3Dmol-min.js``) and its licence |

Every received string (ids, names, labels, file names) is written through ``sanitize.html_text``; file names
in the site are the site's own (item index, view number), never received ones; the index's data is JSON in a
``<script type="application/json">`` block with ``< > &`` escaped as ``\\u003c`` … (no tag can close it).
Deterministic: the same folder gives the same bytes (no time stamps; items in certificate order).
"""

from __future__ import annotations

import dataclasses
import io
import json
import multiprocessing
import os
import stat
import tempfile
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from importlib.resources import files
from itertools import islice
from pathlib import Path

import numpy as np

from viewcert.errors import InputError, ViewcertError
from viewcert.explore import answers as model_answers
from viewcert.explore.kinds import Pages, Sources
from viewcert.explore.outcomes import (
    TITLES,
)
from viewcert.explore.overlays import (
    ViewMarks,
    rendered_marks,
)
from viewcert.explore.record import _d, _fmt, _kv_table
from viewcert.explore.source import Folder, Item, read_folder
from viewcert.formats.records import ABSENT
from viewcert.io.atomic import json_dumps, write_chunks_atomic
from viewcert.io.confine import out_folder, put, target, trusted_root
from viewcert.io.images import open_checked_png
from viewcert.io.received import read_received_bytes
from viewcert.limits import active_limits, using_limits
from viewcert.sanitize import console_text, json_text
from viewcert.sanitize import html_text as h

#: an image copied into the site is read whole: up to 1 GiB (the pixel limit is checked from its header first)
_IMAGE_BYTES = 1 << 30
PAGE_SIZE = 200
CHUNK = 40  # items a worker writes at a time (write_site's workers)
THUMB_PX = 96
ASSETS = ("explore.js", "explore.css", "3Dmol-min.js", "3Dmol-LICENSE.txt")
#: layers drawn but switched off when a page opens (every drawn atom's ring crowds a thumbnail)
LEGEND_OFF = ("atom",)
#: the widest a view grid is before it wraps, by image aspect (columns)
GRID_COLUMNS = 6


def item_name(index: int) -> str:
    return f"{index:04d}"


def _page(title: str, body: str, *, root: str = "", script: bool = False, viewer: bool = False) -> str:
    js = f'<script src="{root}assets/explore.js" defer></script>' if script else ""
    if viewer:  # the vendored 3D viewer, before the page's script (deferred scripts run in order)
        js = f'<script src="{root}assets/3Dmol-min.js" defer></script>' + js
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src 'self' data:; "
            "style-src 'self'; script-src 'self'\">"
            f"<title>{h(title)}</title><link rel=\"stylesheet\" href=\"{root}assets/explore.css\">{js}</head>\n"
            f"<body>\n{body}\n</body></html>\n")


def _json_block(obj) -> str:
    text = json_text(json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


# --- index --------------------------------------------------------------------------------------------------

def _cell(v):
    """An index cell: numbers stay numbers (sorted as such), anything else becomes text."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int | float):
        return v if v == v and abs(v) != float("inf") else str(v)
    return "" if v is None or v is ABSENT else console_text(_fmt(v), keep_newlines=False)


def index_row(pages: Pages, it: Item, filters: tuple[str, ...], thumb: str, answers=None) -> str:
    """One item's row of the index's data (JSON text, escaped as ``_json_block``): index, id, filters, column
    cells, page, thumbnail, the id as held when the shown one is escaped, the answers' verdict codes."""
    shown = console_text(it.id, keep_newlines=False)
    return _json_block([it.index, shown, list(filters),
                        [_cell(v) for v in pages.row_values(it.record)] + _answer_cells(answers, it),
                        f"items/{item_name(it.index)}.html", thumb, None if shown == it.id else it.id,
                        _verdict_codes(answers, it)])


#: where the index's rows go in the page ``index_parts`` makes (a NUL: escaped in every received text)
ROWS_HERE = "\x00rows\x00"


def index_parts(folder: Folder, counts: dict[str, int], n: int, answers=None) -> tuple[str, str]:
    """The index (module docstring) as the text before and after its rows (``index_row``, comma-separated):
    ``counts``: items per filter, ``n``: items; ``answers``: a ladder output's (``explore.answers``): a column per
    model (right or wrong on R4) and the answer filters."""
    pages = folder.pages
    models = answers.models if answers is not None else ()
    cols = pages.COLUMNS + tuple(f"{m} (R4)" for m in models)
    offered = pages.FILTERS + (model_answers.FILTERS if answers is not None else ())
    titles = TITLES | model_answers.TITLES
    if answers is not None and answers.statuses is not None:  # the ladder's item statuses (its report links them)
        offered += model_answers.STATUS_FILTERS
        titles |= model_answers.STATUS_TITLES
    stated = pages.counts(folder.certificate)
    buttons = [f'<button type="button" data-filter="all" class="on">all <span class="count">{n}'
               "</span></button>"]
    for f in offered:
        note = f' <span class="stated" title="the certificate\'s own count">(certificate: {stated[f]})</span>' \
            if f in stated else ""
        buttons.append(f'<button type="button" data-filter="{f}">{h(titles[f])} '
                       f'<span class="count">{counts.get(f, 0)}</span>{note}</button>')
    head = "".join(f'<th data-col="{k}">{h(c)}</th>' for k, c in enumerate(cols))
    title = f"{pages.TITLE}: {n} items"
    data = _json_block({"page_size": PAGE_SIZE, "titles": titles, "models": list(models),
                        "rungs": list(answers.rungs) if answers is not None else [], "rows": []})
    data = data.replace('"rows":[]', f'"rows":[{ROWS_HERE}]', 1)  # sorted keys: after "models", "page_size"
    body = (f"<header><h1>{h(title)}</h1><nav><a href=\"summary.html\">summary</a> <a href=\"map.html\">map</a>"
            "</nav></header>\n"
            f'<div id="filters">{"".join(buttons)}</div>\n'
            + (_answer_filters(answers) if answers is not None else "") +
            '<p id="shown" aria-live="polite"></p>\n'
            '<p class="save"><button type="button" id="save-ids">save these items as an ids file</button> '
            '<span class="note">(ids.txt, one item id per line: <code>viewcert build-benchmark --ids</code>, '
            '<code>viewcert ladder --ids</code>; made in the page, nothing is sent)</span> '
            '<span id="save-note" aria-live="polite"></span></p>\n'
            '<table id="items" class="index"><thead><tr><th data-col="index">#</th><th data-col="id">id</th>'
            f'<th>view</th>{head}<th>outcomes</th></tr></thead><tbody></tbody></table>\n'
            '<nav id="pager"></nav>\n'
            "<noscript><p>The index needs JavaScript (shipped with the site, no network); every item has its own "
            "page under items/.</p></noscript>\n"
            f'<script type="application/json" id="index-data">{data}'
            "</script>")
    before, after = _page(title, body, script=True).split(ROWS_HERE)
    return before, after


def _answer_cells(answers, it: Item) -> list:
    """Per model: right or wrong on R4 ('' without an answer) for the index."""
    if answers is None:
        return []
    v = answers.verdicts(it.id, _question_id(it))
    return ["" if v.get((m, "R4")) is None else ("right" if v[(m, "R4")] else "wrong") for m in answers.models]


def _verdict_codes(answers, it: Item) -> list[str] | None:
    """Per model, one letter per rung of ``answers.rungs``: r (right), w (wrong), - (no verdict): what the index's
    answer filters read (``index.html#model=M&R4=wrong``)."""
    if answers is None:
        return None
    v = answers.verdicts(it.id, _question_id(it))
    return ["".join("-" if v.get((m, r)) is None else "rw"[not v[(m, r)]] for r in answers.rungs)
            for m in answers.models]


def _answer_filters(answers) -> str:
    """The answer filters' controls (filled by the script: a model, then right / wrong per rung)."""
    return ('<div id="answer-filters" class="answer-filters"><label>model answers: <select id="f-model">'
            '</select></label><span id="f-rungs"></span></div>\n')



# --- item pages ---------------------------------------------------------------------------------------------

def _svg(vm: ViewMarks, image: str | None) -> str:
    """One view: its image and the SVG of its marks in the image's pixel frame (viewBox), both scaled together to
    the grid's width; the points' rings grow with the image (``_ring``) so that they stay visible on a thumbnail."""
    grow = max(1.0, vm.width / 320)
    marks = []
    for m in vm.marks:
        group = f' data-group="{h(m.group)}"' if m.group else ""
        if m.u2 is not None:
            marks.append(f'<line class="mk {m.kind}"{group} x1="{m.u:.3f}" y1="{m.v:.3f}" x2="{m.u2:.3f}" '
                         f'y2="{m.v2:.3f}"><title>{h(m.title)}</title></line>')
            continue
        r = m.r * (grow if m.kind != "atom" else 1.0)
        marks.append(f'<circle class="mk {m.kind}"{group} data-u="{m.u:.3f}" data-v="{m.v:.3f}" cx="{m.u:.3f}" '
                     f'cy="{m.v:.3f}" r="{r:.2f}"><title>{h(m.title)}</title></circle>')
    img = f'<img src="{h(image)}" width="{vm.width}" height="{vm.height}" alt="{h(vm.name)}">' if image else ""
    camera = f' data-camera="{h(json.dumps(vm.camera, sort_keys=True))}"' if vm.camera is not None else ""
    return (f'<div class="view" data-width="{vm.width}" data-height="{vm.height}" title="click to enlarge">'
            f'{img}<svg class="overlay"{camera} width="{vm.width}" height="{vm.height}" '
            f'viewBox="0 0 {vm.width} {vm.height}" preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg">'
            f'{"".join(marks)}</svg></div>')


def _layers(pages: Pages, views) -> list[tuple[str, str]]:
    """The legend's layers: those of the item's kind that some view draws."""
    drawn = {"-".join(m.kind.split()[:2]) for vm, _, _ in views if vm is not None for m in vm.marks}
    return [(k, t) for k, t in pages.LEGEND if k in drawn]


def _legend(pages: Pages, views) -> str:
    def swatch(k: str) -> str:
        shape = (f'<line class="sw line sw-{k}" x1="1" y1="7" x2="17" y2="7"/>' if k.startswith("bond")
                 else f'<circle class="sw sw-{k}" cx="9" cy="7" r="5"/>')
        return f'<svg class="swatch" width="18" height="14" viewBox="0 0 18 14">{shape}</svg>'

    boxes = "".join(f'<label><input type="checkbox" data-layer="{k}"{"" if k in LEGEND_OFF else " checked"}> '
                    f"{swatch(k)}{h(t)}</label>" for k, t in _layers(pages, views))
    return f'<div class="legend">{boxes}</div>' if boxes else ""


def _element_key(elements) -> str:
    """The element colour key: each element drawn in the views with its Jmol colour (``render.palette``)."""
    if not elements:
        return ""
    from viewcert.elements import atomic_number  # lazy: start-up
    from viewcert.render.palette import hex_colour, jmol_colours  # lazy: start-up

    items = []
    for sym in elements:
        try:
            colour = hex_colour(jmol_colours([atomic_number(sym)])[0])
        except ViewcertError:
            continue
        items.append(f'<span class="el"><svg width="12" height="12" viewBox="0 0 12 12"><circle class="el-dot" cx="6" cy="6" r="5" '
                     f'fill="{colour}" stroke="#333" stroke-width="0.7"/></svg>{h(sym)}</span>')
    return f'<div class="key">element colours: {"".join(items)}</div>' if items else ""


def _grid_class(views) -> str:
    """Columns of the view grid: every view in one row when they fit (square images up to ``GRID_COLUMNS``),
    else two rows."""
    n = len(views)
    wide = any(vm is not None and vm.width > 1.2 * vm.height for vm, _, _ in views)
    cols = n if n <= GRID_COLUMNS and not (wide and n > 3) else -(-n // 2)
    return f"views grid cols-{min(cols, GRID_COLUMNS)}"


def _views_html(pages: Pages, views: list[tuple[ViewMarks | None, str | None, str]], note: str = "",
                elements=()) -> str:
    if not views:
        why = note or "a certify output whose inputs could not be read"
        return f'<p class="note">No images for this item ({h(why)}).</p>'
    figs = []
    for k, (vm, image, name) in enumerate(views):
        cap = f"view {k}: {name}"
        if vm is None:
            figs.append(f'<figure class="fig" data-view="{k}"><div class="view" title="click to enlarge">'
                        f'<img src="{h(image)}" alt="{h(name)}"></div><figcaption>{h(cap)}</figcaption></figure>')
            continue
        n_ph = sum(m.kind == "phantom" for m in vm.marks)
        figs.append(f'<figure class="fig" data-view="{k}" data-phantoms="{n_ph}">{_svg(vm, image)}'
                    f"<figcaption>{h(cap)}</figcaption></figure>")
    told = f'<p class="note overlay-note">{h(note)}</p>' if note else ""
    return (f'{told}<div class="keys">{_legend(pages, views)}{_element_key(elements)}</div>'
            f'<div class="{_grid_class(views)}">{"".join(figs)}</div>')


def _question_id(it: Item):
    return (it.question or {}).get("id")


def answers_html(answers, it: Item) -> str:
    """Every model's answer on every rung of the item (a ladder output's), and whether it scored."""
    if answers is None:
        return ""
    per = answers.of(it.id, _question_id(it))
    verdicts = answers.verdicts(it.id, _question_id(it))
    if not per:
        return '<h2>model answers</h2><p class="note">The ladder output has no answer for this item.</p>'
    head = "".join(f"<th>{h(r)}</th>" for r in answers.rungs)
    rows = []
    for m in answers.models:
        cells = []
        for r in answers.rungs:
            samples = per.get((m, r), ())
            ok = verdicts.get((m, r))
            verdict = "" if ok is None else ("right" if ok else "wrong")
            shown = " · ".join((a.answer or f"({a.status or 'no answer'})") + (" ✓" if a.score > 0.5 else " ✗")
                               for a in samples)
            cells.append(f'<td class="{verdict}" data-rung="{h(r)}" data-verdict="{verdict}">{h(shown)}</td>')
        rows.append(f'<tr data-model="{h(m)}"><th>{h(m)}</th>{"".join(cells)}</tr>')
    return ("<h2>model answers</h2><p class=\"note\">Each sample's answer (✓: it scored); a cell is green when the "
            "model is right on that rung as the ladder scored it (its item_outcomes.csv; without one, the majority vote "
            "of its parsed samples, ties to the first, scored), red when wrong.</p>"
            f'<table class="answers"><tr><th>model</th>{head}</tr>{"".join(rows)}</table>')


def item_html(folder: Folder, it: Item, shown: Shown, n: int, answers=None) -> str:
    """One item's page: the views first (a grid that fits one screen; a click enlarges a view), then the record
    in words; ``shown.note``: what its overlays could not draw, and why."""
    rec = it.record
    prev_link = f'<a href="{item_name(it.index - 1)}.html">previous</a>' if it.index > 0 else ""
    next_link = f'<a href="{item_name(it.index + 1)}.html">next</a>' if it.index + 1 < n else ""
    nav = f'<nav><a href="../index.html">index</a> <a href="../summary.html">summary</a> {prev_link} {next_link}</nav>'
    q = it.question or {}
    body = folder.pages.body(folder, rec, shown, q)
    question = f'<details><summary>question</summary><p class="question">{h(_fmt(q.get("question")))}</p></details>' \
        if q.get("question") else ""
    raw = f"<details><summary>the certificate's record</summary><pre>{h(json_dumps(rec.to_dict()))}</pre></details>"
    pane = ("" if shown.pane is None else
            '<section class="pane"><h2>3D</h2><p class="note">The rendered cell in 3D (3Dmol.js, shipped with the '
            "site): drag to turn, scroll to zoom; phantoms as magenta spheres, the near-miss tuple's atoms in amber, "
            'the cell box in black; positions rounded to 0.001 Å.</p><div id="pane3d" class="pane3d"></div>'
            f'<script type="application/json" id="structure-3d">{_json_block(shown.pane)}</script></section>\n')
    page = (f'<header><h1 class="item-id">{h(it.id)}</h1>{nav}</header>\n'
            f'<section class="views-section">{_views_html(folder.pages, shown.views, shown.note, shown.elements)}'
            f'</section>\n{pane}<section class="answers">{answers_html(answers, it)}</section>\n'
            f'<section class="record">{body}</section>\n{question}{raw}')
    return _page(f"item {it.id}", page, root="../", script=True, viewer=shown.pane is not None)


# --- map ----------------------------------------------------------------------------------------------------

#: where the map's point rows go in the page ``map_parts`` makes (a NUL: escaped in every received text)
POINTS_HERE = "\x00points\x00"


def map_point(e: Entry) -> str | None:
    """One item's row of the map's data (``chart.point_row``; JSON text, escaped as ``_json_block``), None when
    it has no point."""
    from viewcert.explore.chart import point_row  # lazy: as map_parts

    row = point_row(e.index, console_text(e.id, keep_newlines=False), e.point, e.tags)
    return None if row is None else _json_block(row)


def map_parts(folder: Folder, extent) -> tuple[str, str]:
    """``map.html`` (``explore.chart``) as the text before and after its point rows (``map_point``,
    comma-separated): the plot's frame and axes as SVG from ``extent`` (``chart.Extent``: the items' largest
    values), the points drawn by the page's script on a canvas over it; a click on a point opens its page."""
    from viewcert.explore import chart  # lazy: the map only

    pages = folder.pages
    delta = pages.map_delta(folder.certificate)
    x_top, y_top = extent.tops(delta, y_floor=1.0 if pages.COUNT_AXIS else 1e-9)
    keys = "".join(f'<span class="el"><svg width="12" height="12" viewBox="0 0 12 12"><circle class="pt {c}" '
                   f'cx="6" cy="6" r="4.5"/></svg>{h(t)}</span>'
                   for c, t in (("correct", "correct"), ("incorrect", "incorrect"), ("item_error", "error"),
                                ("none ph", "with phantoms (ring)")))
    left_out = extent.left_out
    note = f'<p class="note">{left_out} items have no value to plot and are left out.</p>' if left_out else ""
    xl, yl = pages.AXES
    data = _json_block({"width": chart.WIDTH, "height": chart.HEIGHT, "pad": chart.PAD, "radius": chart.RADIUS,
                        "x_top": x_top, "y_top": y_top, "x_label": xl, "y_label": yl, "points": []})
    data = data.replace('"points":[]', f'"points":[{POINTS_HERE}]', 1)
    body = ("<header><h1>map of the benchmark</h1><nav><a href=\"index.html\">index</a> "
            "<a href=\"summary.html\">summary</a></nav></header>\n"
            f'<p class="note">Every item one point; a click opens its page.{pages.MAP_NOTE}</p>'
            f'<div class="key">{keys}</div>'
            f'<div class="map-plot"><canvas id="map-points" width="{chart.WIDTH}" height="{chart.HEIGHT}"></canvas>'
            f"{chart.frame_svg(pages.AXES, x_top, y_top, h, delta, pages.COUNT_AXIS)}</div>{note}\n"
            "<noscript><p>The map's points need JavaScript (shipped with the site, no network); the index lists "
            "every item.</p></noscript>\n"
            f'<script type="application/json" id="map-data">{data}</script>')
    before, after = _page("map", body, script=True).split(POINTS_HERE)
    return before, after


# --- summary ------------------------------------------------------------------------------------------------

def summary_html(folder: Folder, site: Path, plots: list[str], truth: dict | None = None) -> str:
    """``summary.html``: summary.txt when the folder has one, the certificate's summary and headline settings in
    words (``explore.summary_words``; the settings as written folded below), the plots, the ladder report;
    ``truth``: the items' truth counts (``certify.summary.truth_counts``)."""
    from viewcert.explore.summary_words import settings_html, summary_words_html  # lazy: this page only

    cert = folder.certificate
    parts = ["<header><h1>summary</h1><nav><a href=\"index.html\">index</a> <a href=\"map.html\">map</a></nav>"
             "</header>"]
    if folder.summary_text:
        parts.append(f"<pre class=\"summary\">{h(folder.summary_text)}</pre>")
    parts.append("<h2>certificate summary</h2>" + summary_words_html(_d(cert.summary), _truth_words(folder, truth)))
    settings = cert.shown_settings()
    parts.append("<h2>settings</h2>" + settings_html(settings)
                 + "<details><summary>the certificate's settings as written</summary>"
                 + _kv_table({k: v for k, v in settings.items()}) + "</details>")
    if plots:
        parts.append("<h2>plots</h2>" + "".join(f'<figure><img src="{h(p)}" alt="{h(p)}"><figcaption>{h(p)}'
                                                 "</figcaption></figure>" for p in plots))
    if folder.ladder is not None:
        rel = os.path.relpath(folder.ladder.resolve(), site.resolve())
        parts.append(f'<h2>attribution</h2><p><a id="ladder-report" href="{h(Path(rel).as_posix())}">the ladder '
                     "report beside this certificate</a></p>")
    return _page("summary", "\n".join(parts))


def _truth_words(folder: Folder, truth: dict | None) -> str | None:
    """The truth R1 was scored against in words (``certify.summary.truth_text``, as summary.txt says it) from the
    items' ``truth`` counts (``certify.summary.truth_counts``, gathered as the pages are written: a crystal or
    molecule certificate's; none for another kind)."""
    from viewcert.certify.summary import truth_text  # lazy: this page only

    s = folder.certificate.summary
    score, rule = getattr(s, "score", None), getattr(s, "truth", None)
    if not truth or not isinstance(score, str) or not isinstance(rule, str):
        return None
    return truth_text(truth, score, rule)


# --- writing ------------------------------------------------------------------------------------------------

def _put(site: Path, rel: str, data: bytes | str) -> None:
    """Write one page or thumbnail ``rel`` inside the site (``io.confine.put``: a temporary file renamed over
    the target, no symlink followed), without the fsyncs of ``io.atomic`` per file: the site is derived output
    that a rerun rewrites, and two fsyncs for each of 3,600 files of a 1,820-item site cost more than everything
    else on a busy disk. The index, written last, goes through ``write_chunks_atomic``."""
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
        with using_limits(active_limits().with_overrides(max_json_bytes=_IMAGE_BYTES)):
            put(site, rel, read_received_bytes(real, what="image"))
    return dst.name


def _thumb(src: Path, site: Path, rel: str) -> None:
    from PIL import Image

    try:
        with open_checked_png(src) as im:  # its declared size checked from the header, before Pillow opens it
            im = im.convert("RGB")
            im.thumbnail((THUMB_PX, THUMB_PX))
            buf = io.BytesIO()
            im.save(buf, format="PNG", optimize=False)
    except InputError:  # its declared size above --max-pixels, or not a PNG: one line naming it
        raise
    except (OSError, ValueError, Image.DecompressionBombError):
        raise InputError("image cannot be read as a PNG", source=str(src)) from None
    _put(site, rel, buf.getvalue())


@dataclass(frozen=True)
class Shown:
    """What an item page shows of its views: [(marks or None, image href relative to items/, view name)], the
    note saying what could not be drawn, the elements drawn (their colour key)."""

    views: list
    note: str = ""
    elements: tuple[str, ...] = ()
    pane: dict | None = None  # the 3D pane's structure (``explore.rendered.pane_data``, an export's ``sidecar_pane``)


def _rendered(it: Item, got, missing, site: Path) -> Shown:
    """A certify output's item: its views drawn at the certificate's settings (``explore.rendered``), written
    under views/, with their overlays."""
    from viewcert.elements import symbols  # lazy: start-up
    from viewcert.explore.rendered import (  # lazy: start-up (numba's renderer, certify outputs only)
        CENTRES_NOTE,
        frames_on_centres,
        pane_data,
        rendered_views,
    )

    cell, _, cfg = got
    out = []
    rvs = rendered_views(cell, cfg)
    for k, rv in enumerate(rvs):
        name = f"{item_name(it.index)}_v{k}.png"
        _put(site, f"views/{name}", rv.png)
        out.append((rendered_marks(rv, rv.camera.name, it.record, k, missing), f"../views/{name}", rv.camera.name))
    elements = tuple(dict.fromkeys(symbols(np.unique(cell.numbers))))
    return Shown(out, CENTRES_NOTE if frames_on_centres(cfg) else "", elements, pane_data(cell, cfg, it.record))


def _sidecar_elements(views) -> tuple[str, ...]:
    """The elements an export's sidecars draw (text, as received; escaped where shown)."""
    seen: dict[str, None] = {}
    for v in views:
        for a in (_d(v.sidecar).get("atoms") or []) if isinstance(_d(v.sidecar).get("atoms"), list) else []:
            if isinstance(a, dict) and isinstance(a.get("element"), str):
                seen.setdefault(a["element"], None)
    return tuple(sorted(seen))


def _item_views(folder: Folder, it: Item, site: Path, src: Sources) -> Shown:
    """The views of one item (``Shown``); copies or draws its images."""
    got, missing, after, bonds, note = folder.pages.overlay(folder, it, src)
    out = []
    names = folder.pages.shown_view_names(folder.certificate)
    first = next((v.sidecar for v in it.views if v.sidecar is not None), None)
    pane, groups = (None, None) if first is None else folder.pages.sidecar_pane(first, it.record)  # an export's 3D
    for k, v in enumerate(it.views):
        href = None
        if v.image is not None:
            name = f"{item_name(it.index)}_v{k}.png"
            _link_or_copy(v.image, site, f"views/{name}")
            href = f"../views/{name}"
        vm = folder.pages.view_marks(v, k, it, missing, after, bonds, groups)
        if vm is None and href is None:
            continue
        out.append((vm, href, names[k] if len(names) == len(it.views) else v.name))
    if not out and got is not None:
        shown = _rendered(it, got, missing, site)
        return Shown(shown.views, " ".join(x for x in (note, shown.note) if x), shown.elements, shown.pane)
    if not out and src.undrawn:
        note = " ".join(x for x in (note, src.undrawn) if x)
    return Shown(out, note, _sidecar_elements(it.views), pane)


@dataclass(frozen=True)
class Entry:
    """What the index and the map take of one item once its page is written (held for its chunk only): its
    index, id, filters (``tags``), its index row (JSON text, ``index_row``) and its point on the map
    (``chart.point``)."""

    index: int
    id: str
    tags: tuple[str, ...]
    row: str
    point: tuple
    truth: dict = field(default_factory=dict)  # its ``certify.summary.truth_counts`` (a crystal's; else {})


def item_tags(pages: Pages, it: Item, answers=None) -> tuple[str, ...]:
    """The index filters one item belongs to: its outcomes' and, with a ladder output, its answers'."""
    got = pages.tags(it.record)
    if answers is not None:
        got += model_answers.answer_tags(answers.verdicts(it.id, _question_id(it)), answers.models)
        got += answers.status_tags(it.id, _question_id(it))
    return got


def _write_items(folder: Folder, site: Path, src: Sources, indices) -> list[Entry]:
    """Write the thumbnails, views and pages of the items at ``indices``; what the index and map keep of each."""
    out: list[Entry] = []
    n = len(folder.items)
    for i in indices:
        it = folder.items[i]
        shown = _item_views(folder, it, site, src)
        first = it.views[0].image if it.views and it.views[0].image is not None else None
        if first is None and shown.views and shown.views[0][1]:  # a view the explorer drew: views/NNNN_v0.png
            first = site / "views" / Path(shown.views[0][1]).name
        thumb = ""
        if first is not None:
            thumb = f"thumbs/{item_name(it.index)}.png"
            _thumb(first, site, thumb)
        _put(site, f"items/{item_name(it.index)}.html", item_html(folder, it, shown, n, src.answers))
        t = item_tags(folder.pages, it, src.answers)
        out.append(Entry(it.index, it.id, t, index_row(folder.pages, it, t, thumb, src.answers),
                         folder.pages.point(it.record), folder.pages.truth_counts(it.record)))
    return out


#: what forked workers write from (set by ``write_site`` before it forks; inherited, never pickled)
_JOB: tuple = ()


def _write_chunk(indices) -> list[Entry]:
    *job, limits = _JOB
    with using_limits(limits):  # those in force where the site is written
        return _write_items(*job, indices)


def _entries(folder: Folder, site: Path, src: Sources, workers: int, progress) -> Iterator[list[Entry]]:
    """Write every item's page, CHUNK items at a time (by ``workers`` forked processes when > 1, at most
    2 × ``workers`` chunks in flight: what waits to be yielded is bounded too), and yield what the index and map
    keep of each chunk, in item order."""
    global _JOB
    n = len(folder.items)
    chunks = (range(k, min(k + CHUNK, n)) for k in range(0, n, CHUNK))
    if workers > 1 and n > CHUNK and "fork" in multiprocessing.get_all_start_methods():
        _JOB = (folder, site, src, active_limits())
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as ex:
                pending = deque((c, ex.submit(_write_chunk, c)) for c in islice(chunks, 2 * workers))
                while pending:
                    chunk, fut = pending.popleft()
                    got = fut.result()
                    pending.extend((c, ex.submit(_write_chunk, c)) for c in islice(chunks, 1))
                    if progress is not None:
                        progress(chunk[-1] + 1, n)
                    yield got
        finally:
            _JOB = ()
        return
    for chunk in chunks:
        got = _write_items(folder, site, src, chunk)
        if progress is not None:
            progress(chunk[-1] + 1, n)
        yield got


def _sources(folder: Folder, folder_path, root, ladder) -> Sources:
    """What the overlays and answers are drawn from besides the folder (``Sources``)."""
    src = folder.pages.sources(folder, folder_path, root)
    if ladder is None and folder.ladder is not None and (folder.ladder.parent / model_answers.TABLE).is_file():
        ladder = folder.ladder.parent
    if ladder is not None:
        src = dataclasses.replace(src, answers=model_answers.read_answers(ladder))
    return src


def write_site(folder_path: str | os.PathLike, out: str | os.PathLike, *, progress=None, workers: int = 1,
               inputs: str | os.PathLike | None = None, ladder: str | os.PathLike | None = None) -> Path:
    """Write the explorer of ``folder_path`` into ``out`` (module docstring); returns ``out/index.html``.
    ``inputs``: the trusted folder (as ``verify --inputs``; ``io.confine``): what the certificate names (a certify
    output's inputs, a task export's input, an interaction export's complexes by name) is read only inside it,
    to draw the overlays those need; None: nothing it names is read. ``out`` is written through real folders only
    (``io.confine.out_folder``, ``put``: no symlink followed out of it). ``ladder``: a ladder output (``viewcert
    ladder --out``), whose answers each item page shows and the index filters by; default: the one whose report
    sits beside the folder.
    ``workers`` > 1: the item pages are written by that many forked processes, CHUNK items at a time (each
    page depends only on its item: the same bytes as one process).
    Memory, bounded whatever the number of items for a streamed certificate: its records are read one shard at
    a time (``explore.source.TableItems``), the item pages are written one at a time, each item's index row and
    map point go to temporary files as they are made (``_Spill``; the index and the map are then copied from
    them), and what is kept across items is the count of each filter and the map's extent (``chart.Extent``),
    both mergeable. A JSON certificate is read whole (``explore.source``): its records are in memory however the
    site is written (docs/explorer.md, "Big sites").

    Parameters
    ----------
    folder_path : str or PathLike
        A ``viewcert certify`` output folder or an export folder.
    out : str or PathLike
        The site folder.
    progress : callable, optional
        Called with each progress line (text).
    workers : int
        Processes writing the item pages.
    inputs : str or PathLike, optional
        The trusted folder the certificate's inputs are read inside; None: nothing it names is read.
    ladder : str or PathLike, optional
        A ladder output whose answers the item pages show.

    Returns
    -------
    Path
        ``out/index.html``.
    """
    folder = read_folder(folder_path)
    root = None if inputs is None else trusted_root(inputs)
    site = out_folder(out)
    for name in ASSETS:
        _put(site, f"assets/{name}", files("viewcert.explore").joinpath("assets", name).read_bytes())
    src = _sources(folder, folder_path, root, ladder)
    from viewcert.explore.chart import Extent  # lazy: as map_parts

    counts: dict[str, int] = {}  # items per filter
    truth: dict[str, int] = {}  # the truth R1 was scored against, counted (summary.html)
    extent = Extent()  # the map's
    with _Spill() as rows, _Spill() as points:
        for entries in _entries(folder, site, src, workers, progress):
            for e in entries:
                rows.add(e.row)
                points.add(map_point(e))
                for f in e.tags:
                    counts[f] = counts.get(f, 0) + 1
                for key, k in e.truth.items():
                    truth[key] = truth.get(key, 0) + k
                extent = extent.add(e.point)
        plots = [f"plots/{_link_or_copy(p, site, f'plots/{p.name}')}" for p in folder.plots]
        _put(site, "summary.html", summary_html(folder, site, plots, truth))
        write_chunks_atomic(target(site, "map.html"), points.copied(*map_parts(folder, extent)))
        before, after = index_parts(folder, counts, len(folder.items), src.answers)
        return write_chunks_atomic(target(site, "index.html"), rows.copied(before, after))


class _Spill:
    """Comma-separated JSON rows spilled to a temporary file as they come (``add``; None adds nothing), copied
    out between a page's text before and after them (``copied``): a page of any number of rows written in
    bounded memory."""

    def __enter__(self) -> _Spill:
        self.file = tempfile.TemporaryFile("w+", encoding="utf-8")
        self.n = 0
        return self

    def __exit__(self, *exc) -> None:
        self.file.close()

    def add(self, row: str | None) -> None:
        if row is not None:
            self.file.write(("," if self.n else "") + row)
            self.n += 1

    def copied(self, before: str, after: str) -> Iterator[str]:
        self.file.seek(0)
        return _copied(before, self.file, after)


def _copied(before: str, rows, after: str, block: int = 1 << 16) -> Iterator[str]:
    """``before``, the text of the open file ``rows`` in blocks of ``block`` characters, ``after``."""
    yield before
    while chunk := rows.read(block):
        yield chunk
    yield after
