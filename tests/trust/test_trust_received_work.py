"""Work a received certificate asks for (issue 38, classes 3 and 4): every quantity it asks to compute is checked
against the limits before the work (questions per structure, bootstrap resamples, image sizes, a PNG over
``--max-pixels`` refused from its header, ``learn --image-size``), and a certificate listing one item id twice is
refused. Each refusal: one line naming the file and the field, exit 2, in seconds (never a hang, a MemoryError or a
1 GB decode)."""

from __future__ import annotations

import json
import shutil
import struct
import time
import zlib
from pathlib import Path

import pytest

from tests.support.export_fixtures import CHFCLBR_XYZ, SMALL
from tests.support.trust_probe import one_error, run
from viewcert.formats.records import INTERACTION_FORMAT, sealed
from viewcert.limits import DEFAULT_LIMITS, LimitError, using_limits


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

    d = tmp_path_factory.mktemp("work_export")
    (d / "chfclbr.xyz").write_text(CHFCLBR_XYZ)
    build_task_benchmark(d / "chfclbr.xyz", d / "export", TaskExportSettings.from_options(task="zoom", seed=1, **SMALL))
    return d


def _edited(export: Path, tmp_path: Path, edit) -> Path:
    """A copy of the export (input beside it, the trusted folder) whose certificate ``edit`` changed, re-digested."""
    t = tmp_path / "t"
    shutil.copytree(export, t)
    p = t / "export" / "certificate.json"
    cert = json.loads(p.read_text())
    edit(cert)
    p.write_text(json.dumps(sealed(cert)))
    return t


def _timed(argv: list[str]) -> tuple[int, str, float]:
    t0 = time.perf_counter()
    code, out, _ = run(argv)
    return code, out, time.perf_counter() - t0


ASKS = {  # field the certificate sets -> (value, the limit named in the one line)
    "per_structure": (10**7, "max_questions"),
    "width": (100_000, "max_pixels"),
}


@pytest.mark.parametrize("key", list(ASKS))
def test_verify_checks_the_recorded_settings_against_the_limits_first(export, tmp_path, key):
    value, limit = ASKS[key]

    def edit(cert):
        cert["settings"][key] = value
        cert["input"] = "chfclbr.xyz"
        if key == "width":
            cert["settings"]["height"] = value

    t = _edited(export, tmp_path, edit)
    code, out, seconds = _timed(["verify", str(t / "export" / "certificate.json"), "--inputs", str(t)])
    err = one_error(out)
    assert code == 2 and limit in err and f"field settings.{key}" in err and "certificate.json" in err, out
    assert seconds < 60


def test_explore_checks_the_questions_a_task_certificate_asks_for(export, tmp_path):
    t = _edited(export, tmp_path, lambda c: c["settings"].update(per_structure=10**7) or c.update(input="chfclbr.xyz"))
    code, out, seconds = _timed(["explore", str(t / "export"), "--out", str(tmp_path / "s"), "--inputs", str(t),
                                 "--workers", "1"])
    assert code == 2 and "max_questions" in one_error(out) and "settings.per_structure" in out, out
    assert seconds < 60


def test_verify_checks_an_interaction_certificates_bootstrap_before_any_work(tmp_path):
    cert = sealed({"format": INTERACTION_FORMAT, "task": "pocket-ligand",
                   "settings": {"task": "pocket-ligand", "n_boot": 10**12},
                   "complexes": [{"name": "c1", "ligand": "LIG", "sha256": "0" * 64}], "items": [{"id": "q0000"}]})
    (tmp_path / "certificate.json").write_text(json.dumps(cert))
    code, out, seconds = _timed(["verify", str(tmp_path / "certificate.json"), "--inputs", str(tmp_path)])
    err = one_error(out)
    assert code == 2 and "max_bootstrap_draws" in err and "settings.n_boot" in err, out
    assert seconds < 30


def test_the_bootstrap_is_bounded_where_its_matrix_is_made():
    from viewcert.stats import bootstrap_indices

    with pytest.raises(LimitError, match=r"1,000,000,000,000 resamples x 10 items"):
        bootstrap_indices(10, n_boot=10**12)
    with using_limits(DEFAULT_LIMITS.with_overrides(max_bootstrap_draws=100)):
        assert bootstrap_indices(10, n_boot=10).shape == (10, 10)  # exactly at the limit: allowed
        with pytest.raises(LimitError):
            bootstrap_indices(10, n_boot=11)


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header says width x height (8-bit RGB) with one empty IDAT: decoding it would fail, so a limit
    error proves the size was read from the header, before any decoding."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def test_explore_refuses_a_png_over_max_pixels_from_its_header(export, tmp_path):
    t = tmp_path / "t"
    shutil.copytree(export, t)
    first = sorted((t / "export" / "images").glob("*.png"))[0]
    first.write_bytes(_png_header_only(12_000, 12_000))  # 1.44e8 px: over 4096², under Pillow's bomb limit
    code, out, seconds = _timed(["explore", str(t / "export"), "--out", str(tmp_path / "s"), "--workers", "1"])
    err = one_error(out)
    assert code == 2 and "max_pixels" in err and "12000x12000" in err and first.name in err, out
    assert seconds < 60
    code, out, _ = _timed(["--max-pixels", str(12_000 * 12_000), "explore", str(t / "export"), "--out",
                           str(tmp_path / "s2"), "--workers", "1"])
    assert code == 2 and "cannot be read as a PNG" in one_error(out)  # allowed: now it is decoded, and is broken


def test_learn_checks_the_image_size_before_any_work(tmp_path):
    code, out, seconds = _timed(["learn", "builtin:nacl", "--reader", "pixel-cnn", "--image-size",
                                 "100000", "--out", str(tmp_path / "o")])
    err = one_error(out)
    assert code == 2 and "max_pixels" in err and "100000x100000" in err and "--image-size" in err, out
    assert seconds < 30


def test_a_certificate_listing_an_item_id_twice_is_refused(export, tmp_path):
    def edit(cert):
        cert["items"].append(dict(cert["items"][0]))
        cert["input"] = "chfclbr.xyz"

    t = _edited(export, tmp_path, edit)
    for argv in (["verify", str(t / "export" / "certificate.json"), "--inputs", str(t)],
                 ["explore", str(t / "export"), "--out", str(tmp_path / "s")]):
        code, out, _ = run(argv)
        err = one_error(out)
        assert code == 2 and "duplicate item id 'q0000'" in err and "field items[1].id" in err, out
        assert "certificate.json" in err


def test_an_interaction_certificate_listing_an_item_id_twice_is_refused(tmp_path):
    cert = sealed({"format": INTERACTION_FORMAT, "task": "pocket-ligand", "settings": {"task": "pocket-ligand"},
                   "complexes": [], "items": [{"id": "q0000"}, {"id": "q0001"}, {"id": "q0000"}]})
    (tmp_path / "certificate.json").write_text(json.dumps(cert))
    code, out, _ = run(["verify", str(tmp_path / "certificate.json"), "--inputs", str(tmp_path)])
    err = one_error(out)
    assert code == 2 and "duplicate item id 'q0000' (items[0] and items[2])" in err and "items[2].id" in err, out
