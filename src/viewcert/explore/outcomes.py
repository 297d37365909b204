"""Which outcomes an item has (the index's filters), and the counts the certificate itself states for them.

Filters (``FILTERS``): ``unique`` (crystals/molecules: Φ = ∅ and every atom recovered; tasks: one consistent
answer), ``phantoms``, ``missing_atoms``, ``label_mismatch``, ``symmetry_raised``, ``item_error``,
``uncertain_bonds`` (interaction: a bond the rendered views leave undetermined by the criterion's margin),
``illegible_labels`` (interaction: a bond lost because a label is hidden), plus ``correct`` / ``incorrect``
(an interaction item: correct when its rendered views determine the answer, ceiling 1).
"""

from __future__ import annotations

from viewcert.formats.item_sections import ItemCeiling
from viewcert.formats.model import Record

FILTERS = ("unique", "phantoms", "missing_atoms", "label_mismatch", "symmetry_raised", "item_error",
           "uncertain_bonds", "illegible_labels", "correct", "incorrect")
TITLES = {"unique": "unique", "phantoms": "phantoms", "missing_atoms": "missing atoms",
          "label_mismatch": "label mismatch", "symmetry_raised": "symmetry raised", "item_error": "item error",
          "uncertain_bonds": "uncertain bonds", "illegible_labels": "illegible labels", "correct": "correct",
          "incorrect": "incorrect"}


def _d(x) -> dict:
    """A received JSON object as a dict (a typed section as the object it was read from); {} for anything else."""
    if isinstance(x, Record):
        return x.to_dict()
    return x if isinstance(x, dict) else {}


def _num(x) -> float:
    return x if isinstance(x, int | float) and not isinstance(x, bool) else 0


def interaction_losses(rec) -> set[str]:
    """The losses an interaction item's rendered views record: a pocket list's per-entry counts (``losses``),
    a residue question's list (``loss``), and ``criterion_margin`` for the uncertain entries it leaves out."""
    rendered = rec.rendered or ItemCeiling()
    out = {k for k, n in _d(rendered.losses).items() if _num(n) > 0}
    loss = rendered.loss
    out |= {x for x in (loss if isinstance(loss, list) else [loss]) if isinstance(x, str)}
    unsure = dict(rec.extra).get("uncertain") if hasattr(rec, "extra") else None
    if isinstance(unsure, list) and unsure:
        out.add("criterion_margin")
    return out
