"""Design: per-view occlusion reports (occlusion.py) and the view designer (designer.py) that chooses K
directions maximising the worst-case δ* of a set of structures (δ* itself: ``viewcert.oracle.margin``), and
legibility.py, which chooses K directions in which the labels of a complex's hydrogen-bond entries are legible
(greedy label coverage, ``design --objective legibility``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.design.designer import DesignConfig, design_views, protocol_margins
    from viewcert.design.legibility import LegibilityConfig, certified_ceilings, design_legibility
    from viewcert.design.occlusion import protocol_occlusion, view_occlusion
    from viewcert.design.perspective import measure, perspective_spec

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "DesignConfig": "designer", "design_views": "designer", "protocol_margins": "designer",
    "LegibilityConfig": "legibility", "certified_ceilings": "legibility", "design_legibility": "legibility",
    "protocol_occlusion": "occlusion", "view_occlusion": "occlusion", "measure": "perspective",
    "perspective_spec": "perspective",
}
lazy_face(__name__, _FACE)

__all__ = ["DesignConfig", "LegibilityConfig", "certified_ceilings", "design_legibility", "design_views",
           "measure", "perspective_spec", "protocol_margins", "protocol_occlusion", "view_occlusion"]
