"""The harness venv of ``make harness`` (lmms-eval, VLMEvalKit): why its tests skip (``LMMS``, ``VLM``) and
the environment its commands run in, offline."""

from __future__ import annotations

import os

from tests.support.harness_roundtrip import (
    HARNESS_PY,
    harness_import_error,
)

HBIN = HARNESS_PY.parent
LMMS = harness_import_error("lmms_eval, viewcert.harness.lmms_replay")
# ms-vlmeval 0.0.20 imports torchvision (vlmeval.dataset): with PyTorch's CPU build and no CPU torchvision on
# the machine, make harness leaves it out and these skip; make harness-vlmevalkit runs them in a venv with the
# CUDA torch/torchvision pair on the CPU (docs/harnesses.md)
VLM = harness_import_error("vlmeval.run, viewcert.harness.vlmevalkit_model")


def offline_env() -> dict:
    """The environment of a command run in the harness venv offline: its bin first, no PYTHONPATH, every
    download refused at once."""
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens, any download fails at once
    env = {k: v for k, v in os.environ.items() if k not in ("LMUData", "MMEVAL_ROOT", "PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "PATH": os.pathsep.join([str(HBIN), "/usr/bin", "/bin"]),
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "disabled",
            "HTTP_PROXY": closed, "HTTPS_PROXY": closed, "http_proxy": closed, "https_proxy": closed,
            "NO_PROXY": "", "no_proxy": ""}

