"""``python tests/support/open_audit.py LOG viewcert-args...``: run the viewcert CLI with an audit hook that appends the
real path of every file opened and every folder listed (the "open", "os.listdir" and "os.scandir" audit events)
to LOG, one ``event<TAB>path`` line each, flushed at once (the process may be ended by a signal); an open relative to
a folder descriptor (``os.open(name, ..., dir_fd=fd)``) is logged at the folder's real path. Used by
tests/trust/test_trust_open_audit.py; forked workers inherit the hook."""

from __future__ import annotations

import os
import sys
import threading

_LOG = open(sys.argv[1], "a", buffering=1, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115
_EVENTS = ("open", "os.listdir", "os.scandir")
_AT = threading.local()  # the folder descriptor of an ``os.open(name, ..., dir_fd=fd)`` in progress
_os_open = os.open


def _open_at(path, flags, mode=0o777, *, dir_fd=None):
    """``os.open`` noting its ``dir_fd``: the audit event of an open relative to a folder descriptor (viewcert's
    writer opens every folder below an output folder that way) carries the bare name only."""
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
    if event in _EVENTS and args and isinstance(args[0], (str, bytes, os.PathLike)):
        try:
            name, fd = os.fsdecode(args[0]), getattr(_AT, "fd", None)
            if fd is not None and not os.path.isabs(name):  # relative to that folder, not to the current one
                name = os.path.join(os.readlink(f"/proc/self/fd/{fd}"), name)
            _LOG.write(f"{event}\t{_real(name, args)}\n")
        except (TypeError, ValueError, OSError):
            pass


os.open = _open_at
sys.addaudithook(_hook)

if __name__ == "__main__":
    from viewcert.cli import app

    sys.argv = ["viewcert", *sys.argv[2:]]
    app()
