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

import contextlib
import contextvars
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from viewcert.errors import InputError
from viewcert.io.received import received_sha256
from viewcert.limits import active_limits

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

@dataclass(frozen=True)
class OutputRoot:
    """An output folder a run writes into: ``given`` the absolute path as named (it may pass through a link),
    ``real`` its real path, resolved once when the run began (``writing_into``)."""

    given: str
    real: str


#: the output folders of the runs in force (innermost last); a context, like the limits (``viewcert.limits``)
_ROOTS: contextvars.ContextVar[tuple[OutputRoot, ...]] = contextvars.ContextVar("viewcert_output_roots",
                                                                              default=())


def out_folder(path: str | os.PathLike, *, field: str = "--out", named: bool = False) -> Path:
    """The real path of the output folder ``path``, created when absent. ``named``: the user named it (``--out
    DIR``): a symlink there is resolved, once, and the folder it points to used. Not named (a default inside a
    received folder, ``FOLDER/explore``): a symlink there is refused (a received folder may ship one where an
    output goes). Refused (InputError) too when it exists and is not a folder."""
    p = Path(path)
    if p.is_symlink() and not named:
        raise InputError(f"the output folder is a symlink (to {os.path.realpath(p)!r}); no write follows a "
                         "symlink: give a real folder", source=str(p), field=field)
    if p.exists() and not p.is_dir():
        raise InputError("exists and is not a folder", source=str(p), field=field)
    if p.is_symlink() and not p.exists():
        raise InputError(f"the output folder is a dangling symlink (to {os.readlink(p)!r})", source=str(p),
                         field=field)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the output folder: {exc.strerror or exc}", source=str(p),
                         field=field) from None
    return Path(os.path.realpath(p))


@contextlib.contextmanager
def writing_into(path: str | os.PathLike, *, named: bool = True, field: str = "--out") -> Iterator[Path]:
    """Make ``path`` (``out_folder``) the output folder of the writes inside the block: every file written
    under it (``write_inside``, hence every ``io.atomic`` writer and ``put``) goes through real folders only,
    opened one by one without following a link (``O_NOFOLLOW``, ``openat``-style), so a symlink planted
    anywhere below it, before or during the run, is refused and never written through. Yields the folder's
    real path (resolved once: the run writes there and says so). Nested blocks add folders; worker processes
    get the folders in force with their work (``parallel.map_items``, ``roots_in_force``/``within``)."""
    real = out_folder(path, field=field, named=named)
    root = OutputRoot(os.path.abspath(os.fspath(path)), str(real))
    token = _ROOTS.set((*_ROOTS.get(), root))
    try:
        yield real
    finally:
        _ROOTS.reset(token)


def roots_in_force() -> tuple[OutputRoot, ...]:
    """The output folders in force (``writing_into``), to hand to worker processes (``within``)."""
    return _ROOTS.get()


@contextlib.contextmanager
def within(roots: tuple[OutputRoot, ...] | None) -> Iterator[None]:
    """The output folders ``roots`` in force inside the block (a worker's chunk); None: those in force."""
    if roots is None:
        yield
        return
    token = _ROOTS.set(tuple(roots))
    try:
        yield
    finally:
        _ROOTS.reset(token)


def _located(path: str | os.PathLike) -> tuple[OutputRoot, tuple[str, ...]] | None:
    """(the innermost output folder in force holding ``path``, the names from it to ``path``), or None."""
    a = os.path.abspath(os.fspath(path))
    best: tuple[int, OutputRoot, str] | None = None
    for root in _ROOTS.get():
        for base in (root.given, root.real):
            if (a == base or a.startswith(base.rstrip(os.sep) + os.sep)) and (best is None or len(base) > best[0]):
                best = (len(base), root, a[len(base):])
    if best is None:
        return None
    return best[1], tuple(p for p in best[2].split(os.sep) if p)


def _refused(here: str, site: str, dir_fd: int, name: str) -> InputError:
    """The error for ``name`` (in the folder ``dir_fd``, ``here`` its path) that is not a real folder."""
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        mode = 0
    if stat.S_ISLNK(mode):
        try:
            to = os.readlink(name, dir_fd=dir_fd)
        except OSError:
            to = "?"
        what = f"a symlink (to {to!r})"
    else:
        what = "not a folder"
    return InputError(f"{here!r} is {what}; no write follows a symlink inside the output folder {site!r}",
                      source=here, field="--out")


def _walk(site: str, parts: tuple[str, ...], *, create: bool) -> int:
    """A descriptor of the folder ``site/parts...``, each folder below ``site`` opened from its parent without
    following a link (created when absent and ``create``); InputError when one is a symlink or not a folder."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(site, flags)
    except OSError as exc:
        raise InputError(f"cannot open the output folder: {exc.strerror or exc}", source=site,
                         field="--out") from None
    here = site
    try:
        for part in parts:
            if part in (".", "..") or "\x00" in part:
                raise InputError(f"{part!r} is not a name inside the output folder", source=site, field="--out")
            here = os.path.join(here, part)
            try:
                nfd = os.open(part, flags | _NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):  # another writer (a worker) made it since
                    os.mkdir(part, 0o777, dir_fd=fd)
                try:
                    nfd = os.open(part, flags | _NOFOLLOW, dir_fd=fd)
                except OSError:
                    raise _refused(here, site, fd, part) from None
            except OSError as exc:
                if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise InputError(f"cannot open {here!r}: {exc.strerror or exc}", source=here,
                                     field="--out") from None
                raise _refused(here, site, fd, part) from None
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _parent_fd(path: str | os.PathLike, *, create: bool = True) -> tuple[int, str]:
    """(a descriptor of the folder that holds ``path``, the file's name): through ``_walk`` from the output
    folder in force that holds it, else (a path outside every run's output folder: a library call) its own
    folder, created as named."""
    hit = _located(path)
    if hit is not None and hit[1]:
        root, parts = hit
        return _walk(root.real, parts[:-1], create=create), parts[-1]
    p = Path(os.path.abspath(os.fspath(path)))
    if create:
        p.parent.mkdir(parents=True, exist_ok=True)
    return _walk(str(p.parent), (), create=False), p.name


def inner_folder(path: str | os.PathLike) -> Path:
    """The folder ``path`` inside a run's output folder, created when absent, every folder from the output
    folder down checked (none a symlink: InputError naming it, before any work uses it); outside every
    output folder in force, created as named. Returns ``path``."""
    hit = _located(path)
    if hit is None:
        Path(path).mkdir(parents=True, exist_ok=True)
    else:
        os.close(_walk(hit[0].real, hit[1], create=True))
    return Path(path)


def write_inside(path: str | os.PathLike, write: Callable[[BinaryIO], object], *, sync: bool = True) -> Path:
    """Write the file ``path`` through ``write(fh)`` (a binary file object): a temporary file beside it
    created ``O_EXCL|O_NOFOLLOW`` in its folder (reached by ``_walk``: no symlink followed from the output
    folder down), fsynced when ``sync``, then renamed over the target (a link standing there is replaced,
    never written through). A failure removes the temporary file and leaves the target as it was."""
    if isinstance(path, str | os.PathLike) and os.path.basename(os.fspath(path)) in ("", ".", ".."):
        raise InputError(f"{os.fspath(path)!r} is not a file name", field="--out")
    dfd, name = _parent_fd(path)
    try:
        if "\x00" in name or name in (".", ".."):
            raise InputError(f"{name!r} is not a file name", source=os.fspath(path), field="--out")
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISDIR(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
                raise InputError("a folder stands where this file is to be written; move or remove it",
                                 source=os.fspath(path))
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644,
                     dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as fh:
                write(fh)
                fh.flush()
                if sync:
                    os.fsync(fh.fileno())
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        if sync:
            with contextlib.suppress(OSError):
                os.fsync(dfd)
    finally:
        os.close(dfd)
    return Path(path)


def read_inside(path: str | os.PathLike, *, what: str = "file", limit: int | None = None) -> bytes:
    """The bytes of the file ``path`` that a run wrote inside its output folder and reads back (a resumed
    shard): reached through real folders only (``_walk``), opened ``O_NOFOLLOW|O_NONBLOCK``, a regular file
    read up to ``limit`` bytes (default ``--max-json-bytes``). FileNotFoundError when absent; InputError for a
    symlink (at the file or on the way), a FIFO or anything not a regular file."""
    cap = active_limits().max_json_bytes if limit is None else limit
    dfd, name = _parent_fd(path, create=False)
    try:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=dfd)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                raise
            if exc.errno == errno.ELOOP:
                raise InputError(f"the {what} is a symlink; it is not followed", source=os.fspath(path)) from None
            raise InputError(f"cannot read the {what}: {exc.strerror or exc}", source=os.fspath(path)) from None
    finally:
        os.close(dfd)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"the {what} is not a regular file", source=os.fspath(path))
        data = fh.read(cap + 1)
    if len(data) > cap:
        raise InputError(f"the {what} is larger than {cap} bytes (--max-json-bytes)", source=os.fspath(path))
    return data


def names_inside(folder: str | os.PathLike) -> list[str]:
    """The names in the folder ``folder`` inside a run's output folder, listed through real folders only
    (``_walk``); [] when it does not exist."""
    hit = _located(folder)
    try:
        fd = _walk(hit[0].real, hit[1], create=False) if hit is not None else \
            _walk(os.path.abspath(os.fspath(folder)), (), create=False)
    except (FileNotFoundError, InputError) as exc:
        if isinstance(exc, FileNotFoundError) or not os.path.lexists(folder):
            return []
        raise
    try:
        return sorted(e.name for e in os.scandir(fd))
    finally:
        os.close(fd)


def remove_inside(path: str | os.PathLike) -> None:
    """Unlink the file (or link, never followed) ``path`` inside a run's output folder, reached through real
    folders only; nothing when absent."""
    try:
        dfd, name = _parent_fd(path, create=False)
    except FileNotFoundError:
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dfd)
    finally:
        os.close(dfd)


def target(site: Path, rel: str) -> Path:
    """The path of the file ``rel`` (a '/'-separated name of the writer's own) inside the output folder ``site``
    (a real path, ``out_folder``), its folders created and checked: no symlink between ``site`` and the file."""
    *dirs, name = rel.split("/")
    if name in ("", ".", "..") or "\x00" in name:
        raise InputError(f"{name!r} is not a file name", source=str(site), field="--out")
    for part in dirs:
        if part in ("", ".", "..") or "\x00" in part:
            raise InputError(f"{part!r} is not a name inside the output folder", source=str(site), field="--out")
    os.close(_walk(str(site), tuple(dirs), create=True))
    return Path(site, *dirs, name)


def put(site: Path, rel: str, data: bytes | str) -> Path:
    """Write ``data`` to the file ``rel`` inside the output folder ``site`` (``target``) through
    ``write_inside`` without fsync (derived output a rerun rewrites): no symlink followed on the way, a planted
    link at the target replaced, never written through."""
    path = target(site, rel)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with _rooted(site):
        return write_inside(path, lambda fh: fh.write(raw), sync=False)


@contextlib.contextmanager
def _rooted(site: Path) -> Iterator[None]:
    """``site`` in force as an output folder (already real) for the block, unless one in force holds it."""
    if _located(site) is not None:
        yield
        return
    token = _ROOTS.set((*_ROOTS.get(), OutputRoot(str(site), str(site))))
    try:
        yield
    finally:
        _ROOTS.reset(token)


def served(site: str, path: str) -> str | None:
    """The real path of ``path`` (a file a server was asked for, under the real site folder ``site``) when it
    resolves inside ``site``, else None (a planted symlink out: not served)."""
    return inside(path, site)
