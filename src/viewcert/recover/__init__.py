"""Camera recovery: the projection that drew a published picture, from the structure and the atoms detected in
it, with no correspondences given (issue 54).

- ``model``       the values read and returned: ``DetectedAtoms``, ``RecoveryHints``, ``RecoveryThresholds``,
                  ``RecoveredPose``, ``Recovery``
- ``solve``       ``recover_camera``: refusals, the search, the best camera and the admissible poses
- ``minimal``     exact cameras from three correspondences (scaled orthographic; perspective P3P), vectorised
- ``hypotheses``  outline triples and the batch score of hypotheses against the whole picture
- ``fit``         least-squares refinement with re-matching (orthographic / perspective, per-axis scales)
- ``evidence``    projection, occlusion, matching and the counts a camera is judged by
- ``poses``       the poses symmetry makes indistinguishable, and distances between poses
- ``table``       ``camera = { tool = "unknown", ... }``: the hints it gives; the recovered camera written back in
                  the renderer's own terms
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.recover.model import (
        NOT_RECOVERED,
        RECOVERED,
        DetectedAtoms,
        RecoveredPose,
        Recovery,
        RecoveryHints,
        RecoveryThresholds,
    )
    from viewcert.recover.solve import SEARCH, SearchSettings, recover_camera
    from viewcert.recover.table import RECOVERY_KEYS, UNKNOWN_TOOL, hints_from_table, is_unknown, written_back

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "DetectedAtoms": "model", "RecoveredPose": "model", "Recovery": "model", "RecoveryHints": "model",
    "RecoveryThresholds": "model", "RECOVERED": "model", "NOT_RECOVERED": "model",
    "recover_camera": "solve", "SEARCH": "solve", "SearchSettings": "solve",
    "RECOVERY_KEYS": "table", "UNKNOWN_TOOL": "table", "hints_from_table": "table", "is_unknown": "table",
    "written_back": "table",
}
lazy_face(__name__, _FACE)

__all__ = ["NOT_RECOVERED", "RECOVERED", "RECOVERY_KEYS", "SEARCH", "UNKNOWN_TOOL", "DetectedAtoms", "RecoveredPose",
           "Recovery", "RecoveryHints", "RecoveryThresholds", "SearchSettings", "hints_from_table", "is_unknown",
           "recover_camera", "written_back"]
