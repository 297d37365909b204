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
           "typed_counts"]


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


@dataclass(frozen=True)
class _Counted(Section):
    """A section with counts keyed by data (``COUNTS``: field names, each typed by :func:`typed_counts`)."""

    COUNTS: ClassVar[tuple] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in self.COUNTS:
            object.__setattr__(self, name, typed_counts(getattr(self, name), f"{self.SOURCE}.{name}"))

    def to_dict(self) -> dict:
        """The JSON object: ``from_dict(d).to_dict() == d`` (counts keyed by data written back too)."""
        out = super().to_dict()
        for name in self.COUNTS:
            if name in out:
                out[name] = counts_dict(out[name])
        return out


@dataclass(frozen=True)
class LevelCount(Section):
    """One entry of the counts keyed by data: ``summary.by_level`` (``correct``, ``R1``), ``by_crystal_system``
    (``n``, ``correct``), ``molecules.by_level`` (``correct``, ``R1`` and its ``bound`` sentence)."""

    SOURCE: ClassVar[str] = "summary.by_level"
    KINDS: ClassVar[dict] = {"n": "count or null", "correct": "count or null", "R1": "number or null"}
    n: int = ABSENT
    correct: int = ABSENT
    R1: float | None = ABSENT  # noqa: N815 - the certificate's own key
    bound: str = ABSENT
    extra: Mapping = field(default_factory=dict)


# ---------------------------------------------------------------------- crystal and molecule certificates
@dataclass(frozen=True)
class Kinds(Section):
    """``summary.kinds``: how many certified items are crystals and how many molecules (errors not counted)."""

    SOURCE: ClassVar[str] = "summary.kinds"
    KINDS: ClassVar[dict] = {"crystals": "count or null", "molecules": "count or null"}
    crystals: int = ABSENT
    molecules: int = ABSENT
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
    k: int = ABSENT
    n: int = ABSENT
    rate: float = ABSENT
    confidence: float = ABSENT
    sided: str = ABSENT
    lower: float = ABSENT
    upper: float = ABSENT
    method: str = ABSENT
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
    items_with_phantoms: int = ABSENT
    total_phantoms: int = ABSENT
    items_with_missing_atoms: int = ABSENT
    total_missing_atoms: int = ABSENT
    items_oracle_failed: int = ABSENT
    items_unique: int = ABSENT
    items_exact: int = ABSENT
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
    n: int = ABSENT
    truth: str = ABSENT
    by_level: dict[str, LevelCount] = ABSENT
    handedness: dict = ABSENT
    input_point_groups: dict = ABSENT
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
    n: int = ABSENT
    n_errors: int = ABSENT
    kinds: Kinds = ABSENT
    score: str = ABSENT
    truth: str = ABSENT
    correct: int = ABSENT
    R1: float | None = ABSENT  # noqa: N815 - the certificate's own key
    bound: RateBound = ABSENT
    interval: RateBound = ABSENT
    by_level: dict[str, LevelCount] = ABSENT
    by_crystal_system: dict[str, LevelCount] = ABSENT
    phantom_census: PhantomCensus = ABSENT
    failure_reasons: dict = ABSENT
    n_failures: int = ABSENT
    n_label_mismatches: int = ABSENT
    n_cross_check_disagreements: int = ABSENT
    n_symmetry_raised: int = ABSENT
    lists: str = ABSENT
    extra: Mapping = field(default_factory=dict)


# ---------------------------------------------------------------------- transformation tasks
@dataclass(frozen=True)
class MeanInterval(Section):
    """A task group's mean ceiling with its bootstrap 95 % percentile interval (``lo95``, ``hi95``), in [0, 1]."""

    SOURCE: ClassVar[str] = "summary.all.exact_ceiling"
    KINDS: ClassVar[dict] = {"mean": "number or null", "lo95": "number or null", "hi95": "number or null"}
    mean: float = ABSENT
    lo95: float = ABSENT
    hi95: float = ABSENT
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
    n: int = ABSENT
    unique: int = ABSENT
    unique_bound: RateBound = ABSENT
    exact_ceiling: MeanInterval = ABSENT
    partial_ceiling: MeanInterval = ABSENT
    handedness_ceiling: MeanInterval = ABSENT
    one_view_witness_share: float = ABSENT
    explanations: dict = ABSENT
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
    all: TaskGroup = ABSENT  # noqa: A003 - the certificate's own key
    extra: Mapping = field(default_factory=dict)


# ---------------------------------------------------------------------- interactions
@dataclass(frozen=True)
class MeanRange(Section):
    """An interaction group's mean ceiling (ideal or as rendered) with its bootstrap 95 % percentile interval
    (``lo``, ``hi``), in [0, 1]."""

    SOURCE: ClassVar[str] = "summary.all.rendered"
    KINDS: ClassVar[dict] = {"mean": "number or null", "lo": "number or null", "hi": "number or null"}
    mean: float = ABSENT
    lo: float = ABSENT
    hi: float = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class InteractionGroup(Section):
    """One group of an interaction certificate's summary (``interaction_export.summarise``): its items and the
    mean ceiling under ideal observations and as rendered (each absent for an empty group)."""

    SOURCE: ClassVar[str] = "summary.all"
    KINDS: ClassVar[dict] = {"ideal": MeanRange, "rendered": MeanRange, "n": "count or null"}
    n: int = ABSENT
    ideal: MeanRange = ABSENT
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
    all: InteractionGroup = ABSENT  # noqa: A003 - the certificate's own key
    positive: InteractionGroup = ABSENT
    negative: InteractionGroup = ABSENT
    extra: Mapping = field(default_factory=dict)
