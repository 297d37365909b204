"""Issue 56, item 6: the two-model page beside a ladder report (``compare.html``) in headless Chromium. The report
links it; for every pair of models, in both orders, the counts at the top equal ``pairs.csv``'s row (a_only and
b_only swapped when the page's A is the CSV's model_b) and the item rows; the filters keep exactly the items they
name (worked from the hand-built answers); a hostile model name stays text; no page logs an error."""

from __future__ import annotations

from itertools import permutations

import pandas as pd
import pytest

from viewcert.attribution.evidence import item_evidence
from viewcert.attribution.ladder import build_ladder, ceiling_from_number
from viewcert.attribution.report import write_report
from viewcert.attribution.table import ResultTable, check_consistency, make_frame
from viewcert.stats import BootstrapSettings

HOSTILE = "<img src=x onerror=alert(1)>&model"
#: per model, the items (of 12, target a) it answers right at R4; every other item it answers b (wrong)
RIGHT = {"alpha": set(range(0, 9)), "beta": set(range(3, 12)) - {5}, HOSTILE: {0, 1, 2, 3}}


def _rows():
    rows = []
    for model, right in RIGHT.items():
        for i in range(12):
            ans = "a" if i in right else "b"
            for k in range(3):
                rows.append({"run": "r", "model": model, "rung": "R4", "item_id": f"i{i:02d}", "sample_k": k,
                             "raw_output": ans, "parsed_answer": ans, "target": "a", "score": float(ans == "a"),
                             "parse_status": "ok", "category": "a", "source_file": "f.csv", "harness": "native"})
    return rows


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    table = ResultTable(make_frame(_rows()))
    cov = check_consistency(table)
    boot = BootstrapSettings(n_boot=100)
    lad = build_ladder(table, cov, [ceiling_from_number("1", cov.universe)], labels=["a", "b"], bootstrap=boot)
    out = tmp_path_factory.mktemp("ladder")
    return write_report(out, ladder=lad, table=table, evidence=item_evidence(lad, table, bootstrap=boot))


def _open(page, path, a, b):
    from urllib.parse import urlencode

    page.goto(path.resolve().as_uri() + "#" + urlencode({"a": a, "b": b, "rung": "R4"}))
    page.wait_for_load_state("load")


def test_the_report_links_the_page(report):
    html = report.html.read_text(encoding="utf-8")
    assert 'href="compare.html"' in html and (report.out_dir / "compare.html").is_file()


def test_counts_at_the_top_equal_pairs_csv_in_both_orders(browser_page, report):
    page = browser_page
    pairs = pd.read_csv(report.csv["pairs"]).set_index(["model_a", "model_b"])
    for a, b in permutations(RIGHT, 2):
        _open(page, report.out_dir / "compare.html", a, b)
        assert page.locator("#a").input_value() == a and page.locator("#b").input_value() == b
        row = pairs.loc[(a, b)] if (a, b) in pairs.index else pairs.loc[(b, a)]
        a_only, b_only = ((row["a_only"], row["b_only"]) if (a, b) in pairs.index else (row["b_only"], row["a_only"]))
        assert int(page.locator("#a-only").text_content()) == a_only == len(RIGHT[a] - RIGHT[b])
        assert int(page.locator("#b-only").text_content()) == b_only == len(RIGHT[b] - RIGHT[a])
        assert int(page.locator("#both").text_content()) == len(RIGHT[a] & RIGHT[b])
        assert page.locator("#p-value").text_content() == f"{row['p_value']:.4g}" or \
            float(page.locator("#p-value").text_content()) == pytest.approx(row["p_value"], rel=1e-3)
        assert float(page.locator("#p-bh").text_content()) == pytest.approx(row["p_bh"], rel=1e-3)
        assert page.locator("#rows tr").count() == 12
    assert page.viewcert_errors == []


def test_filters_keep_the_items_they_name(browser_page, report):
    page = browser_page
    _open(page, report.out_dir / "compare.html", "alpha", "beta")
    want = {"a": RIGHT["alpha"] - RIGHT["beta"], "b": RIGHT["beta"] - RIGHT["alpha"],
            "neither": set(range(12)) - RIGHT["alpha"] - RIGHT["beta"], "both": RIGHT["alpha"] & RIGHT["beta"]}
    for who, items in want.items():
        page.select_option("#who", who)
        got = page.locator("#rows tr td:first-child").all_text_contents()
        assert got == [f"i{i:02d}" for i in sorted(items)]
    page.select_option("#who", "all")
    page.select_option("#type", "perception or reasoning")  # every R4 miss here: no R3 arm to tell them apart
    assert page.locator("#rows tr").count() == len(set(range(12)) - (RIGHT["alpha"] & RIGHT["beta"]))
    assert page.viewcert_errors == []


def test_a_hostile_model_name_stays_text(browser_page, report):
    page = browser_page
    _open(page, report.out_dir / "compare.html", HOSTILE, "alpha")
    assert page.locator("#a").input_value() == HOSTILE
    assert page.locator("img").count() == 0 and page.viewcert_errors == []
    assert "<img" not in (report.out_dir / "compare.html").read_text(encoding="utf-8")
