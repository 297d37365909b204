"""Reports: a self-contained HTML page (figures embedded as PNG data URIs), a Markdown summary, every
table as CSV, the figures as PNG files and ``provenance.json`` (inputs with SHA-256, R1 source and
tolerances, thresholds, seed, package versions). Outputs carry no timestamps, so the same inputs and
settings give byte-identical files."""

from __future__ import annotations

import base64
import importlib.metadata
import math
import os
import platform
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import numpy as np
import pandas as pd

from viewcert.attribution import plots
from viewcert.attribution.adherence import ASSOCIATION_UNIT
from viewcert.attribution.diagnostics import Diagnostics
from viewcert.attribution.extraction import ExtractionAudit
from viewcert.attribution.ladder import SHARE_COLUMNS, Ladder
from viewcert.attribution.report_items import evidence_section
from viewcert.attribution.report_tables import SHOWN_IDS as SHOWN_IDS  # the page's cell limit, as before
from viewcert.attribution.report_tables import (
    _ci,
    _fmt,
    _html_linked,
    _html_table,
    _human,
    _md_linked,
    _md_table,
    _p,
    _Page,
    explorer_link,
)
from viewcert.attribution.settings import LadderSettingsRecord
from viewcert.attribution.shortcuts import power_lines
from viewcert.attribution.table import RUNGS, InputRecord, ResultTable
from viewcert.io.atomic import write_json_atomic, write_text_atomic
from viewcert.sanitize import html_text, markdown_text

if TYPE_CHECKING:
    from viewcert.attribution.evidence import ItemEvidence

PACKAGES = ("viewcert", "numpy", "scipy", "pandas", "matplotlib", "pymatgen", "spglib")


def jsonable(obj: Any) -> Any:
    """Plain-JSON version of report data: NaN -> None, numpy -> Python, Fractions -> str."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return None if not math.isfinite(x) else x
    if isinstance(obj, Fraction):
        return str(obj)
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in (obj.tolist() if isinstance(obj, np.ndarray) else obj)]
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    return str(obj)


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for p in PACKAGES:
        try:
            out[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out


@dataclass
class Report:
    """What was written: paths by kind."""

    out_dir: Path
    html: Path
    markdown: Path
    provenance: Path
    csv: dict[str, Path] = field(default_factory=dict)
    figures: dict[str, Path] = field(default_factory=dict)


# ---------------------------------------------------------------------- ladder tables for humans
#: a (model, rung) the inputs did not give, as the count table says it
NO_RESULTS = "no results: no input file gave this model at this rung"


def ladder_count_table(ladder: Ladder) -> pd.DataFrame:
    """Model × rung counts as docs/reference.md prints them: ``count`` or ``unscored (count): reason``, and
    :data:`NO_RESULTS` for a rung the inputs did not give for the model."""
    arms = ladder.arms
    rungs = [r for r in RUNGS if r in set(arms["rung"])]
    rows = []
    for model, sub in arms.groupby("model", sort=True):
        row = {"model": model}
        for r in rungs:
            a = sub[sub["rung"] == r]
            if a.empty:
                row[r] = NO_RESULTS
            else:
                a = a.iloc[0]
                row[r] = f"{a['correct']}" if a["scored"] else f"unscored ({a['correct']}): {a['unscored_reason']}"
        rows.append(row)
    return pd.DataFrame(rows)


#: the columns of ``shares.csv``: the page's share table as numbers (point, interval ends), each in its own cell
SHARE_CSV_COLUMNS = SHARE_COLUMNS
SHARE_UNIT = ("R4 and R3 in items right; the gap and the residual in points of accuracy (fraction of the items, "
              "0–1); the share a ratio of the two (0–1); each as point [95 % paired item bootstrap interval]")


def share_table(ladder: Ladder) -> pd.DataFrame:
    """The perception share per ceiling and model, with human column names (:data:`SHARE_UNIT`)."""
    d = ladder.decomposition
    rows = []
    for _, r in d.iterrows():
        row = {"ceiling": r["r1"], "model": r["model"], "R4 (items right)": r["R4"], "R3 (items right)": r["R3"]}
        if pd.isna(r.get("gap", float("nan"))):
            rows.append({**row, "perception gap R3 − R4 (points)": "—", "residual R1 − R3 (points)": "—",
                         "perception share (R3 − R4)/(R1 − R4)": r["status"], "residual-limited (R1 − R3 over R3 − R4)": "—"})
            continue
        share = (_ci(r["share"], r["share_lo"], r["share_hi"]) if pd.notna(r["share"])
                 else r["suppression_reason"])
        rows.append({**row, "perception gap R3 − R4 (points)": _ci(r["gap"], r["gap_lo"], r["gap_hi"]),
                     "residual R1 − R3 (points)": _ci(r["residual"], r["residual_lo"], r["residual_hi"]),
                     "perception share (R3 − R4)/(R1 − R4)": share,
                     "residual-limited (R1 − R3 over R3 − R4)": "yes" if r["residual_limited"] else "no"})
    return pd.DataFrame(rows)


#: human names of the ladder's own tables (``tests.csv``, ``transitions.csv``, ``arms.csv``, ``coverage.csv``)
TEST_HEADERS = {"family": "family", "model": "model", "lower": "lower rung", "upper": "upper rung",
                "lower_only": "items right only at the lower rung", "upper_only": "items right only at the upper rung",
                "both": "items right at both", "neither": "items right at neither",
                "p_value": "p (exact McNemar, two-sided)", "p_holm": "p, Holm-adjusted in the family"}
TRANSITION_HEADERS = {"model": "model", "R4_right_R3_right": "R4 right, R3 right", "R4_right_R3_wrong":
                      "R4 right, R3 wrong", "R4_wrong_R3_right": "R4 wrong, R3 right",
                      "R4_wrong_R3_wrong": "R4 wrong, R3 wrong"}
ARM_HEADERS = {"model": "model", "rung": "rung", "correct": "items right", "n": "items",
               "accuracy": "accuracy (0–1)", "ci_lo": "95 % interval low (Clopper–Pearson)",
               "ci_hi": "95 % interval high", "scored": "scored", "unscored_reason": "why unscored",
               "samples": "samples", "k": "samples per item (K)", "api_error_samples": "samples with an API error",
               "refused_samples": "refused samples", "unparseable_samples": "unparseable samples",
               "items_without_answer": "items without an answer", "missing_items": "items missing from the file",
               "ties": "items with a tied vote", "failure_reasons": "why samples failed"}
COVERAGE_HEADERS = {"model": "model", "rung": "rung", "n_items": "items asked", "present": "items present",
                    "missing": "items missing", "missing_ids": "missing item ids"}


def explorer_index(site: str | os.PathLike, report_dir: str | os.PathLike) -> str:
    """The URL of the explorer's ``index.html`` in the site folder ``site`` relative to ``report_dir`` (what
    :func:`write_report`'s ``explorer`` takes), percent-encoded."""
    rel = os.path.relpath(os.path.abspath(Path(site) / "index.html"), os.path.abspath(report_dir))
    return quote(Path(rel).as_posix())


def count_links(ladder: Ladder, counts: pd.DataFrame, index: str | None) -> dict[tuple[int, str], str]:
    """The explorer's filtered view of each count of :func:`ladder_count_table` (the items a model is right on at
    a rung); {} without an explorer."""
    if index is None:
        return {}
    return {(i, r): explorer_link(index, model=m, **{r.replace("-", "_"): "right"})
            for i, m in enumerate(counts["model"].tolist()) for r in counts.columns[1:]
            if (m, r) in ladder.arm_objects}


def transition_links(transitions: pd.DataFrame, index: str | None) -> dict[tuple[int, str], str]:
    """The explorer's filtered view of each count of the R4 → R3 transitions (its column names)."""
    if index is None or transitions.empty:
        return {}
    out = {}
    for i, m in enumerate(transitions["model"].tolist()):
        for col, name in TRANSITION_HEADERS.items():
            if col.startswith("R4_"):
                _, r4, _, r3 = col.split("_")
                out[(i, name)] = explorer_link(index, model=m, R4=r4, R3=r3)
    return out


def item_outcomes_table(ladder: Ladder) -> pd.DataFrame:
    """Each arm's verdict on each item of the ladder's universe as the ladder scores it (``item_outcomes.csv``:
    model, rung, item_id, right 1/0), what ``viewcert explore`` filters by."""
    rows = [(m, r, iid, int(ok)) for (m, r), arm in sorted(ladder.arm_objects.items())
            for iid, ok in zip(ladder.universe, arm.correct_vector.tolist(), strict=True)]
    return pd.DataFrame(rows, columns=["model", "rung", "item_id", "right"])


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{html_text(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}"/>'


_CSS = """body{font-family:system-ui,sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;color:#222}
table.t{border-collapse:collapse;font-size:12px;margin:0.6em 0}table.t td,table.t th{border-bottom:1px solid #ddd;
padding:3px 7px;text-align:left}table.t caption{caption-side:top;text-align:left;color:#555;font-size:12px}h1{font-size:1.5em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}
img{max-width:100%;border:1px solid #eee;margin:0.5em 0}pre{background:#f6f6f6;padding:0.6em;font-size:12px;
overflow-x:auto}.warn{color:#8a4b00}"""


def _ladder_summary_lines(summary: pd.DataFrame) -> list[str]:
    """One line per R1 source: the median perception share across models and its sign test."""
    lines = []
    for _, r in summary.iterrows():
        if pd.notna(r.get("median_share", float("nan"))):
            lines.append(
                f"{r['r1']}: median perception share {r['median_share']:.4f} ({r['median_share_exact']}) "
                f"[{r['median_share_lo']:.4f}, {r['median_share_hi']:.4f}] over {int(r['models_with_share'])} "
                f"models; {int(r['residual_limited'])} of {int(r['models_decomposed'])} residual-limited; "
                f"sign test share > 0: {int(r['share_sign_test_positive'])}+/"
                f"{int(r['share_sign_test_negative'])}−, p = {r['share_sign_test_p']:.4g}")
        else:
            lines.append(f"{r['r1']}: no model has a share")
    return lines


def _ladder_settings_text(s: LadderSettingsRecord) -> str:
    return (f"items: {s.n_items}; unscored threshold: {s.threshold:.0%} ({s.threshold_rule}); "
            f"tie rule: {s.tie_rule}; scoring: {s.scoring}; chance: {s.chance} "
            f"(majority class {s.majority_class}); bootstrap: {s.n_boot} paired item "
            f"resamples, seed {s.seed}, percentile {1 - s.alpha:.0%}; share suppressed when "
            f"the bootstrap lower bound of R1 − R4 < {s.share_cutoff}.")


def _ladder_figures(page: _Page, ladder: Ladder) -> tuple[bytes, list[bytes], bytes, bytes]:
    """The ladder's figures, written as PNG files: (ladder, decomposition per ceiling, forest, transitions)."""
    ceilings = [(c.label, float(c.value)) for c in ladder.ceilings]
    png_ladder = page.fig("ladder", plots.ladder_plot(ladder.arms, chance=ladder.settings.chance_value,
                                                      ceilings=ceilings))
    dec_pngs = [page.fig(f"decomposition_{i + 1}", plots.decomposition_bars(ladder.decomposition, c.label))
                for i, c in enumerate(ladder.ceilings)]
    png_forest = page.fig("shares_forest", plots.forest_plot(ladder.decomposition, ladder.summary))
    png_trans = page.fig("transitions", plots.transition_matrices(ladder.transitions))
    return png_ladder, dec_pngs, png_forest, png_trans


def _ladder_section(page: _Page, ladder: Ladder, table: ResultTable | None) -> None:
    """CSV tables, figures, Markdown and HTML of the ladder, and its provenance."""
    counts = ladder_count_table(ladder)
    shares = share_table(ladder)
    share_numbers = ladder.shares  # numbers as numbers, not "x [lo, hi]"
    for name, df in (("ladder_counts", counts), ("arms", ladder.arms), ("decomposition", ladder.decomposition),
                     ("shares", share_numbers), ("tests", ladder.tests), ("transitions", ladder.transitions),
                     ("summary", ladder.summary), ("coverage", ladder.coverage)):
        page.csv(name, df)
    page.csv("item_outcomes", item_outcomes_table(ladder))
    if table is not None:
        page.csv("results_table", table.frame.sort_values(["model", "rung", "item_id", "sample_k"], kind="stable"))
    png_ladder, dec_pngs, png_forest, png_trans = _ladder_figures(page, ladder)
    s = ladder.settings
    summary_lines = _ladder_summary_lines(ladder.summary)
    settings_text = _ladder_settings_text(s)
    count_unit = (f"items right of the {s.n_items} (each item's majority vote over its samples, tie rule: "
                  f"{s.tie_rule}); an unscored "
                  "arm shows its count and why, a rung without results says so")
    links = count_links(ladder, counts, page.explorer)
    told = ([f"Each count links to the items it counts in the explorer ({page.explorer}; `viewcert explore` "
             "writes it)."] if page.explorer else [])
    page.md += [f"## Ladder (correct of {s.n_items} items)\n", *[f"{markdown_text(t)}\n\n" for t in told],
                _md_linked(counts, count_unit, links),
                "\n## Perception share (R3 − R4)/(R1 − R4) with paired bootstrap intervals\n",
                _md_table(shares, SHARE_UNIT),
                "\n## Across models\n", "\n".join(f"- {markdown_text(x)}" for x in summary_lines) + "\n",
                f"\n## Settings\n\n{markdown_text(settings_text)}\n"]
    page.body += ["<h2>Ladder</h2>", f"<p>{html_text(settings_text)}</p>", _img(png_ladder, "ladder plot"),
                  *[f"<p>{html_text(t)}</p>" for t in told], _html_linked(counts, count_unit, links),
                  "<h2>Decomposition</h2>"]
    page.body += [_img(p, f"decomposition {c.label}") for p, c in zip(dec_pngs, ladder.ceilings, strict=True)]
    page.body += ["<h2>Perception share</h2>", _img(png_forest, "forest plot of shares"),
                  _html_table(shares, SHARE_UNIT),
                  "<ul>" + "".join(f"<li>{html_text(x)}</li>" for x in summary_lines) + "</ul>",
                  "<h2>Tests between adjacent rungs (exact McNemar, Holm within family)</h2>",
                  _html_table(_human(ladder.tests, TEST_HEADERS, ("p_value", "p_holm")),
                              "items (pairs of the two rungs' outcomes on one item); p-values"),
                  "<h2>R4 → R3 transitions</h2>", _img(png_trans, "transition matrices"),
                  _html_linked(_human(ladder.transitions, TRANSITION_HEADERS), "items",
                               transition_links(ladder.transitions, page.explorer)),
                  "<h2>Arms</h2>",
                  _html_table(_human(ladder.arms, ARM_HEADERS),
                              "items and samples, counted as each column says; accuracy = items right / items (0–1)"),
                  "<h2>Coverage</h2>", _html_table(_human(ladder.coverage, COVERAGE_HEADERS), "items")]
    warn = list(ladder.warnings)
    if warn:
        page.md += ["\n## Reader notes\n", "\n".join(f"- {markdown_text(w)}" for w in warn) + "\n"]
        page.body += ["<h2>Reader notes</h2><ul class='warn'>" + "".join(
            f"<li>{html_text(w)}</li>" for w in warn) + "</ul>"]
    page.prov["ladder"] = {"settings": s.to_dict(), "warnings": warn,
                           "inputs": [i.to_dict() for i in (table.inputs if table is not None else [])]}


TASK_UNIT = ("exact: items answered exactly right / items; MiSI credit and the certified ceilings: points of "
             "partial credit, the mean over the items (0–1)")


def task_scores_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Per arm: exact answers, MiSI partial credit and the certified partial and exact ceilings beside it."""
    return pd.DataFrame([{"model": r["model"], "rung": r["rung"], "exact": f"{r['exact_correct']}/{r['n']}",
                          "MiSI credit": _fmt(r["misi_credit"]),
                          "certified partial ceiling": _fmt(r["certified_partial_ceiling"]),
                          "certified exact ceiling": _fmt(r["certified_exact_ceiling"]),
                          "normalisers": r["normalisers"]} for _, r in scores.iterrows()])


def _harness_cell(r) -> str:
    """``k/n``, or the text of an arm with no harness score (``task_scores.NO_HARNESS_SCORE``)."""
    h = r["harness_correct"]
    return h if isinstance(h, str) else f"{h}/{r['n']}"


def agreement_table(agreement: pd.DataFrame) -> pd.DataFrame:
    """Per arm: items right by viewcert's parse and by the harness's own score, and where they disagree (the
    first :data:`SHOWN_IDS` ids)."""
    rows = []
    for _, r in agreement.iterrows():
        ids = str(r["disagreeing_ids"]).split()
        rows.append({"model": r["model"], "rung": r["rung"], "viewcert": f"{r['viewcert_correct']}/{r['n']}",
                     "harness": _harness_cell(r), "disagreements": int(r["disagreements"]),
                     "disagreeing ids": _fmt(ids) if ids else ""})
    return pd.DataFrame(rows)


def _task_section(page: _Page, ladder: Ladder) -> None:
    """The task scores (MiSI partial credit beside the certified ceiling) and the harness agreement, each a
    table in the page and a CSV; every received text (model names, ids) escaped by the table writers."""
    if ladder.task_scores is not None and len(ladder.task_scores):
        page.csv("task_scores", ladder.task_scores)
        t = task_scores_table(ladder.task_scores)
        title = "Task scores: MiSI partial credit (voted answers) beside the certified ceiling"
        page.md += [f"\n## {title}\n", _md_table(t, TASK_UNIT)]
        page.body += [f"<h2>{html_text(title)}</h2>", _html_table(t, TASK_UNIT)]
    if ladder.harness_agreement is not None and len(ladder.harness_agreement):
        page.csv("harness_agreement", ladder.harness_agreement)
        t = agreement_table(ladder.harness_agreement)
        n = int(ladder.harness_agreement["disagreements"].sum())
        note = (f"{n} (arm, item) disagreement(s) between the harness's own per-sample scores (an item right when "
                f"the mean of its samples' scores is at least 0.5) and viewcert's parse; every id in "
                f"harness_agreement.csv")
        title = "Harness agreement: the harness's own scores vs viewcert's"
        unit = "items right / items (viewcert's parse, the harness's own score); disagreements in items"
        page.md += [f"\n## {title}\n", f"{markdown_text(note)}\n", _md_table(t, unit)]
        page.body += [f"<h2>{html_text(title)}</h2>", f"<p>{html_text(note)}</p>", _html_table(t, unit)]


#: the account table's columns (the unit in every header): point [95 % interval] per term
ACCOUNT_HEADERS = {"model": "model", "R4": "R4 (points)", "format": "format (points)",
                   "shortcut": "shortcut (points)", "perception": "perception R3 − R4 (points)",
                   "reasoning": "reasoning (points)", "R1": "R1 (points)", "deficit": "R1 − R4 (points)",
                   "note": "note"}


def _term_cell(r: Mapping[str, Any], term: str) -> str:
    """``point [lo, hi]`` of a measured term; ``not measurable (in reasoning)`` / ``not measured (in
    reasoning)`` for one that is not; ``—`` in a row that is not decomposed."""
    if r["status"] != "ok":
        return "—"
    if pd.isna(r[term]):
        return ("not measurable" if str(r[f"{term}_status"]).startswith("not measurable") else
                "not measured") + " (in reasoning)"
    return f"{r[term]:.4f} [{r[f'{term}_lo']:.4f}, {r[f'{term}_hi']:.4f}]"


def account_table(account: pd.DataFrame, r1_label: str) -> pd.DataFrame:
    """The deficit account against one ceiling as people read it (:data:`ACCOUNT_HEADERS`): R4, each term as
    ``point [lo, hi]`` (4 decimals, in the account's unit), R1, R1 − R4 with its interval, and a note
    that says why a row is not decomposed or which terms are not measured and why (absorbed by reasoning)."""
    rows = []
    for _, r in account[account["r1"] == r1_label].iterrows():
        ok = r["status"] == "ok"
        note = "; ".join(f"{t}: {r[f'{t}_status']}" for t in ("format", "shortcut") if pd.isna(r[t])) if ok \
            else str(r["status"])
        rows.append({"model": r["model"], "R4": "—" if pd.isna(r["R4"]) else f"{r['R4']:.4f}",
                     **{t: _term_cell(r, t) for t in ("format", "shortcut", "perception", "reasoning")},
                     "R1": f"{r['R1']:.4f}",
                     "deficit": f"{r['deficit']:.4f} [{r['deficit_lo']:.4f}, {r['deficit_hi']:.4f}]" if ok else "—",
                     "note": note})
    return pd.DataFrame(rows, columns=list(ACCOUNT_HEADERS)).rename(columns=ACCOUNT_HEADERS)


def _account_section(page: _Page, diag: Diagnostics, ladder: Ladder) -> None:
    """First in the page: the deficit account (one table per ceiling, the first ceiling's first), its stacked
    bars, and the one-sentence account per model; ``deficit_decomposition.csv`` holds every number."""
    acc = diag.account
    page.csv("deficit_decomposition", acc)
    labels = list(dict.fromkeys(acc["r1"]))  # the ladder's ceilings, or the partial-credit scale's own R1
    first = labels[0]
    unit = str(acc["unit"].iloc[0])
    png = page.fig("deficit_decomposition", plots.account_bars(acc, first, unit=unit))
    s = ladder.settings
    table_unit = f"{unit}, over the {s.n_items} items; each term as point [95 % interval]"
    how = ("Intervals: 95 % "
           f"paired item bootstrap, {s.n_boot} resamples of the items, seed {s.seed}, every term recomputed "
           "from the same resample. The four terms add up exactly to R1 − R4 (exact fractions in "
           "deficit_decomposition.csv). A term that is not measured counts 0 and is absorbed by reasoning; a negative "
           "term takes points off the others (a shortcut below what the text alone gives away, say).")
    sentences = [x for x in acc.loc[acc["r1"] == first, "sentence"] if isinstance(x, str)]
    title = f"Deficit R1 − R4 by kind against {first} ({unit})"
    tables = [(label, account_table(acc, label)) for label in labels]
    page.md += [f"\n## {markdown_text(title)}\n", f"{markdown_text(how)}\n", _md_table(tables[0][1], table_unit),
                "\n".join(f"- {markdown_text(x)}" for x in sentences) + "\n"]
    page.body += [f"<h2>{html_text(title)}</h2>", _html_table(tables[0][1], table_unit), f"<p>{html_text(how)}</p>",
                  _img(png, "deficit decomposition bars"),
                  "<ul>" + "".join(f"<li>{html_text(x)}</li>" for x in sentences) + "</ul>"]
    for label, t in tables[1:]:
        page.md += [f"\n### Against {markdown_text(label)}\n", _md_table(t, table_unit)]
        page.body += [f"<h3>Against {html_text(label)}</h3>", _html_table(t, table_unit)]


#: human names of the adherence table's columns
ADHERENCE_HEADERS = {"model": "model", "rung": "rung", "requirements": "requirements", "responses": "responses",
                     "CSR": "CSR (0–1)", "ISR": "ISR (0–1)", "DRFR": "DRFR (0–1)", "CF": "items correct & compliant",
                     "C_notF": "items correct, not compliant", "notC_F": "items wrong, compliant",
                     "notC_notF": "items wrong, not compliant", "phi": "φ (items)",
                     "fisher_p": "Fisher p (items, two-sided)", "fisher_p_bonferroni": "Fisher p, Bonferroni",
                     "items_adherent": "items adherent", "items_with_response": "items with a response",
                     "format_limited": "format-limited items",
                     "failures_by_constraint": "failed responses by constraint"}
ADHERENCE_UNIT = ("CSR, ISR, DRFR shares of responses or of constraints checked (0–1); the 2×2, φ and Fisher p on "
                  "items; failures in responses")
#: why a cell of the adherence table has no number, for an arm without explicit constraints
IMPLICIT_WHY = "not defined: without explicit constraints a correct answer is a compliant one"
FORMAT_NOT_MEASURABLE = "not measurable: nothing beyond a parseable answer was asked"


def adherence_table(adherence: pd.DataFrame) -> pd.DataFrame:
    """The adherence table for people: human column names; φ and Fisher's p say why they are absent, and the
    format-limited count is *not measurable* where nothing beyond a parseable answer was asked."""
    t = adherence.reindex(columns=list(ADHERENCE_HEADERS)).astype(object)
    implicit = [r == "parseable answer" for r in t["requirements"]]
    why = [IMPLICIT_WHY if i else "not defined: a row or column of the 2×2 is empty" for i in implicit]
    for col in ("phi", "fisher_p", "fisher_p_bonferroni"):
        t[col] = [w if (v is None or pd.isna(v)) else (_p(v) if col != "phi" else v)
                  for v, w in zip(t[col], why, strict=True)]
    t["format_limited"] = [FORMAT_NOT_MEASURABLE if i else v for v, i in zip(t["format_limited"], implicit,
                                                                              strict=True)]
    t["failures_by_constraint"] = [v if isinstance(v, str) and v else "none" for v in t["failures_by_constraint"]]
    return t.rename(columns=ADHERENCE_HEADERS)


#: human names of the diagnostics' own tables
RUNG_HEADERS = {"model": "model", "chance": "chance (accuracy)", "text ceiling": "text ceiling (accuracy)",
                "choices-only": "choices-only (items right / items)", "no-image": "no-image (items right / items)",
                "R4": "R4 (items right / items)", "R3": "R3 (items right / items)", "R1": "R1 (ceiling)"}
FREE_HEADERS = {"model": "model", "rung": "rung", "correct": "items right", "n": "items",
                "accuracy": "accuracy (0–1)", "text_ceiling": "text ceiling (accuracy)", "adherence": "adherence",
                "p_above_ceiling": "p above the text ceiling (exact binomial, one-sided)",
                "p_holm": "p, Holm-adjusted across arms", "status": "status"}
TEXT_CEILING_HEADERS = {"key": "what a text-only reader reads", "correct": "items right", "n": "items",
                        "value": "text ceiling (accuracy)", "value_exact": "exact", "ci_lo": "95 % interval low",
                        "ci_hi": "95 % interval high", "informative": "informative", "method": "how"}
GIVEAWAY_HEADERS = {"item_id": "item", "answer_named": "names the answer", "space_group": "space-group symbol",
                    "lattice_parameters": "lattice parameters", "determining_names": "names that determine it",
                    "flagged": "flagged", "flags": "why flagged"}
#: the per-item test's mean excess is not the account's shortcut term: named apart
SHORTCUT_TEST_HEADERS = {"model": "model", "rung": "rung", "items_tested": "items tested",
                         "significant_items": "items answered beyond the model's own prior (BH, α)",
                         "shortcut_share": "mean excess k/N − prior over the items (share of samples)",
                         "shortcut_share_lo": "95 % interval low", "shortcut_share_hi": "95 % interval high",
                         "method": "method"}
DISTRACTOR_UNIT = ("length ratio: mean answer length / mean distractor length (characters); the option shares: "
                   "fraction of the items (0–1), against chance, the mean of 1/k")


def _distractor_table(d: Mapping[str, Any]) -> pd.DataFrame:
    """The distractor audit as a two-column table (measure, value)."""
    return pd.DataFrame([{"measure": k.replace("_", " "), "value": float(v) if isinstance(v, Fraction) else v}
                         for k, v in d.items()])


def _diagnostics_lines(diag: Diagnostics) -> list[str]:
    """The headline sentences: text ceiling, what the per-item shortcut test shows (and its power), adherence
    failures of unscored arms."""
    lines = []
    tc = diag.text_ceiling
    if len(tc):
        r = tc.iloc[0]
        lines.append(f"text ceiling (exact, prompt text alone): {r['correct']}/{r['n']} = {r['value']:.4f} "
                     f"({r['method']})" + ("" if r["informative"] else "; every text differs, so uninformative"))
    lines += power_lines(diag.shortcuts, diag.vision_centric, alpha=diag.settings.alpha)
    adh = diag.adherence.set_index(["model", "rung"]) if len(diag.adherence) else None
    for _, r in diag.free_vs_ceiling.iterrows():
        if not r["status"].startswith("unscored") or adh is None or (r["model"], r["rung"]) not in adh.index:
            continue
        a = adh.loc[(r["model"], r["rung"])]
        failed = a["items_with_response"] - a["items_adherent"]
        what = ("an adherence failure: a measured outcome of the model, not missing data"
                if failed > 0.05 * max(a["items_with_response"], 1) else
                "the answers returned do parse: unscored for missing responses")
        lines.append(f"{r['model']} {r['rung']}: {r['status']}; adherence {r['adherence']} — {what}")
    return lines


def _diagnostics_section(page: _Page, diag: Diagnostics) -> None:
    """Every rung, adherence, text ceiling, audits and shortcut tests (the deficit account is its own section)."""
    frames = (("rungs", diag.rungs), ("adherence", diag.adherence),
              ("text_ceiling", diag.text_ceiling), ("giveaway_audit", diag.giveaway),
              ("image_free_vs_text_ceiling", diag.free_vs_ceiling), ("shortcut_items", diag.shortcut_tests),
              ("shortcuts", diag.shortcuts))
    for name, df in frames:
        page.csv(name, df)
    if diag.checks is not None:
        page.csv("adherence_responses", diag.checks)
    lines = _diagnostics_lines(diag)
    adh = adherence_table(diag.adherence)
    flagged = diag.giveaway[diag.giveaway["flagged"]] if len(diag.giveaway) else diag.giveaway
    rungs = _human(diag.rungs, RUNG_HEADERS)
    rung_unit = ("chance and text ceiling: accuracy (fraction of the items, 0–1); each arm: items right / items, "
                 "or why it is unscored, with its adherence")
    free = _human(diag.free_vs_ceiling, FREE_HEADERS, ("p_above_ceiling", "p_holm"))
    free_unit = "items; accuracy and the text ceiling as fractions of the items (0–1); p-values"
    page.md += ["\n## Every rung (chance, text ceiling, choices-only, no-image, R4, R3, R1)\n",
                _md_table(rungs, rung_unit), "\n## Adherence and shortcuts\n",
                "\n".join(f"- {markdown_text(x)}" for x in lines) + "\n",
                "\n### Adherence (SciMIF: CSR, ISR, DRFR; correct × compliant, counted on items)\n",
                _md_table(adh, ADHERENCE_UNIT), "\n### Image-free arms against the text ceiling\n",
                _md_table(free, free_unit),
                f"\n### Visual-giveaway audit: {len(flagged)} of {len(diag.giveaway)} prompts flagged\n"]
    page.body += ["<h2>Every rung</h2>", _html_table(rungs, rung_unit),
                  "<ul>" + "".join(f"<li>{html_text(x)}</li>" for x in lines) + "</ul>",
                  "<h2>Adherence (CSR, ISR, DRFR; correct × compliant, φ, Fisher exact, Bonferroni)</h2>",
                  f"<p>{html_text('The 2×2, φ and Fisher p count items: ' + ASSOCIATION_UNIT)}. Per response and "
                  "constraint: adherence_responses.csv.</p>",
                  _html_table(adh, ADHERENCE_UNIT),
                  "<h2>Image-free arms against the text ceiling (exact binomial, Holm)</h2>",
                  _html_table(free, free_unit), "<h2>Text ceiling</h2>",
                  _html_table(_human(diag.text_ceiling, TEXT_CEILING_HEADERS),
                              "items; the ceiling a fraction of the items (0–1), 95 % Clopper–Pearson interval"),
                  f"<h2>Visual-giveaway audit ({len(flagged)} of {len(diag.giveaway)} flagged)</h2>",
                  _html_table(_human(flagged.head(50), GIVEAWAY_HEADERS), "prompts (one row per flagged item)"),
                  "<h2>Per-item shortcut test (against the model's own answer prior)</h2>",
                  _html_table(_human(diag.shortcuts, SHORTCUT_TEST_HEADERS),
                              "items; the mean excess a share of samples (−1 to 1), 95 % item bootstrap; not the "
                              "account's shortcut term")]
    if diag.distractors is not None:
        d = _distractor_table(diag.distractors)
        page.md += ["\n### Distractor audit\n", _md_table(d, DISTRACTOR_UNIT)]
        page.body += ["<h2>Distractor audit</h2>", _html_table(d, DISTRACTOR_UNIT)]
    page.prov["diagnostics"] = {"settings": diag.settings.to_dict(), "vision_centric": diag.vision_centric,
                                "distractors": diag.distractors}


def _extraction_lines(h: Mapping[str, Any]) -> list[str]:
    """The extraction audit's headline as report lines."""
    return [
        f"items: {h['items']} ({h['parseable']} parseable, {h['unparseable']} unparseable)",
        f"tolerance {h['tolerance']} ({h['metric']} units), one-to-one periodic matching",
        f"species-aware median recall {h['species_aware_median_recall']:.4f} "
        f"[{h['species_aware_median_recall_ci'][0]:.4f}, {h['species_aware_median_recall_ci'][1]:.4f}]",
        f"species-blind median recall {h['species_blind_median_recall']:.4f} "
        f"[{h['species_blind_median_recall_ci'][0]:.4f}, {h['species_blind_median_recall_ci'][1]:.4f}]",
        f"items with zero matches: {h['zero_match_items_species_aware']} species-aware, "
        f"{h['zero_match_items_species_blind']} species-blind (of {h['parseable']})",
        f"random-position null (species-aware): median recall {h['null_median_recall_species_aware']:.4f} "
        f"(draws {h['null_median_recall_draws_interval'][0]:.4f}–{h['null_median_recall_draws_interval'][1]:.4f}); "
        f"species-blind null {h['null_median_recall_species_blind']:.4f} (draws "
        f"{h['null_median_recall_species_blind_draws_interval'][0]:.4f}–"
        f"{h['null_median_recall_species_blind_draws_interval'][1]:.4f})",
        f"median fabrication rate: {h['median_fabrication_rate_species_aware']:.4f} species-aware, "
        f"{h['median_fabrication_rate_species_blind']:.4f} species-blind",
    ]


#: human names of ``extraction_summary.csv``'s columns; the Markdown shows :data:`EXTRACTION_SHORT` of them
EXTRACTION_HEADERS = {
    "mode": "matching", "tolerance": "tolerance", "items": "items", "zero_match_items": "items with no match",
    "median_recall": "median recall", "median_recall_lo": "median recall, 95 % low",
    "median_recall_hi": "median recall, 95 % high", "mean_recall": "mean recall",
    "median_precision": "median precision", "median_precision_lo": "median precision, 95 % low",
    "median_precision_hi": "median precision, 95 % high", "mean_precision": "mean precision",
    "median_fabrication_rate": "median fabrication rate",
    "median_fabrication_rate_lo": "median fabrication rate, 95 % low",
    "median_fabrication_rate_hi": "median fabrication rate, 95 % high", "mean_fabrication_rate": "mean fabrication rate",
    "null_median_recall": "random-position null: median recall (mean over draws)",
    "null_median_recall_draws_lo": "null median recall, 2.5 % of draws",
    "null_median_recall_draws_hi": "null median recall, 97.5 % of draws",
    "null_median_of_item_means": "null: median of the items' mean recall", "null_p_value": "p against the null"}
EXTRACTION_SHORT = ("mode", "tolerance", "items", "zero_match_items", "median_recall", "median_recall_lo",
                    "median_recall_hi", "median_precision", "median_fabrication_rate", "null_median_recall")


def _extraction_section(page: _Page, extraction: ExtractionAudit,
                        extraction_inputs: Sequence[InputRecord | Mapping]) -> None:
    """CSV tables, recall figure, Markdown and HTML of the extraction audit, and its provenance."""
    page.csv("extraction_items", extraction.per_item)
    page.csv("extraction_summary", extraction.summary)
    png_rec = page.fig("extraction_recall", plots.recall_curves(extraction.summary))
    h = extraction.headline
    lines = _extraction_lines(h)
    summ = _human(extraction.summary, {k: v for k, v in EXTRACTION_HEADERS.items() if k in EXTRACTION_SHORT})
    full = _human(extraction.summary, EXTRACTION_HEADERS, ("null_p_value",))
    unit = (f"tolerance in {h['metric']} units; recall, precision and fabrication rate are shares of atoms "
            "(0–1), medians or means over the items, 95 % item-bootstrap intervals; the null's central 95 % of its draws")
    page.md += ["\n## Extraction audit\n", "\n".join(f"- {markdown_text(x)}" for x in lines) + "\n",
                _md_table(summ, unit)]
    page.body += ["<h2>Extraction audit</h2>",
                  "<ul>" + "".join(f"<li>{html_text(x)}</li>" for x in lines) + "</ul>",
                  _img(png_rec, "extraction recall curves"), _html_table(full, unit)]
    page.prov["extraction"] = {"settings": extraction.settings, "headline": h, "unparseable": extraction.unparseable,
                               "inputs": [i.to_dict() if hasattr(i, "to_dict") else dict(i)
                                          for i in extraction_inputs]}


def write_report(
    out_dir: str | Path,
    *,
    ladder: Ladder | None = None,
    table: ResultTable | None = None,
    extraction: ExtractionAudit | None = None,
    extraction_inputs: Sequence[InputRecord | Mapping] = (),
    diagnostics: Diagnostics | None = None,
    title: str = "viewcert attribution report",
    extra_provenance: Mapping[str, Any] | None = None,
    evidence: ItemEvidence | None = None,
    explorer: str | None = None,
) -> Report:
    """Write the report for a ladder (with its adherence and shortcut ``diagnostics`` and its item-level
    ``evidence`` when given), an extraction audit, or both, into ``out_dir``. ``explorer``: the explorer's
    ``index.html`` (``viewcert explore``) as a URL relative to ``out_dir``: each count and item id the ladder shows
    links to its filtered view there.

    Parameters
    ----------
    out_dir : str or Path
        Report folder (report.html, report.md, the CSVs, provenance.json).
    ladder : Ladder, optional
        The attribution ladder.
    table : ResultTable, optional
        The table the ladder was built from (coverage and per-item tables).
    extraction : ExtractionAudit, optional
        A fabrication audit.
    extraction_inputs : sequence of InputRecord or mapping
        The audit's input records (provenance).
    diagnostics : Diagnostics, optional
        Adherence and shortcut diagnostics of the ladder.
    title : str
        The report's title (escaped).
    extra_provenance : mapping, optional
        More provenance entries.
    evidence : ItemEvidence, optional
        Item statuses, repeated samples, model pairs, item quality.
    explorer : str, optional
        The explorer's ``index.html`` as a URL relative to ``out_dir``.

    Returns
    -------
    Report
        The paths written.
    """
    if ladder is None and extraction is None:
        raise ValueError("nothing to report: give a ladder, an extraction audit or both")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    page = _Page(out, body=[f"<h1>{html_text(title)}</h1>"], md=[f"# {markdown_text(title)}\n"],
                 prov={"versions": versions()}, explorer=explorer)
    if ladder is not None and diagnostics is not None and diagnostics.account is not None:
        _account_section(page, diagnostics, ladder)  # the table a reader looks for first
    if ladder is not None:
        _ladder_section(page, ladder, table)
        _task_section(page, ladder)
    if evidence is not None:
        evidence_section(page, evidence)
    if diagnostics is not None:
        _diagnostics_section(page, diagnostics)
    if extraction is not None:
        _extraction_section(page, extraction, extraction_inputs)
    if extra_provenance:
        page.prov.update(extra_provenance)
    prov_json = jsonable(page.prov)
    page.body += ["<h2>Provenance</h2>", f"<pre>{html_text(_pretty(prov_json))}</pre>"]
    page.md += ["\n## Provenance\n", "See `provenance.json` (inputs with SHA-256, R1 source and tolerances, "
                "thresholds, seed, versions). Versions: "
                + markdown_text(", ".join(f"{k} {v}" for k, v in prov_json["versions"].items())) + "\n"]
    html_page = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>" + html_text(title) + "</title><style>"
                 + _CSS + "</style></head><body>" + "\n".join(page.body) + "</body></html>\n")
    return Report(
        out_dir=out,
        html=write_text_atomic(out / "report.html", html_page),
        markdown=write_text_atomic(out / "summary.md", "\n".join(page.md)),
        provenance=write_json_atomic(out / "provenance.json", prov_json),
        csv=page.csvs,
        figures=page.figs,
    )

def _pretty(obj: Any) -> str:
    import json

    return json.dumps(obj, indent=1, sort_keys=True)
