"""A file-access probe shared by the trust tests of received paths (issue 38): an audit hook on the events that
open a file or list a folder records the real path of each while a probe is active, and the CLI is run in this
process through it. ``under`` lists what was touched under a folder."""

from __future__ import annotations

import os
import sys
import threading

from typer.testing import CliRunner

EVENTS = ("open", "os.listdir", "os.scandir")
_SEEN: list[tuple[str, str]] | None = None  # (event, real path) while a probe is active


_AT = threading.local()  # the folder descriptor of an ``os.open(name, ..., dir_fd=fd)`` in progress
_os_open = os.open


def _open_at(path, flags, mode=0o777, *, dir_fd=None):
    """``os.open`` noting its ``dir_fd`` (the audit event of an open relative to a folder carries the name only)."""
    _AT.fd = dir_fd
    try:
        return _os_open(path, flags, mode, dir_fd=dir_fd)
    finally:
        _AT.fd = None


def _real(name: str, args: tuple) -> str:
    """The real path an event touches: an ``open`` with ``O_NOFOLLOW`` opens the last name itself, never what a link
    there points to (the kernel refuses a link), so only its folder is resolved."""
    if len(args) > 2 and isinstance(args[2], int) and args[2] & getattr(os, "O_NOFOLLOW", 0):
        return os.path.join(os.path.realpath(os.path.dirname(name) or "."), os.path.basename(name))
    return os.path.realpath(name)


def _hook(event: str, args: tuple) -> None:
    if _SEEN is not None and event in EVENTS and args and isinstance(args[0], (str, bytes, os.PathLike)):
        try:
            name, fd = os.fsdecode(args[0]), getattr(_AT, "fd", None)
            if fd is not None and not os.path.isabs(name):  # relative to that folder, not to the current one
                name = os.path.join(os.readlink(f"/proc/self/fd/{fd}"), name)
            _SEEN.append((event, _real(name, args)))
        except (TypeError, ValueError, OSError):
            pass


os.open = _open_at
sys.addaudithook(_hook)  # an audit hook cannot be removed: it records only while _SEEN is a list


def run(argv: list[str]) -> tuple[int, str, list[tuple[str, str]]]:
    """``viewcert ARGV`` in this process with the probe on: (exit code, output, [(event, real path)])."""
    global _SEEN
    from viewcert.cli import app

    _SEEN = []
    try:
        res = CliRunner().invoke(app, argv)
    finally:
        seen, _SEEN = _SEEN, None
    assert "Traceback" not in res.output, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res.exit_code, res.output, seen


def under(seen: list[tuple[str, str]], folder, events=EVENTS) -> list[str]:
    """Real paths under ``folder`` that an event of ``events`` touched."""
    root = os.path.realpath(folder)
    return [p for e, p in seen if e in events and os.path.commonpath([p, root]) == root]


def one_error(out: str) -> str:
    """The one ``viewcert: error:`` line of ``out`` (asserts there is exactly one)."""
    errors = [line for line in out.splitlines() if line.startswith("viewcert: error:")]
    assert len(errors) == 1, out
    return errors[0]
