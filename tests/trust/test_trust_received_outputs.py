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


# ---------------------------------------------------------------- issue 57, item 6: one layout, one run per folder

def test_every_command_writes_under_out_slash_its_name_by_default():
    """One default layout: a command's --out defaults to out/<command> (gallery: the file out/gallery.png), or to a
    folder inside the one it reads (explore, ladder), or is required (build-benchmark). Before: certify, observe
    and run wrote into out itself, beside one another."""
    from viewcert.api.vocabulary import COMMANDS

    defaults = {name: spec.specs()["out"].default for name, spec in COMMANDS.items() if "out" in spec.specs()}
    inside = {"explore", "ladder"}
    for name, default in defaults.items():
        if name in inside:
            assert default is None, name
        elif name == "build-benchmark":
            assert default is ..., name
        elif name == "gallery":
            assert default == Path("out/gallery.png")
        else:
            assert default == Path("out") / name, (name, default)
    assert {"certify", "observe", "run", "audit-extraction"} <= set(defaults)


def _labelled_database(path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from viewcert.elements import symbols
    from viewcert.io.builtin import builtin

    ss = {s.identifier.removeprefix("aflow:"): s for s in builtin("builtin:prototypes")}
    ids = ["A_cF4_225_a", "A_hP2_194_c"]
    pq.write_table(pa.table({"immutable_id": ids, "lattice_vectors": [ss[i].lattice.tolist() for i in ids],
                             "cartesian_site_positions": [ss[i].positions.tolist() for i in ids],
                             "species_at_sites": [list(symbols(ss[i].numbers)) for i in ids],
                             "space_group_number": [225, 194]}), path)
    return path


def test_another_runs_certify_output_is_refused_unless_force_and_never_mixed(tmp_path):
    """A database certified into OUT (its label audit written beside the certificate), then another input into the
    same OUT: refused in one line naming --force; with --force, exactly the first run's files are removed, so no
    label_audit.csv/.md of the first run stays beside the second run's certificate (before: exit 0 and both
    mixed). The same command again resumes without --force."""
    db = _labelled_database(tmp_path / "db.parquet")
    out = tmp_path / "OUT"
    quick = ["--protocol", "axes-3", "--tiling", "1,1,1", "--workers", "1", "--no-plots", "--no-cross-check"]
    first = ["certify", f"{db}", "--label-column", "space_group_number", *quick, "--out", str(out)]
    code, said, _ = run(first)
    assert code == 0 and (out / "label_audit.csv").is_file() and (out / "label_audit.md").is_file(), said
    (out / "notes.txt").write_text("mine")  # the user's own file: never removed
    code, said, _ = run(first)  # the same run again: resumed
    assert code == 0 and "resumed" in said, said
    second = ["certify", "builtin:prototypes", *quick, "--only-views", "front,top", "--out", str(out)]
    code, said, _ = run(second)
    err = one_error(said)
    assert code == 2 and "another certify run" in err and "--force" in err and "field --out" in err, said
    assert (out / "label_audit.csv").is_file()  # refused: nothing removed
    code, said, _ = run([*second, "--force"])
    assert code == 0, said
    assert not (out / "label_audit.csv").exists() and not (out / "label_audit.md").exists()
    cert = json.loads((out / "certificate.json").read_text())
    assert cert["inputs"]["spec"] == "builtin:prototypes" and (out / "notes.txt").read_text() == "mine"
