"""Transformation tasks with a protocol file or a ``Protocol`` object (issue 14, item 1, tasks part): the rule
"first view = front = the after camera", equal results to the named protocol, the full record, CLI errors."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.export_fixtures import SMALL, chiral_xyz, folder_files
from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark
from viewcert.cameras.protocol_files import write_protocol_file
from viewcert.cameras.protocols import Protocol, get_protocol
from viewcert.errors import InputError
from viewcert.tasks.model import ViewSetup, make_item


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_file_equal_to_axes3_gives_identical_results(tmp_path, suffix):
    mol = chiral_xyz(tmp_path)
    f = write_protocol_file(get_protocol("axes-3"), tmp_path / f"mine{suffix}")
    named = TaskExportSettings.from_options(task="rotation", seed=3, per_structure=2, **SMALL)
    filed = TaskExportSettings.from_options(task="rotation", seed=3, per_structure=2, protocol=str(f), **SMALL)
    build_task_benchmark(mol, tmp_path / "a", named)
    build_task_benchmark(mol, tmp_path / "b", filed)
    a, b = folder_files(tmp_path / "a"), folder_files(tmp_path / "b")
    assert sorted(a) == sorted(b)
    for k in a:  # images, questions, TSV: byte-identical
        if k.endswith((".png", ".jsonl", ".tsv")):
            assert a[k] == b[k], k
    ca = json.loads(a["certificate.json"])
    cb = json.loads(b["certificate.json"])
    # the consistent-answer sets and every ceiling, byte for byte
    assert json.dumps(ca["items"], sort_keys=True) == json.dumps(cb["items"], sort_keys=True)
    assert json.dumps(ca["summary"], sort_keys=True) == json.dumps(cb["summary"], sort_keys=True)
    rec = cb["protocol"]
    assert rec["name"] == "axes-3" and rec["views"] == ["front", "top", "left"] and rec["after_view"] == "front"
    assert rec["source"] == "file" and rec["file"]["name"] == f.name and "path" not in rec["file"]
    assert rec["file"]["sha256"] == hashlib.sha256(f.read_bytes()).hexdigest()  # the bytes as read
    for v, r in zip(get_protocol("axes-3").views, rec["rotations"], strict=True):
        assert np.array_equal(np.array(r), v.rotation)  # exact matrices
    assert ca["protocol"]["source"] == "builtin" and "file" not in ca["protocol"]
    assert cb["view_setup"]["protocol"]["file"]["sha256"] == rec["file"]["sha256"]
    assert cb["settings"]["protocol"] == str(f) and ca["settings"]["protocol"] == "axes-3"


def test_protocol_object_equals_its_name(tmp_path):
    pos = np.array([[0, 0, 0], [0.9, 0.7, 0.6], [-1.0, -0.8, 0.7], [-0.9, 1.1, -0.8]], dtype=float)
    z = np.array([6, 1, 9, 17])
    p6 = get_protocol("axes-6")
    own = Protocol("mine", tuple(p6.views), "axes-6 as an object")
    a = make_item("m", pos, z, "rotation", 5, ViewSetup.from_options(protocol="axes-6"))
    b = make_item("m", pos, z, "rotation", 5, ViewSetup.from_options(protocol=own))
    assert [c.name for c in b.cameras] == list(p6.view_names)
    for ca, cb in zip(a.cameras, b.cameras, strict=True):
        assert type(ca) is type(cb) and vars(ca).keys() == vars(cb).keys()
        for k, v in vars(ca).items():
            assert np.array_equal(np.asarray(v), np.asarray(vars(cb)[k])), k
    d = ViewSetup.from_options(protocol=own).to_dict()["protocol"]
    assert d["name"] == "mine" and d["source"] == "object" and len(d["rotations"]) == 6
    s = TaskExportSettings.from_options(protocol=own, **SMALL)
    assert s.to_dict()["protocol"]["views"] == list(p6.view_names)
    json.dumps(s.to_dict())  # serialisable


def test_first_view_must_be_front(tmp_path):
    p3 = get_protocol("axes-3")
    top_first = Protocol("top-first", (p3.views[1], p3.views[0], p3.views[2]))
    with pytest.raises(InputError, match=r"field views\[0\]\.name: .*must be named 'front', got 'top'"):
        ViewSetup.from_options(protocol=top_first)
    f = write_protocol_file(top_first, tmp_path / "tf.toml")
    with pytest.raises(InputError, match=r"tf\.toml, field views\[0\]\.name"):
        TaskExportSettings.from_options(protocol=str(f))
    for name in ("render-ceiling-5", "fibonacci-6"):
        with pytest.raises(InputError, match="views"):
            TaskExportSettings.from_options(protocol=name)


def _cli(*args, cwd):
    exe = Path(sys.executable).parent / "viewcert"  # the installed console script: real stdout/stderr/exit code
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_cli_bad_protocol_file_one_line(tmp_path):
    mol = chiral_xyz(tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text("[protocol]\nname = 'x'\n[[views]]\nname = 'front'\nrotation = [[1, 0, 0], [0, 1, 0]]\n")
    notoml = tmp_path / "broken.toml"
    notoml.write_text("[protocol\n")
    p3 = get_protocol("axes-3")
    tf = write_protocol_file(Protocol("tf", (p3.views[1], p3.views[0])), tmp_path / "tf.json")
    for k, f in enumerate((bad, notoml, tf, tmp_path / "missing.toml")):
        r = _cli("build-benchmark", str(mol), "--task", "rotation", "--protocol", str(f), "-o", str(tmp_path / f"o{k}"),
                 cwd=tmp_path)
        assert r.returncode != 0, f
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, (f, r.stderr)
        assert r.stderr.startswith("viewcert: error:") and f.name in r.stderr, r.stderr
    good = write_protocol_file(p3, tmp_path / "good.toml")
    r = _cli("build-benchmark", str(mol), "--task", "rotation", "--protocol", str(good), "-o", str(tmp_path / "g"),
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    cert = json.loads((tmp_path / "g" / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert cert["protocol"]["file"]["sha256"] == hashlib.sha256(good.read_bytes()).hexdigest()
