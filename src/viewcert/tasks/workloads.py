"""The transformation tasks' warm-up workload (``viewcert.kernels.register``; ``viewcert warmup`` runs it): one
MiSI-style item on the smallest built-in molecule, which reaches ``tasks``' matching kernels."""

from __future__ import annotations

from viewcert.io.builtin import builtin_molecules
from viewcert.kernels import register
from viewcert.tasks.ceiling import run_task
from viewcert.tasks.model import ViewSetup

__all__ = ["task_workload"]


@register("tasks", order=30)
def task_workload() -> None:
    """One translation item, 160 × 120 px, one per structure."""
    m = min(builtin_molecules(), key=lambda s: (len(s.numbers), s.identifier))
    run_task([(m.identifier, m.positions, m.numbers)], "translation", ViewSetup(width=160, height=120),
             per_structure=1)
