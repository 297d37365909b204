"""VLMEvalKit replay model ``viewcert-replay``: a ``vlmeval.vlm.base.BaseModel`` answering each question by its
item id from a replay (``viewcert.harness.replay``). ``python -m viewcert.harness.vlmevalkit_replay`` adds it to
VLMEvalKit's ``supported_VLM`` and runs VLMEvalKit's ``run.py``. The item id comes from the name of the
question's first image: VLMEvalKit writes a TSV row's images under the names of its ``image_path`` column (the
export's ``qNNNN_vK.png``)."""

from __future__ import annotations

import re
from pathlib import Path

from vlmeval.vlm.base import BaseModel

from viewcert.errors import InputError
from viewcert.harness.replay import DRY_RUN_FILE, load_replay

_IMAGE = re.compile(r"(q\d+)_v\d+\.[A-Za-z]+$")


class ReplayVLM(BaseModel):
    """Answers each question by its item id (from its first image's file name), as the replay gives it."""

    INTERLEAVE = False

    def __init__(self, replay: str = DRY_RUN_FILE, **kwargs) -> None:
        super().__init__()
        self.replay = load_replay(str(replay), Path.cwd())

    def generate_inner(self, message, dataset=None) -> str:
        images = [m["value"] for m in message if m["type"] == "image"]
        m = _IMAGE.search(Path(str(images[0])).name) if images else None
        if m is None:
            raise InputError("a question without a viewcert image (qNNNN_vK.png): not an export's dataset")
        return self.replay.answer(m.group(1))[0]
