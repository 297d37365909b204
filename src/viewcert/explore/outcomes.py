"""Which outcomes an item has (the index's filters), and the counts the certificate itself states for them.

Filters (``FILTERS``): ``unique`` (crystals/molecules: Φ = ∅ and every atom recovered; tasks: one consistent
answer), ``phantoms``, ``missing_atoms``, ``label_mismatch``, ``symmetry_raised``, ``item_error``,
``uncertain_bonds`` (interaction: a bond the rendered views leave undetermined by the criterion's margin),
``illegible_labels`` (interaction: a bond lost because a label is hidden), plus ``correct`` / ``incorrect``
(an interaction item: correct when its rendered views determine the answer, ceiling 1).
"""

from __future__ import annotations

from viewcert.formats.fields import ABSENT, Section
from viewcert.formats.item_sections import ItemCeiling
from viewcert.formats.summary_sections import PhantomCensus, TableSummary

FILTERS = ("unique", "phantoms", "missing_atoms", "label_mismatch", "symmetry_raised", "item_error",
           "uncertain_bonds", "illegible_labels", "correct", "incorrect")
#: the filters that apply to each kind of item (the index offers only these)
KIND_FILTERS = {"crystal": ("unique", "phantoms", "missing_atoms", "label_mismatch", "symmetry_raised", "item_error",
                            "correct", "incorrect"),
                "task": ("unique", "correct", "incorrect"),
                "interaction": ("unique", "uncertain_bonds", "illegible_labels", "phantoms", "correct", "incorrect")}
TITLES = {"unique": "unique", "phantoms": "phantoms", "missing_atoms": "missing atoms",
          "label_mismatch": "label mismatch", "symmetry_raised": "symmetry raised", "item_error": "item error",
          "uncertain_bonds": "uncertain bonds", "illegible_labels": "illegible labels", "correct": "correct",
          "incorrect": "incorrect"}


def _d(x) -> dict:
    """A received JSON object as a dict (a typed section as the object it was read from); {} for anything else."""
    if isinstance(x, Section):
        return x.to_dict()
    return x if isinstance(x, dict) else {}


def _num(x) -> float:
    return x if isinstance(x, int | float) and not isinstance(x, bool) else 0


def tags(kind: str, rec) -> tuple[str, ...]:
    """The filters ``rec`` (one typed certificate item of ``kind``: ``records.ItemOutcome``, ``TaskItemRecord``
    or ``InteractionItemRecord``) belongs to, in ``FILTERS`` order."""
    t: set[str] = set()
    if kind == "crystal":
        orc = rec.oracle
        if rec.outcome == "error":
            t.add("item_error")
        else:
            t.add("correct" if rec.correct is True else "incorrect")
        if rec.unique is True:
            t.add("unique")
        if orc and _num(orc.n_phantoms) > 0:
            t.add("phantoms")
        if orc and _num(orc.n_missing) > 0:
            t.add("missing_atoms")
        if rec.label_mismatch:
            t.add("label_mismatch")
        if rec.symmetry_raised:
            t.add("symmetry_raised")
    elif kind == "task":
        if _num(rec.n_consistent) == 1:
            t.add("unique")
        t.add("correct" if rec.best_guess == rec.truth else "incorrect")
    else:  # interaction
        t |= _interaction_tags(rec)
    return tuple(f for f in FILTERS if f in t)


def interaction_losses(rec) -> set[str]:
    """The losses an interaction item's rendered views record: a pocket list's per-entry counts (``losses``),
    a residue question's list (``loss``), and ``criterion_margin`` for the uncertain entries it leaves out."""
    rendered = rec.rendered or ItemCeiling()
    out = {k for k, n in _d(rendered.losses).items() if _num(n) > 0}
    loss = None if rendered.loss is ABSENT else rendered.loss
    out |= {x for x in (loss if isinstance(loss, list) else [loss]) if isinstance(x, str)}
    unsure = dict(rec.extra).get("uncertain") if hasattr(rec, "extra") else None
    if isinstance(unsure, list) and unsure:
        out.add("criterion_margin")
    return out


def _interaction_tags(rec) -> set[str]:
    t: set[str] = set()
    losses = interaction_losses(rec)
    for loss, tag in (("criterion_margin", "uncertain_bonds"), ("label_hidden", "illegible_labels"),
                      ("phantom", "phantoms")):
        if loss in losses:
            t.add(tag)
    rendered = rec.rendered or ItemCeiling()
    n_true, n_det, ceiling = (None if v is ABSENT else v
                              for v in (rendered.n_true, rendered.n_determined, rendered.ceiling))
    if (isinstance(n_true, int) and n_true == n_det) or (n_det is None and ceiling == 1):
        t.add("unique")
    if isinstance(ceiling, int | float) and not isinstance(ceiling, bool):
        t.add("correct" if ceiling == 1 else "incorrect")  # the views determine the answer, or not
    return t


def certificate_counts(kind: str, cert) -> dict[str, int]:
    """The counts the typed certificate's own summary states (crystal certificates; a task certificate's number
    of unique items); filters it states nothing about are left out."""
    if kind == "crystal" and isinstance(cert.summary, TableSummary):  # streamed: counts of what it lists
        s = cert.summary
        c = s.phantom_census or PhantomCensus()
        out = {"unique": c.items_unique, "phantoms": c.items_with_phantoms,
               "missing_atoms": c.items_with_missing_atoms, "label_mismatch": s.n_label_mismatches,
               "symmetry_raised": s.n_symmetry_raised, "item_error": s.n_errors}
        return {k: v for k, v in out.items() if isinstance(v, int) and not isinstance(v, bool)}
    if kind == "crystal":
        s = cert.summary
        c = s.phantom_census or PhantomCensus()
        out = {"unique": c.items_unique, "phantoms": c.items_with_phantoms,
               "missing_atoms": c.items_with_missing_atoms,
               "label_mismatch": len(s.label_mismatches) if isinstance(s.label_mismatches, list) else None,
               "symmetry_raised": s.n_symmetry_raised, "item_error": s.n_errors}
        return {k: v for k, v in out.items() if isinstance(v, int)}
    if kind == "task":
        u = cert.summary.all.unique if cert.summary and cert.summary.all else None
        return {"unique": u} if isinstance(u, int) else {}
    return {}
