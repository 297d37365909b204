"""Every file ``viewcert explore``, ``verify``, ``ladder`` and ``explore --serve`` open (issue 38, acceptance): each
runs in a subprocess under an audit hook (``tests/support/open_audit.py``: the "open", "os.listdir" and "os.scandir"
events, real paths) on a layout holding planted cases, and the test fails on any real path outside the trusted
folder ``T`` and the output folder ``OUT``, except the allow-list below.

The allow-list, and why each entry may be opened whatever a received file says:

- the Python installation running viewcert: ``sys.prefix``, ``sys.base_prefix``, ``sys.exec_prefix`` (the
  venv, the standard library, site-packages) and every ``sys.path`` entry (the worktree's ``src``): code and
  the data files packages ship (fonts, CCD, tables);
- the operating system: ``/proc``, ``/sys``, ``/dev`` (CPU counts, memory, ``/dev/null``, ``/dev/urandom``),
  ``/etc``, ``/usr``, ``/lib``, ``/lib64`` (shared libraries, fonts, time zone, locale);
- the caches the libraries keep for themselves: the subprocess's own ``TMPDIR`` (a fresh folder: verify's
  scratch export, matplotlib's and numba's temporary files), ``MPLCONFIGDIR``, and the user's XDG cache and
  configuration folders ``~/.cache`` and ``~/.config`` (ASE reads ``~/.config/ase/config.ini``), and the user's
  font folders ``~/.fonts`` and ``~/.local/share/fonts`` (matplotlib lists them when it builds its font cache).

None of them is a place a received file can name: ``X``, the folder the planted cases point to (beside ``T``
and ``OUT``, holding the real input and a secret), is in none, so a single open there fails the test."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.export_fixtures import CHFCLBR_XYZ, SMALL
from viewcert.formats.records import sealed

ROOT = Path(__file__).resolve().parents[2]
SYSTEM = ("/proc", "/sys", "/dev", "/etc", "/usr", "/lib", "/lib64")


def _env(tmp: Path) -> dict:
    scratch = tmp / "scratch"
    (scratch / "mpl").mkdir(parents=True, exist_ok=True)
    # no empty entry: an unset PYTHONPATH joined as "" would put the current folder on sys.path, and every lazy
    # import would list it (the `viewcert` command never has the current folder on its path)
    path = os.pathsep.join(p for p in [str(ROOT / "src"), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")] if p)
    return {**os.environ, "PYTHONPATH": path, "TMPDIR": str(scratch), "MPLCONFIGDIR": str(scratch / "mpl")}


def _allowed(tmp: Path) -> list[str]:
    probe = subprocess.run([sys.executable, "-c", "import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, "
                            "sys.exec_prefix, *sys.path]))"], capture_output=True, text=True, env=_env(tmp),
                           check=True)
    places = [p for p in json.loads(probe.stdout) if p] + list(SYSTEM)
    places += [os.path.expanduser(p) for p in ("~/.cache", "~/.config", "~/.fonts", "~/.local/share/fonts")]
    places += [str(tmp / "scratch"), str(tmp / "T"), str(tmp / "OUT")]
    return sorted({os.path.realpath(p) for p in places})


def _outside(log: Path, allowed: list[str]) -> list[str]:
    bad = []
    for line in log.read_text(encoding="utf-8", errors="surrogateescape").splitlines():
        _, _, path = line.partition("\t")
        if not any(os.path.commonpath([path, a]) == a for a in allowed):
            bad.append(line)
    return sorted(set(bad))


@pytest.fixture(scope="module")
def layout(tmp_path_factory) -> Path:
    """tmp/T: the input, a task export F, a copy F2 whose certificate names the input in X, a ladder manifest
    and its native results; tmp/X: the real input and a secret; tmp/OUT: outputs."""
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

    tmp = tmp_path_factory.mktemp("audit")
    t, x = tmp / "T", tmp / "X"
    t.mkdir()
    x.mkdir()
    (tmp / "OUT").mkdir()
    for d in (t, x):
        (d / "chfclbr.xyz").write_text(CHFCLBR_XYZ)
    (x / "secret.txt").write_text("secret\n")
    build_task_benchmark(t / "chfclbr.xyz", t / "F", TaskExportSettings.from_options(task="zoom", seed=1, **SMALL))
    shutil.copytree(t / "F", t / "F2")
    cert = json.loads((t / "F2" / "certificate.json").read_text())
    cert["input"] = str(x / "chfclbr.xyz")  # planted: the input outside T
    (t / "F2" / "certificate.json").write_text(json.dumps(sealed(cert)))
    (t / "F2" / "images" / "q0000_v1.png").unlink()
    os.symlink(x / "secret.txt", t / "F2" / "images" / "q0000_v1.png")  # planted: an image that is a link out
    rows = "model,rung,item_id,sample_k,raw_output,target\n" + "".join(
        f"m,R4,item{k},0,{'cubic' if k % 2 else 'hexagonal'},cubic\n" for k in range(6))
    (t / "results.csv").write_text(rows)
    (t / "m.toml").write_text("[study]\nr1 = '1'\n[[input]]\npath = 'results.csv'\nrung = 'R4'\nmodel = 'm'\n")
    return tmp


def _run(tmp: Path, name: str, argv: list[str]) -> tuple[subprocess.CompletedProcess, Path]:
    log = tmp / "scratch" / f"{name}.log"
    res = subprocess.run([sys.executable, str(ROOT / "tests" / "support" / "open_audit.py"), str(log), *argv], cwd=tmp / "T",
                         capture_output=True, text=True, timeout=600, env=_env(tmp))
    assert "Traceback" not in res.stderr, res.stderr
    return res, log


CASES = {  # name -> (argv with {T}, {OUT}, want exit code)
    "explore": (["explore", "{T}/F", "--out", "{OUT}/site", "--inputs", "{T}", "--workers", "1"], 0),
    "explore-planted": (["explore", "{T}/F2", "--out", "{OUT}/site2", "--inputs", "{T}", "--workers", "1"], 0),
    "verify": (["verify", "{T}/F/certificate.json", "--inputs", "{T}", "--workers", "1"], 0),
    "verify-planted": (["verify", "{T}/F2/certificate.json", "--inputs", "{T}", "--workers", "1"], 2),
    "ladder": (["ladder", "--manifest", "{T}/m.toml", "--n-boot", "200", "--out", "{OUT}/ladder"], 0),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_file_opened_lies_in_the_trusted_or_output_folder(layout, name):
    argv, want = CASES[name]
    argv = [a.replace("{T}", str(layout / "T")).replace("{OUT}", str(layout / "OUT")) for a in argv]
    res, log = _run(layout, name, argv)
    assert res.returncode == want, res.stdout + res.stderr
    assert log.stat().st_size > 0  # the probe saw the run
    assert _outside(log, _allowed(layout)) == []


def test_explore_trusts_only_the_explored_folder_by_default(layout):
    """Issue 58: a received export whose certificate names an input under the current folder (T) but outside the
    explored folder (T/F): without --inputs, explore opens nothing outside T/F (and the output folder). Before, the
    current folder was trusted and T/chfclbr.xyz was read. The item page still draws the consistent answers' poses:
    from the after view's sidecar the export wrote (issue 55: the explorer never replays the exporter), not from the
    input (main, which replays it, says instead that the poses are not drawn and why)."""
    site = layout / "OUT" / "site-default"
    res, log = _run(layout, "explore-default", ["explore", str(layout / "T" / "F"), "--out", str(site), "--workers",
                                                "1"])
    assert res.returncode == 0, res.stdout + res.stderr
    allowed = [a for a in _allowed(layout) if a != os.path.realpath(layout / "T")] + [os.path.realpath(layout / "T" / "F")]
    assert log.stat().st_size > 0 and _outside(log, allowed) == []
    page = (site / "items" / "0000.html").read_text()
    assert 'class="mk candidate" data-group="move z' in page and "poses are not drawn" not in page


def test_serve_opens_nothing_outside_the_site(layout):
    """``explore --serve`` on a site folder holding a planted link out: the pages are served, the link is not,
    and nothing outside T and OUT is opened while serving."""
    tmp = layout
    site = tmp / "OUT" / "served"
    site.mkdir()
    os.symlink(tmp / "X" / "secret.txt", site / "leak.txt")
    log = tmp / "scratch" / "serve.log"
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "open_audit.py"), str(log), "explore",
                             str(tmp / "T" / "F"), "--out", str(site), "--inputs", str(tmp / "T"), "--workers", "1",
                             "--serve", "--port", "0"], cwd=tmp / "T", stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(tmp))
    try:
        port = None
        deadline = time.monotonic() + 300
        while port is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("serving http://127.0.0.1:"):
                port = int(line.split(":")[2].split("/")[0])
        assert port, proc.stderr.read() if proc.poll() is not None else "no serving line"

        def get(path: str) -> int:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
                    return r.status
            except urllib.error.HTTPError as exc:
                return exc.code

        assert get("/index.html") == 200 and get("/items/0000.html") == 200 and get("/leak.txt") == 404
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert _outside(log, _allowed(tmp)) == []
