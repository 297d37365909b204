"""build-benchmark for molecules (viewcert.benchmark.molecule_export): point-group and handedness questions,
images at one scale, JSONL + VLMEvalKit TSV, the certificate; byte-identical reruns; hostile inputs."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.export_fixtures import WATER_XYZ as WATER
from viewcert.benchmark.molecule_export import (
    HANDEDNESS_CHOICES,
    MoleculeExportSettings,
    build_molecule_benchmark,
    mirror_x,
)
from viewcert.errors import InputError
from viewcert.structures import Structure

# water, HOH angle 104.5°, O–H 0.9572 Å, in the xy plane: C2v (chemistry)
# CHBrClF, a tetrahedral carbon with four different substituents: C1, chiral (chemistry)
CHBRCLF = ("5\nbromochlorofluoromethane\nC 0.000 0.000 0.000\nH 0.629 0.629 0.629\nBr -1.114 -1.114 1.114\n"
           "Cl 1.019 -1.019 -1.019\nF -0.780 0.780 -0.780\n")
SMALL = {"size": 64, "supersample": 1}


def folder(tmp_path: Path, **files: str) -> str:
    d = tmp_path / "in"
    d.mkdir(exist_ok=True)
    for name, text in files.items():
        (d / f"{name}.xyz").write_text(text)
    return str(d)


def files_of(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def test_water_point_group_question_and_answer(tmp_path):
    spec = folder(tmp_path, water=WATER)
    m = build_molecule_benchmark(spec, tmp_path / "out", MoleculeExportSettings.from_options(task="point-group", **SMALL))
    assert m.n_questions == 1 and m.errors == ()
    (q,) = [json.loads(line) for line in (tmp_path / "out" / "benchmark.jsonl").read_text().splitlines()]
    assert q["source_id"] == "water" and q["answer"] == "C2v"
    # choices C1, Cs, Ci, C2, C3, S4, C2v, …: C2v is the 7th, letter G
    assert q["choices"][:7] == ["C1", "Cs", "Ci", "C2", "C3", "S4", "C2v"] and q["answer_letter"] == "G"
    assert q["images"] == ["images/q0000_v0.png", "images/q0000_v1.png", "images/q0000_v2.png"]
    assert "front, top, left" in q["question"] and "point group" in q["question"]
    (row,) = list(csv.DictReader(io.StringIO((tmp_path / "out" / "benchmark.tsv").read_text()), delimiter="\t"))
    assert row["answer"] == "G" and row["G"] == "C2v" and row["category"] == "C2v"  # category: the true label (issue 20)
    assert len(json.loads(row["image"])) == 3
    # one common scale across the three views (sidecars)
    scales = {json.loads((tmp_path / "out" / "sidecars" / f"q0000_v{k}.json").read_text())["camera"]
              ["scale_px_per_angstrom"] for k in range(3)}
    assert len(scales) == 1
    cert = json.loads((tmp_path / "out" / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert cert["summary"]["n"] == 1 and m.manifest["certificate"]["level"] == "point_group"
    assert cert["items"][0]["molecule"]["point_group"]["input"] == "C2v"


def test_handedness_question_shows_mirror_by_hash_and_skips_achiral(tmp_path):
    spec = folder(tmp_path, water=WATER, chbrclf=CHBRCLF)
    m = build_molecule_benchmark(spec, tmp_path / "out", MoleculeExportSettings.from_options(task="molecule-handedness", **SMALL))
    assert m.n_questions == 1
    assert m.errors == () and [e["id"] for e in m.skipped] == ["water"]
    assert m.skipped[0]["reason"].startswith("achiral within τ = 0.01 Å (C2v)")
    mirrored = bool(hashlib.sha256(b"chbrclf/mirror").digest()[0] & 1)  # the rule, from the module docstring
    (q,) = [json.loads(line) for line in (tmp_path / "out" / "benchmark.jsonl").read_text().splitlines()]
    assert q["answer"] == HANDEDNESS_CHOICES[int(mirrored)] and q["answer_letter"] == "AB"[int(mirrored)]
    assert "Br -1.1140 -1.1140 1.1140" in q["question"]  # the reference geometry is given
    # the shown molecule: the front sidecar's Br pixel is mirrored about the image centre (x → −x) or not
    side = json.loads((tmp_path / "out" / "sidecars" / "q0000_v0.json").read_text())
    br = [a for a in side["atoms"] if a["element"] == "Br"][0]
    assert (br["uv"][0] > 32) == mirrored  # Br at x = −1.114 < centre: left of centre unless mirrored
    cert = json.loads((tmp_path / "out" / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert m.manifest["certificate"]["level"] == "handedness" and cert["summary"]["n"] == 1


def test_mirror_x_hand_worked():
    s = Structure(np.array([[0.0, 0.0, 0.0], [2.0, 1.0, 0.0], [3.0, 0.0, 1.0]]), np.array([6, 7, 8]))
    np.testing.assert_allclose(mirror_x(s).positions, [[3.0, 0, 0], [1.0, 1, 0], [0.0, 0, 1]])  # x → 3 − x


def test_rerun_is_byte_identical(tmp_path):
    spec = folder(tmp_path, water=WATER, chbrclf=CHBRCLF)
    for task in ("point-group", "molecule-handedness"):
        a, b = tmp_path / f"{task}-a", tmp_path / f"{task}-b"
        for out in (a, b):
            build_molecule_benchmark(spec, out, MoleculeExportSettings.from_options(task=task, **SMALL))
        fa, fb = files_of(a), files_of(b)
        assert sorted(fa) == sorted(fb) and all(fa[k] == fb[k] for k in fa), task
        assert "manifest.json" in fa and "certificate.json" in fa


def test_bad_settings_raise_input_error():
    with pytest.raises(InputError, match="task"):
        MoleculeExportSettings.from_options(task="crystal-system")
    with pytest.raises(InputError, match="tau"):
        MoleculeExportSettings.from_options(tau=-1.0)


def test_cli_hostile_inputs_one_line(tmp_path):
    from viewcert.cli import app

    spec = folder(tmp_path, water=WATER, broken="2\nbroken\nO 0 0 0\nH not-a-number 0 0\n", dup="2\ndup\nC 0 0 0\nC 0 0 0\n")
    runner = CliRunner()
    r = runner.invoke(app, ["build-benchmark", spec, "--task", "point-group", "-o", str(tmp_path / "o"),
                            "--size", "64", "--no-certify"])
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output
    errs = [ln for ln in r.output.splitlines() if ln.startswith("viewcert: item error: item ")]
    assert sorted(e.split()[4].rstrip(":") for e in errs) == ["broken", "dup"]
    assert "1 point-group questions" in r.output
    r = runner.invoke(app, ["build-benchmark", "builtin:aflow:AB_cF8_225_a_b", "--task", "point-group",
                            "-o", str(tmp_path / "c"), "--size", "64", "--no-certify"])
    assert r.exit_code == 1 and "a crystal is not a molecule" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["build-benchmark", spec, "--task", "point-groups", "-o", str(tmp_path / "x")])
    assert r.exit_code == 2 and "task must be one of" in r.output and "Traceback" not in r.output
