"""A bound before every decode (issue 58, class 3, and its deep-TOML traceback): each bomb is run through the command
line in a subprocess whose address space is limited to twice the normal run's peak (``resource.setrlimit``,
``tests/support/limited_run.py``), beside the same command on a normal input of the same kind. Each gives one line
on stderr naming the file, exit 2, no traceback and no warning of a library, and a resident peak under twice the
normal run's.

- a Parquet database whose ids are one 16 MiB dictionary string used by 150 rows (a 6 KB file that decoded to 2.4 GB
  and ended in MemoryError): ``io.parquet`` counts the decoded bytes before any value is made;
- an Inspect ``.eval`` found inside an export whose ``header.json`` says 1,000 bytes and inflates to 300 MB (a
  ``BadZipFile`` naming no log, at an 842 MB peak): inflated to its stated size plus one byte, then refused;
- a PNG declaring 12,000 x 12,000 px in an export the explorer reads (Pillow's ``DecompressionBombWarning`` came
  first): the header is read before Pillow opens the file;
- a settings file with an array nested 5,000 deep (a 1,000-line RecursionError, exit 1): its depth is counted
  before ``tomllib`` parses it (``max_nesting``).

Each fails on the main branch before issue 58 (a MemoryError, a traceback, a second stderr line or a line that
names no file)."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.export_fixtures import CHFCLBR_XYZ, SMALL
from viewcert.elements import symbols
from viewcert.io.builtin import builtin

ROOT = Path(__file__).resolve().parents[2]
MiB = 1 << 20
QUICK = ["--protocol", "axes-3", "--tiling", "1,1,1", "--workers", "1", "--no-cross-check", "--no-plots"]


def _run(tmp: Path, name: str, argv: list[str], limit: int = 0) -> tuple[subprocess.CompletedProcess, dict]:
    """``viewcert ARGV`` in a subprocess under an address-space ``limit`` (bytes; 0: none): (result, peaks in kB)."""
    peaks = tmp / f"{name}.peaks.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    res = subprocess.run([sys.executable, str(ROOT / "tests" / "support" / "limited_run.py"), str(peaks), str(limit),
                          *argv], cwd=tmp, capture_output=True, text=True, timeout=600, env=env)
    return res, json.loads(peaks.read_text()) if peaks.is_file() else {}


def _bounded(tmp: Path, normal: list[str], bomb: list[str], names: str) -> str:
    """Run ``normal``, then ``bomb`` under twice the normal run's address-space peak: the bomb's one stderr line
    (asserting exit 2, no traceback, no other line, the file ``names`` named, and its resident peak under twice
    the normal run's)."""
    res, calm = _run(tmp, "normal", normal)
    assert calm, res.stderr
    res, peaks = _run(tmp, "bomb", bomb, limit=2 * calm["VmPeak"] * 1024)
    lines = res.stderr.splitlines()
    assert res.returncode == 2 and "Traceback" not in res.stderr and len(lines) == 1, res.stderr[-3000:]
    assert lines[0].startswith("viewcert: error: ") and names in lines[0], lines
    assert peaks and peaks["VmHWM"] < 2 * calm["VmHWM"], (peaks, calm)
    return lines[0]


# --- a Parquet dictionary bomb -------------------------------------------------------------------------------------

def _database(path: Path, ids) -> Path:
    ss = {s.identifier.removeprefix("aflow:"): s for s in builtin("builtin:prototypes")}
    names = ["A_cF4_225_a", "AB_cF8_225_a_b", "A_hP2_194_c"]
    n = len(ids)
    rows = [ss[names[k % 3]] for k in range(n)]
    pq.write_table(pa.table({"immutable_id": ids, "lattice_vectors": [s.lattice.tolist() for s in rows],
                             "cartesian_site_positions": [s.positions.tolist() for s in rows],
                             "species_at_sites": [list(symbols(s.numbers)) for s in rows]}), path, compression="zstd")
    return path


def test_a_parquet_dictionary_string_bomb_is_one_line_in_bounded_memory(tmp_path):
    normal = _database(tmp_path / "normal.parquet", ["a", "b", "c"])
    big = pa.DictionaryArray.from_arrays(pa.array([0] * 150, pa.int32()), pa.array(["x" * (16 * MiB)]))
    bomb = _database(tmp_path / "bomb.parquet", big)
    assert bomb.stat().st_size < 64 * 1024  # a few KB on disk
    line = _bounded(tmp_path, ["certify", str(normal), *QUICK, "--out", "n"],
                    ["certify", str(bomb), *QUICK, "--out", "b"], "bomb.parquet")
    assert "field immutable_id" in line and "max_value_bytes" in line


# --- an Inspect .eval whose member lies about its size -------------------------------------------------------------

def _zip_one(name: str, comp: bytes, crc: int, size: int) -> bytes:
    """A zip archive of one deflated member ``name`` whose headers state ``crc`` and ``size``."""
    nm = name.encode()
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, len(comp), size, len(nm), 0) + nm
    cd = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, crc, len(comp), size, len(nm), 0, 0,
                     0, 0, 0, 0) + nm
    body = local + comp
    return body + cd + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(cd), len(body), 0)


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

    d = tmp_path_factory.mktemp("bomb_export")
    (d / "chfclbr.xyz").write_text(CHFCLBR_XYZ)
    build_task_benchmark(d / "chfclbr.xyz", d / "export", TaskExportSettings.from_options(task="zoom", seed=1, **SMALL))
    return d / "export"


def test_a_lying_eval_member_is_one_line_naming_the_log_in_bounded_memory(export, tmp_path):
    honest = json.dumps({"version": 2, "status": "success", "eval": {"task": "viewcert_zoom", "model": "m"}}).encode()
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    normal = tmp_path / "normal"
    shutil.copytree(export, normal)
    (normal / "logs" / "dry-run").mkdir(parents=True)
    (normal / "logs" / "dry-run" / "x.eval").write_bytes(
        _zip_one("header.json", c.compress(honest) + c.flush(), zlib.crc32(honest), len(honest)))
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = b"{" + b" " * 999
    comp = c.compress(head) + b"".join(c.compress(b" " * MiB) for _ in range(300)) + c.flush()  # 300 MB inflated
    bomb = tmp_path / "bomb"
    shutil.copytree(export, bomb)
    (bomb / "logs" / "dry-run").mkdir(parents=True)
    (bomb / "logs" / "dry-run" / "x.eval").write_bytes(_zip_one("header.json", comp, zlib.crc32(head), 1000))
    # the normal run reads the honest log and stops at the arms it lacks (exit 2): a baseline below a whole ladder's
    # peak (no scoring, no report), so twice it is the stricter bound
    line = _bounded(tmp_path, ["ladder", str(normal), "--n-boot", "200"], ["ladder", str(bomb), "--n-boot", "200"],
                    "x.eval")
    assert "field header.json" in line and "inflates beyond its stated size of 1,000 bytes" in line


# --- a PNG declaring 12,000 x 12,000 px -----------------------------------------------------------------------------

def _png_header(width: int, height: int) -> bytes:
    """A PNG signature and IHDR chunk declaring ``width`` x ``height`` RGB px, then an empty IDAT and IEND."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b""))


def test_a_png_declaring_12k_by_12k_is_one_line_before_pillow(export, tmp_path):
    normal, bomb = tmp_path / "normal", tmp_path / "bomb"
    shutil.copytree(export, normal)
    shutil.copytree(export, bomb)
    (bomb / "images" / "q0000_v0.png").write_bytes(_png_header(12_000, 12_000))
    line = _bounded(tmp_path, ["explore", str(normal), "--workers", "1"], ["explore", str(bomb), "--workers", "1"],
                    "q0000_v0.png")
    assert "12000x12000" in line and "max_pixels" in line


# --- a settings file nested 5,000 deep ------------------------------------------------------------------------------

def test_a_settings_file_nested_5000_deep_is_one_line(tmp_path):
    (tmp_path / "normal.toml").write_text("[certify]\nplots = false\n")
    (tmp_path / "deep.toml").write_text("[certify]\nplots = " + "[" * 5000 + "]" * 5000 + "\n")
    line = _bounded(tmp_path, ["--settings", "normal.toml", "settings", "show", "certify"],
                    ["--settings", "deep.toml", "settings", "show", "certify"], "deep.toml")
    assert "nesting depth" in line and "max_nesting = 64" in line
