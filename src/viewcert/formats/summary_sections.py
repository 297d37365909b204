"""The typed sections of a certificate's ``summary`` (issue 41 item 1): what a crystal/molecule summary holds
(``kinds``, the exact Clopper–Pearson ``bound`` and ``interval``, the ``phantom_census``, the molecular summary
``molecules``), the streamed certificate's summary (``certify.stream``: counts instead of lists), and the per-group
summaries of a transformation-task and an interaction certificate (``all`` and per axis / per positive, negative
and number of bonds). Counts are item counts; rates and ceilings are in [0, 1]; no length or angle is held here.

Each section keeps the exact round trip of :class:`~viewcert.formats.fields.Section` (``from_dict(d).to_dict() ==
d``); a received section that is not an object, or a count or rate of the wrong kind, is a one-line
:class:`~viewcert.errors.InputError` naming where (``summary.phantom_census.items_unique``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from viewcert.errors import InputError
from viewcert.formats.fields import ABSENT, Section, record_fields, type_sections, typed_section

__all__ = ["InteractionGroup", "InteractionSummary", "Kinds", "LevelCount", "MeanInterval", "MeanRange",
           "MoleculeSummary", "PhantomCensus", "RateBound", "TableSummary", "TaskGroup", "TaskSummary", "counts_dict",
           "typed_counts"]


def _kind_ok(v: Any, kind: str) -> bool:
    if v is ABSENT or v is None:
        return True
    if isinstance(v, bool):
        return False
    return isinstance(v, int) if kind == "int" else isinstance(v, int | float)


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
    if not isinstance(value, Mapping):
        raise InputError(f"{source} must be an object, got {type(value).__name__}", field=source)
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
class _Typed(Section):
    """A section with nested sections (``NESTED``: field -> its section class), counts keyed by data
    (``COUNTS``: :func:`typed_counts`) and values code computes with (``INTS``: counts; ``NUMBERS``: rates and
    bounds), checked as received."""

    NESTED: ClassVar[dict] = {}
    COUNTS: ClassVar[tuple] = ()
    INTS: ClassVar[tuple] = ()
    NUMBERS: ClassVar[tuple] = ()

    @classmethod
    def from_dict(cls, d: Mapping, source: str | None = None):
        """The typed section of the JSON object ``d`` (its nested sections typed, its counts and rates checked);
        InputError naming ``source`` (default ``SOURCE``) and the key otherwise."""
        where = source or cls.SOURCE
        kw = record_fields(cls, d, where)
        for name, sub in cls.NESTED.items():
            if name in kw:
                kw[name] = typed_section(sub, kw[name], f"{where}.{name}")
        for name in cls.COUNTS:
            if name in kw:
                kw[name] = typed_counts(kw[name], f"{where}.{name}")
        for names, kind, what in ((cls.INTS, "int", "a count"), (cls.NUMBERS, "number", "a number")):
            for name in names:
                if not _kind_ok(kw.get(name, ABSENT), kind):
                    raise InputError(f"{where}.{name} must be {what}, got {type(kw[name]).__name__}",
                                     field=f"{where}.{name}")
        return cls(**kw)

    def __post_init__(self) -> None:  # a producer may hand the nested sections as dicts
        type_sections(self, self.NESTED, self.SOURCE)
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
class LevelCount(_Typed):
    """One entry of the counts keyed by data: ``summary.by_level`` (``correct``, ``R1``), ``by_crystal_system``
    (``n``, ``correct``), ``molecules.by_level`` (``correct``, ``R1`` and its ``bound`` sentence)."""

    SOURCE: ClassVar[str] = "summary.by_level"
    INTS: ClassVar[tuple] = ("n", "correct")
    NUMBERS: ClassVar[tuple] = ("R1",)
    n: int = ABSENT
    correct: int = ABSENT
    R1: float | None = ABSENT  # noqa: N815 - the certificate's own key
    bound: str = ABSENT
    extra: Mapping = field(default_factory=dict)


# ---------------------------------------------------------------------- crystal and molecule certificates
@dataclass(frozen=True)
class Kinds(_Typed):
    """``summary.kinds``: how many certified items are crystals and how many molecules (errors not counted)."""

    SOURCE: ClassVar[str] = "summary.kinds"
    INTS: ClassVar[tuple] = ("crystals", "molecules")
    crystals: int = ABSENT
    molecules: int = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class RateBound(_Typed):
    """``summary.bound`` (one-sided lower) and ``summary.interval`` (two-sided), a task group's ``unique_bound``:
    the exact Clopper–Pearson bound of k successes in n (``stats.Bound.to_dict``), ``rate`` = k/n, ``lower`` and
    ``upper`` in [0, 1] at ``confidence``; ``text`` its sentence (crystal/molecule summaries). With no item the
    summary writes only ``text``."""

    SOURCE: ClassVar[str] = "summary.bound"
    INTS: ClassVar[tuple] = ("k", "n")
    NUMBERS: ClassVar[tuple] = ("rate", "confidence", "lower", "upper")
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
class PhantomCensus(_Typed):
    """``summary.phantom_census``: items with phantoms and their total, items with missing atoms and their
    total, items whose oracle failed, unique, exact and certified items (``certify.summary``)."""

    SOURCE: ClassVar[str] = "summary.phantom_census"
    INTS: ClassVar[tuple] = ("items_with_phantoms", "total_phantoms", "items_with_missing_atoms",
                             "total_missing_atoms", "items_oracle_failed", "items_unique", "items_exact",
                             "items_certified")
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
class MoleculeSummary(_Typed):
    """``summary.molecules`` (``certify.molecule.molecule_summary``): the molecule items' number, their truth,
    per molecular level the correct count, R1 and its bound's sentence (``by_level``), handedness statuses and
    input point groups with their counts, and the point-group disagreements with pymatgen by id."""

    SOURCE: ClassVar[str] = "summary.molecules"
    COUNTS: ClassVar[tuple] = ("by_level",)
    INTS: ClassVar[tuple] = ("n",)
    n: int = ABSENT
    truth: str = ABSENT
    by_level: dict[str, LevelCount] = ABSENT
    handedness: dict = ABSENT
    input_point_groups: dict = ABSENT
    point_group_cross_check_disagreements: list = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class TableSummary(_Typed):
    """A streamed certificate's ``summary`` (``certify.stream.tally_summary``): the figures of a JSON
    certificate's summary (n, R1 with its bound and interval, by level and crystal system, the phantom census,
    failure reasons) and the counts of what the JSON summary lists by id (the item table holds those)."""

    SOURCE: ClassVar[str] = "summary"
    NESTED: ClassVar[dict] = {"kinds": Kinds, "bound": RateBound, "interval": RateBound,
                              "phantom_census": PhantomCensus}
    COUNTS: ClassVar[tuple] = ("by_level", "by_crystal_system")
    INTS: ClassVar[tuple] = ("n", "n_errors", "correct", "n_failures", "n_label_mismatches",
                             "n_cross_check_disagreements", "n_symmetry_raised")
    NUMBERS: ClassVar[tuple] = ("R1",)
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
class MeanInterval(_Typed):
    """A task group's mean ceiling with its bootstrap 95 % percentile interval (``lo95``, ``hi95``), in [0, 1]."""

    SOURCE: ClassVar[str] = "summary.all.exact_ceiling"
    NUMBERS: ClassVar[tuple] = ("mean", "lo95", "hi95")
    mean: float = ABSENT
    lo95: float = ABSENT
    hi95: float = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class TaskGroup(_Typed):
    """One group of a task certificate's summary (``tasks.ceiling.summarise``: ``all`` or one axis): its items,
    how many are unique with the exact lower bound of that share, the exact and partial (MiSI) mean ceilings,
    handedness' ceiling and one-view-witness share, the explanations with their counts; ``all`` lists the
    structures ``excluded``."""

    SOURCE: ClassVar[str] = "summary.all"
    NESTED: ClassVar[dict] = {"unique_bound": RateBound, "exact_ceiling": MeanInterval,
                              "partial_ceiling": MeanInterval, "handedness_ceiling": MeanInterval}
    INTS: ClassVar[tuple] = ("n", "unique")
    NUMBERS: ClassVar[tuple] = ("one_view_witness_share",)
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
class _Groups(_Typed):
    """A summary of named groups: the named fields typed, every other key a group of the same kind (kept as
    written in ``extra``, checked as received)."""

    GROUP: ClassVar[type] = Section

    @classmethod
    def from_dict(cls, d: Mapping, source: str | None = None):
        out = super().from_dict(d, source)
        where = source or cls.SOURCE
        for k, v in out.extra.items():
            cls.GROUP.from_dict(v, f"{where}.{k}")
        return out

    def groups(self) -> dict:
        """Every group by name (the named fields first, then the others in their order), typed."""
        named = {k: getattr(self, k) for k in self.NESTED if getattr(self, k) is not ABSENT}
        return {**named, **{k: typed_section(self.GROUP, v, f"{self.SOURCE}.{k}") for k, v in self.extra.items()}}


@dataclass(frozen=True)
class TaskSummary(_Groups):
    """A task certificate's ``summary``: the group ``all`` and one group per axis (``axis y``, ``axis x+y``, ...,
    in ``extra``: :meth:`groups` types them all)."""

    SOURCE: ClassVar[str] = "summary"
    NESTED: ClassVar[dict] = {"all": TaskGroup}
    GROUP: ClassVar[type] = TaskGroup
    all: TaskGroup = ABSENT  # noqa: A003 - the certificate's own key
    extra: Mapping = field(default_factory=dict)


# ---------------------------------------------------------------------- interactions
@dataclass(frozen=True)
class MeanRange(_Typed):
    """An interaction group's mean ceiling (ideal or as rendered) with its bootstrap 95 % percentile interval
    (``lo``, ``hi``), in [0, 1]."""

    SOURCE: ClassVar[str] = "summary.all.rendered"
    NUMBERS: ClassVar[tuple] = ("mean", "lo", "hi")
    mean: float = ABSENT
    lo: float = ABSENT
    hi: float = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class InteractionGroup(_Typed):
    """One group of an interaction certificate's summary (``interaction_export.summarise``): its items and the
    mean ceiling under ideal observations and as rendered (each absent for an empty group)."""

    SOURCE: ClassVar[str] = "summary.all"
    NESTED: ClassVar[dict] = {"ideal": MeanRange, "rendered": MeanRange}
    INTS: ClassVar[tuple] = ("n",)
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
    NESTED: ClassVar[dict] = {"all": InteractionGroup, "positive": InteractionGroup, "negative": InteractionGroup}
    GROUP: ClassVar[type] = InteractionGroup
    all: InteractionGroup = ABSENT  # noqa: A003 - the certificate's own key
    positive: InteractionGroup = ABSENT
    negative: InteractionGroup = ABSENT
    extra: Mapping = field(default_factory=dict)
