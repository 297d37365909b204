"""``viewcert ladder --manifest M`` whose manifest names a certificate edited after it was written (its stored
digest no longer matches its content): one line naming the file and the digest, exit 2, no traceback
(issue 26, acceptance). The same edit with the digest recomputed passes the digest check and fails on what the
edit broke (the headline 3/4 against four correct items), so the refusal above is the digest's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from viewcert.cli.main import app
from viewcert.formats.records import sealed

DATA = Path(__file__).resolve().parents[1] / "data"
H = DATA / "harness"
CRYSTALS = DATA / "certificates" / "v1" / "crystals.json"  # a digested viewcert-certificate/1, 4 items


def _manifest(tmp_path: Path, cert: dict) -> Path:
    """The example manifest (tests/data/harness) with its R1 from ``cert`` (written next to it)."""
    shutil.copytree(H, tmp_path / "h")
    (tmp_path / "h" / "cert.json").write_text(json.dumps(cert))
    m = tmp_path / "h" / "manifest_example.toml"
    text = m.read_text()
    assert 'r1 = "1"' in text
    m.write_text(text.replace('r1 = "1"', 'certificate = "cert.json"', 1))
    return m


def _ladder(m: Path, out: Path):
    return CliRunner().invoke(app, ["ladder", "--manifest", str(m), "--out", str(out), "--n-boot", "50"])


def test_a_stale_certificate_in_a_manifest_is_one_line_exit_2(tmp_path):
    cert = json.loads(CRYSTALS.read_text())
    stored = cert["digest"]["value"]
    cert["summary"]["correct"] = 3  # edited after it was written; the digest left as it was
    res = _ladder(_manifest(tmp_path, cert), tmp_path / "out")
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.output
    assert "cert.json" in lines[0] and "stale certificate" in lines[0] and f"digest {stored[:16]}" in lines[0]
    assert not (tmp_path / "out" / "report.html").exists()


def test_the_same_edit_with_its_digest_recomputed_gets_past_the_digest(tmp_path):
    cert = json.loads(CRYSTALS.read_text())
    cert["summary"]["correct"] = 3
    res = _ladder(_manifest(tmp_path, sealed(cert)), tmp_path / "out")
    assert res.exit_code == 2 and "stale" not in res.output, res.output
    # the four items are all correct: the edited headline 3/4 contradicts them
    assert "field ceiling: ceiling 3/4 disagrees with the per-item outcomes 4/4" in res.output



def test_the_stale_certificate_warning_names_the_file_not_a_type(tmp_path, monkeypatch):
    # read with --allow-stale-certificate, a ceiling whose digest did not hold is reported in one loud warning
    # naming its source; the warning once passed that text to the exception formatter, which wrote
    # "WARNING: str: cert.json ..." (found by mypy). The example ladder run, its ceiling marked stale.
    import dataclasses

    import viewcert.api.attribution as A

    real = A.run_ladder

    def stale(*args, **kw):
        lad, table, m = real(*args, **kw)
        ceilings = tuple(dataclasses.replace(c, source="cert.json", digest_ok=False) for c in lad.ceilings)
        return dataclasses.replace(lad, ceilings=ceilings), table, m

    monkeypatch.setattr(A, "run_ladder", stale)
    shutil.copytree(H, tmp_path / "h")
    report = A.ladder(manifest=tmp_path / "h" / "manifest_example.toml", out=tmp_path / "out", n_boot=50)
    warned = [b.text for b in report.blocks if "WARNING" in getattr(b, "text", "")]
    assert warned == ["viewcert: WARNING: cert.json: the certificate was edited after it was written; "
                      "its R1 is not certified"]
