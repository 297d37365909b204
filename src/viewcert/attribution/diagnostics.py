"""The rungs beside the ladder and the account of a model's deficit, computed from a built ladder, its
canonical table and (optionally) the prompt texts and the items' constraints.

Rungs, bottom to top: chance (1/k), the model-free **text ceiling** (:mod:`.text_ceiling`), the image-free arms
**choices-only** and **no-image** (read like any arm; each tested against the text ceiling and per item
against the model's own answer prior, :mod:`.shortcuts`), R4, R3 and R1. Every arm's **adherence**
(:mod:`.adherence`) is shown beside it, so an unscored arm whose answers never parse is reported as the
adherence failure it is (the study's gpt-4.1-mini no-image arm: 0 of 210 items with a parseable answer).

Per model and ceiling, the **deficit account** (:mod:`.account`): R1 − R4 = format + shortcut + perception +
reasoning, exactly, with one paired bootstrap for all terms; the report shows it first. It is the one
account: the perception share (R3 − R4)/(R1 − R4) stays the ladder's, the format-limited items of an arm are in
``adherence.csv`` and the per-item shortcut test's excess over the model's own answer prior in ``shortcuts.csv``
(a different quantity from the account's shortcut term, named apart there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from viewcert import stats as st
from viewcert.attribution.account import deficit_account
from viewcert.attribution.adherence import adherence_for_table, constraint_checks
from viewcert.attribution.ladder import Ladder
from viewcert.attribution.settings import DiagnosticsSettingsRecord
from viewcert.attribution.shortcuts import against_text_ceiling, item_tests, shortcut_summary, vision_centric
from viewcert.attribution.table import ResultTable
from viewcert.attribution.text_ceiling import (
    distractor_audit,
    exact_ceiling_items,
    giveaway_audit,
    text_ceilings,
)
from viewcert.constraints import Constraint
from viewcert.errors import InputError
from viewcert.io.received import iter_json_lines, read_received_text

RUNG_ORDER = ("chance", "text ceiling", "choices-only", "no-image", "R4", "R3", "R1")


@dataclass(frozen=True)
class Prompts:
    """Per item (aligned to the ladder's universe): the prompt text a text-only reader sees, and the
    option texts when the item lists them; ``source`` says where they came from."""

    texts: tuple[str, ...]
    options: tuple[tuple[str, ...], ...] | None = None
    source: str = ""


@dataclass(frozen=True)
class Diagnostics:
    """Everything the report's adherence and shortcut sections show; tables sorted deterministically."""

    rungs: pd.DataFrame
    adherence: pd.DataFrame
    text_ceiling: pd.DataFrame
    giveaway: pd.DataFrame
    distractors: dict | None
    free_vs_ceiling: pd.DataFrame
    shortcut_tests: pd.DataFrame
    shortcuts: pd.DataFrame
    vision_centric: dict
    settings: DiagnosticsSettingsRecord
    #: the additive account of R1 − R4 per (ceiling, model) (:mod:`.account`)
    account: pd.DataFrame | None = None
    #: one row per (response, requirement): met and why not (``adherence_responses.csv``)
    checks: pd.DataFrame | None = None
    #: the text-only reader's per-item correctness over the ladder's items (None: no informative text ceiling)
    text_items: np.ndarray | None = None


def read_prompts(path: str | Path, universe: Sequence[str], *, field_name: str = "question",
                 id_fields: Sequence[str] = ("id", "source_id", "material_id", "item_id")) -> Prompts:
    """Prompt texts (and ``choices`` when present) of the universe's items from a JSONL file (the study's
    ``eval.jsonl``, an export's ``benchmark.jsonl`` or a prompt variant); every item must be found."""
    path = Path(path)
    src = str(path)
    # a regular file within max_json_bytes, read once from its checked descriptor
    text = read_received_text(path, what="prompt file")
    found: dict[str, dict] = {}
    for n, rec in iter_json_lines(text, source=src):  # a duplicate key is refused, never last-wins
        if not isinstance(rec, dict) or not isinstance(rec.get(field_name), str):
            raise InputError(f"line {n}: an object with a string {field_name!r} expected", source=src,
                             field=field_name)
        for k in id_fields:
            if isinstance(rec.get(k), str):
                found.setdefault(rec[k], rec)
    missing = [u for u in universe if u not in found]
    if missing:
        raise InputError(f"{len(missing)} item(s) have no prompt, first {missing[0]!r}", source=src, field="id")
    recs = [found[u] for u in universe]
    opts = None
    if all(isinstance(r.get("choices"), list) for r in recs):
        opts = tuple(tuple(str(c) for c in r["choices"]) for r in recs)
    return Prompts(tuple(r[field_name] for r in recs), opts, src)


def _adherence_text(row: pd.Series) -> str:
    return f"{int(row['items_adherent'])}/{int(row['items_with_response'])} items adherent"


def _full(row: pd.Series) -> bool:
    return int(row["items_adherent"]) == int(row["items_with_response"])


def _rungs(ladder: Ladder, adherence: pd.DataFrame, ceiling_value: float | None,
           text_why: str = "not computed") -> pd.DataFrame:
    """Per model, one column per rung of :data:`RUNG_ORDER`: the count or why it is unscored, with the arm's
    adherence beside an unscored arm and beside a scored one whose answers did not all adhere; a rung without
    results, and a text ceiling that was not computed, say so."""
    adh = {(r["model"], r["rung"]): _adherence_text(r) for _, r in adherence.iterrows()}
    partial = {(r["model"], r["rung"]) for _, r in adherence.iterrows() if not _full(r)}
    r1 = ladder.ceilings[0]
    rows = []
    for model, sub in ladder.arms.groupby("model", sort=True):
        row = {"model": model, "chance": ladder.settings.chance_value,
               "text ceiling": ceiling_value if ceiling_value is not None else f"not computed: {text_why}"}
        for rung in ("choices-only", "no-image", "R4", "R3"):
            a = sub[sub["rung"] == rung]
            if a.empty:
                row[rung] = "no results for this rung"
                continue
            a = a.iloc[0]
            if not a["scored"]:
                row[rung] = f"unscored ({a['unscored_reason']}); adherence {adh.get((model, rung), '—')}"
            else:  # an arm whose failed answers count as wrong says how many did not adhere
                row[rung] = f"{a['correct']}/{a['n']}" + (f"; {adh[(model, rung)]}" if (model, rung) in partial else "")
        row["R1"] = r1.label
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", *RUNG_ORDER])


def diagnose(ladder: Ladder, table: ResultTable, *, prompts: Prompts | None = None,
             item_constraints: Mapping[str, Sequence[Constraint]] | None = None,
             labels: Sequence[str] | None = None, determining: Mapping[str, Sequence[str]] | None = None,
             bootstrap: st.BootstrapSettings = st.BootstrapSettings()) -> Diagnostics:
    """Adherence, text ceiling, audits, shortcut tests and the deficit account for a built ladder."""
    universe = list(ladder.universe)
    frame = table.frame[table.frame["item_id"].isin(set(universe))]
    targets_map = frame.groupby("item_id")["target"].first().to_dict()
    targets = [targets_map[u] for u in universe]
    responses, adherence = adherence_for_table(frame, universe, item_constraints, alpha=bootstrap.alpha)
    text_items, text_why = None, "no prompt texts, so no text ceiling"
    ceil_df = pd.DataFrame()
    giveaway = pd.DataFrame()
    distractors = None
    ceiling_value = None
    if prompts is not None:
        if len(prompts.texts) != len(universe):
            raise InputError(f"{len(prompts.texts)} prompts for {len(universe)} items", field="prompts")
        ceil_df = text_ceilings(prompts.texts, targets, options=prompts.options, alpha=bootstrap.alpha)
        ceiling_value = float(ceil_df.iloc[0]["value"]) if bool(ceil_df.iloc[0]["informative"]) else None
        if ceiling_value is not None:
            text_items = exact_ceiling_items(prompts.texts, targets)
        else:
            text_why = "every prompt text differs, so the text ceiling is uninformative"
        labs = list(labels) if labels else sorted(set(targets))
        giveaway = giveaway_audit(universe, prompts.texts, targets, labs, determining)
        if prompts.options is not None:
            distractors = distractor_audit(prompts.options, targets)
    tests = item_tests(frame, universe, alpha=bootstrap.alpha)
    shortcuts = shortcut_summary(tests, seed=bootstrap.seed, n_boot=bootstrap.n_boot, alpha=bootstrap.alpha)
    adh_text = {(r["model"], r["rung"]): _adherence_text(r) for _, r in adherence.iterrows()}
    # items with a lenient answer (parsed, whatever its form): the arm's answers the test is about
    answered = {(r["model"], r["rung"]): int(r["n"]) - int(r["items_without_answer"])
                for _, r in ladder.arms.iterrows()}
    free = (against_text_ceiling(ladder.arms, ceiling_value, adh_text, answered) if ceiling_value is not None
            else pd.DataFrame())
    settings = DiagnosticsSettingsRecord(
        alpha=bootstrap.alpha, seed=bootstrap.seed, n_boot=bootstrap.n_boot,
        prompts=None if prompts is None else prompts.source,
        constraints="explicit (per item)" if item_constraints else "implicit: a parseable answer",
        text_ceiling=ceiling_value)
    return Diagnostics(_rungs(ladder, adherence, ceiling_value, text_why),
                       adherence, ceil_df, giveaway, distractors, free, tests, shortcuts,
                       vision_centric(tests, universe, alpha=bootstrap.alpha), settings,
                       deficit_account(ladder, responses, targets_map, text_items=text_items, text_why=text_why,
                                       scale=ladder.item_scale),
                       constraint_checks(responses), text_items)
