"""The settings sections of the certificates, typed: what a ceiling certificate records of its inputs,
configuration, protocol, observation model, tolerances (Å; angles in degrees), oracle settings, scoring and
location, and what a task or interaction certificate (and an export manifest) records of its settings, protocol
and tolerances.

The same JSON in two records is one class: an export's settings (:class:`ExportSettingsRecord`) are a task
certificate's, an interaction certificate's and a manifest's; a task's protocol record (:class:`TaskProtocol`) is
its certificate's ``protocol`` and, for a protocol given as an object, its ``settings.protocol``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from pydantic import Field

from viewcert.formats.model import (
    Bool,
    Count,
    List,
    MaybeList,
    MaybeNumber,
    MaybeObject,
    MaybeText,
    Number,
    Object,
    Record,
    Text,
    TextOrObject,
)

__all__ = ["CeilingRecord", "CertifyConfigRecord", "ExportSettingsRecord", "Inputs", "Location", "ObservationRecord",
           "OracleSettingsRecord", "ProtocolFile", "Scoring", "TaskProtocol", "TaskTolerances", "Tolerances",
           "ViewProtocol"]


class Inputs(Record):
    """``inputs``: what was read: ``spec`` (the input as given), ``kind`` (folder, builtin, complex, a
    database), ``n_items``, ``subset``, every file's SHA-256 by name (``files``) and, for an export's
    questions, the ``selection``."""

    SOURCE: ClassVar[str] = "inputs"
    spec: MaybeText = Field(None, description=(
        "the input as given (a folder's or file's name, ``builtin:NAME``, ``complex:PATH``, a database's "
        "spec)"))
    kind: Text | None = Field(None, description=(
        "how it was read: study, folder, file, builtin, ccd, complex, or a database's format"))
    n_items: Count | None = Field(None, description=(
        "a count of the input's items (those that fail to read or certify included)"))
    subset: Text | None = Field(None, description="the study layout's subset: eval or all (empty otherwise)")
    files: MaybeObject = Field(None, description=(
        "every input file read: its name (relative to the input root) -> the SHA-256 (hex) of its bytes, by "
        "name"))
    selection: Object | None = Field(None, description=(
        "the part of the input certified (an export's questions): ``rule``, ``ids``, ``n`` and, when some are "
        "shown transformed, ``shown``; written only then"))


class CertifyConfigRecord(Record):
    """``config``: the certification's configuration as recorded (``certify.config.CertifyConfig.to_dict``;
    δ, τ in Å, angle tolerances in degrees); ``protocol`` a registry name, a protocol file's bare name (with
    ``protocol_sha256``) or a protocol given in full (its object). ``CertifyConfig.from_dict(rec.to_dict())`` reads it back."""

    SOURCE: ClassVar[str] = "config"
    protocol: TextOrObject | None = Field(None, description=(
        "the protocol: a registry name, a protocol file's bare name (with ``protocol_sha256``), or the "
        "protocol in full (an object: rotations; a perspective one with kind, fov, size and positions)"))
    protocol_sha256: Text | None = Field(None, description=(
        "the SHA-256 (hex) of the protocol file's bytes; written only for a file"))
    views: List | None = Field(None, description="the protocol's views used, by name; null: all of them")
    delta: Number | None = Field(None, description=(
        "δ (Å): the oracle's tolerance, per view in the image plane (perspective: at the point's depth), its "
        "3D merge tolerance and the phantom radius"))
    tau: Number | None = Field(None, description=(
        "τ (Å): the spglib/moyopy symprec of the input, rendered and reconstructed cells, and the molecules' "
        "point-group tolerance (defaults to δ)"))
    angle_tolerance: Number | None = Field(None, description=(
        "the labels' angle tolerance, degrees in (0, 90]; -1: spglib's own rule"))
    confidence: Number | None = Field(None, description=(
        "the confidence 1 - α of R1's exact Clopper-Pearson bounds, in (0, 1)"))
    cross_check: Bool | None = Field(None, description="moyopy cross-checks spglib's labels")
    cross_check_angle: Bool | None = Field(None, description=(
        "moyopy uses the same angle tolerance (else its default angle handling)"))
    cross_check_reconstruction: Bool | None = Field(None, description="moyopy also labels the reconstruction")
    image_size: Count | None = Field(None, description="the side of the square orthographic images, px")
    label_shortcuts: Bool | None = Field(None, description=(
        "the spglib-reuse switch (``symmetry.reuse.label_cell``); the records are the same either way"))
    merge: Any = Field(None, description=(
        "the oracle's merge rule: deterministic or greedy; null: the oracle's default for ``pairs`` "
        "(deterministic with all, greedy with first)"))
    min_pixels: Count | None = Field(None, description=(
        "a count of pixels: an atom with fewer visible pixels in the atom-ID buffer is not observed (observe "
        "visible)"))
    observe: Text | None = Field(None, description=(
        "how observations are made: ideal (exact projections), visible (atoms with ``min_pixels`` visible "
        "pixels in the atom-ID buffer) or pixel-centroid"))
    occlusion: Bool | None = Field(None, description=(
        "atoms whose centre is covered by a nearer atom's disc are not observed"))
    orientation: Text | None = Field(None, description=(
        "the standardised cell's orientation convention: pymatgen or spglib"))
    pairs: Text | None = Field(None, description=(
        "the oracle's seed pairs of views: all (every pair with independent directions) or first (the first "
        "two views)"))
    periodic_merge: Bool | None = Field(None, description=(
        "the oracle wraps and merges by minimum image in the cell (false: in Cartesian space)"))
    score: Text | None = Field(None, description=(
        "the crystal level R1 scores: crystal_system, point_group or space_group"))
    seed: Count | None = Field(None, description="the centroid noise's seed")
    sigma: Number | None = Field(None, description=(
        "the centroid noise's standard deviation, in ``sigma_unit`` (0: ideal centroids)"))
    sigma_unit: Text | None = Field(None, description="px or angstrom")
    standardize: Bool | None = Field(None, description=(
        "the rendered cell is the conventional standard cell (false: the cell as read)"))
    std_angle_tolerance: Number | None = Field(None, description=(
        "the standardisation's angle tolerance, degrees (-1: spglib's own rule)"))
    std_symprec: Number | None = Field(None, description="the standardisation's symprec, Å")
    supercell: List | None = Field(None, description=(
        "[a, b, c]: repetitions of the standardised cell rendered and reconstructed as the cell"))
    tiling: List | None = Field(None, description=(
        "[a, b, c]: repetitions of the cell observed (the oracle merges them into the one cell)"))
    truth: Text | None = Field(None, description=(
        "the reference label: dataset (the dataset's label where present) or rendered (the rendered cell's)"))
    margin: Bool | None = Field(None, description=(
        "each item records its uniqueness margin δ* (``items[].uniqueness_margin``); written only when true"))
    frame_on: Text | None = Field(None, description=(
        "what the framing holds: centres (the atom centres) or drawn (the spheres drawn in ``style``)"))
    molecule_cross_check: Bool | None = Field(None, description=(
        "pymatgen cross-checks the molecules' point groups; written only when false"))
    molecule_levels: List | None = Field(None, description=(
        "the molecular levels scored (uniqueness, point_group, handedness); written only when not all three"))
    molecule_scale: Text | None = Field(None, description=(
        "the molecules' framing scale: common (one Å-per-pixel scale across views) or per-view; written only "
        "when per-view"))
    constraints: List | None = Field(None, description=(
        "the response constraints an export's prompts carry (``viewcert.constraints`` names); written only "
        "when given"))
    style: Text | None = Field(None, description=(
        "the render style of the atom-ID buffers and of drawn framing; written only when not study"))


class ViewProtocol(Record):
    """``protocol`` of a ceiling certificate: its ``name``, ``description``, ``views`` (each name, rotation,
    direction, position in Å for a perspective camera), ``kappa`` (the views' condition numbers), ``camera``
    (kind, size in px, framing) and, for a protocol file, its ``file`` record."""

    SOURCE: ClassVar[str] = "protocol"
    name: MaybeText = Field(None, description="the protocol's name")
    description: Text | None = Field(None, description="the protocol's description, in words")
    views: MaybeList = Field(None, description=(
        "per view: ``name``, ``rotation`` (world→camera, rows the camera axes), ``direction`` (the unit view "
        "direction into the scene, world frame), ``ase_string`` when it has one and, for a perspective camera "
        "placed by the file, ``position`` (Å, world frame)"))
    kappa: Object | None = Field(None, description=(
        "κ of every view pair, keyed by both view names (the spectral norm of the pseudo-inverse of the two "
        "stacked orthographic projections: dimensionless, 1 for perpendicular views, null when parallel) and "
        "``max`` over the independent pairs, 6 significant digits"))
    camera: Object | None = Field(None, description=(
        "the camera: its kind, width and height (px), margin_px and convention (orthographic: the letterbox "
        "framing; perspective: fov_deg, focal_px and the placement) and its framing ``policy``"))
    file: Object | None = Field(None, description=(
        "a protocol file's ``name`` and the ``sha256`` of its bytes; written only for a file"))


class ObservationRecord(Record):
    """``observation_model``: how atoms are observed in the images (``observe`` ideal | visible, pixels,
    occlusion, centroid noise ``sigma`` in ``sigma_unit``, the periodic ``tiling``, ``visibility``)."""

    SOURCE: ClassVar[str] = "observation_model"
    centroids: Text | None = Field(None, description="ideal (``sigma`` 0) or gaussian")
    min_pixels: Count | None = Field(None, description=(
        "a count of pixels: an atom with fewer visible pixels in the atom-ID buffer is not observed"))
    observe: Text | None = Field(None, description=(
        "how observations are made: ideal, visible or pixel-centroid"))
    occlusion: Bool | None = Field(None, description=(
        "atoms whose centre is covered by a nearer atom's disc are not observed"))
    radius_scale: Number | None = Field(None, description=(
        "the occluding disc's radius as a multiple of the covalent radius (Å)"))
    seed: Count | None = Field(None, description="the centroid noise's seed")
    sigma: Number | None = Field(None, description=(
        "the centroid noise's standard deviation, in ``sigma_unit`` (0: ideal centroids)"))
    sigma_unit: Text | None = Field(None, description="px or angstrom")
    tiling: MaybeList = Field(None, description="[a, b, c]: repetitions of the cell observed")
    visibility: Text | None = Field(None, description=(
        "the oracle's visibility rule: occlusion (one view may miss a point behind a nearer disc) or strict"))


class Tolerances(Record):
    """``tolerances`` of a ceiling certificate: ``delta`` (the phantom radius δ, Å), ``tau`` (the symmetry
    tolerance τ, Å), ``angle_tolerance`` (degrees), their units, the cross-check and ``standardization``."""

    SOURCE: ClassVar[str] = "tolerances"
    delta: MaybeNumber = Field(None, description=(
        "δ (Å): the phantom radius, the oracle's tolerance per view (in the image plane) and its merge "
        "tolerance"))
    delta_unit: Text | None = Field(None, description="``angstrom``")
    tau: MaybeNumber = Field(None, description="τ (Å): the symmetry tolerance (spglib/moyopy symprec)")
    tau_unit: Text | None = Field(None, description="``angstrom``")
    angle_tolerance: MaybeNumber = Field(None, description=(
        "the labels' angle tolerance, degrees (-1: spglib's own rule)"))
    angle_unit: Text | None = Field(None, description="``degree``")
    angle_tolerance_negative: Text | None = Field(None, description=(
        "what a negative angle tolerance means, in words"))
    cross_check: Text | None = Field(None, description=(
        "the moyopy cross-check, in words (``off`` when there is none)"))
    input_cell: Text | None = Field(None, description=(
        "how the input cell is labelled and what a space group that differs on the rendered cell does, in "
        "words"))
    standardization: Object | None = Field(None, description=(
        "the conventional-cell standardisation: ``symprec`` (Å), ``angle_tolerance`` (degrees), "
        "``orientation`` and ``enabled``"))


class OracleSettingsRecord(Record):
    """``oracle`` of a ceiling certificate: the oracle's settings (``module``, the view ``pairs``, the ``merge``
    rule or null, its frame, ``visibility``), not an item's report."""

    SOURCE: ClassVar[str] = "oracle"
    module: Text | None = Field(None, description=(
        "the oracle's function (``viewcert.oracle.triangulate.reconstruct``)"))
    pairs: Any = Field(None, description="the seed pairs of views: all or first")
    merge: Any = Field(None, description=(
        "the merge rule: deterministic or greedy; null: the oracle's default for ``pairs``"))
    merge_frame: Text | None = Field(None, description=(
        "where candidates are merged: ``minimum image in the cell`` or ``cartesian``"))
    visibility: Text | None = Field(None, description=(
        "occlusion (one view may miss a point behind a nearer disc) or strict"))


class Scoring(Record):
    """``scoring``: the scored ``level``, the ``truth`` compared with, the ``rule`` and the ``bound``, in
    words."""

    SOURCE: ClassVar[str] = "scoring"
    level: Text | None = Field(None, description=(
        "the scored level: crystal_system, point_group or space_group"))
    truth: Text | None = Field(None, description="the reference: dataset or rendered")
    rule: Text | None = Field(None, description="what makes an item correct, in words")
    bound: Text | None = Field(None, description=(
        "R1's bounds, in words (exact Clopper-Pearson, one-sided lower and two-sided, at the confidence)"))


class Location(Record):
    """``location`` (outside the digest): where the ``input`` and a ``protocol`` file were read, a hint for
    ``verify`` (paths)."""

    SOURCE: ClassVar[str] = "location"
    input: MaybeText = Field(None, description=(
        "the absolute path the input was read from (a hint for ``verify``)"))
    protocol: MaybeText = Field(None, description="the absolute path the protocol file was read from")
    note: Text | None = Field(None, description=(
        "what these paths are, in words (outside the digest; ``inputs.files`` hash the content)"))


class ProtocolFile(Record):
    """A protocol file's record: its bare ``name``, ``sha256`` (of the bytes read) and ``kind``."""

    SOURCE: ClassVar[str] = "protocol.file"
    name: Text | None = Field(None, description="the protocol file's bare name (no folder)")
    sha256: Text | None = Field(None, description="the SHA-256 (hex) of the file's bytes as read")
    kind: Text | None = Field(None, description="its cameras' kind: orthographic or perspective")


class TaskProtocol(Record):
    """A task's protocol in full (``tasks.model.protocol_record``): ``name``, view names (``views``), the
    world→camera ``rotations``, the ``after_view``, where it came from (``source``: builtin | file | object)
    and, for a file, its record (``file``)."""

    SOURCE: ClassVar[str] = "protocol"
    name: Text | None = Field(None, description="the protocol's name")
    views: List | None = Field(None, description="the view names, in protocol order")
    rotations: List | None = Field(None, description=(
        "per view the world→camera rotation (3 × 3, rows the camera axes)"))
    after_view: Text | None = Field(None, description=(
        "the view the after image is taken in: the first view's name"))
    source: Text | None = Field(None, description="where the protocol came from: builtin, file or object")
    file: ProtocolFile | None = Field(None, description=(
        "a protocol file's record (``ProtocolFile``); written only for a file"))


class TaskTolerances(Record):
    """``tolerances`` of a task certificate: ``delta_angstrom`` (Å in the image plane), what it means,
    ``explain_tol_angstrom`` (Å) and ``intensity_eps``."""

    SOURCE: ClassVar[str] = "tolerances"
    delta_angstrom: MaybeNumber = Field(None, description=(
        "δ (Å in the image plane): the oracle's tolerance on a labelled 2D point"))
    delta_meaning: Text | None = Field(None, description=(
        "how δ is applied, in words (to px with the after camera's scale)"))
    explain_tol_angstrom: Number | None = Field(None, description="the explanations' 3D tolerance (Å)")
    intensity_eps: Number | None = Field(None, description=(
        "ε: the depth cue's intensity tolerance, a fraction of full scale in [0, 1] (1/255: one grey level)"))


class CeilingRecord(Record):
    """``settings.ceiling`` of an interaction export: δ and the phantom ``reach`` (Å), the render ``style``, the
    label style (``labels``: font, size, legibility threshold, ...), the label scheme and the oracle's settings
    (``interactions.ceiling.CeilingSettings.to_dict``)."""

    SOURCE: ClassVar[str] = "settings.ceiling"
    delta: Number | None = Field(None, description=(
        "δ (Å), in (0, 1]: the oracle's tolerance, and how far every atom is moved when an entry's criterion "
        "verdict is tested for stability"))
    reach: Number | None = Field(None, description=(
        "Å, in [0, 10]: a phantom of the same element within it of an entry's atom makes the entry "
        "undetermined"))
    style: Text | None = Field(None, description="the render style the ceiling's views are drawn in")
    labels: MaybeObject = Field(None, description=(
        "the label style: font_size (px), colour (RGB in [0, 1]), min_visible (the legible fraction), rule, "
        "merge_px and the font's metadata"))
    label_scheme: Text | None = Field(None, description="which labels are drawn, in words")
    oracle: Object | None = Field(None, description="the oracle's settings: ``pairs`` and ``visibility``")


class ExportSettingsRecord(Record):
    """``settings`` of an export, as its certificate and manifest record them (``TaskExportSettings.to_dict``,
    ``InteractionExportSettings.to_dict``, the crystal and molecule exporters' options): the ``task``, the
    ``protocol`` (a registry name, a file's bare name with ``protocol_sha256``, or a task's protocol record),
    image ``width`` × ``height`` (px), ``style``, ``pocket`` (Å), ``constraints``, δ (Å), the interaction
    ``ceiling``, and the rest of each exporter's options."""

    SOURCE: ClassVar[str] = "settings"
    task: Text | None = Field(None, description=(
        "the task exported (crystal-system; point-group, molecule-handedness; translation, rotation, ...; "
        "pocket-ligand, residue-ligand, interaction-location, docking)"))
    protocol: Text | TaskProtocol | None = Field(None, description=(
        "the protocol: a registry name, a file's bare name (with ``protocol_sha256``) or a task's protocol "
        "record (``TaskProtocol``)"))
    protocol_sha256: Text | None = Field(None, description=(
        "the SHA-256 (hex) of the protocol file's bytes; written only for a file"))
    camera: Text | None = Field(None, description=(
        "task exports: the camera kind, orthographic or perspective"))
    kind: Text | None = Field(None, description=(
        "crystal and molecule exports: the camera kind, orthographic or perspective"))
    width: Count | None = Field(None, description="task and interaction exports: the image width, px")
    height: Count | None = Field(None, description="task and interaction exports: the image height, px")
    size: Count | None = Field(None, description=(
        "crystal and molecule exports: the side of the square images, px"))
    supersample: Count | None = Field(None, description="anti-aliasing samples per pixel axis")
    style: Text | None = Field(None, description="the render style")
    pocket: Number | None = Field(None, description=(
        "interaction exports: the pocket radius (Å): whole residues with an atom within it of a ligand heavy "
        "atom"))
    constraints: List | None = Field(None, description=(
        "the response constraints appended to every prompt (``viewcert.constraints`` names)"))
    delta: Number | None = Field(None, description=(
        "δ (Å): the oracle's tolerance (task exports: in the image plane)"))
    tau: Number | None = Field(None, description=(
        "crystal and molecule exports: τ (Å), the symmetry tolerance"))
    eps: Number | None = Field(None, description=(
        "task exports: ε, the depth cue's intensity tolerance in [0, 1]"))
    explain_tol: Number | None = Field(None, description="task exports: the explanations' 3D tolerance (Å)")
    depth_cue: Bool | None = Field(None, description=(
        "task exports: the images are shaded by depth (intensities compared within ε)"))
    seed: Count | None = Field(None, description=(
        "the seed of the export's draws: task exports the items' truths and the summary's bootstrap; "
        "interaction exports the residues, bonds and docking poses picked and the summary's bootstrap"))
    per_structure: Count | None = Field(None, description="task exports: a count of items per structure")
    per_complex: Count | None = Field(None, description=(
        "interaction exports: a count per complex: residue-ligand positive residues (and as many negatives), "
        "interaction-location bonds, docking items"))
    n_boot: Count | None = Field(None, description=(
        "interaction exports: a count of bootstrap resamples of the summary's intervals"))
    observe: Text | None = Field(None, description=(
        "task and molecule exports: how observations are made (ideal, visible, ...)"))
    min_pixels: Count | None = Field(None, description=(
        "task exports: a count of pixels an atom needs in the atom-ID buffer to be observed (observe visible)"))
    chiral_only: Bool | None = Field(None, description=(
        "task exports, handedness: the structures achiral at δ are excluded"))
    criterion: Text | None = Field(None, description=(
        "interaction exports: the hydrogen-bond criterion (``interactions.criteria``); written only when not "
        "baker-hubbard"))
    ceiling: CeilingRecord | None = Field(None, description=(
        "interaction exports: the ceiling's settings (``CeilingRecord``)"))

    def options(self, names: Iterable[str]) -> dict[str, Any]:
        """The recorded options whose names are in ``names`` (an exporter's ``OPTIONS``), as JSON values (a
        protocol record as its object), for the exporter's ``from_options``.

        Parameters
        ----------
        names : iterable of str
            The option names.

        Returns
        -------
        dict
            Name -> value, for the options recorded.
        """
        wanted = set(names)
        return {k: v for k, v in self.to_dict().items() if k in wanted}
