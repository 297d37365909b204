"""An export's explorer pages show what the export has (issue 57, item 10), in headless Chromium: the map plots each
item's atoms the views do not recover against its atoms, coloured by its outcome as rendered (before: an empty plot
on an x axis of 0…1e-9, "14 items have no value to plot"), an item page has the 3D pane a certify output's has,
and the summary page is in words and units (no raw field name, no JSON object; the truth R1 was scored against as
summary.txt says it, never "truth: dataset" for an input without a label).

Expected values come from the CSV beside the certificate (``certificate_items.csv``, ``items.csv``: the writer's
own table of the same records) and from the definitions: a point at (n_atoms, n_missing) in its outcome's class;
the pane's atoms are the drawn cell (atoms × the tiling's cells), each projecting through the sidecar's camera to
the sidecar's pixel; the summary's counts are the CSV's rows counted."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from tests.support.harness_roundtrip import crystal_export
from tests.support.walkthrough import write_cifs
from viewcert.explore import write_site

#: summary fields a reader should never see as raw names on the summary page
RAW = ("n_errors", "phantom_census", "by_level", "by_crystal_system", "items_with_phantoms", "failure_reasons",
       "label_mismatches", "cross_check_disagreements", "total_missing_atoms", "observation_model", "angle_tolerance")


@pytest.fixture(scope="module")
def export_site(tmp_path_factory) -> Path:
    """The first 8 built-in prototypes exported at 64 px (some atoms hidden as rendered), and its explorer."""
    folder = crystal_export(tmp_path_factory.mktemp("export-pages") / "bench", 8)
    write_site(folder, folder / "explore")
    return folder


def _csv(path: Path) -> list[dict]:
    return list(csv.DictReader(path.open()))


def _open(page, path: Path) -> None:
    page.goto(path.resolve().as_uri())
    page.wait_for_load_state("load")


def test_export_map_plots_missing_atoms_against_atoms(browser_page, export_site):
    rows = _csv(export_site / "certificate_items.csv")
    page = browser_page
    _open(page, export_site / "explore" / "map.html")
    page.wait_for_selector("#map-points[data-drawn]")
    data = json.loads(page.locator("#map-data").text_content())
    assert int(page.locator("#map-points").get_attribute("data-drawn")) == len(rows) == len(data["points"])
    assert data["y_label"] == "atoms the views do not recover" and "no value to plot" not in page.content()
    got = {p[5]: (p[1], p[2], p[3]) for p in data["points"]}
    want = {r["id"]: (int(r["n_atoms"]), int(r["n_missing"]), r["outcome"]) for r in rows}
    assert got == want
    assert any(y > 0 for _, y, _ in want.values())  # the fixture loses atoms as rendered: a plot, not a line
    assert data["x_top"] == pytest.approx(1.05 * max(x for x, _, _ in want.values()))
    assert data["y_top"] == pytest.approx(1.05 * max(1, *(y for _, y, _ in want.values())))
    ticks = [float(t) for t in page.locator("svg#map text.tick:not(.y)").all_text_contents()]
    assert ticks[0] == 0 and all(t == int(t) for t in ticks)  # atoms: whole numbers, not 0…1e-9
    assert page.viewcert_errors == []


def test_export_item_page_has_the_3d_pane(browser_page, export_site):
    from viewcert.cameras import camera_from_dict

    rows = _csv(export_site / "certificate_items.csv")
    cert = json.loads((export_site / "certificate.json").read_text())
    cells = int(np.prod(cert["config"]["tiling"]))
    page = browser_page
    for k in (0, 3):
        _open(page, export_site / "explore" / "items" / f"{k:04d}.html")
        page.wait_for_selector("#pane3d[data-ready='yes']", timeout=60_000)
        pane = json.loads(page.locator("#structure-3d").text_content())
        assert len(pane["atoms"]) == int(rows[k]["n_atoms"]) * cells and len(pane["edges"]) == 12
        qid = next(r["id"] for r in _csv(export_site / "ids.csv") if r["source_id"] == rows[k]["id"])
        side = json.loads((export_site / "sidecars" / f"{qid}_v1.json").read_text())
        cam = camera_from_dict(side["camera"])
        uv, _ = cam.project(np.array([a[1:] for a in pane["atoms"]], dtype=float))
        want = np.array([a["uv"] for a in sorted(side["atoms"], key=lambda a: a["id"])])
        assert np.abs(uv - want).max() < 0.1  # positions rounded to 0.001 Å, at 64 px over a few Å
        # a drawn atom's ring in the views is linked to its sphere (the certify pages' "drawn k" groups)
        assert page.locator('svg.overlay circle.mk[data-group="drawn 0"]').count() == len(cert["protocol"]["views"])
    assert page.viewcert_errors == []


def _visible_text(page) -> str:
    """The page's text without its folded details (the settings as written)."""
    return page.evaluate("() => { const b = document.body.cloneNode(true); "
                         "b.querySelectorAll('details').forEach(d => d.remove()); return b.innerText; }")


def _cell(page, table: str, field: str) -> str:
    return page.locator(f'table.{table} tr[data-field="{field}"] td').first.text_content()


def test_export_summary_page_in_words_equal_to_its_csv(browser_page, export_site):
    rows = _csv(export_site / "certificate_items.csv")
    page = browser_page
    _open(page, export_site / "explore" / "summary.html")
    text = _visible_text(page)
    assert "{" not in text and not [k for k in RAW if k in text]
    scored = [r for r in rows if r["outcome"] != "error"]
    assert _cell(page, "summary", "n") == str(len(scored))
    assert _cell(page, "summary", "correct") == str(sum(r["outcome"] == "correct" for r in rows))
    assert _cell(page, "summary", "truth") == "the dataset's label"  # every built-in prototype has one
    census = page.locator('table[data-field="phantom_census"]')
    assert census.locator('tr[data-field="total_missing_atoms"] td').text_content() == \
        str(sum(int(r["n_missing"]) for r in scored))
    systems = page.locator('table[data-field="by_crystal_system"] tr[data-group]')
    got = {systems.nth(j).get_attribute("data-group"):
           (systems.nth(j).locator('td[data-field="n"]').text_content(),
            systems.nth(j).locator('td[data-field="correct"]').text_content()) for j in range(systems.count())}
    want: dict = {}
    for r in scored:
        n, c = want.get(r["dataset_crystal_system"], (0, 0))
        want[r["dataset_crystal_system"]] = (n + 1, c + (r["outcome"] == "correct"))
    assert got == {cs: (str(n), str(c)) for cs, (n, c) in want.items()}
    assert _cell(page, "settings", "delta") == "0.01 Å" and _cell(page, "settings", "tiling") == "2 × 2 × 2"
    assert page.viewcert_errors == []


def test_no_label_summary_never_says_truth_dataset(browser_page, tmp_path):
    """A certify output of three CIFs (no dataset label): the summary page's truth is the input's own symmetry, as
    summary.txt says it, and "dataset" is never given as the truth under it."""
    from viewcert.api import certify
    from viewcert.certify.config import CertifyConfig

    write_cifs(tmp_path / "mycifs")
    out = tmp_path / "mycert"
    certify(str(tmp_path / "mycifs"), CertifyConfig(), out, workers=1, plots=False)
    write_site(out, out / "explore")
    page = browser_page
    _open(page, out / "explore" / "summary.html")
    assert _cell(page, "summary", "truth") == "the symmetry of the input itself (no dataset label)"
    assert "truth = the symmetry of the input itself (no dataset label)" in (out / "summary.txt").read_text()
    rows = _csv(out / "items.csv")
    assert _cell(page, "summary", "correct") == str(sum(r["outcome"] == "correct" for r in rows)) == "3"
    text = _visible_text(page)
    assert "{" not in text and not [k for k in RAW if k in text]
    assert page.viewcert_errors == []
