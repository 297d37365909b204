"""One way to map a function over many items: local processes by default, a Dask cluster when given a
scheduler address; results checkpointed in shards so an interrupted run resumes.

    from viewcert.parallel import map_items
    run = map_items(fn, items, keys=ids, workdir="out/.shards", n_workers=None, scheduler=None)
    run.results  # in the order of ``items``

- ``fn`` must be a module-level function (picklable by reference) mapping one item to a JSON-serialisable
  result; it runs in worker processes (``concurrent.futures.ProcessPoolExecutor``; in-process when
  ``n_workers == 1``) or on Dask workers (``scheduler="tcp://host:8786"`` or a ``distributed.Client``).
- Items are cut into consecutive chunks of ``chunk_size``; a chunk is the unit of work and, when
  ``workdir`` is given, of checkpointing: its results are written to ``shard-NNNNNN.json`` atomically
  (temporary file, fsync, rename) as soon as it finishes. A re-run with the same items (same keys, same
  ``fingerprint``) reads the finished shards and computes only the rest, so a run killed at any point
  (even ``kill -9``) resumes with no finished item recomputed and no item lost or duplicated. The workdir's
  ``manifest.json`` pins the key list, chunk size and fingerprint; a mismatch is an InputError rather than
  a silent mix of two runs.
- Each shard carries ``sha256``, the SHA-256 of its canonical payload (``io.atomic.json_dumps`` of its keys
  and results, one line). A shard is reused only when it is a regular file, holds exactly its chunk's keys
  and its payload matches that digest; any other shard present (torn, edited, damaged, from elsewhere) is
  recomputed and listed in ``MapResult.shards_recomputed`` with the reason, for the caller to warn about.
- A local worker ends when the process that started it dies, within ``PARENT_POLL_S`` and even after a
  ``kill -9`` (Linux: the kernel's parent-death signal, which also stops a worker inside a kernel that holds
  the GIL; elsewhere a parent-pid check); workers never write shards (the parent does, atomically), so
  none is left half-written. With a scheduler, viewcert starts no cluster: it connects a client, closed
  when the run ends.
- A rich progress bar is shown on a terminal (``progress=None``) or when ``progress=True``.

Results do not depend on the executor or on the number of workers: each result is ``fn(item)``, assembled
in item order.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import hashlib
import json
import math
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viewcert.errors import InputError, ViewcertError
from viewcert.io.atomic import json_dumps, write_json_atomic, write_text_atomic
from viewcert.io.confine import inner_folder, read_inside, roots_in_force, within
from viewcert.limits import Limits, active_limits, using_limits

__all__ = ["MANIFEST", "MapResult", "WorkerCrash", "default_workers", "interruptible", "killed_by_signals",
           "map_items", "run_chunk", "shard_digest", "shard_text"]

PARENT_POLL_S = 0.5  # how often a worker checks that its parent lives; how often the parent wakes to see signals
MANIFEST = "manifest.json"
SHARD_FORMAT = "shard-{:06d}.json"
_SHARD_TAIL = re.compile(r',"sha256":"([0-9a-f]{64})"\}\n\Z')


class WorkerCrash(ViewcertError, RuntimeError):
    """A worker process died; the message says which chunks were in flight and what was kept."""


@dataclass
class MapResult:
    """Results in item order, and how they were obtained."""

    results: list[Any]
    n_items: int
    n_resumed: int = 0
    n_computed: int = 0
    shards_written: list[str] = field(default_factory=list)
    executor: str = "local"
    shards_recomputed: dict[str, str] = field(default_factory=dict)  # shard present but not reused -> why
    workdir: Path | None = None  # where the shards are


def default_workers() -> int:
    """The number of CPUs this process may run on (its affinity mask; elsewhere ``os.cpu_count()``).

    Returns
    -------
    int
        At least 1.
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_PARENT: int | None = None  # in a pool worker: the pid of the process that started the pool


def _die_with_parent(parent: int) -> None:
    """End this worker when ``parent`` (the process that started the pool) dies, even by ``kill -9``.

    On Linux the kernel sends SIGKILL at the parent's death (``prctl(PR_SET_PDEATHSIG)``): it reaches a worker
    busy in a numba kernel or a C library that holds the GIL, which no Python-level check would. The signal is
    tied to the parent *thread* that forked the worker: with the ``fork`` context every worker is forked at the
    pool's first ``submit``, in the thread that called ``map_items``, which waits in ``_run_local`` until the
    pool is shut down, so it outlives its workers. ``getppid()`` is checked right after, closing the race of a
    parent that died before the request (the worker was then already re-parented). Elsewhere, and as a backup,
    a daemon thread and ``run_chunk`` (between items) compare ``getppid()`` with ``parent``."""
    global _PARENT
    _PARENT = parent
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - a libc without prctl: the checks below remain
            pass
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL_S)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="viewcert-parent-watch", daemon=True).start()


def _worker_init(parent: int) -> None:
    """In a forked worker, move the inherited heap out of the garbage collector's reach: otherwise every
    full collection walks the parent's objects (a test runner's or a notebook's heap can make GC dominate).
    The worker ignores Ctrl-C (the parent decides and terminates it) and ends when its parent ``parent``
    dies, even a ``kill -9`` one (``_die_with_parent``)."""
    gc.freeze()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler (``interruptible``): terminate means stop
    _die_with_parent(parent)


def _pool_context():
    """The start method of the worker pool: ``fork`` on Linux (workers inherit the parent's compiled kernels,
    and their parent is this process, which ``_die_with_parent`` relies on; Python 3.14 changes the default
    to ``forkserver``, whose workers are the server's children), the platform's default elsewhere (``spawn``:
    also children of this process)."""
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return None


@contextlib.contextmanager
def interruptible():
    """SIGTERM behaves like Ctrl-C (KeyboardInterrupt) in the main thread while the block runs, so a run
    stopped either way keeps its finished shards and its workers are terminated.

    Yields
    ------
    None
        Nothing; outside the main thread the block runs with the signal handlers unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    old = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@contextlib.contextmanager
def killed_by_signals():
    """Ctrl-C and SIGTERM terminate the process at once (the operating system's default) while the block
    runs: for work with nothing to keep that must not be interrupted half-way in Python, such as compiling
    the numba kernels (a KeyboardInterrupt inside LLVM leaves a process that crashes on exit).

    Yields
    ------
    None
        Nothing; outside the main thread the block runs with the signal handlers unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Stop a pool now: cancel queued chunks and terminate the running workers (finished shards are on
    disk already)."""
    procs = list(getattr(pool, "_processes", {}).values())  # stdlib attribute; no public handle exists
    for proc in procs:
        proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + 0.5
    for proc in procs:
        proc.join(timeout=max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()


BATCH = 32  # items per ``fn.map_batch`` call (run_chunk)


def run_chunk(fn: Callable[[Any], Any], chunk: Sequence[Any], limits: Limits | None = None,
              roots: tuple | None = None) -> list[Any]:
    """Apply ``fn`` to every item of a chunk (what a worker runs), under ``limits`` and the output folders
    ``roots`` (``io.confine.roots_in_force``: those in force where the chunk was submitted, as a worker process or
    a Dask thread does not inherit the submitter's context; a file a worker writes goes through real folders):
    ``fn.map_batch(items)`` on BATCH items at a time when ``fn`` has one (it must equal
    ``[fn(i) for i in items]``; e.g. ``certify.evaluate.CertifyRecords``), else item by item. In a pool worker
    whose parent has died, stop before the next item or batch: nobody will collect the chunk.

    Parameters
    ----------
    fn : callable
        A function of one item, optionally with a ``map_batch`` method of a list of items.
    chunk : sequence
        The chunk's items.
    limits : Limits, optional
        The limits in force while the chunk runs; None: those in force already.
    roots : tuple of io.confine.OutputRoot, optional
        The output folders in force while the chunk runs; None: those in force already.

    Returns
    -------
    list
        ``[fn(item) for item in chunk]``, in order.
    """
    batch = getattr(fn, "map_batch", None)
    step = BATCH if batch is not None else 1
    out: list[Any] = []
    with using_limits(limits), within(roots):
        for a in range(0, len(chunk), step):
            if _PARENT is not None and os.getppid() != _PARENT:
                os._exit(1)
            out.extend(batch(chunk[a:a + step]) if batch is not None else [fn(chunk[a])])
    return out


def _keys_digest(keys: Sequence[str]) -> str:
    h = hashlib.sha256()
    for k in keys:
        h.update(k.encode("utf-8", "surrogatepass"))  # an undecodable file name is a key too
        h.update(b"\0")
    return h.hexdigest()


def _auto_chunk(n: int, workers: int) -> int:
    # ~8 chunks per worker keeps the pool busy and bounds the work lost to an interruption
    return max(1, min(64, math.ceil(n / max(1, 8 * workers))))


def _payload(keys: Sequence[str], results: Sequence[Any]) -> str:
    return json_dumps({"keys": list(keys), "results": list(results)}, indent=None, allow_nan=True)


def shard_digest(keys: Sequence[str], results: Sequence[Any]) -> str:
    """SHA-256 (hex) of a shard's canonical payload: deterministic one-line JSON of its keys and results.

    Parameters
    ----------
    keys : sequence of str
        The chunk's item keys.
    results : sequence
        Their results (JSON-serialisable), same order.

    Returns
    -------
    str
        64 lowercase hex digits.
    """
    return hashlib.sha256(_payload(keys, results).encode()).hexdigest()


def shard_text(keys: Sequence[str], results: Sequence[Any]) -> str:
    """A shard file's text: its canonical payload with the payload's digest as the last key (``sha256``
    sorts after ``keys`` and ``results``, so this is also the deterministic JSON of the whole shard).

    Parameters
    ----------
    keys : sequence of str
        The chunk's item keys.
    results : sequence
        Their results (JSON-serialisable), same order.

    Returns
    -------
    str
        One line of JSON ending in a newline.
    """
    payload = _payload(keys, results)
    return f'{payload[:-2]},"sha256":"{hashlib.sha256(payload.encode()).hexdigest()}"}}\n'


def _digest_ok(text: str, data: dict, keys: list[str]) -> bool:
    """The digest holds: over the stored payload bytes as written (fast), else over the canonical payload
    of what was parsed (a shard re-serialised but not changed)."""
    m = _SHARD_TAIL.search(text)
    if m is not None and hashlib.sha256((text[:m.start()] + "}\n").encode()).hexdigest() == m.group(1):
        return True
    try:
        return data.get("sha256") == shard_digest(keys, data["results"])
    except InputError:
        return False


def _load_shard(path: Path, keys: list[str]) -> tuple[list[Any] | None, str | None]:
    """(results, None) for a shard that may be reused; (None, why) for one present but not reusable;
    (None, None) when there is none."""
    if not os.path.lexists(path):
        return None, None
    if not path.is_file() or path.is_symlink():
        return None, "not a regular file"
    try:  # through real folders, O_NOFOLLOW: a link swapped in on the way is refused, never read
        text = read_inside(path, what="shard").decode("utf-8")
        data = json.loads(text)
    except FileNotFoundError:
        return None, None
    except InputError as exc:
        if exc.field == "--out":  # a folder on the way swapped for a link: refused, never followed
            raise
        return None, "unreadable or not JSON (a torn or damaged file)"
    except (OSError, ValueError):
        return None, "unreadable or not JSON (a torn or damaged file)"
    if not isinstance(data, dict) or data.get("keys") != keys or not isinstance(data.get("results"), list) \
            or len(data["results"]) != len(keys):
        return None, "does not hold this chunk's items"
    if not _digest_ok(text, data, keys):
        return None, "does not match its SHA-256 digest (edited or damaged since it was written)"
    return data["results"], None


def _prepare_workdir(workdir: Path, keys: list[str], chunk_size: int | None, fingerprint: str,
                     workers: int) -> int:
    inner_folder(workdir)  # inside a run's output folder: no symlink on the way (refused before any work)
    mpath = workdir / MANIFEST
    digest = _keys_digest(keys)
    if os.path.lexists(mpath):
        try:
            m = json.loads(read_inside(mpath, what="shard manifest"))
        except (ValueError, OSError):
            m = None
        if m is not None:
            if m.get("keys_sha256") != digest or m.get("n_items") != len(keys):
                raise InputError(
                    f"{workdir} holds shards of a different item list ({m.get('n_items')} items); use another "
                    "directory or delete it", field="workdir")
            if m.get("fingerprint") != fingerprint:
                raise InputError(
                    f"{workdir} holds shards computed with different settings (fingerprint "
                    f"{m.get('fingerprint')!r}, now {fingerprint!r}); use another directory or delete it",
                    field="workdir")
            if chunk_size is not None and m.get("chunk_size") != chunk_size:
                raise InputError(f"{workdir} was sharded with chunk_size={m.get('chunk_size')}, not {chunk_size}",
                                 field="chunk_size")
            return int(m["chunk_size"])
    size = chunk_size or _auto_chunk(len(keys), workers)
    write_json_atomic(mpath, {"n_items": len(keys), "keys_sha256": digest, "chunk_size": size,
                              "fingerprint": fingerprint, "shard_format": SHARD_FORMAT})
    return size


class _Progress:
    def __init__(self, enabled: bool, total: int, description: str):
        self.bar = None
        if enabled and total:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True),
                                transient=False)
            self.task = self.bar.add_task(description or "items", total=total)

    def __enter__(self):
        if self.bar is not None:
            self.bar.start()
        return self

    def advance(self, n: int) -> None:
        if self.bar is not None:
            self.bar.advance(self.task, n)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()


@dataclass(frozen=True)
class _Chunks:
    """Where finished chunks go: ``out.results`` in item order, each chunk's shard in ``wd`` (when given),
    the counts in ``out``. ``bounds[ci]``: the item range [a, b) of chunk ``ci``."""

    bounds: list[tuple[int, int]]
    keys: list[str]
    out: MapResult
    wd: Path | None

    def resume(self) -> list[int]:
        """Take every reusable shard's results; the chunks left to compute, in order."""
        todo: list[int] = []
        for ci, (a, b) in enumerate(self.bounds):
            got, why = (_load_shard(self.wd / SHARD_FORMAT.format(ci), self.keys[a:b]) if self.wd is not None
                        else (None, None))
            if why is not None and (self.wd / SHARD_FORMAT.format(ci)).is_dir():  # no shard can be written there
                raise InputError("a folder stands where a shard is kept; move or remove it (before any work)",
                                 source=str(self.wd / SHARD_FORMAT.format(ci)))
            if why is not None:
                self.out.shards_recomputed[SHARD_FORMAT.format(ci)] = why
            if got is None:
                todo.append(ci)
            else:
                self.out.results[a:b] = got
                self.out.n_resumed += b - a
        return todo

    def finish(self, ci: int, chunk_results: list[Any]) -> None:
        """Store chunk ``ci``'s results (its shard first, when there is a workdir)."""
        a, b = self.bounds[ci]
        if self.wd is not None:
            path = self.wd / SHARD_FORMAT.format(ci)
            text = shard_text(self.keys[a:b], chunk_results)
            write_text_atomic(path, text)
            self.out.shards_written.append(path.name)
            # the stored form is what a resumed run reads: keep both runs identical (parsed, not read back)
            chunk_results = json.loads(text)["results"]
        self.out.results[a:b] = chunk_results
        self.out.n_computed += b - a

    def crash(self, unfinished: list[int]) -> WorkerCrash:
        """The error for a worker death while the chunks ``unfinished`` (sorted) were not done."""
        first = [self.keys[self.bounds[c][0]] for c in unfinished[:3]]
        return WorkerCrash(
            f"a worker process died (killed, out of memory, or a library aborted) while "
            f"{len(unfinished)} chunk(s) were unfinished, starting at items {first}; "
            f"{self.out.n_resumed + self.out.n_computed} finished items are kept"
            + (f" in {self.wd}: rerun to resume" if self.wd is not None else "")
            + "; n_workers=1 runs in-process and shows which item fails")


def _checked_keys(n: int, keys: Sequence[str] | None) -> list[str]:
    """The item keys as strings (default: the indices); refuses a count other than ``n`` or a repeat."""
    keys = [str(i) for i in range(n)] if keys is None else [str(k) for k in keys]
    if len(keys) != n:
        raise InputError(f"{len(keys)} keys for {n} items", field="keys")
    if len(set(keys)) != n:
        raise InputError("keys must be unique", field="keys")
    return keys


def _checked_workers(n_workers: int | None, chunk_size: int | None) -> int:
    """The number of local processes (default: the CPUs this process may use); refuses n_workers or
    chunk_size below 1."""
    if n_workers is not None and int(n_workers) < 1:
        raise InputError(f"n_workers must be ≥ 1, got {n_workers}", field="n_workers")
    workers = int(n_workers) if n_workers is not None else default_workers()
    if chunk_size is not None and int(chunk_size) < 1:
        raise InputError(f"chunk_size must be ≥ 1, got {chunk_size}", field="chunk_size")
    return workers


def map_items(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    keys: Sequence[str] | None = None,
    workdir: str | os.PathLike | None = None,
    n_workers: int | None = None,
    scheduler: Any = None,
    chunk_size: int | None = None,
    fingerprint: str = "",
    progress: bool | None = None,
    description: str = "",
) -> MapResult:
    """``[fn(item) for item in items]`` over local processes or a Dask cluster, checkpointed in ``workdir``.

    Parameters
    ----------
    fn : callable
        A module-level function (picklable by reference) of one item returning a JSON-serialisable result;
        with a ``map_batch`` attribute, that is called on batches instead (:func:`run_chunk`).
    items : sequence
        The items, picklable.
    keys : sequence of str, optional
        Unique string per item (default: the index), used to check shards on resume.
    workdir : str or path-like, optional
        Directory of the manifest and shards; None: no checkpoints.
    n_workers : int, optional
        Local processes, at least 1 (default: the CPUs this process may use; 1 runs in-process); ignored with
        a scheduler.
    scheduler : str or distributed.Client, optional
        A Dask scheduler address (``"tcp://..."``) or a ``distributed.Client``; None = local processes.
    chunk_size : int, optional
        Items per chunk (and shard), at least 1; default: about 8 chunks per worker, at most 64 items, or the
        size the workdir's manifest records.
    fingerprint : str, default ""
        The settings' identity, pinned in the manifest: a resume with another is refused.
    progress : bool, optional
        Show a progress bar; None: when stderr is a terminal.
    description : str, default ""
        The progress bar's label.

    Returns
    -------
    MapResult
        ``results`` in the order of ``items``, with the counts resumed and computed, the shards written and
        those recomputed (with why) and the executor used (``local``, ``in-process`` or ``dask``).

    Raises
    ------
    InputError
        ``keys`` do not match ``items`` one to one (field ``keys``), ``n_workers`` or ``chunk_size`` is below
        1, or ``workdir`` holds shards of another item list, fingerprint or chunk size.
    WorkerCrash
        A local worker process died.
    """
    items = list(items)
    n = len(items)
    keys = _checked_keys(n, keys)
    workers = _checked_workers(n_workers, chunk_size)
    wd = Path(workdir) if workdir is not None else None
    if wd is not None:
        size = _prepare_workdir(wd, keys, chunk_size, fingerprint, workers)
    else:
        size = chunk_size or _auto_chunk(n, workers)
    bounds = [(s, min(n, s + size)) for s in range(0, n, size)]
    out = MapResult([None] * n, n, workdir=wd)
    chunks = _Chunks(bounds, keys, out, wd)
    todo = chunks.resume()
    show = sys.stderr.isatty() if progress is None else bool(progress)
    with _Progress(show, n, description) as bar, interruptible():
        bar.advance(out.n_resumed)
        if not todo:
            pass
        elif scheduler is not None:
            out.executor = "dask"
            _run_dask(fn, items, bounds, todo, scheduler, chunks.finish, bar)  # under the limits in force here
        elif workers == 1 or len(todo) == 1:
            out.executor = "in-process"
            for ci in todo:
                a, b = bounds[ci]
                chunks.finish(ci, run_chunk(fn, items[a:b]))
                bar.advance(b - a)
        else:
            out.executor = "local"
            _run_local(fn, items, todo, min(workers, len(todo)), chunks, bar)
    return out


def _run_local(fn, items, todo: list[int], workers: int, chunks: _Chunks, bar) -> None:
    """The chunks ``todo`` on a pool of ``workers`` processes, stored as they finish (in chunk order among
    those finishing together); a worker death is a WorkerCrash, and any exception (an interrupt too)
    terminates the pool before it propagates."""
    bounds = chunks.bounds
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context(), initializer=_worker_init,
                               initargs=(os.getpid(),))
    try:
        limits, roots = active_limits(), roots_in_force()  # the workers check and write as this process would
        pending = {pool.submit(run_chunk, fn, items[bounds[ci][0]:bounds[ci][1]], limits, roots): ci for ci in todo}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED, timeout=PARENT_POLL_S)
            for fut in sorted(done, key=lambda f: pending[f]):
                ci = pending[fut]
                try:
                    res = fut.result()
                except BrokenProcessPool:
                    raise chunks.crash(sorted(pending.values())) from None
                pending.pop(fut)
                chunks.finish(ci, res)
                bar.advance(bounds[ci][1] - bounds[ci][0])
    except BaseException:
        _terminate(pool)
        raise
    pool.shutdown(wait=True)


def _run_dask(fn, items, bounds, todo, scheduler, finish, bar) -> None:
    from distributed import Client, as_completed

    own = not isinstance(scheduler, Client)
    client = Client(scheduler, set_as_default=False) if own else scheduler
    try:
        futs, limits, roots = {}, active_limits(), roots_in_force()
        for ci in todo:
            a, b = bounds[ci]
            fut = client.submit(run_chunk, fn, items[a:b], limits, roots, pure=False)
            futs[fut] = ci
        for fut in as_completed(list(futs), loop=client.loop):
            ci = futs[fut]
            finish(ci, fut.result())
            bar.advance(bounds[ci][1] - bounds[ci][0])
            fut.release()
    finally:
        if own:
            client.close()
