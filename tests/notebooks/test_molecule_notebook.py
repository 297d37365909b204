"""Notebook 03 (certify a molecular benchmark) runs top to bottom (nbclient, kernel "python3")."""

from __future__ import annotations

import pytest

from tests.support.notebook_runner import run_notebook


def test_molecule_notebook_executes():
    pytest.importorskip("biotite")
    text = run_notebook("03_certify_a_molecular_benchmark.ipynb")
    assert "crystal system" not in text
    assert "item ccd:FC6: read: " in text and "ideal coordinates missing" in text
    # one view: every chiral conformer ambiguous; BNZ is achiral (D6h)
    assert ("front {'ccd:IBP': 'not_determined', 'ccd:EDO': 'not_determined', 'ccd:CLR': 'not_determined', "
            "'ccd:BNZ': 'achiral'}") in text
    # front + top: determined, except EDO (C2 axis along x = front × top)
    assert ("front+top {'ccd:IBP': 'determined', 'ccd:EDO': 'not_determined', 'ccd:CLR': 'determined', "
            "'ccd:BNZ': 'achiral'}") in text
