"""The report: self-contained HTML with real PNG figures, Markdown, CSVs, provenance; and the CLI."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
import typer
from PIL import Image
from typer.testing import CliRunner

from viewcert.attribution.extraction import EmittedAtoms, TrueCell, audit_extraction
from viewcert.attribution.pipeline import run_ladder
from viewcert.attribution.report import write_report
from viewcert.cli.attribution import register
from viewcert.stats import BootstrapSettings

H = Path(__file__).resolve().parents[1] / "data" / "harness"
MANIFEST = H / "manifest_example.toml"


def _audit():
    rng = np.random.default_rng(0)
    cell = TrueCell("a", ("Cs", "Cl"), np.array([[0, 0, 0], [0.5, 0.5, 0.5]]), np.eye(3) * 4.1)
    cells = {f"i{k}": TrueCell(f"i{k}", cell.species, cell.frac, cell.lattice) for k in range(5)}
    em = [EmittedAtoms(f"i{k}", ("Cs", "Cl", "Cl"), np.vstack([cell.frac + rng.normal(0, 0.05 * k, (2, 3)),
                                                                 rng.random((1, 3))])) for k in range(5)]
    return audit_extraction(em, cells, null_draws=5, n_boot=200)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    ladder, table, m = run_ladder(manifest=MANIFEST, r1=["1", "0.9"], bootstrap=BootstrapSettings(n_boot=400),
                                   threshold=0.3)
    return write_report(out, ladder=ladder, table=table, extraction=_audit(), title="test report",
                        extra_provenance={"manifest": m.to_dict()})


def _check_png(data: bytes) -> None:
    img = Image.open(io.BytesIO(data))
    img.load()
    assert img.format == "PNG" and img.width >= 300 and img.height >= 200
    arr = np.asarray(img.convert("L"), dtype=float)
    assert arr.std() > 5  # not a blank canvas
    assert len(np.unique(arr)) > 20


def test_figures_are_real_pngs(report):
    assert set(report.figures) >= {"ladder", "shares_forest", "transitions", "decomposition_1", "decomposition_2",
                                   "extraction_recall"}
    for path in report.figures.values():
        _check_png(Path(path).read_bytes())


def test_html_is_self_contained(report):
    page = report.html.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "</html>" in page
    imgs = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(imgs) == len(report.figures)
    for b64 in imgs:
        _check_png(base64.b64decode(b64))
    assert not re.search(r'src="(?!data:)', page)  # nothing loaded from elsewhere
    assert "Provenance" in page and "acme/vlm-7b" in page


def test_tables_markdown_and_provenance(report):
    for name in ("ladder_counts", "arms", "decomposition", "shares", "tests", "transitions", "summary", "coverage",
                 "results_table", "extraction_items", "extraction_summary"):
        assert report.csv[name].is_file() and report.csv[name].stat().st_size > 0
    md = report.markdown.read_text(encoding="utf-8")
    assert "## Ladder (correct of 8 items)" in md and "R1 = 0.9" in md and "## Extraction audit" in md
    prov = json.loads(report.provenance.read_text())
    assert prov["versions"]["numpy"] and prov["ladder"]["settings"]["seed"] == 20260601
    assert prov["ladder"]["settings"]["threshold"] == 0.3
    assert {c["label"] for c in prov["ladder"]["settings"]["ceilings"]} == {"R1 = 1", "R1 = 0.9"}
    assert all(len(i["sha256"]) == 64 for i in prov["ladder"]["inputs"])
    assert prov["extraction"]["settings"]["metric"] == "fractional"


def test_report_is_deterministic(tmp_path):
    outs = []
    for k in range(2):
        ladder, table, _ = run_ladder(manifest=MANIFEST, r1=["1"], bootstrap=BootstrapSettings(n_boot=200))
        outs.append(write_report(tmp_path / str(k), ladder=ladder, table=table))
    for name in ("decomposition", "tests", "arms"):
        assert outs[0].csv[name].read_bytes() == outs[1].csv[name].read_bytes()
    assert outs[0].markdown.read_text().replace(str(tmp_path / "0"), "") == \
        outs[1].markdown.read_text().replace(str(tmp_path / "1"), "")


# ---------------------------------------------------------------------- CLI
@pytest.fixture()
def app():
    a = typer.Typer(add_completion=False)

    @a.callback()
    def _main() -> None:
        """test app"""

    register(a)
    return a


def test_cli_ladder_on_manifest(app, tmp_path):
    res = CliRunner().invoke(app, ["ladder", "--manifest", str(MANIFEST), "--r1", "1", "--r1", "200/210",
                                   "--out", str(tmp_path), "--n-boot", "300", "--threshold", "0.3"])
    assert res.exit_code == 0, res.output
    assert "acme/vlm-7b" in res.output and "R1 = 200/210 = 0.9524" in res.output
    assert (tmp_path / "report.html").is_file() and (tmp_path / "shares.csv").is_file()


def test_cli_ladder_with_certificate(app, tmp_path):
    res = CliRunner().invoke(app, ["ladder", "--manifest", str(MANIFEST), "--certificate",
                                   str(H / "certificate_example.json"), "--out", str(tmp_path), "--n-boot", "200"])
    assert res.exit_code == 0, res.output
    assert "R1 = 7/8 (certificate)" in res.output


def test_cli_errors_exit_nonzero(app, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[input]]\npath = 'missing.csv'\nrung = 'R4'\nmodel = 'm'\n")
    res = CliRunner().invoke(app, ["ladder", "--manifest", str(bad), "--r1", "1", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "missing.csv" in res.output
    res = CliRunner().invoke(app, ["ladder", "--out", str(tmp_path)])
    assert res.exit_code != 0


def test_cli_audit_extraction(app, tmp_path):
    from pymatgen.core import Lattice, Structure

    cif = Structure(Lattice.cubic(4.12), ["Cs", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5]]).to(fmt="cif")
    (tmp_path / "structures.json").write_text(json.dumps({"mp-x": {"cif": cif}, "mp-y": {"cif": cif}}))
    (tmp_path / "emitted.json").write_text(json.dumps([
        {"material_id": "mp-x", "emitted": [["Cs", 0.0, 0.0, 0.01], ["Cl", 0.5, 0.5, 0.5]]},
        {"material_id": "mp-y", "emitted": [["Cl", 0.0, 0.0, 0.0], ["Cs", 0.5, 0.5, 0.5]]},
    ]))
    res = CliRunner().invoke(app, ["audit-extraction", "--emitted", str(tmp_path / "emitted.json"), "--structures",
                                   str(tmp_path / "structures.json"), "--out", str(tmp_path / "o"),
                                   "--null-draws", "3", "--n-boot", "100"])
    assert res.exit_code == 0, res.output
    assert "species-aware median recall 0.5000" in res.output and "species-blind median recall 1.0000" in res.output
    assert (tmp_path / "o" / "extraction_recall.png").is_file()
