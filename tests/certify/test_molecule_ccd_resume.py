"""A CCD slice certified, killed with SIGKILL part-way, and resumed: 0 items lost, 0 duplicated, and the
certificate equal to an uninterrupted run's (the pattern of tests/parallel/test_parallel.py::test_resume_after_kill_9)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("biotite")

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.certify import CertifyConfig  # noqa: E402
from viewcert.certify.run import certify  # noqa: E402
from viewcert.io.ccd import ccd_codes  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
N = 96  # auto chunk size with one worker: ceil(96 / 8) = 12 items per shard, 8 shards


def test_ccd_slice_kill_9_and_resume(tmp_path):
    codes = ccd_codes()[7::512][:N]  # a deterministic slice of the dictionary
    assert len(codes) == N
    (tmp_path / "codes.txt").write_text("\n".join(codes) + "\n")
    spec = f"ccd:@{tmp_path / 'codes.txt'}"
    out = tmp_path / "run"
    script = textwrap.dedent(f"""
        from viewcert.certify import CertifyConfig
        from viewcert.certify.run import certify
        certify({spec!r}, CertifyConfig(protocol="axes-3", molecule_cross_check=False), out={str(out)!r},
                n_workers=1, plots=False, progress=False)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
    deadline = time.time() + 300
    while time.time() < deadline and len(list(out.glob(".shards/*/shard-*.json"))) < 2:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    before = sorted(out.glob(".shards/*/shard-*.json"))
    assert 2 <= len(before) < 8, "the run should have been killed part-way"
    finished = [k for p in before for k in json.loads(p.read_text())["keys"]]

    cfg = CertifyConfig(protocol="axes-3", molecule_cross_check=False)
    cert = certify(spec, cfg, out=out, n_workers=1, plots=False, progress=False)
    assert_certificate_consistent(cert)
    run = json.loads((out / "run.json").read_text())
    assert run["n_resumed"] == len(finished) and run["n_computed"] == N - len(finished)
    ids = [it.id for it in cert.items]
    assert ids == [f"ccd:{c}" for c in codes]  # nothing lost, nothing duplicated, input order
    keys = [k for p in sorted(out.glob(".shards/*/shard-*.json")) for k in json.loads(p.read_text())["keys"]]
    assert len(keys) == N and len(set(keys)) == N
    fresh = certify(spec, cfg, out=tmp_path / "fresh", n_workers=1, plots=False, progress=False)
    assert_certificate_consistent(fresh)
    assert cert.digest_value == fresh.digest_value
