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
listens to ``run.py``'s logger for those exceptions and exits 1 with one line naming each (its ``status.json``
would not do: an error recorded there outlives a later successful run); a replay that cannot be read stops
before VLMEvalKit starts (one line, exit 2).
"""

from __future__ import annotations

import argparse
import logging
import sys
from functools import partial
from pathlib import Path

from viewcert.errors import InputError
from viewcert.harness.replay import DRY_RUN_FILE, load_replay
from viewcert.sanitize import console_text

MODEL = "viewcert-replay"
#: what to install when VLMEvalKit is missing (docs/harnesses.md: the version the replay is tested with)
INSTALL = "pip install ms-vlmeval (module vlmeval; docs/harnesses.md, `make harness`)"


class Failures(logging.Handler):
    """Collects the exceptions ``run.py`` logs and carries on from (``logger.exception``: a failed model x
    dataset pair), as ``Type: message`` lines."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[0] is not None:
            self.lines.append(f"{record.exc_info[0].__name__} ({record.getMessage()})")


def main(argv: list[str] | None = None) -> int:
    ours = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    ours.add_argument("--replay", default=DRY_RUN_FILE)
    args, rest = ours.parse_known_args(argv)
    try:
        load_replay(args.replay, Path.cwd())  # a bad replay stops here, not as one of run.py's logged failures
    except InputError as exc:
        print(f"viewcert: error: {console_text(exc, keep_newlines=False)}", file=sys.stderr)
        return 2
    # lazy: only after the replay is read (importing vlmeval logs an error about a missing .env, takes seconds)
    try:
        from vlmeval import run
        from vlmeval.config import supported_VLM
    except ModuleNotFoundError as exc:  # the harness is not installed: say what to install, in one line
        print(f"viewcert: error: this dry run needs VLMEvalKit (module {exc.name or 'vlmeval'} is not installed): "
              f"{INSTALL}", file=sys.stderr)
        return 2

    from viewcert.harness.vlmevalkit_model import ReplayVLM  # lazy: it imports vlmeval

    supported_VLM[MODEL] = partial(ReplayVLM, replay=args.replay)
    failed = Failures()
    logging.getLogger(run.logger.name).addHandler(failed)
    sys.argv = ["vlmeval.run", *rest]
    run.main()
    if failed.lines:
        hint = " (a custom free-text dataset has no evaluate: run it with --mode infer)" \
            if any(x.startswith("NotImplementedError") for x in failed.lines) else ""
        print("viewcert: error: VLMEvalKit carried on past a failure: "
              + console_text("; ".join(failed.lines), keep_newlines=False) + hint, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
