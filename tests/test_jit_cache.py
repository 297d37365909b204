"""viewcert.oracle.jit: the first-run check reads numba's cache index of every imported kernel."""

from __future__ import annotations

import os

import viewcert.oracle.phantoms  # noqa: F401 - imports the kernels checked below
from viewcert.oracle import jit


def test_kernels_of_the_oracle_are_found():
    mods = {d.py_func.__module__ for d in jit.kernel_dispatchers()}
    assert "viewcert.oracle.phantom_kernels" in mods


def test_cold_exactly_when_an_index_file_is_missing(monkeypatch):
    paths = [d._cache._cache_file._index_path for d in jit.kernel_dispatchers()]
    missing = paths[-1]
    monkeypatch.setattr(os.path, "exists", lambda p: p != missing)
    assert jit.cache_is_cold()
    monkeypatch.setattr(os.path, "exists", lambda p: True)
    assert not jit.cache_is_cold()
