"""Shared by the harness round-trip tests (Inspect, lmms-eval, VLMEvalKit): the two small exports they run, the
export's questions, the ladder manifest over one harness log, and the harness venv's interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from viewcert.benchmark.export import ExportSettings, build_benchmark
from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

ROOT = Path(__file__).resolve().parents[2]
#: the interpreter of the venv ``make harness`` builds (lmms-eval, VLMEvalKit), which it names in
#: VIEWCERT_HARNESS_PYTHON: absolute (the Makefile passes a relative path; the tests run it from export folders),
#: not resolved (a venv's python is a link to the base interpreter). Unset (``make test``, a bare pytest), the
#: harness-marked tests that need it skip, so ``make test`` never runs them even where the venv exists.
HARNESS_ENV = os.environ.get("VIEWCERT_HARNESS_PYTHON")
HARNESS_PY = Path(HARNESS_ENV or ROOT / ".venv-harness" / "bin" / "python").absolute()


def harness_import_error(modules: str) -> str | None:
    """None when the harness venv imports ``modules``, else why the tests needing them skip."""
    if HARNESS_ENV is None:
        return "VIEWCERT_HARNESS_PYTHON is unset: make harness runs these tests, make test does not"
    if not HARNESS_PY.is_file():
        return f"no {HARNESS_PY} (make harness builds it)"
    r = subprocess.run([str(HARNESS_PY), "-c", f"import {modules}"], capture_output=True, text=True, timeout=600)
    return None if r.returncode == 0 else f"{HARNESS_PY} cannot import {modules}: {r.stderr.strip().splitlines()[-1]}"


def crystal_export(folder: Path, n: int) -> Path:
    """The first ``n`` built-in prototypes as a crystal-system export (64 px, supersample 2)."""
    build_benchmark("builtin:prototypes", folder, settings=ExportSettings.from_options(size=64, supersample=2), limit=n)
    return folder


def zoom_export(folder: Path) -> Path:
    """Four zoom questions on two built-in molecules through perspective cameras (seed 3, 120×90 px)."""
    build_task_benchmark("builtin:molecules", folder,
                         TaskExportSettings.from_options(task="zoom", camera="perspective", seed=3, per_structure=2, width=120,
                                            height=90, supersample=1), limit=2)
    return folder


def questions(folder: Path) -> list[dict]:
    """The export's ``benchmark.jsonl`` records, in order."""
    return [json.loads(x) for x in (folder / "benchmark.jsonl").read_text().splitlines()]


def dry_run_commands(folder: Path, harness: str) -> list[str]:
    """The commands of HARNESSES.md's dry run for ``harness`` (the start of its "### " heading: ``Inspect AI``,
    ``lmms-eval``, ``VLMEvalKit``), as written: its indented lines, a trailing backslash joining the next."""
    section = (folder / "HARNESSES.md").read_text().split("## Dry run", 1)[1].split("\n## ", 1)[0]
    part = section.split(f"\n### {harness}", 1)[1].split("\n### ", 1)[0]
    cmds, pending = [], ""
    for line in part.splitlines():
        if line.startswith("    ") and line.strip():
            pending += line.strip()
            if pending.endswith("\\"):
                pending = pending[:-1].rstrip() + " "
            else:
                cmds.append(pending)
                pending = ""
    return cmds


def run_inspect(folder: Path, answers: list[str], log_dir: Path):
    """Inspect's eval() of the shipped task file's image arm with mockllm returning ``answers`` in sample order;
    its one log."""
    from inspect_ai import eval as inspect_eval  # lazy: only the Inspect round trips need it
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    outs = []
    for a in answers:
        o = ModelOutput.from_content(model="mockllm/model", content=a)
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        outs.append(o)
    # run from the export folder, as HARNESSES.md says: Inspect 0.3.285 globs the task path relative to the
    # working directory and Python 3.11's pathlib refuses an absolute pattern (docs/harnesses.md)
    here = os.getcwd()
    os.chdir(folder)
    try:
        task = "viewcert_" + questions(folder)[0]["task"].replace("-", "_")  # the image arm (R4)
        logs = inspect_eval(f"inspect_task.py@{task}", model=get_model("mockllm/model", custom_outputs=outs),
                            log_dir=str(log_dir), display="none", max_samples=1)
    finally:
        os.chdir(here)
    assert len(logs) == 1 and logs[0].status == "success"
    return logs[0]


def ladder_manifest(path: Path, folder: Path, log: Path, *, task: str | None = None,
                    model: str | None = None) -> Path:
    """A ladder manifest at ``path``: the export ``folder`` as the study, one harness ``log`` as rung R4."""
    lines = ["[study]", f'benchmark = "{folder.as_posix()}"'] + ([f'task = "{task}"'] if task else [])
    lines += ["[[input]]", f'path = "{log.as_posix()}"', 'rung = "R4"'] + ([f'model = "{model}"'] if model else [])
    path.write_text("\n".join(lines) + "\n")
    return path


SRC = Path(__file__).resolve().parents[2] / "src"
BIN = Path(sys.executable).parent


def offline_env() -> dict:
    """The environment of a harness command run offline (Inspect): this tree's viewcert first on the path,
    every download refused at once."""
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens, any download fails at once
    return {**os.environ, "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", "")]),
            "PYTHONPATH": os.pathsep.join(p for p in [str(SRC), os.environ.get("PYTHONPATH", "")] if p),
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "HTTP_PROXY": closed, "HTTPS_PROXY": closed, "http_proxy": closed, "https_proxy": closed,
            "NO_PROXY": "", "no_proxy": ""}

