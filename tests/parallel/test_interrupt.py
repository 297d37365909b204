"""Stopping a run (issue 11): SIGTERM / Ctrl-C stop ``map_items`` keeping finished shards, and workers die
with their parent even when it is killed with SIGKILL. The work below never finishes on its own (items ≥ 4
sleep for an hour), so a run that stops at all was stopped by the signal; the timeouts are hang guards, not
measurements."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import signal, sys, time
    from viewcert.parallel import map_items

    # a user's shell starts a run with Ctrl-C at its default (KeyboardInterrupt); a test runner may not
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def work(i):
        if i >= 4:
            time.sleep(3600)
        return i * i

    if __name__ == "__main__":
        print("start", flush=True)
        try:
            map_items(work, list(range(12)), workdir=sys.argv[1], n_workers=2, chunk_size=1, fingerprint="t")
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(130)
""")


def _children(pid: int) -> set[int]:
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.add(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    wd = tmp_path / "shards"
    proc = subprocess.Popen([sys.executable, str(script), str(wd)], stdout=subprocess.PIPE, text=True,
                            cwd=tmp_path)
    assert proc.stdout.readline().strip() == "start"
    deadline = time.monotonic() + 60  # hang guard: wait until the 4 quick items are on disk
    while len(list(wd.glob("shard-*.json"))) < 4:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    return proc, wd


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux) to find worker processes")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_the_run_and_keeps_finished_shards(tmp_path, sig):
    proc, wd = _start(tmp_path)
    workers = _children(proc.pid)
    assert len(workers) >= 2
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted" in out
    shards = sorted(wd.glob("shard-*.json"))
    assert [json.loads(p.read_text())["results"] for p in shards] == [[0], [1], [4], [9]]
    deadline = time.monotonic() + 30
    while any(_alive(w) for w in workers):
        assert time.monotonic() < deadline, "workers outlived the stopped run"
        time.sleep(0.1)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux) to find worker processes")
def test_workers_die_with_a_killed_parent(tmp_path):
    proc, _ = _start(tmp_path)
    workers = _children(proc.pid)
    assert len(workers) >= 2
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=120)
    deadline = time.monotonic() + 30  # the workers poll their parent every 0.5 s
    while any(_alive(w) for w in workers):
        assert time.monotonic() < deadline, "workers outlived a SIGKILLed parent"
        time.sleep(0.1)


def _group(pgid: int) -> set[int]:
    """Live processes of process group ``pgid`` (the parent was started in a new session: its workers, and
    anything they started, are in it, also once re-parented after the parent's death)."""
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.add(int(d.name))
    return out


def _reap(pids: set[int]) -> None:
    """Kill what a failed assertion left running (cleanup only)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


GIL_SCRIPT = textwrap.dedent("""
    import itertools
    from viewcert.parallel import map_items

    def work(i):
        return sum(itertools.repeat(1, 10 ** 12))  # hours in one C loop that never releases the GIL

    if __name__ == "__main__":
        print("start", flush=True)
        map_items(work, list(range(4)), n_workers=2, chunk_size=1, progress=False)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_workers_holding_the_gil_die_with_a_killed_parent(tmp_path):
    """A worker inside C code (a numba kernel, a C library) holds the GIL, so no Python thread of its own
    can notice its parent's death; the kernel's parent-death signal (prctl PR_SET_PDEATHSIG) still ends it.
    Before that signal the workers below ran on for as long as their loop (> 10 s observed)."""
    script = tmp_path / "gil.py"
    script.write_text(GIL_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=tmp_path,
                            start_new_session=True)
    workers: set[int] = set()
    try:
        assert proc.stdout.readline().strip() == "start"
        deadline = time.monotonic() + 60  # hang guard: both workers started and busy
        while len(workers := _children(proc.pid)) < 2:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        time.sleep(0.5)  # well inside the loop
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=120)
        time.sleep(2)
        assert not _group(proc.pid), "workers outlived a SIGKILLed parent while holding the GIL"
    finally:
        _reap(workers | _group(proc.pid))


def _certify(args: list[str], cwd: Path, **kw):
    """``viewcert certify`` in a subprocess (its own session: the test finds every process it started)."""
    cmd = [sys.executable, "-c", "from viewcert.cli import app; app()", "certify", *args]
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kw)


DIGEST = re.compile(r"certificate digest: (sha256:[0-9a-f]{64})")
#: 20 prototypes seen from 60 directions: about 0.3 s of work per item, 10 chunks of 2 items on 2 workers
CERTIFY_ARGS = ["builtin:prototypes", "--protocol", "fibonacci-60", "--workers", "2", "--no-plots"]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux) to find worker processes")
def test_certify_sigkilled_mid_run_leaves_no_worker_and_resumes_to_the_same_digest(tmp_path):
    """``viewcert certify --workers 2`` killed with SIGKILL (as the OOM killer or a scheduler's hard timeout
    do) while its workers compute: 2 s later no process it started is alive, every shard on disk is whole,
    and the rerun resumes those shards and writes the certificate of an uninterrupted run."""
    from viewcert.parallel import _load_shard

    out = tmp_path / "killed"
    proc = _certify([*CERTIFY_ARGS, "--out", str(out)], tmp_path)
    left: set[int] = set()
    try:
        deadline = time.monotonic() + 300  # hang guard: the kernels load, then two chunks finish
        while len(list(out.glob(".shards/*/shard-*.json"))) < 2:
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
            time.sleep(0.05)
        workers = _children(proc.pid)
        assert len(workers) == 2
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=120)
        time.sleep(2)
        left = _group(proc.pid)
        assert not left, "worker processes outlived the SIGKILLed certify"
    finally:
        _reap(left | _group(proc.pid))
        proc.stdout.close()
        proc.stderr.close()
    assert not (out / "certificate.json").exists(), "the run should have been killed part-way"
    shards = sorted(out.glob(".shards/*/shard-*.json"))
    for p in shards:  # whole: each holds its chunk's two items and matches its digest
        keys = json.loads(p.read_text())["keys"]
        assert len(keys) == 2 and _load_shard(p, keys)[1] is None, p.name
    assert 2 <= len(shards) < 10

    again = _certify([*CERTIFY_ARGS, "--out", str(out)], tmp_path)
    fresh = _certify([*CERTIFY_ARGS, "--out", str(tmp_path / "fresh"), "--no-resume"], tmp_path)
    (a_out, a_err), (f_out, f_err) = again.communicate(timeout=600), fresh.communicate(timeout=600)
    assert again.returncode == 0 and fresh.returncode == 0, a_err + f_err
    m = re.search(r"resumed (\d+) of 20 items", a_err + a_out)
    assert m and int(m.group(1)) == 2 * len(shards), a_err  # every whole shard reused, no other
    assert "recomputed" not in a_err
    assert DIGEST.search(a_out).group(1) == DIGEST.search(f_out).group(1)
    assert (out / "certificate.json").read_bytes() == (tmp_path / "fresh" / "certificate.json").read_bytes()
