"""The typed sections of an as-published certificate (``viewcert certify images:FOLDER/images.toml``, issue 53):
what was read from each published image and how the as-published ceiling compares with the geometric one.

- :class:`PublishedImage`    ``images[]``: one image: its file, SHA-256 and size, the camera resolved to its 3×4
                             projection, the palette and detector model, the counts (atoms drawn, expected visible,
                             detected, matched, unmatched) and the detections with their residuals (px)
- :class:`PublishedStructure` ``items[].structure``: the structure as shipped (file, SHA-256, formula, tiling)
- :class:`PublishedSummary`  ``summary``: both ceilings with their exact bounds, the items that differ by reason,
                             the detection totals

A field a section did not write stays :data:`~viewcert.formats.fields.ABSENT`; unknown keys are kept in ``extra``
(``from_dict(d).to_dict() == d``); ``KINDS`` declares what code relies on (``formats.fields.Section``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from viewcert.formats.fields import ABSENT, Section
from viewcert.formats.recovery_sections import RecoveredCamera
from viewcert.formats.summary_sections import RateBound

__all__ = ["DETECTION_COLUMNS", "ImageProjection", "PublishedImage", "PublishedSettings", "PublishedStructure",
           "PublishedSummary"]

#: the columns of a detection row in ``images[].detections`` (px; atom: the drawn atom's index, -1 unmatched)
DETECTION_COLUMNS = ("u", "v", "radius", "element", "atom", "residual")


@dataclass(frozen=True)
class ImageProjection(Section):
    """``images[].projection``: an image's camera resolved to one 3×4 projection onto its pixels
    (``cameras.PixelProjection.to_dict``)."""

    SOURCE: ClassVar[str] = "images[].projection"
    KINDS: ClassVar[dict] = {"kind": "text", "matrix": "list", "width": "count", "height": "count"}
    kind: str = ABSENT  # orthographic (P's last row (0, 0, 0, 1)) | perspective
    tool: str = ABSENT  # the tool whose terms the camera was stated in
    name: str = ABSENT  # the view's name
    width: int = ABSENT  # a count of pixels across
    height: int = ABSENT  # a count of pixels down
    #: the 12 numbers of P row by row (P00 ... P23): world Å -> the image's homogeneous pixels (canonical scale:
    #: orthographic last row (0, 0, 0, 1); perspective w = the depth, Å)
    matrix: list = ABSENT
    extra: Mapping = field(default_factory=dict)

    def px_per_angstrom(self) -> float:
        """An orthographic image's px per Å (the geometric mean of P's two rows); 0 for a perspective one."""
        import math

        if self.kind != "orthographic" or not isinstance(self.matrix, list) or len(self.matrix) != 12:
            return 0.0
        m = [float(x) for x in self.matrix]
        return math.sqrt(math.hypot(*m[0:3]) * math.hypot(*m[4:7]))


@dataclass(frozen=True)
class PublishedSettings(Section):
    """``settings``: what an as-published certification ran with (``verify`` reruns it)."""

    SOURCE: ClassVar[str] = "settings"
    KINDS: ClassVar[dict] = {"delta": "number", "tau": "number", "angle_tolerance": "number", "pairs": "text",
                             "merge": "text or null", "score": "text", "truth": "text", "confidence": "number",
                             "molecule_levels": "list"}
    delta: float = ABSENT  # Å: the oracle's tolerance δ
    tau: float = ABSENT  # Å: spglib's and moyopy's symprec τ
    angle_tolerance: float = ABSENT  # degrees (−1: spglib's own rule)
    pairs: str = ABSENT  # the oracle's candidate view pairs (all | first)
    merge: str | None = ABSENT  # the oracle's merge rule (null: its default)
    periodic_merge: bool = ABSENT  # merged by minimum image in the cell (true) or in Cartesian space
    score: str = ABSENT  # the crystal level scored (crystal_system | point_group | space_group)
    truth: str = ABSENT  # the reference: the answer images.toml gives (dataset) or the cell's own label (rendered)
    confidence: float = ABSENT  # the exact bounds' confidence 1 − α
    molecule_levels: list = ABSENT  # the molecular levels scored
    scoring: dict = ABSENT  # the scoring rule in words (as a ceiling certificate states it)
    geometric: str = ABSENT  # what the geometric ceiling observes, in words
    as_published: str = ABSENT  # what the as-published ceiling observes, in words
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class PublishedImage(Section):
    """``images[]``: one published image, what it declares and what was read from it (pixel frame: u right, v
    down, origin at the image's top-left corner)."""

    SOURCE: ClassVar[str] = "images[]"
    KINDS: ClassVar[dict] = {"file": "text", "item": "text", "name": "text", "sha256": "text",
                             "width": "count", "height": "count", "projection": ImageProjection,
                             "n_drawn": "count or null",
                             "expected_visible": "count or null", "detected": "count or null",
                             "matched": "count or null", "unmatched": "count or null",
                             "ambiguous": "count or null", "element_mismatch": "count or null",
                             "centre_rms_px": "number or null", "centre_max_px": "number or null",
                             "detections": "list or null", "recovered": RecoveredCamera}
    file: str = ABSENT  # the image's name relative to the folder of images.toml
    item: str = ABSENT  # the item (question) it is a view of
    name: str = ABSENT  # the view's name
    renderer: str = ABSENT  # the tool its camera is stated in (pymol, matplotlib, ase, ...)
    sha256: str = ABSENT  # SHA-256 of the image file's bytes
    format: str = ABSENT  # png | jpeg
    width: int = ABSENT  # a count of pixels across
    height: int = ABSENT  # a count of pixels down
    colour: str = ABSENT  # the colour model read (RGB, RGBA composited over white, grey)
    projection: ImageProjection = ABSENT  # the camera resolved to P (``images[].projection``)
    camera: dict = ABSENT  # the camera table as images.toml states it (the tool's own terms)
    palette: dict = ABSENT  # the palette used: name, source and the colours of the structure's elements
    shading: str = ABSENT  # the detector's appearance model as resolved (flat | shaded)
    n_drawn: int = ABSENT  # a count of the atoms drawn (the structure's atoms × its tiling)
    #: a count of the drawn atoms inside the image whose projected centre no nearer atom's drawn disc covers
    expected_visible: int = ABSENT
    detected: int = ABSENT  # a count of the atoms the detector found in the pixels
    matched: int = ABSENT  # a count of the detections matched to an atom the camera projects within their gate
    unmatched: int = ABSENT  # a count of the detections no projected atom explains (reported, never guessed)
    ambiguous: int = ABSENT  # a count of the detections whose colour ties between elements (no element)
    element_mismatch: int = ABSENT  # a count of matched detections whose element is not their atom's
    centre_rms_px: float | None = ABSENT  # px: RMS distance of the matched detections to their projected atoms
    centre_max_px: float | None = ABSENT  # px: the largest of those distances
    #: the detections, one row each [u px, v px, radius px, element ('' ambiguous), atom (drawn index, -1
    #: unmatched), residual px]
    detections: list = ABSENT
    error: str = ABSENT  # why the image could not be read (its item is then an error)
    #: the camera recovered from the pixels when images.toml states none (``tool = "unknown"``, issue 54)
    recovered: RecoveredCamera = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class PublishedStructure(Section):
    """``items[].structure``: the structure as shipped, as images.toml names it."""

    SOURCE: ClassVar[str] = "items[].structure"
    KINDS: ClassVar[dict] = {"file": "text", "sha256": "text", "n_atoms": "count or null", "tiling": "list or null"}
    file: str = ABSENT  # its name relative to the folder of images.toml
    sha256: str = ABSENT  # SHA-256 of the file's bytes
    formula: str = ABSENT  # the cell's (or molecule's) formula
    n_atoms: int = ABSENT  # a count of atoms in the file (one cell)
    periodic: bool = ABSENT  # a crystal (a cell) or a molecule
    tiling: list = ABSENT  # the cell repetitions drawn [na, nb, nc]
    cell_frame: str = ABSENT  # how a CIF's cell sits in the tool's frame (a-along-x | pymatgen)
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class PublishedSummary(Section):
    """``summary``: the as-published ceiling (what the published pixels determine) beside the geometric ceiling
    of the same cameras (every drawn atom, exact projection), each correct/n with its exact bound; the items whose
    two outcomes differ, by reason; the detection totals; the items that could not be certified (not counted)."""

    SOURCE: ClassVar[str] = "summary"
    KINDS: ClassVar[dict] = {"n": "count", "n_errors": "count", "n_differ": "count",
                             "as_published": RateBound, "geometric": RateBound, "reasons": "object",
                             "detection": "object", "errors": "list"}
    n: int = ABSENT  # a count of the items certified (errors left out)
    n_errors: int = ABSENT  # a count of the items that could not be read or certified
    level: str = ABSENT  # the level scored (crystal_system, ...; molecules: their own levels)
    as_published: RateBound = ABSENT  # the as-published ceiling: correct/n from the detected atoms
    geometric: RateBound = ABSENT  # the geometric ceiling of the same cameras
    n_differ: int = ABSENT  # a count of the items whose two outcomes differ
    reasons: dict = ABSENT  # reason -> the count of differing items it explains
    #: totals over the images: images, atoms expected visible, detected, matched, unmatched, ambiguous, element
    #: mismatches, the matched residuals' RMS and largest (px) and the RMS in Å at each view's scale
    detection: dict = ABSENT
    #: a sentence when δ is below three times the detections' RMS in Å (the pixels cannot settle the atoms to δ)
    delta_note: str = ABSENT
    errors: list = ABSENT  # [{id, error}] of the items that could not be certified
    extra: Mapping = field(default_factory=dict)
