"""``io.confine.target`` when another writer (a site's second worker) creates a folder between our look and our
mkdir: the folder is used if it is a real folder, refused if it is a symlink (the race a two-worker explorer hit).
Every folder is opened from its parent with ``O_NOFOLLOW`` (``openat``-style), so what the second open meets is
what is used: the race is simulated by a first open that says the folder is absent."""

from __future__ import annotations

import os

import pytest

from viewcert.errors import InputError
from viewcert.io import confine


def _open_misses_once(monkeypatch, name: str) -> list:
    """``os.open`` says ``name`` is absent the first time (as before the other writer's mkdir), then the truth."""
    real, missed = os.open, []

    def fake_open(p, *a, **k):
        if os.path.basename(os.fspath(p)) == name and not missed:
            missed.append(p)
            raise FileNotFoundError(p)
        return real(p, *a, **k)

    monkeypatch.setattr(confine.os, "open", fake_open)
    return missed


def test_a_folder_made_meanwhile_by_another_writer_is_used(tmp_path, monkeypatch):
    (tmp_path / "views").mkdir()  # the other worker's mkdir, after our first open said absent
    missed = _open_misses_once(monkeypatch, "views")
    assert confine.target(tmp_path, "views/a.png") == tmp_path / "views" / "a.png"
    assert missed  # the race was exercised: our mkdir met FileExistsError


def test_a_symlink_planted_meanwhile_is_refused(tmp_path, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "views")
    missed = _open_misses_once(monkeypatch, "views")
    with pytest.raises(InputError, match="is a symlink .*; no write follows a symlink"):
        confine.target(tmp_path, "views/a.png")
    assert missed and os.listdir(tmp_path / "elsewhere") == []
