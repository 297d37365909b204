"""The study's ladder report linked to the explorer (``study_site``, needs ../shared/data) and the helpers
that follow its links in the browser; shared by the explorer's and the ladder's link tests."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA
from viewcert.formats.records import sealed

PREDICTIONS = SHARED_DATA / "release" / "predictions"


@pytest.fixture(scope="module")
def study_site(tmp_path_factory) -> Path:
    """An export folder holding a certificate of the study's 210 eval items (a transformation certificate: only
    the ids matter here), its ladder (the study's predictions) in ladder/ with links to explore/, and the explorer
    written there (it finds the ladder beside the certificate)."""
    if not PREDICTIONS.is_dir():
        pytest.skip(f"shared data absent: {SHARED_DATA}")
    from viewcert.attribution.evidence import item_evidence
    from viewcert.attribution.pipeline import run_ladder
    from viewcert.attribution.report import explorer_index, write_report
    from viewcert.explore import write_site
    from viewcert.stats import BootstrapSettings

    export = tmp_path_factory.mktemp("explore_ladder") / "export"
    ladder, table, _ = run_ladder(study_dir=SHARED_DATA, bootstrap=BootstrapSettings(n_boot=200))
    items = [{"id": i, "n_consistent": 1, "truth": "a", "best_guess": "a", "consistent": ["a"]}
             for i in ladder.universe]
    export.mkdir()
    (export / "certificate.json").write_text(json.dumps(sealed(
        {"format": "viewcert.tasks.certificate", "items": items, "summary": {}})))
    evidence = item_evidence(ladder, table, bootstrap=BootstrapSettings(n_boot=200))
    write_report(export / "ladder", ladder=ladder, table=table, title="study", evidence=evidence,
                 explorer=explorer_index(export / "explore", export / "ladder"))
    write_site(export, export / "explore")
    return export


def _links(report: str) -> list[tuple[str, str]]:
    """(href, text) of every link of the report to the explorer."""
    return [(unescape_href(h), t) for h, t in re.findall(r'<a class="explore" href="([^"]*)">(.*?)</a>', report)]


def _open(page, export: Path, href: str):
    page.goto("about:blank")
    page.goto((export / "ladder").resolve().as_uri() + "/" + href)
    page.wait_for_load_state("load")


def _shown_ids(page) -> set[str]:
    return set(page.locator("#items tbody a.item-link").all_text_contents())



def unescape_href(h: str) -> str:
    return h.replace("&amp;", "&")
