"""Shard fingerprints (certify.run.fingerprint): a resumed run reuses shards only when everything the results
depend on is the same — including the protocol's cameras behind an unchanged name or path."""

from __future__ import annotations

import subprocess
import sys

from viewcert.certify import CertifyConfig, load_input
from viewcert.certify.run import fingerprint, source_digest

TOML = """[protocol]
format = "viewcert-protocol/1"
name = "mine"
kind = "orthographic"
width = 768
height = 768

[[views]]
name = "front"
rotation = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]

[[views]]
name = "side"
rotation = {side}
"""
LEFT = "[[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]"   # camera on -x: world z to screen right
RIGHT = "[[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]"  # camera on +x


def test_other_source_other_fingerprint(monkeypatch):
    """Shards written by other code (e.g. axes-3 was front/top/right, now front/top/left, under the same
    name and version) are not resumed: the fingerprint follows viewcert's source."""
    from viewcert.certify import run

    ds = load_input("builtin:aflow:A_cF4_225_a")
    cfg = CertifyConfig(protocol="axes-3")
    a = fingerprint(ds, cfg)
    monkeypatch.setattr(run, "source_digest", lambda: "0" * 64)
    assert fingerprint(ds, cfg) != a


def test_same_path_other_cameras_other_fingerprint(tmp_path):
    ds = load_input("builtin:aflow:A_cF4_225_a")
    path = tmp_path / "p.toml"
    path.write_text(TOML.format(side=LEFT))
    cfg = CertifyConfig(protocol=str(path))
    a = fingerprint(ds, cfg)
    assert fingerprint(ds, cfg) == a  # deterministic
    path.write_text(TOML.format(side=RIGHT))
    # the configuration holds the bytes it was made with (resolved once): its fingerprint is of those bytes
    assert fingerprint(ds, cfg) == a
    # a run made after the edit reads the new bytes: same path and settings, other matrices, no stale shards
    assert fingerprint(ds, CertifyConfig(protocol=str(path))) != a
    path.write_text(TOML.format(side=LEFT))
    assert fingerprint(ds, CertifyConfig(protocol=str(path))) == a


def test_source_digest_is_stable_across_processes():
    code = "from viewcert.certify.run import source_digest; print(source_digest())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == source_digest() and len(out) == 64
