"""Only regular files are read, their size checked before reading (issue 23): a FIFO, ``/dev/zero``, a
symlink to ``/dev/zero``, a directory and an over-limit file, given as a certificate (``verify``), a protocol
file (``certify --protocol``), a manifest and a harness log (``ladder``), each get one line and exit 2.

The FIFO cases run the real ``viewcert`` in a subprocess with a timeout: a reader that waits for a writer
would hang the test, not fail it. The other cases run in this process (typer's runner)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.hostile.corpus import GOOD_CIF
from viewcert.cli import app
from viewcert.io.received import check_received_file, read_received_bytes

EXE = Path(sys.executable).parent / "viewcert"
NOT_REGULAR = "only regular files are read"
KINDS = ("fifo", "dev-zero", "symlink-to-dev-zero", "directory", "over-limit")
pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"),
                                reason="needs POSIX FIFOs and /dev/zero")


def _manifest(log: str) -> str:
    return (f'[study]\nname = "s"\ntask = "crystal_system"\nr1 = "1"\n\n[[input]]\npath = "{log}"\n'
            'harness = "native"\nmodel = "m"\nrung = "R4"\n')


def _special(path: Path, kind: str, content: str) -> None:
    """Make ``path`` the special file ``kind`` (over-limit: a regular file holding ``content``)."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":  # names that must keep a suffix (protocol files) get the symlink instead
        path.symlink_to("/dev/zero")
    elif kind == "symlink-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_text(content)


def _case(d: Path, target: str, kind: str) -> tuple[list[str], str]:
    """(argv, expected fragment) for one target (what the special file stands for) and kind."""
    (d / "a.cif").write_text(GOOD_CIF)
    limit = ["--max-json-bytes", "200"] if kind == "over-limit" else []
    big = "x" * 1000  # over the 200-byte limit; every other file of a case is under it
    if target == "certificate":
        p = Path("/dev/zero") if kind == "dev-zero" else d / "c.json"
        if p != Path("/dev/zero"):
            _special(p, kind, big)
        argv = [*limit, "verify", str(p), "--inputs", str(d)]
    elif target == "protocol":
        _special(d / "p.toml", kind, "# " + big)
        argv = [*limit, "certify", str(d / "a.cif"), "--protocol", str(d / "p.toml"), "--workers", "1",
                "--no-plots", "--out", str(d / "o")]
    elif target == "manifest":
        p = Path("/dev/zero") if kind == "dev-zero" else d / "m.toml"
        if p != Path("/dev/zero"):
            _special(p, kind, "# " + big)
        argv = [*limit, "ladder", "--manifest", str(p), "--out", str(d / "l")]
    else:  # a harness log named by a valid manifest
        log = "/dev/zero" if kind == "dev-zero" else str(d / "log.jsonl")
        if kind != "dev-zero":
            _special(Path(log), kind, big)
        (d / "m.toml").write_text(_manifest(log))
        argv = [*limit, "ladder", "--manifest", str(d / "m.toml"), "--out", str(d / "l")]
    return argv, "max_json_bytes" if kind == "over-limit" else NOT_REGULAR


def _one_line(code: int, out: str, fragment: str) -> None:
    errors = [line for line in out.splitlines() if line.startswith("viewcert: error:")]
    assert "Traceback" not in out and "MemoryError" not in out, out
    assert code == 2 and len(errors) == 1 and fragment in errors[0], out


TARGETS = ("certificate", "protocol", "manifest", "harness-log")


@pytest.mark.parametrize("target", TARGETS)
def test_a_fifo_is_refused_without_blocking(tmp_path, target):
    argv, fragment = _case(tmp_path, target, "fifo")
    try:
        r = subprocess.run([str(EXE), *argv], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"viewcert {' '.join(argv)} blocked on a FIFO")
    _one_line(r.returncode, r.stderr, fragment)
    assert "FIFO" in r.stderr


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "fifo"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_special_or_over_limit_file_is_one_line(tmp_path, target, kind):
    argv, fragment = _case(tmp_path, target, kind)
    res = CliRunner().invoke(app, argv)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    _one_line(res.exit_code, res.output, fragment)
    if kind in ("dev-zero", "symlink-to-dev-zero"):
        assert "character device" in res.output
    if kind == "directory":
        assert "is a directory" in res.output


def test_the_reader_checks_the_opened_descriptor(tmp_path):
    """Direct calls: the regular file reads exactly, the limit is inclusive (limits.py), a file one byte
    over is refused before reading, a FIFO with no writer is refused at once."""
    from viewcert.errors import InputError
    from viewcert.limits import Limits

    p = tmp_path / "ok.json"
    p.write_bytes(b"0123456789")
    assert read_received_bytes(p, limits=Limits(max_json_bytes=10)) == b"0123456789"
    assert check_received_file(p, limits=Limits(max_json_bytes=10)) == 10
    with pytest.raises(InputError, match="bytes of the file = 10 exceeds the limit max_json_bytes = 9"):
        read_received_bytes(p, limits=Limits(max_json_bytes=9))
    assert check_received_file(p, limits=Limits(max_json_bytes=9), sized=False) == 10  # a zip container
    os.mkfifo(tmp_path / "f")
    with pytest.raises(InputError, match="FIFO"):
        read_received_bytes(tmp_path / "f", what="certificate")
    with pytest.raises(InputError, match="no such file"):
        read_received_bytes(tmp_path / "absent")
