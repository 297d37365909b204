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
    df = df.rename(columns=console_text).map(lambda v: console_text(v) if isinstance(v, str) else v)
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
    for name, df in (("ladder_counts", counts), ("arms", ladder.arms), ("decomposition", ladder.decomposition),
                     ("shares", shares), ("tests", ladder.tests), ("transitions", ladder.transitions),
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


def shares_table(diag: Diagnostics) -> pd.DataFrame:
    """Per model: perception share, format-limited share, shortcut share and residual, each ``x [lo, hi]``."""
    rows = []
    for _, r in diag.per_model.iterrows():
        arm = r.get("format_limited_arm")
        rows.append({"model": r["model"], "R1": r["r1"],
                     "perception share": _ci(r["perception_share"], r["perception_share_lo"],
                                             r["perception_share_hi"]) if pd.notna(r["perception_share"])
                     else (r["decomposition"] if isinstance(r["decomposition"], str) else "—"),
                     "format-limited (arm)": _ci(r["format_limited_share"], r["format_limited_lo"],
                                                 r["format_limited_hi"]) + (f" ({arm})" if isinstance(arm, str) else ""),
                     "shortcut (no-image)": _ci(r["shortcut_share"], r["shortcut_share_lo"], r["shortcut_share_hi"]),
                     "residual R1−R3": _ci(r["residual"], r["residual_lo"], r["residual_hi"])})
    return pd.DataFrame(rows)


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
    """Every rung, the per-model four-way split with CIs, adherence, text ceiling, audits and shortcut tests."""
    shares = shares_table(diag)
    frames = (("rungs", diag.rungs), ("shares_by_kind", shares), ("per_model_split", diag.per_model),
              ("adherence", diag.adherence), ("text_ceiling", diag.text_ceiling), ("giveaway_audit", diag.giveaway),
              ("image_free_vs_text_ceiling", diag.free_vs_ceiling), ("shortcut_items", diag.shortcut_tests),
              ("shortcuts", diag.shortcuts))
    for name, df in frames:
        page.csv(name, df)
    png = page.fig("split_by_kind", plots.split_plot(diag.per_model))
    lines = _diagnostics_lines(diag)
    adh_cols = ["model", "rung", "requirements", "responses", "CSR", "ISR", "DRFR", "CF", "C_notF", "notC_F",
                "notC_notF", "phi", "fisher_p", "fisher_p_bonferroni", "items_adherent", "items_with_response",
                "format_limited", "failures_by_constraint"]
    adh = diag.adherence.reindex(columns=adh_cols)
    flagged = diag.giveaway[diag.giveaway["flagged"]] if len(diag.giveaway) else diag.giveaway
    page.md += ["\n## Every rung (chance, text ceiling, choices-only, no-image, R4, R3, R1)\n",
                _md_table(diag.rungs), "\n## Perception, format-limited, shortcut and residual shares\n",
                _md_table(shares), "\n## Adherence and shortcuts\n",
                "\n".join(f"- {markdown_text(x)}" for x in lines) + "\n",
                "\n### Adherence (SciMIF: CSR, ISR, DRFR; correct × compliant)\n", _md_table(adh),
                "\n### Image-free arms against the text ceiling\n", _md_table(diag.free_vs_ceiling),
                f"\n### Visual-giveaway audit: {len(flagged)} of {len(diag.giveaway)} prompts flagged\n"]
    page.body += ["<h2>Every rung</h2>", _html_table(diag.rungs),
                  "<h2>Perception, format-limited, shortcut and residual shares</h2>", _img(png, "shares by kind"),
                  _html_table(shares), "<ul>" + "".join(f"<li>{html_text(x)}</li>" for x in lines) + "</ul>",
                  "<h2>Adherence (CSR, ISR, DRFR; correct × compliant, φ, Fisher exact, Bonferroni)</h2>",
                  _html_table(adh), "<h2>Image-free arms against the text ceiling (exact binomial, Holm)</h2>",
                  _html_table(diag.free_vs_ceiling), "<h2>Text ceiling</h2>", _html_table(diag.text_ceiling),
                  f"<h2>Visual-giveaway audit ({len(flagged)} of {len(diag.giveaway)} flagged)</h2>",
                  _html_table(flagged.head(50)), "<h2>Per-item shortcut test</h2>", _html_table(diag.shortcuts)]
    if diag.distractors is not None:
        d = {k: (float(v) if isinstance(v, Fraction) else v) for k, v in diag.distractors.items()}
        page.md += [f"\n### Distractor audit\n\n{markdown_text(d)}\n"]
        page.body += ["<h2>Distractor audit</h2>", f"<pre>{html_text(d)}</pre>"]
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
