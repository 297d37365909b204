"""Output folders: one writer at a time, and one output per folder.

``claimed(out, kind)`` is held for the whole of a command that writes a folder (``build-benchmark``: ``export``,
``certify``: ``certify``, ``explore``: ``site``):

- **A lock.** ``OUT/.viewcert.lock`` is created (``O_NOFOLLOW``: a planted link is refused) and locked with
  ``fcntl.flock`` (exclusive, non-blocking). A second writer into the same folder is refused in one line while the
  first runs; the kernel releases the lock when its process ends, however it ends, so no stale lock remains.
- **One output per folder.** What the folder already holds (files and links whose names do not start with '.';
  hidden entries such as ``.shards`` and the lock are viewcert's own) decides:

  | kind | the folder holds | then |
  |---|---|---|
  | export | nothing | written |
  | export | an earlier export, and only files its ``manifest.json`` lists | those files (and the manifest) are removed first, nothing else: the new export never lists a file of the old one |
  | export | anything else (a certify output, files no manifest lists) | refused |
  | certify | an export (``manifest.json``) | refused (a certify output in it is rewritten and resumed, as before) |
  | site | an export or a certify output (``manifest.json``, ``certificate.json``) | refused |

Every refusal is an ``InputError`` naming the folder and ``--out`` (the CLI: one line, exit 2), before anything is
written or removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from viewcert.errors import InputError
from viewcert.io.confine import inside, out_folder
from viewcert.io.received import loads_json_strict, read_received_bytes

LOCK = ".viewcert.lock"
KINDS = ("export", "certify", "site")
_WHAT = {"manifest.json": "an export", "certificate.json": "a certify output or an export"}


def _lock(folder: Path) -> int:
    try:
        fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                     0o644)
    except OSError as exc:
        raise InputError(f"cannot create the lock file {LOCK}: {exc.strerror or exc}", source=str(folder),
                         field="--out") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise InputError(f"another viewcert run is writing into this folder (it holds {LOCK}); wait for it or "
                         "choose another --out", source=str(folder), field="--out") from None
    return fd


def _visible(folder: Path) -> list[str]:
    """Relative POSIX names of the files and links under ``folder`` (not following links), hidden ones aside."""
    out = []
    for here, dirs, files in os.walk(folder):  # a link to a folder is listed in dirs, never walked into
        links = [d for d in dirs if os.path.islink(os.path.join(here, d))]
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in links]
        rel = Path(here).relative_to(folder)
        out += [(rel / f).as_posix() for f in files + links if not f.startswith(".")]
    return sorted(out)


def _listed(folder: Path) -> set[str]:
    """The files an earlier export's manifest lists (and the manifest); InputError when it is not one."""
    src = str(folder / "manifest.json")
    try:
        doc = loads_json_strict(read_received_bytes(folder / "manifest.json", what="manifest").decode("utf-8"),
                                source=src)
    except InputError:
        raise
    except (ValueError, RecursionError):
        doc = None
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, dict) or not all(isinstance(k, str) for k in files):
        raise InputError("the output folder holds a manifest.json that is not an export's (no 'files' object); "
                         "choose another --out", source=src, field="--out")
    return set(files) | {"manifest.json"}


def _remove(folder: Path, names: list[str]) -> None:
    """Unlink ``names`` (files or links, never followed) inside ``folder``, then the folders left empty."""
    root = os.path.realpath(folder)
    for name in names:
        parent = inside(os.path.dirname(name) or ".", root)
        if parent is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(parent, os.path.basename(name)))
    for here, _dirs, _files in os.walk(folder, topdown=False):  # deepest first
        rel = Path(here).relative_to(folder)
        if rel.parts and not any(p.startswith(".") for p in rel.parts) and not os.listdir(here):
            os.rmdir(here)


def _make_room(folder: Path, kind: str) -> list[str]:
    """Check what ``folder`` holds against ``kind`` (module docstring); returns the files removed."""
    held = _visible(folder)
    if not held:
        return []
    has = {n for n in _WHAT if n in held and stat.S_ISREG(os.lstat(folder / n).st_mode)}
    if kind == "certify" and "manifest.json" in has or kind == "site" and has:
        name = sorted(has)[-1]
        raise InputError(f"the output folder holds {_WHAT[name]} ({name}); write the {kind} output into a folder "
                         "of its own", source=str(folder), field="--out")
    if kind != "export":
        return []
    if "manifest.json" not in has:
        what = f"{_WHAT['certificate.json']} (certificate.json)" if has else f"files ({', '.join(held[:3])})"
        raise InputError(f"the output folder holds {what} that no earlier export lists; an export goes into an "
                         "empty folder or one holding an earlier export only", source=str(folder), field="--out")
    listed = _listed(folder)
    extra = [n for n in held if n not in listed]
    if extra:
        raise InputError(f"the output folder holds {len(extra)} file(s) its earlier export does not list "
                         f"({', '.join(extra[:3])}); nothing removed: choose another --out", source=str(folder),
                         field="--out")
    _remove(folder, held)
    return held


@contextlib.contextmanager
def claimed(out: str | os.PathLike, kind: str) -> Iterator[list[str]]:
    """Hold the output folder ``out`` for one writer of ``kind`` (module docstring): created when absent (a
    symlink refused, ``io.confine.out_folder``), locked, checked (an earlier export's files removed); yields the
    names removed. The lock is released when the block ends."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    made = not os.path.lexists(out)
    folder = out_folder(out)
    fd = _lock(folder)
    try:
        yield _make_room(folder, kind)
    except BaseException:
        if made:  # a run that failed leaves no folder it created empty (but for the lock)
            with contextlib.suppress(OSError):
                os.unlink(folder / LOCK)
                os.rmdir(folder)
        raise
    finally:
        os.close(fd)
