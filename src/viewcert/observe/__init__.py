"""Observations: the oracle's input contract. A structure projected through cameras into per-view 2D points
with element labels (no identities), under an observation model (tiling, noise, analytic occlusion).

- ``project``  ``Observations``, ``ViewObservation``, ``ObservationModel``, ``observe``, ``drawn_atoms``,
               ``centre_visibility``
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.observe.project import (
        OBSERVE_MODES,
        ObservationModel,
        Observations,
        ViewObservation,
        centre_visibility,
        drawn_atoms,
        observe,
    )

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "centre_visibility": "project", "drawn_atoms": "project", "ObservationModel": "project",
    "Observations": "project", "observe": "project", "OBSERVE_MODES": "project", "ViewObservation": "project",
}
lazy_face(__name__, _FACE)

__all__ = ["OBSERVE_MODES", "ObservationModel", "Observations", "ViewObservation", "centre_visibility",
           "drawn_atoms", "observe"]
