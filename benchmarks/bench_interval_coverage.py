"""Simulated coverage of the ladder report's intervals for K-sample figures (issue 56): n = 210 items, K = 3
samples, p_i ~ Beta(a, b) in two settings (Beta(2, 3): items spread around 0.4; Beta(0.6, 0.4): most items near
always right or always wrong, as the study's arms are), 1000 seeded replicates each
(``tests/support/interval_coverage.py`` says what is computed). Nominal 95 %; the acceptance band is 93–97 %
(``tests/stats/test_interval_coverage.py`` holds it). A correctness figure, not a speed claim. Usage:
``nice -n 10 python benchmarks/bench_interval_coverage.py``; writes ``benchmarks/results/interval_coverage.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.interval_coverage import coverage  # noqa: E402

SETTINGS = ((2.0, 3.0), (0.6, 0.4))


def main() -> None:
    out = {"what": "share of 1000 replicates whose 95 % interval holds the population value (n = 210, K = 3, "
                   "p_i ~ Beta(a, b)); Clopper-Pearson for counts, item bootstrap (2000 resamples) for means, the "
                   "Beta-Binomial posterior (Laplace) for mu",
           "band": [0.93, 0.97], "results": [coverage(a, b) for a, b in SETTINGS]}
    path = Path(__file__).resolve().parent / "results" / "interval_coverage.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
