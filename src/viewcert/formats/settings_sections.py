"""The settings sections of the certificates, typed (issue 41 item 1): what a ceiling certificate records of its
inputs, configuration, protocol, observation model, tolerances (Å; angles in degrees), oracle settings, scoring
and location, and what a task or interaction certificate (and an export manifest) records of its settings,
protocol and tolerances.

Each class is a :class:`~viewcert.formats.fields.Section`: every known key a field (:data:`ABSENT` when the
object has none), unknown keys kept in ``extra``, so ``from_dict(d).to_dict() == d``. What code relies on is
declared in each section's ``KINDS``; a value of the wrong kind (``inputs.files`` not an object, a tolerance not a
number) is a one-line ``InputError`` naming it (``tolerances.delta must be a number, got '0.01'``). The same JSON
in two records is one class: an export's settings (:class:`ExportSettingsRecord`) are a task certificate's, an
interaction certificate's and a manifest's; a task's protocol record (:class:`TaskProtocol`) is its
certificate's ``protocol`` and, for a protocol given as an object, its ``settings.protocol``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from viewcert.formats.fields import ABSENT, Section, typed_section

__all__ = ["CeilingRecord", "CertifyConfigRecord", "ExportSettingsRecord", "Inputs", "Location", "ObservationRecord",
           "OracleSettingsRecord", "ProtocolFile", "Scoring", "TaskProtocol", "TaskTolerances", "Tolerances",
           "ViewProtocol", "or_none"]


# ---------------------------------------------------------------------- a ceiling certificate's settings
@dataclass(frozen=True)
class Inputs(Section):
    """``inputs``: what was read: ``spec`` (the input as given), ``kind`` (folder, builtin, complex, a
    database), ``n_items``, ``subset``, every file's SHA-256 by name (``files``) and, for an export's
    questions, the ``selection``."""

    SOURCE: ClassVar[str] = "inputs"
    # the selection is checked where it is read (certify.inputs.Selection)
    KINDS: ClassVar[dict] = {"spec": "text", "subset": "text or null", "files": "object"}
    #: the input as given (a folder's or file's name, ``builtin:NAME``, ``complex:PATH``, a database's spec)
    spec: str = ABSENT
    kind: str = ABSENT  # how it was read: study, folder, file, builtin, ccd, complex, or a database's format
    n_items: int = ABSENT  # a count of the input's items (those that fail to read or certify included)
    subset: str = ABSENT  # the study layout's subset: eval or all (empty otherwise)
    #: every input file read: its name (relative to the input root) -> the SHA-256 (hex) of its bytes, by
    #: name
    files: Mapping = ABSENT
    #: the part of the input certified (an export's questions): ``rule``, ``ids``, ``n`` and, when some are
    #: shown transformed, ``shown``; written only then
    selection: Mapping = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class CertifyConfigRecord(Section):
    """``config``: the certification's configuration as recorded (``certify.config.CertifyConfig.to_dict``;
    δ, τ in Å, angle tolerances in degrees); ``protocol`` a registry name, a protocol file's bare name (with
    ``protocol_sha256``) or a protocol given in full (its object). ``CertifyConfig.from_dict(rec.to_dict())`` reads it back."""

    SOURCE: ClassVar[str] = "config"
    KINDS: ClassVar[dict] = {"protocol": "text or object or null", "protocol_sha256": "text or null"}
    #: the protocol: a registry name, a protocol file's bare name (with ``protocol_sha256``), or the protocol
    #: in full (an object: rotations; a perspective one with kind, fov, size and positions)
    protocol: str | Mapping = ABSENT
    protocol_sha256: str = ABSENT  # the SHA-256 (hex) of the protocol file's bytes; written only for a file
    views: list | None = ABSENT  # the protocol's views used, by name; null: all of them
    #: δ (Å): the oracle's tolerance, per view in the image plane (perspective: at the point's depth), its 3D
    #: merge tolerance and the phantom radius
    delta: float = ABSENT
    #: τ (Å): the spglib/moyopy symprec of the input, rendered and reconstructed cells, and the molecules'
    #: point-group tolerance (defaults to δ)
    tau: float = ABSENT
    angle_tolerance: float = ABSENT  # the labels' angle tolerance, degrees in (0, 90]; -1: spglib's own rule
    confidence: float = ABSENT  # the confidence 1 - α of R1's exact Clopper-Pearson bounds, in (0, 1)
    cross_check: bool = ABSENT  # moyopy cross-checks spglib's labels
    cross_check_angle: bool = ABSENT  # moyopy uses the same angle tolerance (else its default angle handling)
    cross_check_reconstruction: bool = ABSENT  # moyopy also labels the reconstruction
    image_size: int = ABSENT  # the side of the square orthographic images, px
    #: the spglib-reuse switch (``symmetry.reuse.label_cell``); the records are the same either way
    label_shortcuts: bool = ABSENT
    #: the oracle's merge rule: deterministic or greedy; null: the oracle's default for ``pairs``
    #: (deterministic with all, greedy with first)
    merge: Any = ABSENT
    #: a count of pixels: an atom with fewer visible pixels in the atom-ID buffer is not observed (observe
    #: visible)
    min_pixels: int = ABSENT
    #: how observations are made: ideal (exact projections), visible (atoms with ``min_pixels`` visible
    #: pixels in the atom-ID buffer) or pixel-centroid
    observe: str = ABSENT
    occlusion: bool = ABSENT  # atoms whose centre is covered by a nearer atom's disc are not observed
    orientation: str = ABSENT  # the standardised cell's orientation convention: pymatgen or spglib
    #: the oracle's seed pairs of views: all (every pair with independent directions) or first (the first two
    #: views)
    pairs: str = ABSENT
    #: the oracle wraps and merges by minimum image in the cell (false: in Cartesian space)
    periodic_merge: bool = ABSENT
    score: str = ABSENT  # the crystal level R1 scores: crystal_system, point_group or space_group
    seed: int = ABSENT  # the centroid noise's seed
    sigma: float = ABSENT  # the centroid noise's standard deviation, in ``sigma_unit`` (0: ideal centroids)
    sigma_unit: str = ABSENT  # px or angstrom
    #: the rendered cell is the conventional standard cell (false: the cell as read)
    standardize: bool = ABSENT
    #: the standardisation's angle tolerance, degrees (-1: spglib's own rule)
    std_angle_tolerance: float = ABSENT
    std_symprec: float = ABSENT  # the standardisation's symprec, Å
    #: [a, b, c]: repetitions of the standardised cell rendered and reconstructed as the cell
    supercell: list = ABSENT
    #: [a, b, c]: repetitions of the cell observed (the oracle merges them into the one cell)
    tiling: list = ABSENT
    #: the reference label: dataset (the dataset's label where present) or rendered (the rendered cell's)
    truth: str = ABSENT
    #: each item records its uniqueness margin δ* (``items[].uniqueness_margin``); written only when true
    margin: bool = ABSENT
    #: what the framing holds: centres (the atom centres) or drawn (the spheres drawn in ``style``)
    frame_on: str = ABSENT
    #: pymatgen cross-checks the molecules' point groups; written only when false
    molecule_cross_check: bool = ABSENT
    #: the molecular levels scored (uniqueness, point_group, handedness); written only when not all three
    molecule_levels: list = ABSENT
    #: the molecules' framing scale: common (one Å-per-pixel scale across views) or per-view; written only
    #: when per-view
    molecule_scale: str = ABSENT
    #: the response constraints an export's prompts carry (``viewcert.constraints`` names); written only when
    #: given
    constraints: list = ABSENT
    #: the render style of the atom-ID buffers and of drawn framing; written only when not study
    style: str = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class ViewProtocol(Section):
    """``protocol`` of a ceiling certificate: its ``name``, ``description``, ``views`` (each name, rotation,
    direction, position in Å for a perspective camera), ``kappa`` (the views' condition numbers), ``camera``
    (kind, size in px, framing) and, for a protocol file, its ``file`` record."""

    SOURCE: ClassVar[str] = "protocol"
    KINDS: ClassVar[dict] = {"name": "text", "views": "list"}
    name: str = ABSENT  # the protocol's name
    description: str = ABSENT  # the protocol's description, in words
    #: per view: ``name``, ``rotation`` (world→camera, rows the camera axes), ``direction`` (the unit view
    #: direction into the scene, world frame), ``ase_string`` when it has one and, for a perspective camera
    #: placed by the file, ``position`` (Å, world frame)
    views: list = ABSENT
    #: κ of every view pair, keyed by both view names (the spectral norm of the pseudo-inverse of the two
    #: stacked orthographic projections: dimensionless, 1 for perpendicular views, null when parallel) and
    #: ``max`` over the independent pairs, 6 significant digits
    kappa: Mapping = ABSENT
    #: the camera: its kind, width and height (px), margin_px and convention (orthographic: the letterbox
    #: framing; perspective: fov_deg, focal_px and the placement) and its framing ``policy``
    camera: Mapping = ABSENT
    #: a protocol file's ``name`` and the ``sha256`` of its bytes; written only for a file
    file: Mapping = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class ObservationRecord(Section):
    """``observation_model``: how atoms are observed in the images (``observe`` ideal | visible, pixels,
    occlusion, centroid noise ``sigma`` in ``sigma_unit``, the periodic ``tiling``, ``visibility``)."""

    SOURCE: ClassVar[str] = "observation_model"
    KINDS: ClassVar[dict] = {"tiling": "list"}
    centroids: str = ABSENT  # ideal (``sigma`` 0) or gaussian
    #: a count of pixels: an atom with fewer visible pixels in the atom-ID buffer is not observed
    min_pixels: int = ABSENT
    observe: str = ABSENT  # how observations are made: ideal, visible or pixel-centroid
    occlusion: bool = ABSENT  # atoms whose centre is covered by a nearer atom's disc are not observed
    radius_scale: float = ABSENT  # the occluding disc's radius as a multiple of the covalent radius (Å)
    seed: int = ABSENT  # the centroid noise's seed
    sigma: float = ABSENT  # the centroid noise's standard deviation, in ``sigma_unit`` (0: ideal centroids)
    sigma_unit: str = ABSENT  # px or angstrom
    tiling: list = ABSENT  # [a, b, c]: repetitions of the cell observed
    #: the oracle's visibility rule: occlusion (one view may miss a point behind a nearer disc) or strict
    visibility: str = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class Tolerances(Section):
    """``tolerances`` of a ceiling certificate: ``delta`` (the phantom radius δ, Å), ``tau`` (the symmetry
    tolerance τ, Å), ``angle_tolerance`` (degrees), their units, the cross-check and ``standardization``."""

    SOURCE: ClassVar[str] = "tolerances"
    KINDS: ClassVar[dict] = {"delta": "number", "tau": "number", "angle_tolerance": "number"}
    #: δ (Å): the phantom radius, the oracle's tolerance per view (in the image plane) and its merge
    #: tolerance
    delta: float = ABSENT
    delta_unit: str = ABSENT  # ``angstrom``
    tau: float = ABSENT  # τ (Å): the symmetry tolerance (spglib/moyopy symprec)
    tau_unit: str = ABSENT  # ``angstrom``
    angle_tolerance: float = ABSENT  # the labels' angle tolerance, degrees (-1: spglib's own rule)
    angle_unit: str = ABSENT  # ``degree``
    angle_tolerance_negative: str = ABSENT  # what a negative angle tolerance means, in words
    cross_check: str = ABSENT  # the moyopy cross-check, in words (``off`` when there is none)
    #: how the input cell is labelled and what a space group that differs on the rendered cell does, in words
    input_cell: str = ABSENT
    #: the conventional-cell standardisation: ``symprec`` (Å), ``angle_tolerance`` (degrees), ``orientation``
    #: and ``enabled``
    standardization: Mapping = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class OracleSettingsRecord(Section):
    """``oracle`` of a ceiling certificate: the oracle's settings (``module``, the view ``pairs``, the ``merge``
    rule or null, its frame, ``visibility``), not an item's report."""

    SOURCE: ClassVar[str] = "oracle"
    module: str = ABSENT  # the oracle's function (``viewcert.oracle.triangulate.reconstruct``)
    pairs: Any = ABSENT  # the seed pairs of views: all or first
    merge: Any = ABSENT  # the merge rule: deterministic or greedy; null: the oracle's default for ``pairs``
    merge_frame: str = ABSENT  # where candidates are merged: ``minimum image in the cell`` or ``cartesian``
    visibility: str = ABSENT  # occlusion (one view may miss a point behind a nearer disc) or strict
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class Scoring(Section):
    """``scoring``: the scored ``level``, the ``truth`` compared with, the ``rule`` and the ``bound``, in
    words."""

    SOURCE: ClassVar[str] = "scoring"
    level: str = ABSENT  # the scored level: crystal_system, point_group or space_group
    truth: str = ABSENT  # the reference: dataset or rendered
    rule: str = ABSENT  # what makes an item correct, in words
    #: R1's bounds, in words (exact Clopper-Pearson, one-sided lower and two-sided, at the confidence)
    bound: str = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class Location(Section):
    """``location`` (outside the digest): where the ``input`` and a ``protocol`` file were read, a hint for
    ``verify`` (paths)."""

    SOURCE: ClassVar[str] = "location"
    KINDS: ClassVar[dict] = {"input": "text", "protocol": "text"}
    input: str = ABSENT  # the absolute path the input was read from (a hint for ``verify``)
    protocol: str = ABSENT  # the absolute path the protocol file was read from
    #: what these paths are, in words (outside the digest; ``inputs.files`` hash the content)
    note: str = ABSENT
    extra: Mapping = field(default_factory=dict)


# ---------------------------------------------------------------------- exports: tasks and interactions
@dataclass(frozen=True)
class ProtocolFile(Section):
    """A protocol file's record: its bare ``name``, ``sha256`` (of the bytes read) and ``kind``."""

    SOURCE: ClassVar[str] = "protocol.file"
    name: str = ABSENT  # the protocol file's bare name (no folder)
    sha256: str = ABSENT  # the SHA-256 (hex) of the file's bytes as read
    kind: str = ABSENT  # its cameras' kind: orthographic or perspective
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class TaskProtocol(Section):
    """A task's protocol in full (``tasks.model.protocol_record``): ``name``, view names (``views``), the
    world→camera ``rotations``, the ``after_view``, where it came from (``source``: builtin | file | object)
    and, for a file, its record (``file``)."""

    SOURCE: ClassVar[str] = "protocol"
    KINDS: ClassVar[dict] = {"file": ProtocolFile}
    name: str = ABSENT  # the protocol's name
    views: list = ABSENT  # the view names, in protocol order
    rotations: list = ABSENT  # per view the world→camera rotation (3 × 3, rows the camera axes)
    after_view: str = ABSENT  # the view the after image is taken in: the first view's name
    source: str = ABSENT  # where the protocol came from: builtin, file or object
    file: ProtocolFile = ABSENT  # a protocol file's record (``ProtocolFile``); written only for a file
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class TaskTolerances(Section):
    """``tolerances`` of a task certificate: ``delta_angstrom`` (Å in the image plane), what it means,
    ``explain_tol_angstrom`` (Å) and ``intensity_eps``."""

    SOURCE: ClassVar[str] = "tolerances"
    KINDS: ClassVar[dict] = {"delta_angstrom": "number"}
    delta_angstrom: float = ABSENT  # δ (Å in the image plane): the oracle's tolerance on a labelled 2D point
    delta_meaning: str = ABSENT  # how δ is applied, in words (to px with the after camera's scale)
    explain_tol_angstrom: float = ABSENT  # the explanations' 3D tolerance (Å)
    #: ε: the depth cue's intensity tolerance, a fraction of full scale in [0, 1] (1/255: one grey level)
    intensity_eps: float = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class CeilingRecord(Section):
    """``settings.ceiling`` of an interaction export: δ and the phantom ``reach`` (Å), the render ``style``, the
    label style (``labels``: font, size, legibility threshold, ...), the label scheme and the oracle's settings
    (``interactions.ceiling.CeilingSettings.to_dict``)."""

    SOURCE: ClassVar[str] = "settings.ceiling"
    KINDS: ClassVar[dict] = {"labels": "object"}
    #: δ (Å), in (0, 1]: the oracle's tolerance, and how far every atom is moved when an entry's criterion
    #: verdict is tested for stability
    delta: float = ABSENT
    #: Å, in [0, 10]: a phantom of the same element within it of an entry's atom makes the entry undetermined
    reach: float = ABSENT
    style: str = ABSENT  # the render style the ceiling's views are drawn in
    #: the label style: font_size (px), colour (RGB in [0, 1]), min_visible (the legible fraction), rule,
    #: merge_px and the font's metadata
    labels: Mapping = ABSENT
    label_scheme: str = ABSENT  # which labels are drawn, in words
    oracle: Mapping = ABSENT  # the oracle's settings: ``pairs`` and ``visibility``
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class ExportSettingsRecord(Section):
    """``settings`` of an export, as its certificate and manifest record them (``TaskExportSettings.to_dict``,
    ``InteractionExportSettings.to_dict``, the crystal and molecule exporters' options): the ``task``, the
    ``protocol`` (a registry name, a file's bare name with ``protocol_sha256``, or a task's protocol record),
    image ``width`` × ``height`` (px), ``style``, ``pocket`` (Å), ``constraints``, δ (Å), the interaction
    ``ceiling``, and the rest of each exporter's options."""

    SOURCE: ClassVar[str] = "settings"
    KINDS: ClassVar[dict] = {"protocol": "text or object or null", "protocol_sha256": "text or null",
                             "constraints": "list or null", "ceiling": CeilingRecord}
    #: the task exported (crystal-system; point-group, molecule-handedness; translation, rotation, ...;
    #: pocket-ligand, residue-ligand, interaction-location, docking)
    task: str = ABSENT
    #: the protocol: a registry name, a file's bare name (with ``protocol_sha256``) or a task's protocol
    #: record (``TaskProtocol``)
    protocol: str | TaskProtocol | None = ABSENT
    protocol_sha256: str = ABSENT  # the SHA-256 (hex) of the protocol file's bytes; written only for a file
    camera: str = ABSENT  # task exports: the camera kind, orthographic or perspective
    kind: str = ABSENT  # crystal and molecule exports: the camera kind, orthographic or perspective
    width: int = ABSENT  # task and interaction exports: the image width, px
    height: int = ABSENT  # task and interaction exports: the image height, px
    size: int = ABSENT  # crystal and molecule exports: the side of the square images, px
    supersample: int = ABSENT  # anti-aliasing samples per pixel axis
    style: str = ABSENT  # the render style
    #: interaction exports: the pocket radius (Å): whole residues with an atom within it of a ligand heavy
    #: atom
    pocket: float | None = ABSENT
    #: the response constraints appended to every prompt (``viewcert.constraints`` names)
    constraints: list = ABSENT
    delta: float = ABSENT  # δ (Å): the oracle's tolerance (task exports: in the image plane)
    tau: float = ABSENT  # crystal and molecule exports: τ (Å), the symmetry tolerance
    eps: float = ABSENT  # task exports: ε, the depth cue's intensity tolerance in [0, 1]
    explain_tol: float = ABSENT  # task exports: the explanations' 3D tolerance (Å)
    depth_cue: bool = ABSENT  # task exports: the images are shaded by depth (intensities compared within ε)
    #: the seed of the export's draws: task exports the items' truths and the summary's bootstrap; interaction
    #: exports the residues, bonds and docking poses picked and the summary's bootstrap
    seed: int = ABSENT
    per_structure: int = ABSENT  # task exports: a count of items per structure
    #: interaction exports: a count per complex: residue-ligand positive residues (and as many negatives),
    #: interaction-location bonds, docking items
    per_complex: int = ABSENT
    n_boot: int = ABSENT  # interaction exports: a count of bootstrap resamples of the summary's intervals
    observe: str = ABSENT  # task and molecule exports: how observations are made (ideal, visible, ...)
    #: task exports: a count of pixels an atom needs in the atom-ID buffer to be observed (observe visible)
    min_pixels: int = ABSENT
    chiral_only: bool = ABSENT  # task exports, handedness: the structures achiral at δ are excluded
    #: interaction exports: the hydrogen-bond criterion (``interactions.criteria``); written only when not
    #: baker-hubbard
    criterion: str = ABSENT
    ceiling: CeilingRecord = ABSENT  # interaction exports: the ceiling's settings (``CeilingRecord``)
    extra: Mapping = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.protocol, Mapping):  # a task's protocol record, typed
            typed = typed_section(TaskProtocol, self.protocol, f"{self.SOURCE}.protocol")
            object.__setattr__(self, "protocol", typed)

    def options(self, names) -> dict:
        """The recorded options whose names are in ``names`` (an exporter's ``OPTIONS``), as JSON values (a
        protocol record as its object), for the exporter's ``from_options``."""
        return {k: v for k, v in self.to_dict().items() if k in names}


def or_none(value: Any) -> Any:
    """``value``, or None when it is :data:`ABSENT` (a key the section does not have: what ``.get`` gave).

    Parameters
    ----------
    value : object
        A section's field.

    Returns
    -------
    object
        ``value``; None for :data:`ABSENT`.
    """
    return None if value is ABSENT else value
