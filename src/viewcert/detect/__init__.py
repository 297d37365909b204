"""The drawn atoms of a published image, read from its pixels by a classical detector (no trained model), and
matched to the atoms a resolved camera projects (issue 53).

- ``palettes``  ``Palette``, ``named_palette``, ``palette_from_table``, ``PALETTE_NAMES``: element colours as each
                tool draws them (from the tools' own data)
- ``colour``    the background, the appearance model (flat or shaded) and one mask per element
- ``circles``   rim points, centre votes, robust circle fits, explaining-away, slivers
- ``detector``  ``detect_atoms``, ``Detections``, ``DetectorSettings``: centre, radius, element per drawn atom
- ``match``     ``match_detections``, ``Matching``, ``published_view``: detections matched to projected atoms and
                turned into the oracle's observations
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.detect.detector import Detections, DetectorSettings, detect_atoms
    from viewcert.detect.match import Matching, match_detections, published_view
    from viewcert.detect.palettes import PALETTE_NAMES, Palette, named_palette, palette_from_table

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "Detections": "detector", "DetectorSettings": "detector", "detect_atoms": "detector",
    "Matching": "match", "match_detections": "match", "published_view": "match",
    "PALETTE_NAMES": "palettes", "Palette": "palettes", "named_palette": "palettes", "palette_from_table": "palettes",
}
lazy_face(__name__, _FACE)

__all__ = ["PALETTE_NAMES", "Detections", "DetectorSettings", "Matching", "Palette", "detect_atoms",
           "match_detections", "named_palette", "palette_from_table", "published_view"]
