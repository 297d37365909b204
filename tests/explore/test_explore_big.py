"""A big site written in bounded memory (issue 40, item 7): the explorer of a streamed certificate
(``certify.stream``'s Parquet shards) keeps nothing per item while it writes: its index rows and map points are
spilled to files as items come, its filter counts and the map's extent merged as it goes.

- The site of 700 varied items in shards of 200 agrees item by item with the shards read here with pyarrow
  directly (not through the explorer's reader): each index row's id and filters, each map point's values,
  outcome and phantom ring, each filter's count, and one item page per item.
- The writer's peak traced memory (``tracemalloc``) does not grow with the items: 400 items and 1,600 items
  (shards of 200) peak within 256 KiB of each other. Measured when this test was written (warm process,
  cyclic garbage collected after each chunk of pages so that the figure is what the writer holds, not when the
  collector runs): 3,251 KiB and 3,290 KiB (+39 KiB); the writer before it (every map point kept to the end and
  the map drawn as one SVG string) peaked at 3,280 KiB and 4,633 KiB (+1,353 KiB, 1.1 KiB an item).
"""

from __future__ import annotations

import gc
import json
import re
import tracemalloc
from pathlib import Path

import pytest

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.explore_fixtures import SCRIPT_ID, varied_items, write_table_folder
from viewcert.explore import write_site
from viewcert.sanitize import console_text


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> dict:
    """The settings and items of a certify output of two prototypes with δ* (as JSON), the second item's id
    made hostile (the items are received: their ids are written as text)."""
    from viewcert.certify import CertifyConfig
    from viewcert.certify.inputs import load_input
    from viewcert.certify.run import certify

    out = tmp_path_factory.mktemp("explore_big") / "cert"
    certify(load_input("builtin:prototypes").select(["aflow:A_hP4_194_bc", "aflow:A_cF4_225_a"]),
            CertifyConfig(margin=True), out=out, n_workers=1, progress=False)
    doc = json.loads((out / "certificate.json").read_text())
    assert_certificate_consistent(doc)
    doc["items"][1]["id"] = SCRIPT_ID
    return doc


def _block(page: Path, block_id: str) -> dict:
    m = re.search(rf'<script type="application/json" id="{block_id}">(.*?)</script>', page.read_text(), re.S)
    return json.loads(m.group(1))


def _shard_items(folder: Path) -> list[dict]:
    """Every item of the streamed certificate, read from its shards with pyarrow in the certificate's order: the
    plain columns as stored, the others parsed from their JSON text."""
    import pyarrow.parquet as pq

    cert = json.loads((folder / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    out = []
    for s in cert["items_table"]["shards"]:
        for row in pq.read_table(folder / "items" / s["name"]).to_pylist():
            out.append({k: (v if k in ("id", "outcome", "correct") or v is None else json.loads(v))
                        for k, v in row.items()})
    return out


def _filters(it: dict) -> set[str]:
    """A crystal item's index filters by their definition (docs/explorer.md, ``explore.outcomes``)."""
    orc = it.get("oracle") or {}
    got = {"item_error"} if it["outcome"] == "error" else {"correct" if it["correct"] is True else "incorrect"}
    for name, on in (("unique", it.get("unique") is True), ("phantoms", (orc.get("n_phantoms") or 0) > 0),
                     ("missing_atoms", (orc.get("n_missing") or 0) > 0), ("label_mismatch", bool(it.get("label_mismatch"))),
                     ("symmetry_raised", bool(it.get("symmetry_raised")))):
        if on:
            got.add(name)
    return got


def test_a_streamed_site_agrees_with_its_shards_item_by_item(template, tmp_path):
    folder = write_table_folder(template, varied_items(template["items"], 700), tmp_path / "cert", 200)
    write_site(folder, tmp_path / "site", workers=2)
    items = _shard_items(folder)
    assert len(items) == 700 and len(list((folder / "items").iterdir())) == 4  # 200, 200, 200, 100
    rows = _block(tmp_path / "site" / "index.html", "index-data")["rows"]
    points = _block(tmp_path / "site" / "map.html", "map-data")["points"]
    assert [r[0] for r in rows] == [p[0] for p in points] == list(range(700))
    counts: dict[str, int] = {}
    for k, (it, row, pt) in enumerate(zip(items, rows, points, strict=True)):
        shown = console_text(it["id"], keep_newlines=False)
        want = _filters(it)
        assert row[1] == shown and set(row[2]) == want, k
        outcome = next(c for c in ("item_error", "correct", "incorrect") if c in want)
        assert pt == [k, it["n_atoms"], it["uniqueness_margin"]["delta_star"], outcome, int("phantoms" in want),
                      shown], k
        for f in want:
            counts[f] = counts.get(f, 0) + 1
    assert counts["phantoms"] == sum((it["oracle"]["n_phantoms"] or 0) > 0 for it in items) == 466
    index = (tmp_path / "site" / "index.html").read_text()
    for f, n in counts.items():
        assert re.search(rf'data-filter="{f}">[^<]*<span class="count">(\d+)</span>', index).group(1) == str(n), f
    pages = sorted((tmp_path / "site" / "items").iterdir())
    assert [p.name for p in pages] == [f"{k:04d}.html" for k in range(700)]
    assert "(certificate: 466)" in index  # the summary's phantom census, from the shards' mergeable counts


def _peak_kib(folder: Path, site: Path) -> float:
    """The peak memory (KiB, ``tracemalloc``) of writing the site of ``folder``, cyclic garbage collected after
    each chunk of pages (the page's raw record is written by the standard library's pure-Python JSON encoder,
    whose closures are cycles: without it the peak measures the collector's schedule)."""
    gc.collect()
    tracemalloc.start()
    try:
        write_site(folder, site, progress=lambda done, n: gc.collect())
        return tracemalloc.get_traced_memory()[1] / 1024
    finally:
        tracemalloc.stop()


def test_the_writers_memory_does_not_grow_with_the_items(template, tmp_path):
    small = write_table_folder(template, varied_items(template["items"], 400), tmp_path / "c400", 200)
    big = write_table_folder(template, varied_items(template["items"], 1600), tmp_path / "c1600", 200)
    write_site(small, tmp_path / "warm")  # imports and first-use caches outside the measure
    peak_small, peak_big = _peak_kib(small, tmp_path / "s400"), _peak_kib(big, tmp_path / "s1600")
    assert peak_big - peak_small < 256, (peak_small, peak_big)  # the writer before grew 1,353 KiB here
    assert len(_block(tmp_path / "s1600" / "map.html", "map-data")["points"]) == 1600
