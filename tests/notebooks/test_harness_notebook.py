"""Notebook 07 (harness round trip: export → Inspect → ladder) runs top to bottom (nbclient, kernel "python3")."""

from __future__ import annotations

import re

from tests.support.notebook_runner import run_notebook


def test_harness_notebook_executes():
    text = run_notebook("07_harness_round_trip.ipynb", timeout=600)
    # four stub answers: right, wrong, right after prose, none → 2/4 by hand, by Inspect and by the ladder
    assert "hand count 2/4; Inspect accuracy 0.5" in text, text
    assert re.search(r"R4 = 2/4 \(mockllm/model\)", text), text
    # zoom: exact, 3 Å off, no command, exact → Inspect 2/4; MiSI (1 + 0.7 + 0 + 1)/4 = 0.675
    assert "Inspect accuracy 0.5" in text and "MiSI by hand: 0.675" in text, text
    assert re.search(r"mockllm/model\s+R4\s+2\s+4\s+0\.675", text), text
