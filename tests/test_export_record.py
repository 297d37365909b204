"""One export record (``viewcert.benchmark.record``, issue 26 item 5): every exporter's manifest is decoded by
one reader through one version table into an ``Export`` whose certificate is the typed record (format and
digest checked); a manifest that is missing, of an unknown format or beside a stale certificate is one line."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from export_fixtures import SMALL, WATER_XYZ, chiral_xyz, export_cli
from viewcert.benchmark.export import ExportSettings, build_benchmark
from viewcert.benchmark.molecule_export import MoleculeExportSettings, build_molecule_benchmark
from viewcert.benchmark.record import MANIFEST_FORMATS, read_export
from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark
from viewcert.certify.records import (
    StaleCertificate,
    TaskCertificate,
    ViewCertificate,
    compute_digest,
    sealed,
)
from viewcert.errors import InputError


@pytest.fixture(scope="module")
def water(tmp_path_factory):
    d = tmp_path_factory.mktemp("water")
    (d / "in").mkdir()
    (d / "in" / "water.xyz").write_text(WATER_XYZ)
    m = build_molecule_benchmark(str(d / "in"), d / "out", MoleculeExportSettings(task="point-group", size=64,
                                                                                   supersample=1))
    return d, m


def test_a_molecule_export_reads_back_as_one_export(water):
    d, m = water
    e = read_export(d / "out")
    assert (e.kind, e.task, e.n_questions) == ("molecule", "point-group", 1)
    assert isinstance(e.certificate, ViewCertificate) and e.certificate.summary.n == 1
    # the manifest's certificate entry is the certificate's own digest and counts (certificate_entry)
    cert = json.loads((d / "out" / "certificate.json").read_text())
    assert m["certificate"] == {"status": "written", "path": "certificate.json", "digest": compute_digest(cert),
                                "level": "point_group", "observe": "visible",
                                "summary": {"n": 1, "correct": cert["summary"]["correct"],
                                            "R1": cert["summary"]["R1"]}}
    assert e.images == ("images/q0000_v0.png", "images/q0000_v1.png", "images/q0000_v2.png")  # axes-3
    assert [it["answer"] for it in e.items] == ["C2v"] and e.errors == () and e.skipped == ()


def test_a_task_and_an_uncertified_crystal_export(tmp_path):
    build_task_benchmark(str(chiral_xyz(tmp_path)), tmp_path / "t", TaskExportSettings(task="translation", **SMALL))
    t = read_export(tmp_path / "t")
    assert (t.kind, t.task, t.n_questions) == ("task", "translation", 1)
    assert isinstance(t.certificate, TaskCertificate) and [it.id for it in t.items] == ["q0000"]
    build_benchmark("builtin:sample", tmp_path / "c", settings=ExportSettings(size=64, supersample=1), limit=1,
                    certify=False)
    c = read_export(tmp_path / "c")
    assert (c.kind, c.task, c.n_questions, c.certificate) == ("crystal", "crystal-system", 1, None)
    assert len(c.images) == 5  # render-ceiling-5
    assert set(MANIFEST_FORMATS.values()) == {"crystal", "molecule", "task", "interaction"}


def test_bad_manifests_are_one_line(tmp_path, water):
    d, _ = water
    with pytest.raises(InputError, match="manifest"):
        read_export(tmp_path)  # no manifest.json
    (tmp_path / "manifest.json").write_text('{"format": "viewcert.benchmark/9"}')
    with pytest.raises(InputError, match="not a viewcert export manifest"):
        read_export(tmp_path)
    (tmp_path / "manifest.json").write_text('{"format": 1, "format": 2}')
    with pytest.raises(InputError, match="format"):
        read_export(tmp_path)  # duplicate key
    stale = tmp_path / "stale"
    stale.mkdir()
    (stale / "manifest.json").write_bytes((d / "out" / "manifest.json").read_bytes())
    cert = json.loads((d / "out" / "certificate.json").read_text())
    cert["summary"]["correct"] = 0  # edited after it was written: the digest no longer holds
    (stale / "certificate.json").write_text(json.dumps(cert))
    with pytest.raises(StaleCertificate, match="stale certificate"):
        read_export(stale)
    # a certificate with a valid digest of its own, but not the one the manifest records
    (stale / "certificate.json").write_text(json.dumps(sealed(cert)))
    with pytest.raises(InputError, match="not the certificate this export wrote"):
        read_export(stale)


def test_the_cli_line_reads_the_export(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "water.xyz").write_text(WATER_XYZ)
    r = CliRunner().invoke(export_cli(), ["build-benchmark", str(tmp_path / "in"), "--task", "point-group",
                                          "--size", "64", "-o", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    cert = json.loads((tmp_path / "out" / "certificate.json").read_text())
    s = cert["summary"]
    want = (f"1 point-group questions in {tmp_path / 'out'} (0 without a question, e.g. achiral; 0 unreadable or "
            f"not molecules); ceiling (point_group) {s['correct']}/1, certificate sha256:{compute_digest(cert)}")
    assert want in " ".join(r.output.split()) and re.search(r"sha256:[0-9a-f]{64}", r.output)
