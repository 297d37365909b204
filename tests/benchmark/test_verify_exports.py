"""``viewcert verify`` on the export certificates (issue 26): a zoom export's and a pocket-ligand export's
certificate verify clean (exit 0); one item's answer set (zoom) or one bond (pocket-ligand) edited with the
digest recomputed is reported as a difference naming it (exit 1); the digest left stale is one line (exit 2)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.support.complex_data import COMPLEXES, needs_complexes
from tests.support.export_fixtures import SMALL, chiral_xyz, export_cli
from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark
from viewcert.formats.records import sealed


def _verify(app, cert, root, *extra):
    return CliRunner().invoke(app, ["verify", str(cert), "--inputs", str(root), *extra])


def test_zoom_certificate_verifies_and_an_edited_answer_set_does_not(tmp_path):
    app = export_cli()
    build_task_benchmark(chiral_xyz(tmp_path), tmp_path / "o", TaskExportSettings.from_options(task="zoom", seed=1, **SMALL))
    path = tmp_path / "o" / "certificate.json"
    res = _verify(app, path, tmp_path)
    assert res.exit_code == 0, res.output
    assert "verified: 1 items recomputed, byte-identical" in res.output
    cert = json.loads(path.read_text())
    item = cert["items"][0]
    # zoom through an orthographic camera: all 21 answers draw the same image (docs/tasks.md); claim one fewer
    assert item["n_consistent"] == 21
    item["consistent"] = item["consistent"][1:]
    item["n_consistent"] = 20
    (tmp_path / "edited.json").write_text(json.dumps(sealed(cert)))
    res = _verify(app, tmp_path / "edited.json", tmp_path)
    assert res.exit_code == 1, res.output
    assert "digest: ok" in res.output and "item q0000: n_consistent: certificate 20 vs recomputed 21" in res.output
    assert "item q0000: consistent" in res.output and "1 of 1 items differ" in res.output
    (tmp_path / "stale.json").write_text(json.dumps(cert))  # edited, digest left as written
    res = _verify(app, tmp_path / "stale.json", tmp_path)
    assert res.exit_code == 2 and "stale certificate" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_zoom_certificate_input_outside_the_trusted_folder_is_refused(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "trusted").mkdir()
    build_task_benchmark(chiral_xyz(tmp_path / "in"), tmp_path / "trusted" / "o",
                         TaskExportSettings.from_options(task="zoom", seed=1, **SMALL))
    res = _verify(export_cli(), tmp_path / "trusted" / "o" / "certificate.json", tmp_path / "trusted")
    assert res.exit_code == 2 and "outside the trusted folder" in res.output


@needs_complexes
def test_pocket_ligand_certificate_verifies_and_an_edited_bond_does_not(tmp_path):
    pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")
    from viewcert.benchmark.interaction_export import InteractionExportSettings, build_interaction_benchmark

    app = export_cli()
    m = build_interaction_benchmark([(COMPLEXES / "1pwc", "PNM")], tmp_path / "o",
                                    InteractionExportSettings.from_options(task="pocket-ligand", n_boot=200))
    path = tmp_path / "o" / "certificate.json"
    cert = json.loads(path.read_text())
    assert cert["format"] == "viewcert-interaction-benchmark/3" and m.manifest["certificate"]["digest"] == cert["digest"]["value"]
    assert cert["complexes"][0]["name"] == "1pwc" and cert["complexes"][0]["ligand"] == "PNM"
    res = _verify(app, path, COMPLEXES)
    assert res.exit_code == 0, res.output
    assert "verified: 1 items recomputed, byte-identical" in res.output
    bond = cert["ground_truth"]["1pwc:PNM"]["bonds"][0]
    key = next(k for k, v in bond.items() if isinstance(v, float))
    bond[key] = round(bond[key] + 0.5, 6)
    (tmp_path / "edited.json").write_text(json.dumps(sealed(cert)))
    res = _verify(app, tmp_path / "edited.json", COMPLEXES)
    assert res.exit_code == 1, res.output
    assert f"ground_truth.1pwc:PNM.bonds[0].{key}: certificate" in res.output
    (tmp_path / "stale.json").write_text(json.dumps(cert))
    res = _verify(app, tmp_path / "stale.json", COMPLEXES)
    assert res.exit_code == 2 and "stale certificate" in res.output
    assert len(res.output.strip().splitlines()) == 1
