"""The explorer's views as a model sees them (issue 40), in headless Chromium at 1280 × 800: a certify output's
item drawn by viewcert's renderer in a grid that fits the screen, its phantom marks where the certificate's
cameras project its phantoms, its fields in words; a 1pwc interaction item saying why each entry is not
determined and highlighting the residue its question names; received names shown as text on these pages."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.explore_fixtures import project, start_tags
from viewcert.explore import write_site
from viewcert.formats.records import INTERACTION_FORMAT, sealed
from viewcert.sanitize import console_text

SCREEN = {"width": 1280, "height": 800}


@pytest.fixture()
def screen_page(chromium_browser):
    """A 1280 × 800 page recording console errors, page errors and every request that is not a file."""
    context = chromium_browser.new_context(viewport=SCREEN)
    page = context.new_page()
    page.viewcert_errors, page.viewcert_requests = [], []
    page.on("console", lambda m: page.viewcert_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.viewcert_errors.append(str(e)))
    page.on("request", lambda r: None if r.url.startswith("file:") else page.viewcert_requests.append(r.url))
    try:
        yield page
    finally:
        context.close()


def _open(page, path):
    page.goto(path.resolve().as_uri())
    page.wait_for_load_state("load")


def _centres(fig, selector: str) -> np.ndarray:
    """Centres of the marks ``selector`` as laid out, in the pixels of the figure's image (offset from the image's
    box times its natural size over its shown size)."""
    img = fig.locator("img")
    box = img.bounding_box()
    nat = img.evaluate("i => [i.naturalWidth, i.naturalHeight]")
    out = []
    for j in range(fig.locator(selector).count()):
        b = fig.locator(selector).nth(j).bounding_box()
        out.append([(b["x"] + b["width"] / 2 - box["x"]) * nat[0] / box["width"],
                    (b["y"] + b["height"] / 2 - box["y"]) * nat[1] / box["height"]])
    return np.asarray(out).reshape(-1, 2)


def _sig4(x: float) -> str:
    """x to 4 significant figures, written here from the definition (mantissa rounded, exponent kept)."""
    e = int(np.floor(np.log10(abs(x))))
    digits = round(x / 10.0 ** (e - 3))
    return f"{digits * 10.0 ** (e - 3):.{max(0, 3 - e)}f}"


def test_certify_item_shows_five_rendered_views_on_one_screen_with_phantoms_on_their_projections(
        screen_page, e3_phantom_certify, e3_phantom_site):
    from ase.data import chemical_symbols

    from viewcert.cameras.camera import camera_from_dict
    from viewcert.certify.digests import cameras_digest

    cert = json.loads((e3_phantom_certify / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    page = screen_page
    for k, item in enumerate(cert["items"]):
        assert item["oracle"]["n_phantoms"] == len(item["phantoms"]) > 0
        _open(page, e3_phantom_site / "items" / f"{k:04d}.html")
        figs = page.locator("figure.fig")
        assert figs.count() == 5
        assert page.evaluate("document.documentElement.scrollWidth") <= SCREEN["width"]
        xyz = np.asarray([p[1:] for p in item["phantoms"]], dtype=float)
        cams = []
        for v in range(5):
            fig = figs.nth(v)
            b = fig.bounding_box()
            assert b["x"] >= 0 and b["y"] >= 0 and b["x"] + b["width"] <= SCREEN["width"] \
                and b["y"] + b["height"] <= SCREEN["height"]
            assert fig.locator("img").evaluate("i => i.complete && i.naturalWidth") == cert["config"]["image_size"]
            camera = json.loads(fig.locator("svg.overlay").get_attribute("data-camera"))
            # the certificate's camera: its protocol's rotation, and (framed on the drawn spheres) the scale and
            # centre its item records by digest
            assert np.allclose(camera["rotation"], cert["protocol"]["views"][v]["rotation"], atol=1e-12)
            cams.append(camera_from_dict(camera))
            got = _centres(fig, "circle.mk.phantom")
            assert len(got) == len(xyz)
            assert np.abs(got - project(camera, xyz)).max() <= 2.0
        assert cameras_digest(cams) == item["cameras_sha256"]
        um = item["uniqueness_margin"]
        assert page.locator("td.delta-star").text_content() == f"{_sig4(um['delta_star'])} Å"
        symbol = chemical_symbols[um["near_miss_label"]]
        names = [v["name"] for v in cert["protocol"]["views"]]
        assert page.locator("ul.near-miss li").all_text_contents() == [
            f"{names[v]}: {symbol} atom {a}" for v, a in enumerate(um["near_miss"])]
        for v in range(5):  # each view rings the tuple's atom of that view
            titles = figs.nth(v).locator("circle.mk.near-atom title").all_text_contents()
            assert titles and all(t.startswith(f"{symbol} atom {um['near_miss'][v]}") for t in titles)
    assert page.viewcert_errors == [] and page.viewcert_requests == []


def test_a_click_enlarges_a_view_and_escape_puts_it_back(screen_page, e3_phantom_site):
    page = screen_page
    _open(page, e3_phantom_site / "items" / "0000.html")
    fig = page.locator("figure.fig").nth(2)
    small = fig.locator("img").bounding_box()["width"]
    fig.locator(".view").click()
    assert "big" in fig.get_attribute("class").split()
    big = fig.locator("img").bounding_box()
    assert big["width"] > 2.5 * small and big["y"] + big["height"] <= SCREEN["height"]
    page.keyboard.press("Escape")
    assert "big" not in fig.get_attribute("class").split()
    assert page.viewcert_errors == []


def test_certify_legend_offers_only_a_crystals_layers_and_an_element_key(e3_phantom_certify, e3_phantom_site):
    page = (e3_phantom_site / "items" / "0000.html").read_text()
    layers = [a["data-layer"] for t, a in start_tags(page) if t == "input"]
    assert set(layers) <= {"atom", "hidden", "missing", "phantom", "near-miss", "near-atom"}
    assert {"phantom", "near-miss", "near-atom"} <= set(layers)
    assert "hydrogen bond" not in page and "consistent answer" not in page
    key = re.search(r'<div class="key">element colours: (.*?)</div>', page).group(1)
    shown = set(re.findall(r"</svg>([A-Z][a-z]?)</span>", key))
    formula = json.loads((e3_phantom_certify / "certificate.json").read_text())["items"][0]["formula"]
    assert shown == set(re.findall(r"[A-Z][a-z]?", formula))


def test_index_has_crystal_system_and_delta_star_to_four_figures(e3_phantom_certify, e3_phantom_site):
    cert = json.loads((e3_phantom_certify / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    html = (e3_phantom_site / "index.html").read_text()
    data = json.loads(re.search(r'<script type="application/json" id="index-data">(.*?)</script>', html, re.S)[1])
    head = re.findall(r'<th data-col="\d+">(.*?)</th>', html)
    cs, ds = head.index("crystal system"), head.index("δ* (Å)")
    for row, item in zip(data["rows"], cert["items"], strict=True):
        assert row[3][cs] == item["label_dataset"]["crystal_system"]
        assert repr(row[3][ds]) == _sig4(item["uniqueness_margin"]["delta_star"])


def test_residue_question_page_gives_each_entrys_reason_and_highlights_the_residue_asked(
        screen_page, residue_ligand_export, residue_ligand_site):
    cert = json.loads((residue_ligand_export / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    questions = {q["id"]: q for q in map(json.loads, (residue_ligand_export / "benchmark.jsonl").read_text()
                                         .splitlines())}
    lost = [(k, it) for k, it in enumerate(cert["items"]) if it["rendered"]["loss"]]
    assert lost  # 1pwc: SER 62's label is hidden in every view (issue 40's example)
    page = screen_page
    for k, item in enumerate(cert["items"]):
        _open(page, residue_ligand_site / "items" / f"{k:04d}.html")
        named = re.search(r"Does residue (.+?) form a hydrogen bond", questions[item["id"]]["question"])[1]
        assert page.locator("mark.asked.residue").text_content() == named
        rows = page.locator('table.entries[data-views="rendered"] tr[data-entry]')
        loss = item["rendered"]["loss"]
        want_rows = [b["entry"] for b in cert["ground_truth"][item["source_id"]]["bonds"]
                     if b["entry"].startswith(named.rsplit(" ", 1)[0] + " ")
                     and b["entry"] not in {u["entry"] for u in cert["ground_truth"][item["source_id"]]
                                            .get("uncertain", [])}]
        assert rows.count() == len(want_rows) == item["n_bonds"]
        for j in range(rows.count()):
            assert rows.nth(j).get_attribute("data-loss") == (" ".join(loss) if loss else "")
            verdict = rows.nth(j).locator("td").nth(2).text_content()
            assert verdict == ("not determined" if loss else "determined")
            if loss:
                assert rows.nth(j).locator("td").nth(3).text_content().startswith("label hidden")
        for v in range(page.locator("figure.fig").count()):  # the residue's atoms ringed in every view
            assert page.locator("figure.fig").nth(v).locator("circle.mk.residue").count() > 0
    assert page.viewcert_errors == [] and page.viewcert_requests == []


def test_interaction_index_counts_the_certificates_illegible_labels(residue_ligand_export, residue_ligand_site):
    cert = json.loads((residue_ligand_export / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    html = (residue_ligand_site / "index.html").read_text()
    data = json.loads(re.search(r'<script type="application/json" id="index-data">(.*?)</script>', html, re.S)[1])
    want = [it["id"] for it in cert["items"] if "label_hidden" in (it["rendered"]["loss"] or [])]
    assert [r[1] for r in data["rows"] if "illegible_labels" in r[2]] == want and want
    right = [it["id"] for it in cert["items"] if it["rendered"]["ceiling"] == 1]
    assert [r[1] for r in data["rows"] if "correct" in r[2]] == right


HOSTILE = ('<img src=x onerror="window.__pwned=1">', "</script><script>window.__pwned=2</script>",
           "<svg onload=window.__pwned=3>", "A/<b>x</b>1")


def test_hostile_interaction_names_show_as_text(screen_page, tmp_path):
    """An interaction certificate whose complex, residue, entries and reasons carry markup (received text):
    every new part of the page (asked residue, verdict table, reasons, bonds table) shows it as text."""
    entry = f"{HOSTILE[0]} 1 N A, O1"
    cert = sealed({"format": INTERACTION_FORMAT, "task": "residue-ligand", "settings": {"protocol": "axes-6"},
                   "items": [{"id": HOSTILE[1], "source_id": f"x:{HOSTILE[2]}", "residue": HOSTILE[3], "n_bonds": 1,
                              "positive": True, "uncertain": [HOSTILE[2]],
                              "rendered": {"ceiling": 0.0, "loss": [HOSTILE[1]], "residue": HOSTILE[3]},
                              "ideal": {"ceiling": 1.0, "loss": None, "residue": HOSTILE[3]}}],
                   "ground_truth": {f"x:{HOSTILE[2]}": {"bonds": [{"entry": entry, "donor": HOSTILE[0],
                                                                   "acceptor": 1, "d_da_A": HOSTILE[2]}],
                                                        "uncertain": [{"entry": HOSTILE[2], "reason": HOSTILE[0]}]}},
                   "complexes": []})
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "certificate.json").write_text(json.dumps(cert))
    write_site(tmp_path / "f", tmp_path / "s")
    page = screen_page
    for name in ("index.html", "items/0000.html"):
        _open(page, tmp_path / "s" / name)
        assert page.evaluate("window.__pwned === undefined")
        assert page.locator("section img, section b, section svg[onload], td img, td b").count() == 0
    assert page.locator("mark.asked.residue").text_content() == "<b> x</b>1 A"  # A/RESseq read as RES seq chain
    assert page.locator("mark.asked.ligand").text_content() == HOSTILE[2]
    texts = page.locator('table.entries[data-views="rendered"] td').all_text_contents()
    assert HOSTILE[2] in texts and HOSTILE[0] in texts[-1]  # the uncertain entry and its (received) reason
    assert page.locator("table.bonds td").first.text_content() == entry
    assert page.viewcert_errors == [] and page.viewcert_requests == []


def _map_data(site) -> dict:
    html = (site / "map.html").read_text()
    return json.loads(re.search(r'<script type="application/json" id="map-data">(.*?)</script>', html, re.S).group(1))


def map_pixel(page, u: float, v: float) -> tuple[float, float]:
    """The page position of the plot's pixel (u, v) (``chart``'s px: WIDTH × HEIGHT), through the canvas's box."""
    from viewcert.explore.chart import HEIGHT, WIDTH

    box = page.locator("#map-points").bounding_box()
    return box["x"] + u * box["width"] / WIDTH, box["y"] + v * box["height"] / HEIGHT


def test_map_plots_every_item_where_its_values_put_it_and_a_click_opens_it(screen_page, hostile_certify,
                                                                           hostile_site):
    """The map of a certify output (three crystals, two of them with hostile ids; items 0 and 2 the same
    crystal, so the same point): one point per item at (atoms, δ*) by the stated linear scales (0 to 1.05 × the
    largest value, or δ, over the plot's width and height inside its margins), the values the certificate's,
    drawn on the canvas in its outcome's colour (#1a7f37 correct, fill-opacity 0.85, over white); hovering a
    point names it as text; a click on a point opens that item's page (on a shared point, the one drawn last)."""
    import io

    from PIL import Image

    from viewcert.explore.chart import HEIGHT, PAD, WIDTH

    cert = json.loads((hostile_certify / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    want = {k: (it["n_atoms"], it["uniqueness_margin"]["delta_star"]) for k, it in enumerate(cert["items"])}
    assert want[0] == want[2] != want[1]
    page = screen_page
    _open(page, hostile_site / "map.html")
    page.wait_for_selector("#map-points[data-drawn]")
    assert page.evaluate("window.__pwned === undefined")
    assert int(page.locator("#map-points").get_attribute("data-drawn")) == len(want) == 3
    assert page.locator("circle.pt[data-index]").count() == 0  # no DOM node per point
    rows = {r[0]: r for r in _map_data(hostile_site)["points"]}
    x_max = 1.05 * max(x for x, _ in want.values())
    y_max = 1.05 * max([y for _, y in want.values()] + [cert["config"]["delta"]])  # the δ line fits too
    uv = {}
    for k, (x, y) in want.items():
        assert rows[k][1:3] == [x, y] and rows[k][3] == ("correct" if cert["items"][k]["correct"] else "incorrect")
        uv[k] = (PAD + x / x_max * (WIDTH - 2 * PAD), HEIGHT - PAD - y / y_max * (HEIGHT - 2 * PAD))
    shot = page.locator("#map-points").screenshot()
    img = np.asarray(Image.open(io.BytesIO(shot)).convert("RGB")).astype(float)
    green = np.array([0x1A, 0x7F, 0x37])
    for k, (u, v) in uv.items():  # the canvas's pixel at each point's centre: its outcome's colour, over white
        assert cert["items"][k]["correct"] is True  # m discs of opacity 0.85 there leave 0.15^m of the white
        m = sum(xy == want[k] for xy in want.values())
        px = img[round(v * img.shape[0] / HEIGHT), round(u * img.shape[1] / WIDTH)]
        assert np.abs(px - (green + (255 - green) * 0.15 ** m)).max() <= 6, (k, m, px)
    page.mouse.move(*map_pixel(page, *uv[1]))
    assert page.locator(".map-plot").get_attribute("data-lit") == "1"
    assert page.locator(".map-plot").get_attribute("title").startswith(console_text(cert["items"][1]["id"],
                                                                                     keep_newlines=False) + ": ")
    assert page.evaluate("window.__pwned === undefined")
    for k, opens in ((1, 1), (0, 2)):
        _open(page, hostile_site / "map.html")
        page.wait_for_selector("#map-points[data-drawn]")
        page.mouse.click(*map_pixel(page, *uv[k]))
        page.wait_for_url("**/items/*.html")
        page.wait_for_load_state("load")
        assert page.url == (hostile_site / "items" / f"{opens:04d}.html").resolve().as_uri()
        assert page.locator("h1.item-id").text_content() == console_text(cert["items"][opens]["id"])
    assert page.viewcert_errors == [] and page.viewcert_requests == []


def test_3d_pane_loads_offline_and_draws_every_phantom(screen_page, e3_phantom_certify, e3_phantom_site):
    """The 3D pane (vendored 3Dmol.js, shipped in the site with its licence) draws the rendered cell: it loads
    from file:// with no request, draws one sphere per phantom the certificate lists, and magenta (the phantoms'
    colour, no element's) shows in its pixels."""
    import io

    from PIL import Image

    cert = json.loads((e3_phantom_certify / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert (e3_phantom_site / "assets" / "3Dmol-LICENSE.txt").read_text().count("BSD") >= 1
    page = screen_page
    for k, item in enumerate(cert["items"]):
        _open(page, e3_phantom_site / "items" / f"{k:04d}.html")
        pane = page.locator("#pane3d")
        pane.scroll_into_view_if_needed()
        page.wait_for_selector('#pane3d[data-ready="yes"] canvas')
        assert int(pane.get_attribute("data-phantoms")) == len(item["phantoms"]) == item["oracle"]["n_phantoms"]
        rgb = np.asarray(Image.open(io.BytesIO(pane.screenshot())).convert("RGB")).astype(int)
        r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
        magenta = (r > 90) & (b > 80) & (r > 1.6 * g) & (b > 1.4 * g)  # lit or shaded magenta; O is red, Al grey
        assert magenta.sum() > 20
    assert page.viewcert_errors == [] and page.viewcert_requests == []


def test_hovering_a_phantom_ring_highlights_that_phantom_in_3d(screen_page, e3_phantom_certify, e3_phantom_site):
    """Hovering phantom k's ring in a 2D view lights it in every view and colours its sphere in the 3D pane
    (cyan shows in the pane's pixels); leaving puts both back."""
    import io

    from PIL import Image

    page = screen_page
    _open(page, e3_phantom_site / "items" / "0000.html")
    page.wait_for_selector('#pane3d[data-ready="yes"] canvas')

    def cyan() -> int:
        rgb = np.asarray(Image.open(io.BytesIO(page.locator("#pane3d").screenshot())).convert("RGB")).astype(int)
        return int(((rgb[..., 2] > 150) & (rgb[..., 1] > 120) & (rgb[..., 0] < 80)).sum())

    assert cyan() == 0
    page.locator("figure.fig").nth(0).locator('circle.mk.phantom[data-group="phantom 2"]').hover()
    assert page.locator("#pane3d").get_attribute("data-highlight") == "phantom 2"
    lit = page.locator("circle.mk.phantom.lit")
    assert lit.count() == 5 and {lit.nth(j).get_attribute("data-group") for j in range(5)} == {"phantom 2"}
    assert cyan() > 20
    page.mouse.move(1, 1)
    assert page.locator("#pane3d").get_attribute("data-highlight") == ""
    assert page.locator("circle.mk.phantom.lit").count() == 0 and cyan() == 0
    assert page.viewcert_errors == [] and page.viewcert_requests == []


def test_residue_page_without_the_complexes_rings_the_residue_the_question_names(residue_ligand_export,
                                                                                 residue_ligand_site, tmp_path):
    """No --inputs (the export's sidecars only): each residue question's page rings, in every view, the atoms of
    the residue its question names: the protein atom of each of that residue's ground-truth bonds among them, no
    ligand atom, the same rings as with the complexes read again; its verdict table is the same (each entry's
    reason the certificate's)."""
    cert = json.loads((residue_ligand_export / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    write_site(residue_ligand_export, tmp_path / "site")
    for k, item in enumerate(cert["items"]):
        page = (tmp_path / "site" / "items" / f"{k:04d}.html").read_text()
        tags = start_tags(page)
        rings = [a for t, a in tags if t == "circle" and a.get("class", "").split()[:2] == ["mk", "residue"]]
        atoms = set(re.findall(r"the residue the question names: atom (\d+)", page))
        lig_atoms = set(re.findall(r"the ligand: atom (\d+)", page))
        assert rings and atoms and lig_atoms and not atoms & lig_atoms
        named = item["residue"].split("/")[1]
        for b in cert["ground_truth"][item["source_id"]]["bonds"]:
            if b["entry"].split()[:2] == [named[:3], named[3:]]:
                protein = b["donor"] if b["ligand_role"] == "acceptor" else b["acceptor"]
                assert str(protein) in atoms
        with_inputs = (residue_ligand_site / "items" / f"{k:04d}.html").read_text()
        assert set(re.findall(r"the residue the question names: atom (\d+)", with_inputs)) == atoms
        table = re.compile(r'<table class="entries" data-views="rendered">.*?</table>', re.S)
        assert table.search(page)[0] == table.search(with_inputs)[0]
        assert len(rings) == 6 * len(atoms)  # every atom of the residue ringed in each of the six views


def test_bonds_drawn_from_sidecars_take_the_legends_colours(screen_page, residue_ligand_export, tmp_path):
    """In Chromium, without --inputs: every bond class a page draws is stroked in its legend swatch's colour, and
    the residue's rings in the residue swatch's; no console error, no request."""
    write_site(residue_ligand_export, tmp_path / "site")
    cert = json.loads((residue_ligand_export / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    page = screen_page
    seen = set()
    for k in range(len(cert["items"])):
        _open(page, tmp_path / "site" / "items" / f"{k:04d}.html")
        for cls in ("det", "undet", "uncertain", "other"):
            line = page.locator(f"line.mk.bond.{cls}")
            if line.count():
                seen.add(cls)
                stroke = line.first.evaluate("e => getComputedStyle(e).stroke")
                assert stroke == page.locator(f".sw-bond-{cls}").evaluate("e => getComputedStyle(e).stroke")
        ring = page.locator("circle.mk.residue").first.evaluate("e => getComputedStyle(e).stroke")
        assert ring == page.locator(".sw-residue").evaluate("e => getComputedStyle(e).stroke") == "rgb(255, 123, 0)"
    assert {"det", "other"} <= seen  # 1pwc's residue questions: the asked bonds determined, the others not asked
    assert page.viewcert_errors == [] and page.viewcert_requests == []


def _pane_cyan(page) -> int:
    import io

    from PIL import Image

    rgb = np.asarray(Image.open(io.BytesIO(page.locator("#pane3d").screenshot())).convert("RGB")).astype(int)
    return int(((rgb[..., 2] > 150) & (rgb[..., 1] > 120) & (rgb[..., 0] < 80)).sum())


def test_hovering_an_atom_in_2d_lights_it_in_3d_and_back(screen_page, e3_phantom_site):
    """Hovering drawn atom j in a 2D view (the one farthest from its neighbours there) lights its rings in every
    view and its sphere in the 3D pane (cyan in the pane's pixels); hovering a sphere in the pane lights that atom's
    rings in the 2D views, and the sphere lit is the atom under the pointer."""
    page = screen_page
    _open(page, e3_phantom_site / "items" / "0000.html")
    page.wait_for_selector('#pane3d[data-ready="yes"] canvas')
    fig = page.locator("figure.fig").nth(0)
    rings = fig.locator('circle.mk.atom[data-group^="drawn "]')
    uv = np.asarray([[float(rings.nth(i).get_attribute("data-u")), float(rings.nth(i).get_attribute("data-v"))]
                     for i in range(rings.count())])
    gap = np.linalg.norm(uv[:, None] - uv[None], axis=2) + np.eye(len(uv)) * 1e9
    ph = fig.locator("circle.mk.phantom")  # a phantom's ring (its disc) is its own hover target: keep off them
    for i in range(ph.count()):
        c = ph.nth(i)
        inside = np.hypot(uv[:, 0] - float(c.get_attribute("cx")), uv[:, 1] - float(c.get_attribute("cy"))) \
            <= float(c.get_attribute("r")) + 2
        gap[inside] = -1
    pick = int(np.argmax(gap.min(axis=1)))
    assert gap[pick].min() > 0
    j = int(rings.nth(pick).get_attribute("data-group").split()[1])
    assert _pane_cyan(page) == 0  # (scrolls the pane into view: the image's box is read after)
    img = fig.locator("img")
    img.scroll_into_view_if_needed()
    box, nat = img.bounding_box(), img.evaluate("i => i.naturalWidth")
    page.mouse.move(box["x"] + uv[pick, 0] * box["width"] / nat, box["y"] + uv[pick, 1] * box["width"] / nat)
    assert page.locator("#pane3d").get_attribute("data-highlight") == f"atom {j}"
    lit = page.locator('circle.mk.lit[data-group^="drawn "]')
    assert lit.count() == 5 and {lit.nth(i).get_attribute("data-group") for i in range(5)} == {f"drawn {j}"}
    assert page.locator("#pane3d").evaluate("d => d.viewcertViewer !== undefined")
    shot = _pane_cyan(page)
    assert shot > 20
    page.mouse.move(1, 1)
    assert page.locator("#pane3d").get_attribute("data-highlight") == "" and page.locator("circle.mk.lit").count() == 0
    # back: the pointer on the sphere of the atom farthest on screen from every other sphere in the pane
    data = json.loads(page.locator("#structure-3d").text_content())
    pane = page.locator("#pane3d")
    pane.evaluate("d => d.scrollIntoView({block: 'center'})")
    pbox = pane.bounding_box()
    pts = [a[1:] for a in data["atoms"]] + data["phantoms"]
    xy = np.asarray([[q["x"], q["y"]] for q in pane.evaluate(
        "(d, pts) => pts.map(p => d.viewcertViewer.modelToScreen({x: p[0], y: p[1], z: p[2]}))", pts)])
    xy -= np.asarray(page.evaluate("[window.scrollX, window.scrollY]"))  # 3Dmol's page coordinates to the window's
    inside = ((xy[:, 0] > pbox["x"] + 20) & (xy[:, 0] < pbox["x"] + pbox["width"] - 20)
              & (xy[:, 1] > pbox["y"] + 20) & (xy[:, 1] < pbox["y"] + pbox["height"] - 20))
    gap = np.linalg.norm(xy[:, None] - xy[None], axis=2) + np.eye(len(xy)) * 1e9
    score = np.where(inside[: len(data["atoms"])], gap.min(axis=1)[: len(data["atoms"])], -1)
    k = int(np.argmax(score))
    n_atoms = len(data["atoms"])
    assert score[k] > 5 and gap[k, n_atoms:].min() > 20  # no phantom's sphere within 20 px
    page.mouse.move(xy[k, 0] - 3, xy[k, 1])
    page.mouse.move(xy[k, 0], xy[k, 1], steps=3)
    for _ in range(50):  # 3Dmol reports a hover after the pointer rests (its hoverDuration, 0.5 s)
        if pane.get_attribute("data-highlight"):
            break
        page.wait_for_timeout(100)
    got = pane.get_attribute("data-highlight")
    assert got.startswith("atom ")
    m = int(got.split()[1])  # the front-most sphere under the pointer: atom k, or one drawn over it
    assert np.hypot(*(xy[m] - xy[k])) <= 12
    lit = page.locator('circle.mk.lit[data-group^="drawn "]')
    assert lit.count() == 5 and {lit.nth(i).get_attribute("data-group") for i in range(5)} == {f"drawn {m}"}
    assert page.viewcert_errors == [] and page.viewcert_requests == []


def test_3d_pane_rings_every_drawn_copy_of_the_near_miss_atoms(screen_page, e3_phantom_certify, e3_phantom_site):
    """The pane's amber spheres: one per drawn copy of the δ* near-miss tuple's atoms, as many as the 2D view draws
    copies of those cell atoms (their titles), each at an atom of the tuple's element."""
    from ase.data import chemical_symbols

    cert = json.loads((e3_phantom_certify / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    page = screen_page
    for k, item in enumerate(cert["items"]):
        _open(page, e3_phantom_site / "items" / f"{k:04d}.html")
        data = json.loads(page.locator("#structure-3d").text_content())
        um = item["uniqueness_margin"]
        titles = page.locator("figure.fig").nth(0).locator('circle.mk[data-group^="drawn "] title').all_text_contents()
        copies = sum(int(t.split(" atom ")[1].split(":")[0]) in set(um["near_miss"]) for t in titles)
        assert len(data["near"]) == copies > 0
        symbol = chemical_symbols[um["near_miss_label"]]
        where = {tuple(a[1:]): a[0] for a in data["atoms"]}
        assert all(where[tuple(p)] == symbol for p in data["near"])
        page.wait_for_selector('#pane3d[data-ready="yes"] canvas')
        assert page.locator("#pane3d").get_attribute("data-near") == str(copies)
    assert page.viewcert_errors == [] and page.viewcert_requests == []
