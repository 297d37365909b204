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
from typing import Any

import numpy as np
import pandas as pd

from viewcert.attribution import plots
from viewcert.attribution.adherence import ASSOCIATION_UNIT
from viewcert.attribution.diagnostics import Diagnostics
from viewcert.attribution.extraction import ExtractionAudit
from viewcert.attribution.ladder import Ladder
from viewcert.attribution.table import RUNGS, InputRecord, ResultTable
from viewcert.io.atomic import write_bytes_atomic, write_json_atomic, write_text_atomic
from viewcert.io.tables import frame_csv_text
from viewcert.sanitize import console_text, html_text, markdown_text

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


def _fmt(x: Any, digits: int = 4) -> str:
    if x is None or x is pd.NA or (isinstance(x, float) and pd.isna(x)):
        return "—"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _ci(point: Any, lo: Any, hi: Any) -> str:
    if point is None or pd.isna(point):
        return "—"
    return f"{point:.4f} [{lo:.4f}, {hi:.4f}]"


# ---------------------------------------------------------------------- ladder tables for humans
def ladder_count_table(ladder: Ladder) -> pd.DataFrame:
    """Model × rung counts as docs/reference.md prints them: ``count`` or ``unscored: reason (count)``."""
    arms = ladder.arms
    rungs = [r for r in RUNGS if r in set(arms["rung"])]
    rows = []
    for model, sub in arms.groupby("model", sort=True):
        row = {"model": model}
        for r in rungs:
            a = sub[sub["rung"] == r]
            if a.empty:
                row[r] = "—"
            else:
                a = a.iloc[0]
                row[r] = f"{a['correct']}" if a["scored"] else f"unscored ({a['correct']}): {a['unscored_reason']}"
        rows.append(row)
    return pd.DataFrame(rows)


#: the columns of ``shares.csv``: the page's share table as numbers (point, interval ends), each in its own cell
SHARE_CSV_COLUMNS = ["r1", "model", "R4", "R3", "status", "gap", "gap_lo", "gap_hi", "residual", "residual_lo",
                     "residual_hi", "share", "share_exact", "share_lo", "share_hi", "suppression_reason",
                     "residual_limited"]


def share_table(ladder: Ladder) -> pd.DataFrame:
    d = ladder.decomposition
    rows = []
    for _, r in d.iterrows():
        if pd.isna(r.get("gap", float("nan"))):
            rows.append({"R1": r["r1"], "model": r["model"], "R4": r["R4"], "R3": r["R3"], "gap R3−R4": "—",
                         "residual R1−R3": "—", "share": r["status"], "residual-limited": "—"})
            continue
        share = (_ci(r["share"], r["share_lo"], r["share_hi"]) if pd.notna(r["share"])
                 else r["suppression_reason"])
        rows.append({"R1": r["r1"], "model": r["model"], "R4": r["R4"], "R3": r["R3"],
                     "gap R3−R4": _ci(r["gap"], r["gap_lo"], r["gap_hi"]),
                     "residual R1−R3": _ci(r["residual"], r["residual_lo"], r["residual_hi"]),
                     "share": share, "residual-limited": "yes" if r["residual_limited"] else "no"})
    return pd.DataFrame(rows)


def _md_table(df: pd.DataFrame) -> str:
    if df.empty:
        return "_(empty)_\n"
    cols = [markdown_text(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(markdown_text(_fmt(v)) for v in r.tolist()) + " |")
    return "\n".join(lines) + "\n"


def _html_table(df: pd.DataFrame) -> str:
    if df.empty:
        return "<p><em>(empty)</em></p>"
    df = df.rename(columns=console_text).map(lambda v: console_text(v) if isinstance(v, str) else
                                             ("—" if v is None else v))
    return df.to_html(index=False, na_rep="—", float_format=lambda v: f"{v:.4f}", border=0, classes="t")


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{html_text(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}"/>'


_CSS = """body{font-family:system-ui,sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;color:#222}
table.t{border-collapse:collapse;font-size:12px;margin:0.6em 0}table.t td,table.t th{border-bottom:1px solid #ddd;
padding:3px 7px;text-align:left}h1{font-size:1.5em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}
img{max-width:100%;border:1px solid #eee;margin:0.5em 0}pre{background:#f6f6f6;padding:0.6em;font-size:12px;
overflow-x:auto}.warn{color:#8a4b00}"""


# ---------------------------------------------------------------------- writer
@dataclass
class _Page:
    """The report being written: files so far (CSV, PNG), HTML body and Markdown blocks, provenance."""

    out: Path
    csvs: dict[str, Path] = field(default_factory=dict)
    figs: dict[str, Path] = field(default_factory=dict)
    body: list[str] = field(default_factory=list)
    md: list[str] = field(default_factory=list)
    prov: dict[str, Any] = field(default_factory=dict)

    def csv(self, name: str, df: pd.DataFrame) -> None:
        self.csvs[name] = write_text_atomic(self.out / f"{name}.csv", frame_csv_text(df))

    def fig(self, name: str, png: bytes) -> bytes:
        self.figs[name] = write_bytes_atomic(self.out / f"{name}.png", png)
        return png


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


def _ladder_settings_text(s: Mapping[str, Any]) -> str:
    return (f"items: {s['n_items']}; unscored threshold: {s['threshold']:.0%} ({s['threshold_rule']}); "
            f"tie rule: {s['tie_rule']}; scoring: {s['scoring']}; chance: {s['chance']} "
            f"(majority class {s['majority_class']}); bootstrap: {s['n_boot']} paired item "
            f"resamples, seed {s['seed']}, percentile {1 - s['alpha']:.0%}; share suppressed when "
            f"the bootstrap lower bound of R1 − R4 < {s['share_cutoff']}.")


def _ladder_section(page: _Page, ladder: Ladder, table: ResultTable | None) -> None:
    """CSV tables, figures, Markdown and HTML of the ladder, and its provenance."""
    counts = ladder_count_table(ladder)
    shares = share_table(ladder)
    share_numbers = ladder.decomposition.reindex(columns=SHARE_CSV_COLUMNS)  # numbers as numbers, not "x [lo, hi]"
    for name, df in (("ladder_counts", counts), ("arms", ladder.arms), ("decomposition", ladder.decomposition),
                     ("shares", share_numbers), ("tests", ladder.tests), ("transitions", ladder.transitions),
                     ("summary", ladder.summary), ("coverage", ladder.coverage)):
        page.csv(name, df)
    if table is not None:
        page.csv("results_table", table.frame.sort_values(["model", "rung", "item_id", "sample_k"], kind="stable"))
    ceilings = [(c.label, float(c.value)) for c in ladder.ceilings]
    png_ladder = page.fig("ladder", plots.ladder_plot(ladder.arms, chance=ladder.settings["chance_value"],
                                                      ceilings=ceilings))
    png_forest = page.fig("shares_forest", plots.forest_plot(ladder.decomposition, ladder.summary))
    png_trans = page.fig("transitions", plots.transition_matrices(ladder.transitions))
    dec_pngs = [page.fig(f"decomposition_{i + 1}", plots.decomposition_bars(ladder.decomposition, c.label))
                for i, c in enumerate(ladder.ceilings)]
    s = ladder.settings
    summary_lines = _ladder_summary_lines(ladder.summary)
    settings_text = _ladder_settings_text(s)
    page.md += [f"## Ladder (correct of {s['n_items']} items)\n", _md_table(counts),
                "\n## Perception share (R3 − R4)/(R1 − R4) with paired bootstrap intervals\n", _md_table(shares),
                "\n## Across models\n", "\n".join(f"- {markdown_text(x)}" for x in summary_lines) + "\n",
                f"\n## Settings\n\n{markdown_text(settings_text)}\n"]
    page.body += ["<h2>Ladder</h2>", f"<p>{html_text(settings_text)}</p>", _img(png_ladder, "ladder plot"),
                  _html_table(counts), "<h2>Decomposition</h2>"]
    page.body += [_img(p, f"decomposition {c.label}") for p, c in zip(dec_pngs, ladder.ceilings, strict=True)]
    page.body += ["<h2>Perception share</h2>", _img(png_forest, "forest plot of shares"), _html_table(shares),
                  "<ul>" + "".join(f"<li>{html_text(x)}</li>" for x in summary_lines) + "</ul>",
                  "<h2>Tests between adjacent rungs (exact McNemar, Holm within family)</h2>",
                  _html_table(ladder.tests), "<h2>R4 → R3 transitions</h2>", _img(png_trans, "transition matrices"),
                  _html_table(ladder.transitions), "<h2>Arms</h2>", _html_table(ladder.arms),
                  "<h2>Coverage</h2>", _html_table(ladder.coverage)]
    warn = list(ladder.warnings)
    if warn:
        page.md += ["\n## Reader notes\n", "\n".join(f"- {markdown_text(w)}" for w in warn) + "\n"]
        page.body += ["<h2>Reader notes</h2><ul class='warn'>" + "".join(
            f"<li>{html_text(w)}</li>" for w in warn) + "</ul>"]
    page.prov["ladder"] = {"settings": s, "warnings": warn,
                           "inputs": [i.to_dict() for i in (table.inputs if table is not None else [])]}


#: disagreeing item ids shown per arm in the page (all of them are in ``harness_agreement.csv``)
SHOWN_IDS = 20


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
                     "disagreeing ids": " ".join(ids[:SHOWN_IDS]) + (" …" if len(ids) > SHOWN_IDS else "")})
    return pd.DataFrame(rows)


def _task_section(page: _Page, ladder: Ladder) -> None:
    """The task scores (MiSI partial credit beside the certified ceiling) and the harness agreement, each a
    table in the page and a CSV; every received text (model names, ids) escaped by the table writers."""
    if ladder.task_scores is not None and len(ladder.task_scores):
        page.csv("task_scores", ladder.task_scores)
        t = task_scores_table(ladder.task_scores)
        title = "Task scores: MiSI partial credit (voted answers) beside the certified ceiling"
        page.md += [f"\n## {title}\n", _md_table(t)]
        page.body += [f"<h2>{html_text(title)}</h2>", _html_table(t)]
    if ladder.harness_agreement is not None and len(ladder.harness_agreement):
        page.csv("harness_agreement", ladder.harness_agreement)
        t = agreement_table(ladder.harness_agreement)
        n = int(ladder.harness_agreement["disagreements"].sum())
        note = (f"{n} (arm, item) disagreement(s) between the harness's own per-sample scores (an item right when "
                f"the mean of its samples' scores is at least 0.5) and viewcert's parse; every id in "
                f"harness_agreement.csv")
        title = "Harness agreement: the harness's own scores vs viewcert's"
        page.md += [f"\n## {title}\n", f"{markdown_text(note)}\n", _md_table(t)]
        page.body += [f"<h2>{html_text(title)}</h2>", f"<p>{html_text(note)}</p>", _html_table(t)]


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
    how = (f"Unit: {unit}, over the {s['n_items']} items. Intervals: 95 % "
           f"paired item bootstrap, {s['n_boot']} resamples of the items, seed {s['seed']}, every term recomputed "
           "from the same resample. The four terms add up exactly to R1 − R4 (exact fractions in "
           "deficit_decomposition.csv). A term that is not measured counts 0 and is absorbed by reasoning.")
    sentences = [x for x in acc.loc[acc["r1"] == first, "sentence"] if isinstance(x, str)]
    title = f"Deficit R1 − R4 by kind against {first} ({unit})"
    tables = [(label, account_table(acc, label)) for label in labels]
    page.md += [f"\n## {markdown_text(title)}\n", f"{markdown_text(how)}\n", _md_table(tables[0][1]),
                "\n".join(f"- {markdown_text(x)}" for x in sentences) + "\n"]
    page.body += [f"<h2>{html_text(title)}</h2>", _html_table(tables[0][1]), f"<p>{html_text(how)}</p>",
                  _img(png, "deficit decomposition bars"),
                  "<ul>" + "".join(f"<li>{html_text(x)}</li>" for x in sentences) + "</ul>"]
    for label, t in tables[1:]:
        page.md += [f"\n### Against {markdown_text(label)}\n", _md_table(t)]
        page.body += [f"<h3>Against {html_text(label)}</h3>", _html_table(t)]


#: human names of the adherence table's columns
ADHERENCE_HEADERS = {"model": "model", "rung": "rung", "requirements": "requirements", "responses": "responses",
                     "CSR": "CSR", "ISR": "ISR", "DRFR": "DRFR", "CF": "items correct & compliant",
                     "C_notF": "items correct, not compliant", "notC_F": "items wrong, compliant",
                     "notC_notF": "items wrong, not compliant", "phi": "φ (items)",
                     "fisher_p": "Fisher p (items)", "fisher_p_bonferroni": "Fisher p, Bonferroni",
                     "items_adherent": "items adherent", "items_with_response": "items with a response",
                     "format_limited": "format-limited items", "failures_by_constraint": "failures by constraint"}


def adherence_table(adherence: pd.DataFrame) -> pd.DataFrame:
    """The adherence table for people: human column names; φ and Fisher's p say why they are absent."""
    t = adherence.reindex(columns=list(ADHERENCE_HEADERS)).astype(object)
    why = ["not defined: without explicit constraints a correct answer is a compliant one"
           if r == "parseable answer" else "not defined: a row or column of the 2×2 is empty"
           for r in t["requirements"]]
    for col in ("phi", "fisher_p", "fisher_p_bonferroni"):
        t[col] = [w if (v is None or pd.isna(v)) else v for v, w in zip(t[col], why, strict=True)]
    return t.rename(columns=ADHERENCE_HEADERS)


def _distractor_table(d: Mapping[str, Any]) -> pd.DataFrame:
    """The distractor audit as a two-column table (measure, value)."""
    return pd.DataFrame([{"measure": k.replace("_", " "), "value": float(v) if isinstance(v, Fraction) else v}
                         for k, v in d.items()])


def _diagnostics_lines(diag: Diagnostics) -> list[str]:
    """The headline sentences: text ceiling, vision-centric fraction, adherence failures of unscored arms."""
    lines = []
    tc = diag.text_ceiling
    if len(tc):
        r = tc.iloc[0]
        lines.append(f"text ceiling (exact, prompt text alone): {r['correct']}/{r['n']} = {r['value']:.4f} "
                     f"({r['method']})" + ("" if r["informative"] else "; every text differs, so uninformative"))
    vc = diag.vision_centric
    lines.append(f"vision-centric items: {vc['vision_centric']}/{vc['n']} = {vc['fraction']:.4f} "
                 f"[{vc['ci_lo']:.4f}, {vc['ci_hi']:.4f}] (no model's image-free arm answers them beyond its own "
                 f"prior; {vc['models_tested']} model arms tested; {vc['method']})")
    sig = int(diag.shortcuts["significant_items"].sum()) if len(diag.shortcuts) else 0
    lines.append(f"per-item shortcut test: {sig} significant (model, item) pairs at BH-adjusted p < "
                 f"{diag.settings['alpha']}")
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
    page.md += ["\n## Every rung (chance, text ceiling, choices-only, no-image, R4, R3, R1)\n",
                _md_table(diag.rungs), "\n## Adherence and shortcuts\n",
                "\n".join(f"- {markdown_text(x)}" for x in lines) + "\n",
                "\n### Adherence (SciMIF: CSR, ISR, DRFR; correct × compliant, counted on items)\n", _md_table(adh),
                "\n### Image-free arms against the text ceiling\n", _md_table(diag.free_vs_ceiling),
                f"\n### Visual-giveaway audit: {len(flagged)} of {len(diag.giveaway)} prompts flagged\n"]
    page.body += ["<h2>Every rung</h2>", _html_table(diag.rungs),
                  "<ul>" + "".join(f"<li>{html_text(x)}</li>" for x in lines) + "</ul>",
                  "<h2>Adherence (CSR, ISR, DRFR; correct × compliant, φ, Fisher exact, Bonferroni)</h2>",
                  f"<p>{html_text('The 2×2, φ and Fisher p count items: ' + ASSOCIATION_UNIT)}. Per response and "
                  "constraint: adherence_responses.csv.</p>",
                  _html_table(adh), "<h2>Image-free arms against the text ceiling (exact binomial, Holm)</h2>",
                  _html_table(diag.free_vs_ceiling), "<h2>Text ceiling</h2>", _html_table(diag.text_ceiling),
                  f"<h2>Visual-giveaway audit ({len(flagged)} of {len(diag.giveaway)} flagged)</h2>",
                  _html_table(flagged.head(50)), "<h2>Per-item shortcut test</h2>", _html_table(diag.shortcuts)]
    if diag.distractors is not None:
        d = _distractor_table(diag.distractors)
        page.md += ["\n### Distractor audit\n", _md_table(d)]
        page.body += ["<h2>Distractor audit</h2>", _html_table(d)]
    page.prov["diagnostics"] = {"settings": diag.settings, "vision_centric": diag.vision_centric,
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


def _extraction_section(page: _Page, extraction: ExtractionAudit,
                        extraction_inputs: Sequence[InputRecord | Mapping]) -> None:
    """CSV tables, recall figure, Markdown and HTML of the extraction audit, and its provenance."""
    page.csv("extraction_items", extraction.per_item)
    page.csv("extraction_summary", extraction.summary)
    png_rec = page.fig("extraction_recall", plots.recall_curves(extraction.summary))
    h = extraction.headline
    lines = _extraction_lines(h)
    summ = extraction.summary[["mode", "tolerance", "items", "zero_match_items", "median_recall",
                               "median_recall_lo", "median_recall_hi", "median_precision",
                               "median_fabrication_rate", "null_median_recall"]]
    page.md += ["\n## Extraction audit\n", "\n".join(f"- {markdown_text(x)}" for x in lines) + "\n", _md_table(summ)]
    page.body += ["<h2>Extraction audit</h2>",
                  "<ul>" + "".join(f"<li>{html_text(x)}</li>" for x in lines) + "</ul>",
                  _img(png_rec, "extraction recall curves"), _html_table(extraction.summary)]
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
) -> Report:
    """Write the report for a ladder (with its adherence and shortcut ``diagnostics`` when given), an
    extraction audit, or both, into ``out_dir``."""
    if ladder is None and extraction is None:
        raise ValueError("nothing to report: give a ladder, an extraction audit or both")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    page = _Page(out, body=[f"<h1>{html_text(title)}</h1>"], md=[f"# {markdown_text(title)}\n"],
                 prov={"versions": versions()})
    if ladder is not None and diagnostics is not None and diagnostics.account is not None:
        _account_section(page, diagnostics, ladder)  # the table a reader looks for first
    if ladder is not None:
        _ladder_section(page, ladder, table)
        _task_section(page, ladder)
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
