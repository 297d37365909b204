"""Output folders: one writer at a time, one run per folder, and every write through real folders.

``claimed(out, kind, identity=..., force=...)`` is held for the whole of a command that writes a folder (every
command with ``--out``: ``kind`` is the command, ``export`` for ``build-benchmark``, ``site`` for ``explore``):

- **Where.** The folder the user names is resolved once (it may be a symlink: a scratch folder linked into a
  project) and the run writes into that real folder and says so (``Claim.folder``); a default folder inside a
  received folder (``FOLDER/explore``, ``EXPORT/ladder``: ``named=False``) may not be a symlink. Every file the
  run writes below it goes through ``io.confine.writing_into``: no symlink anywhere below the folder is
  followed, one planted before or during the run is refused (one line naming it, exit 2).
- **A lock.** ``OUT/.viewcert.lock`` is created (``O_NOFOLLOW``: a planted link is refused) and locked with
  ``fcntl.flock`` (exclusive, non-blocking). A second writer into the same folder is refused in one line while the
  first runs; the kernel releases the lock when its process ends, however it ends, so no stale lock remains.
- **One run per folder.** A run leaves a record, ``OUT/.viewcert.run.json``: its command, its identity (a
  SHA-256 of what decides its outputs: the input as given and every setting) and the files it wrote. What the
  folder already holds (files and links whose names do not start with '.'; hidden entries such as ``.shards``,
  the lock and the record are viewcert's own) decides:

  | the folder holds | then |
  |---|---|
  | nothing, or only files no run wrote (no record, none of a command's own outputs) | written (an export: refused unless empty, below) |
  | the record of the same command with the same identity | rewritten, resumed (``.shards``) |
  | the record of the same command, another identity; or, without a record, that command's own outputs (``certificate.json`` of certify and of the main job, ``manifest.json`` of an export, ``index.html`` of a site) | refused; ``--force``: exactly that run's files are removed first (the record's list, an export's ``manifest.json`` list, a certify output's, main job's or site's own names), nothing else |
  | another command's outputs (its record, ``manifest.json``, ``certificate.json``) | refused, ``--force`` or not: each command writes into a folder of its own |

  An export goes into a folder holding nothing else: files neither the record nor the manifest lists are refused.

Every refusal is an ``InputError`` naming the folder and ``--out`` (the CLI: one line, exit 2), before anything is
written or removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viewcert.errors import InputError
from viewcert.io.atomic import json_dumps, write_text_atomic
from viewcert.io.confine import inside, writing_into
from viewcert.io.received import loads_json_strict, read_received_bytes

LOCK = ".viewcert.lock"
RECORD = ".viewcert.run.json"
RECORD_FORMAT = "viewcert-run/1"
#: every command that writes a folder, by the kind it claims it as
KINDS = ("export", "certify", "site", "observe", "run", "render", "design", "margin", "sweep", "ladder", "learn",
         "audit-extraction")
_WHAT = {"manifest.json": "an export", "certificate.json": "a certify output or an export"}
#: without a record, the files that mark a folder as one command's output, and (``--force``) the names removed
_OWN = {
    "certify": ("certificate.json", ("certificate.json", "items.csv", "summary.txt", "disagreements.csv",
                                     "label_audit.csv", "label_audit.md", "run.json", "ceiling_by_system.png",
                                     "phantoms.png", "delta_star.png", "items/")),
    "site": ("index.html", ("index.html", "map.html", "summary.html", "items/", "thumbs/", "views/", "assets/",
                            "plots/", "scenes/")),
    "run": ("certificate.json", ("certificate.json", "items.csv", "summary.txt", "disagreements.csv", "run.json",
                                 "ceiling_by_system.png", "phantoms.png", "delta_star.png", "gallery.png",
                                 "observations/", "explore/")),
}


@dataclass
class Claim:
    """What ``claimed`` holds: the real output ``folder`` (resolved once), ``shown`` the folder as the run names
    it in its lines (as given, or its real path when it was given through a symlink), the names ``removed``
    before the run (``--force``), and the files present before it that are not its own (``kept``)."""

    folder: Path
    shown: Path
    removed: list[str] = field(default_factory=list)
    kept: set[str] = field(default_factory=set)


def identity_of(kind: str, settings: Any) -> str:
    """The SHA-256 (hex) of a run's command and the JSON of ``settings`` (what decides its outputs)."""
    blob = json_dumps({"command": kind, "settings": settings}, indent=None, allow_nan=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


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


def _record(folder: Path) -> dict | None:
    """The run record of ``folder`` (``RECORD``), None when there is none or it is not one."""
    if not os.path.lexists(folder / RECORD):
        return None
    try:
        doc = loads_json_strict(read_received_bytes(folder / RECORD, what="run record", follow_links=False)
                                .decode("utf-8"), source=str(folder / RECORD))
    except (InputError, ValueError, RecursionError):
        return None
    ok = (isinstance(doc, dict) and doc.get("format") == RECORD_FORMAT and isinstance(doc.get("command"), str)
          and isinstance(doc.get("identity"), str) and isinstance(doc.get("files"), list)
          and all(isinstance(f, str) for f in doc["files"]))
    return doc if ok else None


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


def _own_names(held: list[str], names: tuple[str, ...]) -> list[str]:
    """The files of ``held`` a command's own names (``_OWN``; ``x/`` a folder) cover."""
    return [h for h in held if h in names or any(n.endswith("/") and h.startswith(n) for n in names)]


def _refuse(folder: Path, text: str) -> InputError:
    return InputError(text, source=str(folder), field="--out")


def _make_room(folder: Path, kind: str, identity: str | None, force: bool) -> Claim:
    """Check what ``folder`` holds against a run of ``kind`` (module docstring); returns the claim."""
    claim = Claim(folder, folder)
    held = _visible(folder)
    rec = _record(folder)
    if not held:
        return claim
    if rec is not None and not set(rec["files"]) & set(held):  # a run that wrote nothing (or all removed since)
        rec = None
    again = "; --force replaces it (exactly its files are removed)"
    if rec is not None and rec["command"] != kind:
        raise _refuse(folder, f"the output folder holds the output of another command ({rec['command']}); write "
                              f"the {kind} output into a folder of its own")
    has = {n for n in _WHAT if n in held and stat.S_ISREG(os.lstat(folder / n).st_mode)} if rec is None else set()
    if kind != "export" and "manifest.json" in has or kind not in ("certify", "export", "run") and has:
        name = sorted(has)[-1]
        raise _refuse(folder, f"the output folder holds {_WHAT[name]} ({name}); write the {kind} output into a "
                              "folder of its own")
    ours = set(rec["files"]) if rec is not None else set()
    if rec is not None:
        if rec["identity"] == identity:  # the same run again: rewritten, resumed
            claim.kept = set(held) - ours
            if kind == "export":
                _export_only(folder, held, ours | _listed_or_none(folder))
            return claim
        if not force:
            raise _refuse(folder, f"the output folder holds the output of another {kind} run (other input or "
                                  f"settings: {', '.join(sorted(ours)[:3]) or 'its record'}){again}")
        mine = sorted(h for h in held if h in ours)
    elif kind == "export" and "manifest.json" in has:
        listed = _listed(folder)
        _export_only(folder, held, listed)  # a file it does not list: refused, --force or not
        if not force:
            raise _refuse(folder, f"the output folder holds an earlier export (manifest.json){again}")
        mine = sorted(listed & set(held))
    elif kind == "export":
        what = f"{_WHAT['certificate.json']} (certificate.json)" if has else f"files ({', '.join(held[:3])})"
        raise _refuse(folder, f"the output folder holds {what} that no earlier export lists; an export goes "
                              "into an empty folder or one holding an earlier export only")
    elif kind in _OWN and _OWN[kind][0] in held and stat.S_ISREG(os.lstat(folder / _OWN[kind][0]).st_mode):
        if not force:
            raise _refuse(folder, f"the output folder holds an earlier {kind} output ({_OWN[kind][0]}){again}")
        mine = _own_names(held, _OWN[kind][1])
    else:  # files no run of this command wrote: left alone
        claim.kept = set(held)
        return claim
    if kind == "export":
        _export_only(folder, held, set(mine) | ours)
    _remove(folder, mine)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(folder / RECORD)
    claim.removed = mine
    claim.kept = set(held) - set(mine)
    return claim


def _listed_or_none(folder: Path) -> set[str]:
    return _listed(folder) if (folder / "manifest.json").is_file() else set()


def _export_only(folder: Path, held: list[str], listed: set[str]) -> None:
    """An export's folder holds only what an earlier export (its record or manifest) lists."""
    extra = [n for n in held if n not in listed]
    if extra:
        raise _refuse(folder, f"the output folder holds {len(extra)} file(s) its earlier export does not list "
                              f"({', '.join(extra[:3])}); nothing removed: choose another --out")


@contextlib.contextmanager
def claimed(out: str | os.PathLike, kind: str, *, identity: Any = None, force: bool = False,
            named: bool = True) -> Iterator[Claim]:
    """Hold the output folder ``out`` for one run of ``kind`` (module docstring): resolved once (``named``: the
    user named it, a symlink there is followed; a default inside a received folder may not be one), created
    when absent, locked, checked against what it holds (``identity``: the JSON-able settings that decide the
    outputs; ``force``: replace another run of this command), every write below it through real folders
    (``io.confine.writing_into``). Yields the ``Claim``; when the block ends, the record of the run is written
    and the lock released."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    made = not os.path.lexists(out)
    with writing_into(out, named=named) as folder:
        shown = Path(out) if os.path.abspath(out) == str(folder) or os.path.realpath(out) == os.path.abspath(out) \
            else folder
        fd = _lock(folder)
        claim = None
        try:
            claim = _make_room(folder, kind, identity_of(kind, identity), force)
            claim.shown = shown
            yield claim
        except BaseException:
            if made:  # a run that failed leaves no folder it created empty (but for the lock)
                with contextlib.suppress(OSError):
                    os.unlink(folder / LOCK)
                    os.rmdir(folder)
            raise
        finally:
            if claim is not None and os.path.isdir(folder):  # an interrupted run too: a rerun resumes it
                _write_record(folder, kind, identity_of(kind, identity), claim)
            os.close(fd)


def _write_record(folder: Path, kind: str, digest: str, claim: Claim) -> None:
    """The run record: its command, identity and the files it wrote (those present now that were not kept)."""
    files = [f for f in _visible(folder) if f not in claim.kept]
    with contextlib.suppress(OSError, InputError):
        write_text_atomic(folder / RECORD, json_dumps({"format": RECORD_FORMAT, "command": kind, "identity": digest,
                                                       "files": files}))


def record_files(folder: str | os.PathLike) -> list[str] | None:
    """The files the run record of ``folder`` lists (None: no record)."""
    rec = _record(Path(folder))
    return None if rec is None else list(rec["files"])


__all__ = ["KINDS", "LOCK", "RECORD", "Claim", "claimed", "identity_of", "record_files"]

