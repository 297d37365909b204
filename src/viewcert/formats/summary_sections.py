"""The typed sections of a certificate's ``summary``: what a crystal/molecule summary holds (``kinds``, the exact
Clopper–Pearson ``bound`` and ``interval``, the ``phantom_census``, the molecular summary ``molecules``), the
streamed certificate's summary (``certify.stream``: counts instead of lists), and the per-group summaries of a
transformation-task and an interaction certificate (``all`` and per axis / per positive, negative and number of
bonds). Counts are item counts; rates and ceilings are in [0, 1]; no length or angle is held here.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from viewcert.formats.model import Count, List, Number, Object, Record, Text

__all__ = ["InteractionGroup", "InteractionSummary", "Kinds", "LevelCount", "MeanInterval", "MeanRange",
           "MoleculeSummary", "PhantomCensus", "RateBound", "TableSummary", "TaskGroup", "TaskSummary"]


class _Groups(Record):
    """A summary of named groups: the named fields, and every other key a group of the same kind (its extras,
    typed as the group: ``__pydantic_extra__``)."""

    def groups(self) -> dict[str, Any]:
        """Every group by name (the named fields first, then the others in their order), typed.

        Returns
        -------
        dict
            Group name -> its group record.
        """
        named = {k: getattr(self, k) for k in type(self).model_fields if k in self.model_fields_set
                 and getattr(self, k) is not None}
        return {**named, **(self.model_extra or {})}


class LevelCount(Record):
    """One entry of the counts keyed by data: ``summary.by_level`` (``correct``, ``R1``), ``by_crystal_system``
    (``n``, ``correct``), ``molecules.by_level`` (``correct``, ``R1`` and its ``bound`` sentence)."""

    SOURCE: ClassVar[str] = "summary.by_level"
    n: Count | None = Field(None, description=(
        "``by_crystal_system``: a count of the crystal items of that system (the dataset's label, else the "
        "rendered cell's; ``unknown`` when neither has one)"))
    correct: Count | None = Field(None, description=(
        "a count of the items correct at that level (``by_level``), or of that system's correct items "
        "(``by_crystal_system``)"))
    R1: Number | None = Field(None, description=(
        "a rate in [0, 1]: ``correct`` / the summary's n at that level (9 significant digits; "
        "``molecules.by_level``: rounded to 6 decimals); null when n is 0"))
    bound: Text | None = Field(None, description=(
        "``molecules.by_level``: the sentence of the exact one-sided Clopper-Pearson lower bound of R1 at the "
        "configuration's confidence"))


class Kinds(Record):
    """``summary.kinds``: how many certified items are crystals and how many molecules (errors not counted)."""

    SOURCE: ClassVar[str] = "summary.kinds"
    crystals: Count | None = Field(None, description=(
        "a count of the items that are crystals (errors not counted)"))
    molecules: Count | None = Field(None, description=(
        "a count of the items that are molecules (errors not counted)"))


class RateBound(Record):
    """``summary.bound`` (one-sided lower) and ``summary.interval`` (two-sided), a task group's ``unique_bound``:
    the exact Clopper–Pearson bound of k successes in n (``stats.Bound.to_dict``), ``rate`` = k/n, ``lower`` and
    ``upper`` in [0, 1] at ``confidence``; ``text`` its sentence (crystal/molecule summaries). With no item the
    summary writes only ``text``."""

    SOURCE: ClassVar[str] = "summary.bound"
    k: Count | None = Field(None, description=(
        "a count of successes: the correct items (a task group's ``unique_bound``: the unique items)"))
    n: Count | None = Field(None, description="a count of trials: the items scored")
    rate: Number | None = Field(None, description="k/n, a rate in [0, 1]")
    confidence: Number | None = Field(None, description=(
        "the bound's confidence 1 - α, in (0, 1): the configuration's ``confidence`` (a task group: 0.95)"))
    sided: Text | None = Field(None, description=(
        "one-sided-lower (``summary.bound``, ``unique_bound``), two-sided (``summary.interval``) or "
        "one-sided-upper"))
    lower: Number | None = Field(None, description=(
        "the lower end, a rate in [0, 1] (exact Clopper-Pearson, α in the tail, α/2 two-sided; 0 when k = 0)"))
    upper: Number | None = Field(None, description=(
        "the upper end, a rate in [0, 1] (1 for a one-sided lower bound)"))
    method: Text | None = Field(None, description="``clopper-pearson``")
    text: Text | None = Field(None, description=(
        "the bound in a sentence (``k/n = rate; exact one-sided 95% lower bound ...``); with no item "
        "certified the only key"))


class PhantomCensus(Record):
    """``summary.phantom_census``: items with phantoms and their total, items with missing atoms and their
    total, items whose oracle failed, unique, exact and certified items (``certify.summary``)."""

    SOURCE: ClassVar[str] = "summary.phantom_census"
    items_with_phantoms: Count | None = Field(None, description=(
        "a count of the items (crystals and molecules; errors not counted) whose oracle accepted a phantom"))
    total_phantoms: Count | None = Field(None, description="a count of phantoms, summed over the items")
    items_with_missing_atoms: Count | None = Field(None, description=(
        "a count of the items with at least one atom not recovered"))
    total_missing_atoms: Count | None = Field(None, description=(
        "a count of atoms not recovered, summed over the items"))
    items_oracle_failed: Count | None = Field(None, description=(
        "a count of the items whose oracle status is not ok"))
    items_unique: Count | None = Field(None, description=(
        "a count of the unique items: oracle ok, Φ_δ empty and every atom recovered"))
    items_exact: Count | None = Field(None, description=(
        "a count of the exact items: unique, with one accepted point per atom"))
    items_certified: Count | None = Field(None, description=(
        "a count of the certified items: unique, d_min > 2δ and two views with independent directions"))


class MoleculeSummary(Record):
    """``summary.molecules`` (``certify.molecule.molecule_summary``): the molecule items' number, their truth,
    per molecular level the correct count, R1 and its bound's sentence (``by_level``), handedness statuses and
    input point groups with their counts, and the point-group disagreements with pymatgen by id."""

    SOURCE: ClassVar[str] = "summary.molecules"
    n: Count | None = Field(None, description="a count of the molecule items (errors not counted)")
    truth: Text | None = Field(None, description=(
        "what the molecules are scored against, in words: each molecule itself (no dataset label)"))
    by_level: dict[str, LevelCount] | None = Field(None, description=(
        "per molecular level: ``correct``, ``R1`` and its ``bound`` sentence (``LevelCount``)"))
    handedness: Object | None = Field(None, description=(
        "per handedness status (determined, not_determined, achiral, undecided) the count of molecule items, "
        "by status"))
    input_point_groups: Object | None = Field(None, description=(
        "per input point group (Schoenflies, at τ) the count of molecule items, most frequent first"))
    point_group_cross_check_disagreements: List | None = Field(None, description=(
        "every molecule whose pymatgen point group differs from ours: its ``id`` and its ``cross_check`` "
        "(ours, pymatgen, agree, tolerance_A)"))


class TableSummary(Record):
    """A streamed certificate's ``summary`` (``certify.stream.tally_summary``): the figures of a JSON
    certificate's summary (n, R1 with its bound and interval, by level and crystal system, the phantom census,
    failure reasons) and the counts of what the JSON summary lists by id (the item table holds those)."""

    SOURCE: ClassVar[str] = "summary"
    n: Count | None = Field(None, description=(
        "a count of the items scored: the crystals (the molecules when the run has none), errors not counted"))
    n_errors: Count | None = Field(None, description=(
        "a count of the items that could not be read or certified"))
    kinds: Kinds | None = Field(None, description=(
        "how many certified items are crystals and how many molecules (``Kinds``)"))
    score: Text | None = Field(None, description=(
        "the scored level: the configuration's ``score`` (crystal_system, point_group or space_group), or the "
        "molecule levels joined by ``+``"))
    truth: Text | None = Field(None, description=(
        "what R1 compares with: dataset or rendered (crystals), input (molecules)"))
    correct: Count | None = Field(None, description="a count of the scored items correct at the scored level")
    R1: Number | None = Field(None, description=(
        "a rate in [0, 1]: ``correct`` / ``n`` (9 significant digits); null when n is 0"))
    bound: RateBound | None = Field(None, description=(
        "R1's exact one-sided Clopper-Pearson lower bound at the configuration's confidence (``RateBound``)"))
    interval: RateBound | None = Field(None, description=(
        "R1's exact two-sided Clopper-Pearson interval at the configuration's confidence (``RateBound``)"))
    by_level: dict[str, LevelCount] | None = Field(None, description=(
        "per level (crystal_system, point_group, space_group; or the molecule levels): ``correct`` and ``R1`` "
        "(``LevelCount``)"))
    by_crystal_system: dict[str, LevelCount] | None = Field(None, description=(
        "per crystal system of the crystal items (in crystal-system order, others last): ``n`` and "
        "``correct`` (``LevelCount``)"))
    phantom_census: PhantomCensus | None = Field(None, description=(
        "phantoms, missing atoms, oracle failures, unique, exact and certified items (``PhantomCensus``)"))
    failure_reasons: Object | None = Field(None, description=(
        "per reason (in the evaluator's reason order) the count of incorrect items that give it"))
    n_failures: Count | None = Field(None, description=(
        "a count of the incorrect items (crystals and molecules)"))
    n_label_mismatches: Count | None = Field(None, description=(
        "a count of the items whose dataset label differs from the rendered cell's at some level"))
    n_cross_check_disagreements: Count | None = Field(None, description=(
        "a count of the items where spglib and moyopy disagree on a cell (input, rendered or reconstructed)"))
    n_symmetry_raised: Count | None = Field(None, description=(
        "a count of the items whose standardisation gave another space group than the input's"))
    lists: Text | None = Field(None, description=(
        "where the lists by id (failures, label mismatches, disagreements, raised symmetry, errors) are: the "
        "item table's folder, in words"))


class MeanInterval(Record):
    """A task group's mean ceiling with its bootstrap 95 % percentile interval (``lo95``, ``hi95``), in [0, 1]."""

    SOURCE: ClassVar[str] = "summary.all.exact_ceiling"
    mean: Number | None = Field(None, description="the mean of the group's item ceilings, in [0, 1]")
    lo95: Number | None = Field(None, description=(
        "the 2.5th percentile of 2000 bootstrap means over the group's items (seeded with the export's seed), "
        "in [0, 1]"))
    hi95: Number | None = Field(None, description=(
        "the 97.5th percentile of the same bootstrap means, in [0, 1]"))


class TaskGroup(Record):
    """One group of a task certificate's summary (``tasks.ceiling.summarise``: ``all`` or one axis): its items,
    how many are unique with the exact lower bound of that share, the exact and partial (MiSI) mean ceilings,
    handedness' ceiling and one-view-witness share, the explanations with their counts; ``all`` lists the
    structures ``excluded``."""

    SOURCE: ClassVar[str] = "summary.all"
    n: Count | None = Field(None, description="a count of the group's items")
    unique: Count | None = Field(None, description=(
        "a count of the items whose consistent answer set is the truth alone"))
    unique_bound: RateBound | None = Field(None, description=(
        "the exact one-sided 95 % Clopper-Pearson lower bound of ``unique`` / ``n`` (``RateBound``, no "
        "``text``)"))
    exact_ceiling: MeanInterval | None = Field(None, description=(
        "the mean over items of 1 / |consistent answers| (the best expected exact-match score) with its "
        "bootstrap interval"))
    partial_ceiling: MeanInterval | None = Field(None, description=(
        "the mean over items of the best expected MiSI partial credit over the consistent answers, with its "
        "bootstrap interval"))
    handedness_ceiling: MeanInterval | None = Field(None, description=(
        "handedness items: the mean over items of 1 / (the handednesses among the consistent answers: 1 or "
        "2), with its bootstrap interval"))
    one_view_witness_share: Number | None = Field(None, description=(
        "handedness items: the share in [0, 1] of items whose after view is also the view of the mirror image "
        "(the after view alone cannot tell)"))
    explanations: Object | None = Field(None, description=(
        "per reason (same motion, view-axis motion, symmetry, depth-sign aliasing, clipped, other) the count "
        "of consistent answers other than the truth it explains"))
    excluded: List | None = Field(None, description=(
        "``all`` only: the structures left out of every denominator (handedness with ``chiral_only``: the "
        "achiral ones), each with structure_id, point_group, tolerance_angstrom and reason"))


class TaskSummary(_Groups):
    """A task certificate's ``summary``: the group ``all`` and one group per axis (``axis y``, ``axis x+y``, ...,
    in ``extra``: :meth:`groups` types them all)."""

    SOURCE: ClassVar[str] = "summary"
    __pydantic_extra__: dict[str, TaskGroup] = Field(init=False)  # the per-axis groups, typed
    all: TaskGroup | None = Field(None, description=(
        "the group of every item (``TaskGroup``); the per-axis groups (``axis y``, ...) are kept in ``extra``"))


class MeanRange(Record):
    """An interaction group's mean ceiling (ideal or as rendered) with its bootstrap 95 % percentile interval
    (``lo``, ``hi``), in [0, 1]."""

    SOURCE: ClassVar[str] = "summary.all.rendered"
    mean: Number | None = Field(None, description=(
        "the mean of the group's item ceilings, in [0, 1] (6 decimals)"))
    lo: Number | None = Field(None, description=(
        "the 2.5th percentile of ``n_boot`` bootstrap means over the group's items (seeded with the export's "
        "seed), in [0, 1] (6 decimals)"))
    hi: Number | None = Field(None, description=(
        "the 97.5th percentile of the same bootstrap means, in [0, 1] (6 decimals)"))


class InteractionGroup(Record):
    """One group of an interaction certificate's summary (``interaction_export.summarise``): its items and the
    mean ceiling under ideal observations and as rendered (each absent for an empty group)."""

    SOURCE: ClassVar[str] = "summary.all"
    n: Count | None = Field(None, description="a count of the group's items")
    ideal: MeanRange | None = Field(None, description=(
        "the mean ceiling under ideal observations (exact projections, every label legible) with its interval "
        "(``MeanRange``)"))
    rendered: MeanRange | None = Field(None, description=(
        "the mean ceiling as rendered (atom-ID buffers, legibility measured) with its interval "
        "(``MeanRange``)"))


class InteractionSummary(_Groups):
    """An interaction certificate's ``summary``: the groups ``all``, ``positive`` and ``negative`` (those with
    items) and one per number of bonds (``bonds=0``, ..., ``bonds=3+``, in ``extra``: :meth:`groups` types them
    all)."""

    SOURCE: ClassVar[str] = "summary"
    __pydantic_extra__: dict[str, InteractionGroup] = Field(init=False)  # the groups by number of bonds, typed
    all: InteractionGroup | None = Field(None, description=(
        "the group of every item (``InteractionGroup``); the groups by number of bonds (``bonds=0``, ..., "
        "``bonds=3+``) are kept in ``extra``"))
    positive: InteractionGroup | None = Field(None, description=(
        "the group of the positive items (a true bond to name; written when it has items)"))
    negative: InteractionGroup | None = Field(None, description=(
        "the group of the negative items (no true bond; written when it has items)"))
