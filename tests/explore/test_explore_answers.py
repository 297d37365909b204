"""The explorer with a ladder output (issue 40, item 4): each item page shows every model's answer on every rung
equal to the prediction file's, whether it scored as the ladder scores it, and the index filters by it (every
model wrong on R4; right on R3, wrong on R4), also when the filter is named in the address."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.support.explore_fixtures import start_tags
from viewcert.errors import InputError
from viewcert.explore import write_site
from viewcert.formats.records import sealed

HARNESS = Path(__file__).resolve().parents[1] / "data" / "harness"


@pytest.fixture(scope="module")
def laddered(tmp_path_factory):
    """A certificate of the harness samples' 8 e3 items (a transformation certificate: only the ids matter
    here), the ladder of the example manifest (two fictitious models) and the explorer of both."""
    from viewcert.attribution.pipeline import run_ladder
    from viewcert.attribution.report import write_report
    from viewcert.stats import BootstrapSettings

    d = tmp_path_factory.mktemp("explore_answers")
    ids = [json.loads(x)["material_id"] for x in (HARNESS / "items.jsonl").read_text().splitlines() if x.strip()]
    items = [{"id": i, "n_consistent": 1, "truth": "a", "best_guess": "a", "consistent": ["a"]} for i in ids]
    (d / "cert").mkdir()
    (d / "cert" / "certificate.json").write_text(json.dumps(sealed(
        {"format": "viewcert.tasks.certificate", "items": items, "summary": {}})))
    ladder, table, _ = run_ladder(manifest=HARNESS / "manifest_example.toml", r1=["1"],
                                  bootstrap=BootstrapSettings(n_boot=200), threshold=0.3)
    write_report(d / "ladder", ladder=ladder, table=table, title="ladder")
    write_site(d / "cert", d / "site", ladder=d / "ladder")
    return ids, d


def _cells(page: str, model: str) -> dict[str, tuple[str, str]]:
    """{rung: (cell text, verdict)} of one model's row of the answers table."""
    row = re.search(rf'<tr data-model="{re.escape(model)}">(.*?)</tr>', page).group(1)
    return {r: (t, v) for r, v, t in re.findall(r'<td class="[^"]*" data-rung="([^"]*)" data-verdict="([^"]*)">'
                                                 r"(.*?)</td>", row)}


def test_each_item_shows_the_prediction_files_answers(laddered):
    """beta/lab-13b's R4 arm is the study's JSON (K = 3 samples, its votes): each item's cell lists exactly
    those votes, and the verdict is the file's own (its majority prediction equals the truth)."""
    ids, d = laddered
    study = json.loads((HARNESS / "study" / "frontier__beta__lab-13b__K3.json").read_text())
    preds = {p["material_id"]: p for p in study["predictions"]}
    for k, item_id in enumerate(ids):
        page = (d / "site" / "items" / f"{k:04d}.html").read_text()
        text, verdict = _cells(page, "beta/lab-13b")["R4"]
        shown = Counter(a.rsplit(" ", 1)[0] for a in text.split(" · "))
        failed = sum(n for a, n in shown.items() if a.startswith("("))  # a sample with no parsed answer
        assert Counter({a: n for a, n in shown.items() if not a.startswith("(")}) == Counter(preds[item_id]["votes"])
        assert failed == study["K"] - sum(preds[item_id]["votes"].values())
        assert verdict == ("right" if preds[item_id]["pred"] == preds[item_id]["truth"] else "wrong")


def test_index_filters_by_the_models_answers(laddered, browser_page):
    """Every model wrong on R4: the items where both models' R4 verdicts (from the study JSON for beta, the
    results table's samples for acme, hand-read) are wrong; the filter named in the address is applied."""
    ids, d = laddered
    html = (d / "site" / "index.html").read_text()
    rows = json.loads(re.search(r'<script type="application/json" id="index-data">(.*?)</script>', html, re.S)[1])["rows"]
    wrong = [r[1] for r in rows if "every_model_wrong" in r[2]]
    # acme R4 (VLMEvalKit, one sample): mp-33615 wrong, mp-8279 api error, mp-867321 unparseable; beta R4
    # (study JSON): mp-8279 and mp-867321 wrong among those
    study = json.loads((HARNESS / "study" / "frontier__beta__lab-13b__K3.json").read_text())
    beta_wrong = {p["material_id"] for p in study["predictions"] if p["pred"] != p["truth"]}
    assert wrong == [i for i in ids if i in {"mp-33615", "mp-8279", "mp-867321"} & beta_wrong]
    page = browser_page
    page.goto((d / "site" / "index.html").resolve().as_uri() + "#filter=every_model_wrong")
    page.wait_for_load_state("load")
    assert page.locator("#items tbody a.item-link").all_text_contents() == wrong
    assert page.locator("#shown").get_attribute("data-count") == str(len(wrong))
    assert page.viewcert_errors == []


def test_hostile_model_names_and_answers_are_text(tmp_path, browser_page):
    hostile = '<img src=x onerror="window.__pwned=1">'
    (tmp_path / "cert").mkdir()
    (tmp_path / "cert" / "certificate.json").write_text(json.dumps(sealed(
        {"format": "viewcert.tasks.certificate", "items": [{"id": "q0", "n_consistent": 1, "truth": "a", "consistent": ["a"]}]})))
    (tmp_path / "lad").mkdir()
    (tmp_path / "lad" / "results_table.csv").write_text(
        "run,model,rung,item_id,sample_k,raw_output,parsed_answer,target,score,parse_status\n"
        f'r,"{hostile.replace(chr(34), chr(34) * 2)}",R4,q0,0,x,"</script><b>b</b>",a,0,ok\n')
    write_site(tmp_path / "cert", tmp_path / "site", ladder=tmp_path / "lad")
    page_html = (tmp_path / "site" / "items" / "0000.html").read_text()
    assert not any(t in ("img", "b") for t, _ in start_tags(page_html))
    page = browser_page
    for name in ("index.html", "items/0000.html"):
        page.goto((tmp_path / "site" / name).resolve().as_uri())
        page.wait_for_load_state("load")
        assert page.evaluate("window.__pwned === undefined")
    assert page.locator("table.answers tr[data-model] th").text_content() == hostile
    assert page.locator("table.answers td").text_content() == "</script><b>b</b> ✗"
    assert page.viewcert_errors == []


def test_a_ladder_output_without_its_table_is_one_line(tmp_path):
    (tmp_path / "cert").mkdir()
    (tmp_path / "cert" / "certificate.json").write_text(json.dumps(sealed(
        {"format": "viewcert.tasks.certificate", "items": [{"id": "q0", "n_consistent": 1}]})))
    with pytest.raises(InputError, match="no results_table.csv"):
        write_site(tmp_path / "cert", tmp_path / "site", ladder=tmp_path)
    (tmp_path / "results_table.csv").write_text("model,rung\nm,R4\n")
    with pytest.raises(InputError, match="missing column"):
        write_site(tmp_path / "cert", tmp_path / "site", ladder=tmp_path)
