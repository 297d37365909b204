"""The README's "Your own benchmark" walkthrough through the Python API alone (``viewcert.api``, docs/python-api.md),
on the three CIFs the walkthrough test writes (NaCl, CsCl, Mg): certify, design, certify through the designed
views, export, the Inspect replay dry run through Inspect's own Python ``eval``, the ladder and the explorer.

Expected values, from the structures and the replay's rule (as in tests/contracts/test_readme_walkthrough.py, not from
viewcert's output): five or three generic views determine the crystal systems of all three (R1 = 3/3, the R1 the
command line's certificate states for the same files, read here from its certificate.json); the replay answers A
to every question of every arm, so each of the four rungs counts the questions whose answer letter is A, R3 = R4
item by item and the perception share is 0 in every resample: 0.0000 [0.0000, 0.0000]."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.harness_roundtrip import offline_env
from tests.support.walkthrough import write_cifs
from viewcert import api
from viewcert.api import Table
from viewcert.cli import app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect_ai.*")


def test_public_names_are_the_documented_jobs():
    assert set(api.__all__) >= {"certify", "verify", "design", "build_benchmark", "read_export", "read_results",
                                "ladder", "explore", "CertifyConfig", "Report"}
    assert api.certify.__module__ == "viewcert.api.certification"  # a function, not a module of that name


def test_walkthrough_through_the_python_api(tmp_path, monkeypatch):
    for k, v in offline_env().items():
        if k not in ("PATH", "PYTHONPATH"):
            monkeypatch.setenv(k, v)
    cifs = tmp_path / "mycifs"
    systems = write_cifs(cifs)
    monkeypatch.chdir(tmp_path)
    cert = api.certify(cifs, api.CertifyConfig(margin=True), tmp_path / "mycert")
    assert (cert.value.summary.correct, cert.value.summary.n) == (3, 3) and not cert.failures
    assert "): 3/3 = 1.0000" in cert.text() and "δ* (uniqueness margin, Å)" in cert.text()
    # the command line's certificate of the same files states the same R1
    r = CliRunner().invoke(app, ["certify", str(cifs), "--margin", "--out", str(tmp_path / "clicert")])
    assert r.exit_code == 0, r.output
    cli = json.loads((tmp_path / "clicert" / "certificate.json").read_text())["summary"]
    assert (cli["correct"], cli["n"]) == (cert.value.summary.correct, cert.value.summary.n)

    design = api.design(str(cifs), tmp_path / "mydesign", views=3)
    protocol = tmp_path / "mydesign" / "protocol.toml"
    assert protocol.is_file() and len(design.value.protocol.views) == 3
    cert3 = api.certify(cifs, api.CertifyConfig(protocol=str(protocol), margin=True), tmp_path / "mycert3")
    assert (cert3.value.summary.correct, cert3.value.summary.n) == (3, 3)

    bench = tmp_path / "mybench"
    export = api.build_benchmark(str(cifs), bench, protocol=str(protocol))
    assert api.read_export(bench).n_questions == export.value.n_questions == 3 and not export.failures
    qs = [json.loads(x) for x in (bench / "benchmark.jsonl").read_text().splitlines()]
    hand = sum(q["answer_letter"] == "A" for q in qs)  # the replay answers A everywhere
    assert sorted(q["answer"] for q in qs) == sorted(systems.values()) and hand < 3

    from inspect_ai import eval as inspect_eval

    monkeypatch.chdir(bench)
    logs = inspect_eval("inspect_task.py", model="viewcert-replay/dry_run_answers.jsonl", log_dir="logs/dry-run",
                        display="none")
    assert logs and all(log.status == "success" for log in logs)
    table = api.read_results(bench)
    assert set(table.frame["rung"]) == {"R4", "R3", "no-image", "choices-only"}

    lad = api.ladder(bench)
    counts = next(b for b in lad.blocks if isinstance(b, Table) and b.title.startswith("correct of"))
    assert set(counts.columns) == {"model", "R4", "R3", "no-image", "choices-only"}
    (row,) = counts.rows
    assert row[0] == "viewcert-replay/dry_run_answers.jsonl" and list(row[1:]) == [str(hand)] * 4
    shares = next(b for b in lad.blocks if isinstance(b, Table) and b.title.startswith("perception share"))
    assert "R1 = 3/3 (certificate)" in shares.title
    assert shares.rows[0][1:4] == (str(hand), str(hand), "0.0000 [0.0000, 0.0000]")
    site = api.explore(bench)
    assert site.value.is_file() and (bench / "ladder" / "report.html").is_file()


def _blocks(page: Path) -> list[str]:
    """The ```python code blocks of a Markdown page, in order."""
    return [b.split("```", 1)[0] for b in page.read_text().split("```python\n")[1:]]


def test_every_code_block_of_python_api_md_runs_as_written(tmp_path, monkeypatch):
    """docs/python-api.md's blocks, executed in order in one namespace from the folder holding mycifs/ (the three
    CIFs of the walkthrough), as a reader would paste them. Expected from the structures and the replay's rule
    (as test_walkthrough_through_the_python_api): R1 = 3/3 through the designed views; the replay answers A to every
    question of every arm, so R3 = R4 item by item and the share is 0."""
    for k, v in offline_env().items():
        if k not in ("PATH", "PYTHONPATH"):
            monkeypatch.setenv(k, v)
    write_cifs(tmp_path / "mycifs")
    monkeypatch.chdir(tmp_path)
    page = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"
    blocks = _blocks(page)
    assert len(blocks) == 2
    ns: dict = {}
    for block in blocks:
        exec(compile(block, str(page), "exec"), ns)  # noqa: S102 - the page's own code, run as written
    assert (ns["cert3"].value.summary.correct, ns["cert3"].value.summary.n) == (3, 3)
    shares = ns["ladder"].value.shares
    assert list(shares["model"]) == ["viewcert-replay/dry_run_answers.jsonl"]
    assert (shares["share"].iloc[0], shares["share_lo"].iloc[0], shares["share_hi"].iloc[0]) == (0.0, 0.0, 0.0)
    assert ns["site"].value == (tmp_path / "mybench" / "explore" / "index.html").resolve()


@pytest.mark.parametrize(("protocol", "options", "tiling", "tau"), [
    (None, [], [1, 1, 1], 0.01),  # the default, render-ceiling-5: the study's own settings (single cell, τ 0.01 Å)
    ("render-ceiling-5", ["--delta", "0.05"], [1, 1, 1], 0.01),  # the study's τ whatever δ
    ("axes-3", ["--delta", "0.05"], [2, 2, 2], 0.05),  # not a study protocol: the tiling an export draws, τ = δ
])
def test_api_certify_and_the_command_write_the_same_certificate_bytes(tmp_path, monkeypatch, protocol, options,
                                                                       tiling, tau):
    """``api.certify(folder)`` with its defaults and ``viewcert certify folder`` with its own: the same certificate
    bytes (issue 57: the API used tiling 1,1,1 and the command 2,2,2, two digests for one folder), for a named study
    protocol (whose settings are the study's) and for a non-study one (tiling 2,2,2), the command's rule."""
    write_cifs(tmp_path / "mycifs")
    monkeypatch.chdir(tmp_path)
    config = None if protocol is None else api.certify_config(protocol, delta=float(options[1]))
    rep = api.certify("mycifs", config, out="api_out", workers=1)
    # the command's default (issue 57 item 8): a study protocol's tiling, else defaults.TILING
    assert rep.value.observation_model.tiling == tiling
    assert rep.value.tolerances.tau == tau
    args = ([] if protocol is None else ["--protocol", protocol]) + options
    r = CliRunner().invoke(app, ["certify", "mycifs", *args, "--out", "cli_out", "--workers", "1"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "api_out" / "certificate.json").read_bytes() == \
        (tmp_path / "cli_out" / "certificate.json").read_bytes()
