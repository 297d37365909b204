"""The typed sections of an as-published certificate (``viewcert certify images:FOLDER/images.toml``, issue 53):
what was read from each published image and how the as-published ceiling compares with the geometric one, each a
:class:`~viewcert.formats.model.Record` whose fields are the keys ``certify.published`` writes.

- :class:`ImageProjection`   ``images[].projection``: an image's camera resolved to one 3×4 projection
- :class:`PublishedSettings` ``settings``: what the certification ran with
- :class:`PublishedImage`    ``images[]``: one image: its file, SHA-256 and size, the camera resolved to its 3×4
                             projection, the palette and detector model, the counts (atoms drawn, expected visible,
                             detected, matched, unmatched) and the detections with their residuals (px)
- :class:`PublishedStructure` ``items[].structure``: the structure as shipped (file, SHA-256, formula, tiling)
- :class:`PublishedSummary`  ``summary``: both ceilings with their exact bounds, the items that differ by reason,
                             the detection totals
"""

from __future__ import annotations

import math
from typing import ClassVar

from pydantic import Field

from viewcert.formats.model import Bool, Count, List, Number, Object, Record, Text
from viewcert.formats.recovery_sections import RecoveredCamera
from viewcert.formats.summary_sections import RateBound

__all__ = ["DETECTION_COLUMNS", "ImageProjection", "PublishedImage", "PublishedSettings", "PublishedStructure",
           "PublishedSummary"]

#: the columns of a detection row in ``images[].detections`` (px; atom: the drawn atom's index, -1 unmatched)
DETECTION_COLUMNS = ("u", "v", "radius", "element", "atom", "residual")


class ImageProjection(Record):
    """``images[].projection``: an image's camera resolved to one 3×4 projection onto its pixels
    (``cameras.PixelProjection.to_dict``)."""

    SOURCE: ClassVar[str] = "images[].projection"
    kind: Text | None = Field(None, description="orthographic (P's last row (0, 0, 0, 1)) | perspective")
    tool: Text | None = Field(None, description="the tool whose terms the camera was stated in")
    name: Text | None = Field(None, description="the view's name")
    width: Count | None = Field(None, description="a count of pixels across")
    height: Count | None = Field(None, description="a count of pixels down")
    matrix: List | None = Field(None, description=(
        "the 12 numbers of P row by row (P00 ... P23): world Å -> the image's homogeneous pixels (canonical "
        "scale: orthographic last row (0, 0, 0, 1); perspective w = the depth, Å)"))

    def px_per_angstrom(self) -> float:
        """An orthographic image's px per Å (the geometric mean of P's two rows); 0 for a perspective one.

        Returns
        -------
        float
            px per Å (0 when the projection is not orthographic or has no 12-number matrix).
        """
        if self.kind != "orthographic" or not isinstance(self.matrix, list) or len(self.matrix) != 12:
            return 0.0
        m = [float(x) for x in self.matrix]
        return math.sqrt(math.hypot(*m[0:3]) * math.hypot(*m[4:7]))


class PublishedSettings(Record):
    """``settings``: what an as-published certification ran with (``verify`` reruns it)."""

    SOURCE: ClassVar[str] = "settings"
    delta: Number = Field(description="Å: the oracle's tolerance δ")
    tau: Number = Field(description="Å: spglib's and moyopy's symprec τ")
    angle_tolerance: Number = Field(description="degrees (−1: spglib's own rule)")
    pairs: Text = Field(description="the oracle's candidate view pairs (all | first)")
    merge: Text | None = Field(description="the oracle's merge rule (null: its default)")
    periodic_merge: Bool = Field(description=(
        "merged by minimum image in the cell (true) or in Cartesian space"))
    score: Text = Field(description="the crystal level scored (crystal_system | point_group | space_group)")
    truth: Text = Field(description=(
        "the reference: the answer images.toml gives (dataset) or the cell's own label (rendered)"))
    confidence: Number = Field(description="the exact bounds' confidence 1 − α")
    molecule_levels: List = Field(description="the molecular levels scored")
    scoring: Object = Field(description="the scoring rule in words (as a ceiling certificate states it)")
    geometric: Text = Field(description="what the geometric ceiling observes, in words")
    as_published: Text = Field(description="what the as-published ceiling observes, in words")


class PublishedImage(Record):
    """``images[]``: one published image, what it declares and what was read from it (pixel frame: u right, v
    down, origin at the image's top-left corner)."""

    SOURCE: ClassVar[str] = "images[]"
    file: Text | None = Field(None, description="the image's name relative to the folder of images.toml")
    item: Text | None = Field(None, description="the item (question) it is a view of")
    name: Text | None = Field(None, description="the view's name")
    renderer: Text | None = Field(None, description="the tool its camera is stated in (pymol, matplotlib, ase, ...)")
    sha256: Text | None = Field(None, description="SHA-256 of the image file's bytes")
    format: Text | None = Field(None, description="png | jpeg")
    width: Count | None = Field(None, description="a count of pixels across")
    height: Count | None = Field(None, description="a count of pixels down")
    colour: Text | None = Field(None, description="the colour model read (RGB, RGBA composited over white, grey)")
    projection: ImageProjection | None = Field(None, description=(
        "the camera resolved to P (``ImageProjection``)"))
    camera: Object | None = Field(None, description="the camera table as images.toml states it (the tool's own terms)")
    palette: Object | None = Field(None, description=(
        "the palette used: name, source and the colours of the structure's elements"))
    shading: Text | None = Field(None, description="the detector's appearance model as resolved (flat | shaded)")
    n_drawn: Count | None = Field(None, description="a count of the atoms drawn (the structure's atoms × its tiling)")
    expected_visible: Count | None = Field(None, description=(
        "a count of the drawn atoms inside the image whose projected centre no nearer atom's drawn disc covers"))
    detected: Count | None = Field(None, description="a count of the atoms the detector found in the pixels")
    matched: Count | None = Field(None, description=(
        "a count of the detections matched to an atom the camera projects within their gate"))
    unmatched: Count | None = Field(None, description=(
        "a count of the detections no projected atom explains (reported, never guessed)"))
    ambiguous: Count | None = Field(None, description=(
        "a count of the detections whose colour ties between elements (no element)"))
    element_mismatch: Count | None = Field(None, description=(
        "a count of matched detections whose element is not their atom's"))
    centre_rms_px: Number | None = Field(None, description=(
        "px: RMS distance of the matched detections to their projected atoms"))
    centre_max_px: Number | None = Field(None, description="px: the largest of those distances")
    detections: List | None = Field(None, description=(
        "the detections, one row each [u px, v px, radius px, element ('' ambiguous), atom (drawn index, -1 "
        "unmatched), residual px]"))
    error: Text | None = Field(None, description="why the image could not be read (its item is then an error)")
    recovered: RecoveredCamera | None = Field(None, description=(
        "the camera recovered from the pixels when images.toml states none (``tool = \"unknown\"``, issue 54; "
        "``RecoveredCamera``)"))


class PublishedStructure(Record):
    """``items[].structure``: the structure as shipped, as images.toml names it."""

    SOURCE: ClassVar[str] = "items[].structure"
    file: Text | None = Field(None, description="its name relative to the folder of images.toml")
    sha256: Text | None = Field(None, description="SHA-256 of the file's bytes")
    formula: Text | None = Field(None, description="the cell's (or molecule's) formula")
    n_atoms: Count | None = Field(None, description="a count of atoms in the file (one cell)")
    periodic: Bool | None = Field(None, description="a crystal (a cell) or a molecule")
    tiling: List | None = Field(None, description="the cell repetitions drawn [na, nb, nc]")
    cell_frame: Text | None = Field(None, description=(
        "how a CIF's cell sits in the tool's frame (a-along-x | pymatgen)"))


class PublishedSummary(Record):
    """``summary``: the as-published ceiling (what the published pixels determine) beside the geometric ceiling
    of the same cameras (every drawn atom, exact projection), each correct/n with its exact bound; the items whose
    two outcomes differ, by reason; the detection totals; the items that could not be certified (not counted)."""

    SOURCE: ClassVar[str] = "summary"
    n: Count = Field(description="a count of the items certified (errors left out)")
    n_errors: Count = Field(description="a count of the items that could not be read or certified")
    level: Text = Field(description=(
        "the level scored (crystal_system, ...; molecules: their own levels)"))
    as_published: RateBound = Field(description=(
        "the as-published ceiling: correct/n from the detected atoms (``RateBound``)"))
    geometric: RateBound = Field(description="the geometric ceiling of the same cameras (``RateBound``)")
    n_differ: Count = Field(description="a count of the items whose two outcomes differ")
    reasons: Object = Field(description="reason -> the count of differing items it explains")
    detection: Object = Field(description=(
        "totals over the images: images, atoms expected visible, detected, matched, unmatched, ambiguous, element "
        "mismatches, the matched residuals' RMS and largest (px) and the RMS in Å at each view's scale"))
    delta_note: Text | None = Field(None, description=(
        "a sentence when δ is below three times the detections' RMS in Å (the pixels cannot settle the atoms to "
        "δ)"))
    errors: List = Field(description="[{id, error}] of the items that could not be certified")
