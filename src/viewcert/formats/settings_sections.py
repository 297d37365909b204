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
    spec: str = ABSENT
    kind: str = ABSENT
    n_items: int = ABSENT
    subset: str = ABSENT
    files: Mapping = ABSENT
    selection: Mapping = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class CertifyConfigRecord(Section):
    """``config``: the certification's configuration as recorded (``certify.config.CertifyConfig.to_dict``;
    δ, τ in Å, angle tolerances in degrees); ``protocol`` a registry name, a protocol file's bare name (with
    ``protocol_sha256``) or a protocol given in full (its object). ``CertifyConfig.from_dict(rec.to_dict())`` reads it back."""

    SOURCE: ClassVar[str] = "config"
    KINDS: ClassVar[dict] = {"protocol": "text or object or null", "protocol_sha256": "text or null"}
    protocol: str | Mapping = ABSENT
    protocol_sha256: str = ABSENT
    views: list | None = ABSENT
    delta: float = ABSENT
    tau: float = ABSENT
    angle_tolerance: float = ABSENT
    confidence: float = ABSENT
    cross_check: bool = ABSENT
    cross_check_angle: bool = ABSENT
    cross_check_reconstruction: bool = ABSENT
    image_size: int = ABSENT
    label_shortcuts: bool = ABSENT
    merge: Any = ABSENT
    min_pixels: int = ABSENT
    observe: str = ABSENT
    occlusion: bool = ABSENT
    orientation: str = ABSENT
    pairs: str = ABSENT
    periodic_merge: bool = ABSENT
    score: str = ABSENT
    seed: int = ABSENT
    sigma: float = ABSENT
    sigma_unit: str = ABSENT
    standardize: bool = ABSENT
    std_angle_tolerance: float = ABSENT
    std_symprec: float = ABSENT
    supercell: list = ABSENT
    tiling: list = ABSENT
    truth: str = ABSENT
    margin: bool = ABSENT
    frame_on: str = ABSENT
    molecule_cross_check: bool = ABSENT
    molecule_levels: list = ABSENT
    molecule_scale: str = ABSENT
    constraints: list = ABSENT
    style: str = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class ViewProtocol(Section):
    """``protocol`` of a ceiling certificate: its ``name``, ``description``, ``views`` (each name, rotation,
    direction, position in Å for a perspective camera), ``kappa`` (the views' condition numbers), ``camera``
    (kind, size in px, framing) and, for a protocol file, its ``file`` record."""

    SOURCE: ClassVar[str] = "protocol"
    KINDS: ClassVar[dict] = {"name": "text", "views": "list"}
    name: str = ABSENT
    description: str = ABSENT
    views: list = ABSENT
    kappa: Mapping = ABSENT
    camera: Mapping = ABSENT
    file: Mapping = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class ObservationRecord(Section):
    """``observation_model``: how atoms are observed in the images (``observe`` ideal | visible, pixels,
    occlusion, centroid noise ``sigma`` in ``sigma_unit``, the periodic ``tiling``, ``visibility``)."""

    SOURCE: ClassVar[str] = "observation_model"
    KINDS: ClassVar[dict] = {"tiling": "list"}
    centroids: str = ABSENT
    min_pixels: int = ABSENT
    observe: str = ABSENT
    occlusion: bool = ABSENT
    radius_scale: float = ABSENT
    seed: int = ABSENT
    sigma: float = ABSENT
    sigma_unit: str = ABSENT
    tiling: list = ABSENT
    visibility: str = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class Tolerances(Section):
    """``tolerances`` of a ceiling certificate: ``delta`` (the phantom radius δ, Å), ``tau`` (the symmetry
    tolerance τ, Å), ``angle_tolerance`` (degrees), their units, the cross-check and ``standardization``."""

    SOURCE: ClassVar[str] = "tolerances"
    KINDS: ClassVar[dict] = {"delta": "number", "tau": "number", "angle_tolerance": "number"}
    delta: float = ABSENT
    delta_unit: str = ABSENT
    tau: float = ABSENT
    tau_unit: str = ABSENT
    angle_tolerance: float = ABSENT
    angle_unit: str = ABSENT
    angle_tolerance_negative: str = ABSENT
    cross_check: str = ABSENT
    input_cell: str = ABSENT
    standardization: Mapping = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class OracleSettingsRecord(Section):
    """``oracle`` of a ceiling certificate: the oracle's settings (``module``, the view ``pairs``, ``merge``
    radius in Å or null, its frame, ``visibility``), not an item's report."""

    SOURCE: ClassVar[str] = "oracle"
    module: str = ABSENT
    pairs: Any = ABSENT
    merge: Any = ABSENT
    merge_frame: str = ABSENT
    visibility: str = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class Scoring(Section):
    """``scoring``: the scored ``level``, the ``truth`` compared with, the ``rule`` and the ``bound``, in
    words."""

    SOURCE: ClassVar[str] = "scoring"
    level: str = ABSENT
    truth: str = ABSENT
    rule: str = ABSENT
    bound: str = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class Location(Section):
    """``location`` (outside the digest): where the ``input`` and a ``protocol`` file were read, a hint for
    ``verify`` (paths)."""

    SOURCE: ClassVar[str] = "location"
    KINDS: ClassVar[dict] = {"input": "text", "protocol": "text"}
    input: str = ABSENT
    protocol: str = ABSENT
    note: str = ABSENT
    extra: Mapping = field(default_factory=dict)


# ---------------------------------------------------------------------- exports: tasks and interactions
@dataclass(frozen=True)
class ProtocolFile(Section):
    """A protocol file's record: its bare ``name``, ``sha256`` (of the bytes read) and ``kind``."""

    SOURCE: ClassVar[str] = "protocol.file"
    name: str = ABSENT
    sha256: str = ABSENT
    kind: str = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class TaskProtocol(Section):
    """A task's protocol in full (``tasks.model.protocol_record``): ``name``, view names (``views``), the
    world→camera ``rotations``, the ``after_view``, where it came from (``source``: builtin | file | object)
    and, for a file, its record (``file``)."""

    SOURCE: ClassVar[str] = "protocol"
    KINDS: ClassVar[dict] = {"file": ProtocolFile}
    name: str = ABSENT
    views: list = ABSENT
    rotations: list = ABSENT
    after_view: str = ABSENT
    source: str = ABSENT
    file: ProtocolFile = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class TaskTolerances(Section):
    """``tolerances`` of a task certificate: ``delta_angstrom`` (Å in the image plane), what it means,
    ``explain_tol_angstrom`` (Å) and ``intensity_eps``."""

    SOURCE: ClassVar[str] = "tolerances"
    KINDS: ClassVar[dict] = {"delta_angstrom": "number"}
    delta_angstrom: float = ABSENT
    delta_meaning: str = ABSENT
    explain_tol_angstrom: float = ABSENT
    intensity_eps: float = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class CeilingRecord(Section):
    """``settings.ceiling`` of an interaction export: δ and the phantom ``reach`` (Å), the render ``style``, the
    label style (``labels``: font, size, legibility threshold, ...), the label scheme and the oracle's settings
    (``interactions.ceiling.CeilingSettings.to_dict``)."""

    SOURCE: ClassVar[str] = "settings.ceiling"
    KINDS: ClassVar[dict] = {"labels": "object"}
    delta: float = ABSENT
    reach: float = ABSENT
    style: str = ABSENT
    labels: Mapping = ABSENT
    label_scheme: str = ABSENT
    oracle: Mapping = ABSENT
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
    task: str = ABSENT
    protocol: str | TaskProtocol | None = ABSENT
    protocol_sha256: str = ABSENT
    camera: str = ABSENT
    kind: str = ABSENT
    width: int = ABSENT
    height: int = ABSENT
    size: int = ABSENT
    supersample: int = ABSENT
    style: str = ABSENT
    pocket: float | None = ABSENT
    constraints: list = ABSENT
    delta: float = ABSENT
    tau: float = ABSENT
    eps: float = ABSENT
    explain_tol: float = ABSENT
    depth_cue: bool = ABSENT
    seed: int = ABSENT
    per_structure: int = ABSENT
    per_complex: int = ABSENT
    n_boot: int = ABSENT
    observe: str = ABSENT
    min_pixels: int = ABSENT
    chiral_only: bool = ABSENT
    criterion: str = ABSENT
    ceiling: CeilingRecord = ABSENT
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
