"""The six X-ray protein–ligand complexes (wwPDB, CC0) beside the checkout, and the mark that skips a test, with
its reason, when they are absent."""

from __future__ import annotations

from pathlib import Path

import pytest

COMPLEXES = Path(__file__).resolve().parents[2] / "shared" / "data" / "complexes"
needs_complexes = pytest.mark.skipif(not COMPLEXES.is_dir(), reason=f"complexes not found at {COMPLEXES}")
