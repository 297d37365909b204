"""lmms-eval model ``viewcert_replay`` (registered through lmms-eval's ``lmms_eval.models`` entry point group, so
``lmms-eval --model viewcert_replay --model_args replay=dry_run_answers.jsonl ...`` finds it with no import and
no plugin variable): answers each document of an export's lmms-eval task from a replay
(``viewcert.harness.replay``), offline. ``replay`` is a JSONL file relative to the working directory (the export
folder) or a rule ``always-X``; the default is the export's ``dry_run_answers.jsonl``.

lmms-eval's MCQ prompt asks for the option's letter, so an answer is given as it is (``A``); a ``response`` too.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lmms_eval.api.model import lmms

from viewcert.harness.replay import DRY_RUN_FILE, load_replay

MODEL_ID = "viewcert_replay"


def manifest():
    """The entry point's payload: lmms-eval's model manifest of ``viewcert_replay`` (a "simple" model)."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return ModelManifest(model_id=MODEL_ID, simple_class_path=f"{__name__}.ReplayLMM")


class ReplayLMM(lmms):
    """Answers each generation request by its document's item id (``doc["id"]``, the export's ``qNNNN``)."""

    def __init__(self, replay: str = DRY_RUN_FILE, **kwargs) -> None:
        super().__init__()
        self.replay = load_replay(str(replay), Path.cwd())
        if self.replay.note():  # extra answer lines: ignored, counted, said once
            print(self.replay.note(), file=sys.stderr)

    def generate_until(self, requests) -> list[str]:
        out = []
        for _context, _gen_kwargs, _doc_to_visual, doc_id, task, split in (r.args for r in requests):
            doc = self.task_dict[task][split][doc_id]
            out.append(self.replay.answer(str(doc["id"]))[0])
        return out

    def generate_until_multi_round(self, requests) -> list[str]:
        return self.generate_until(requests)

    def loglikelihood(self, requests):
        raise NotImplementedError("viewcert_replay answers generation requests only (the export's tasks)")
