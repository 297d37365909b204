"""parallel.map_items: executors agree, shards are atomic, an interrupted run resumes without recomputing
finished items and without losing or duplicating any."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.errors import InputError
from viewcert.parallel import MANIFEST, map_items

REPO = Path(__file__).resolve().parents[2]


def _square(x):
    return {"x": x, "y": math.sqrt(x) * 1.1, "s": str(x)}


def _limits_seen(x):
    """What a worker sees: the limits in force where it runs (``max_atoms``, ``max_views``) and its process."""
    from viewcert.limits import active_limits

    lim = active_limits()
    return {"x": x, "max_atoms": lim.max_atoms, "max_views": lim.max_views, "pid": os.getpid()}


def _logged_slow(x):
    """Appends its key to $VIEWCERT_TEST_LOG (one line per computation) and sleeps a little."""
    with open(os.environ["VIEWCERT_TEST_LOG"], "a") as fh:
        fh.write(f"{x}\n")
    time.sleep(0.05)
    return {"x": x, "y": x * x}


def test_in_process_and_local_processes_agree(tmp_path):
    items = list(range(37))
    a = map_items(_square, items, n_workers=1, progress=False)
    b = map_items(_square, items, n_workers=2, chunk_size=4, progress=False)
    c = map_items(_square, items, n_workers=2, workdir=tmp_path / "w", progress=False)
    assert a.executor == "in-process" and b.executor == "local"
    assert a.results == b.results == c.results == [_square(i) for i in items]


@pytest.fixture(scope="module")
def dask_cluster():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        yield cluster
    finally:
        cluster.close()


def test_dask_and_local_give_identical_results(dask_cluster, tmp_path):
    items = list(range(23))
    local = map_items(_square, items, n_workers=2, chunk_size=5, progress=False)
    dask = map_items(_square, items, scheduler=dask_cluster.scheduler_address, chunk_size=5,
                     workdir=tmp_path / "d", progress=False)
    assert dask.executor == "dask" and dask.results == local.results
    assert len(list((tmp_path / "d").glob("shard-*.json"))) == 5


def test_dask_and_local_certificates_are_identical(dask_cluster):
    from viewcert.certify import CertifyConfig
    from viewcert.certify.certificate import certificate_text
    from viewcert.certify.inputs import load_input
    from viewcert.certify.run import run_certification

    ds = load_input("builtin:prototypes")
    ds = ds.select([it.id for it in ds.items[::3]])
    local, _ = run_certification(ds, CertifyConfig(), n_workers=2, progress=False)
    assert_certificate_consistent(local)
    dask, run = run_certification(ds, CertifyConfig(), scheduler=dask_cluster.scheduler_address, progress=False)
    assert_certificate_consistent(dask)
    assert run.executor == "dask"
    assert certificate_text(local.to_dict()) == certificate_text(dask.to_dict())


def test_workers_run_under_the_limits_in_force_where_the_work_was_submitted(dask_cluster):
    """Limits travel one way (viewcert.limits): a worker process or a Dask worker thread starts from the default
    limits, so map_items carries those in force at submission. Every executor sees max_atoms = 7 and
    max_views = 3 (the defaults are 2,000 and 500), in other processes than this one; outside the block the
    defaults are back."""
    from viewcert.limits import DEFAULT_LIMITS, Limits, active_limits, using_limits

    items = list(range(12))
    with using_limits(Limits(max_atoms=7, max_views=3)):
        runs = [map_items(_limits_seen, items, n_workers=1, progress=False),
                map_items(_limits_seen, items, n_workers=2, chunk_size=3, progress=False),
                map_items(_limits_seen, items, scheduler=dask_cluster.scheduler_address, chunk_size=3,
                          progress=False)]
    assert [r.executor for r in runs] == ["in-process", "local", "dask"]
    for r in runs:
        assert {(x["max_atoms"], x["max_views"]) for x in r.results} == {(7, 3)}
    assert {x["pid"] for x in runs[1].results + runs[2].results} & {os.getpid()} == set()
    assert active_limits() == DEFAULT_LIMITS
    plain = map_items(_limits_seen, items, n_workers=2, chunk_size=3, progress=False)
    assert {(x["max_atoms"], x["max_views"]) for x in plain.results} == {(2000, 500)}


def test_manifest_guards_against_mixing_runs(tmp_path):
    wd = tmp_path / "w"
    map_items(_square, [1, 2, 3], workdir=wd, fingerprint="A", n_workers=1)
    assert json.loads((wd / MANIFEST).read_text())["n_items"] == 3
    with pytest.raises(InputError, match="different settings"):
        map_items(_square, [1, 2, 3], workdir=wd, fingerprint="B", n_workers=1)
    with pytest.raises(InputError, match="different item list"):
        map_items(_square, [1, 2], workdir=wd, fingerprint="A", n_workers=1)
    with pytest.raises(InputError, match="unique"):
        map_items(_square, [1, 2], keys=["a", "a"], n_workers=1)


def test_torn_shard_is_recomputed(tmp_path, monkeypatch):
    wd = tmp_path / "w"
    log = tmp_path / "log"
    monkeypatch.setenv("VIEWCERT_TEST_LOG", str(log))
    first = map_items(_logged_slow, list(range(6)), workdir=wd, chunk_size=2, n_workers=1)
    (wd / "shard-000001.json").write_text('{"keys": ["2", "3"], "resu')  # a torn write
    log.write_text("")
    again = map_items(_logged_slow, list(range(6)), workdir=wd, chunk_size=2, n_workers=1)
    assert log.read_text().split() == ["2", "3"]
    assert again.results == first.results and again.n_resumed == 4 and again.n_computed == 2


def test_resume_after_kill_9(tmp_path):
    """A run killed with SIGKILL mid-way resumes: finished shards are read, not recomputed; every item
    appears exactly once in the result."""
    wd = tmp_path / "shards"
    log = tmp_path / "computed.log"
    n = 40
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from tests.parallel.test_parallel import _logged_slow
        from viewcert.parallel import map_items
        map_items(_logged_slow, list(range({n})), keys=[f"k{{i}}" for i in range({n})], workdir={str(wd)!r},
                  chunk_size=2, n_workers=1, fingerprint="crash-test", progress=False)
    """)
    env = dict(os.environ, VIEWCERT_TEST_LOG=str(log))
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=REPO)
    deadline = time.time() + 120
    while time.time() < deadline and len(list(wd.glob("shard-*.json"))) < 5:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    done_before = sorted(wd.glob("shard-*.json"))
    assert 5 <= len(done_before) < n // 2, "the run should have been killed part-way"
    finished = [k for p in done_before for k in json.loads(p.read_text())["keys"]]

    log.write_text("")
    os.environ["VIEWCERT_TEST_LOG"] = str(log)
    try:
        run = map_items(_logged_slow, list(range(n)), keys=[f"k{i}" for i in range(n)], workdir=wd, chunk_size=2,
                        n_workers=1, fingerprint="crash-test", progress=False)
    finally:
        del os.environ["VIEWCERT_TEST_LOG"]
    recomputed = {f"k{x}" for x in log.read_text().split()}
    assert not recomputed & set(finished), "finished items were recomputed"
    assert run.n_resumed == len(finished) and run.n_computed == n - len(finished)
    assert run.results == [{"x": i, "y": i * i} for i in range(n)]  # nothing lost, nothing duplicated
    keys = [k for p in sorted(wd.glob("shard-*.json")) for k in json.loads(p.read_text())["keys"]]
    assert sorted(keys) == sorted(f"k{i}" for i in range(n)) and len(keys) == len(set(keys))


def _dies_on_three(x):
    if x == 3:
        os._exit(1)  # a worker that disappears, like a library abort
    return x


def test_a_dead_worker_is_reported_and_finished_shards_are_kept(tmp_path):
    from viewcert.parallel import WorkerCrash

    with pytest.raises(WorkerCrash, match="worker process died"):
        map_items(_dies_on_three, list(range(12)), workdir=tmp_path, chunk_size=1, n_workers=2, progress=False)
    kept = {json.loads(p.read_text())["keys"][0] for p in tmp_path.glob("shard-*.json")}
    assert "3" not in kept


def _pid_and_square(x):
    time.sleep(0.05)  # long enough that both workers take chunks
    return [os.getppid(), x * x]


def test_workers_started_from_a_helper_thread_live_until_the_pool_ends():
    """The parent-death signal is tied to the thread that forked a worker: map_items called from a helper
    thread forks there, and that thread waits for the pool, so no worker is killed early; every worker's
    parent is this process."""
    import threading

    got = {}
    t = threading.Thread(target=lambda: got.update(run=map_items(_pid_and_square, list(range(12)), n_workers=2,
                                                                  chunk_size=1, progress=False)))
    t.start()
    t.join(timeout=120)
    run = got["run"]
    assert run.executor == "local" and [r[1] for r in run.results] == [x * x for x in range(12)]
    assert {r[0] for r in run.results} == {os.getpid()}
