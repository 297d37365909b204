"""The report's item-level sections (:class:`~.evidence.ItemEvidence`): accuracy per arm with the tie-free
expected accuracy first and the tie rule's sensitivity, item statuses, repeated samples (one interval method per
figure, stated once), every failed item typed, model pairs with the two-model page (``compare.html``), item
quality. Each table also a CSV; every received text escaped by the table writers of :mod:`.report`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from viewcert.attribution.compare_page import write_compare_page
from viewcert.attribution.failure_types import TYPES
from viewcert.attribution.irt import limits_line
from viewcert.attribution.items import status_filter
from viewcert.attribution.pairs import pair_matrix
from viewcert.attribution.report_tables import (
    SHOWN_IDS,
    _ci,
    _html_linked,
    _html_table,
    _human,
    _md_linked,
    _md_table,
    _Page,
    explorer_link,
)
from viewcert.attribution.samples import CLOPPER_PEARSON, ITEM_BOOTSTRAP, k_too_small
from viewcert.sanitize import html_text, markdown_text

if TYPE_CHECKING:
    from viewcert.attribution.evidence import ItemEvidence

__all__ = ["accuracy_table", "evidence_section", "failure_table", "samples_table"]

STATUS_UNIT = "items (each item counted once, under its first status in the order of precedence)"
CLEAN_HEADERS = {"model": "model", "rung": "rung", "scored": "scored", "correct": "items right", "n": "items",
                 "accuracy": "accuracy on all (0–1)", "clean_correct": "clean items right", "clean_n": "clean items",
                 "clean_accuracy": "accuracy on the clean items (0–1)"}
INTERVALS = (f"one interval per figure, 95 %: {CLOPPER_PEARSON} for majority-vote accuracy, consistency, pass@K and "
             f"pass^K (the same interval arms.csv gives the arm's count); {ITEM_BOOTSTRAP} for expected accuracy, "
             "pass@k and pass^k at k < K")
SAMPLES_UNIT = f"shares of the items (0–1), point [interval]; {INTERVALS}; pass@k and pass^k from the K samples " \
               "without replacement"
ACCURACY_UNIT = f"accuracy as a fraction of the items (0–1), point [interval]; {INTERVALS}"
PAIR_UNIT = ("each cell: items right only for the row's model : only for the column's model, Benjamini–Hochberg "
             "adjusted exact McNemar p within the family (* below 0.05)")
QUALITY_UNIT = ("difficulty b on the ability scale (logits); discrimination a (per logit); each with its Laplace "
                "standard error; responses = the models' scored arms")
QUALITY_HEADERS = {"item_id": "item", "difficulty": "difficulty b (logits)", "difficulty_se": "SE of b",
                   "discrimination": "discrimination a", "discrimination_se": "SE of a",
                   "respondents_right": "arms right", "respondents": "arms"}
RESPONDENT_HEADERS = {"kind": "parameter", "name": "model or rung", "estimate": "estimate (logits)",
                      "se": "standard error (Laplace)"}
COUNT_HEADERS = {"status": "status", "items": "items", "share": "share of the items (0–1)"}
FAILURE_UNIT = "items a model misses at R4, by type (each miss counted once, under its first type); the types add " \
               "up to the items missed"
#: the two-model page beside the report (:mod:`.compare_page`)
COMPARE_PAGE = "compare.html"


def samples_table(samples: pd.DataFrame) -> pd.DataFrame:
    """One row per arm, one column per figure: ``point [lo, hi]`` (or the arm's status when not computed)."""
    rows = []
    for (model, rung), g in samples.groupby(["model", "rung"], sort=True):
        row = {"model": model, "rung": rung}
        for _, r in g.iterrows():
            if pd.isna(r["point"]):
                row["status"] = r["status"]
                continue
            name = r["metric"] if r["metric"] in ("expected accuracy", "majority-vote accuracy", "consistency") \
                else r["metric"].replace("k", str(int(r["k"])))
            row[f"{name} (K = {int(r['K'])})" if name == "consistency" else name] = (
                _ci(r["point"], r["lo"], r["hi"]) if pd.notna(r["lo"]) else f"{r['point']:.4f}")
        rows.append(row)
    return pd.DataFrame(rows)


def accuracy_table(ev: ItemEvidence) -> pd.DataFrame:
    """Per arm: the tie-free expected accuracy first, then the majority vote under the ladder's tie rule, its tied
    items and its count under every tie rule; an unscored arm says so and why, with no figure."""
    rule = ev.settings.tie_rule
    ties = ({} if ev.ties is None else
            {(r["model"], r["rung"]): r for _, r in ev.ties.arms.iterrows()})
    rows = []
    for (model, rung), g in ev.samples.groupby(["model", "rung"], sort=True):
        by = {r["metric"]: r for _, r in g.iterrows()}
        exp, maj = by.get("expected accuracy"), by.get("majority-vote accuracy")
        t = ties.get((model, rung))
        if exp is None or maj is None:
            why = str(g.iloc[0]["status"])
            rows.append({"model": model, "rung": rung, "expected accuracy (tie-free)": why,
                         f"majority vote (tie rule: {rule})": why, "tied items": "—", "majority vote under each rule": "—"})
            continue
        rows.append({"model": model, "rung": rung,
                     "expected accuracy (tie-free)": _ci(exp["point"], exp["lo"], exp["hi"]),
                     f"majority vote (tie rule: {rule})": _ci(maj["point"], maj["lo"], maj["hi"]),
                     "tied items": "—" if t is None else int(t["ties"]),
                     "majority vote under each rule": "—" if t is None else
                     " / ".join(f"{c.removeprefix('correct_')} {int(t[c])}" for c in t.index if c.startswith("correct_"))})
    return pd.DataFrame(rows)


def failure_table(ev: ItemEvidence) -> pd.DataFrame:
    """Per model the items missed at R4 and the items of each type, each as ``count (share of the missed)``."""
    rows = []
    for _, r in ev.failure_shares.iterrows():
        miss = int(r["missed"])
        rows.append({"model": r["model"], "items missed at R4": miss,
                     **{t: (f"{int(r[t])} ({r[t] / miss:.2f})" if miss else "0") for t in TYPES}})
    return pd.DataFrame(rows)


def _evidence_lines(ev: ItemEvidence) -> list[str]:
    """The headline sentences: which R1 the statuses read, the fit's convergence, the subset."""
    f = ev.fit
    lines = [f"statuses read {ev.settings.status_ceiling or 'no ceiling with per-item outcomes'}; "
             f"answerable without the image: {ev.settings.shortcut_evidence}",
             f"item-response fit: {f['fit']}; {f['respondents']} respondents × {f['items']} items; "
             f"{'converged' if f['converged'] else 'NOT converged'} ({f['message']}, {f['iterations']} iterations, "
             f"largest |gradient| {f['max_abs_gradient']:.2g})"]
    if "limits" in f:
        lines.append(limits_line(f))
    if ev.subset is not None:
        sub = ev.subset
        lines.append(f"subset of {sub['n']} of {sub['items']} items keeping the ranking of {len(sub['models'])} models "
                     f"at {sub['rung']}: Spearman ρ = {sub['spearman_rho']:.4f}, Kendall τ = {sub['kendall_tau']:.4f} "
                     + ("(meets ρ ≥ 0.95)" if sub["met"] else f"(the best found in {sub['swaps_tried']} swaps; "
                        "below ρ = 0.95)"))
    return lines


def _accuracy_lines(ev: ItemEvidence) -> list[str]:
    """The tie sensitivity lines (only where ties exist) and the K warning (once, for the smallest K)."""
    lines = [] if ev.ties is None else ev.ties.lines()
    ks = sorted({int(k) for k in ev.samples["K"].dropna()})
    warn = k_too_small(ks[0], ev.settings.alpha) if ks else ""
    return lines + ([f"warning: {warn}"] if warn else [])


def _bullets(lines: list[str]) -> tuple[str, str]:
    return ("\n".join(f"- {markdown_text(x)}" for x in lines) + "\n" if lines else "",
            "<ul>" + "".join(f"<li>{html_text(x)}</li>" for x in lines) + "</ul>" if lines else "")


def evidence_section(page: _Page, ev: ItemEvidence) -> None:
    """Accuracy per arm, item statuses, clean accuracy, repeated samples, failure types, model pairs and item
    quality: CSVs, Markdown, HTML."""
    for name, df in (("item_status", ev.status), ("item_status_counts", ev.counts), ("clean_accuracy", ev.clean),
                     ("repeated_samples", ev.samples), ("pairs", ev.pairs), ("item_quality", ev.quality)):
        page.csv(name, df)
    if ev.ties is not None:
        page.csv("tie_sensitivity", ev.ties.arms)
        page.csv("tie_rankings", ev.ties.rankings)
    acc = accuracy_table(ev)
    md_acc, html_acc = _bullets(_accuracy_lines(ev))
    page.md += ["\n## Accuracy per arm: expected accuracy (tie-free) first\n", md_acc, _md_table(acc, ACCURACY_UNIT)]
    page.body += ["<h2>Accuracy per arm: expected accuracy (tie-free) first</h2>", html_acc,
                  _html_table(acc, ACCURACY_UNIT)]
    lines = _evidence_lines(ev)
    clean = _human(ev.clean, CLEAN_HEADERS)
    counts = _human(ev.counts, COUNT_HEADERS)
    links = {} if page.explorer is None else {  # each status's count opens the explorer's index of those items
        (i, COUNT_HEADERS["items"]): explorer_link(page.explorer, filter=status_filter(st))
        for i, st in enumerate(ev.counts["status"].tolist())}
    samples = samples_table(ev.samples)
    md_lines, html_lines = _bullets(lines)
    page.md += ["\n## Items\n", md_lines,
                "\n### Status of each item (item_status.csv)\n", _md_linked(counts, STATUS_UNIT, links),
                "\n### Accuracy on the clean items\n", _md_table(clean, "items; accuracies as fractions (0–1)"),
                "\n### Repeated samples\n", _md_table(samples, SAMPLES_UNIT)]
    page.body += ["<h2>Items</h2>", html_lines,
                  _html_linked(counts, STATUS_UNIT, links), "<h3>Accuracy on the clean items</h3>",
                  _html_table(clean, "items; accuracies as fractions (0–1)"),
                  "<h3>Repeated samples</h3>", _html_table(samples, SAMPLES_UNIT)]
    if ev.posteriors is not None and len(ev.posteriors):
        _posterior_section(page, ev)
    if ev.hierarchy is not None:
        _hierarchy_section(page, ev)
    if ev.subset_check is not None:
        _subset_section(page, ev)
    if ev.failures is not None:
        _failure_section(page, ev)
    _pairs_section(page, ev)
    if ev.respondents is not None:
        page.csv("irt_respondents", ev.respondents)
        page.body += ["<h3>Item response: models and rungs (irt_respondents.csv)</h3>",
                      _html_table(_human(ev.respondents, RESPONDENT_HEADERS), "logits")]
    top = ev.quality.sort_values("discrimination", ascending=False, kind="stable").head(SHOWN_IDS)
    page.body += ["<h3>Most discriminating items (item_quality.csv has every item)</h3>",
                  _html_linked(_human(top, QUALITY_HEADERS), QUALITY_UNIT,
                               {} if page.explorer is None else {(i, "item"): explorer_link(page.explorer, item=iid)
                                                                 for i, iid in enumerate(top["item_id"].tolist())})]
    page.prov["items"] = {"settings": ev.settings.to_dict(), "fit": ev.fit, "subset": ev.subset}


def posterior_lines(ev: ItemEvidence) -> list[str]:
    """The posteriors in words: what they estimate and how far their intervals are from the item bootstrap's."""
    s = ev.samples[ev.samples["metric"] == "expected accuracy"].set_index(["model", "rung"])
    gaps = [max(abs(r["mu_lo"] - s.loc[(r["model"], r["rung"]), "lo"]), abs(r["mu_hi"] - s.loc[(r["model"], r["rung"]), "hi"]))
            for _, r in ev.posteriors.iterrows() if (r["model"], r["rung"]) in s.index]
    return [f"Beta-Binomial posteriors of each scored arm's per-sample accuracy μ on the population the items are drawn "
            f"from (posterior.csv; {ev.posteriors['method'].iloc[0]}): a second reading of what the expected "
            f"accuracy estimates, for small item sets; over {len(gaps)} arms its 95 % interval's ends lie within "
            f"{max(gaps, default=0.0):.4f} of the item bootstrap's"]


def _posterior_section(page: _Page, ev: ItemEvidence) -> None:
    page.csv("posterior", ev.posteriors)
    md, html = _bullets(posterior_lines(ev))
    page.md += ["\n### Beta-Binomial posteriors (posterior.csv)\n", md]
    page.body += ["<h3>Beta-Binomial posteriors (posterior.csv)</h3>", html]


HIERARCHY_UNIT = ("accuracy as a fraction of the items (0–1), the mean over every model and item; posterior mean "
                  "[95 % interval]; observed: the raw mean over the arms there are")


def hierarchy_table(ev: ItemEvidence) -> pd.DataFrame:
    """Each rung's accuracy and each difference of rungs under the hierarchical model."""
    return pd.DataFrame([{"quantity": r["quantity"], "rung": r["rung"] if not r["other"] else
                          f"{r['rung']} − {r['other']}", "posterior": _ci(r["mean"], r["lo"], r["hi"]),
                          "observed": f"{r['observed']:.4f}"} for _, r in ev.hierarchy.table.iterrows()])


def _hierarchy_section(page: _Page, ev: ItemEvidence) -> None:
    page.csv("hierarchy", ev.hierarchy.table)
    rec = ev.hierarchy.record
    note = (f"Hierarchical model ({rec['method']}): {rec['models']} models, rungs {', '.join(rec['rungs'])}, "
            f"{rec['items']} items, K = {rec['K']}; variance components (SD, logits) "
            + ", ".join(f"{k} {v:.3f}" for k, v in rec["variance_components_sd"].items())
            + (f"; {rec['note']}" if rec["note"] else "")
            + ". 95 % posterior intervals; simulated coverage 0.943–0.966 at nominal 0.95 (5 models, n = 210, K = 3, "
              "Beta and logit-normal items, 1000 replicates each; benchmarks/results/hierarchy_coverage.json)")
    t = hierarchy_table(ev)
    page.md += ["\n### Every rung and every difference of rungs, pooled (hierarchy.csv)\n", f"{markdown_text(note)}\n\n",
                _md_table(t, HIERARCHY_UNIT)]
    page.body += ["<h3>Every rung and every difference of rungs, pooled (hierarchy.csv)</h3>",
                  f"<p>{html_text(note)}</p>", _html_table(t, HIERARCHY_UNIT)]
    page.prov["hierarchy"] = rec


SUBSET_NAMES = {"mean_abs_rank_error": "mean |rank error| (ranks)",
                "mean_abs_accuracy_error": "mean |accuracy error| (points)",
                "reconstruction_rmse": "reconstruction RMSE (points)"}


def subset_lines(ev: ItemEvidence) -> list[str]:
    """The subset's out-of-sample check in words: each summary with its interval beside the random subsets', and
    the pairs the full set does not separate."""
    rec = ev.subset_check.record
    lines = [f"subset of {rec['n']} items, drawn only from the {rec['pool']} items the status table keeps, checked "
             f"leaving each of {len(rec['models'])} models out at {rec['rung']} (chosen without it, then scored), "
             f"beside {rec['n_random']} random subsets of the same size from the same items"]
    for k, name in SUBSET_NAMES.items():
        r = rec[k]
        lines.append(f"{name}: chosen {r['chosen']:.4f} [{r['chosen_lo']:.4f}, {r['chosen_hi']:.4f}] (bootstrap over "
                     f"the held-out models); random median {r['random_median']:.4f}, central 95 % "
                     f"[{r['random_lo']:.4f}, {r['random_hi']:.4f}]; {r['random_at_least_as_good']:.0%} of random "
                     "subsets at least as good")
    info = rec["information"]
    lines.append("chosen by information instead (Fluid-style: the most informative kept items at the other models' "
                 "abilities): " + "; ".join(
                     f"{SUBSET_NAMES[k]} {info[k]['chosen']:.4f} [{info[k]['chosen_lo']:.4f}, {info[k]['chosen_hi']:.4f}]"
                     f" ({info[k]['random_at_least_as_good']:.0%} of random subsets at least as good)"
                     for k in SUBSET_NAMES))
    fam = ev.pairs[ev.pairs["family"] == rec["rung"]]
    if len(fam):
        same = int((fam["p_bh"] >= ev.settings.alpha).sum())
        lines.append(f"{same} of {len(fam)} model pairs at {rec['rung']} are not separated on all items (BH-adjusted "
                     f"exact McNemar p ≥ {ev.settings.alpha}): their order is noise a subset need not keep")
    return lines


def _subset_section(page: _Page, ev: ItemEvidence) -> None:
    """subset_folds.csv (one row per held-out model), subset_random.csv (one row per random subset), the lines."""
    page.csv("subset_folds", ev.subset_check.folds)
    page.csv("subset_random", ev.subset_check.random)
    md, html = _bullets(subset_lines(ev))
    page.md += ["\n### The subset out of sample (subset_folds.csv, subset_random.csv)\n", md]
    page.body += ["<h3>The subset out of sample (subset_folds.csv, subset_random.csv)</h3>", html]
    page.prov["subset_check"] = ev.subset_check.record


def _failure_section(page: _Page, ev: ItemEvidence) -> None:
    """failure_types.csv (one row per miss), failure_type_counts.csv and the table per model."""
    page.csv("failure_types", ev.failures)
    page.csv("failure_type_counts", ev.failure_shares)
    t = failure_table(ev)
    rule = ("Rule (first that applies): not determined by the views (R1 fails), no response (every sample an API "
            "error), format (no sample parses), shortcut (the image-free arm votes the same wrong answer), perception "
            "(right at R3), reasoning (wrong at R3), perception or reasoning (no scored R3 arm). Beside MMErroR's "
            "four types: perception is theirs; reasoning holds their knowledge and reasoning; format is the part of "
            "comprehension a parser sees; not determined and shortcut they cannot see.")
    page.md += ["\n### Every missed item typed (failure_types.csv)\n", f"{markdown_text(rule)}\n\n",
                _md_table(t, FAILURE_UNIT)]
    page.body += ["<h3>Every missed item typed (failure_types.csv)</h3>", f"<p>{html_text(rule)}</p>",
                  _html_table(t, FAILURE_UNIT)]


def _pairs_section(page: _Page, ev: ItemEvidence) -> None:
    """One matrix per family, and the two-model page item by item (``compare.html``) written beside the report."""
    if len(ev.pairs):
        write_compare_page(page.out / COMPARE_PAGE, ev)
        note = (f"Two models item by item, with the paired test and its counts at the top: {COMPARE_PAGE} "
                "(choose the models and the rung; filter by who is right, status and type).")
        page.md += [f"\n{markdown_text(note)}\n"]
        page.body += [f'<p>Two models item by item, with the paired test and its counts at the top: '
                      f'<a id="compare" href="{COMPARE_PAGE}">{COMPARE_PAGE}</a> (choose the models and the rung; '
                      "filter by who is right, status and type).</p>"]
    for family in dict.fromkeys(ev.pairs["family"]):
        m = pair_matrix(ev.pairs, family)
        page.md += [f"\n### Model pairs: {markdown_text(family)} (pairs.csv: counts, p, items for 80 % power)\n",
                    _md_table(m, PAIR_UNIT)]
        page.body += [f"<h3>Model pairs: {html_text(family)}</h3>", _html_table(m, PAIR_UNIT)]
