"""The typed sections of a certificate's ``summary`` (issue 41 item 1): what a crystal/molecule summary holds
(``kinds``, the exact Clopper–Pearson ``bound`` and ``interval``, the ``phantom_census``, the molecular summary
``molecules``), the streamed certificate's summary (``certify.stream``: counts instead of lists), and the per-group
summaries of a transformation-task and an interaction certificate (``all`` and per axis / per positive, negative
and number of bonds). Counts are item counts; rates and ceilings are in [0, 1]; no length or angle is held here.

Each section keeps the exact round trip of :class:`~viewcert.formats.fields.Section` (``from_dict(d).to_dict() ==
d``) and declares its counts, rates and nested sections in ``KINDS``; a received section that is not an object,
or a count or rate of the wrong kind, is a one-line :class:`~viewcert.errors.InputError` naming where
(``summary.phantom_census.items_unique must be a count (or null), got 'x'``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from viewcert.formats.fields import ABSENT, Section, check_kind, typed_section

__all__ = ["InteractionGroup", "InteractionSummary", "Kinds", "LevelCount", "MeanInterval", "MeanRange",
           "MoleculeSummary", "PhantomCensus", "RateBound", "TableSummary", "TaskGroup", "TaskSummary", "counts_dict",
           "type_counts", "typed_counts", "write_counts"]


def typed_counts(value: Any, source: str) -> Any:
    """A JSON object of counts keyed by data (a level, a crystal system: ``summary.by_level``), typed.

    Parameters
    ----------
    value : Mapping, ABSENT or None
        The JSON object (each entry an object of counts), or what a producer hands: entries typed already.
    source : str
        Where it sits, for an error (``summary.by_level``).

    Returns
    -------
    dict, ABSENT or None
        ``{key: LevelCount}`` in its order; ABSENT and None as they are. InputError naming ``source`` (and the
        key) when it, or an entry, is not an object or holds a count of the wrong kind.
    """
    if value is ABSENT or value is None:
        return value
    check_kind(value, "object", source)
    return {k: typed_section(LevelCount, v, f"{source}.{k}") for k, v in value.items()}


def counts_dict(value: Any) -> Any:
    """The JSON object of a :func:`typed_counts` value.

    Parameters
    ----------
    value : dict, ABSENT or None
        ``{key: LevelCount}`` (an entry that is not a section is written as it is).

    Returns
    -------
    dict, ABSENT or None
        Each entry written through its ``to_dict``, in its order; anything but a mapping as it is.
    """
    if not isinstance(value, Mapping):
        return value
    return {k: v.to_dict() if isinstance(v, Section) else v for k, v in value.items()}


def type_counts(record: Any, names: tuple, prefix: str) -> None:
    """Type each field of ``names`` of the frozen ``record`` (a section or record with counts keyed by data) by
    :func:`typed_counts`, an error naming ``prefix.<name>``; called once, from its ``__post_init__``."""
    for name in names:
        object.__setattr__(record, name, typed_counts(getattr(record, name), f"{prefix}.{name}"))


def write_counts(out: dict, names: tuple) -> dict:
    """``out`` (a record's JSON object) with each of its ``names`` written back by :func:`counts_dict`."""
    for name in names:
        if name in out:
            out[name] = counts_dict(out[name])
    return out


@dataclass(frozen=True)
class _Counted(Section):
    """A section with counts keyed by data (``COUNTS``: field names, each typed by :func:`type_counts`)."""

    COUNTS: ClassVar[tuple] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        type_counts(self, self.COUNTS, self.SOURCE)

    def to_dict(self) -> dict:
        """The JSON object: ``from_dict(d).to_dict() == d`` (counts keyed by data written back too)."""
        return write_counts(super().to_dict(), self.COUNTS)


@dataclass(frozen=True)
class LevelCount(Section):
    """One entry of the counts keyed by data: ``summary.by_level`` (``correct``, ``R1``), ``by_crystal_system``
    (``n``, ``correct``), ``molecules.by_level`` (``correct``, ``R1`` and its ``bound`` sentence)."""

    SOURCE: ClassVar[str] = "summary.by_level"
    KINDS: ClassVar[dict] = {"n": "count or null", "correct": "count or null", "R1": "number or null"}
    #: ``by_crystal_system``: a count of the crystal items of that system (the dataset's label, else the
    #: rendered cell's; ``unknown`` when neither has one)
    n: int = ABSENT
    #: a count of the items correct at that level (``by_level``), or of that system's correct items
    #: (``by_crystal_system``)
    correct: int = ABSENT
    #: a rate in [0, 1]: ``correct`` / the summary's n at that level (9 significant digits;
    #: ``molecules.by_level``: rounded to 6 decimals); null when n is 0
    R1: float | None = ABSENT  # noqa: N815 - the certificate's own key
    #: ``molecules.by_level``: the sentence of the exact one-sided Clopper-Pearson lower bound of R1 at the
    #: configuration's confidence
    bound: str = ABSENT
    extra: Mapping = field(default_factory=dict)


# ---------------------------------------------------------------------- crystal and molecule certificates
@dataclass(frozen=True)
class Kinds(Section):
    """``summary.kinds``: how many certified items are crystals and how many molecules (errors not counted)."""

    SOURCE: ClassVar[str] = "summary.kinds"
    KINDS: ClassVar[dict] = {"crystals": "count or null", "molecules": "count or null"}
    crystals: int = ABSENT  # a count of the items that are crystals (errors not counted)
    molecules: int = ABSENT  # a count of the items that are molecules (errors not counted)
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class RateBound(Section):
    """``summary.bound`` (one-sided lower) and ``summary.interval`` (two-sided), a task group's ``unique_bound``:
    the exact Clopper–Pearson bound of k successes in n (``stats.Bound.to_dict``), ``rate`` = k/n, ``lower`` and
    ``upper`` in [0, 1] at ``confidence``; ``text`` its sentence (crystal/molecule summaries). With no item the
    summary writes only ``text``."""

    SOURCE: ClassVar[str] = "summary.bound"
    KINDS: ClassVar[dict] = {"k": "count or null", "n": "count or null", "rate": "number or null",
                             "confidence": "number or null", "lower": "number or null", "upper": "number or null"}
    #: a count of successes: the correct items (a task group's ``unique_bound``: the unique items)
    k: int = ABSENT
    n: int = ABSENT  # a count of trials: the items scored
    rate: float = ABSENT  # k/n, a rate in [0, 1]
    #: the bound's confidence 1 - α, in (0, 1): the configuration's ``confidence`` (a task group: 0.95)
    confidence: float = ABSENT
    #: one-sided-lower (``summary.bound``, ``unique_bound``), two-sided (``summary.interval``) or
    #: one-sided-upper
    sided: str = ABSENT
    #: the lower end, a rate in [0, 1] (exact Clopper-Pearson, α in the tail, α/2 two-sided; 0 when k = 0)
    lower: float = ABSENT
    upper: float = ABSENT  # the upper end, a rate in [0, 1] (1 for a one-sided lower bound)
    method: str = ABSENT  # ``clopper-pearson``
    #: the bound in a sentence (``k/n = rate; exact one-sided 95% lower bound ...``); with no item certified
    #: the only key
    text: str = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class PhantomCensus(Section):
    """``summary.phantom_census``: items with phantoms and their total, items with missing atoms and their
    total, items whose oracle failed, unique, exact and certified items (``certify.summary``)."""

    SOURCE: ClassVar[str] = "summary.phantom_census"
    KINDS: ClassVar[dict] = {"items_with_phantoms": "count or null", "total_phantoms": "count or null",
                             "items_with_missing_atoms": "count or null", "total_missing_atoms": "count or null",
                             "items_oracle_failed": "count or null", "items_unique": "count or null",
                             "items_exact": "count or null", "items_certified": "count or null"}
    #: a count of the items (crystals and molecules; errors not counted) whose oracle accepted a phantom
    items_with_phantoms: int = ABSENT
    total_phantoms: int = ABSENT  # a count of phantoms, summed over the items
    #: a count of the items with at least one atom not recovered
    items_with_missing_atoms: int = ABSENT
    total_missing_atoms: int = ABSENT  # a count of atoms not recovered, summed over the items
    items_oracle_failed: int = ABSENT  # a count of the items whose oracle status is not ok
    items_unique: int = ABSENT  # a count of the unique items: oracle ok, Φ_δ empty and every atom recovered
    items_exact: int = ABSENT  # a count of the exact items: unique, with one accepted point per atom
    #: a count of the certified items: unique, d_min > 2δ and two views with independent directions
    items_certified: int = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class MoleculeSummary(_Counted):
    """``summary.molecules`` (``certify.molecule.molecule_summary``): the molecule items' number, their truth,
    per molecular level the correct count, R1 and its bound's sentence (``by_level``), handedness statuses and
    input point groups with their counts, and the point-group disagreements with pymatgen by id."""

    SOURCE: ClassVar[str] = "summary.molecules"
    KINDS: ClassVar[dict] = {"n": "count or null"}
    COUNTS: ClassVar[tuple] = ("by_level",)
    n: int = ABSENT  # a count of the molecule items (errors not counted)
    #: what the molecules are scored against, in words: each molecule itself (no dataset label)
    truth: str = ABSENT
    #: per molecular level: ``correct``, ``R1`` and its ``bound`` sentence (``LevelCount``)
    by_level: dict[str, LevelCount] = ABSENT
    #: per handedness status (determined, not_determined, achiral, undecided) the count of molecule items, by
    #: status
    handedness: dict = ABSENT
    #: per input point group (Schoenflies, at τ) the count of molecule items, most frequent first
    input_point_groups: dict = ABSENT
    #: every molecule whose pymatgen point group differs from ours: its ``id`` and its ``cross_check`` (ours,
    #: pymatgen, agree, tolerance_A)
    point_group_cross_check_disagreements: list = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class TableSummary(_Counted):
    """A streamed certificate's ``summary`` (``certify.stream.tally_summary``): the figures of a JSON
    certificate's summary (n, R1 with its bound and interval, by level and crystal system, the phantom census,
    failure reasons) and the counts of what the JSON summary lists by id (the item table holds those)."""

    SOURCE: ClassVar[str] = "summary"
    KINDS: ClassVar[dict] = {"kinds": Kinds, "bound": RateBound, "interval": RateBound,
                             "phantom_census": PhantomCensus, "n": "count or null", "n_errors": "count or null",
                             "correct": "count or null", "R1": "number or null", "n_failures": "count or null",
                             "n_label_mismatches": "count or null", "n_cross_check_disagreements": "count or null",
                             "n_symmetry_raised": "count or null"}
    COUNTS: ClassVar[tuple] = ("by_level", "by_crystal_system")
    #: a count of the items scored: the crystals (the molecules when the run has none), errors not counted
    n: int = ABSENT
    n_errors: int = ABSENT  # a count of the items that could not be read or certified
    kinds: Kinds = ABSENT  # how many certified items are crystals and how many molecules (``Kinds``)
    #: the scored level: the configuration's ``score`` (crystal_system, point_group or space_group), or the
    #: molecule levels joined by ``+``
    score: str = ABSENT
    truth: str = ABSENT  # what R1 compares with: dataset or rendered (crystals), input (molecules)
    correct: int = ABSENT  # a count of the scored items correct at the scored level
    #: a rate in [0, 1]: ``correct`` / ``n`` (9 significant digits); null when n is 0
    R1: float | None = ABSENT  # noqa: N815 - the certificate's own key
    #: R1's exact one-sided Clopper-Pearson lower bound at the configuration's confidence (``RateBound``)
    bound: RateBound = ABSENT
    #: R1's exact two-sided Clopper-Pearson interval at the configuration's confidence (``RateBound``)
    interval: RateBound = ABSENT
    #: per level (crystal_system, point_group, space_group; or the molecule levels): ``correct`` and ``R1``
    #: (``LevelCount``)
    by_level: dict[str, LevelCount] = ABSENT
    #: per crystal system of the crystal items (in crystal-system order, others last): ``n`` and ``correct``
    #: (``LevelCount``)
    by_crystal_system: dict[str, LevelCount] = ABSENT
    #: phantoms, missing atoms, oracle failures, unique, exact and certified items (``PhantomCensus``)
    phantom_census: PhantomCensus = ABSENT
    #: per reason (in the evaluator's reason order) the count of incorrect items that give it
    failure_reasons: dict = ABSENT
    n_failures: int = ABSENT  # a count of the incorrect items (crystals and molecules)
    #: a count of the items whose dataset label differs from the rendered cell's at some level
    n_label_mismatches: int = ABSENT
    #: a count of the items where spglib and moyopy disagree on a cell (input, rendered or reconstructed)
    n_cross_check_disagreements: int = ABSENT
    #: a count of the items whose standardisation gave another space group than the input's
    n_symmetry_raised: int = ABSENT
    #: where the lists by id (failures, label mismatches, disagreements, raised symmetry, errors) are: the
    #: item table's folder, in words
    lists: str = ABSENT
    extra: Mapping = field(default_factory=dict)


# ---------------------------------------------------------------------- transformation tasks
@dataclass(frozen=True)
class MeanInterval(Section):
    """A task group's mean ceiling with its bootstrap 95 % percentile interval (``lo95``, ``hi95``), in [0, 1]."""

    SOURCE: ClassVar[str] = "summary.all.exact_ceiling"
    KINDS: ClassVar[dict] = {"mean": "number or null", "lo95": "number or null", "hi95": "number or null"}
    mean: float = ABSENT  # the mean of the group's item ceilings, in [0, 1]
    #: the 2.5th percentile of 2000 bootstrap means over the group's items (seeded with the export's seed),
    #: in [0, 1]
    lo95: float = ABSENT
    hi95: float = ABSENT  # the 97.5th percentile of the same bootstrap means, in [0, 1]
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class TaskGroup(Section):
    """One group of a task certificate's summary (``tasks.ceiling.summarise``: ``all`` or one axis): its items,
    how many are unique with the exact lower bound of that share, the exact and partial (MiSI) mean ceilings,
    handedness' ceiling and one-view-witness share, the explanations with their counts; ``all`` lists the
    structures ``excluded``."""

    SOURCE: ClassVar[str] = "summary.all"
    KINDS: ClassVar[dict] = {"unique_bound": RateBound, "exact_ceiling": MeanInterval,
                             "partial_ceiling": MeanInterval, "handedness_ceiling": MeanInterval, "n": "count or null",
                             "unique": "count or null", "one_view_witness_share": "number or null"}
    n: int = ABSENT  # a count of the group's items
    unique: int = ABSENT  # a count of the items whose consistent answer set is the truth alone
    #: the exact one-sided 95 % Clopper-Pearson lower bound of ``unique`` / ``n`` (``RateBound``, no
    #: ``text``)
    unique_bound: RateBound = ABSENT
    #: the mean over items of 1 / |consistent answers| (the best expected exact-match score) with its
    #: bootstrap interval
    exact_ceiling: MeanInterval = ABSENT
    #: the mean over items of the best expected MiSI partial credit over the consistent answers, with its
    #: bootstrap interval
    partial_ceiling: MeanInterval = ABSENT
    #: handedness items: the mean over items of 1 / (the handednesses among the consistent answers: 1 or 2),
    #: with its bootstrap interval
    handedness_ceiling: MeanInterval = ABSENT
    #: handedness items: the share in [0, 1] of items whose after view is also the view of the mirror image
    #: (the after view alone cannot tell)
    one_view_witness_share: float = ABSENT
    #: per reason (same motion, view-axis motion, symmetry, depth-sign aliasing, clipped, other) the count of
    #: consistent answers other than the truth it explains
    explanations: dict = ABSENT
    #: ``all`` only: the structures left out of every denominator (handedness with ``chiral_only``: the
    #: achiral ones), each with structure_id, point_group, tolerance_angstrom and reason
    excluded: list = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class _Groups(Section):
    """A summary of named groups: the named fields typed (``KINDS``), every other key a group of the same kind
    (``GROUP``; kept as written in ``extra``, checked when the summary is made)."""

    GROUP: ClassVar[type] = Section

    def __post_init__(self) -> None:
        super().__post_init__()
        for k, v in self.extra.items():  # each an object (not null), checked here, typed by groups()
            if not isinstance(v, self.GROUP):
                self.GROUP.from_dict(v, f"{self.SOURCE}.{k}")

    def groups(self) -> dict:
        """Every group by name (the named fields first, then the others in their order), typed."""
        named = {k: getattr(self, k) for k in self.KINDS if getattr(self, k) is not ABSENT}
        return {**named, **{k: typed_section(self.GROUP, v, f"{self.SOURCE}.{k}") for k, v in self.extra.items()}}


@dataclass(frozen=True)
class TaskSummary(_Groups):
    """A task certificate's ``summary``: the group ``all`` and one group per axis (``axis y``, ``axis x+y``, ...,
    in ``extra``: :meth:`groups` types them all)."""

    SOURCE: ClassVar[str] = "summary"
    KINDS: ClassVar[dict] = {"all": TaskGroup}
    GROUP: ClassVar[type] = TaskGroup
    #: the group of every item (``TaskGroup``); the per-axis groups (``axis y``, ...) are kept in ``extra``
    all: TaskGroup = ABSENT  # noqa: A003 - the certificate's own key
    extra: Mapping = field(default_factory=dict)


# ---------------------------------------------------------------------- interactions
@dataclass(frozen=True)
class MeanRange(Section):
    """An interaction group's mean ceiling (ideal or as rendered) with its bootstrap 95 % percentile interval
    (``lo``, ``hi``), in [0, 1]."""

    SOURCE: ClassVar[str] = "summary.all.rendered"
    KINDS: ClassVar[dict] = {"mean": "number or null", "lo": "number or null", "hi": "number or null"}
    mean: float = ABSENT  # the mean of the group's item ceilings, in [0, 1] (6 decimals)
    #: the 2.5th percentile of ``n_boot`` bootstrap means over the group's items (seeded with the export's
    #: seed), in [0, 1] (6 decimals)
    lo: float = ABSENT
    hi: float = ABSENT  # the 97.5th percentile of the same bootstrap means, in [0, 1] (6 decimals)
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class InteractionGroup(Section):
    """One group of an interaction certificate's summary (``interaction_export.summarise``): its items and the
    mean ceiling under ideal observations and as rendered (each absent for an empty group)."""

    SOURCE: ClassVar[str] = "summary.all"
    KINDS: ClassVar[dict] = {"ideal": MeanRange, "rendered": MeanRange, "n": "count or null"}
    n: int = ABSENT  # a count of the group's items
    #: the mean ceiling under ideal observations (exact projections, every label legible) with its interval
    #: (``MeanRange``)
    ideal: MeanRange = ABSENT
    #: the mean ceiling as rendered (atom-ID buffers, legibility measured) with its interval (``MeanRange``)
    rendered: MeanRange = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class InteractionSummary(_Groups):
    """An interaction certificate's ``summary``: the groups ``all``, ``positive`` and ``negative`` (those with
    items) and one per number of bonds (``bonds=0``, ..., ``bonds=3+``, in ``extra``: :meth:`groups` types them
    all)."""

    SOURCE: ClassVar[str] = "summary"
    KINDS: ClassVar[dict] = {"all": InteractionGroup, "positive": InteractionGroup, "negative": InteractionGroup}
    GROUP: ClassVar[type] = InteractionGroup
    #: the group of every item (``InteractionGroup``); the groups by number of bonds (``bonds=0``, ...,
    #: ``bonds=3+``) are kept in ``extra``
    all: InteractionGroup = ABSENT  # noqa: A003 - the certificate's own key
    #: the group of the positive items (a true bond to name; written when it has items)
    positive: InteractionGroup = ABSENT
    #: the group of the negative items (no true bond; written when it has items)
    negative: InteractionGroup = ABSENT
    extra: Mapping = field(default_factory=dict)
