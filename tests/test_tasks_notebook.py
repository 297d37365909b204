"""Notebook 04 (certify a transformation benchmark) runs top to bottom (nbclient, kernel "python3")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "04_certify_a_transformation_benchmark.ipynb"


def test_tasks_notebook_executes():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    # orthographic zoom: the whole 21-bin grid (1/21, docs/tasks.md); perspective zoom: determined
    assert re.search(r"zoom\s+orthographic\s*: n= 84 unique=  0 exact ceiling=0\.0476", text), text
    assert re.search(r"zoom\s+perspective\s*: n= 84 unique= 84 exact ceiling=1\.0000", text), text
    # handedness: one view never decides (witness share 1.00); with the known structure, chiral ligands: 1.0
    assert re.search(r"handedness .* handedness ceiling=1\.0000 one-view witness share=1\.00", text), text
