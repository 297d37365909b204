"""Observations: the oracle's input contract. A structure projected through cameras into per-view 2D points
with element labels (no identities), under an observation model (tiling, noise, analytic occlusion).

- ``project``  ``Observations``, ``ViewObservation``, ``ObservationModel``, ``observe``, ``drawn_atoms``,
               ``centre_visibility``
"""

from viewcert.observe.project import (
    OBSERVE_MODES,
    ObservationModel,
    Observations,
    ViewObservation,
    centre_visibility,
    drawn_atoms,
    observe,
)

__all__ = ["OBSERVE_MODES", "ObservationModel", "Observations", "ViewObservation", "centre_visibility",
           "drawn_atoms", "observe"]
