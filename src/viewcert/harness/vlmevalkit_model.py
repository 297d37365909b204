"""VLMEvalKit replay model ``viewcert-replay``: a ``vlmeval.vlm.base.BaseModel`` answering each question by its
item id from a replay (``viewcert.harness.replay``). ``python -m viewcert.harness.vlmevalkit_replay`` adds it to
VLMEvalKit's ``supported_VLM`` and runs VLMEvalKit's ``run.py``. The item id comes from the name of the
question's first image: VLMEvalKit writes a TSV row's images under the names of its ``image_path`` column (the
export's ``qNNNN_vK.png``). A text arm (``benchmark.arms``: R3, no-image, choices-only; a TSV without images) has
no image to name it: for those datasets the model builds its own prompt (VLMEvalKit's ``use_custom_prompt`` /
``build_prompt`` hook, handed the TSV row) and reads the row's ``id`` column."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from vlmeval.vlm.base import BaseModel

from viewcert.errors import InputError
from viewcert.harness.replay import DRY_RUN_FILE, load_replay

_IMAGE = re.compile(r"(q\d+)_v\d+\.[A-Za-z]+$")
#: the VLMEvalKit dataset names of the text arms end so (``benchmark.arms.dataset_name``)
TEXT_ARMS = ("R3", "NoImage", "ChoicesOnly")
_ITEM = "viewcert item "


class ReplayVLM(BaseModel):
    """Answers each question by its item id (from its first image's file name), as the replay gives it."""

    INTERLEAVE = False

    def __init__(self, replay: str = DRY_RUN_FILE, **kwargs) -> None:
        super().__init__()
        self.replay = load_replay(str(replay), Path.cwd())
        if self.replay.note():  # extra answer lines: ignored, counted, said once
            print(self.replay.note(), file=sys.stderr)

    def use_custom_prompt(self, dataset) -> bool:
        """True for a text arm's dataset: its rows carry no image that names the item."""
        return str(dataset or "").startswith("Viewcert") and str(dataset).endswith(TEXT_ARMS)

    def build_prompt(self, line, dataset=None) -> list[dict]:
        """A text arm's row as the message ``viewcert item qNNNN`` (a replay reads the id, not the question)."""
        return [{"type": "text", "value": _ITEM + str(line["id"])}]

    def generate_inner(self, message, dataset=None) -> str:
        texts = [str(m["value"]) for m in message if m["type"] == "text"]
        if len(texts) == 1 and texts[0].startswith(_ITEM):
            return self.replay.answer(texts[0][len(_ITEM):])[0]
        images = [m["value"] for m in message if m["type"] == "image"]
        m = _IMAGE.search(Path(str(images[0])).name) if images else None
        if m is None:
            raise InputError("a question without a viewcert image (qNNNN_vK.png): not an export's dataset")
        return self.replay.answer(m.group(1))[0]
