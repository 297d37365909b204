"""Confinement of received paths: the one place that decides whether a path named inside a received file may be
opened, and the one place that decides where a write (or a served file) may land.

Reading. A name a received file gives (a certificate's ``input``, ``location.input``, a protocol file, a complex
folder) is resolved with ``os.path.realpath`` (symlinks followed, ``..`` collapsed; a relative name against the
trusted folder) and used only when the real path lies inside the trusted folder (``inside``). Resolving opens
nothing. A folder is walked first (``check_tree``): any symlink in it that the readers would see must resolve
inside the trusted folder too. Where the received file records a SHA-256 of the bytes, they are hashed from a
checked descriptor (``io.received.received_sha256``) and must match (``check_sha256``) before anything parses
them. ``confined`` does all three.

Writing. An output folder is used by its real path; no write under it follows a symlink: every folder between
the output folder and a file is checked with ``lstat`` (a symlink, even one pointing inside, is refused: a
received folder that ships ``explore/views`` as a link cannot redirect a write), and the temporary file is
created with ``O_EXCL | O_NOFOLLOW`` and renamed over the target (a planted link at the target is replaced,
never written through). ``served`` is the same rule for a file a local server hands out.

Errors are ``InputError`` naming the file (or folder) and the field (the CLI: one line, exit 2).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from viewcert.errors import InputError
from viewcert.io.received import received_sha256

_HINT = "pass --inputs DIR to trust the folder that holds it (or --input PATH to vouch for the input)"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


# --- reading ------------------------------------------------------------------------------------------------

def trusted_root(folder: str | os.PathLike) -> str:
    """The real path of the trusted folder; InputError (field ``--inputs``) when it is not an existing folder."""
    try:
        root = os.path.realpath(os.fspath(folder))
    except (TypeError, ValueError):
        raise InputError(f"the trusted folder {folder!r} is not a path", field="--inputs") from None
    if not os.path.isdir(root):
        raise InputError(f"the trusted folder {root!r} is not an existing folder", field="--inputs")
    return root


def inside(name: str | os.PathLike, root: str) -> str | None:
    """The real path of ``name`` (relative: to ``root``, itself a real path) when it lies inside ``root``, else
    None. Nothing is opened."""
    try:
        real = os.path.realpath(os.path.join(root, os.fspath(name)))
    except (TypeError, ValueError):  # a NUL byte, not text
        return None
    return real if os.path.commonpath([real, root]) == root else None


def check_tree(top: str, root: str, *, source: str, field: str = "inputs.spec") -> None:
    """Every entry under the folder ``top`` that the readers would see (names not starting with '.') must
    resolve inside ``root``: a symlink pointing out is refused (InputError naming it), nothing read."""
    seen: set[str] = set()
    stack = [top]
    while stack:
        folder = stack.pop()
        if folder in seen:
            continue
        seen.add(folder)
        try:
            entries = list(os.scandir(folder))
        except OSError:  # unreadable: the loader reports it
            continue
        for e in entries:
            if e.name.startswith("."):
                continue
            real = os.path.realpath(e.path) if e.is_symlink() else e.path
            if e.is_symlink() and inside(real, root) is None:
                raise InputError(f"{e.path!r} is a symlink to {real!r}, outside the trusted folder {root!r} "
                                 f"(nothing read): {_HINT}", source=source, field=field)
            if os.path.isdir(real):
                stack.append(real)


def check_sha256(real: str, sha256: str, *, source: str, field: str) -> None:
    """InputError unless the regular file ``real`` hashes to ``sha256`` (hex), streamed from a checked
    descriptor before anything parses it."""
    got = received_sha256(real, what="file")
    if got != str(sha256).lower():
        raise InputError(f"{real!r} has SHA-256 {got}, not the recorded {sha256} (not read)", source=source,
                         field=field)


def confined(name: str | os.PathLike, root: str, *, source: str, field: str, sha256: str | None = None,
             what: str = "file") -> str:
    """The real path of ``name`` (a path a received file names) for reading: inside the trusted folder ``root``
    (symlinks followed), existing, a regular file or a folder whose entries stay inside ``root``, and, when
    ``sha256`` is given, a file with exactly those bytes. InputError naming ``source`` and ``field`` otherwise;
    nothing outside ``root`` is opened."""
    real = inside(name, root)
    if real is None:
        raise InputError(f"{what} {os.fspath(name)!r} lies outside the trusted folder {root!r} (nothing read): "
                         f"{_HINT}", source=source, field=field)
    try:
        mode = os.stat(real).st_mode
    except OSError:
        raise InputError(f"{what} {os.fspath(name)!r} is not in the trusted folder {root!r}", source=source,
                         field=field) from None
    if stat.S_ISDIR(mode):
        check_tree(real, root, source=source, field=field)
    elif not stat.S_ISREG(mode):
        raise InputError(f"{what} {real!r} is not a regular file or folder; only those are read", source=source,
                         field=field)
    elif sha256 is not None:
        check_sha256(real, sha256, source=source, field=field)
    return real


# --- writing and serving ------------------------------------------------------------------------------------

def out_folder(path: str | os.PathLike, *, field: str = "--out") -> Path:
    """The real path of the output folder ``path``, created when absent. Refused (InputError) when ``path``
    itself is a symlink (a received folder may ship one where an output goes) or exists and is not a folder."""
    p = Path(path)
    if p.is_symlink():
        raise InputError(f"the output folder is a symlink (to {os.path.realpath(p)!r}); no write follows a "
                         "symlink: give a real folder", source=str(p), field=field)
    if p.exists() and not p.is_dir():
        raise InputError("exists and is not a folder", source=str(p), field=field)
    p.mkdir(parents=True, exist_ok=True)
    return Path(os.path.realpath(p))


def _real_dirs(site: Path, rel_parts: tuple[str, ...]) -> Path:
    """``site / parts`` with every folder created or checked with ``lstat``: none may be a symlink."""
    here = site
    for part in rel_parts:
        if part in ("", ".", "..") or "/" in part or "\x00" in part:
            raise InputError(f"{part!r} is not a name inside the output folder", source=str(site), field="--out")
        here = here / part
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            try:
                os.mkdir(here)
                continue
            except FileExistsError:  # another writer (a site's worker) made it since: check what stands there
                st = os.lstat(here)
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            what = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a folder"
            raise InputError(f"{str(here)!r} is {what}; no write follows a symlink out of the output folder "
                             f"{str(site)!r}", source=str(here), field="--out")
    return here


def target(site: Path, rel: str) -> Path:
    """The path of the file ``rel`` (a '/'-separated name of the writer's own) inside the output folder ``site``
    (a real path, ``out_folder``), its folders created and checked: no symlink between ``site`` and the file."""
    *dirs, name = rel.split("/")
    if name in ("", ".", "..") or "\x00" in name:
        raise InputError(f"{name!r} is not a file name", source=str(site), field="--out")
    return _real_dirs(site, tuple(dirs)) / name


def put(site: Path, rel: str, data: bytes | str) -> Path:
    """Write ``data`` to the file ``rel`` inside the output folder ``site`` (``target``): a temporary file
    created with O_EXCL|O_NOFOLLOW (a planted link is never written through), then renamed over the target
    (a link standing there is replaced, not followed). No fsync: for derived output a rerun rewrites."""
    path = target(site, rel)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def served(site: str, path: str) -> str | None:
    """The real path of ``path`` (a file a server was asked for, under the real site folder ``site``) when it
    resolves inside ``site``, else None (a planted symlink out: not served)."""
    return inside(path, site)
