"""Stopping a run (issue 11): SIGTERM / Ctrl-C stop ``map_items`` keeping finished shards, and workers die
with their parent even when it is killed with SIGKILL. The work below never finishes on its own (items ≥ 4
sleep for an hour), so a run that stops at all was stopped by the signal; the timeouts are hang guards, not
measurements."""

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

SCRIPT = textwrap.dedent("""
    import sys, time
    from viewcert.parallel import map_items

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
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "interrupted" in out
    shards = sorted(wd.glob("shard-*.json"))
    assert [json.loads(p.read_text())["results"] for p in shards] == [[0], [1], [4], [9]]
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers):
        assert time.monotonic() < deadline, "workers outlived the stopped run"
        time.sleep(0.1)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux) to find worker processes")
def test_workers_die_with_a_killed_parent(tmp_path):
    proc, _ = _start(tmp_path)
    workers = _children(proc.pid)
    assert len(workers) >= 2
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10  # the workers poll their parent every 0.5 s
    while any(_alive(w) for w in workers):
        assert time.monotonic() < deadline, "workers outlived a SIGKILLed parent"
        time.sleep(0.1)
