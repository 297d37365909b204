"""Instruction adherence scored apart from correctness (SciMIF's measures), per arm (model × rung).

A *response* is one sample of the canonical table. ``api_error`` samples and missing items are no response
(missing data, not an adherence outcome). Every other response is checked:

- with explicit constraints (the item's ``constraints`` in an exported ``benchmark.jsonl``): each constraint by
  its strict verifier (:func:`viewcert.constraints.verify`);
- without them: one implicit requirement, that the response names an answer the task's parser reads
  (``parse_status == "ok"``). An unparseable or refused answer is therefore an adherence failure, reported as
  such, never only as a wrong answer.

Measures over the responses of an arm: **CSR** = mean over responses of the share of its constraints met;
**ISR** = share of responses meeting every constraint; **DRFR** = constraints met / constraints checked.
**Correctness** is the lenient parser's (the table's ``parsed_answer`` equals the target). The 2×2 of
correct × compliant (CF, C¬F, ¬CF, ¬C¬F) counts *items*, not responses: the K samples of an item are not
independent observations, so an item is correct when its majority-vote answer is right and compliant when more
than half of its responses comply (:data:`ASSOCIATION_UNIT`; with K = 1 the two counts are one). Its φ = (CF·¬C¬F − C¬F·¬CF)/√(row and column sums) (None when a
margin is empty), a two-sided Fisher exact p-value (``scipy.stats.fisher_exact``) and its Bonferroni
correction across the models of a rung.

Per item (the ladder's unit): an item *adheres* when at least one of its responses complies (so without
explicit constraints the non-adherent items are exactly the ladder's items without an answer); its *strict*
answer is the majority vote (tie rule ``first``) of its compliant responses only. **Format-limited** items
are right under the lenient vote and wrong under the strict one: substance right, required form wrong.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from viewcert import stats as st
from viewcert.attribution.parsing import UNDECODABLE, majority_vote
from viewcert.constraints import Constraint, verify
from viewcert.errors import InputError
from viewcert.io.received import iter_json_lines, read_received_text

IMPLICIT = "parseable answer"
NO_RESPONSE = ("api_error",)

RESPONSE_COLUMNS = ["model", "rung", "item_id", "sample_k", "explicit", "correct", "checked", "met", "compliant",
                    "failed", "reasons"]


def read_item_constraints(path: str | Path) -> dict[str, tuple[Constraint, ...]]:
    """Per item id (both ``id`` and ``source_id`` keys) the constraints an exported ``benchmark.jsonl`` (or
    any JSONL with a ``constraints`` list per line) asked for; size checked before reading."""
    path = Path(path)
    src = str(path)
    # a regular file within max_json_bytes, read once from its checked descriptor
    text = read_received_text(path, what="constraints file")
    out: dict[str, tuple[Constraint, ...]] = {}
    for n, rec in iter_json_lines(text, source=src, field="constraints"):  # a duplicate key is refused
        if not isinstance(rec, dict) or not isinstance(rec.get("constraints", []), list):
            raise InputError(f"line {n}: an object with a 'constraints' list expected", source=src,
                             field="constraints")
        cons = tuple(Constraint.from_dict(c, source=src) for c in rec.get("constraints", []))
        for key in ("id", "source_id"):
            if isinstance(rec.get(key), str):
                out[rec[key]] = cons
    return out


def _check_row(raw, status: str, reason: str, constraints: Sequence[Constraint]) -> tuple[tuple[str, bool, str], ...]:
    """(constraint, met, why not) for each requirement of one response: the explicit constraints by their strict
    verifiers, else the implicit parseable answer. A response the reader found not to be UTF-8 text
    (:data:`~.parsing.UNDECODABLE`) meets none of its constraints, for that reason."""
    bad = isinstance(reason, str) and reason.startswith(UNDECODABLE)
    if not constraints:
        ok = status == "ok"
        return ((IMPLICIT, ok, "" if ok else (reason if bad else f"answer {status}" + (f": {reason}" if
                                                                                      reason else ""))),)
    if bad:
        return tuple((c.name, False, reason) for c in constraints)
    return tuple((c.name, c.ok, c.reason) for c in verify(raw, constraints))


def response_frame(frame: pd.DataFrame, item_constraints: Mapping[str, Sequence[Constraint]] | None = None
                   ) -> pd.DataFrame:
    """One row per response (no-response samples dropped): correct (lenient), constraints checked and met,
    compliant, the failed constraints and why; ``checks`` holds (constraint, met, reason) per requirement."""
    item_constraints = item_constraints or {}
    rows = []
    sub = frame[~frame["parse_status"].isin(NO_RESPONSE)].sort_values(
        ["model", "rung", "item_id", "sample_k"], kind="stable")
    why = sub["parse_reason"] if "parse_reason" in sub else pd.Series([""] * len(sub), index=sub.index)
    for model, rung, iid, k, raw, status, ans, target, reason in zip(
            sub["model"], sub["rung"], sub["item_id"], sub["sample_k"], sub["raw_output"], sub["parse_status"],
            sub["parsed_answer"], sub["target"], why.fillna(""), strict=True):
        cons = item_constraints.get(str(iid), ())
        checks = _check_row(raw, status, str(reason), cons)
        failed = [c for c in checks if not c[1]]
        rows.append({"model": model, "rung": rung, "item_id": iid, "sample_k": int(k), "explicit": bool(cons),
                     "correct": bool(status == "ok" and ans == target), "checked": len(checks),
                     "met": len(checks) - len(failed), "compliant": not failed,
                     "failed": ",".join(c[0] for c in failed), "reasons": "; ".join(f"{c[0]}: {c[2]}" for c in failed),
                     "answer": ans, "checks": checks})
    cols = [*RESPONSE_COLUMNS, "answer", "checks"]
    return pd.DataFrame(rows, columns=cols)


CHECK_COLUMNS = ["model", "rung", "item", "sample", "constraint", "met", "reason"]


def constraint_checks(responses: pd.DataFrame) -> pd.DataFrame:
    """One row per (response, requirement), for ``adherence_responses.csv``: model, rung, item, sample,
    constraint, met (bool) and the reason it was not met (empty when met)."""
    rows = [{"model": r.model, "rung": r.rung, "item": r.item_id, "sample": int(r.sample_k), "constraint": name,
             "met": bool(ok), "reason": "" if ok else why}
            for r in responses.itertuples(index=False) for name, ok, why in r.checks]
    return pd.DataFrame(rows, columns=CHECK_COLUMNS)


def phi(cf: int, cnf: int, ncf: int, ncnf: int) -> float | None:
    """φ of the correct × compliant 2×2 (rows correct / not, columns compliant / not); None when a row or a
    column is empty."""
    margins = (cf + cnf) * (ncf + ncnf) * (cf + ncf) * (cnf + ncnf)
    if margins == 0:
        return None
    return (cf * ncnf - cnf * ncf) / math.sqrt(margins)


def fisher_p(cf: int, cnf: int, ncf: int, ncnf: int) -> float:
    """Two-sided Fisher exact p-value of the 2×2 (``scipy.stats.fisher_exact``)."""
    return float(sps.fisher_exact([[cf, cnf], [ncf, ncnf]], alternative="two-sided").pvalue)


def _item_level(resp: pd.DataFrame, universe: Sequence[str], targets: Mapping[str, str]) -> dict:
    """Items with a response, adherent items, the lenient and strict correct vectors (module docstring), and the
    item-level correct × compliant vectors over the items with a response (correct: the lenient vote right;
    compliant: more than half of the item's responses comply)."""
    by_item = {iid: g for iid, g in resp.groupby("item_id", sort=False)}
    lenient = np.zeros(len(universe), dtype=bool)
    strict = np.zeros(len(universe), dtype=bool)
    item_c, item_f = [], []
    responded = adherent = 0
    for j, iid in enumerate(universe):
        g = by_item.get(iid)
        if g is None:
            continue
        responded += 1
        adherent += bool(g["compliant"].any())
        lenient[j] = majority_vote([a if isinstance(a, str) else None for a in g["answer"]]).answer == targets[iid]
        strict_answers = [a if c else None for a, c in zip(g["answer"], g["compliant"], strict=True)]
        strict[j] = majority_vote([a if isinstance(a, str) else None for a in strict_answers]).answer == targets[iid]
        item_c.append(bool(lenient[j]))
        item_f.append(2 * int(g["compliant"].sum()) > len(g))
    return {"items_with_response": responded, "items_adherent": adherent, "lenient": lenient, "strict": strict,
            "item_correct": np.array(item_c, dtype=bool), "item_compliant": np.array(item_f, dtype=bool)}


#: the unit of the correct × compliant table and its tests (written into adherence.csv)
ASSOCIATION_UNIT = ("item: correct = its majority-vote answer is right, compliant = more than half of its "
                    "responses comply (K samples of an item are one observation)")


def _arm_row(model: str, rung: str, resp: pd.DataFrame, universe, targets, alpha: float) -> dict:
    n_resp = len(resp)
    f = resp["compliant"].to_numpy(bool)
    checked, met = int(resp["checked"].sum()), int(resp["met"].sum())
    csr = Fraction(sum(Fraction(int(m), int(k)) for m, k in zip(resp["met"], resp["checked"], strict=True)),
                   n_resp) if n_resp else None
    items = _item_level(resp, universe, targets)
    ic, fi = items["item_correct"], items["item_compliant"]  # the item is the unit of the 2×2
    cf, cnf, ncf, ncnf = (int((ic & fi).sum()), int((ic & ~fi).sum()), int((~ic & fi).sum()), int((~ic & ~fi).sum()))
    limited = int((items["lenient"] & ~items["strict"]).sum())
    n = len(universe)
    b = st.clopper_pearson_interval(limited, n, 1 - alpha)
    explicit = bool(resp["explicit"].any())
    # without explicit constraints correct implies compliant (C¬F = 0 by construction): no φ
    ph = phi(cf, cnf, ncf, ncnf) if explicit else None
    per = {}
    for names in resp["failed"]:
        for name in filter(None, str(names).split(",")):
            per[name] = per.get(name, 0) + 1
    return {
        "model": model, "rung": rung, "requirements": "explicit" if explicit else IMPLICIT, "responses": n_resp,
        "CSR": None if csr is None else float(csr), "CSR_exact": None if csr is None else str(csr),
        "ISR": float(Fraction(int(f.sum()), n_resp)) if n_resp else None,
        "ISR_exact": str(Fraction(int(f.sum()), n_resp)) if n_resp else None,
        "DRFR": float(Fraction(met, checked)) if checked else None,
        "DRFR_exact": str(Fraction(met, checked)) if checked else None,
        "CF": cf, "C_notF": cnf, "notC_F": ncf, "notC_notF": ncnf, "association_unit": ASSOCIATION_UNIT, "phi": ph,
        "fisher_p": fisher_p(cf, cnf, ncf, ncnf) if ph is not None else None,
        "items": n, "items_with_response": items["items_with_response"], "items_adherent": items["items_adherent"],
        "format_limited": limited, "format_limited_share": limited / n, "format_limited_lo": b.lower,
        "format_limited_hi": b.upper, "strict_correct": int(items["strict"].sum()),
        "lenient_correct": int(items["lenient"].sum()),
        "failures_by_constraint": "; ".join(f"{k} {v}" for k, v in sorted(per.items())),
    }


def adherence_summary(responses: pd.DataFrame, universe: Sequence[str], targets: Mapping[str, str], *,
                      alpha: float = st.DEFAULT_ALPHA) -> pd.DataFrame:
    """One row per arm: CSR, ISR, DRFR (float and exact), the 2×2, φ, Fisher p and its Bonferroni correction
    across the models of the rung (models with a φ), item adherence, format-limited items with a two-sided
    Clopper–Pearson interval, strict and lenient correct counts."""
    rows = [_arm_row(str(m), str(r), g, list(universe), targets, alpha)
            for (m, r), g in responses.groupby(["model", "rung"], sort=True)]
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["fisher_p_bonferroni"] = np.nan
    for _rung, g in out.groupby("rung"):
        tested = g["fisher_p"].notna()
        m = int(tested.sum())
        out.loc[g.index[tested], "fisher_p_bonferroni"] = (g.loc[tested, "fisher_p"].astype(float) * m).clip(upper=1)
    return out


def adherence_for_table(frame: pd.DataFrame, universe: Sequence[str],
                        item_constraints: Mapping[str, Sequence[Constraint]] | None = None, *,
                        alpha: float = st.DEFAULT_ALPHA) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(responses, summary) for a canonical table frame (:func:`response_frame`, :func:`adherence_summary`)."""
    targets = frame.groupby("item_id")["target"].first().to_dict()
    resp = response_frame(frame, item_constraints)
    return resp, adherence_summary(resp, universe, targets, alpha=alpha)
