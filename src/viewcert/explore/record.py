"""An item's record in words (the item page's record section), by kind: a crystal's or molecule's labels, oracle
report, margin δ* and phantoms; a transformation item's consistent-answer set; an interaction item's bonds and
their verdicts. Received text is escaped here (``sanitize.html_text``); numbers are shown at their stated
precision (``explore.wording``)."""

from __future__ import annotations

import json

from viewcert.explore.overlays import atom_text, position_text
from viewcert.explore.wording import (
    BOUND,
    LEVELS,
    MARGIN,
    ORACLE,
    field_words,
    loss_words,
    number,
    reason_words,
)
from viewcert.formats.item_sections import ItemCeiling, UniquenessMargin
from viewcert.formats.model import ABSENT, Record
from viewcert.sanitize import html_text as h

__all__ = ["crystal_body", "interaction_body", "mode_rows", "residue_text", "task_body"]


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
    """A received JSON object as a dict (a typed section as the object it was read from, to be shown whole);
    {} for anything else."""
    if isinstance(x, Record):
        return x.to_dict()
    return x if isinstance(x, dict) else {}


def _words(x) -> str:
    """A received list of names as one line of text (anything else as its text)."""
    return ", ".join(map(_fmt, x)) if isinstance(x, list) else ("" if x is None or x is ABSENT else _fmt(x))


def crystal_system(rec):
    """The crystal system of the item's reference: the dataset's label, else the rendered cell's."""
    for which in ("dataset", "rendered"):
        cs = _d(rec.label(which)).get("crystal_system")
        if cs:
            return cs
    return None


def sig4(x):
    """A number rounded to 4 significant figures (the index's δ*), kept a number so that it sorts as one."""
    return float(f"{x:.4g}") if isinstance(x, float) and x == x and abs(x) != float("inf") else x


def _labels_table(rec) -> str:
    rows = []
    for name, which in (("dataset (truth)", "dataset"), ("rendered cell", "rendered"),
                        ("reconstruction", "reconstructed")):
        lab = _d(rec.label(which))
        rows.append(f"<tr><th>{h(name)}</th>" + "".join(f"<td>{h(_fmt(lab.get(lv)))}</td>" for lv, _ in LEVELS)
                    + "</tr>")
    head = "".join(f"<th>{h(words)}</th>" for _, words in LEVELS)
    return f'<table class="labels"><tr><th></th>{head}</tr>{"".join(rows)}</table>'


def _words_table(d: dict, table: dict, cls: str = "words") -> str:
    """A record's fields in words with their units (``explore.wording``), in the table's order then the rest."""
    keys = [k for k in table if k in d] + [k for k in d if k not in table]
    rows = []
    for k in keys:
        words, unit = field_words(k, table)
        v = d[k]
        shown = _words(v) if isinstance(v, list) else number(v, unit)
        rows.append(f'<tr data-field="{h(k)}"><th>{h(words)}</th><td>{h(shown)}</td></tr>')
    return f'<table class="{cls}">{"".join(rows)}</table>'


def _near_miss_atoms(um: UniquenessMargin, view_names) -> list[tuple[str, str]]:
    """(view name, atom in words) of each view's atom of the near-miss tuple (its element from the tuple's
    label, its index in the rendered cell)."""

    atoms = um.near_miss if isinstance(um.near_miss, list) else []
    z = um.near_miss_label
    return [(view_names[k] if k < len(view_names) else f"view {k}", atom_text(z, a)) for k, a in enumerate(atoms)]


def _margin_section(rec, delta, view_names) -> str:
    """δ* in Å (4 significant figures) with what bounds it, the certificate's δ, the near-miss tuple as atoms per
    view, its point, and the other margins."""
    um = rec.uniqueness_margin
    if not um:
        return ""
    bound = um.bound
    rows = [f'<tr data-field="delta_star"><th>uniqueness margin δ*: every δ below it certifies the item</th>'
            f'<td class="delta-star">{h(number(um.delta_star, "Å"))}</td></tr>',
            f'<tr data-field="bound"><th>what bounds δ*</th><td>{h(BOUND.get(bound, _fmt(bound)))}</td></tr>']
    if isinstance(delta, int | float) and not isinstance(delta, bool):
        rows.append(f'<tr data-field="delta"><th>δ of this certificate (the oracle\'s tolerance)</th>'
                    f'<td>{h(number(float(delta), "Å"))}</td></tr>')
    tuple_atoms = _near_miss_atoms(um, view_names)
    if tuple_atoms:
        lis = "".join(f'<li><span class="view-name">{h(v)}</span>: <span class="atom">{h(a)}</span></li>'
                      for v, a in tuple_atoms)
        rows.append(f'<tr data-field="near_miss"><th>near-miss tuple (one atom per view, marked in the views)</th>'
                    f'<td><ul class="near-miss">{lis}</ul></td></tr>')
    if isinstance(um.near_miss_point, list) and len(um.near_miss_point) == 3:
        try:
            rows.append('<tr data-field="near_miss_point"><th>its least-squares point (positions rounded to '
                        f"0.001 Å)</th><td>{h(position_text([float(x) for x in um.near_miss_point]))}</td></tr>")
        except (TypeError, ValueError):
            pass
    rest = {k: v for k, v in um.to_dict().items() if k in MARGIN}
    return ("<h3>uniqueness margin δ*</h3>" + f'<table class="words margin">{"".join(rows)}</table>'
            + (_words_table(rest, MARGIN) if rest else ""))


def _phantoms_table(rec) -> str:

    ph = rec.phantoms or []
    if not (isinstance(ph, list) and ph):
        return ""
    rows = []
    for k, r in enumerate(ph):
        if isinstance(r, list) and len(r) == 4 and all(isinstance(x, int | float) for x in r[1:]):
            el = atom_text(r[0], 0).split(" atom")[0]
            cells = [el] + [f"{float(x) + 0.0:.3f}" for x in r[1:]]
        else:
            cells = [_fmt(r), "", "", ""]
        rows.append(f"<tr><td>{k + 1}</td>" + "".join(f"<td>{h(c)}</td>" for c in cells) + "</tr>")
    n = rec.oracle.n_phantoms if rec.oracle else None
    more = f" (the certificate lists {len(ph)} of {h(_fmt(n))})" if isinstance(n, int) and n > len(ph) else ""
    return (f'<h3>phantom points{more}, positions rounded to 0.001 Å</h3><table class="phantoms"><tr><th>#</th>'
            f'<th>element</th><th>x (Å)</th><th>y (Å)</th><th>z (Å)</th></tr>{"".join(rows)}</table>')


def crystal_body(rec, delta=None, view_names=()) -> str:
    """The record section of a crystal or molecule item (``records.ItemOutcome``), in words with units."""
    parts = [f"<h2>outcome: {h(_fmt(rec.outcome))}</h2>",
             f'<p class="reasons">why not correct: {h(reason_words(rec.reasons))}</p>']
    if rec.certified is not ABSENT and rec.certified is not None:
        parts.append(f"<p>certified by the theorem (unique reconstruction, separation, independent views): "
                     f"{'yes' if rec.certified else 'no'}</p>")
    if rec.error:
        parts.append(f'<p class="error">error: {h(rec.error)}</p>')
    parts.append("<h3>labels</h3>" + _labels_table(rec))
    if rec.label_mismatch:
        parts.append(f"<p>label mismatch at: {h(_words(rec.label_mismatch))}</p>")
    if rec.symmetry_raised:
        parts.append("<h3>symmetry raised</h3>" + _kv_table(_d(rec.symmetry_raised)))
    mol = _d(rec.molecule)
    if mol:
        parts.append("<h3>molecule</h3>" + _kv_table(mol))
    parts.append(_margin_section(rec, delta, list(view_names)))
    if rec.oracle:
        parts.append("<h3>what the oracle recovered</h3>" + _words_table(_d(rec.oracle), ORACLE, "words oracle"))
    parts.append(_phantoms_table(rec))
    return "".join(parts)


def task_body(rec) -> str:
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
    return (f"<h2>truth: {h(_fmt(rec.truth))}</h2>" + _kv_table({k: v for k, v in shown.items() if rec.written(k)})
            + f'<h3>consistent-answer set ({len(consistent)} answers the views cannot tell apart)</h3>'
            f'<ol class="consistent">{lis}</ol>'
            + (f'<h3>why each other answer draws the same images</h3><table class="kv">{erows}</table>' if erows else ""))


def residue_text(key) -> str:
    """A residue key of the certificate (``CHAIN/RESseq``, e.g. ``A/SER62``) as the images label it
    (``SER 62 A``); anything else as its text."""
    if not isinstance(key, str) or "/" not in key:
        return _fmt(key)
    chain, res = key.split("/", 1)
    return f"{res[:3]} {res[3:]} {chain}"


def entry_residue(entry) -> str:
    """The residue key (``CHAIN/RESseq``) of a bond entry (``RES SEQ ATOM CHAIN, LIGATOM``); "" if not one."""
    head = str(entry).split(",")[0].split()
    return f"{head[3]}/{head[0]}{head[1]}" if len(head) == 4 else ""


def _entry_rows(rows: list[tuple[str, str, str, object, str]], asked: str) -> str:
    """Table rows (entry, residue key, verdict class, loss, verdict words); the asked residue's rows marked."""
    out = []
    for entry, res, cls, loss, verdict in rows:
        mark = " asked" if asked and res == asked else ""
        code = loss if isinstance(loss, str) else " ".join(map(str, loss)) if isinstance(loss, list) else ""
        out.append(f'<tr class="{cls}{mark}" data-entry="{h(entry)}" data-loss="{h(code)}"><td>{h(entry)}</td>'
                   f"<td>{h(residue_text(res))}</td><td>{h(verdict)}</td><td>{h(loss_words(loss) if loss else '')}"
                   "</td></tr>")
    return "".join(out)


def mode_rows(rec, r: ItemCeiling, truth: dict) -> list:
    """Every entry of one mode (rendered or ideal views) with its verdict and reason: a pocket list's entries
    and its uncertain ones (not asked, with the ground truth's reason); a residue question's bonds of that
    residue, each with the item's reasons (the certificate records them per item)."""
    entries = r.entries
    if isinstance(entries, list):
        rows = [(_fmt(_d(e).get("entry")), _fmt(_d(e).get("residue")), "det" if _d(e).get("determined") else "undet",
                 _d(e).get("loss"), "determined" if _d(e).get("determined") else "not determined") for e in entries]
    else:  # residue-ligand: the residue's certain bonds of the ground truth
        unsure = {_d(u).get("entry") for u in (truth.get("uncertain") or []) if isinstance(u, dict)}
        mine = [b.get("entry") for b in (truth.get("bonds") or []) if isinstance(b, dict)
                and entry_residue(b.get("entry")) == rec.residue and b.get("entry") not in unsure]
        loss = r.loss
        rows = [(_fmt(e), rec.residue, "undet" if loss else "det", loss, "not determined" if loss else "determined")
                for e in dict.fromkeys(mine)]
    why = {_d(u).get("entry"): _d(u).get("reason") for u in (truth.get("uncertain") or []) if isinstance(u, dict)}
    unsure_here = dict(rec.extra).get("uncertain")
    for e in unsure_here if isinstance(unsure_here, list) else []:
        rows.append((_fmt(e), entry_residue(e), "uncertain", why.get(e) or "criterion_margin", "uncertain (not asked)"))
    return rows


def _asked_line(rec) -> str:
    """What the question names: the residue (a residue question) and the ligand, highlighted."""
    ligand = rec.source_id.split(":", 1)[1] if isinstance(rec.source_id, str) and ":" in rec.source_id else ""
    parts = []
    if isinstance(rec.residue, str) and rec.residue:
        parts.append(f'residue <mark class="asked residue" data-residue="{h(rec.residue)}">'
                     f"{h(residue_text(rec.residue))}</mark>")
    if ligand:
        parts.append(f'ligand <mark class="asked ligand">{h(ligand)}</mark>')
    return f'<p class="asked-line">the question asks about {" and ".join(parts)}</p>' if parts else ""


def interaction_body(rec, truth: dict, question: dict | None = None) -> str:
    """The record section of an interaction item (``records.InteractionItemRecord``) and its ground truth: every
    entry with its verdict and, when not determined, why."""
    asked = rec.residue if isinstance(rec.residue, str) else ""
    parts = [f"<h2>{h(_fmt(rec.source_id))}: {h(_fmt(rec.n_bonds))} bonds asked</h2>", _asked_line(rec)]
    for which, views in (("rendered", rec.rendered), ("ideal", rec.ideal)):
        r = views or ItemCeiling()
        det = f", {h(_fmt(r.n_determined))} of {h(_fmt(r.n_true))} determined" \
            if r.n_determined is not None else ""
        words = {"rendered": "as rendered (labels must be legible, atoms recovered)",
                 "ideal": "under ideal observations"}[which]
        parts.append(f"<h3>{which} views, {words}: ceiling {h(number(r.ceiling))}{det}</h3>"
                     f'<table class="entries" data-views="{which}"><tr><th>bond</th><th>residue</th><th>verdict</th>'
                     f"<th>why not determined</th></tr>{_entry_rows(mode_rows(rec, r, truth), asked)}</table>")
    bonds = truth.get("bonds") if isinstance(truth.get("bonds"), list) else []
    if bonds:
        cols = (("entry", "bond", ""), ("donor", "donor atom (index)", ""), ("acceptor", "acceptor atom (index)", ""),
                ("ligand_role", "the ligand is the", ""), ("d_da_A", "donor–acceptor", "Å"),
                ("d_ha_A", "hydrogen–acceptor", "Å"), ("angle_deg", "angle D–H···A", "°"))
        rows = "".join(f'<tr class="{"asked" if asked and entry_residue(_d(b).get("entry")) == asked else ""}">'
                       + "".join(f"<td>{h(number(_d(b).get(k), u))}</td>" for k, _, u in cols) + "</tr>"
                       for b in bonds)
        parts.append("<h3>each bond's atoms (ground truth: atom indices of the protonated complex)</h3>"
                     f'<table class="bonds"><tr>{"".join(f"<th>{h(t)}</th>" for _, t, _ in cols)}</tr>{rows}</table>')
    return "".join(parts)
