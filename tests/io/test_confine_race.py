"""``io.confine.target`` when another writer (a site's second worker) creates a folder between our check and our
mkdir: the folder is used if it is a real folder, refused if it is a symlink (the race a two-worker explorer hit)."""

from __future__ import annotations

import os

import pytest

from viewcert.errors import InputError
from viewcert.io import confine


def _lstat_misses_once(monkeypatch, name: str) -> list:
    """``os.lstat`` says ``name`` is absent the first time (as before the other writer's mkdir), then the truth."""
    real, missed = os.lstat, []

    def lstat(p, *a, **k):
        if os.path.basename(os.fspath(p)) == name and not missed:
            missed.append(p)
            raise FileNotFoundError(p)
        return real(p, *a, **k)

    monkeypatch.setattr(confine.os, "lstat", lstat)
    return missed


def test_a_folder_made_meanwhile_by_another_writer_is_used(tmp_path, monkeypatch):
    (tmp_path / "views").mkdir()  # the other worker's mkdir, after our lstat said absent
    missed = _lstat_misses_once(monkeypatch, "views")
    assert confine.target(tmp_path, "views/a.png") == tmp_path / "views" / "a.png"
    assert missed  # the race was exercised: our mkdir met FileExistsError


def test_a_symlink_planted_meanwhile_is_refused(tmp_path, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "views")
    missed = _lstat_misses_once(monkeypatch, "views")
    with pytest.raises(InputError, match="is a symlink; no write follows a symlink"):
        confine.target(tmp_path, "views/a.png")
    assert missed
