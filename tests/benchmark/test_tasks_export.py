"""Transformation-benchmark export (``viewcert.benchmark.tasks_export``) and its ``build-benchmark`` branch:
determinism, one common scale, answer formats, the certificate, one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.export_fixtures import SMALL, chiral_xyz, folder_files
from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark, common_scale
from viewcert.errors import InputError
from viewcert.formats.records import compute_digest
from viewcert.tasks.model import ViewSetup, make_item, task_grid
from viewcert.tasks.transforms import parse_command


@pytest.mark.parametrize("task", ["rotation", "handedness", "trans-rot"])
def test_same_seed_byte_identical(tmp_path, task):
    mol = chiral_xyz(tmp_path)
    s = TaskExportSettings.from_options(task=task, seed=7, per_structure=3, **SMALL)
    build_task_benchmark(mol, tmp_path / "a", s)
    build_task_benchmark(mol, tmp_path / "b", s)
    a, b = folder_files(tmp_path / "a"), folder_files(tmp_path / "b")
    assert sorted(a) == sorted(b) and len([k for k in a if k.endswith(".png")]) == 3 * 4
    assert all(a[k] == b[k] for k in a)
    c = build_task_benchmark(mol, tmp_path / "c", TaskExportSettings.from_options(task=task, seed=8, per_structure=3, **SMALL))
    truths_a = [json.loads(x)["answer"] for x in (tmp_path / "a" / "benchmark.jsonl").read_text().splitlines()]
    truths_c = [json.loads(x)["answer"] for x in (tmp_path / "c" / "benchmark.jsonl").read_text().splitlines()]
    assert c.n_questions == 3 and (truths_a != truths_c or task == "handedness")


def test_certificate_records_everything_and_its_digest(tmp_path):
    m = build_task_benchmark(chiral_xyz(tmp_path), tmp_path / "o", TaskExportSettings.from_options(task="zoom", seed=1, **SMALL))
    cert = json.loads((tmp_path / "o" / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert cert["format"] == "viewcert.tasks.certificate" and cert["version"] == 2
    assert cert["digest"]["value"] == compute_digest(cert) == m.manifest["certificate"]["digest"]
    assert cert["seed"] == 1 and cert["camera"] == "orthographic" and cert["protocol"]["name"] == "axes-3"
    assert cert["tolerances"]["delta_angstrom"] == 0.01 and cert["tolerances"]["intensity_eps"] == 1 / 255
    assert {"numpy", "numba", "python", "viewcert"} <= set(cert["libraries"])
    item = cert["items"][0]
    # zoom under an orthographic camera: every one of the 21 answers draws the same image (docs/tasks.md)
    assert item["n_consistent"] == 21 and item["exact_ceiling"] == pytest.approx(1 / 21)
    cert["seed"] = 2
    assert compute_digest(cert) != cert["digest"]["value"]


def test_common_scale_orthographic_and_perspective():
    rng = np.random.default_rng(4)
    pos, z = rng.uniform(-3, 3, (12, 3)) * [2.0, 1.0, 0.5], rng.choice([6, 7, 8], 12)
    it = common_scale(make_item("m", pos, z, "rotation", 0, ViewSetup.from_options(protocol="axes-6")))
    scales = {c.scale for c in it.cameras}
    assert len(scales) == 1
    # the common scale is the largest at which every view holds every atom inside the 5 % margin
    s, w, h = scales.pop(), it.setup.width, it.setup.height
    m = 0.05 * min(w, h)
    need = [min((w - 2 * m) / (2 * np.abs((pos - it.centre) @ c.rotation[0]).max()),
                (h - 2 * m) / (2 * np.abs((pos - it.centre) @ c.rotation[1]).max())) for c in it.cameras]
    assert s == pytest.approx(min(need), rel=1e-12)
    itp = common_scale(make_item("m", pos, z, "rotation", 0, ViewSetup(camera="perspective")))
    dists = [float(c.rotation[2] @ (c.position - itp.centre)) for c in itp.cameras]
    assert np.ptp(dists) < 1e-9 and len({c.focal for c in itp.cameras}) == 1


def test_answer_formats(tmp_path):
    mol = chiral_xyz(tmp_path)
    build_task_benchmark(mol, tmp_path / "r", TaskExportSettings.from_options(task="rotation", seed=3, per_structure=4, **SMALL))
    grid = task_grid("rotation")
    for line in (tmp_path / "r" / "benchmark.jsonl").read_text().splitlines():
        r = json.loads(line)
        assert r["answer_format"] == "command" and re.fullmatch(r"roll [xyz] -?\d+", r["answer"])
        assert parse_command(r["answer"]) in grid.answers and len(r["images"]) == 4
    build_task_benchmark(mol, tmp_path / "c", TaskExportSettings.from_options(task="rot-rot", seed=3, per_structure=4, **SMALL))
    grid = task_grid("rot-rot")
    for line in (tmp_path / "c" / "benchmark.jsonl").read_text().splitlines():
        r = json.loads(line)
        assert len(set(r["choices"])) == 4 and all(parse_command(c) in grid.answers for c in r["choices"])
        assert r["choices"][ord(r["answer_letter"]) - 65] == r["answer"]
    tsv = (tmp_path / "c" / "benchmark.tsv").read_text().splitlines()
    assert tsv[0].split("\t")[:8] == ["index", "image", "image_path", "question", "A", "B", "C", "D"]


def test_handedness_export_chiral_molecule_is_decided(tmp_path):
    m = build_task_benchmark(chiral_xyz(tmp_path), tmp_path / "h",
                             TaskExportSettings.from_options(task="handedness", seed=5, per_structure=6, **SMALL))
    cert = m.certificate.to_dict()
    recs = [json.loads(x) for x in (tmp_path / "h" / "benchmark.jsonl").read_text().splitlines()]
    for r, it in zip(recs, cert["items"], strict=True):
        assert r["choices"] == ["same", "mirror"] and r["answer"] == ("mirror" if it["mirror"] else "same")
        # chiral, no symmetry: the known structure + the after view decide (tests/tasks/test_tasks_handedness.py)
        assert it["consistent_choices"] == [r["answer"]] and it["choice_ceiling"] == 1.0
        assert it["one_view_witness_consistent"] is True


def test_settings_refuse_bad_values():
    for kw in ({"task": "spin"}, {"seed": -1}, {"seed": 1.5}, {"seed": True}, {"camera": "fisheye"},
               {"protocol": "render-ceiling-5"}, {"per_structure": 0}):
        with pytest.raises(InputError):
            TaskExportSettings.from_options(**kw)


def _cli(*args, cwd):
    exe = Path(sys.executable).parent / "viewcert"  # the installed console script: real stdout/stderr/exit code
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_cli_hostile_inputs_one_line(tmp_path):
    bad = tmp_path / "bad.xyz"
    bad.write_text("garbage\n")
    mol = chiral_xyz(tmp_path)
    cases = [[str(mol), "--task", "spin"], [str(mol), "--task", "rotation", "--seed", "-1"],
             [str(mol), "--task", "rotation", "--seed", "abc"], [str(bad), "--task", "handedness"],
             [str(mol), "--task", "zoom", "--camera", "fisheye"]]
    for k, args in enumerate(cases):
        r = _cli("build-benchmark", *args, "-o", str(tmp_path / f"o{k}"), cwd=tmp_path)
        assert r.returncode != 0, args
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
        assert r.stderr.startswith("viewcert: error:"), r.stderr


def test_cli_writes_a_benchmark(tmp_path):
    r = _cli("build-benchmark", str(chiral_xyz(tmp_path)), "--task", "translation", "--seed", "2", "-o",
             str(tmp_path / "o"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert re.match(r"1 translation questions in .*; exact ceiling 1\.0000, unique 1/1; certificate sha256:[0-9a-f]{64}",
                    r.stdout)
    assert (tmp_path / "o" / "images" / "q0000_v3.png").is_file()
