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

from tests.support.hostile.corpus import GOOD_CIF
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
    from viewcert.limits import Limits, using_limits

    p = tmp_path / "ok.json"
    p.write_bytes(b"0123456789")
    with using_limits(Limits(max_json_bytes=10)):
        assert read_received_bytes(p) == b"0123456789"
        assert check_received_file(p) == 10
    with using_limits(Limits(max_json_bytes=9)):
        with pytest.raises(InputError, match="bytes of the file = 10 exceeds the limit max_json_bytes = 9"):
            read_received_bytes(p)
        assert check_received_file(p, sized=False) == 10  # a zip container
    os.mkfifo(tmp_path / "f")
    with pytest.raises(InputError, match="FIFO"):
        read_received_bytes(tmp_path / "f", what="certificate")
    with pytest.raises(InputError, match="no such file"):
        read_received_bytes(tmp_path / "absent")


# ------------------------------------------------------------------ a swap between the check and the read
HARNESS = Path(__file__).resolve().parents[1] / "data" / "harness"
#: one log of every harness reader: (path under tests/data/harness, harness (None: detected), reader options)
LOGS = {
    "native-csv": ("native/beta_lab-13b_r3.csv", "native", {}),
    "native-jsonl": ("native/beta_lab-13b_noimage.jsonl", None, {}),
    "lmms-eval": ("lmms_eval/acme__vlm-7b/20250611_103212_samples_e3_crystal_system_r3.jsonl", None,
                  {"id_field": "material_id"}),
    "vlmevalkit-xlsx": ("vlmevalkit/AcmeVLM-7B_E3CrystalSystem_exact_matching_result.xlsx", None,
                        {"id_column": "material_id"}),
    "vlmevalkit-tsv": ("real/vlmevalkit/CrystalStub_E3CrystalStub_exact_matching_result.tsv", "vlmevalkit", {}),
    "inspect-eval": ("inspect/2025-06-11T10-32-12+00-00_e3-crystal-system-noimage_Hk3pQ2vR8sWm4nTzLj5bXc.eval",
                     None, {"scorer": "match"}),
    "inspect-json": ("inspect/2025-06-11T10-32-12+00-00_e3-crystal-system-noimage_Hk3pQ2vR8sWm4nTzLj5bXc.json",
                     None, {"scorer": "match"}),
    "study": ("study/frontier__beta__lab-13b__K3.json", "study", {}),
}
_AUDIT: dict = {"path": None, "events": []}


def _audit(event: str, args) -> None:  # audit hooks cannot be removed: inert unless a path is set
    if event == "open" and _AUDIT["path"] is not None and args and str(args[0]) == _AUDIT["path"]:
        _AUDIT["events"].append(args)


sys.addaudithook(_audit)


def _within(fn, fifo: Path, seconds: float = 30.0):
    """(result, error) of ``fn()`` in a thread; fails the test if it blocks (then releases the FIFO)."""
    import threading

    box: dict = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # a writer that closes: the blocked open returns
        pytest.fail("a reader re-opened a received file by name and blocked on the FIFO swapped in")
    return box.get("value"), box.get("error")


@pytest.mark.parametrize("name", sorted(LOGS))
def test_every_open_of_a_harness_log_is_a_checked_one(tmp_path, monkeypatch, name):
    """A harness log swapped for a FIFO after any one open (the size check, the parse, the provenance
    hash) is refused in one line, never waited on: every open of the file is the received reader's own
    (O_NONBLOCK, fstat on the descriptor), none by name from pandas, zipfile or open() (audit hook)."""
    import shutil

    import viewcert.io.received as received
    from viewcert.attribution.readers import read_file
    from viewcert.errors import InputError
    from viewcert.limits import DEFAULT_LIMITS, using_limits

    rel, harness, options = LOGS[name]
    src = HARNESS / rel
    shutil.copytree(src.parent, tmp_path / "log")  # lmms-eval's results file beside its samples too
    log = tmp_path / "log" / src.name
    real, calls, swap = received._open_regular, [], {"after": 0}

    def counting(path, what, sized, flags=0):
        out = real(path, what, sized, flags)
        if os.path.abspath(path) == str(log):
            calls.append(what)
            if len(calls) == swap["after"]:
                os.replace(tmp_path / "fifo", log)
        return out

    monkeypatch.setattr(received, "_open_regular", counting)

    def read():  # the default limits: a CLI run earlier in this process leaves its --max-* options active
        with using_limits(DEFAULT_LIMITS):
            return read_file(log, harness=harness, model="m", rung="R3", **options)

    _AUDIT.update(path=str(log), events=[])
    try:
        table = read()
    finally:
        events, _AUDIT["path"] = list(_AUDIT["events"]), None
    n = len(calls)
    # read once (detection, size check, parse and hash share one checked descriptor): nothing is opened again,
    # so no swap after it can be waited on; the loop below covers a reader that opens more than once
    assert len(table) > 0 and n == 1
    assert len(events) == n and all(e[1] is None and e[2] & os.O_NONBLOCK for e in events), events
    for k in range(1, n):
        calls.clear()
        swap["after"] = k
        os.mkfifo(tmp_path / "fifo")
        value, error = _within(read, log)
        assert value is None and isinstance(error, InputError) and "FIFO" in str(error), (k, value, error)
        log.unlink()
        shutil.copy(src, log)


@pytest.mark.parametrize("reader", ["constraints", "prompts", "export", "sidecar", "ccd-list", "study-layout"])
def test_attribution_and_item_lists_refuse_a_fifo_without_blocking(tmp_path, reader):
    """The readers written after the first pass (adherence, diagnostics, an export read back, the labels
    sidecar) and the item lists (a ccd:@FILE list, a study layout's JSON) go through the received reader:
    a FIFO is one InputError naming it, at once."""
    from viewcert.attribution.adherence import read_item_constraints
    from viewcert.attribution.diagnostics import read_prompts
    from viewcert.attribution.extraction import check_lattices
    from viewcert.attribution.shipped import load_shipped
    from viewcert.certify.inputs import read_json_file
    from viewcert.errors import InputError
    from viewcert.io.ccd import read_code_list

    fifo = tmp_path / ("benchmark.jsonl" if reader == "export" else "f.json")
    os.mkfifo(fifo)
    (tmp_path / "ids.csv").write_text("index,id,source_id\n0,a,a\n")
    calls = {"constraints": lambda: read_item_constraints(fifo), "prompts": lambda: read_prompts(fifo, ["a"]),
             "export": lambda: load_shipped(tmp_path), "sidecar": lambda: check_lattices({}, fifo),
             "ccd-list": lambda: read_code_list(fifo), "study-layout": lambda: read_json_file(fifo, lines=True)}
    value, error = _within(calls[reader], fifo)
    assert isinstance(error, InputError) and "FIFO" in str(error) and fifo.name in str(error), (value, error)
