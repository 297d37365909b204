"""``viewcert explore`` without a browser: the site's bytes are deterministic, its filters hold exactly the items
the certificate says, every received string is escaped, a transformation item shows its consistent-answer set
and an interaction item its bond verdicts as the certificate has them, and bad input is one line."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.explore_fixtures import (
    CHFCLBR_Z,
    HOSTILE_STEMS,
    SCRIPT_ID,
    assert_bonds_are_their_distance_apart,
    chfclbr_xyz,
    project,
    start_tags,
)
from tests.support.export_fixtures import folder_files
from viewcert.errors import InputError
from viewcert.explore import write_site
from viewcert.sanitize import console_text, html_text


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
    write_site(hostile_certify, tmp_path / "two", workers=2, inputs=hostile_certify.parent)
    assert folder_files(tmp_path / "two") == folder_files(hostile_site)


def test_filters_hold_the_certificates_items(phantom_export, phantom_site):
    cert = json.loads((phantom_export / "certificate.json").read_text())
    assert_certificate_consistent(cert)
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
    assert_certificate_consistent(cert)
    k, it = next((k, it) for k, it in enumerate(cert["items"]) if it["id"] == "aflow:A_hP4_194_bc")
    html = (phantom_site / "items" / f"{k:04d}.html").read_text()
    figs = [a for t, a in start_tags(html) if t == "figure"]
    assert len(figs) == 2 and all(int(a["data-phantoms"]) == len(it["phantoms"]) > 0 for a in figs)
    circles = [a for t, a in start_tags(html) if t == "circle" and "phantom" in a["class"].split()]
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
        tags = start_tags(page)
        assert not any(t == "img" and a.get("src") == "x" for t, a in tags)
        assert not any(t in ("b", "svg") and ("onload" in a or t == "b") for t, a in tags)
        scripts = [a for t, a in tags if t == "script"]  # the shipped scripts, and the 3D pane's data block
        assert all(a.get("src", "").startswith("../assets/") or a.get("type") == "application/json" for a in scripts)
        assert sum("src" not in a for a in scripts) <= 1
        assert "\u202e" not in page and "\x1b" not in page


def _svg_camera(html: str, view: int) -> dict:
    svgs = [a for t, a in start_tags(html) if t == "svg" and "overlay" in a.get("class", "").split()]
    return json.loads(svgs[view]["data-camera"]) if "data-camera" in svgs[view] else None


def test_received_text_in_an_overlay_is_escaped():
    """A bond's entry or an answer (received: the certificate's text) becomes a mark's group and title; a
    camera's name its data: all stay text (bidi and control characters shown escaped, as every received string)."""
    from viewcert.explore.overlays import Mark, ViewMarks
    from viewcert.explore.site import _svg

    marks = (Mark("bond det", 1.0, 2.0, 0.0, SCRIPT_ID, group=SCRIPT_ID, u2=3.0, v2=4.0),
             Mark("candidate", 1.0, 2.0, 4.0, HOSTILE_STEMS[0], group=HOSTILE_STEMS[2]))
    html = _svg(ViewMarks("v", 10, 10, marks, camera={"name": SCRIPT_ID}), "../views/0000_v0.png")
    tags = start_tags(html)
    assert [t for t, _ in tags] == ["div", "img", "svg", "line", "title", "circle", "title"]
    assert tags[3][1]["data-group"] == SCRIPT_ID and tags[5][1]["data-group"] == console_text(HOSTILE_STEMS[2])
    assert json.loads(tags[2][1]["data-camera"]) == {"name": SCRIPT_ID}


def test_zoom_item_draws_every_consistent_answers_pose(zoom_export, zoom_site):
    from PIL import Image

    from viewcert.cameras.camera import camera_from_dict
    from viewcert.render.palette import get_style
    from viewcert.render.raster import build_scene, render
    from viewcert.structures import Structure

    cert = json.loads((zoom_export / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    item = cert["items"][0]
    page = (zoom_site / "items" / "0000.html").read_text()
    shown = re.findall(r"<li[^>]*>(.*?)(?: \(truth\))?</li>", re.search(r'<ol class="consistent">(.*?)</ol>',
                                                                    page).group(1))
    # orthographic zoom: every one of the 21 answers draws the same image (docs/tasks.md)
    assert shown == item["consistent"] and len(shown) == 21
    assert sum(t == "img" for t, _ in start_tags(page)) == 4  # three before views and the after view
    figs = [a for t, a in start_tags(page) if t == "svg" and "overlay" in a.get("class", "").split()]
    assert len(figs) == 1  # the after view (the last image) carries the candidate poses
    camera = _svg_camera(page, 0)
    # the camera the marks were projected through draws the export's after view, pixel for pixel
    xyz = chfclbr_xyz()
    rgb = render(build_scene(Structure(positions=xyz, numbers=np.asarray(CHFCLBR_Z)), get_style("ball-and-stick")),
                 camera_from_dict(camera), supersample=1).rgb
    after = np.asarray(Image.open(zoom_export / "images" / "q0000_v3.png").convert("RGB"))
    assert np.array_equal(rgb, after)
    marks = [a for t, a in start_tags(page) if t == "circle" and "candidate" in a["class"].split()]
    groups = [m["data-group"] for m in marks]
    assert list(dict.fromkeys(groups)) == item["consistent"] and len(marks) == 21 * len(CHFCLBR_Z)
    # `move z D` moves the molecule along the view axis: in an orthographic view every pose projects where the
    # molecule as read does
    want = project(camera, xyz)
    for answer in item["consistent"]:
        got = np.asarray([[float(m["data-u"]), float(m["data-v"])] for m in marks if m["data-group"] == answer])
        assert np.abs(got - want).max() <= 5e-4  # the page's 3 decimals


def test_missing_atoms_are_marked_on_every_drawn_copy(tmp_path):
    """Wurtzite observed as rendered (--observe visible, five views) loses atoms stacked along a view direction
    (test_certify_ceiling): the page marks exactly the certificate's number of missing atoms."""
    from viewcert.certify import CertifyConfig
    from viewcert.certify.inputs import load_input
    from viewcert.certify.run import certify

    ds = load_input("builtin:prototypes").select(["aflow:AB_hP4_186_b_b"])
    cert = certify(ds, CertifyConfig(observe="visible"), out=tmp_path / "cert", n_workers=1, progress=False)
    doc = cert.to_dict()  # the JSON object the explorer reads
    n_missing = doc["items"][0]["oracle"]["n_missing"]
    assert n_missing > 0 and doc["summary"]["phantom_census"]["items_with_missing_atoms"] == 1
    write_site(tmp_path / "cert", tmp_path / "site", inputs=tmp_path)
    page = (tmp_path / "site" / "items" / "0000.html").read_text()
    circles = [a for t, a in start_tags(page) if t == "circle"]
    missing = [c for c in circles if "missing" in c["class"].split()]
    atoms = {re.search(r"atom (\d+)", c["data-group"]).group(1) for c in missing}
    assert len(atoms) == n_missing
    # each mark sits on a drawn copy of its atom (the ring of a drawn atom at the same pixel), in every view
    discs = {(c["data-u"], c["data-v"]) for c in circles if {"atom", "hidden"} & set(c["class"].split())}
    assert all((c["data-u"], c["data-v"]) in discs for c in missing)
    assert len(missing) % 5 == 0  # every view draws every copy


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


def test_pocket_ligand_item_shows_each_bonds_verdict_and_draws_its_atoms(pocket_ligand_export, pocket_ligand_site):
    cert = json.loads((pocket_ligand_export / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    item = cert["items"][0]
    page = (pocket_ligand_site / "items" / "0000.html").read_text()
    table = re.search(r'<table class="entries" data-views="rendered">(.*?)</table>', page).group(1)
    shown = re.findall(r"<tr class=\"(det|undet)\" data-entry=\"[^\"]*\" data-loss=\"[^\"]*\"><td>(.*?)</td>", table)
    want = [("det" if e["determined"] else "undet", html_text(e["entry"])) for e in item["rendered"]["entries"]]
    assert shown == want and len(want) == item["n_bonds"] == 5  # 1pwc: 7 bonds, 2 within δ of the criterion are uncertain (issue 28)
    assert sum(t == "img" for t, _ in start_tags(page)) == 6  # axes-6
    bonds = re.search(r'<table class="bonds">(.*?)</table>', page).group(1)
    gt = cert["ground_truth"][item["source_id"]]["bonds"]
    assert bonds.count("<tr") == 1 + len(gt) == 1 + 7  # header and every ground-truth bond (uncertain ones too)
    # over each of the six images, one line per ground-truth bond, classed by the certificate's verdict
    verdict = {e["entry"]: ("det" if e["determined"] else "undet") for e in item["rendered"]["entries"]}
    verdict |= {e: "uncertain" for e in item["uncertain"]}
    lines = [a for t, a in start_tags(page) if t == "line" and "mk" in a["class"].split()]
    assert len(lines) == 6 * len(gt)
    for a in lines:
        assert a["class"].split()[1:] == ["bond", verdict[a["data-group"]]]
    assert_bonds_are_their_distance_apart(page, gt)


def test_without_the_complexes_an_interaction_page_draws_its_bonds_from_the_sidecars(pocket_ligand_export,
                                                                                    pocket_ligand_site, tmp_path):
    """No --inputs: the export's sidecars (each view's camera and every atom's projection) draw the same bonds as
    the complexes read again, each line joining two points the certificate's donor–acceptor distance apart; an
    export without sidecars says why none is drawn."""
    import shutil

    from viewcert.explore.kinds import InteractionPages

    cert = json.loads((pocket_ligand_export / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    write_site(pocket_ligand_export, tmp_path / "site")  # no inputs: the complexes are not read
    page = (tmp_path / "site" / "items" / "0000.html").read_text()
    with_inputs = (pocket_ligand_site / "items" / "0000.html").read_text()
    assert InteractionPages.OVERLAY_NOTE not in html_text(page)

    def marks(html):  # (kind, class, group) and the mark's pixel coordinates, in document order
        return [((t, a["class"], a.get("data-group", "")), [float(a[k]) for k in (
            ("x1", "y1", "x2", "y2") if t == "line" else ("cx", "cy"))])
            for t, a in start_tags(html) if t in ("line", "circle") and "mk" in a.get("class", "").split()]

    got, want = marks(page), marks(with_inputs)
    assert [k for k, _ in got] == [k for k, _ in want] and got
    assert max(abs(x - y) for (_, a), (_, b) in zip(got, want, strict=True) for x, y in zip(a, b, strict=True)) \
        <= 0.0015  # the sidecar's projections are written to 0.001 px
    assert_bonds_are_their_distance_apart(page, cert["ground_truth"][cert["items"][0]["source_id"]]["bonds"])
    shutil.copytree(pocket_ligand_export, tmp_path / "old", ignore=shutil.ignore_patterns("sidecars"))
    write_site(tmp_path / "old", tmp_path / "old_site")  # an export written before sidecars: says why
    page = (tmp_path / "old_site" / "items" / "0000.html").read_text()
    assert f'<p class="note overlay-note">{html_text(InteractionPages.OVERLAY_NOTE)}</p>' in page
    assert not any(t == "line" for t, _ in start_tags(page)) and page.count('<table class="bonds">') == 1
    assert not any(t == "input" for t, _ in start_tags(page))  # no legend of layers nothing draws


def test_cli_explore_writes_the_site_and_refuses_a_bad_folder_in_one_line(hostile_certify, tmp_path):
    from typer.testing import CliRunner

    from viewcert.cli import app

    res = CliRunner().invoke(app, ["explore", str(hostile_certify), "--out", str(tmp_path / "site")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "site" / "index.html").is_file() and len(list((tmp_path / "site" / "items").iterdir())) == 3
    res = CliRunner().invoke(app, ["explore", str(tmp_path / "nowhere")])
    assert res.exit_code == 2 and res.output.strip().count("\n") == 0 and "not a folder" in res.output
