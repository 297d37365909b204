"""Why the same ``pixel-cnn`` command can give other predictions on another CPU: two probes on one machine.

1. **Training kernels.** The recipe (``learn.cnn``, one thread, deterministic algorithms, seed 0) is trained for
   two epochs on 150 e3 training structures and predicts 100 others, in a fresh process per variant: as is
   (twice), with ATen's CPU dispatch capped to its portable kernels (``ATEN_CPU_CAPABILITY=default``) and
   with oneDNN capped to older instruction sets (``ONEDNN_MAX_CPU_ISA=AVX`` / ``SSE41``), as an older or
   other CPU would run them. Recorded: a digest of the trained weights and the largest difference of the
   predicted probabilities from the first run.
2. **Rendering.** 60 training structures rendered by viewcert's renderer (numba) compiled for this CPU and
   for a generic x86-64 CPU (``NUMBA_CPU_NAME=generic``, separate numba caches): bytes compared.

Only training structures are used; no eval item is rendered or scored. Usage: ``python
benchmarks/probe_learn_cpu.py``; writes ``benchmarks/results/learn_cpu_probe.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
E3 = ROOT.parent / "shared" / "data" / "render-ceiling" / "data" / "e3"
OUT = ROOT / "benchmarks" / "results" / "learn_cpu_probe.json"

TRAIN = """
import sys, json, hashlib, numpy as np, torch
from dataclasses import replace
from viewcert.learn.cnn import TrainSettings, train_cnn, predict_proba
from viewcert.learn.data import CRYSTAL_SYSTEMS, load_learn_data
from viewcert.learn.views import ViewSettings, render_split
d = load_learn_data(sys.argv[1])
tr, te = list(range(0, 1200, 8)), list(range(3, 1610, 16))[:100]
x = render_split([d.train.items[i] for i in tr + te], ViewSettings.from_options(size=64), cache=sys.argv[2])
code = {c: i for i, c in enumerate(CRYSTAL_SYSTEMS)}
y = np.array([code[d.train.labels[i]] for i in tr])
model, _ = train_cnn(x[:len(tr)], y, replace(TrainSettings(), epochs=2, seed=0))
p = predict_proba(model, x[len(tr):])
np.save(sys.argv[3], p)
w = b"".join(t.detach().numpy().tobytes() for t in model.state_dict().values())
print(json.dumps({"cpu_capability": torch.backends.cpu.get_cpu_capability(),
                  "weights_sha256": hashlib.sha256(w).hexdigest()[:16]}))
"""

RENDER = """
import sys, numpy as np
from viewcert.learn.data import load_learn_data
from viewcert.learn.views import ViewSettings, render_split
d = load_learn_data(sys.argv[1])
np.save(sys.argv[2], render_split(d.train.items[:60], ViewSettings.from_options(size=64)))
"""

VARIANTS = {"as is": {}, "as is, again": {}, "ATEN_CPU_CAPABILITY=default": {"ATEN_CPU_CAPABILITY": "default"},
            "ONEDNN_MAX_CPU_ISA=AVX": {"ONEDNN_MAX_CPU_ISA": "AVX"},
            "ONEDNN_MAX_CPU_ISA=SSE41": {"ONEDNN_MAX_CPU_ISA": "SSE41"}}


def _py(code: str, args: list[str], env: dict) -> str:
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}
    return subprocess.run([sys.executable, "-c", code, *args], env=full, check=True, capture_output=True,
                          text=True).stdout.strip()


def main() -> int:
    import numpy as np

    if not (E3 / "structures.json").is_file():
        print(f"skip: e3 data absent ({E3})")
        return 0
    rec: dict = {"training": {}, "rendering": {}}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        first = None
        for name, env in VARIANTS.items():
            out = json.loads(_py(TRAIN, [str(E3), str(t / "cache"), str(t / "p.npy")], env))
            p = np.load(t / "p.npy")
            first = p if first is None else first
            rec["training"][name] = {**out, "max_abs_probability_difference": float(abs(p - first).max())}
        for name, cpu in (("host", None), ("generic", "generic")):
            env = {"NUMBA_CACHE_DIR": str(t / f"numba-{name}"), **({"NUMBA_CPU_NAME": cpu} if cpu else {})}
            _py(RENDER, [str(E3), str(t / f"r-{name}.npy")], env)
        a, b = np.load(t / "r-host.npy"), np.load(t / "r-generic.npy")
        rec["rendering"] = {"items": 60, "views": 5, "size_px": 64, "identical_bytes": bool(np.array_equal(a, b)),
                            "pixels_differing": int((a != b).sum())}
    OUT.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    print(json.dumps(rec, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
