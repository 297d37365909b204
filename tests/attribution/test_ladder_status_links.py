"""The ladder report's item-status counts link to the explorer (issue 40, item 4): each count of the "status of
each item" table opens the explorer's index filtered to exactly that many items, the items the ladder's own
``item_status.csv`` gives that status."""

from __future__ import annotations

import csv
from collections import Counter
from urllib.parse import quote

from tests.support.ladder_links import _links, _open, _shown_ids
from viewcert.attribution.items import STATUSES, status_filter


def test_each_status_count_links_to_an_index_of_exactly_those_items(study_site, browser_page):  # noqa: F811
    report = (study_site / "ladder" / "report.html").read_text()
    links = [(h, t) for h, t in _links(report) if "#filter=status_" in h]
    with open(study_site / "ladder" / "item_status.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    by_status = Counter(r["status"] for r in rows)
    assert len(rows) == 210 and len(links) == len(STATUSES)
    page = browser_page
    for href, text in links:
        status = next(s for s in STATUSES if href.endswith("#filter=" + quote(status_filter(s), safe="")))
        assert int(text) == by_status[status], status
        _open(page, study_site, href)
        assert page.locator("#shown").get_attribute("data-count") == text, status
        if int(text) <= 200:  # one page of the index: every item it shows
            assert _shown_ids(page) == {r["item_id"] for r in rows if r["status"] == status}, status
    assert page.viewcert_errors == []
