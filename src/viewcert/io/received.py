"""Received files: the one reader for what someone else sent (certificates, protocol files, manifests,
harness logs), and the strict parsing rules they share.

- Only regular files are read. The file is opened with ``O_NONBLOCK`` (a FIFO opens at once instead of
  waiting for a writer) and the *descriptor* is ``fstat``-ed, so the check is on what was opened, symlinks
  included: a FIFO, a character or block device (``/dev/zero``), a socket or a directory is refused with one
  line before a byte is read.
- The size is checked against a limit (bytes) before reading, and the read itself is bounded (at most limit
  + 1 bytes), so a file that grows, or a pseudo-file whose ``st_size`` is 0, cannot exceed it either.
- JSON objects with a duplicate key are refused naming the key (never last-wins); TOML refuses them itself
  (``loads_toml`` quotes the line); unknown keys of a schema are refused naming the key and the nearest
  valid one (``difflib``).

Errors are ``InputError`` (the CLI prints ``viewcert: error: file F, field X: ...`` and exits 2).
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import hashlib
import io
import json
import os
import re
import stat
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from viewcert.errors import InputError
from viewcert.limits import active_limits

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))
_CHUNK = 1 << 20


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _open_regular(path: str | Path, what: str, sized: bool, flags: int = 0) -> tuple[int, int]:
    """(descriptor, size) of the regular file at ``path``, its size checked against ``max_json_bytes`` of the
    limits in force when ``sized``; InputError, nothing read, otherwise. ``flags``: more ``os.open`` flags
    (``O_NOFOLLOW``)."""
    src = str(path)
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
                     | flags)
    except FileNotFoundError:
        raise InputError(f"cannot read {what}: no such file ({what} not found)", source=src) from None
    except OSError as exc:
        if flags & os.O_NOFOLLOW and exc.errno == errno.ELOOP:
            raise InputError(f"the {what} is a symbolic link; it is not followed", source=src) from None
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", source=src) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"the {what} is {_kind(st.st_mode)}; only regular files are read", source=src)
        if sized:
            active_limits().check_received_bytes(st.st_size, what=what, source=src)
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def check_received_file(path: str | Path, *, what: str = "file", sized: bool = True) -> int:
    """Size (bytes) of the regular file at ``path``, checked against ``max_json_bytes`` of the limits in force
    unless ``sized`` is False (a zip container, whose members are checked apart), without reading it: for files
    a library then reads by name (pandas, zipfile)."""
    fd, size = _open_regular(path, what, sized)
    os.close(fd)
    return size


def read_received_bytes(path: str | Path, *, what: str = "file", follow_links: bool = True) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_json_bytes`` of the limits in force: checked on
    the descriptor before reading, and again while reading. ``follow_links`` False: a symlink at ``path`` is
    refused (``O_NOFOLLOW``), the file opened is the one read."""
    limits = active_limits()
    cap = limits.max_json_bytes
    fd, _ = _open_regular(path, what, True, 0 if follow_links else os.O_NOFOLLOW)
    chunks: list[bytes] = []
    total = 0
    try:
        while True:
            try:
                chunk = os.read(fd, min(_CHUNK, cap + 1 - total))
            except OSError as exc:
                raise InputError(f"cannot read {what}: {exc.strerror or exc}", source=str(path)) from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > cap:
                limits.check_received_bytes(total, what=what, source=str(path))
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_received_text(path: str | Path, *, what: str = "file") -> str:
    """UTF-8 text of the regular file at ``path`` (see ``read_received_bytes``); InputError naming the
    offset of the first byte that is not UTF-8."""
    raw = read_received_bytes(path, what=what)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"the {what} is not UTF-8 text (byte {exc.start})", source=str(path),
                         field="encoding") from None


def received_sha256(path: str | Path, *, what: str = "file") -> str:
    """SHA-256 (hex) of the regular file at ``path``, streamed from the checked descriptor (a FIFO or a device
    swapped in after an earlier check is refused, never waited on); no size limit (it reads in chunks)."""
    fd, _ = _open_regular(path, what, False)
    h = hashlib.sha256()
    with os.fdopen(fd, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def received_buffer(path: str | Path, *, what: str = "file") -> io.BytesIO:
    """The bytes of the regular file at ``path`` (``read_received_bytes``) as a file object, for a library
    that parses a file object (pandas, csv): what it parses is what was checked, never a second open by name."""
    return io.BytesIO(read_received_bytes(path, what=what))


@contextlib.contextmanager
def open_received_zip(path: str | Path, *, what: str = "file") -> Iterator[BinaryIO]:
    """A binary file object on the checked descriptor of the regular file at ``path``, a zip container (an
    Inspect ``.eval``, an xlsx): its members are checked (``Limits.check_zip``: sizes and ratios from the
    central directory) on that same descriptor before the caller decompresses anything from it."""
    fd, _ = _open_regular(path, what, False)
    with os.fdopen(fd, "rb") as fh:
        active_limits().check_zip(fh, source=str(path))
        fh.seek(0)
        yield fh


def _unique_pairs(source: str | None, where: str = ""):
    def hook(pairs: list[tuple[str, Any]]) -> dict:
        out: dict = {}
        for key, value in pairs:
            if key in out:
                raise InputError(f"{where}duplicate key {key!r} in one JSON object (refused, never last-wins)",
                                 source=source, field=key)
            out[key] = value
        return out

    return hook


def _too_deep(source: str | None, field: str | None = None) -> InputError:
    return InputError("nested deeper than the parser's recursion allows (arrays/objects; the limit max_nesting is "
                      f"{active_limits().max_nesting})", source=source, field=field)


def loads_json_strict(text: str | bytes, *, source: str | None = None) -> Any:
    """``json.loads`` refusing an object with a duplicate key (InputError naming the key and ``source``), and
    arrays/objects nested deeper than the parser recurses (InputError, one line, instead of a RecursionError).
    Malformed JSON raises ``json.JSONDecodeError`` as usual (a ``ValueError``)."""
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs(source))
    except RecursionError:
        raise _too_deep(source) from None


def loads_json_line(line: str | bytes, n: int, *, source: str | None = None) -> Any:
    """One line of a JSONL file (``n``: its 1-based number), refusing an object with a duplicate key:
    InputError "line N: duplicate key 'k' ..." naming the file and the key. Malformed JSON raises
    ``json.JSONDecodeError`` as usual (a ``ValueError``)."""
    return json.loads(line, object_pairs_hook=_unique_pairs(source, f"line {n}: "))


#: what a TOML file's brackets are counted without: strings (multi-line first) and comments
_TOML_SKIP = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*')


def toml_depth(text: str) -> int:
    """How deep arrays and inline tables nest in the TOML ``text`` (brackets outside strings and comments; a
    table header ``[[x]]`` counts 2), found without parsing it (the parser recurses)."""
    import numpy as np  # lazy: start-up (a received TOML file only)

    raw = np.frombuffer(_TOML_SKIP.sub("", text).encode("utf-8", "surrogatepass"), dtype=np.uint8)
    step = np.zeros(len(raw), dtype=np.int32)
    step[(raw == ord("[")) | (raw == ord("{"))] = 1
    step[(raw == ord("]")) | (raw == ord("}"))] = -1
    return int(np.cumsum(step).max(initial=0))


def iter_json_lines(text: str, *, source: str | None = None, field: str | None = None
                    ) -> Iterator[tuple[int, Any]]:
    """(1-based line number, value) of each non-blank line of the JSONL ``text``, parsed one at a time by
    ``loads_json_line`` (a duplicate key refused); malformed or too deeply nested JSON is an InputError
    "line N: not valid JSON (...)" naming ``source`` and ``field``."""
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = loads_json_line(line, n, source=source)
        except InputError:
            raise
        except (ValueError, RecursionError) as exc:
            raise InputError(f"line {n}: not valid JSON ({exc})", source=source, field=field) from None
        yield n, value


def loads_toml(text: str, *, source: str | None = None) -> dict:
    """``tomllib.loads`` (which refuses a key defined twice); its error becomes an InputError naming the file
    and quoting the offending line (first 80 characters), so a duplicate key is named. Its size is the received
    reader's (``max_json_bytes``); arrays and inline tables nested deeper than ``max_nesting`` are refused
    before it is parsed (``toml_depth``: ``tomllib`` recurses)."""
    active_limits().check_received_bytes(len(text.encode("utf-8", "surrogatepass")), what="TOML file", source=source)
    active_limits().check_nesting(toml_depth(text), source=source)
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise _too_deep(source) from None
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        lines = text.splitlines()
        n = int(m.group(1)) if m else 0
        quote = f": {lines[n - 1].strip()[:80]!r}" if 0 < n <= len(lines) else ""
        raise InputError(f"not valid TOML: {exc}{quote}", source=source) from None


def refuse_unknown_keys(keys: Iterable[str], valid: Iterable[str], *, source: str | None = None,
                        where: str = "") -> None:
    """InputError for the first key (in the given order) not in ``valid``, naming it, ``where`` it is
    (becomes the field) and the nearest valid key: "unknown key 'upp'; did you mean 'up'?"."""
    valid = tuple(valid)
    for key in keys:
        if key in valid:
            continue
        near = difflib.get_close_matches(str(key), valid, n=1)
        hint = f"did you mean {near[0]!r}?" if near else f"valid keys: {', '.join(sorted(valid))}"
        raise InputError(f"unknown key {key!r}; {hint}", source=source,
                         field=f"{where}.{key}" if where else str(key))
