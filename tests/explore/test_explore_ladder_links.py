"""The ladder report and the explorer linked (issue 40, item 4): with the study's predictions laddered, each count
the report shows (items right per model and rung, the R4 → R3 transitions) links to the explorer's index filtered
to exactly that many items, the items the prediction files say; an item id links to that item's page."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.explore_fixtures import start_tags
from tests.support.ladder_links import PREDICTIONS, _links, _open, _shown_ids
from viewcert.formats.records import sealed


def _right(arm: str) -> dict[str, set[str]]:
    """{model: items whose majority prediction is the truth} of the study's prediction files of one arm (their
    own ``pred`` and ``truth`` fields)."""
    out = {}
    for p in sorted(PREDICTIONS.glob(f"{arm}__*.json")):
        d = json.loads(p.read_text())
        out[d["model"]] = {x["material_id"] for x in d["predictions"] if x["pred"] == x["truth"]}
    return out


def test_each_count_links_to_an_index_of_exactly_those_items(study_site, browser_page):
    """Every count of the ladder table opens the index filtered to that many items; on R4 and R3 they are the
    items the model's prediction file has right (its ``pred`` equal to its ``truth``)."""
    report = (study_site / "ladder" / "report.html").read_text()
    links = [(h, t) for h, t in _links(report) if h.split("#", 1)[1].count("&") == 1 and "=right" in h
             and "item=" not in h and not ("R4=" in h and "R3=" in h)]
    files = {"R4": _right("frontier") | _right("zeroshot"), "R3": _right("r3coords")}
    assert len(links) == 32  # the study's 32 arms (11 models: R4 11, R3 10, no-image 11)
    page = browser_page
    checked = 0
    for href, text in links:
        count = int(re.match(r"(?:unscored \()?(\d+)", text)[1])
        frag = dict(x.split("=", 1) for x in href.split("#", 1)[1].split("&"))
        model, rung = unquote(frag.pop("model")), next(iter(frag))
        _open(page, study_site, href)
        assert page.locator("#shown").get_attribute("data-count") == str(count)
        if rung in files:
            assert _shown_ids(page) == files[rung][model] and len(files[rung][model]) == count
            checked += 1
    assert checked == 21
    assert page.viewcert_errors == []


def test_each_transition_count_links_to_its_items(study_site, browser_page):
    """R4 → R3 transitions: each of the four counts per model opens exactly the items the two prediction files
    put in that cell."""
    report = (study_site / "ladder" / "report.html").read_text()
    r4, r3 = _right("frontier") | _right("zeroshot"), _right("r3coords")
    universe = {x["material_id"] for x in json.loads(next(PREDICTIONS.glob("frontier__*.json")).read_text())
                ["predictions"]}
    links = [(h, t) for h, t in _links(report) if "R4=" in h and "R3=" in h]
    assert len(links) == 4 * 10
    page = browser_page
    for href, text in links:
        frag = dict(x.split("=", 1) for x in href.split("#", 1)[1].split("&"))
        model = unquote(frag["model"])
        want = {i for i in universe if (i in r4[model]) == (frag["R4"] == "right")
                and (i in r3[model]) == (frag["R3"] == "right")}
        assert int(text) == len(want)
        _open(page, study_site, href)
        assert page.locator("#shown").get_attribute("data-count") == text
        assert _shown_ids(page) == want
    assert page.viewcert_errors == []


def test_markdown_links_the_same_counts(study_site):
    md = (study_site / "ladder" / "summary.md").read_text()
    html_links = [h for h, _ in _links((study_site / "ladder" / "report.html").read_text()) if "item=" not in h]
    md_links = re.findall(r"\]\((\.\./explore/index\.html#[^)]*)\)", md)
    assert md_links and set(md_links) <= set(html_links)
    arms = [h for h in md_links if "#model=" in h]
    statuses = [h for h in md_links if "#filter=status_" in h]
    assert len(arms) == 32  # the ladder's count table: one link per arm
    assert statuses and len(arms) + len(statuses) == len(md_links)  # and the item-status counts (their own test)


def test_an_item_id_opens_its_page(study_site, browser_page):
    report = (study_site / "ladder" / "report.html").read_text()
    items = [(h, t) for h, t in _links(report) if "#item=" in h]
    assert items
    cert = json.loads((study_site / "certificate.json").read_text())
    index = {it["id"]: k for k, it in enumerate(cert["items"])}
    page = browser_page
    for href, text in items[:3]:
        assert unquote(href.split("#item=", 1)[1]) == text
        _open(page, study_site, href)
        page.wait_for_url(re.compile(r".*/items/\d{4}\.html$"))
        assert page.url.endswith(f"/items/{index[text]:04d}.html")
        assert page.locator("h1.item-id").text_content() == text
    assert page.viewcert_errors == []


def test_the_index_offers_each_models_answer_filters(study_site, browser_page):
    """The index's controls: a model and a verdict per rung; choosing them filters and writes the address."""
    page = browser_page
    page.goto((study_site / "explore" / "index.html").resolve().as_uri())
    page.wait_for_load_state("load")
    page.select_option("#f-model", "anthropic/claude-opus-4.8")
    page.select_option('#f-rungs select[data-rung="R4"]', "wrong")
    page.select_option('#f-rungs select[data-rung="R3"]', "right")
    want = _right("r3coords")["anthropic/claude-opus-4.8"] - _right("frontier")["anthropic/claude-opus-4.8"]
    assert page.locator("#shown").get_attribute("data-count") == str(len(want)) == "62"  # the report's own cell
    assert _shown_ids(page) == want
    assert "model=anthropic%2Fclaude-opus-4.8" in page.url and "R4=wrong" in page.url and "R3=right" in page.url
    assert page.viewcert_errors == []


def test_hostile_model_names_in_links_stay_text(tmp_path, browser_page):
    """A model whose name carries markup and URL syntax: the report's link is one percent-encoded address, its
    text the count; the index's model list shows the name as text and its link filters to that model."""
    from viewcert.attribution.report import explorer_link

    hostile = '<img src=x onerror="window.__pwned=1">&R4=right#x'
    href = explorer_link("../explore/index.html", model=hostile, R4="wrong")
    assert not any(c in href.split("#", 1)[1] for c in '<>"# ') and href.count("&") == 1
    (tmp_path / "cert").mkdir()
    (tmp_path / "cert" / "certificate.json").write_text(json.dumps(sealed(
        {"format": "viewcert.tasks.certificate", "items": [{"id": "q0", "n_consistent": 1}, {"id": "q1",
                                                                                              "n_consistent": 1}]})))
    (tmp_path / "lad").mkdir()
    (tmp_path / "lad" / "results_table.csv").write_text(
        "run,model,rung,item_id,sample_k,raw_output,parsed_answer,target,score,parse_status\n"
        f'r,"{hostile.replace(chr(34), chr(34) * 2)}",R4,q0,0,x,a,a,1,ok\n'
        f'r,"{hostile.replace(chr(34), chr(34) * 2)}",R4,q1,0,x,b,a,0,ok\n')
    from viewcert.explore import write_site

    write_site(tmp_path / "cert", tmp_path / "explore", ladder=tmp_path / "lad")
    assert not any(t == "img" for t, _ in start_tags((tmp_path / "explore" / "index.html").read_text()))
    page = browser_page
    page.goto((tmp_path / "explore" / "index.html").resolve().as_uri() + "#" + href.split("#", 1)[1])
    page.wait_for_load_state("load")
    assert page.evaluate("window.__pwned === undefined")
    assert _shown_ids(page) == {"q1"}
    assert page.locator("#f-model option").nth(1).text_content() == hostile
    assert page.viewcert_errors == []


def _download(page, selector: str = "#save-ids") -> Path:
    with page.expect_download() as got:
        page.click(selector)
    return Path(got.value.path())


def test_the_filter_in_force_saves_as_an_ids_file(study_site, browser_page):
    """The index's filter (claude-opus-4.8 wrong on R4, right on R3: the report's 62) saved from the page: a file
    ``io.idlist`` reads (what build-benchmark --ids and ladder --ids read) holding exactly those ids, in the order
    shown; made in the page (no request but the site's own files and the Blob)."""
    from viewcert.io.idlist import read_ids

    page = browser_page
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto((study_site / "explore" / "index.html").resolve().as_uri()
              + "#model=anthropic%2Fclaude-opus-4.8&R4=wrong&R3=right")
    page.wait_for_load_state("load")
    shown = page.locator("#items tbody a.item-link").all_text_contents()
    ids = read_ids(_download(page))
    want = _right("r3coords")["anthropic/claude-opus-4.8"] - _right("frontier")["anthropic/claude-opus-4.8"]
    assert list(ids) == shown and set(ids) == want and len(ids) == 62
    assert page.locator("#save-note").text_content() == "62 ids saved"
    assert all(u.startswith(("file:", "blob:")) for u in requests)
    assert page.viewcert_errors == []


def test_hostile_ids_are_saved_as_the_certificate_holds_them(hostile_certify, hostile_site, browser_page):
    """Ids carrying markup, bidi controls and an escape character (shown escaped on the page) are saved as the
    certificate holds them, byte for byte."""
    from viewcert.io.idlist import read_ids

    cert = json.loads((hostile_certify / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    page = browser_page
    page.goto((hostile_site / "index.html").resolve().as_uri())
    page.wait_for_load_state("load")
    assert read_ids(_download(page)) == tuple(it["id"] for it in cert["items"])
    assert page.evaluate("window.__pwned === undefined")
    assert page.viewcert_errors == []


def test_an_id_that_cannot_be_a_line_is_refused_in_the_page(tmp_path, browser_page):
    """An id holding a line separator (Python's splitlines breaks at U+2028) cannot be written one per line: the
    page says so and saves nothing."""
    from viewcert.explore import write_site

    (tmp_path / "cert").mkdir()
    (tmp_path / "cert" / "certificate.json").write_text(json.dumps(sealed(
        {"format": "viewcert.tasks.certificate", "items": [{"id": "ok", "n_consistent": 1},
                                                            {"id": "a\u2028b", "n_consistent": 1}]})))
    write_site(tmp_path / "cert", tmp_path / "site")
    page = browser_page
    downloads: list = []
    page.on("download", lambda d: downloads.append(d))
    page.goto((tmp_path / "site" / "index.html").resolve().as_uri())
    page.wait_for_load_state("load")
    page.click("#save-ids")
    assert page.locator("#save-note").text_content().startswith("1 of these ids cannot be written one per line")
    page.wait_for_timeout(300)
    assert downloads == []
    assert page.viewcert_errors == []


def test_hostile_model_names_in_the_report_are_text_and_links_stay_one_address(tmp_path, browser_page):
    """A model named with markup and URL syntax: the report shows it as text (no element injected, HTML and
    Markdown), each of its count links is one address whose fragment decodes to the name, and following it filters
    the explorer to that model."""
    from viewcert.attribution.pipeline import run_ladder
    from viewcert.attribution.report import write_report
    from viewcert.stats import BootstrapSettings

    harness = Path(__file__).resolve().parents[1] / "data" / "harness"
    hostile = '<img src=x onerror="window.__pwned=1">&R4=right#x'
    text = (harness / "manifest_example.toml").read_text().replace('model = "acme/vlm-7b"', f"model = '{hostile}'")
    text = re.sub(r'^(path|items) = "', lambda m: f'{m[1]} = "{harness.as_posix()}/', text, flags=re.M)
    (tmp_path / "manifest.toml").write_text(text)
    ladder, table, _ = run_ladder(manifest=tmp_path / "manifest.toml", r1=["1"],
                                  bootstrap=BootstrapSettings(n_boot=200), threshold=0.3)
    assert hostile in set(ladder.arms["model"])
    write_report(tmp_path / "ladder", ladder=ladder, table=table, explorer="../explore/index.html")
    html = (tmp_path / "ladder" / "report.html").read_text()
    assert not any(t == "img" and a.get("src") == "x" for t, a in start_tags(html))
    mine = [(h, t) for h, t in _links(html) if "model=%3Cimg" in h]
    assert len(mine) >= 3 and all(unquote(dict(x.split("=", 1) for x in h.split("#", 1)[1].split("&"))["model"])
                                  == hostile for h, _ in mine)
    md = (tmp_path / "ladder" / "summary.md").read_text()
    assert "<img" not in md
    from viewcert.explore import write_site

    ids = [json.loads(x)["material_id"] for x in (harness / "items.jsonl").read_text().splitlines() if x.strip()]
    (tmp_path / "cert").mkdir()
    (tmp_path / "cert" / "certificate.json").write_text(json.dumps(sealed(
        {"format": "viewcert.tasks.certificate", "items": [{"id": i, "n_consistent": 1} for i in ids]})))
    write_site(tmp_path / "cert", tmp_path / "explore", ladder=tmp_path / "ladder")
    page = browser_page
    href, count = next((h, t) for h, t in mine if h.split("#", 1)[1].count("&") == 1)
    _open(page, tmp_path, href)
    assert page.evaluate("window.__pwned === undefined")
    assert page.locator("#shown").get_attribute("data-count") == re.match(r"(?:unscored \()?(\d+)", count)[1]
    assert page.viewcert_errors == []


def test_item_pages_show_each_models_answers_as_the_prediction_files_have_them(study_site):
    """The study's 11 models on its first 10 items: each R4 and R3 cell lists the file's votes (three samples:
    the votes, the rest failed samples) and its verdict is the file's (its majority prediction equals the
    truth)."""
    cert = json.loads((study_site / "certificate.json").read_text())
    files = {"R4": ("frontier", "zeroshot"), "R3": ("r3coords",)}
    for k, item in enumerate(cert["items"][:10]):
        page = (study_site / "explore" / "items" / f"{k:04d}.html").read_text()
        checked = 0
        for rung, arms in files.items():
            for arm in arms:
                for p in sorted(PREDICTIONS.glob(f"{arm}__*.json")):
                    d = json.loads(p.read_text())
                    pred = next(x for x in d["predictions"] if x["material_id"] == item["id"])
                    row = re.search(rf'<tr data-model="{re.escape(d["model"])}">(.*?)</tr>', page)[1]
                    cell = re.search(rf'<td class="[^"]*" data-rung="{rung}" data-verdict="([^"]*)">(.*?)</td>', row)
                    assert cell[1] == ("right" if pred["pred"] == pred["truth"] else "wrong")
                    shown = [a.rsplit(" ", 1)[0] for a in cell[2].split(" · ")]
                    votes = {a: shown.count(a) for a in shown if not a.startswith("(")}
                    assert votes == pred["votes"]
                    checked += 1
        assert checked == 21  # 11 R4 files, 10 R3 files
