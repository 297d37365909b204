"""The command that runs VLMEvalKit's own ``run.py`` (ms-vlmeval 0.0.20's ``vlmeval.run``) with the replay model
``viewcert-replay`` (``viewcert.harness.vlmevalkit_model.ReplayVLM``, a ``BaseModel``)::

    LMUData=vlmevalkit python -m viewcert.harness.vlmevalkit_replay --replay dry_run_answers.jsonl \\
        --data ViewcertCrystalSystem --model viewcert-replay --judge exact_matching --work-dir vlmevalkit/dry-run

VLMEvalKit has no plugin mechanism for models: ``run.py`` builds a model from its ``supported_VLM`` table, so
this command adds ``viewcert-replay`` (answering from ``--replay``: a JSONL file relative to the working
directory, or a rule ``always-X``; default the export's ``dry_run_answers.jsonl``) to that table, then hands
every other argument to ``run.py`` unchanged.

``run.py`` logs a failed model × dataset pair (a traceback) and goes on, exiting 0: a custom free-text dataset
(``CustomVQADataset``, which has no ``evaluate``) fails that way unless run with ``--mode infer``. This command
reads the run's own ``status.json`` afterwards and exits 1 with one line naming every failed pair; a replay
that cannot be read stops before VLMEvalKit starts (one line, exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path

from viewcert.errors import InputError
from viewcert.harness.replay import DRY_RUN_FILE, load_replay
from viewcert.sanitize import console_text

MODEL = "viewcert-replay"


def failures(work_dir: Path, models: list[str]) -> list[str]:
    """``model x dataset: reason`` of every pair VLMEvalKit's ``status.json`` (one per model folder) records
    with an ``error_message`` (present, if empty, when the exception had no message) or a skip other than
    ``--mode infer``'s, and every model whose run left no readable status."""
    bad = []
    for model in models:
        path = work_dir / model / "status.json"
        try:
            datasets = json.loads(path.read_text())["datasets"]
        except (OSError, ValueError, KeyError, TypeError):
            bad.append(f"{model}: no readable {path}")
            continue
        for name, ds in sorted(datasets.items()):
            if "error_message" in ds:
                why = ds["error_message"] or ("an exception without a message (its traceback is logged above; "
                                              "a custom free-text dataset has no evaluate: run it with --mode infer)")
                bad.append(f"{model} x {name}: {why}")
            elif ds.get("skip_reason") not in (None, "mode_infer"):
                bad.append(f"{model} x {name}: skipped, {ds['skip_reason']}")
    return bad


def main(argv: list[str] | None = None) -> int:
    ours = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    ours.add_argument("--replay", default=DRY_RUN_FILE)
    args, rest = ours.parse_known_args(argv)
    theirs = argparse.ArgumentParser(add_help=False, allow_abbrev=False)  # what run.py will do with the rest
    theirs.add_argument("--work-dir", default="./outputs")
    theirs.add_argument("--model", nargs="+", default=[])
    run_args, _ = theirs.parse_known_args(rest)
    try:
        load_replay(args.replay, Path.cwd())  # a bad replay stops here, not as one of run.py's logged failures
    except InputError as exc:
        print(f"viewcert: error: {console_text(exc, keep_newlines=False)}", file=sys.stderr)
        return 2
    # lazy: only after the replay is read (importing vlmeval logs an error about a missing .env, takes seconds)
    from vlmeval import run
    from vlmeval.config import supported_VLM

    from viewcert.harness.vlmevalkit_model import ReplayVLM  # lazy: it imports vlmeval

    supported_VLM[MODEL] = partial(ReplayVLM, replay=args.replay)
    sys.argv = ["vlmeval.run", *rest]
    run.main()
    bad = failures(Path(run_args.work_dir), run_args.model)
    if bad:
        print("viewcert: error: VLMEvalKit exited 0 but failed: " + console_text("; ".join(bad), keep_newlines=False),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
