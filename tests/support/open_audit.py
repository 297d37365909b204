"""``python tests/support/open_audit.py LOG viewcert-args...``: run the viewcert CLI with an audit hook that appends the
real path of every file opened and every folder listed (the "open", "os.listdir" and "os.scandir" audit events)
to LOG, one ``event<TAB>path`` line each, flushed at once (the process may be ended by a signal). Used by
tests/trust/test_trust_open_audit.py; forked workers inherit the hook."""

from __future__ import annotations

import os
import sys

_LOG = open(sys.argv[1], "a", buffering=1, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115
_EVENTS = ("open", "os.listdir", "os.scandir")


def _hook(event: str, args: tuple) -> None:
    if event in _EVENTS and args and isinstance(args[0], (str, bytes, os.PathLike)):
        try:
            _LOG.write(f"{event}\t{os.path.realpath(os.fsdecode(args[0]))}\n")
        except (TypeError, ValueError):
            pass


sys.addaudithook(_hook)

if __name__ == "__main__":
    from viewcert.cli import app

    sys.argv = ["viewcert", *sys.argv[2:]]
    app()
