"""The streamed certificate (``certify.stream``): an item table of Parquet shards beside a small certificate.json.

Checked against the JSON certificate of the same run, independently of the table code: each shard's SHA-256 is
recomputed here from the item lines the JSON certificate file writes (one item per line), and the chain from its
definition; the summary's figures are the JSON certificate's own."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.certify import CertifyConfig, certify
from viewcert.certify import stream as T
from viewcert.certify.inputs import load_input
from viewcert.certify.run import certify_streamed
from viewcert.errors import InputError

REPO = Path(__file__).resolve().parents[2]
#: the summary's figures a streamed certificate must give exactly as the JSON certificate does
FIGURES = ("n", "n_errors", "kinds", "score", "truth", "correct", "R1", "bound", "interval", "by_level",
           "by_crystal_system", "phantom_census", "failure_reasons", "n_symmetry_raised")


def _json_item_lines(path: Path) -> list[bytes]:
    """The item lines of a JSON certificate file as written (`` {...},``), as canonical lines (``{...}\\n``)."""
    text = path.read_text()
    body = text[text.index('"items": [\n') + len('"items": [\n'):]
    body = body[:body.index("\n ]")]
    return [(line.strip().rstrip(",") + "\n").encode() for line in body.split("\n")]


def _chain_by_hand(lines: list[bytes], size: int) -> tuple[list[str], str]:
    shards = [hashlib.sha256(b"".join(lines[k:k + size])).hexdigest() for k in range(0, len(lines), size)]
    c = hashlib.sha256(b"viewcert-item-table/1").hexdigest()
    for d in shards:
        c = hashlib.sha256(f"{c}:{d}".encode()).hexdigest()
    return shards, c


def _compare(json_out: Path, jcert: dict, table_out: Path, tcert: dict, size: int, cfg: CertifyConfig) -> None:
    for key in FIGURES:
        assert tcert["summary"][key] == jcert["summary"][key], key
    s = jcert["summary"]
    assert tcert["summary"]["n_failures"] == len(s["failures"])
    assert tcert["summary"]["n_label_mismatches"] == len(s["label_mismatches"])
    assert tcert["summary"]["n_cross_check_disagreements"] == len(s["cross_check_disagreements"])
    shards, chain = _chain_by_hand(_json_item_lines(json_out / "certificate.json"), size)
    assert [x["sha256"] for x in tcert["items_table"]["shards"]] == shards
    assert tcert["items_table"]["chain"] == chain
    assert [it.to_dict() for it in T.read_table(table_out, tcert)] == jcert["items"]
    assert T.check_table(table_out, tcert, cfg) == []
    for key in ("inputs", "config", "protocol", "tolerances", "libraries", "resolution"):
        assert tcert[key] == jcert[key], key


def test_prototypes_table_gives_the_json_certificates_figures(tmp_path):
    d, cfg = load_input("builtin:prototypes"), CertifyConfig()
    jcert = certify(d, cfg, out=tmp_path / "json", n_workers=1, plots=False, progress=False).to_dict()
    tcert = certify_streamed(d, cfg, tmp_path / "table", n_workers=1, progress=False, shard_items=7).to_dict()
    assert [s["n"] for s in tcert["items_table"]["shards"]] == [7, 7, 6]
    _compare(tmp_path / "json", jcert, tmp_path / "table", tcert, 7, cfg)
    on_disk = json.loads((tmp_path / "table" / "certificate.json").read_text())
    assert_certificate_consistent(on_disk)
    assert on_disk == tcert and on_disk["format"] == "viewcert-certificate-table/1"
    # a shard edited to other valid rows no longer matches its SHA-256; the reader names it
    shard = tmp_path / "table" / "items" / "part-000001.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(shard)
    ids = table.column("id").to_pylist()
    pq.write_table(table.set_column(0, "id", pa.array(ids[::-1])), shard)  # the metadata kept
    with pytest.raises(InputError, match="part-000001.parquet"):
        list(T.read_table(tmp_path / "table", tcert))


def test_table_threshold_keeps_small_runs_one_json_certificate():
    from viewcert.certify.run import use_item_table

    d = load_input("builtin:prototypes")
    assert T.THRESHOLD == 50_000 and not use_item_table(d, None)
    assert use_item_table(d, True) and not use_item_table(d, False)


CHILD = """
import sys
from viewcert.certify import CertifyConfig
from viewcert.certify.inputs import load_input
from viewcert.certify.run import certify_streamed
certify_streamed(load_input("builtin:prototypes"), CertifyConfig(), sys.argv[1], n_workers=1, progress=False,
                 shard_items=2)
"""


def test_sigkill_mid_run_resumes_per_shard_to_the_same_digest(tmp_path):
    d, cfg = load_input("builtin:prototypes"), CertifyConfig()
    whole = certify_streamed(d, cfg, tmp_path / "whole", n_workers=1, progress=False, shard_items=2).to_dict()
    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(out)], env=env)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and len(list((out / "items").glob("part-*.parquet"))) < 3:
        if child.poll() is not None:
            break
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    done = sorted((out / "items").glob("part-*.parquet"))
    assert 3 <= len(done) < 10, "the child was not killed part way"
    assert not (out / "certificate.json").exists()
    for p in done:  # every shard on disk is whole (written atomically); a temporary may be left
        T.read_shard(p)
    lines: list[str] = []
    again = certify_streamed(d, cfg, out, n_workers=1, progress=False, shard_items=2, report=lines.append).to_dict()
    n_resumed = 2 * len(done)
    assert lines == [f"resumed {n_resumed} of 20 items from {out / 'items'}"]
    assert json.loads((out / "run.json").read_text())["n_computed"] == 20 - n_resumed
    assert again["digest"]["value"] == whole["digest"]["value"]
    assert sorted(p.name for p in (out / "items").iterdir()) == [f"part-{k:06d}.parquet" for k in range(10)]


@pytest.mark.shared_data
@pytest.mark.slow
def test_e3_through_the_table_gives_every_figure_of_the_json_certificate(shared_data, tmp_path):
    """The study's 210 items: the JSON certificate keeps its bytes (digest 6b5a5602…, test_certify_study) and the
    table path gives its R1, bound, census and every item."""
    from tests.support.study import STUDY_DIGEST

    d, cfg = load_input(shared_data / "data" / "e3"), CertifyConfig(delta=0.01, tau=0.01)
    jcert = certify(d, cfg, out=tmp_path / "json", n_workers=2, plots=False, progress=False).to_dict()
    assert jcert["digest"]["value"] == STUDY_DIGEST
    tcert = certify_streamed(d, cfg, tmp_path / "table", n_workers=2, progress=False, shard_items=64).to_dict()
    _compare(tmp_path / "json", jcert, tmp_path / "table", tcert, 64, cfg)
    assert tcert["summary"]["bound"]["text"].endswith("exact one-sided 95% lower bound 0.98584")


def test_rerun_with_other_shards_leaves_only_its_own(tmp_path):
    d, cfg = load_input("builtin:prototypes"), CertifyConfig()
    a = certify_streamed(d, cfg, tmp_path, n_workers=1, progress=False, shard_items=4).to_dict()
    assert len(list((tmp_path / "items").iterdir())) == 5
    b = certify_streamed(d, cfg, tmp_path, n_workers=1, progress=False, shard_items=10).to_dict()
    assert sorted(p.name for p in (tmp_path / "items").iterdir()) == ["part-000000.parquet", "part-000001.parquet"]
    assert b["summary"] == a["summary"] and b["items_table"]["chain"] != a["items_table"]["chain"]
    assert [it.id for it in T.read_table(tmp_path, b)] == [it.id for it in d.items]
