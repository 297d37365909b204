"""Which outcomes an item has (the index's filters), and the counts the certificate itself states for them.

Filters (``FILTERS``): ``unique`` (crystals/molecules: Φ = ∅ and every atom recovered; tasks: one consistent
answer), ``phantoms``, ``missing_atoms``, ``label_mismatch``, ``symmetry_raised``, ``item_error``,
``uncertain_bonds`` (interaction: a bond the rendered views leave undetermined by the criterion's margin),
``illegible_labels`` (interaction: a bond lost because a label is hidden), plus ``correct`` / ``incorrect``.
"""

from __future__ import annotations

FILTERS = ("unique", "phantoms", "missing_atoms", "label_mismatch", "symmetry_raised", "item_error",
           "uncertain_bonds", "illegible_labels", "correct", "incorrect")
TITLES = {"unique": "unique", "phantoms": "phantoms", "missing_atoms": "missing atoms",
          "label_mismatch": "label mismatch", "symmetry_raised": "symmetry raised", "item_error": "item error",
          "uncertain_bonds": "uncertain bonds", "illegible_labels": "illegible labels", "correct": "correct",
          "incorrect": "incorrect"}


def _d(x) -> dict:
    return x if isinstance(x, dict) else {}


def _num(x) -> float:
    return x if isinstance(x, int | float) and not isinstance(x, bool) else 0


def _losses(rec: dict) -> dict:
    return _d(_d(rec.get("rendered")).get("losses"))


def tags(kind: str, rec: dict) -> tuple[str, ...]:
    """The filters ``rec`` (one certificate item of ``kind``) belongs to, in ``FILTERS`` order."""
    t: set[str] = set()
    if kind == "crystal":
        orc = _d(rec.get("oracle"))
        if rec.get("outcome") == "error":
            t.add("item_error")
        else:
            t.add("correct" if rec.get("correct") is True else "incorrect")
        if rec.get("unique") is True:
            t.add("unique")
        if _num(orc.get("n_phantoms")) > 0:
            t.add("phantoms")
        if _num(orc.get("n_missing")) > 0:
            t.add("missing_atoms")
        if rec.get("label_mismatch"):
            t.add("label_mismatch")
        if rec.get("symmetry_raised"):
            t.add("symmetry_raised")
    elif kind == "task":
        if _num(rec.get("n_consistent")) == 1:
            t.add("unique")
        t.add("correct" if rec.get("best_guess") == rec.get("truth") else "incorrect")
    else:  # interaction
        if _num(_losses(rec).get("criterion_margin")) > 0:
            t.add("uncertain_bonds")
        if _num(_losses(rec).get("label_hidden")) > 0:
            t.add("illegible_labels")
        if _num(_losses(rec).get("phantom")) > 0:
            t.add("phantoms")
        n_true, n_det = _d(rec.get("rendered")).get("n_true"), _d(rec.get("rendered")).get("n_determined")
        if isinstance(n_true, int) and n_true == n_det:
            t.add("unique")
    return tuple(f for f in FILTERS if f in t)


def certificate_counts(kind: str, cert: dict) -> dict[str, int]:
    """The counts the certificate's own summary states (crystal certificates; a task certificate's number of
    unique items); filters it states nothing about are left out."""
    s = _d(cert.get("summary"))
    if kind == "crystal":
        c = _d(s.get("phantom_census"))
        out = {"unique": c.get("items_unique"), "phantoms": c.get("items_with_phantoms"),
               "missing_atoms": c.get("items_with_missing_atoms"),
               "label_mismatch": len(s["label_mismatches"]) if isinstance(s.get("label_mismatches"), list) else None,
               "symmetry_raised": s.get("n_symmetry_raised"), "item_error": s.get("n_errors")}
        return {k: v for k, v in out.items() if isinstance(v, int)}
    if kind == "task":
        u = _d(s.get("all")).get("unique")
        return {"unique": u} if isinstance(u, int) else {}
    return {}
