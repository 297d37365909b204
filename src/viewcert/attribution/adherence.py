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
correct × compliant (CF, C¬F, ¬CF, ¬C¬F), its φ = (CF·¬C¬F − C¬F·¬CF)/√(row and column sums) (None when a
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
from viewcert.attribution.parsing import majority_vote
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


def _check_row(raw, status: str, constraints: Sequence[Constraint]) -> tuple[int, int, str, str]:
    """(checked, met, failed names, reasons) of one response."""
    if not constraints:
        ok = status == "ok"
        return 1, int(ok), "" if ok else IMPLICIT, "" if ok else f"answer {status}"
    checks = verify(raw, constraints)
    failed = [c for c in checks if not c.ok]
    return len(checks), len(checks) - len(failed), ",".join(c.name for c in failed), "; ".join(
        f"{c.name}: {c.reason}" for c in failed)


def response_frame(frame: pd.DataFrame, item_constraints: Mapping[str, Sequence[Constraint]] | None = None
                   ) -> pd.DataFrame:
    """One row per response (no-response samples dropped): correct (lenient), constraints checked and met,
    compliant, the failed constraints and why."""
    item_constraints = item_constraints or {}
    rows = []
    sub = frame[~frame["parse_status"].isin(NO_RESPONSE)].sort_values(
        ["model", "rung", "item_id", "sample_k"], kind="stable")
    for model, rung, iid, k, raw, status, ans, target in zip(
            sub["model"], sub["rung"], sub["item_id"], sub["sample_k"], sub["raw_output"], sub["parse_status"],
            sub["parsed_answer"], sub["target"], strict=True):
        cons = item_constraints.get(str(iid), ())
        checked, met, failed, reasons = _check_row(raw, status, cons)
        rows.append({"model": model, "rung": rung, "item_id": iid, "sample_k": int(k), "explicit": bool(cons),
                     "correct": bool(status == "ok" and ans == target), "checked": checked, "met": met,
                     "compliant": met == checked, "failed": failed, "reasons": reasons, "answer": ans})
    cols = [*RESPONSE_COLUMNS, "answer"]
    return pd.DataFrame(rows, columns=cols)


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
    """Items with a response, adherent items, and the lenient and strict correct vectors (module docstring)."""
    by_item = {iid: g for iid, g in resp.groupby("item_id", sort=False)}
    lenient = np.zeros(len(universe), dtype=bool)
    strict = np.zeros(len(universe), dtype=bool)
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
    return {"items_with_response": responded, "items_adherent": adherent, "lenient": lenient, "strict": strict}


def _arm_row(model: str, rung: str, resp: pd.DataFrame, universe, targets, alpha: float) -> dict:
    n_resp = len(resp)
    c, f = resp["correct"].to_numpy(bool), resp["compliant"].to_numpy(bool)
    cf, cnf, ncf, ncnf = (int((c & f).sum()), int((c & ~f).sum()), int((~c & f).sum()), int((~c & ~f).sum()))
    checked, met = int(resp["checked"].sum()), int(resp["met"].sum())
    csr = Fraction(sum(Fraction(int(m), int(k)) for m, k in zip(resp["met"], resp["checked"], strict=True)),
                   n_resp) if n_resp else None
    items = _item_level(resp, universe, targets)
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
        "CF": cf, "C_notF": cnf, "notC_F": ncf, "notC_notF": ncnf, "phi": ph,
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
