"""Folder entries that vanish are item errors (issue 23): a dangling symbolic link, a FIFO, or a file deleted
between the folder listing and its reading is listed with item, file and reason, the run exits 1, and R1's
denominator excludes it. Never silently dropped with exit 0, never a hang."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.hostile.corpus import GOOD_CIF, GOOD_CIF_2
from viewcert.certify import inputs as inputs_mod
from viewcert.certify.inputs import load_input
from viewcert.cli import app
from viewcert.errors import InputError
from viewcert.io.read import entry_problem, read_structures


def _folder(tmp_path: Path) -> Path:
    f = tmp_path / "f"
    f.mkdir()
    (f / "nacl.cif").write_text(GOOD_CIF)
    (f / "cscl.cif").write_text(GOOD_CIF_2)
    os.symlink(f / "missing.cif", f / "gone.cif")  # dangling: its target was never there
    return f


def test_dangling_symlink_is_an_item_error(tmp_path):
    f = _folder(tmp_path)
    out = tmp_path / "o"
    res = CliRunner().invoke(app, ["certify", str(f), "--workers", "1", "--no-plots", "--truth", "rendered",
                                   "--out", str(out)])
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    line = next(x for x in res.output.splitlines() if x.startswith("viewcert: item error: item gone"))
    assert "gone.cif" in line and "dangling symbolic link" in line, line
    s = json.loads((out / "certificate.json").read_text())["summary"]
    assert (s["n"], s["correct"], s["n_errors"]) == (2, 2, 1)  # R1 = 2/2, not 2/3
    assert [e["id"] for e in s["errors"]] == ["gone"]
    text = (out / "summary.txt").read_text()
    assert "R1 (crystal_system, truth = rendered): 2/2" in text
    assert "item gone" in text and "dangling symbolic link" in text
    rows = {r["id"]: r for r in csv.DictReader((out / "items.csv").open())}
    assert rows["gone"]["outcome"] == "error" and set(rows) == {"nacl", "cscl", "gone"}


def test_fifo_is_an_item_error_not_a_hang(tmp_path):
    f = tmp_path / "f"
    f.mkdir()
    (f / "nacl.cif").write_text(GOOD_CIF)
    os.mkfifo(f / "pipe.cif")
    ds = load_input(f)
    bad = next(it for it in ds.items if it.id == "pipe")
    with pytest.raises(InputError, match="not a regular file") as err:
        bad.read()
    assert "pipe.cif" in str(err.value)
    assert "pipe.cif" not in ds.files and "nacl.cif" in ds.files


def test_file_deleted_after_listing_is_an_item_error(tmp_path, monkeypatch):
    """The race, made deterministic: the listing names a file that is gone when it is read."""
    f = tmp_path / "f"
    f.mkdir()
    (f / "nacl.cif").write_text(GOOD_CIF)
    listed = [f / "deleted.cif", f / "nacl.cif"]
    monkeypatch.setattr(inputs_mod, "_structure_files", lambda root: listed)
    ds = load_input(f)
    assert [it.id for it in ds.items] == ["deleted", "nacl"]
    with pytest.raises(InputError, match="vanished before it was read"):
        ds.items[0].read()
    assert ds.items[1].read().n_atoms > 0


def test_entry_problem_by_hand(tmp_path):
    (tmp_path / "ok.cif").write_text(GOOD_CIF)
    os.symlink(tmp_path / "ok.cif", tmp_path / "link.cif")
    os.symlink(tmp_path / "nowhere.cif", tmp_path / "dangling.cif")
    os.symlink(tmp_path / "loop.cif", tmp_path / "loop.cif")
    assert entry_problem(tmp_path / "ok.cif") is None
    assert entry_problem(tmp_path / "link.cif") is None  # a link to a regular file is read
    assert "dangling symbolic link" in entry_problem(tmp_path / "dangling.cif")
    assert "vanished" in entry_problem(tmp_path / "never-existed.cif")
    assert entry_problem(tmp_path / "loop.cif").startswith("cannot be read")


def test_read_structures_refuses_a_dangling_entry(tmp_path):
    f = _folder(tmp_path)
    with pytest.raises(InputError, match="dangling symbolic link") as err:
        read_structures(f)
    assert "gone.cif" in str(err.value)
