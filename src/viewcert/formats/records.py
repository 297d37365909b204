"""The contract of every certificate kind: one :class:`Certificate` base, one registry of kinds
(:data:`KINDS`), typed item records per kind, one digest function (:func:`compute_digest`) and one reader
(``formats.reader.read``) that checks the format and the digest and returns the typed variant.

Kinds (format strings defined here once; ``viewcert.formats.versions`` reads the older ones):

- ``ceiling``: ``viewcert-certificate/3`` (and /2, /1), crystals and molecules (``certify.certificate``):
  :class:`CeilingCertificate` with :class:`ItemOutcome` items and a :class:`Summary`;
- ``task``: ``viewcert.tasks.certificate`` (``version`` 2; 1 before the resolution), a transformation-task export
  (``benchmark.tasks_export``): :class:`TaskCertificate` with :class:`TaskItemRecord` items;
- ``interaction``: ``viewcert-interaction-benchmark/3`` (and /2; /1, whose digest is a bare hex string), a
  hydrogen-bond export (``benchmark.interaction_export``): :class:`InteractionCertificate` with
  :class:`InteractionItemRecord` items;
- ``images``: ``viewcert-images-certificate/1``, the as-published ceiling of another tool's images
  (``certify.published``): :class:`PublishedCertificate` with :class:`PublishedItemRecord` items.

Every record is a frozen value with ONE serialiser (``to_dict`` / ``from_dict``) whose dict is exactly the
certificate's JSON. A field a record did not write is :data:`ABSENT` (not ``None``: ``None`` is written as
``null``), so ``from_dict(d).to_dict() == d`` for every record the pipeline writes; keys a record does not know
are kept in ``extra`` in the same round trip.

The digest: SHA-256 of the compact canonical JSON (sorted keys) of every top-level key except ``digest`` and
``location``, written as ``{"algorithm": "sha256", "scope": ..., "value": HEX}`` (interaction /1: the bare HEX).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from viewcert.errors import InputError
from viewcert.formats.fields import (  # noqa: F401 - ABSENT and Section re-exported
    ABSENT,
    Section,
    record_fields,
    record_to_dict,
    rerooted,
    type_sections,
)
from viewcert.formats.image_sections import (
    PublishedImage,
    PublishedSettings,
    PublishedStructure,
    PublishedSummary,
)
from viewcert.formats.item_sections import (
    ItemCeiling,
    MoleculeOutcome,
    OracleReport,
    SymmetryRaised,
    UniquenessMargin,
)
from viewcert.formats.settings_sections import (
    CertifyConfigRecord,
    ExportSettingsRecord,
    Inputs,
    Location,
    ObservationRecord,
    OracleSettingsRecord,
    Scoring,
    TaskProtocol,
    TaskTolerances,
    Tolerances,
    ViewProtocol,
)
from viewcert.formats.summary_sections import (
    InteractionSummary,
    Kinds,
    LevelCount,
    MoleculeSummary,
    PhantomCensus,
    RateBound,
    TaskSummary,
    type_counts,
    write_counts,
)
from viewcert.io.atomic import json_dumps
from viewcert.resolution import quantize_tree, resolution_record

# ---------------------------------------------------------------------- formats, defined once
#: crystal and molecule certificates (``certify.certificate``); /1 is read through ``formats.versions``
CEILING_FORMAT_V1 = "viewcert-certificate/1"
CEILING_FORMAT_V2 = "viewcert-certificate/2"
#: /3: every float at the resolution the certificate states (``resolution``; issue 37)
CEILING_FORMAT = "viewcert-certificate/3"
#: transformation-task certificates (``benchmark.tasks_export``), with ``version`` = TASK_VERSION
TASK_FORMAT = "viewcert.tasks.certificate"
TASK_VERSION = 2  # 2: every float at the resolution the certificate states (``resolution``; issue 37)
#: hydrogen-bond interaction certificates (``benchmark.interaction_export``); /1's digest is a bare hex string
INTERACTION_FORMAT_V1 = "viewcert-interaction-benchmark/1"
INTERACTION_FORMAT_V2 = "viewcert-interaction-benchmark/2"
#: /3: every float at the resolution the certificate states (``resolution``; issue 37)
INTERACTION_FORMAT = "viewcert-interaction-benchmark/3"
#: as-published certificates (``certify.published``: ``viewcert certify images:FOLDER/images.toml``)
IMAGES_FORMAT = "viewcert-images-certificate/1"
#: the shape each format writes its digest in: ``object`` ({algorithm, scope, value}, every kind now) or
#: ``hex`` (the bare value: interaction certificates before issue 26); ``formats.versions`` reads it
DIGEST_SHAPES = {INTERACTION_FORMAT_V1: "hex"}


def digest_shape(fmt: str) -> str:
    return DIGEST_SHAPES.get(fmt, "object")


#: top-level keys outside the digest: the digest itself, and where the inputs sat (a hint for ``verify``)
UNDIGESTED = ("digest", "location")
DIGEST_SCOPE = ("sha256 of the compact canonical JSON (sorted keys) of every top-level key except 'digest' and "
                "'location'")
#: the scope text task certificates have always written (they have no ``location``: the same bytes digested)
TASK_DIGEST_SCOPE = ("sha256 of the compact canonical JSON (sorted keys) of every top-level key except "
                     "'digest'")


def canonical_bytes(cert: Mapping) -> bytes:
    """The bytes the digest hashes: compact JSON, sorted keys, of every key but :data:`UNDIGESTED`."""
    body = {k: v for k, v in cert.items() if k not in UNDIGESTED}
    return json_dumps(body, indent=None, allow_nan=False).encode()


def compute_digest(cert: Mapping) -> str:
    """The one digest of every certificate kind.

    Parameters
    ----------
    cert : Mapping
        A certificate's JSON (a dict; ``digest`` and ``location`` are left out of what is hashed).

    Returns
    -------
    str
        The SHA-256 (hex) of :func:`canonical_bytes`: compact JSON, sorted keys.
    """
    return hashlib.sha256(canonical_bytes(cert)).hexdigest()


def digest_record(cert: Mapping, scope: str = DIGEST_SCOPE) -> dict:
    """The digest as written (the one shape): algorithm, scope and value."""
    return {"algorithm": "sha256", "scope": scope, "value": compute_digest(cert)}


@dataclass(frozen=True)
class ItemOutcome:
    """One item of ``certificate["items"]``. outcome: correct | incorrect | error; reasons in
    ``evaluate.REASON_ORDER``; labels are dicts of the levels (crystal_system, point_group, space_group,
    symbol); ``molecule`` holds the molecular levels of a molecule (``certify.molecule``); ``oracle`` the
    oracle's report (n_phantoms, n_missing, n_points, max_position_error Å, ...); ``uniqueness_margin`` δ* (Å)
    with ``margin=True``; ``camera_positions`` (Å, per view) for perspective cameras. ``oracle``,
    ``uniqueness_margin``, ``symmetry_raised`` and ``molecule`` are typed sections (``formats.item_sections``)."""

    id: str
    outcome: str
    correct: bool
    reasons: list = ABSENT
    correct_by_level: dict | None = ABSENT
    input_sha256: str = ABSENT
    label_dataset: dict | None = ABSENT
    label_source: str | None = ABSENT
    label_conflicts: list | None = ABSENT
    error: str = ABSENT
    formula: str = ABSENT
    n_atoms: int = ABSENT
    periodic: bool = ABSENT
    reading: dict = ABSENT
    cell_sha256: str = ABSENT
    cameras_sha256: str = ABSENT
    camera_positions: dict = ABSENT
    independent_views: bool = ABSENT
    label_rendered: dict | None = ABSENT
    label_reconstructed: dict | None = ABSENT
    label_mismatch: list | None = ABSENT
    cross_check: dict | None = ABSENT
    reference_source: str | None = ABSENT
    symmetry_raised: SymmetryRaised = ABSENT
    oracle: OracleReport = ABSENT
    uniqueness_margin: UniquenessMargin = ABSENT
    phantoms: list | None = ABSENT
    unique: bool = ABSENT
    exact: bool = ABSENT
    certified: bool = ABSENT
    molecule: MoleculeOutcome = ABSENT
    extra: Mapping = field(default_factory=dict)

    def __post_init__(self) -> None:
        # the typed sections (formats.item_sections) of what a producer or from_dict hands the record
        type_sections(self, {"oracle": OracleReport, "uniqueness_margin": UniquenessMargin,
                             "symmetry_raised": SymmetryRaised, "molecule": MoleculeOutcome})

    @classmethod
    def from_dict(cls, d: Mapping) -> ItemOutcome:
        kw = record_fields(cls, d, "item")
        for k in ("id", "outcome", "correct"):
            if k not in kw:
                raise InputError(f"item {d.get('id', '?')!r} has no {k!r}", field=f"items[].{k}")
        return cls(**kw)

    def to_dict(self) -> dict:
        return record_to_dict(self)

    @property
    def is_error(self) -> bool:
        return self.outcome == "error"

    @property
    def is_molecule(self) -> bool:
        return bool(self.molecule)

    def label(self, which: str) -> dict:
        """The labels ``which`` (dataset | rendered | reconstructed) as a dict; {} when there are none."""
        return getattr(self, f"label_{which}") or {}

    def correct_at(self, level: str) -> bool:
        return bool(self.correct_by_level and self.correct_by_level.get(level))

    def predicted(self, score: str) -> Any:
        """What the reconstruction says at ``score`` (a molecule: its reconstructed point group)."""
        if self.is_molecule:
            pg = self.molecule.point_group
            return pg.reconstructed if pg else None
        return self.label("reconstructed").get(score)

    def reference(self, score: str) -> Any:
        """The label R1 compares with at ``score``: the dataset's, the input cell's (the standardisation raised
        the symmetry) or the rendered cell's; a molecule's own point group."""
        if self.is_molecule:
            pg = self.molecule.point_group
            return pg.input if pg else None
        if self.reference_source == "dataset":
            return self.label("dataset").get(score)
        if self.reference_source == "input":
            raised = self.symmetry_raised
            return raised.input.get(score) if raised and raised.input else None
        return self.label("rendered").get(score)


def outcomes_of(items) -> list[ItemOutcome]:
    """Items as :class:`ItemOutcome` values (dicts converted; values kept)."""
    return [it if isinstance(it, ItemOutcome) else ItemOutcome.from_dict(it) for it in items]


@dataclass(frozen=True)
class Summary:
    """``certificate["summary"]``: R1 = correct / n (the crystals', else the molecules') with its exact bound and
    interval, per level and crystal system, the phantom census, and every failure, label mismatch,
    cross-check disagreement, raised symmetry and error by id; ``molecules`` the molecular summary."""

    n: int
    n_errors: int
    kinds: Kinds
    score: str
    truth: str
    correct: int
    R1: float | None  # noqa: N815 - the certificate's own key
    bound: RateBound
    interval: RateBound
    by_level: dict[str, LevelCount]
    by_crystal_system: dict[str, LevelCount]
    phantom_census: PhantomCensus
    failure_reasons: dict
    failures: list
    label_mismatches: list
    cross_check_disagreements: list
    n_symmetry_raised: int = ABSENT
    symmetry_raised: list = ABSENT
    errors: list = ABSENT
    molecules: MoleculeSummary | None = ABSENT
    extra: Mapping = field(default_factory=dict)

    #: the typed sections of the summary (``formats.summary_sections``), typed from what a producer hands
    SECTIONS: ClassVar[dict] = {"kinds": Kinds, "bound": RateBound, "interval": RateBound,
                                "phantom_census": PhantomCensus, "molecules": MoleculeSummary}

    #: the counts keyed by data (a level, a crystal system), each entry a ``LevelCount``
    COUNTS: ClassVar[tuple] = ("by_level", "by_crystal_system")

    def __post_init__(self) -> None:
        type_sections(self, self.SECTIONS, "summary")
        type_counts(self, self.COUNTS, "summary")

    @classmethod
    def from_dict(cls, d: Mapping) -> Summary:
        try:
            return cls(**record_fields(cls, d, "summary"))
        except TypeError as exc:
            raise InputError(f"summary: {str(exc)[:200]}", field="summary") from None

    def to_dict(self) -> dict:
        return write_counts(record_to_dict(self), self.COUNTS)


class Certificate:
    """The base of every certificate kind (:data:`KINDS`). ``Certificate.from_dict(d)`` returns the typed
    variant of ``d``'s format; each kind's record has ``format``, ``items`` (typed), ``digest`` and
    ``to_dict``."""

    KIND: ClassVar[str] = ""

    @classmethod
    def from_dict(cls, d: Mapping) -> Certificate:
        return kind_of(d).record.from_dict(d)

    @property
    def kind(self) -> Kind:
        return KINDS[self.KIND]

    @property
    def digest_value(self) -> str | None:
        """The stored digest's hex value, whatever shape this format writes it in (None when absent)."""
        return digest_value(self.to_dict())

    def item_ids(self) -> list[str]:
        return [it.id for it in self.items]


@dataclass(frozen=True)
class CeilingCertificate(Certificate):
    """A crystal or molecule certificate (``certify.certificate``): format, inputs, config, protocol,
    observation model, tolerances, oracle, scoring, libraries, items, summary, digest, and where the inputs
    were read (``location``, outside the digest). The settings sections are typed
    (``formats.settings_sections``: a producer may hand them as JSON objects); libraries, resolution and digest
    stay JSON objects."""

    KIND: ClassVar[str] = "ceiling"

    format: str
    inputs: Inputs
    config: CertifyConfigRecord
    protocol: ViewProtocol
    observation_model: ObservationRecord
    tolerances: Tolerances
    oracle: OracleSettingsRecord
    scoring: Scoring
    libraries: dict
    items: tuple[ItemOutcome, ...]
    summary: Summary
    resolution: dict = ABSENT
    digest: dict = ABSENT
    location: Location | None = ABSENT
    extra: Mapping = field(default_factory=dict)

    #: the typed settings sections and their classes
    SETTINGS: ClassVar[dict] = {"inputs": Inputs, "config": CertifyConfigRecord, "protocol": ViewProtocol,
                                "observation_model": ObservationRecord, "tolerances": Tolerances,
                                "oracle": OracleSettingsRecord, "scoring": Scoring, "location": Location}

    def __post_init__(self) -> None:
        type_sections(self, self.SETTINGS, "")

    @classmethod
    def from_dict(cls, d: Mapping) -> CeilingCertificate:
        kw = record_fields(cls, d, "certificate")
        items = kw.get("items") or ()
        kw["items"] = tuple(_items(ItemOutcome, items) if isinstance(items, list) else outcomes_of(items))
        if "summary" in kw:
            kw["summary"] = Summary.from_dict(kw["summary"])
        try:
            return cls(**kw)
        except TypeError as exc:
            raise InputError(f"certificate: {str(exc)[:200]}", field="certificate") from None

    def to_dict(self) -> dict:
        out = record_to_dict(self)
        out["items"] = [it.to_dict() for it in self.items]
        out["summary"] = self.summary.to_dict()
        return out


# ---------------------------------------------------------------------- transformation tasks
@dataclass(frozen=True)
class TaskItemRecord:
    """One question of a transformation-task certificate (``tasks_export.item_ceilings``): the item
    (structure_id, task, truth, mirror, n_atoms, ...), the consistent answers and counts, the ceilings (exact =
    1/|consistent|, MiSI partial credit; choice tasks 1/|consistent options|), the best guess and why each
    other consistent answer draws the same images."""

    id: str
    n_consistent: int
    structure_id: str = ABSENT
    task: str = ABSENT
    truth: str = ABSENT
    mirror: bool = ABSENT
    n_atoms: int = ABSENT
    consistent: list = ABSENT
    exact_ceiling: float = ABSENT
    partial_ceiling: float = ABSENT
    best_guess: str = ABSENT
    explanations: list = ABSENT
    consistent_choices: list = ABSENT
    choice_ceiling: float = ABSENT
    handedness_ceiling: float = ABSENT
    one_view_witness_consistent: bool = ABSENT
    extra: Mapping = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping) -> TaskItemRecord:
        kw = record_fields(cls, d, "item")
        n = kw.get("n_consistent")
        opts = kw.get("consistent_choices", ABSENT)
        if not isinstance(kw.get("id"), str) or isinstance(n, bool) or not isinstance(n, int) or n < 1 \
                or not (opts is ABSENT or (isinstance(opts, list) and opts)):
            raise InputError(f"task item {str(d.get('id', '?'))[:40]!r} needs a text id and n_consistent ≥ 1",
                             field="items[].n_consistent")
        return cls(**kw)

    def to_dict(self) -> dict:
        return record_to_dict(self)

    @property
    def ceiling(self) -> Fraction:
        """The item's exact ceiling: 1/|consistent options| (choice tasks) or 1/|consistent answers|."""
        return Fraction(1, len(self.consistent_choices) if self.consistent_choices else self.n_consistent)


@dataclass(frozen=True)
class TaskCertificate(Certificate):
    """A transformation-task certificate (``benchmark.tasks_export``): input (the INPUT text), task,
    protocol, camera, seed, settings, view setup, tolerances (Å), observation model, answer grid,
    normalisers, libraries, items, summary (per group), excluded structures, unreadable ones (``errors``),
    the digest; ``limit`` when the export read only the first N molecules."""

    KIND: ClassVar[str] = "task"

    format: str
    items: tuple[TaskItemRecord, ...]
    version: int = ABSENT
    input: str = ABSENT
    task: str = ABSENT
    protocol: TaskProtocol = ABSENT
    camera: str = ABSENT
    depth_cue: bool = ABSENT
    seed: int = ABSENT
    settings: ExportSettingsRecord = ABSENT
    view_setup: dict = ABSENT
    tolerances: TaskTolerances = ABSENT
    observation_model: str = ABSENT  # one line naming the after view's observation model
    answer_grid: dict = ABSENT
    normalisers: dict = ABSENT
    mirror_normal_screen: list | None = ABSENT
    libraries: dict = ABSENT
    summary: TaskSummary | None = ABSENT
    excluded: list = ABSENT
    errors: list = ABSENT
    choice_ceiling_mean: float = ABSENT
    placement: dict = ABSENT
    limit: int = ABSENT
    resolution: dict = ABSENT
    digest: dict = ABSENT
    extra: Mapping = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping) -> TaskCertificate:
        kw = record_fields(cls, d, "certificate")
        items = kw.get("items")
        if not isinstance(items, list) or not items:
            raise InputError("a task certificate lists its items", field="items")
        kw["items"] = tuple(_items(TaskItemRecord, items))
        return cls(**kw)

    def __post_init__(self) -> None:  # the sections typed (``formats.summary_sections``, ``settings_sections``),
        # a producer's dict too
        type_sections(self, {"summary": TaskSummary, "protocol": TaskProtocol, "settings": ExportSettingsRecord,
                             "tolerances": TaskTolerances}, "")

    def to_dict(self) -> dict:
        out = record_to_dict(self)
        out["items"] = [it.to_dict() for it in self.items]
        return out


# ---------------------------------------------------------------------- interactions
@dataclass(frozen=True)
class InteractionItemRecord:
    """One question of an interaction certificate: id, the complex (``source_id`` NAME:LIGAND), whether it
    is a positive, its number of bonds, and the ceiling under ideal observations and as rendered (``ideal``,
    ``rendered``: ``ceiling`` in [0, 1] with the losses attributed, typed ``formats.item_sections.ItemCeiling``);
    ``residue`` (residue-ligand), ``entry`` (interaction-location), ``d0_A`` (docking) by task."""

    id: str
    source_id: str = ABSENT
    positive: bool = ABSENT
    n_bonds: int = ABSENT
    ideal: ItemCeiling = ABSENT
    rendered: ItemCeiling = ABSENT
    residue: str = ABSENT
    entry: str = ABSENT
    d0_A: int = ABSENT  # noqa: N815 - the certificate's own key
    extra: Mapping = field(default_factory=dict)

    def __post_init__(self) -> None:
        # the typed ceilings (formats.item_sections) of what a producer or from_dict hands the record
        type_sections(self, {"ideal": ItemCeiling, "rendered": ItemCeiling}, "items[]")

    @classmethod
    def from_dict(cls, d: Mapping) -> InteractionItemRecord:
        kw = record_fields(cls, d, "item")
        if not isinstance(kw.get("id"), str):
            raise InputError("an interaction item needs a text id", field="items[].id")
        return cls(**kw)

    def to_dict(self) -> dict:
        return record_to_dict(self)

    def ceiling(self, mode: str = "rendered") -> float:
        """The item's ceiling in ``mode`` (ideal | rendered); InputError when it is not a number in [0, 1]."""
        rec = getattr(self, mode) if mode in ("ideal", "rendered") else ABSENT
        c = rec.ceiling if isinstance(rec, ItemCeiling) else None
        if isinstance(c, bool) or not isinstance(c, int | float) or not 0 <= c <= 1:
            raise InputError(f"item {self.id[:40]!r} needs a {mode} ceiling in [0, 1]", field=f"items[].{mode}")
        return float(c)


@dataclass(frozen=True)
class InteractionCertificate(Certificate):
    """A hydrogen-bond interaction certificate (``benchmark.interaction_export``): task, settings,
    libraries, per complex the ground truth (``ground_truth``, by NAME:LIGAND), items, summary and digest;
    ``complexes`` (/2) the complexes in input order, each by name, ligand and SHA-256 (``verify`` finds them
    by name inside the trusted folder)."""

    KIND: ClassVar[str] = "interaction"

    format: str
    items: tuple[InteractionItemRecord, ...]
    task: str = ABSENT
    settings: ExportSettingsRecord = ABSENT
    libraries: dict = ABSENT
    ground_truth: dict = ABSENT
    summary: InteractionSummary = ABSENT
    complexes: list = ABSENT
    resolution: dict = ABSENT
    digest: dict | str = ABSENT
    extra: Mapping = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping) -> InteractionCertificate:
        kw = record_fields(cls, d, "certificate")
        items = kw.get("items")
        if not isinstance(items, list):
            raise InputError("an interaction certificate lists its items", field="items")
        kw["items"] = tuple(_items(InteractionItemRecord, items))
        return cls(**kw)

    def __post_init__(self) -> None:  # the sections typed (``formats.summary_sections``, ``settings_sections``),
        # a producer's dict too
        type_sections(self, {"summary": InteractionSummary, "settings": ExportSettingsRecord}, "")

    def to_dict(self) -> dict:
        out = record_to_dict(self)
        out["items"] = [it.to_dict() for it in self.items]
        return out


# ---------------------------------------------------------------------- published images
@dataclass(frozen=True)
class PublishedItemRecord:
    """One question of an as-published certificate: its views (image names), the structure as shipped, the answer
    images.toml gives, its outcome under the geometric ceiling (every drawn atom, exact projection through the
    resolved cameras) and as published (the atoms detected in the pixels), both ``ItemOutcome`` records, whether
    they differ and why (``certify.published.REASONS``), the drawn radius scale the oracle's occlusion used, or
    the item's error."""

    id: str
    images: list = ABSENT
    structure: PublishedStructure = ABSENT
    answer: dict | None = ABSENT
    geometric: ItemOutcome = ABSENT
    as_published: ItemOutcome = ABSENT
    differ: bool = ABSENT
    reasons: list = ABSENT
    radius_scale: float = ABSENT
    error: str = ABSENT
    extra: Mapping = field(default_factory=dict)

    def __post_init__(self) -> None:
        type_sections(self, {"structure": PublishedStructure}, "items[]")
        for name in ("geometric", "as_published"):
            v = getattr(self, name)
            if isinstance(v, Mapping):
                object.__setattr__(self, name, ItemOutcome.from_dict(v))

    @classmethod
    def from_dict(cls, d: Mapping) -> PublishedItemRecord:
        kw = record_fields(cls, d, "item")
        if not isinstance(kw.get("id"), str):
            raise InputError("an item needs a text id", field="items[].id")
        return cls(**kw)

    def to_dict(self) -> dict:
        out = record_to_dict(self)
        for name in ("geometric", "as_published"):
            v = getattr(self, name)
            if isinstance(v, ItemOutcome):
                out[name] = v.to_dict()
        return out

    @property
    def is_error(self) -> bool:
        return self.error is not ABSENT


@dataclass(frozen=True)
class PublishedCertificate(Certificate):
    """An as-published certificate (``certify.published``): the input (images.toml and every file it names, by
    SHA-256), the settings (δ, τ, the oracle's rule, the scoring, the detector), the libraries, every image
    (``images``: SHA-256, resolved projection, detections and residuals), the items (both ceilings per item), the
    summary, the digest and where the input was read (``location``, outside the digest)."""

    KIND: ClassVar[str] = "images"

    format: str
    items: tuple[PublishedItemRecord, ...]
    inputs: Inputs = ABSENT
    settings: PublishedSettings = ABSENT
    tolerances: Tolerances = ABSENT
    detector: dict = ABSENT
    libraries: dict = ABSENT
    images: tuple = ABSENT
    summary: PublishedSummary = ABSENT
    resolution: dict = ABSENT
    digest: dict = ABSENT
    location: Location | None = ABSENT
    extra: Mapping = field(default_factory=dict)

    def __post_init__(self) -> None:
        type_sections(self, {"inputs": Inputs, "settings": PublishedSettings, "tolerances": Tolerances,
                             "summary": PublishedSummary, "location": Location}, "")
        if isinstance(self.images, list | tuple):
            object.__setattr__(self, "images", tuple(
                im if isinstance(im, PublishedImage) else PublishedImage.from_dict(im, f"images[{k}]")
                for k, im in enumerate(self.images)))

    @classmethod
    def from_dict(cls, d: Mapping) -> PublishedCertificate:
        kw = record_fields(cls, d, "certificate")
        items = kw.get("items")
        if not isinstance(items, list):
            raise InputError("an as-published certificate lists its items", field="items")
        kw["items"] = tuple(_items(PublishedItemRecord, items))
        if "images" in kw and not isinstance(kw["images"], list):
            raise InputError("images must be a list", field="images")
        return cls(**kw)

    def to_dict(self) -> dict:
        out = record_to_dict(self)
        out["items"] = [it.to_dict() for it in self.items]
        if self.images is not ABSENT:
            out["images"] = [im.to_dict() for im in self.images]
        return out


def _items(cls, items: list) -> list:
    out = []
    for k, it in enumerate(items):
        if not isinstance(it, Mapping):
            raise InputError(f"items[{k}] is not an object", field=f"items[{k}]")
        try:
            out.append(cls.from_dict(it))
        except InputError as exc:  # named by the item's place (``items[].oracle`` -> ``items[3].oracle``)
            named = rerooted(exc, "items[]", f"items[{k}]")
            if named is not exc and named.message.startswith(named.field):
                raise named from None
            where = named.field if (named.field or "").startswith(f"items[{k}]") else f"items[{k}]"
            raise InputError(f"items[{k}]: {named.message}", field=where) from None
    return out


# ---------------------------------------------------------------------- the registry
@dataclass(frozen=True)
class Kind:
    """One certificate kind: its name, the formats read (the last one is written), its record, the module
    that writes it and what it certifies (``docs/formats.md`` is generated from these)."""

    name: str
    formats: tuple[str, ...]
    record: type
    item: type
    producer: str
    what: str

    @property
    def format(self) -> str:
        return self.formats[-1]


KINDS: dict[str, Kind] = {
    "ceiling": Kind("ceiling", (CEILING_FORMAT_V1, CEILING_FORMAT_V2, CEILING_FORMAT), CeilingCertificate, ItemOutcome, "viewcert.certify.certificate",
                 "the render ceiling R1 of crystals and molecules (viewcert certify, build-benchmark)"),
    "task": Kind("task", (TASK_FORMAT,), TaskCertificate, TaskItemRecord, "viewcert.benchmark.tasks_export",
                 "the consistent answers and ceilings of a transformation task (rotation, zoom, ...)"),
    "interaction": Kind("interaction", (INTERACTION_FORMAT_V1, INTERACTION_FORMAT_V2, INTERACTION_FORMAT),
                        InteractionCertificate,
                        InteractionItemRecord, "viewcert.benchmark.interaction_export",
                        "the hydrogen-bond truth and ceilings of an interaction task (pocket-ligand, ...)"),
    "images": Kind("images", (IMAGES_FORMAT,), PublishedCertificate, PublishedItemRecord,
                   "viewcert.certify.published",
                   "the as-published ceiling of the images a benchmark shipped, beside the geometric ceiling of the "
                   "same cameras (viewcert certify images:FOLDER/images.toml)"),
}
#: every format string a certificate may carry, and its kind
FORMATS: dict[str, Kind] = {f: k for k in KINDS.values() for f in k.formats}


TABLE_CERTIFICATE_FORMAT = "viewcert-certificate-table/1"  # certify.stream's small certificate (not a Kind here)


def kind_of(d: Mapping) -> Kind:
    """The kind of the certificate dict ``d`` by its ``format``; InputError naming the known ones."""
    fmt = d.get("format") if isinstance(d, Mapping) else None
    if fmt == TABLE_CERTIFICATE_FORMAT:
        raise InputError(f"a streamed certificate ({TABLE_CERTIFICATE_FORMAT}: its items in the item table items/ "
                         "beside it) is read by 'viewcert verify', 'explore' and 'ladder'; for this command rerun "
                         "'viewcert certify INPUT --json-certificate' (one JSON certificate)", field="format")
    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise InputError(f"not a viewcert certificate (format {str(fmt)[:60]!r}, expected one of "
                         f"{tuple(FORMATS)})", field="format")
    return FORMATS[fmt]


def item_ids(d: Mapping) -> list[str]:
    """The ids of the items of the certificate dict ``d``, in order, checked before its digest (a reader that
    shows items names the first one without a text id); InputError otherwise."""
    items = d.get("items") if isinstance(d, Mapping) else None
    if not isinstance(items, list):
        raise InputError("certificate has no 'items' list", field="items")
    first: dict[str, int] = {}
    for k, it in enumerate(items):
        if not isinstance(it, Mapping) or not isinstance(it.get("id"), str):
            raise InputError(f"item {k} has no text 'id'", field=f"items[{k}].id")
        if it["id"] in first:  # one id, two records: which one a reader shows or scores would be arbitrary
            raise InputError(f"duplicate item id {it['id'][:200]!r} (items[{first[it['id']]}] and items[{k}]); "
                             "every item id is listed once", field=f"items[{k}].id")
        first[it["id"]] = k
    return list(first)


def digest_value(d: Mapping) -> str | None:
    """The stored digest of ``d`` in its format's shape (:data:`DIGEST_SHAPES`); None if absent."""
    dig = d.get("digest")
    if digest_shape(str(d.get("format"))) == "hex":
        return dig if isinstance(dig, str) else None
    return dig.get("value") if isinstance(dig, Mapping) and isinstance(dig.get("value"), str) else None


def digest_ok(d: Mapping) -> bool:
    """The stored digest equals the one of the content."""
    return digest_value(d) == compute_digest(d)


def sealed(d: Mapping) -> dict:
    """``d`` with every float at its resolution (:mod:`viewcert.resolution`, stated in ``resolution``) and its
    digest written in its format's shape (what a producer does last)."""
    out = quantize_tree({k: v for k, v in d.items() if k not in ("digest", "resolution")})
    out["resolution"] = resolution_record()
    fmt = str(out.get("format"))
    scope = TASK_DIGEST_SCOPE if fmt == TASK_FORMAT else DIGEST_SCOPE
    out["digest"] = compute_digest(out) if digest_shape(fmt) == "hex" else digest_record(out, scope)
    return out


class StaleCertificate(InputError):
    """A certificate whose stored digest does not match its content (it was edited after it was written)."""


STALE_HINT = "--allow-stale-certificate reads it anyway, with a warning"


def check_digest(d: Mapping, source: str, *, allow_stale: bool = False) -> bool:
    """Whether the stored digest of ``d`` matches its content; a mismatch is a one-line :class:`StaleCertificate`
    naming ``source`` unless ``allow_stale`` (then False: the caller says so)."""
    try:
        stored, actual = digest_value(d), compute_digest(d)
    except (TypeError, ValueError) as exc:  # a value JSON cannot hold canonically (NaN)
        raise InputError(f"cannot digest certificate: {str(exc)[:200]}", source=source, field="digest") from None
    if stored != actual and not allow_stale:
        said = "no digest" if stored is None else f"digest {stored[:16]}…"
        raise StaleCertificate(f"stale certificate: it records {said} but its content hashes to {actual[:16]}… "
                               f"(edited after it was written; {STALE_HINT})", source=source, field="digest")
    return stored == actual


def cross_check_disagreements(outcomes: list[dict] | list[ItemOutcome]) -> list[dict]:
    """``summary.cross_check_disagreements``: every certified item's spglib/moyopy disagreements (its
    ``cross_check``), by id."""
    return [{"id": o.id, **o.cross_check} for o in outcomes_of(outcomes) if o.cross_check]
