"""One ``viewcert ladder`` run opens each harness log and the certificate exactly once: the format is detected
from the bytes read, the reader parses those bytes and the recorded SHA-256 is of them; the task scores take
the certificate the ladder's R1 was parsed from. Counted with an audit hook on "open" events (the builtin
``open`` and ``os.open`` both raise it), through the CLI on the shipped harness fixture (all five harnesses:
xlsx, lmms-eval JSONL, Inspect .eval, study JSON, native CSV and JSONL) and on a hand-made interaction export
whose certificate feeds both R1 and the task scores. Expected digests are hashlib over the files' bytes."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tomllib
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from viewcert.attribution.pipeline import run_ladder
from viewcert.cli.main import app
from viewcert.formats.records import sealed
from viewcert.stats import BootstrapSettings

HARNESS = Path(__file__).parents[1] / "data" / "harness"
MANIFEST = HARNESS / "manifest_example.toml"

#: paths being watched -> opens counted (an audit hook cannot be removed: it is installed once, inert after)
_WATCHED: dict[str, Counter] = {}


def _hook(event: str, args: tuple) -> None:
    if event != "open" or not _WATCHED or not args or isinstance(args[0], int) or args[0] is None:
        return
    try:
        key = os.path.realpath(os.fsdecode(args[0]))
    except (TypeError, ValueError):
        return
    for counter in _WATCHED.values():
        if key in counter:
            counter[key] += 1


sys.addaudithook(_hook)


def _count_opens(paths: list[Path], fn) -> dict[str, int]:
    """{path: number of opens} of ``paths`` while ``fn()`` runs."""
    counter = Counter({os.path.realpath(p): 0 for p in paths})
    _WATCHED["now"] = counter
    try:
        fn()
    finally:
        _WATCHED.clear()
    return {Path(k).name: v for k, v in counter.items()}


def _logs(manifest: Path) -> list[Path]:
    entries = tomllib.loads(manifest.read_text(encoding="utf-8"))["input"]
    return [(manifest.parent / e["path"]).resolve() for e in entries]


def _invoke_ladder(manifest: Path, out: Path) -> None:
    res = CliRunner().invoke(app, ["ladder", "--manifest", str(manifest), "--out", str(out), "--n-boot", "50"])
    assert res.exit_code == 0, res.output


def test_each_harness_log_is_opened_once_per_ladder_run(tmp_path):
    logs = _logs(MANIFEST)
    assert {p.suffix for p in logs} == {".xlsx", ".jsonl", ".eval", ".json", ".csv"}
    opens = _count_opens(logs, lambda: _invoke_ladder(MANIFEST, tmp_path / "out"))
    assert opens == {p.name: 1 for p in logs}


def test_the_digest_recorded_is_of_the_file_bytes():
    _, table, _ = run_ladder(manifest=MANIFEST, bootstrap=BootstrapSettings(n_boot=50))
    got = {Path(r.path).resolve(): r.sha256 for r in table.inputs}
    assert got == {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in _logs(MANIFEST)}


def _interaction_export(root: Path) -> tuple[Path, Path, Path]:
    """(manifest, results log, certificate) of a 2-item residue-ligand export scored by one native log."""
    folder = root / "rl"
    folder.mkdir()
    answers = ["yes: ARG 285 NH1 A, O1", "no"]
    (folder / "ids.csv").write_text("index,id,source_id\n" + "".join(f"{k},q{k:04d},cx:LIG\n" for k in range(2)))
    (folder / "benchmark.jsonl").write_text("".join(json.dumps(
        {"id": f"q{k:04d}", "index": k, "source_id": "cx:LIG", "task": "residue-ligand", "answer": a,
         "answer_format": "list", "images": [], "question": "?", "category": "x"}) + "\n"
        for k, a in enumerate(answers)))
    cert = folder / "certificate.json"
    cert.write_text(json.dumps(sealed({"format": "viewcert-interaction-benchmark/1", "task": "residue-ligand",
                                "items": [{"id": f"q{k:04d}", "rendered": {"ceiling": 1.0}, "ideal": {"ceiling": 1.0}}
                                          for k in range(2)]})))
    log = root / "r.jsonl"
    log.write_text("".join(json.dumps({"model": "m", "item_id": k, "target": a, "raw_output": a, "score": 1.0}) + "\n"
                           for k, a in enumerate(answers)))
    manifest = root / "m.toml"
    manifest.write_text(f'[study]\nbenchmark = "{folder.as_posix()}"\n[[input]]\npath = "{log.as_posix()}"\n'
                        'rung = "R4"\n')
    return manifest, log, cert


def test_the_certificate_is_opened_once_for_r1_and_the_task_scores(tmp_path):
    manifest, log, cert = _interaction_export(tmp_path)
    out = tmp_path / "out"
    opens = _count_opens([log, cert], lambda: _invoke_ladder(manifest, out))
    assert opens == {"r.jsonl": 1, "certificate.json": 1}
    # the task scores were computed (from the shared parse): both answers right, ceilings 1 -> credit 1
    scores = (out / "task_scores.csv").read_text(encoding="utf-8").splitlines()
    assert len(scores) == 2 and ",1.0,1.0,1.0," in scores[1]
