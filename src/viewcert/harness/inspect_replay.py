"""Inspect AI model provider ``viewcert-replay`` (registered through the ``inspect_ai`` entry point group, so
``inspect eval inspect_task.py --model viewcert-replay/dry_run_answers.jsonl`` finds it with no import):
a model that answers each sample from a replay (``viewcert.harness.replay``), offline, with token usage set
(Inspect would otherwise count tokens with a tokenizer it downloads). The model name after the slash is the
replay spec: a JSONL file relative to the working directory, or a rule ``always-X``."""

from __future__ import annotations

import sys
from pathlib import Path

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

from viewcert.harness.replay import load_replay

PROVIDER = "viewcert-replay"


def _current_sample():
    """Inspect's state of the sample being generated for (its id and choices); None outside an eval."""
    from inspect_ai.solver._task_state import sample_state  # Inspect's own accessor of the running sample

    return sample_state()


@modelapi(name=PROVIDER)
class ReplayModel(ModelAPI):
    """Answers from the replay ``model_name`` names; a choice question's answer as ``ANSWER: X`` (the form
    Inspect's ``multiple_choice()`` asks for and ``choice()`` reads), free text and responses verbatim."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        self.replay = load_replay(model_name, Path.cwd())
        if self.replay.note():  # extra answer lines: ignored, counted, said once
            print(self.replay.note(), file=sys.stderr)

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        state = _current_sample()
        if state is None:
            raise RuntimeError("viewcert-replay answers inside an Inspect eval only (it replays by sample id)")
        text, verbatim = self.replay.answer(str(state.sample_id))
        if not verbatim and state.choices is not None and len(state.choices) > 0:
            text = f"ANSWER: {text}"
        out = ModelOutput.from_content(model=f"{PROVIDER}/{self.model_name}", content=text)
        out.usage = ModelUsage(input_tokens=0, output_tokens=len(text), total_tokens=len(text))
        return out

    def max_connections(self) -> int:
        return 1
