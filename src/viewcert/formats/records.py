"""The certificate kinds, each declared once as a :class:`~viewcert.formats.model.Record` (a frozen pydantic
model), the one digest (:func:`compute_digest`, :func:`sealed`) and the stale-digest refusal.

Kinds (format strings defined here once; ``viewcert.formats.versions`` reads the older ones):

- ``ceiling``: ``viewcert-certificate/3`` (and /2, /1), crystals and molecules (``certify.certificate``):
  :class:`CeilingCertificate` with :class:`ItemOutcome` items and a :class:`Summary`;
- ``task``: ``viewcert.tasks.certificate`` (``version`` 2; 1 before the resolution), a transformation-task export
  (``benchmark.tasks_export``): :class:`TaskCertificate` with :class:`TaskItemRecord` items;
- ``interaction``: ``viewcert-interaction-benchmark/3`` (and /2; /1, whose digest is a bare hex string), a
  hydrogen-bond export (``benchmark.interaction_export``): :class:`InteractionCertificate` with
  :class:`InteractionItemRecord` items;
- the streamed certificate (``viewcert-certificate-table/1``, ``formats.table.StreamedCertificate``): a ceiling
  certificate whose items sit in an item table beside it.
- ``images``: ``viewcert-images-certificate/1``, the as-published ceiling of another tool's images
  (``certify.published``): :class:`PublishedCertificate` with :class:`PublishedItemRecord` items.

Each kind answers what its readers ask of it (``formats.kinds``: its title, its items, R1 or the ceilings the
ladder needs, what the explorer draws), so no reader switches on the kind.

The digest: SHA-256 of the compact canonical JSON (sorted keys) of every top-level key except ``digest`` and
``location``, written as ``{"algorithm": "sha256", "scope": ..., "value": HEX}`` (interaction /1: the bare HEX).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar, Generic, Self, TypeVar

from pydantic import Field

from viewcert.errors import InputError
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
from viewcert.formats.model import (
    ABSENT,
    Bool,
    Count,
    List,
    NonEmptyList,
    Number,
    Object,
    PositiveCount,
    Record,
    Text,
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
)
from viewcert.io.atomic import json_dumps
from viewcert.resolution import quantize_tree, resolution_record

__all__ = ["ABSENT", "CEILING_FORMAT", "INTERACTION_FORMAT", "TASK_FORMAT", "CeilingCertificate", "Certificate",
           "InteractionCertificate", "InteractionItemRecord", "ItemOutcome", "PublishedCertificate",
           "PublishedItemRecord", "StaleCertificate", "Summary",
           "TaskCertificate", "TaskItemRecord", "certificate_class", "check_digest", "compute_digest", "sealed"]

# ---------------------------------------------------------------------- formats, defined once
#: crystal and molecule certificates (``certify.certificate``); /1 is read through ``formats.versions``
CEILING_FORMAT_V1 = "viewcert-certificate/1"
CEILING_FORMAT_V2 = "viewcert-certificate/2"
#: /3: every float at the resolution the certificate states (``resolution``; issue 37)
CEILING_FORMAT = "viewcert-certificate/3"
#: transformation-task certificates (``benchmark.tasks_export``), with ``version`` = TASK_VERSION
TASK_FORMAT = "viewcert.tasks.certificate"
TASK_VERSION = 2  # 2: every float at the resolution the certificate states (``resolution``; issue 37)
TASK_VERSIONS = (1, TASK_VERSION)  # the versions read (1: floats as written before the resolution)
#: hydrogen-bond interaction certificates (``benchmark.interaction_export``); /1's digest is a bare hex string
INTERACTION_FORMAT_V1 = "viewcert-interaction-benchmark/1"
INTERACTION_FORMAT_V2 = "viewcert-interaction-benchmark/2"
#: /3: every float at the resolution the certificate states (``resolution``; issue 37)
INTERACTION_FORMAT = "viewcert-interaction-benchmark/3"
#: the streamed certificate (``certify.stream``, ``formats.table``): its items in an item table beside it
TABLE_CERTIFICATE_FORMAT = "viewcert-certificate-table/1"
#: the formats whose digest is the bare hex value (interaction certificates before issue 26); every other
#: format writes ``{algorithm, scope, value}``
HEX_DIGEST_FORMATS = (INTERACTION_FORMAT_V1,)
#: as-published certificates (``certify.published``: ``viewcert certify images:FOLDER/images.toml``)
IMAGES_FORMAT = "viewcert-images-certificate/1"

#: top-level keys outside the digest: the digest itself, and where the inputs sat (a hint for ``verify``)
UNDIGESTED = ("digest", "location")
DIGEST_SCOPE = ("sha256 of the compact canonical JSON (sorted keys) of every top-level key except 'digest' and "
                "'location'")
#: the scope text task certificates have always written (they have no ``location``: the same bytes digested)
TASK_DIGEST_SCOPE = ("sha256 of the compact canonical JSON (sorted keys) of every top-level key except "
                     "'digest'")


def canonical_bytes(cert: Mapping[str, Any]) -> bytes:
    """The bytes the digest hashes: compact JSON, sorted keys, of every key but :data:`UNDIGESTED`."""
    body = {k: v for k, v in cert.items() if k not in UNDIGESTED}
    return json_dumps(body, indent=None, allow_nan=False).encode()


def compute_digest(cert: Mapping[str, Any]) -> str:
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


def digest_record(cert: Mapping[str, Any], scope: str = DIGEST_SCOPE) -> dict[str, Any]:
    """The digest as written (the one shape): algorithm, scope and value."""
    return {"algorithm": "sha256", "scope": scope, "value": compute_digest(cert)}


def digest_value(d: Mapping[str, Any]) -> str | None:
    """The stored digest of the certificate JSON ``d`` in its format's shape; None if absent."""
    dig = d.get("digest")
    if d.get("format") in HEX_DIGEST_FORMATS:
        return dig if isinstance(dig, str) else None
    return dig.get("value") if isinstance(dig, Mapping) and isinstance(dig.get("value"), str) else None


def digest_ok(d: Mapping[str, Any]) -> bool:
    """The stored digest of the certificate JSON ``d`` equals the one of its content."""
    return digest_value(d) == compute_digest(d)


def sealed(d: Mapping[str, Any]) -> dict[str, Any]:
    """``d`` with every float at its resolution (:mod:`viewcert.resolution`, stated in ``resolution``) and its
    digest written in its format's shape (what a producer does last)."""
    out: dict[str, Any] = quantize_tree({k: v for k, v in d.items() if k not in ("digest", "resolution")})
    out["resolution"] = resolution_record()
    fmt = out.get("format")
    scope = TASK_DIGEST_SCOPE if fmt == TASK_FORMAT else DIGEST_SCOPE
    out["digest"] = compute_digest(out) if fmt in HEX_DIGEST_FORMATS else digest_record(out, scope)
    return out


class StaleCertificate(InputError):
    """A certificate whose stored digest does not match its content (it was edited after it was written)."""


STALE_HINT = "--allow-stale-certificate reads it anyway, with a warning"


def check_digest(d: Mapping[str, Any], source: str, *, allow_stale: bool = False) -> bool:
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


# ---------------------------------------------------------------------- crystal and molecule certificates
class ItemOutcome(Record):
    """One item of a crystal/molecule certificate (``certify.evaluate``): its outcome (correct | incorrect |
    error) and why, its labels by level (crystal_system, point_group, space_group, symbol), the oracle's report,
    δ* (Å) with ``margin``, the raised symmetry, the molecular levels of a molecule, and the hashes of what it
    read."""

    SOURCE: ClassVar[str] = "items[]"
    id: Text = Field(description="the item's id, unique in the certificate")
    outcome: Text = Field(description="correct, incorrect or error (the item could not be read or certified)")
    correct: Bool = Field(description="the reconstruction's label equals the reference at the scored level")
    reasons: List | None = Field(None, description=(
        "why the item is not correct, in the evaluator's reason order (``evaluate.REASON_ORDER``)"))
    correct_by_level: Object | None = Field(None, description="per level (crystal_system, ...) whether it is correct")
    input_sha256: Text | None = Field(None, description="the SHA-256 (hex) of the item's structure text as read")
    label_dataset: Object | None = Field(None, description="the dataset's label by level; null when it has none")
    label_source: Text | None = Field(None, description="where the dataset's label came from (a field's name)")
    label_conflicts: List | None = Field(None, description=(
        "the levels where the dataset's labels disagree with each other; null when none"))
    error: Text | None = Field(None, description="why the item could not be read or certified (outcome error)")
    formula: Text | None = Field(None, description="the reduced formula of the structure as read")
    n_atoms: Count | None = Field(None, description="a count of the atoms of the rendered cell")
    periodic: Bool | None = Field(None, description="the item is a crystal (false: a molecule)")
    reading: Object | None = Field(None, description=(
        "the reader's choices (alternate locations kept, ...); written only when it made one"))
    cell_sha256: Text | None = Field(None, description="the SHA-256 (hex) of the rendered cell")
    cameras_sha256: Text | None = Field(None, description="the SHA-256 (hex) of the item's framed cameras")
    camera_positions: Object | None = Field(None, description=(
        "perspective cameras: per view the camera's position (Å, the rendered structure's frame)"))
    independent_views: Bool | None = Field(None, description="two of the views have independent directions")
    label_rendered: Object | None = Field(None, description="the rendered (standardised) cell's label by level")
    label_reconstructed: Object | None = Field(None, description=(
        "the reconstruction's label by level (spglib at τ); null when the oracle failed"))
    label_mismatch: List | None = Field(None, description=(
        "the levels where the dataset's label differs from the rendered cell's; null when none"))
    cross_check: Object | None = Field(None, description=(
        "moyopy's disagreements with spglib by cell (input, rendered, reconstructed); null when none"))
    reference_source: Text | None = Field(None, description=(
        "what R1 compares with: dataset, input (the standardisation raised the symmetry) or rendered"))
    symmetry_raised: SymmetryRaised | None = Field(None, description=(
        "the standardisation gave another space group than the input's (``SymmetryRaised``)"))
    oracle: OracleReport | None = Field(None, description="the oracle's report (``OracleReport``)")
    uniqueness_margin: UniquenessMargin | None = Field(None, description=(
        "δ* (Å) and its near miss (``UniquenessMargin``); written with the configuration's ``margin``"))
    phantoms: List | None = Field(None, description="the phantoms' positions (Å, the rendered cell's frame)")
    unique: Bool | None = Field(None, description="oracle ok, Φ_δ empty and every atom recovered")
    exact: Bool | None = Field(None, description="unique, with one accepted point per atom")
    certified: Bool | None = Field(None, description="unique, d_min > 2δ and two independent views")
    molecule: MoleculeOutcome | None = Field(None, description=(
        "a molecule's levels: point groups, handedness, stereocentres (``MoleculeOutcome``)"))

    @property
    def is_error(self) -> bool:
        return self.outcome == "error"

    @property
    def is_molecule(self) -> bool:
        return bool(self.molecule)

    def label(self, which: str) -> dict[str, Any]:
        """The labels ``which`` (dataset | rendered | reconstructed) as a dict; {} when there are none."""
        return getattr(self, f"label_{which}") or {}

    def correct_at(self, level: str) -> bool:
        return bool(self.correct_by_level and self.correct_by_level.get(level))

    def predicted(self, score: str) -> Any:
        """What the reconstruction says at ``score`` (a molecule: its reconstructed point group)."""
        if self.molecule:
            pg = self.molecule.point_group
            return pg.reconstructed if pg else None
        return self.label("reconstructed").get(score)

    def reference(self, score: str) -> Any:
        """The label R1 compares with at ``score``: the dataset's, the input cell's (the standardisation raised
        the symmetry) or the rendered cell's; a molecule's own point group."""
        if self.molecule:
            pg = self.molecule.point_group
            return pg.input if pg else None
        if self.reference_source == "dataset":
            return self.label("dataset").get(score)
        if self.reference_source == "input":
            raised = self.symmetry_raised
            return raised.input.get(score) if raised and raised.input else None
        return self.label("rendered").get(score)


def outcomes_of(items: Iterable[Any]) -> list[ItemOutcome]:
    """Items as :class:`ItemOutcome` values (dicts typed; values kept)."""
    return [ItemOutcome.from_dict(it, f"items[{k}]") for k, it in enumerate(items)]


class Summary(Record):
    """``certificate["summary"]``: R1 = correct / n (the crystals', else the molecules') with its exact bound and
    interval, per level and crystal system, the phantom census, and every failure, label mismatch,
    cross-check disagreement, raised symmetry and error by id; ``molecules`` the molecular summary."""

    SOURCE: ClassVar[str] = "summary"
    n: Count = Field(description="a count of the items scored: the crystals (the molecules when there is none)")
    n_errors: Count = Field(description="a count of the items that could not be read or certified")
    kinds: Kinds = Field(description="how many certified items are crystals and how many molecules")
    score: Text = Field(description="the scored level, or the molecule levels joined by ``+``")
    truth: Text = Field(description="what R1 compares with: dataset or rendered (crystals), input (molecules)")
    correct: Count = Field(description="a count of the scored items correct at the scored level")
    R1: Number | None = Field(description="a rate in [0, 1]: ``correct`` / ``n``; null when n is 0")
    bound: RateBound = Field(description="R1's exact one-sided Clopper-Pearson lower bound")
    interval: RateBound = Field(description="R1's exact two-sided Clopper-Pearson interval")
    by_level: dict[str, LevelCount] = Field(description="per level: ``correct`` and ``R1``")
    by_crystal_system: dict[str, LevelCount] = Field(description="per crystal system: ``n`` and ``correct``")
    phantom_census: PhantomCensus = Field(description="phantoms, missing atoms, unique, exact, certified items")
    failure_reasons: Object = Field(description="per reason the count of incorrect items that give it")
    failures: List = Field(description="every incorrect item: its id and reasons")
    label_mismatches: List = Field(description="every item whose dataset label differs from the rendered cell's")
    cross_check_disagreements: List = Field(description="every item where spglib and moyopy disagree")
    n_symmetry_raised: Count | None = Field(None, description="a count of the items flagged symmetry_raised")
    symmetry_raised: List | None = Field(None, description="the ids of the items flagged symmetry_raised")
    errors: List | None = Field(None, description="every item that could not be certified: its id and error")
    molecules: MoleculeSummary | None = Field(None, description="the molecules' summary (``MoleculeSummary``)")


T = TypeVar("T")
C = TypeVar("C", bound="Certificate")


class CertificateVisitor(Generic[T]):
    """What a consumer does with each certificate kind, one method per kind: ``cert.visit(visitor)`` calls the one
    of ``cert``'s kind (double dispatch: no consumer switches on a certificate's type or kind). A streamed
    certificate is a ceiling certificate unless the visitor says otherwise (:meth:`streamed`)."""

    def ceiling(self, cert: Any) -> T:
        """A crystal/molecule certificate (``CeilingCertificate``; a streamed one unless :meth:`streamed` is
        overridden)."""
        raise NotImplementedError

    def streamed(self, cert: Any) -> T:
        """A streamed crystal/molecule certificate (``formats.table.StreamedCertificate``)."""
        return self.ceiling(cert)

    def task(self, cert: TaskCertificate) -> T:
        """A transformation-task certificate."""
        raise NotImplementedError

    def interaction(self, cert: InteractionCertificate) -> T:
        """An interaction certificate."""
        raise NotImplementedError

    def counts(self, cert: Any) -> T:
        """Hand-written R1 counts (``formats.ladder.R1CountsRecord``: no format, no digest)."""
        raise NotImplementedError

    def published(self, cert: PublishedCertificate) -> T:
        """An as-published certificate (``certify.published``)."""
        raise NotImplementedError


class Certificate(Record):
    """The base of every certificate kind: its kind's name (``KIND``), the formats it reads (the last one
    written), the module that writes it and what it certifies (``docs/formats.md`` is generated from these)."""

    KIND: ClassVar[str] = ""
    #: how a reader names the kind (``not a crystal/molecule certificate``)
    TITLE: ClassVar[str] = ""
    FORMATS: ClassVar[tuple[str, ...]] = ()
    PRODUCER: ClassVar[str] = ""
    WHAT: ClassVar[str] = ""

    format: Text = Field(description="the certificate's format (its kind and version)")

    @classmethod
    def from_dict(cls, d: Any, source: str | None = None) -> Self:
        """The certificate of the JSON object ``d``: on the base class, the kind its ``format`` names
        (InputError naming the known formats otherwise); on a kind, that kind.

        Parameters
        ----------
        d : object
            The certificate's JSON object (or a certificate, returned as it is).
        source : str or None
            Where it sits, for an error (default: its top level).

        Returns
        -------
        Certificate
            The typed certificate.
        """
        if cls is Certificate and not isinstance(d, Certificate):
            return certificate_class(d).from_dict(d, "" if source is None else source)  # type: ignore[return-value]
        return super().from_dict(d, "" if source is None else source)

    @classmethod
    def written_format(cls) -> str:
        """The format this kind writes now."""
        return cls.FORMATS[-1]

    #: the sections a reader shows as the certificate's settings, in this order (the explorer's summary page)
    SHOWN_SETTINGS: ClassVar[tuple[str, ...]] = ()

    def visit(self, visitor: CertificateVisitor[T]) -> T:
        """``visitor``'s method for this kind (:class:`CertificateVisitor`)."""
        raise NotImplementedError

    def shown_settings(self) -> dict[str, Any]:
        """The sections of :data:`SHOWN_SETTINGS` this certificate has (null ones too), as JSON values."""
        return {k: v.to_dict() if isinstance(v, Record) else v for k in self.SHOWN_SETTINGS if self.written(k)
                for v in [getattr(self, k)]}

    def require(self, kind: type[C], source: str | None = None, why: str | None = None) -> C:
        """This certificate as ``kind`` (typed so); one InputError naming ``source`` when it is another kind,
        saying ``why`` (default: ``not a <kind> certificate``)."""
        if not isinstance(self, kind):
            raise InputError(why or f"not a {kind.TITLE} certificate (format {self.format!r})", source=source,
                             field="format")
        return self

    def manifest_entry(self, **extra: Any) -> dict[str, Any]:
        """The export manifest's record of this certificate written beside it (``formats.export``): path,
        format, digest and ``extra`` (a molecule export: its level)."""
        return {"path": "certificate.json", "format": self.format, "digest": self.digest_value, **extra}

    @property
    def mean_ceiling_note(self) -> str:
        """How the ladder names this kind's R1 when it is a mean of per-item ceilings."""
        return f"{self.TITLE} certificate"

    @property
    def digest_value(self) -> str | None:
        """The stored digest's hex value, whatever shape this format writes it in (None when absent)."""
        return digest_value({"format": self.format, "digest": getattr(self, "digest", None)})

    def iter_items(self) -> Iterator[Any]:
        """Every item record, in order (a streamed certificate reads them lazily)."""
        return iter(getattr(self, "items", ()))

    def item_ids(self) -> list[str]:
        return [it.id for it in self.iter_items()]

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        if isinstance(out.get("items"), tuple):
            out["items"] = list(out["items"])
        return out


class CeilingCertificate(Certificate):
    """A crystal or molecule certificate (``certify.certificate``): format, inputs, config, protocol,
    observation model, tolerances, oracle, scoring, libraries, items, summary, digest, and where the inputs
    were read (``location``, outside the digest)."""

    KIND: ClassVar[str] = "ceiling"
    TITLE: ClassVar[str] = "crystal/molecule"
    SHOWN_SETTINGS: ClassVar[tuple[str, ...]] = ("format", "protocol", "tolerances", "config", "observation_model",
                                                 "libraries", "digest")
    FORMATS: ClassVar[tuple[str, ...]] = (CEILING_FORMAT_V1, CEILING_FORMAT_V2, CEILING_FORMAT)
    PRODUCER: ClassVar[str] = "viewcert.certify.certificate"
    WHAT: ClassVar[str] = "the render ceiling R1 of crystals and molecules (viewcert certify, build-benchmark)"

    inputs: Inputs = Field(description="what was read (``Inputs``)")
    config: CertifyConfigRecord = Field(description="every setting (``CertifyConfigRecord``)")
    protocol: ViewProtocol = Field(description="the views, κ and the camera (``ViewProtocol``)")
    observation_model: ObservationRecord = Field(description="how atoms are observed (``ObservationRecord``)")
    tolerances: Tolerances = Field(description="δ, τ (Å), the angle tolerance (degrees) (``Tolerances``)")
    oracle: OracleSettingsRecord = Field(description="the oracle's settings (``OracleSettingsRecord``)")
    scoring: Scoring = Field(description="the scored level, the truth, the rule and the bound (``Scoring``)")
    libraries: Object = Field(description="the versions of the libraries that computed it, by name")
    items: tuple[ItemOutcome, ...] = Field(description="one record per item, in input order (``ItemOutcome``)")
    summary: Summary = Field(description="R1, its bounds and the census (``Summary``)")
    resolution: Object | None = Field(None, description="the resolution every float is written at (/3)")
    digest: Object | None = Field(None, description="the digest: algorithm, scope and value")
    location: Location | None = Field(None, description="where the inputs were read (outside the digest)")

    def visit(self, visitor: CertificateVisitor[T]) -> T:
        return visitor.ceiling(self)

    def manifest_entry(self, **extra: Any) -> dict[str, Any]:
        """The base entry with the observation mode and R1's counts (a crystal or molecule export)."""
        s = self.summary
        return {**super().manifest_entry(**extra), "observe": self.config.observe,
                "summary": {"n": s.n, "correct": s.correct, "R1": s.R1}}

    def r1_rows(self) -> list[dict[str, Any]]:
        """{id, correct, reasons, periodic} of every item, in order: what R1 counts (``ladder_items``)."""
        return [{"id": it.id, "correct": bool(it.correct), "reasons": list(it.reasons or []),
                 "periodic": it.periodic} for it in self.items]


def ladder_items(summary: Any, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items R1 = ``summary.correct`` / ``summary.n`` counts, {id, correct, reasons}: a run with crystals and
    molecules reports them apart and its headline is the crystals' (``certify.summary``), so its molecules (not
    periodic) are left out."""
    mixed = bool(summary.kinds and summary.kinds.crystals and summary.kinds.molecules)
    return [{"id": r["id"], "correct": r["correct"], "reasons": r["reasons"]} for r in rows
            if not (mixed and r["periodic"] is False)]


# ---------------------------------------------------------------------- transformation tasks
class TaskItemRecord(Record):
    """One question of a transformation-task certificate (``tasks_export.item_ceilings``): the item
    (structure_id, task, truth, mirror, n_atoms, ...), the consistent answers and counts, the ceilings (exact =
    1/|consistent|, MiSI partial credit; choice tasks 1/|consistent options|), the best guess and why each
    other consistent answer draws the same images."""

    SOURCE: ClassVar[str] = "items[]"
    id: Text = Field(description="the question's id")
    n_consistent: PositiveCount = Field(description="a count (≥ 1) of the answers consistent with the views")
    structure_id: Text | None = Field(None, description="the structure's id")
    task: Text | None = Field(None, description="the task (rotation, translation, handedness, ...)")
    truth: Text | None = Field(None, description="the true answer, as its command text")
    mirror: Bool | None = Field(None, description="the after image shows the mirror image")
    n_atoms: Count | None = Field(None, description="a count of the structure's atoms")
    consistent: List | None = Field(None, description="the answers consistent with the views, as command text")
    exact_ceiling: Number | None = Field(None, description="1 / ``n_consistent``, in (0, 1]")
    partial_ceiling: Number | None = Field(None, description="the best expected MiSI partial credit, in [0, 1]")
    best_guess: Text | None = Field(None, description="the consistent answer with the best expected credit")
    explanations: List | None = Field(None, description="why each other consistent answer draws the same images")
    consistent_choices: NonEmptyList | None = Field(None, description=(
        "choice tasks: the options consistent with the views (not empty)"))
    choice_ceiling: Number | None = Field(None, description="choice tasks: 1 / |consistent options|")
    handedness_ceiling: Number | None = Field(None, description="handedness: 1 / the handednesses consistent")
    one_view_witness_consistent: Bool | None = Field(None, description=(
        "handedness: the after view is also the mirror image's view"))

    @property
    def ceiling(self) -> Fraction:
        """The item's exact ceiling: 1/|consistent options| (choice tasks) or 1/|consistent answers|."""
        return Fraction(1, len(self.consistent_choices) if self.consistent_choices else self.n_consistent)


class TaskCertificate(Certificate):
    """A transformation-task certificate (``benchmark.tasks_export``): input (the INPUT text), task,
    protocol, camera, seed, settings, view setup, tolerances (Å), observation model, answer grid,
    normalisers, libraries, items, summary (per group), excluded structures, unreadable ones (``errors``),
    the digest; ``limit`` when the export read only the first N molecules."""

    KIND: ClassVar[str] = "task"
    TITLE: ClassVar[str] = "transformation-task"
    SHOWN_SETTINGS: ClassVar[tuple[str, ...]] = ("format", "task", "protocol", "tolerances", "settings",
                                                 "observation_model", "libraries", "digest")
    FORMATS: ClassVar[tuple[str, ...]] = (TASK_FORMAT,)
    PRODUCER: ClassVar[str] = "viewcert.benchmark.tasks_export"
    WHAT: ClassVar[str] = "the consistent answers and ceilings of a transformation task (rotation, zoom, ...)"

    items: tuple[TaskItemRecord, ...] = Field(min_length=1, description=(
        "one record per question (``TaskItemRecord``), not empty"))
    version: Count | None = Field(None, description="the format's version (2: floats at the stated resolution)")
    input: Text | None = Field(None, description="the input as given")
    task: Text | None = Field(None, description="the task exported")
    protocol: TaskProtocol | None = Field(None, description="the views (``TaskProtocol``)")
    camera: Text | None = Field(None, description="the camera kind: orthographic or perspective")
    depth_cue: Bool | None = Field(None, description="the images are shaded by depth")
    seed: Count | None = Field(None, description="the seed of the items' truths and the summary's bootstrap")
    settings: ExportSettingsRecord | None = Field(None, description="the export's settings")
    view_setup: Object | None = Field(None, description="how each structure is placed before and after")
    tolerances: TaskTolerances | None = Field(None, description="δ (Å in the image plane), ε (``TaskTolerances``)")
    observation_model: Text | None = Field(None, description=(
        "one line naming the after view's observation model"))
    answer_grid: Object | None = Field(None, description="the answers the task allows")
    normalisers: Object | None = Field(None, description="the MiSI partial credit's normalisers")
    mirror_normal_screen: List | None = Field(None, description="the mirror plane's normal in screen coordinates")
    libraries: Object | None = Field(None, description="the versions of the libraries that computed it")
    summary: TaskSummary | None = Field(None, description="per group (all, per axis) the ceilings")
    excluded: List | None = Field(None, description="the structures left out of every denominator")
    errors: List | None = Field(None, description="the structures that could not be read: id, error")
    choice_ceiling_mean: Number | None = Field(None, description="choice tasks: the mean choice ceiling")
    placement: Object | None = Field(None, description="perspective: how the cameras are placed")
    limit: Count | None = Field(None, description="the export read only the first N molecules")
    resolution: Object | None = Field(None, description="the resolution every float is written at")
    digest: Object | None = Field(None, description="the digest: algorithm, scope and value")

    def visit(self, visitor: CertificateVisitor[T]) -> T:
        return visitor.task(self)


# ---------------------------------------------------------------------- interactions
class InteractionItemRecord(Record):
    """One question of an interaction certificate: id, the complex (``source_id`` NAME:LIGAND), whether it
    is a positive, its number of bonds, and the ceiling under ideal observations and as rendered (``ideal``,
    ``rendered``: ``ceiling`` in [0, 1] with the losses attributed, typed ``formats.item_sections.ItemCeiling``);
    ``residue`` (residue-ligand), ``entry`` (interaction-location), ``d0_A`` (docking) by task."""

    SOURCE: ClassVar[str] = "items[]"
    id: Text = Field(description="the question's id")
    source_id: Text | None = Field(None, description="the complex: NAME:LIGAND")
    positive: Bool | None = Field(None, description="a true bond to name (residue-ligand: the residue bonds)")
    n_bonds: Count | None = Field(None, description="a count of the certain true bonds")
    ideal: ItemCeiling | None = Field(None, description="the ceiling under ideal observations (``ItemCeiling``)")
    rendered: ItemCeiling | None = Field(None, description="the ceiling as rendered (``ItemCeiling``)")
    residue: Text | None = Field(None, description="residue-ligand: the residue asked about (CHAIN/RESseq)")
    entry: Text | None = Field(None, description="interaction-location: the bond's entry")
    d0_A: Count | None = Field(None, description="docking: the ligand's displacement asked about (Å)")

    def ceiling(self, mode: str = "rendered") -> float:
        """The item's ceiling in ``mode`` (ideal | rendered); InputError when it is not a number in [0, 1]."""
        rec = getattr(self, mode) if mode in ("ideal", "rendered") else None
        c = rec.ceiling if isinstance(rec, ItemCeiling) else None
        if c is None or not 0 <= c <= 1:
            raise InputError(f"item {self.id[:40]!r} needs a {mode} ceiling in [0, 1]", field=f"items[].{mode}")
        return float(c)


class InteractionCertificate(Certificate):
    """A hydrogen-bond interaction certificate (``benchmark.interaction_export``): task, settings,
    libraries, per complex the ground truth (``ground_truth``, by NAME:LIGAND), items, summary and digest;
    ``complexes`` (/2) the complexes in input order, each by name, ligand and SHA-256 (``verify`` finds them
    by name inside the trusted folder)."""

    KIND: ClassVar[str] = "interaction"
    TITLE: ClassVar[str] = "interaction"
    SHOWN_SETTINGS: ClassVar[tuple[str, ...]] = ("format", "task", "settings", "libraries", "digest")
    FORMATS: ClassVar[tuple[str, ...]] = (INTERACTION_FORMAT_V1, INTERACTION_FORMAT_V2, INTERACTION_FORMAT)
    PRODUCER: ClassVar[str] = "viewcert.benchmark.interaction_export"
    WHAT: ClassVar[str] = "the hydrogen-bond truth and ceilings of an interaction task (pocket-ligand, ...)"

    items: tuple[InteractionItemRecord, ...] = Field(description="one record per question")
    task: Text | None = Field(None, description="the task exported")
    settings: ExportSettingsRecord | None = Field(None, description="the export's settings")
    libraries: Object | None = Field(None, description="the versions of the libraries that computed it")
    ground_truth: Object | None = Field(None, description="per complex (NAME:LIGAND) its hydrogen bonds")
    summary: InteractionSummary | None = Field(None, description="per group the mean ceilings")
    complexes: List | None = Field(None, description="the complexes in input order: name, ligand, SHA-256")
    resolution: Object | None = Field(None, description="the resolution every float is written at (/3)")
    digest: Object | Text | None = Field(None, description="the digest (/1: its bare hex value)")

    def visit(self, visitor: CertificateVisitor[T]) -> T:
        return visitor.interaction(self)


# ---------------------------------------------------------------------- published images
class PublishedItemRecord(Record):
    """One question of an as-published certificate: its views (image names), the structure as shipped, the answer
    images.toml gives, its outcome under the geometric ceiling (every drawn atom, exact projection through the
    resolved cameras) and as published (the atoms detected in the pixels), both ``ItemOutcome`` records, whether
    they differ and why (``certify.published.REASONS``), the drawn radius scale the oracle's occlusion used, or
    the item's error."""

    SOURCE: ClassVar[str] = "items[]"
    id: Text = Field(description="the question's id")
    images: List | None = Field(None, description="the names of its views (``images[].name``)")
    structure: PublishedStructure | None = Field(None, description="the structure as shipped (``PublishedStructure``)")
    answer: Object | None = Field(None, description="the answer images.toml gives, by level; null when none")
    geometric: ItemOutcome | None = Field(None, description=(
        "the outcome under the geometric ceiling: every drawn atom through the resolved cameras (``ItemOutcome``)"))
    as_published: ItemOutcome | None = Field(None, description=(
        "the outcome from the atoms detected in the published pixels (``ItemOutcome``)"))
    differ: Bool | None = Field(None, description="the two outcomes differ")
    reasons: List | None = Field(None, description="why they differ (``certify.published.REASONS``)")
    radius_scale: Number | None = Field(None, description="the drawn radius scale the oracle's occlusion used")
    error: Text | None = Field(None, description="why the item could not be read or certified")

    @property
    def is_error(self) -> bool:
        return self.written("error")


class PublishedCertificate(Certificate):
    """An as-published certificate (``certify.published``): the input (images.toml and every file it names, by
    SHA-256), the settings (δ, τ, the oracle's rule, the scoring, the detector), the libraries, every image
    (``images``: SHA-256, resolved projection, detections and residuals), the items (both ceilings per item), the
    summary, the digest and where the input was read (``location``, outside the digest)."""

    KIND: ClassVar[str] = "images"
    TITLE: ClassVar[str] = "as-published"
    SHOWN_SETTINGS: ClassVar[tuple[str, ...]] = ("format", "settings", "tolerances", "detector", "libraries",
                                                 "digest")
    FORMATS: ClassVar[tuple[str, ...]] = (IMAGES_FORMAT,)
    PRODUCER: ClassVar[str] = "viewcert.certify.published"
    WHAT: ClassVar[str] = ("the as-published ceiling of the images a benchmark shipped, beside the geometric ceiling "
                           "of the same cameras (viewcert certify images:FOLDER/images.toml)")

    items: tuple[PublishedItemRecord, ...] = Field(description="one record per question (``PublishedItemRecord``)")
    inputs: Inputs = Field(description="images.toml and every file it names, by SHA-256 (``Inputs``)")
    settings: PublishedSettings = Field(description="what it ran with (``PublishedSettings``)")
    tolerances: Tolerances = Field(description="δ, τ (Å), the angle tolerance (degrees)")
    detector: Object = Field(description="the atom detector: its module and settings")
    libraries: Object = Field(description="the versions of the libraries that computed it, by name")
    images: tuple[PublishedImage, ...] = Field(description="every image read (``PublishedImage``)")
    summary: PublishedSummary = Field(description="both ceilings and the detection totals")
    resolution: Object | None = Field(None, description="the resolution every float is written at")
    digest: Object | None = Field(None, description="the digest: algorithm, scope and value")
    location: Location | None = Field(None, description="where the inputs were read (outside the digest)")

    def visit(self, visitor: CertificateVisitor[T]) -> T:
        return visitor.published(self)

    def input_folder(self) -> Path:
        """The folder of the images.toml it certified (``location.input``'s folder, outside the digest).

        Returns
        -------
        Path
            The folder; InputError when the certificate does not record where it was read.
        """
        where = self.location.input if self.location else None
        if not isinstance(where, str):
            raise InputError("the certificate does not record where its input was read", field="location.input")
        return Path(where).parent

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        if isinstance(out.get("images"), tuple):
            out["images"] = list(out["images"])
        return out


# ---------------------------------------------------------------------- the kinds, by format
#: the JSON certificate kinds (the streamed certificate is ``formats.table``'s)
JSON_KINDS: tuple[type[Certificate], ...] = (CeilingCertificate, TaskCertificate, InteractionCertificate,
                                             PublishedCertificate)


def as_kind(cert: Any, kind: type[C], source: str | None = None, why: str | None = None) -> C:
    """``cert`` as a certificate of ``kind`` (typed so); one InputError naming ``source`` and saying ``why``
    (default: ``not a <kind> certificate``) when it is anything else (another kind, a dict, None).

    Parameters
    ----------
    cert : object
        What a caller holds as a certificate.
    kind : type
        The certificate kind it must be (``InteractionCertificate``, ...).
    source : str or None
        The file, for the error.
    why : str or None
        The error's words.

    Returns
    -------
    Certificate
        ``cert``.
    """
    if isinstance(cert, Certificate):
        return cert.require(kind, source, why)
    raise InputError(why or f"not a {kind.TITLE} certificate ({type(cert).__name__})", source=source, field="format")


def certificate_class(d: Any) -> type[Certificate]:
    """The kind of the certificate JSON ``d`` by its ``format``; InputError naming the known ones."""
    fmt = d.get("format") if isinstance(d, Mapping) else None
    for cls in JSON_KINDS:
        if fmt in cls.FORMATS:
            return cls
    known = tuple(f for cls in JSON_KINDS for f in cls.FORMATS)
    raise InputError(f"not a viewcert certificate (format {str(fmt)[:60]!r}, expected one of {known})",
                     field="format")


def item_ids(d: Mapping[str, Any]) -> list[str]:
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


def cross_check_disagreements(outcomes: Iterable[Any]) -> list[dict[str, Any]]:
    """``summary.cross_check_disagreements``: every certified item's spglib/moyopy disagreements (its
    ``cross_check``), by id."""
    return [{"id": o.id, **o.cross_check} for o in outcomes_of(outcomes) if o.cross_check]
