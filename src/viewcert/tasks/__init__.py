"""Transformation tasks (MiSI-style): ChimeraX screen-axis commands, task items, and the identifiability
oracle that says which answers the after view determines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.tasks.ceiling import run_task
    from viewcert.tasks.credit import transformation_credit
    from viewcert.tasks.identify import ItemResult, identify, identify_all
    from viewcert.tasks.model import TASKS, TaskItem, ViewSetup, make_item, task_grid
    from viewcert.tasks.transforms import Step, Transformation, parse_command, rigid_motion

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "run_task": "ceiling", "transformation_credit": "credit", "ItemResult": "identify",
    "identify": "identify", "identify_all": "identify", "TASKS": "model", "TaskItem": "model",
    "ViewSetup": "model", "make_item": "model", "task_grid": "model", "Step": "transforms",
    "Transformation": "transforms", "parse_command": "transforms", "rigid_motion": "transforms",
}
lazy_face(__name__, _FACE)

__all__ = ["TASKS", "ItemResult", "Step", "TaskItem", "Transformation", "ViewSetup", "identify",
           "identify_all", "make_item", "parse_command", "rigid_motion", "run_task", "task_grid",
           "transformation_credit"]
