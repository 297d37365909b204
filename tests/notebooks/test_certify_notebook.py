"""The certify notebook runs top to bottom (nbclient, kernel "python3" of this interpreter)."""

from __future__ import annotations

from tests.support.notebook_runner import run_notebook


def test_certify_notebook_executes():
    text = run_notebook("01_certify_a_benchmark.ipynb")
    assert "R1 (crystal_system, truth = dataset): 20/20" in text
    assert "verified: 20 items recomputed, byte-identical" in text
