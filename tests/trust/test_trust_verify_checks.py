"""``verify`` applies every schema and version check the readers and ``explore`` apply (issue 58, class 5), one shared
check each, and refuses a ``../`` record name before reading anything:

- a streamed certificate's shard with an extra column: refused by the one shard reader (``formats.table.read_shard``
  checks the schema; before, ``verify`` said "byte-identical" while ``explore`` refused it);
- an export whose manifest is of a format this viewcert does not read (a future version): refused as ``explore``
  refuses it (``formats.export.check_manifest``; before, its certificate verified with exit 0);
- a task certificate of a future ``version``: refused by the one certificate reader (before: recomputed);
- a task certificate whose protocol record names ``../``: refused before anything is read (before: exit 1, "cannot
  recompute", reported as a difference).

Each fails on the main branch before issue 58."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.export_fixtures import CHFCLBR_XYZ, SMALL
from tests.support.trust_probe import one_error, run, under
from viewcert.formats.records import sealed


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

    d = tmp_path_factory.mktemp("verify_checks")
    (d / "chfclbr.xyz").write_text(CHFCLBR_XYZ)
    build_task_benchmark(d / "chfclbr.xyz", d / "export", TaskExportSettings.from_options(task="zoom", seed=1, **SMALL))
    return d / "export"


def _copy(export: Path, tmp_path: Path) -> Path:
    shutil.copytree(export.parent, tmp_path / "t")
    return tmp_path / "t" / "export"


def test_a_task_export_verifies_as_it_is(export, tmp_path):
    """The baseline of the cases below: the export, copied, verifies byte-identical."""
    f = _copy(export, tmp_path)
    code, out, _ = run(["verify", str(f), "--inputs", str(f.parent), "--input", str(f.parent / "chfclbr.xyz"),
                          "--workers", "1"])
    assert code == 0 and "byte-identical" in out, out


def test_an_export_whose_manifest_is_a_future_format_is_refused(export, tmp_path):
    f = _copy(export, tmp_path)
    m = json.loads((f / "manifest.json").read_text())
    m["format"] = "viewcert.export/99"
    (f / "manifest.json").write_text(json.dumps(m))
    code, out, _ = run(["verify", str(f), "--inputs", str(f.parent), "--input", str(f.parent / "chfclbr.xyz"),
                          "--workers", "1"])
    err = one_error(out)
    assert code == 2 and "manifest.json" in err and "field format" in err and "viewcert.export/99" in err, out


def test_a_task_certificate_of_a_future_version_is_refused(export, tmp_path):
    f = _copy(export, tmp_path)
    cert = json.loads((f / "certificate.json").read_text())
    cert["version"] = 3
    (f / "c.json").write_text(json.dumps(sealed(cert)))
    code, out, _ = run(["verify", str(f / "c.json"), "--inputs", str(f.parent), "--input", str(f.parent / "chfclbr.xyz"),
                          "--workers", "1"])
    err = one_error(out)
    assert code == 2 and "field version" in err and "version '3'" in err, out


@pytest.mark.parametrize("protocol", ["../../outside", {"file": {"name": "../p.toml", "sha256": "0" * 64}}])
def test_a_task_certificate_naming_a_parent_path_is_refused_before_reading(export, tmp_path, protocol):
    f = _copy(export, tmp_path)
    cert = json.loads((f / "certificate.json").read_text())
    cert["settings"]["protocol"] = protocol
    (f / "c.json").write_text(json.dumps(sealed(cert)))
    (tmp_path / "p.toml").write_text("secret")
    code, out, seen = run(["verify", str(f / "c.json"), "--inputs", str(f.parent), "--input", str(f.parent / "chfclbr.xyz"),
                          "--workers", "1"])
    err = one_error(out)
    assert code == 2 and "settings.protocol" in err and "nothing read" in err, out
    assert under(seen, tmp_path / "p.toml") == []


def test_a_shard_with_an_extra_column_is_refused_by_verify_as_by_explore(tmp_path):
    out = tmp_path / "cert"
    code, said, _ = run(["certify", "builtin:prototypes", "--protocol", "axes-3", "--tiling", "1,1,1",
                         "--only-views", "front,top", "--workers", "1", "--item-table", "--out", str(out)])
    assert code == 0, said
    (shard,) = sorted((out / "items").glob("part-*.parquet"))
    table = pq.read_table(shard)
    meta = table.schema.metadata
    table = table.append_column("smuggled", pa.array(["x"] * table.num_rows)).replace_schema_metadata(meta)
    pq.write_table(table, shard, compression="zstd")
    for argv in (["verify", str(out), "--workers", "1"], ["explore", str(out), "--out", str(tmp_path / "site"),
                                                             "--workers", "1"]):
        code, said, _ = run(argv)
        err = one_error(said)
        assert code == 2 and "unknown column 'smuggled'" in err and shard.name in err, (argv, said)
