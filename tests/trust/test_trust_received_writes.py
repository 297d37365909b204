"""Where a write or a served file may land (issue 38, class 2): no write of ``explore`` and no file of ``--serve``
follows a symlink out of the output (site) folder (``viewcert.io.confine``: ``out_folder``, ``put``, ``served``).
Each case plants a symlink in a received folder: ``explore/`` itself (the default ``--out``), ``explore/views``,
a page where the site will write one, and a link in a site that a server is asked for."""

from __future__ import annotations

import os
import shutil
import threading
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.export_fixtures import CHFCLBR_XYZ, SMALL
from tests.support.trust_probe import one_error, run, under
from viewcert.errors import InputError
from viewcert.io.confine import out_folder, put


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

    d = tmp_path_factory.mktemp("writes_export")
    (d / "chfclbr.xyz").write_text(CHFCLBR_XYZ)
    build_task_benchmark(d / "chfclbr.xyz", d / "export", TaskExportSettings.from_options(task="zoom", seed=1, **SMALL))
    return d / "export"


def _received(export: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(F, X): a received copy of the export and an empty folder outside it that nothing may be written to."""
    f, x = tmp_path / "received", tmp_path / "outside"
    shutil.copytree(export, f)
    x.mkdir()
    return f, x


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_planted_explore_symlink_is_refused_and_nothing_written_outside(export, tmp_path):
    f, x = _received(export, tmp_path)
    os.symlink(x, f / "explore")  # the default --out of `viewcert explore F`
    code, out, seen = run(["explore", str(f), "--workers", "1"])
    err = one_error(out)
    assert code == 2 and "symlink" in err and "field --out" in err, out
    assert _files(x) == []


def test_a_planted_views_symlink_is_refused_and_nothing_written_outside(export, tmp_path):
    f, x = _received(export, tmp_path)
    (f / "explore").mkdir()
    os.symlink(x, f / "explore" / "views")
    code, out, _ = run(["explore", str(f), "--workers", "1"])
    err = one_error(out)
    assert code == 2 and "symlink" in err and "views" in err, out
    assert _files(x) == []


def test_a_planted_page_symlink_is_replaced_never_written_through(export, tmp_path):
    """A link standing where a page or its temporary file goes is replaced by the page; its target keeps its
    bytes."""
    f, x = _received(export, tmp_path)
    (x / "victim.html").write_text("untouched")
    (f / "explore" / "items").mkdir(parents=True)
    os.symlink(x / "victim.html", f / "explore" / "items" / "0000.html")
    os.symlink(x / "victim.html", f / "explore" / "items" / ".0000.html.tmp")
    os.symlink(x / "victim.html", f / "explore" / "index.html")
    code, out, seen = run(["explore", str(f), "--workers", "1"])
    assert code == 0, out
    assert (x / "victim.html").read_text() == "untouched" and _files(x) == ["victim.html"]
    for rel in ("items/0000.html", "index.html"):
        p = f / "explore" / rel
        assert not p.is_symlink() and p.read_text().startswith("<!doctype html>")
    assert under(seen, x, ("open",)) == []


def test_put_and_out_folder_refuse_links_on_the_way(tmp_path):
    x = tmp_path / "outside"
    x.mkdir()
    os.symlink(x, tmp_path / "link")
    with pytest.raises(InputError, match="symlink"):
        out_folder(tmp_path / "link")
    site = out_folder(tmp_path / "site")
    os.symlink(x, site / "a")
    with pytest.raises(InputError, match="symlink"):
        put(site, "a/b.txt", "x")
    with pytest.raises(InputError, match="not a name"):
        put(site, "../b.txt", "x")
    put(site, "c/d.txt", "x")
    assert (site / "c" / "d.txt").read_text() == "x" and _files(x) == []


def _get(port: int, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_serve_does_not_serve_through_a_planted_symlink(tmp_path):
    from viewcert.explore.serve import confined_handler

    site, x = tmp_path / "site", tmp_path / "outside"
    (site / "items").mkdir(parents=True)
    x.mkdir()
    (x / "secret.txt").write_text("secret")
    (x / "index.html").write_text("secret")
    (site / "index.html").write_text("<!doctype html>")
    (site / "items" / "0000.html").write_text("<!doctype html>")
    os.symlink(x / "secret.txt", site / "leak.txt")
    os.symlink(x, site / "plots")
    os.symlink(x / "index.html", site / "items" / "index.html")
    with ThreadingHTTPServer(("127.0.0.1", 0), confined_handler(site)) as httpd:
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        port = httpd.server_address[1]
        try:
            assert _get(port, "/index.html") == 200 and _get(port, "/items/0000.html") == 200
            for path in ("/leak.txt", "/plots/secret.txt", "/plots/", "/items/", "/../outside/secret.txt"):
                assert _get(port, path) == 404, path
        finally:
            httpd.shutdown()


def test_serve_says_nothing_when_a_client_disconnects_mid_response(export, tmp_path):
    """``explore --serve``: a client that closes its connection while a large file is being sent (a closed tab)
    is not an error: no traceback (before: a BrokenPipeError/ConnectionResetError traceback on stderr), and the
    server goes on serving."""
    import signal
    import socket
    import struct
    import subprocess
    import sys

    site = tmp_path / "site"
    site.mkdir()
    (site / "big.bin").write_bytes(b"\0" * (32 << 20))
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), os.environ.get("PYTHONPATH", "")])}
    cli = "import sys; from viewcert.cli import app; sys.argv[0] = 'viewcert'; app()"
    proc = subprocess.Popen([sys.executable, "-c", cli, "explore", str(export), "--out", str(site),
                             "--workers", "1", "--serve", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        port = None
        while port is None:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            if line.startswith("serving http://127.0.0.1:"):
                port = int(line.split(":")[2].split("/")[0])
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
                s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
                assert s.recv(4096)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # reset, mid-response
        assert _get(port, "/index.html") == 200
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err and "Error" not in err, err
