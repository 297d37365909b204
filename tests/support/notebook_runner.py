"""Run a notebook of ``notebooks/`` top to bottom (nbclient, kernel "python3" = this interpreter's ipykernel:
jupyter_client runs the kernelspec whose argv[0] is ``python`` with ``sys.executable``) and return the text it
printed. A cell that raises fails the calling test with the cell's error."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def run_notebook(name: str, *, timeout: int = 600) -> str:
    """Execute ``notebooks/NAME`` in its own folder; the concatenated stream output (stdout and stderr)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    path = NOTEBOOKS / name
    nb = nbformat.read(path, as_version=4)
    # nbclient adds an asyncio SIGINT handler while the kernel runs, and asyncio's remove_signal_handler then sets
    # SIGINT to Python's default_int_handler whatever it was before (in an xdist worker: ignored), which every later
    # subprocess of the worker would inherit: put back the disposition found
    sigint = signal.getsignal(signal.SIGINT)
    try:
        nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        if sigint is not None:
            signal.signal(signal.SIGINT, sigint)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    if errors:
        raise AssertionError(f"{name}: {errors[0]['ename']}: {errors[0]['evalue']}")
    return "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
