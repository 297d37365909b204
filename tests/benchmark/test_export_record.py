"""One export record (``viewcert.formats.export``, issue 26 item 5): the four exporters write one manifest shape
(``viewcert.export/1``) and return it as one ``Export``; every older manifest is read through the version table
(a real one of each, written by the code before ``/1``, in ``tests/data/exports/v1/``; the writing machine's absolute
input paths since made relative: the molecule's ``location`` (outside the digest) and the task's ``input``, its
certificate's digest and the manifest's record of it updated to match); the certificate is the
typed record (format and digest checked); a manifest that is missing, malformed, of an unknown format or beside a
stale certificate is one line."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.export_fixtures import SMALL, WATER_XYZ, chiral_xyz, export_cli
from viewcert.benchmark.export import ExportSettings, build_benchmark
from viewcert.benchmark.molecule_export import MoleculeExportSettings, build_molecule_benchmark
from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark
from viewcert.errors import InputError
from viewcert.formats.export import (
    EXPORT_FORMAT,
    MANIFEST_BEGIN,
    MANIFEST_END,
    MANIFEST_FORMATS,
    Export,
    ExportManifest,
    manifest_markdown,
    read_export,
)
from viewcert.formats.records import (
    CeilingCertificate,
    ExportSettingsRecord,
    InteractionCertificate,
    StaleCertificate,
    TaskCertificate,
    compute_digest,
    sealed,
)

V1 = Path(__file__).parents[1] / "data" / "exports" / "v1"
FORMATS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "formats.md"


@pytest.fixture(scope="module")
def water(tmp_path_factory):
    d = tmp_path_factory.mktemp("water")
    (d / "in").mkdir()
    (d / "in" / "water.xyz").write_text(WATER_XYZ)
    m = build_molecule_benchmark(str(d / "in"), d / "out", MoleculeExportSettings.from_options(task="point-group", size=64,
                                                                                   supersample=1))
    return d, m


def test_a_molecule_export_is_one_export_and_reads_back_as_it(water):
    d, m = water
    assert isinstance(m, Export) and read_export(d / "out") == m  # the builder's value is the reader's
    assert (m.kind, m.task, m.n_questions) == ("molecule", "point-group", 1)
    assert isinstance(m.certificate, CeilingCertificate) and m.certificate.summary.n == 1
    written = json.loads((d / "out" / "manifest.json").read_text())
    assert written["format"] == EXPORT_FORMAT and list(written) == sorted(ExportManifest.model_fields)  # every field, no other
    # the settings typed (issue 41), the manifest's object given back by to_dict
    assert isinstance(m.settings, ExportSettingsRecord) and m.settings.to_dict() == written["settings"]
    assert (m.settings.task, m.settings.size, m.settings.supersample) == ("point-group", 64, 1)  # as built above
    # the manifest's certificate entry is the certificate's own format, digest and counts
    cert = json.loads((d / "out" / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert written["certificate"] == {"path": "certificate.json", "format": "viewcert-certificate/3",
                                      "digest": compute_digest(cert), "level": "point_group", "observe": "visible",
                                      "summary": {"n": 1, "correct": cert["summary"]["correct"],
                                                  "R1": cert["summary"]["R1"]}}
    assert m.images == ("images/q0000_v0.png", "images/q0000_v1.png", "images/q0000_v2.png")  # axes-3
    assert {"benchmark.jsonl", "benchmark.tsv", "ids.csv", "inspect_task.py", "HARNESSES.md"} <= set(m.harness_files)
    assert not any(f.endswith(".png") or f.startswith("certificate") for f in m.harness_files)
    assert [it["answer"] for it in m.items] == ["C2v"] and m.errors == () and m.skipped == ()


def test_a_task_and_an_uncertified_crystal_export(tmp_path):
    t = build_task_benchmark(str(chiral_xyz(tmp_path)), tmp_path / "t", TaskExportSettings.from_options(task="translation",
                                                                                          **SMALL))
    assert read_export(tmp_path / "t") == t
    assert (t.kind, t.task, t.n_questions) == ("task", "translation", 1)
    assert isinstance(t.certificate, TaskCertificate) and t.certificate.item_ids() == ["q0000"]
    q = json.loads((tmp_path / "t" / "benchmark.jsonl").read_text())
    assert t.items == ({"id": "q0000", "index": 0, "source_id": q["source_id"], "answer": q["answer"]},)
    assert t.images == tuple(f"images/q0000_v{k}.png" for k in range(4))  # three before views and the after view
    c = build_benchmark("builtin:sample", tmp_path / "c", settings=ExportSettings.from_options(size=64, supersample=1), limit=1,
                        certify=False)
    assert (c.kind, c.task, c.n_questions, c.certificate) == ("crystal", "crystal-system", 1, None)
    assert len(c.images) == 5 and read_export(tmp_path / "c") == c  # render-ceiling-5


def test_a_handedness_export_lists_the_achiral_molecule_as_skipped(tmp_path):
    (tmp_path / "in").mkdir()
    chiral_xyz(tmp_path / "in")
    (tmp_path / "in" / "water.xyz").write_text(WATER_XYZ)
    e = build_task_benchmark(str(tmp_path / "in"), tmp_path / "h", TaskExportSettings.from_options(task="handedness", **SMALL))
    # water is C2v (a mirror plane): the same skipped record, {id, reason}, as a molecule export's
    assert [x["id"] for x in e.skipped] == ["water"] and e.skipped[0]["reason"].startswith("achiral: point group C2v")
    assert e.n_questions == 1 and [it["source_id"] for it in e.items] == ["chfclbr"]


@pytest.mark.parametrize("kind", ["crystal", "molecule", "task", "interaction"])
def test_each_older_manifest_reads_through_the_version_table(kind):
    written = json.loads((V1 / kind / "manifest.json").read_text())
    cert = json.loads((V1 / kind / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert MANIFEST_FORMATS[written["format"]][0] == kind
    e = read_export(V1 / kind)
    assert e.kind == kind and e.manifest == written and e.certificate.digest_value == compute_digest(cert)
    assert e.n_questions == 1 and e.harness_files == ()  # the older shapes did not list them
    # what each older shape recorded (the fixtures' own files: one question, images by their names)
    want = {"crystal": ("crystal-system", 5, CeilingCertificate), "molecule": ("point-group", 3, CeilingCertificate),
            "task": ("translation", 4, TaskCertificate), "interaction": ("pocket-ligand", 6, InteractionCertificate)}
    task, n_images, typed = want[kind]
    assert (e.task, len(e.images), type(e.certificate)) == (task, n_images, typed)
    assert e.settings.task == task  # interaction: the certificate's settings (its manifest recorded none)
    assert [it["id"] for it in e.items] == ([written["items"][0]["id"]] if kind in ("crystal", "molecule")
                                            else ["q0000"])


def _older_build(kind: str, tmp: Path) -> Export:
    """The export each ``tests/data/exports/v1`` fixture was written from (the same inputs and settings)."""
    if kind == "crystal":
        return build_benchmark("builtin:sample", tmp, settings=ExportSettings.from_options(size=64, supersample=1), limit=1)
    if kind == "molecule":
        (tmp.parent / "in").mkdir()
        (tmp.parent / "in" / "water.xyz").write_text(WATER_XYZ)
        return build_molecule_benchmark(str(tmp.parent / "in"), tmp, MoleculeExportSettings.from_options(task="point-group",
                                                                                              size=64, supersample=1))
    if kind == "task":
        return build_task_benchmark(str(chiral_xyz(tmp.parent)), tmp, TaskExportSettings.from_options(task="translation", **SMALL))
    pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")
    from viewcert.benchmark.interaction_export import InteractionExportSettings, build_interaction_benchmark

    return build_interaction_benchmark([(Path(__file__).parents[1] / "data" / "uncertain" / "eoh_asp.pdb", "EOH")], tmp,
                                       InteractionExportSettings.from_options(n_boot=50, width=160, height=120))


def _arms(name: str) -> bool:
    """A harness file issue 39 rewrote, added or dropped (the arms: tasks, TSVs, steps, dry-run manifests)."""
    return name in ("HARNESSES.md", "inspect_task.py") or name.startswith(("lmms_eval/", "benchmark_",
                                                                              "ladder_dry_run"))


@pytest.mark.parametrize("kind", ["crystal", "molecule", "task", "interaction"])
def test_only_the_manifest_changed_shape(tmp_path, kind):
    # regression pin: the digests are the ones the code before viewcert.export/1 recorded in the fixtures'
    # manifests, on another CPU than this suite's usually runs on; every file but the manifest, the certificate
    # and the sidecars is byte-identical: the images and prompts (the renderer gives the same pixels on both
    # CPUs). The certificate changed format since (/3, issue 37: every float at its stated resolution, so its
    # table of items too; molecule, task: it also records where the input was read), and a sidecar's camera is
    # written at those resolutions (it held the framing's raw floats). (issue 39: the harness files changed on
    # purpose, every arm a harness task; their content is tested in tests/benchmark/test_export_arms_ladder.py, so they
    # are left out of the pin)
    old = {f: d for f, d in json.loads((V1 / kind / "manifest.json").read_text())["files"].items() if not _arms(f)}
    new = _older_build(kind, tmp_path / "out")
    files = {f: d for f, d in new.manifest["files"].items() if not _arms(f)}
    changed = {"certificate.json", "certificate_items.csv"} & set(old) | {f for f in old if f.startswith("sidecars/")}
    # issue 40: new, beside each image of an interaction export; issue 55: beside a task's after view
    added = {f for f in files if kind in ("interaction", "task") and f.startswith("sidecars/")}
    assert set(files) - added == set(old) and (kind != "interaction" or len(added) == 6)
    assert kind != "task" or added == {f"sidecars/{Path(p).stem}.json" for p in files if p.endswith("_v3.png")}
    assert {f for f in old if files[f] != old[f]} == changed
    assert sum(f.endswith(".png") for f in set(old) - changed) >= 3
    assert new.manifest["format"] == EXPORT_FORMAT and new.kind == kind


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
    good = json.loads((d / "out" / "manifest.json").read_text())
    for edit, match in (({"kind": "protein"}, "kind must be one of"), ({"items": "q0000"}, "items must be a list"),
                        ({"certificate": {"path": "../certificate.json"}}, "must be null or name certificate.json"),
                        ({"certificate": None, "settings": {"ceiling": 3}}, "settings.ceiling must be an object"),
                        ({"certificate": None, "settings": {"constraints": "x"}}, "constraints must be a list")):
        (tmp_path / "manifest.json").write_text(json.dumps({**good, **edit}))
        with pytest.raises(InputError, match=match) as exc:
            read_export(tmp_path)
        assert exc.value.source == str(tmp_path / "manifest.json")
    stale = tmp_path / "stale"
    stale.mkdir()
    (stale / "manifest.json").write_bytes((d / "out" / "manifest.json").read_bytes())
    cert = json.loads((d / "out" / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    cert["summary"]["correct"] = 0  # edited after it was written: the digest no longer holds
    (stale / "certificate.json").write_text(json.dumps(cert))
    with pytest.raises(StaleCertificate, match="stale certificate"):
        read_export(stale)
    # a certificate with a valid digest of its own, but not the one the manifest records
    (stale / "certificate.json").write_text(json.dumps(sealed(cert)))
    with pytest.raises(InputError, match="not the certificate this export wrote"):
        read_export(stale)


def test_an_older_task_manifest_beside_another_certificate_is_refused(tmp_path):
    shutil.copytree(V1 / "task", tmp_path / "t")
    cert = json.loads((tmp_path / "t" / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    cert["seed"] = 99
    (tmp_path / "t" / "certificate.json").write_text(json.dumps(sealed(cert)))
    with pytest.raises(InputError, match="not the certificate this export wrote"):
        read_export(tmp_path / "t")


def test_the_formats_page_holds_the_generated_manifest_section():
    text = FORMATS_PAGE.read_text()
    section = text[text.index(MANIFEST_BEGIN): text.index(MANIFEST_END) + len(MANIFEST_END)] + "\n"
    assert section == manifest_markdown(), "docs/formats.md: paste viewcert.formats.export.manifest_markdown()"
    assert all(f"| `{k}` |" in section for k in ExportManifest.model_fields) and all(f"`{f}`" in section for f in MANIFEST_FORMATS)


def test_the_cli_line_reads_the_export(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "water.xyz").write_text(WATER_XYZ)
    r = CliRunner().invoke(export_cli(), ["build-benchmark", str(tmp_path / "in"), "--task", "point-group",
                                          "--size", "64", "-o", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    cert = json.loads((tmp_path / "out" / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    s = cert["summary"]
    want = (f"1 point-group questions in {tmp_path / 'out'} (0 without a question, e.g. achiral; 0 unreadable or "
            f"not molecules); ceiling (point_group) {s['correct']}/1, certificate sha256:{compute_digest(cert)}")
    assert want in " ".join(r.output.split()) and re.search(r"sha256:[0-9a-f]{64}", r.output)
