"""Simulated coverage of the hierarchical model's intervals (issue 56; ``attribution.hierarchy``): 5 models at two
rungs, n = 210 items, K = 3, per-rung item accuracies from three families (Beta(2, 3), Beta(0.6, 0.4) as the issue
states, and logit-normal, the model's own family, so that the result is not tuned to one), model and arm effects
(``tests/support/hierarchy_coverage.py`` says what is simulated), 1000 seeded replicates per family; nominal 95 %,
the band 93–97 % (at 1000 replicates a coverage of 0.95 has a binomial SE of 0.007). A correctness figure, not a
speed claim; about 5 CPU-minutes (21 wall-minutes on 2 cores shared with other jobs). Usage:
``nice -n 10 python benchmarks/bench_hierarchy_coverage.py``; writes ``benchmarks/results/hierarchy_coverage.json``."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

# small dense algebra in a loop: OpenBLAS's threads only contend for the cores (set before numpy loads)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.hierarchy_coverage import FAMILIES, coverage  # noqa: E402

REPS = 1000


def _rounded(x):
    return {k: _rounded(v) for k, v in x.items()} if isinstance(x, dict) else round(x, 5) if isinstance(x, float) else x


def main() -> None:
    results = []
    for family in FAMILIES:
        start = time.perf_counter()
        got = coverage(reps=REPS, family=family)
        got["seconds"] = time.perf_counter() - start
        results.append(_rounded({k: (float(v) if isinstance(v, float) else v) for k, v in got.items()}))
        print(json.dumps(results[-1], sort_keys=True, ensure_ascii=False), flush=True)
    out = {"what": "share of replicates whose 95 % posterior interval holds the simulated rung accuracy (mean of the "
                   "true p over models and items) and the difference R3 - R4; mean_width: the intervals' mean width, "
                   "mean_error: the posterior mean's mean error (bias); mean_z, sd_z: mean and SD of the standardised "
                   "error (posterior mean - target) / (width / 3.92), 0 and 1 when calibrated; seconds: wall time of "
                   "the family's fits on the machine that ran it (2 cores shared with other jobs; not a speed claim)",
           "band": [0.93, 0.97], "results": results}
    path = Path(__file__).resolve().parent / "results" / "hierarchy_coverage.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
