"""How the explorer's pages name a certificate's fields: in words, with their units, numbers at a stated
precision (δ* and lengths in Å to 4 significant figures, positions to ``POSITION_RESOLUTION`` Å).

A field the tables below do not know is shown by its name with the underscores as spaces, a reason or loss
they do not know as it is written; a value is never altered beyond rounding for display (the raw record stays on the page, under "the certificate's record").
"""

from __future__ import annotations

import math

#: significant figures of the lengths and ratios the pages print
SIG = 4
#: the oracle record of a crystal item (``items[].oracle``): words, unit ("" for counts and text)
ORACLE = {
    "status": ("oracle status", ""),
    "reason": ("why the oracle failed", ""),
    "n_points": ("points reconstructed", ""),
    "n_recovered": ("atoms recovered", ""),
    "n_phantoms": ("phantom points (agreed on by every view, not atoms)", ""),
    "n_missing": ("atoms not recovered (missing)", ""),
    "max_position_error": ("largest position error of a recovered atom", "Å"),
    "min_same_label_distance": ("shortest distance between two atoms of one element (d_min)", "Å"),
    "separation_ok": ("separation precondition (d_min > 2δ) holds", ""),
    "margin": ("smallest residual of a rejected near-miss point, in units of δ", "× δ"),
    "warnings": ("warnings", ""),
}
#: the uniqueness margin of a crystal item (``items[].uniqueness_margin``), shown apart from δ* itself
MARGIN = {
    "delta_exact": ("δ_exact, the exactness margin (what design maximises): below it no false candidate exists, so "
                    "the reconstruction is the structure point for point", "Å"),
    "d_min": ("shortest distance between two atoms of one element (d_min)", "Å"),
}
#: what bounds δ* (``uniqueness_margin.bound``)
BOUND = {
    "candidate": "set by the near-miss tuple (a false candidate whose point every view nearly agrees on)",
    "separation": "capped by half the shortest same-element distance (d_min / 2)",
    "capped": "at least this: no false candidate below the search's upper limit",
    "dependent": "zero: no two independent views",
}
#: reasons an item is not correct (``items[].reasons``), most specific first
REASONS = {
    "oracle_failed": "the oracle failed",
    "phantoms": "phantom points",
    "missing_atoms": "atoms not recovered",
    "symmetry_changed": "the reconstruction's symmetry differs from the reference",
    "label_mismatch": "the rendered cell's label differs from the dataset's",
    "symmetry_undetermined": "the symmetry could not be determined",
    "precondition_violated": "the separation precondition fails",
    "error": "the item could not be certified",
}
#: the label levels of a crystal item
LEVELS = (("crystal_system", "crystal system"), ("point_group", "point group"),
          ("space_group", "space group (number)"), ("symbol", "space group (Hermann–Mauguin)"))
#: why an interaction entry is not determined (``rendered.entries[].loss``, ``rendered.losses``)
LOSSES = {
    "label_hidden": "label hidden: an atom or residue label it needs is not legible in any view (hidden, cut, "
                    "or below the legibility rule)",
    "atom_hidden": "atom not recovered: the views do not give a point for one of its atoms",
    "phantom": "phantom: a point every view agrees on stands near one of its atoms",
    "criterion_margin": "uncertain bond: within δ of the hydrogen-bond criterion",
    "rotatable_hydrogen": "uncertain bond: it depends on where a rotatable hydrogen points",
}


def number(x, unit: str = "") -> str:
    """A number at ``SIG`` significant figures with its unit ("0.01569 Å"); text and None as they are."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x} {unit}".strip()
    if isinstance(x, float):
        if not math.isfinite(x):
            return str(x)
        return f"{x + 0.0:.{SIG}g} {unit}".strip()
    return str(x)


def field_words(key: str, table: dict) -> tuple[str, str]:
    """(words, unit) of ``key`` in ``table``; an unknown key: its name with spaces, no unit."""
    return table.get(key, (str(key).replace("_", " "), ""))


def loss_words(loss) -> str:
    """An interaction entry's loss in words (a list: each, joined); an unknown one as it is written."""
    if isinstance(loss, list):
        return "; ".join(loss_words(x) for x in loss)
    return LOSSES.get(loss, str(loss)) if isinstance(loss, str) else str(loss)


def reason_words(reasons) -> str:
    """An item's reasons in words, joined ("none" when it has none)."""
    if not isinstance(reasons, list) or not reasons:
        return "none"
    return "; ".join(REASONS.get(r, r) if isinstance(r, str) else str(r) for r in reasons)
