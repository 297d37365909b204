"""Offline dry runs inside the evaluation harnesses: replay models that answer an export's questions from a
file of answers or a rule, registered each harness's own way (``replay``: the answers; ``inspect_replay``:
Inspect AI's model provider ``viewcert-replay``). Nothing here is imported unless a harness asks for it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.harness.replay import DRY_RUN_FILE, Replay, dry_run_answers, load_replay

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "DRY_RUN_FILE": "replay", "Replay": "replay", "dry_run_answers": "replay", "load_replay": "replay",
}
lazy_face(__name__, _FACE)

__all__ = ["DRY_RUN_FILE", "Replay", "dry_run_answers", "load_replay"]
