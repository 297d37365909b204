"""``explore``, ``ladder`` and the summary read a streamed certificate (``certify.stream``) lazily (issue 42, item 1;
issue 40, item 7): one small set certified both ways (one JSON certificate, and an item table of three shards) gives
the same explorer index rows and item pages, the same R1 rung and the same summary figures. Hostile tables (a shard
outside its folder, a wrong schema, a digest that does not hold) are one line naming the file, exit 2.

The expected values are the JSON certificate's own (its items in order, its summary), read as JSON here."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.certify import CertifyConfig
from viewcert.certify import stream as T
from viewcert.certify.inputs import load_input
from viewcert.certify.run import certify, certify_streamed
from viewcert.cli import app
from viewcert.formats.records import compute_digest

IDS = ["aflow:A_cF4_225_a", "aflow:A_hP2_194_c", "aflow:A_tI4_141_a", "aflow:A_oC4_63_c", "aflow:A_mC4_12_i"]
#: the summary's figures both certificates state (test_certify_stream.FIGURES)
FIGURES = ("n", "n_errors", "kinds", "score", "truth", "correct", "R1", "bound", "interval", "by_level",
           "by_crystal_system", "phantom_census", "failure_reasons", "n_symmetry_raised")


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> tuple[Path, Path]:
    """(JSON certify output, streamed certify output in shards of 2, 2, 1) of five prototypes, δ* on."""
    d = tmp_path_factory.mktemp("table_readers")
    ds = load_input("builtin:prototypes").select(IDS)
    cfg = CertifyConfig(margin=True)
    certify(ds, cfg, out=d / "json", n_workers=1, progress=False)
    certify_streamed(ds, cfg, d / "table", n_workers=1, progress=False, shard_items=2)
    return d / "json", d / "table"


@pytest.fixture()
def table(both, tmp_path) -> Path:
    dst = tmp_path / "table"
    shutil.copytree(both[1], dst)
    return dst


def _rows(site: Path) -> list:
    html = (site / "index.html").read_text()
    block = re.search(r'<script type="application/json" id="index-data">(.*?)</script>', html, re.S).group(1)
    return json.loads(block)["rows"]


def _summary_rows(site: Path) -> dict[str, str]:
    """{summary field: what the page shows of it}: a row's value, a table's whole text (explore.summary_words)."""
    html = (site / "summary.html").read_text()
    part = html.split("<h2>certificate summary</h2>", 1)[1].split("<h2>settings</h2>", 1)[0]
    rows = dict(re.findall(r'<tr data-field="([^"]+)"><th>.*?</th><td>(.*?)</td></tr>', part.split("</table>", 1)[0]))
    rows.update(re.findall(r'<table class="words[^"]*" data-field="([^"]+)">(.*?)</table>', part))
    return rows


def test_the_explorer_shows_a_streamed_certificate_as_the_json_one(both, tmp_path):
    from viewcert.explore import write_site

    jdir, tdir = both
    write_site(jdir, tmp_path / "js")
    write_site(tdir, tmp_path / "ts")
    jcert = json.loads((jdir / "certificate.json").read_text())
    assert_certificate_consistent(jcert)
    rows = _rows(tmp_path / "ts")
    assert [r[1] for r in rows] == [it["id"] for it in jcert["items"]] == IDS
    assert rows == _rows(tmp_path / "js")
    phantoms = sum("phantoms" in r[2] for r in rows)
    assert phantoms == jcert["summary"]["phantom_census"]["items_with_phantoms"]
    for k in range(len(IDS)):  # every item page, byte for byte
        name = f"items/{k:04d}.html"
        assert (tmp_path / "ts" / name).read_bytes() == (tmp_path / "js" / name).read_bytes(), name
    assert (tmp_path / "ts" / "map.html").read_bytes() == (tmp_path / "js" / "map.html").read_bytes()
    shown_t, shown_j = _summary_rows(tmp_path / "ts"), _summary_rows(tmp_path / "js")
    for key in FIGURES:
        assert shown_t[key] == shown_j[key], key
    assert shown_t["n_failures"] == str(len(jcert["summary"]["failures"]))
    index = (tmp_path / "ts" / "index.html").read_text()
    stated = re.search(r'data-filter="phantoms">.*?\(certificate: (\d+)\)', index).group(1)
    assert int(stated) == phantoms


def test_the_ladder_reads_the_same_r1_from_a_streamed_certificate(both):
    from viewcert.attribution.ladder import ceiling_from_certificate

    jdir, tdir = both
    jcert = json.loads((jdir / "certificate.json").read_text())
    assert_certificate_consistent(jcert)
    universe = list(reversed(IDS))
    cj = ceiling_from_certificate(jdir / "certificate.json", universe)
    ct = ceiling_from_certificate(tdir / "certificate.json", universe)
    by_id = {it["id"]: it for it in jcert["items"]}
    assert ct.per_item.tolist() == [by_id[u]["correct"] for u in universe] == cj.per_item.tolist()
    assert (ct.correct, ct.n, ct.value) == (cj.correct, cj.n, cj.value) == (
        jcert["summary"]["correct"], jcert["summary"]["n"], cj.value)
    assert ct.reasons == cj.reasons and (ct.delta, ct.tau) == (cj.delta, cj.tau)
    tcert = json.loads((tdir / "certificate.json").read_text())
    assert_certificate_consistent(tcert)
    assert ct.digest == tcert["digest"]["value"] and "digest verified" in ct.source


def _cli(*argv: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(argv))
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception  # never a traceback
    return res.exit_code, res.output


def _one_line(code: int, text: str, *names: str) -> None:
    assert code == 2, text
    assert len(text.strip().splitlines()) == 1, text
    for name in names:
        assert name in text, text


def _readers(out: Path, tmp_path: Path):
    """(explore, the ladder's R1) of the streamed certify output ``out``: (exit code, output) each."""
    from viewcert.attribution.ladder import ceiling_from_certificate
    from viewcert.cli.options import guarded

    yield _cli("explore", str(out), "--out", str(tmp_path / "site"), "--workers", "1")

    def r1() -> None:
        ceiling_from_certificate(out / "certificate.json", IDS)
    import typer

    probe = typer.Typer()
    probe.command()(guarded(r1))
    res = CliRunner().invoke(probe, [])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    yield res.exit_code, res.output


def test_a_shard_outside_its_folder_is_refused_in_one_line(table, tmp_path):
    shard = table / "items" / "part-000001.parquet"
    outside = tmp_path / "elsewhere.parquet"
    shutil.move(shard, outside)
    os.symlink(outside, shard)  # the same bytes, but outside the certificate's folder
    for code, text in _readers(table, tmp_path):
        _one_line(code, text, str(shard), "inside")


def _rewrite_shard(path: Path, edit) -> None:
    """The shard at ``path`` rewritten with ``edit(table)`` applied, its metadata kept as it was."""
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    pq.write_table(edit(t).replace_schema_metadata(t.schema.metadata), path)


def test_a_shard_with_a_wrong_schema_is_refused_in_one_line(table, tmp_path):
    import pyarrow as pa

    shard = table / "items" / "part-000000.parquet"

    def as_text(t):
        k = t.schema.get_field_index("correct")
        return t.set_column(k, pa.field("correct", pa.string()), pa.array(["true"] * t.num_rows))
    _rewrite_shard(shard, as_text)
    for code, text in _readers(table, tmp_path):
        _one_line(code, text, str(shard), "schema", "'correct'", "field correct")


def test_a_shard_whose_rows_were_edited_is_refused_by_the_explorer(table, tmp_path):
    import pyarrow as pa

    shard = table / "items" / "part-000002.parquet"

    def wrong(t):
        k = t.schema.get_field_index("correct")
        return t.set_column(k, t.schema.field(k), pa.array([not v for v in t.column(k).to_pylist()]))
    _rewrite_shard(shard, wrong)  # metadata (its SHA-256) kept: the rows no longer hash to it
    code, text = _cli("explore", str(table), "--out", str(tmp_path / "site"), "--workers", "1")
    _one_line(code, text, str(shard), "SHA-256")


def test_a_shard_from_another_table_or_a_stale_certificate_is_refused_in_one_line(table, tmp_path):
    shutil.copy(table / "items" / "part-000000.parquet", table / "items" / "part-000001.parquet")
    for code, text in _readers(table, tmp_path):
        _one_line(code, text, str(table / "items" / "part-000001.parquet"), "SHA-256")
    cert = json.loads((table / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    cert["summary"]["correct"] -= 1  # edited after it was written: its digest no longer holds
    (table / "certificate.json").write_text(json.dumps(cert))
    for code, text in _readers(table, tmp_path):
        _one_line(code, text, str(table / "certificate.json"), "stale certificate")


def test_hostile_shard_names_and_folders_are_refused_before_any_read(table, tmp_path):
    cert = json.loads((table / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    cert["items_table"]["shards"][0]["name"] = "../../x.parquet"
    c = hashlib.sha256(b"viewcert-item-table/1").hexdigest()
    for s in cert["items_table"]["shards"]:
        c = hashlib.sha256(f"{c}:{s['sha256']}".encode()).hexdigest()
    cert["items_table"]["chain"] = c
    cert["digest"]["value"] = compute_digest(cert)  # consistent: only the name is wrong
    (table / "certificate.json").write_text(json.dumps(cert))
    for code, text in _readers(table, tmp_path):
        _one_line(code, text, str(table / "certificate.json"), "items_table.shards")
    assert T.TABLE_DIR == "items"
