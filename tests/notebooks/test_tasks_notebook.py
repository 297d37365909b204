"""Notebook 04 (certify a transformation benchmark) runs top to bottom (nbclient, kernel "python3")."""

from __future__ import annotations

import re

from tests.support.notebook_runner import run_notebook


def test_tasks_notebook_executes():
    text = run_notebook("04_certify_a_transformation_benchmark.ipynb", timeout=300)
    # orthographic zoom: the whole 21-bin grid (1/21, docs/tasks.md); perspective zoom: determined
    assert re.search(r"zoom\s+orthographic\s*: n= 84 unique=  0 exact ceiling=0\.0476", text), text
    assert re.search(r"zoom\s+perspective\s*: n= 84 unique= 84 exact ceiling=1\.0000", text), text
    # handedness: one view never decides (witness share 1.00); with the known structure, chiral ligands: 1.0
    assert re.search(r"handedness .* handedness ceiling=1\.0000 one-view witness share=1\.00", text), text
