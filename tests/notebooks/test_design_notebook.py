"""Notebook 05 (design the views of a benchmark) runs top to bottom (nbclient, kernel "python3")."""

from __future__ import annotations

from tests.support.notebook_runner import run_notebook


def test_design_notebook_executes():
    text = run_notebook("05_design_the_views.ipynb")
    assert "round trip identical: True" in text
    assert "designed-3 worst δ* ≥ render-ceiling-5 worst δ*: True" in text
    assert "R1 (crystal_system, truth = dataset): 20/20" in text
