"""Simulated coverage of the hierarchical model's intervals (issue 56; ``attribution.hierarchy``): 5 models at two
rungs, n = 210 items, K = 3, per-rung item accuracies p ~ Beta(2, 3), model and arm effects
(``tests/support/hierarchy_coverage.py`` says what is simulated), 200 seeded replicates; nominal 95 %, the band
93–97 %. A correctness figure, not a speed claim. Usage: ``nice -n 10 python benchmarks/bench_hierarchy_coverage.py``;
writes ``benchmarks/results/hierarchy_coverage.json``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.hierarchy_coverage import coverage  # noqa: E402

REPS = 200


def main() -> None:
    got = coverage(reps=REPS)
    out = {"what": "share of replicates whose 95 % posterior interval holds the simulated rung accuracy (mean of the "
                   "true p over models and items) and the difference R3 - R4", "band": [0.93, 0.97],
           "results": {k: (float(v) if k != "setting" else v) for k, v in got.items()}}
    path = Path(__file__).resolve().parent / "results" / "hierarchy_coverage.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(json.dumps(out, indent=1, sort_keys=True, ensure_ascii=False))


if __name__ == "__main__":
    main()
