"""``viewcert explore`` without a browser: the site's bytes are deterministic, its filters hold exactly the items
the certificate says, every received string is escaped, a transformation item shows its consistent-answer set
and an interaction item its bond verdicts as the certificate has them, and bad input is one line."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from explore_fixtures import HOSTILE_STEMS, SCRIPT_ID
from export_fixtures import SMALL, chiral_xyz, folder_files
from viewcert.errors import InputError
from viewcert.explore import write_site
from viewcert.sanitize import html_text


class _Tags(HTMLParser):
    """Every start tag with its attributes, and the text inside elements of a class."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict]]:
    p = _Tags()
    p.feed(html)
    return p.tags


def _index_rows(site) -> list:
    html = (site / "index.html").read_text()
    block = re.search(r'<script type="application/json" id="index-data">(.*?)</script>', html, re.S).group(1)
    return json.loads(block)["rows"]


def test_same_folder_same_site_bytes(phantom_export, phantom_site, tmp_path):
    again = tmp_path / "again"
    write_site(phantom_export, again)
    assert folder_files(again) == folder_files(phantom_site)
    assert len(list((phantom_site / "items").glob("*.html"))) == 3
    assert len(list((phantom_site / "thumbs").glob("*.png"))) == 3


def test_pages_written_by_two_workers_are_the_same_bytes(hostile_certify, hostile_site, tmp_path, monkeypatch):
    import viewcert.explore.site as site_module

    monkeypatch.setattr(site_module, "CHUNK", 1)  # three items, three chunks over two forked workers
    write_site(hostile_certify, tmp_path / "two", workers=2)
    assert folder_files(tmp_path / "two") == folder_files(hostile_site)


def test_filters_hold_the_certificates_items(phantom_export, phantom_site):
    cert = json.loads((phantom_export / "certificate.json").read_text())
    rows = _index_rows(phantom_site)
    by_tag = lambda t: [r[1] for r in rows if t in r[2]]  # noqa: E731
    # independently from the certificate's items and its summary's census
    assert by_tag("phantoms") == [it["id"] for it in cert["items"] if it["oracle"]["n_phantoms"]]
    census = cert["summary"]["phantom_census"]
    assert len(by_tag("phantoms")) == census["items_with_phantoms"] > 0
    assert len(by_tag("unique")) == census["items_unique"]
    assert len(by_tag("missing_atoms")) == census["items_with_missing_atoms"]
    assert len(by_tag("label_mismatch")) == len(cert["summary"]["label_mismatches"])
    assert len(by_tag("item_error")) == cert["summary"]["n_errors"] == 0
    assert len(by_tag("correct")) == cert["summary"]["correct"]


def test_item_page_marks_every_listed_phantom_in_every_view(phantom_export, phantom_site):
    cert = json.loads((phantom_export / "certificate.json").read_text())
    k, it = next((k, it) for k, it in enumerate(cert["items"]) if it["id"] == "aflow:A_hP4_194_bc")
    html = (phantom_site / "items" / f"{k:04d}.html").read_text()
    figs = [a for t, a in _tags(html) if t == "figure"]
    assert len(figs) == 2 and all(int(a["data-phantoms"]) == len(it["phantoms"]) > 0 for a in figs)
    circles = [a for t, a in _tags(html) if t == "circle" and "phantom" in a["class"].split()]
    assert len(circles) == 2 * len(it["phantoms"])


def test_hostile_ids_are_text(hostile_certify, hostile_site):
    ids = [it["id"] for it in json.loads((hostile_certify / "certificate.json").read_text())["items"]]
    assert ids[1] == SCRIPT_ID and ids[0] == HOSTILE_STEMS[0]
    index = (hostile_site / "index.html").read_text()
    assert "<img src=x" not in index and "</script><script>" not in index and "<svg onload" not in index
    assert index.count("<script") == 2  # the shipped script and the data block, nothing from an id
    for k, item_id in enumerate(ids):
        page = (hostile_site / "items" / f"{k:04d}.html").read_text()
        assert f'<h1 class="item-id">{html_text(item_id)}</h1>' in page
        tags = _tags(page)
        assert not any(t == "img" and a.get("src") == "x" for t, a in tags)
        assert not any(t in ("b", "svg") and ("onload" in a or t == "b") for t, a in tags)
        assert sum(t == "script" for t, _ in tags) == 1
        assert "\u202e" not in page and "\x1b" not in page


def test_zoom_item_shows_its_consistent_set(tmp_path):
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

    build_task_benchmark(chiral_xyz(tmp_path), tmp_path / "z", TaskExportSettings(task="zoom", seed=1, **SMALL))
    write_site(tmp_path / "z", tmp_path / "s")
    cert = json.loads((tmp_path / "z" / "certificate.json").read_text())
    page = (tmp_path / "s" / "items" / "0000.html").read_text()
    shown = re.findall(r"<li[^>]*>(.*?)(?: \(truth\))?</li>", re.search(r'<ol class="consistent">(.*?)</ol>',
                                                                    page).group(1))
    # orthographic zoom: every one of the 21 answers draws the same image (docs/tasks.md)
    assert shown == cert["items"][0]["consistent"] and len(shown) == 21
    assert sum(t == "img" for t, _ in _tags(page)) == 4  # three before views and the after view


def test_bad_folders_are_one_line(tmp_path):
    with pytest.raises(InputError, match="no certificate.json"):
        write_site(tmp_path, tmp_path / "s")
    (tmp_path / "certificate.json").write_text('{"format": "other", "items": []}')
    with pytest.raises(InputError, match="not a certificate the explorer knows"):
        write_site(tmp_path, tmp_path / "s")
    (tmp_path / "certificate.json").write_text('{"format": "viewcert.tasks.certificate", "items": [{"id": 1}]}')
    with pytest.raises(InputError, match="item 0 has no text 'id'"):
        write_site(tmp_path, tmp_path / "s")
    # a certificate's digest is checked on every read (issue 26): none, or a stale one, is one line
    (tmp_path / "certificate.json").write_text('{"format": "viewcert.tasks.certificate", "items": [{"id": "q"}]}')
    with pytest.raises(InputError, match="stale certificate: it records no digest"):
        write_site(tmp_path, tmp_path / "s")


def test_pocket_ligand_item_shows_each_bonds_verdict_and_atoms(tmp_path):
    pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")
    from complex_data import COMPLEXES

    if not COMPLEXES.is_dir():
        pytest.skip(f"complexes not found at {COMPLEXES}")
    from viewcert.benchmark.interaction_export import InteractionExportSettings, build_interaction_benchmark

    build_interaction_benchmark([(COMPLEXES / "1pwc", "PNM")], tmp_path / "p",
                                InteractionExportSettings(task="pocket-ligand", n_boot=200))
    write_site(tmp_path / "p", tmp_path / "s")
    item = json.loads((tmp_path / "p" / "certificate.json").read_text())["items"][0]
    page = (tmp_path / "s" / "items" / "0000.html").read_text()
    table = re.search(r'<table class="entries" data-views="rendered">(.*?)</table>', page).group(1)
    shown = re.findall(r"<tr class=\"(det|undet)\"><td>(.*?)</td>", table)
    want = [("det" if e["determined"] else "undet", html_text(e["entry"])) for e in item["rendered"]["entries"]]
    assert shown == want and len(want) == item["n_bonds"] == 5  # 1pwc: 7 bonds, 2 within δ of the criterion are uncertain (issue 28)
    assert sum(t == "img" for t, _ in _tags(page)) == 6  # axes-6
    bonds = re.search(r'<table class="bonds">(.*?)</table>', page).group(1)
    assert bonds.count("<tr>") == 1 + 7  # header and every ground-truth bond (uncertain ones too) with its donor and acceptor atoms



def test_cli_explore_writes_the_site_and_refuses_a_bad_folder_in_one_line(hostile_certify, tmp_path):
    from typer.testing import CliRunner

    from viewcert.cli import app

    res = CliRunner().invoke(app, ["explore", str(hostile_certify), "--out", str(tmp_path / "site")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "site" / "index.html").is_file() and len(list((tmp_path / "site" / "items").iterdir())) == 3
    res = CliRunner().invoke(app, ["explore", str(tmp_path / "nowhere")])
    assert res.exit_code == 2 and res.output.strip().count("\n") == 0 and "not a folder" in res.output
