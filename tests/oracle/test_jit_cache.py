"""viewcert.oracle.jit: a first run is recognised by a marker keyed to the kernel sources."""

from __future__ import annotations

import viewcert.oracle.phantoms  # noqa: F401 - imports the kernels checked below
from viewcert.oracle import jit


def test_kernels_of_the_oracle_are_found():
    mods = {d.py_func.__module__ for d in jit.kernel_dispatchers()}
    assert "viewcert.oracle.phantom_kernels" in mods


def test_cold_until_marked_warm(monkeypatch, tmp_path):
    marker = tmp_path / "cache" / "viewcert-warm-test"
    monkeypatch.setattr(jit, "_stamp_path", lambda: str(marker))
    assert jit.cache_is_cold()
    jit.mark_warm()
    assert marker.exists() and not jit.cache_is_cold()
    monkeypatch.setattr(jit, "_stamp_path", lambda: None)  # numba internals unknown: never "cold"
    assert not jit.cache_is_cold()


def test_stamp_changes_with_the_kernel_sources(monkeypatch):
    a = jit._stamp_path()
    real_stat = jit.os.stat
    monkeypatch.setattr(jit.os, "stat", lambda f: type("S", (), {"st_mtime_ns": real_stat(f).st_mtime_ns + 1,
                                                                "st_size": real_stat(f).st_size})())
    b = jit._stamp_path()
    assert a is not None and b is not None and a != b
