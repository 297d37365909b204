"""Outputs do not mix (issue 38, class 5) and a missing harness is one line (class 6).

- ``viewcert.io.outputs.claimed``: an export into a folder holding an earlier export removes exactly the files
  that export's manifest lists, and nothing else; a folder holding anything else (a certify output, a file no
  manifest lists) is refused before anything is removed; certify refuses a folder holding an export, explore a
  folder holding either; a second writer into a folder being written is refused by the lock.
- The VLMEvalKit dry-run command of HARNESSES.md without VLMEvalKit installed: one line naming the package,
  exit 2, no ``ModuleNotFoundError`` traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.trust_probe import one_error, run
from viewcert.errors import InputError
from viewcert.io.outputs import LOCK, claimed


def _export_folder(out: Path, names: list[str]) -> None:
    """A folder as an export leaves it: the files and a manifest listing them (``files``: name -> SHA-256)."""
    for name in names:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(name)
    (out / "manifest.json").write_text(json.dumps({"format": "viewcert.export/1", "files": {n: "0" * 64
                                                                                           for n in names}}))


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_an_earlier_exports_listed_files_and_only_they_are_removed(tmp_path):
    out = tmp_path / "out"
    old = ["benchmark.jsonl", "images/q0000_v0.png", "images/q0001_v0.png", "lmms_eval/utils.py"]
    _export_folder(out, old)
    (out / ".shards").mkdir()
    (out / ".shards" / "s.json").write_text("{}")  # hidden: viewcert's own resumable state, kept
    with pytest.raises(InputError, match=r"holds an earlier export \(manifest.json\); --force replaces it"):
        with claimed(out, "export"):  # another run's export: refused without --force, nothing removed
            pass
    assert _files(out) == sorted([*old, ".shards/s.json", LOCK, "manifest.json"])
    with claimed(out, "export", force=True) as claim:
        assert claim.removed == sorted(old + ["manifest.json"])
        assert _files(out) == [".shards/s.json", LOCK]
        assert not (out / "images").exists() and not (out / "lmms_eval").exists()


@pytest.mark.parametrize("kind", ["certify-output", "unlisted-file", "not-a-manifest"])
def test_an_export_into_a_folder_holding_anything_else_is_refused_and_nothing_removed(tmp_path, kind):
    out = tmp_path / "out"
    out.mkdir()
    if kind == "certify-output":
        for name in ("certificate.json", "items.csv", "summary.txt"):
            (out / name).write_text("x")
        want = "a certify output or an export (certificate.json)"
    elif kind == "unlisted-file":
        _export_folder(out, ["benchmark.jsonl"])
        (out / "notes.txt").write_text("mine")
        want = "1 file(s) its earlier export does not list (notes.txt)"
    else:
        (out / "manifest.json").write_text("[]")
        want = "not an export's"
    before = _files(out)
    with pytest.raises(InputError, match=want.replace("(", r"\(").replace(")", r"\)")) as e:
        with claimed(out, "export"):
            pass
    assert e.value.field == "--out" and _files(out) == sorted(before + [LOCK])


def test_certify_and_explore_refuse_a_folder_holding_another_output(tmp_path):
    export = tmp_path / "export"
    export.mkdir()
    _export_folder(export, ["benchmark.jsonl"])
    for kind in ("certify", "site"):
        with pytest.raises(InputError, match="the output folder holds an export"):
            with claimed(export, kind):
                pass
    cert = tmp_path / "cert"
    cert.mkdir()
    (cert / "certificate.json").write_text("{}")
    with pytest.raises(InputError, match="certify output or an export"):
        with claimed(cert, "site", force=True):  # another command's output: --force or not
            pass
    with pytest.raises(InputError, match=r"an earlier certify output \(certificate.json\); --force replaces"):
        with claimed(cert, "certify"):  # another certify run's output (written before run records): refused
            pass
    (cert / "notes.txt").write_text("mine")
    with claimed(cert, "certify", force=True) as claim:  # --force: its own files removed, nothing else
        assert claim.removed == ["certificate.json"]
    assert _files(cert) == [".viewcert.lock", ".viewcert.run.json", "notes.txt"]


def test_a_second_writer_is_refused_by_the_lock_in_one_line(tmp_path):
    """While one run holds OUT (the lock), build-benchmark, certify and explore into OUT exit 2 before any work;
    once it ends, the folder is free."""
    out = tmp_path / "out"
    src = tmp_path / "src"
    src.mkdir()
    (src / "certificate.json").write_text("{}")
    commands = (["build-benchmark", "builtin:prototypes", "--task", "crystal-system", "--limit", "1", "--out", str(out)],
                ["certify", "builtin:prototypes", "--out", str(out)],
                ["explore", str(src), "--out", str(out)])
    with claimed(out, "export"):
        for argv in commands:
            code, output, _ = run(argv)
            err = one_error(output)
            assert code == 2 and "another viewcert run is writing into this folder" in err and "--out" in err, output
    with claimed(out, "export") as claim:
        assert claim.removed == []


def test_the_vlmevalkit_dry_run_without_vlmevalkit_is_one_line(tmp_path):
    """The command HARNESSES.md ships (``python -m viewcert.harness.vlmevalkit_replay --replay ...``), with the
    module ``vlmeval`` made unimportable: one line naming the package to install, exit 2."""
    (tmp_path / "dry_run_answers.jsonl").write_text('{"id": "q0000", "answer": "A"}\n')
    code = ("import runpy, sys; sys.modules['vlmeval'] = None; "  # None in sys.modules: ModuleNotFoundError
            "sys.argv = ['x', '--replay', 'dry_run_answers.jsonl', '--data', 'ViewcertCrystalSystem', "
            "'--model', 'viewcert-replay']; runpy.run_module('viewcert.harness.vlmevalkit_replay', run_name='__main__')")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                        os.environ.get("PYTHONPATH", "")])}
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env=env)
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "pip install ms-vlmeval" in res.stderr and "vlmeval" in res.stderr
