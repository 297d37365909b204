"""``python tests/support/limited_run.py PEAKS LIMIT viewcert-args...``: run the viewcert CLI with its address space
limited to LIMIT bytes (``resource.setrlimit(RLIMIT_AS)``; 0: no limit) and write its peak memory to PEAKS when it
exits: ``VmHWM`` (the resident peak) and ``VmPeak`` (the address-space peak) of ``/proc/self/status``, in kB, as
JSON. Used by tests/trust/test_trust_bombs.py to run a hostile input and a normal one side by side."""

from __future__ import annotations

import atexit
import json
import resource
import sys

_PEAKS, _LIMIT = sys.argv[1], int(sys.argv[2])
if _LIMIT:
    resource.setrlimit(resource.RLIMIT_AS, (_LIMIT, _LIMIT))


def _write_peaks() -> None:
    with open("/proc/self/status", encoding="ascii") as fh:
        got = {k: int(v.split()[0]) for k, _, v in (line.partition(":") for line in fh) if k in ("VmHWM", "VmPeak")}
    with open(_PEAKS, "w", encoding="ascii") as fh:
        json.dump(got, fh)


atexit.register(_write_peaks)

if __name__ == "__main__":
    from viewcert.cli import app

    sys.argv = ["viewcert", *sys.argv[3:]]
    app()
