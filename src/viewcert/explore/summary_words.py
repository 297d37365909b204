"""The explorer's summary page in words and units (``summary.html``): a certificate's ``summary`` and its headline
settings as a reader reads them, never a raw field name or a JSON object; the settings as written stay on the page,
folded, below.

The summary (any kind: crystal and molecule, streamed, transformation task, interaction) is walked as the
certificate writes it (``summary_html``): a number is a row with its words and unit (``SUMMARY``), a bound its
sentence, a group of counts (``by_level``, ``by_crystal_system``, a task's or interaction's groups) a table, a list
of records (``failures``, ``label_mismatches``, ...) a table with its columns in words, an empty list "none". A
key the table does not know is shown as its words (underscores as spaces). The truth R1 was scored against is
given in words by the caller (``certify.summary.truth_text``), as ``summary.txt`` says it.

The headline settings (``settings_rows``): the first value of each key of ``SETTINGS`` found walking the
certificate's settings sections in their order (protocol, tolerances, configuration, observation model, ...), in
words with units, the protocol's views with their directions, the library versions, the digest.
"""

from __future__ import annotations

from collections.abc import Mapping

from viewcert.explore.wording import REASONS, number
from viewcert.sanitize import html_text as h

__all__ = ["SETTINGS", "SUMMARY", "settings_html", "summary_words_html"]

#: a summary field: (words, unit)
SUMMARY = {
    "n": ("items scored (those that could not be read or certified not counted)", ""),
    "n_errors": ("items that could not be read or certified (not counted in R1)", ""),
    "kinds": ("items by kind", ""), "crystals": ("crystals", ""), "molecules": ("molecules", ""),
    "score": ("level scored", ""), "truth": ("scored against", ""),
    "correct": ("items whose answer the views determine (correct)", ""),
    "R1": ("render ceiling R1 (share of items correct)", ""),
    "bound": ("R1's exact one-sided lower bound", ""), "interval": ("R1's exact two-sided interval", ""),
    "by_level": ("by level", ""), "by_crystal_system": ("by crystal system", ""),
    "phantom_census": ("phantoms, missing atoms and uniqueness", ""),
    "items_with_phantoms": ("items whose views admit phantom points", ""),
    "total_phantoms": ("phantom points in all", ""),
    "items_with_missing_atoms": ("items with atoms the views do not recover", ""),
    "total_missing_atoms": ("atoms not recovered in all", ""),
    "items_oracle_failed": ("items the oracle failed on", ""),
    "items_unique": ("items reconstructed uniquely (no phantom, every atom recovered)", ""),
    "items_exact": ("items reconstructed exactly (one point per atom)", ""),
    "items_certified": ("items certified by the uniqueness theorem", ""),
    "failure_reasons": ("items not correct, by reason", ""),
    "failures": ("items not correct", ""), "n_failures": ("items not correct", ""),
    "label_mismatches": ("items whose dataset label differs from the rendered cell's", ""),
    "n_label_mismatches": ("items whose dataset label differs from the rendered cell's", ""),
    "cross_check_disagreements": ("spglib/moyopy disagreements", ""),
    "n_cross_check_disagreements": ("items where spglib and moyopy disagree", ""),
    "symmetry_raised": ("items whose standardisation raised the symmetry", ""),
    "n_symmetry_raised": ("items whose standardisation raised the symmetry", ""),
    "errors": ("items that could not be read or certified", ""),
    "lists": ("where the listed items are", ""),
    # a level's or a crystal system's counts
    "R1_level": ("R1", ""), "crystal_system": ("crystal system", ""), "point_group": ("point group", ""),
    "space_group": ("space group", ""), "symbol": ("space-group symbol", ""),
    # list entries
    "id": ("item", ""), "predicted": ("the views give", ""), "reference": ("the truth", ""),
    "reasons": ("why", ""), "levels": ("levels", ""), "dataset": ("dataset", ""), "rendered": ("as rendered", ""),
    "input": ("input cell", ""), "error": ("error", ""), "cell": ("cell", ""), "level": ("level", ""),
    "spglib": ("spglib", ""), "moyopy": ("moyopy", ""),
    # interaction and task groups
    "all": ("every item", ""), "positive": ("items with a bond", ""), "negative": ("items without a bond", ""),
    "ideal": ("ceiling under ideal observations", ""), "mean": ("mean", ""), "lo": ("2.5th percentile", ""),
    "hi": ("97.5th percentile", ""),
    "exact_ceiling": ("exact ceiling (mean)", ""), "partial_ceiling": ("partial-credit ceiling (mean)", ""),
    "unique": ("items with one consistent answer", ""), "unique_bound": ("their exact one-sided lower bound", ""),
    "n_consistent": ("consistent answers (mean)", ""),
}
#: a group table's column words, shorter than the rows' (``SUMMARY``)
COLUMNS = {"n": "items", "correct": "correct", "R1": "R1", "ideal": "ceiling under ideal observations [95% interval]",
           "rendered": "ceiling as rendered [95% interval]"}
#: what the group names of an interaction summary say
GROUPS = {"bonds=0": "items with no bond asked", "bonds=1": "items with 1 bond", "bonds=2": "items with 2 bonds",
          "bonds=3+": "items with 3 or more bonds"}
#: the headline settings: key → (words, unit); the first value found walking the settings sections
SETTINGS = {
    "task": ("task", ""), "protocol": ("views (protocol)", ""), "name": ("views (protocol)", ""),
    "kind": ("camera", ""), "width": ("image width", "px"), "height": ("image height", "px"),
    "image_size": ("image size", "px"), "delta": ("δ, the oracle's matching tolerance", "Å"),
    "tau": ("τ, the symmetry tolerance of spglib and moyopy", "Å"),
    "angle_tolerance": ("angle tolerance", "°"), "pairs": ("view pairs the oracle triangulates", ""),
    "merge": ("merge of nearby points", ""), "observe": ("observations", ""), "tiling": ("cell repetitions drawn", ""),
    "occlusion": ("hidden atoms dropped", ""), "frame_on": ("framing", ""), "score": ("level scored", ""),
    "level": ("level scored", ""), "truth": ("the truth (rule)", ""), "confidence": ("confidence of R1's bounds", ""),
    "margin": ("uniqueness margin δ* per item", ""), "style": ("drawing style", ""), "pocket": ("pocket", "Å"),
    "criterion": ("hydrogen-bond criterion", ""), "per_complex": ("questions per complex", ""),
    "n_boot": ("bootstrap resamples", ""), "seed": ("seed", ""), "reach": ("phantom reach", "Å"),
    "standardize": ("cell standardised before rendering", ""),
}
#: what some settings' values say
VALUES = {"observe": {"ideal": "ideal: every atom, exact projection (the geometric ceiling)",
                      "visible": "visible: the atoms the rendered images show (the ceiling as rendered)",
                      "pixel-centroid": "pixel centroids of the atoms the rendered images show"},
          "truth": {"dataset": "the dataset's label where the item has one, else the input's own symmetry",
                    "rendered": "the rendered cell's own symmetry"},
          "frame_on": {"drawn": "on the drawn spheres", "centres": "on the atom centres"}}
#: the settings sections walked, in order, and the library versions' and digest's
SECTIONS = ("task", "protocol", "tolerances", "config", "settings", "observation_model", "scoring")


def _words(key) -> str:
    return SUMMARY.get(key, (GROUPS.get(key, str(key).replace("_", " ")), ""))[0]


#: fields whose text values are names the tables above word (a level, a reason)
NAMED = ("score", "level", "levels", "reasons", "failure_reasons")


def _value(v, unit: str = "", key: str = "") -> str:
    """A value in words: numbers at 4 significant figures with their unit, a bound its sentence, a list joined,
    a small record as ``words value; ...``, a level's or a reason's name in words (``NAMED``), nothing as –."""
    if isinstance(v, Mapping):
        if "text" in v:
            return str(v["text"])
        return "; ".join(f"{_named(k) if key in NAMED else _words(k)} {_value(x)}" for k, x in v.items()) or "none"
    if isinstance(v, list | tuple):
        return ", ".join(_value(x, key=key) for x in v) if v else "none"
    if v is None:
        return "–"
    if isinstance(v, str) and key in NAMED:
        return _named(v)
    return number(v, unit)


def _named(name: str) -> str:
    """A level's or a reason's name in words (``explore.wording.REASONS``, the item pages' words), else as it is."""
    return REASONS.get(name) or (SUMMARY[name][0] if name in SUMMARY and "_" in name else name)


def _is_counts(v) -> bool:
    """A group of counts: an object of objects whose values are numbers or small objects (a level's counts)."""
    return isinstance(v, Mapping) and bool(v) and all(isinstance(x, Mapping) for x in v.values())


def _counts_table(key: str, groups: Mapping) -> str:
    """A group of counts as a table: one row per group (its name in words), one column per field in words;
    a field holding a record (an interaction group's mean and interval) one cell."""
    cols = list(dict.fromkeys(k for g in groups.values() for k in g))
    head = "".join(f"<th>{h(COLUMNS.get(c) or _words(c))}</th>" for c in cols)
    rows = "".join(f'<tr data-group="{h(name)}"><th>{h(_words(name))}</th>'
                   + "".join(f'<td data-field="{h(c)}">{h(_group_cell(g.get(c)))}</td>' for c in cols) + "</tr>"
                   for name, g in groups.items())
    return f'<table class="words counts" data-field="{h(key)}"><tr><th></th>{head}</tr>{rows}</table>'


def _group_cell(v) -> str:
    if isinstance(v, Mapping) and {"mean", "lo", "hi"} <= set(v):
        return f"{number(v['mean'])} [{number(v['lo'])}, {number(v['hi'])}]"
    return _value(v)


def _records_table(key: str, rows: list) -> str:
    """A list of records (``failures``, ``errors``, ...) as a table, its columns in words."""
    cols = list(dict.fromkeys(k for r in rows if isinstance(r, Mapping) for k in r))
    head = "".join(f"<th>{h(_words(c))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{h(_value(r.get(c), key=c) if isinstance(r, Mapping) else _value(r))}</td>"
                                    for c in cols) + "</tr>" for r in rows)
    return f'<table class="words records" data-field="{h(key)}"><tr>{head}</tr>{body}</table>'


def summary_words_html(summary: Mapping, truth: str | None = None) -> str:
    """A certificate's ``summary`` (its JSON object) in words (module docstring); ``truth``: the truth R1 was
    scored against in words, shown for the summary's ``truth`` rule."""
    if _is_counts(summary):  # groups only (a task's, an interaction's): one table
        return _counts_table("groups", summary)
    rows, tables = [], []
    for key, v in summary.items():
        words, unit = SUMMARY.get(key, (GROUPS.get(key, str(key).replace("_", " ")), ""))
        if isinstance(v, list) and not v and (f"n_{key}" in summary or key == "errors" and "n_errors" in summary):
            continue  # an empty list beside its count: said once
        if _is_counts(v):
            tables.append(f"<h3>{h(words)}</h3>" + _counts_table(key, v))
        elif isinstance(v, list) and v and all(isinstance(r, Mapping) for r in v):
            tables.append(f"<h3>{h(words)} ({len(v)})</h3>" + _records_table(key, v))
        elif isinstance(v, Mapping) and "text" not in v and len(v) > 3:  # a census: one row per count
            tables.append(f"<h3>{h(words)}</h3>" + f'<table class="words" data-field="{h(key)}">' + "".join(
                f'<tr data-field="{h(k)}"><th>{h(_words(k))}</th><td>{h(_value(x))}</td></tr>' for k, x in v.items())
                + "</table>")
        else:
            shown = _value(v, unit, key)
            if key == "truth" and truth:  # summary.txt's words, the leading "dataset" spelled out
                shown = "the dataset's label" + truth[len("dataset"):] if truth.startswith("dataset") else truth
            rows.append(f'<tr data-field="{h(key)}"><th>{h(words)}</th><td>{h(shown)}</td></tr>')
    return f'<table class="words summary">{"".join(rows)}</table>' + "".join(tables)


def _walk(d, found: dict) -> None:
    """The first value of each ``SETTINGS`` key in ``d`` (depth first, in order)."""
    if isinstance(d, Mapping):
        for k, v in d.items():
            if k in SETTINGS and k not in found and (not isinstance(v, Mapping | list) or k == "tiling"):
                found[k] = v
            _walk(v, found)


def _views_table(protocol) -> str:
    """The protocol's views (name and the direction each looks along), when it lists them."""
    views = protocol.get("views") if isinstance(protocol, Mapping) else None
    rows = []
    for v in views if isinstance(views, list) else ():
        if isinstance(v, Mapping) and isinstance(v.get("direction"), list):
            direction = "(" + ", ".join(number(float(x)) for x in v["direction"]) + ")"
            rows.append(f"<tr><td>{h(_value(v.get('name')))}</td><td>{h(direction)}</td></tr>")
    return ('<table class="words views"><tr><th>view</th><th>looks along (x, y, z)</th></tr>'
            f'{"".join(rows)}</table>') if rows else ""


def settings_html(sections: Mapping[str, object]) -> str:
    """The headline settings of a certificate's settings ``sections`` ({name: its JSON object or value}) in words
    (module docstring), then the library versions and the digest."""
    found: dict = {}
    _walk({k: sections[k] for k in SECTIONS if k in sections}, found)
    if "protocol" in found and "name" in found:
        found.pop("name")
    rows = []
    for k, v in sorted(found.items(), key=lambda kv: list(SETTINGS).index(kv[0])):
        words, unit = SETTINGS[k]
        if k == "tiling":
            shown = " × ".join(str(x) for x in v)
        else:
            shown = VALUES.get(k, {}).get(v, None) if isinstance(v, str) else None
            shown = shown or _value(v, unit, k)
        rows.append(f'<tr data-field="{h(k)}"><th>{h(words)}</th><td>{h(shown)}</td></tr>')
    out = f'<table class="words settings">{"".join(rows)}</table>' + _views_table(sections.get("protocol"))
    libs = sections.get("libraries")
    if isinstance(libs, Mapping) and libs:
        out += ("<h3>library versions</h3><table class=\"words libraries\">"
                + "".join(f"<tr><th>{h(str(k))}</th><td>{h(_value(v))}</td></tr>" for k, v in libs.items())
                + "</table>")
    digest = sections.get("digest")
    value = digest.get("value") if isinstance(digest, Mapping) else digest
    if isinstance(value, str):
        out += f'<p class="digest">certificate digest (SHA-256, what <code>viewcert verify</code> checks): ' \
               f"<code>{h(value)}</code></p>"
    return out
