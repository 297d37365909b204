"""Notebook 06 (certify an interaction benchmark) runs top to bottom on the real complexes (skipped when
../shared/data/complexes is absent) and prints what the docs say it shows."""

from __future__ import annotations

import pytest

from tests.support.complex_data import needs_complexes
from tests.support.notebook_runner import run_notebook

pytestmark = needs_complexes


def test_interaction_notebook_executes():
    pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")
    text = run_notebook("06_certify_an_interaction_benchmark.ipynb", timeout=600)
    assert "ASN 161 ND2 A, O16" in text  # 1pwc's ground truth is listed with its values
    assert "only biotite TYR 159 OH A, N4 - outside ProLIF" in text  # the explained disagreement
    assert "6 views  ideal    ceiling 1.00" in text
    assert "6 views  rendered ceiling 0.60" in text and "label_hidden" in text
    assert "27 views rendered ceiling 1.00" in text
    assert "identical reruns: True" in text
