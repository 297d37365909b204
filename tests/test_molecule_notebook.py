"""Notebook 03 (certify a molecular benchmark) runs top to bottom (nbclient, kernel "python3")."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "03_certify_a_molecular_benchmark.ipynb"


def test_molecule_notebook_executes():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("biotite")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "crystal system" not in text
    assert "item ccd:FC6: read: " in text and "ideal coordinates missing" in text
    # one view: every chiral conformer ambiguous; BNZ is achiral (D6h)
    assert ("front {'ccd:IBP': 'not_determined', 'ccd:EDO': 'not_determined', 'ccd:CLR': 'not_determined', "
            "'ccd:BNZ': 'achiral'}") in text
    # front + top: determined, except EDO (C2 axis along x = front × top)
    assert ("front+top {'ccd:IBP': 'determined', 'ccd:EDO': 'not_determined', 'ccd:CLR': 'determined', "
            "'ccd:BNZ': 'achiral'}") in text
