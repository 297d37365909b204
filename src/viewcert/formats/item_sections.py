"""The typed sections of an item record (issue 41 item 1): the JSON objects inside a crystal or molecule item
(``records.ItemOutcome``) and an interaction item (``records.InteractionItemRecord``) that code reads, each a
:class:`~viewcert.formats.fields.Section` whose fields are the keys the producers write.

- :class:`OracleReport`      ``items[].oracle``: the oracle's report (``certify.evaluate``): counts, distances in Å
- :class:`UniquenessMargin`  ``items[].uniqueness_margin``: δ* and its near-miss tuple, in Å (``oracle.margin``)
- :class:`SymmetryRaised`    ``items[].symmetry_raised``: the input's and the rendered cell's labels, the levels
                             that differ (``certify.evaluate.symmetry_raised``)
- :class:`MoleculeOutcome`   ``items[].molecule``: the molecular levels (``certify.molecule.molecule_outcome``),
                             with :class:`PointGroupOutcome` (and its pymatgen :class:`PointGroupCheck`) and
                             :class:`HandednessOutcome`; tolerances in Å
- :class:`ItemCeiling`       ``items[].ideal`` / ``items[].rendered`` of an interaction item: the ceiling in
                             [0, 1] and its accounting (``benchmark.interaction_export``, ``interactions.ceiling``)

A field a section did not write stays :data:`~viewcert.formats.fields.ABSENT`, ``None`` stays ``null`` and unknown
keys are kept in ``extra``, so ``from_dict(d).to_dict() == d``. What code relies on is declared in each
section's ``KINDS`` (:class:`~viewcert.formats.fields.Section`); a value of the wrong kind (a count that is not an
integer, a nested object that is not one) is a one-line :class:`InputError` naming the field
(``items[].oracle.n_phantoms``; a certificate's reader names the item: ``items[3].oracle.n_phantoms``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from viewcert.formats.fields import ABSENT, Section

__all__ = ["HandednessOutcome", "ItemCeiling", "MoleculeOutcome", "OracleReport", "PointGroupCheck",
           "PointGroupOutcome", "SymmetryRaised", "UniquenessMargin"]

@dataclass(frozen=True)
class OracleReport(Section):
    """``items[].oracle``: the oracle's report of one item (``certify.evaluate``): status (ok | failed ...) and
    why, the counts (points reconstructed, phantoms, missing and recovered atoms), the largest position error,
    the closest same-label distance and the separation margin (Å), whether the separation precondition held,
    and the oracle's warnings (a list of text, or null)."""

    SOURCE: ClassVar[str] = "items[].oracle"
    KINDS: ClassVar[dict] = {"status": "text or null", "n_points": "count or null", "n_phantoms": "count or null",
                             "n_missing": "count or null", "n_recovered": "count or null",
                             "max_position_error": "number or null", "min_same_label_distance": "number or null",
                             "margin": "number or null", "warnings": "list or null"}
    status: str = ABSENT
    reason: str | None = ABSENT
    n_points: int = ABSENT
    n_phantoms: int = ABSENT
    n_missing: int = ABSENT
    n_recovered: int = ABSENT
    max_position_error: float | None = ABSENT
    min_same_label_distance: float | None = ABSENT
    margin: float | None = ABSENT
    separation_ok: bool = ABSENT
    warnings: list | None = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class UniquenessMargin(Section):
    """``items[].uniqueness_margin`` (with ``CertifyConfig(margin=True)``; ``oracle.margin.Margin.record``): δ* (Å,
    null for ∞), what bounds it, the exact δ and the closest same-label distance d_min (Å), the near-miss tuple
    (one atom index per view), its label (atomic number) and least-squares point (Å); ``error`` (with δ* null)
    when the search did not run (perspective cameras, an unreadable cell)."""

    SOURCE: ClassVar[str] = "items[].uniqueness_margin"
    KINDS: ClassVar[dict] = {"delta_star": "number or null"}
    delta_star: float | None = ABSENT
    bound: str | None = ABSENT
    delta_exact: float | None = ABSENT
    d_min: float | None = ABSENT
    near_miss: list | None = ABSENT
    near_miss_label: int | None = ABSENT
    near_miss_point: list | None = ABSENT
    error: str = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class SymmetryRaised(Section):
    """``items[].symmetry_raised``: the standardisation gave another space group than the input's at τ
    (``certify.evaluate.symmetry_raised``): the input cell's label and the rendered cell's (each by level:
    crystal_system, point_group, space_group, ...), and the levels where they differ. The input's label is then
    the truth (``ItemOutcome.reference``)."""

    SOURCE: ClassVar[str] = "items[].symmetry_raised"
    KINDS: ClassVar[dict] = {"input": "object or null", "rendered": "object or null", "levels": "list or null"}
    input: dict = ABSENT
    rendered: dict = ABSENT
    levels: list = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class PointGroupCheck(Section):
    """``items[].molecule.point_group.cross_check``: pymatgen's point group of the input at τ (Å) against ours
    (``certify.molecule.PointGroupCheck``); ``pymatgen`` is ``"error: ..."`` when it failed."""

    SOURCE: ClassVar[str] = "items[].molecule.point_group.cross_check"
    ours: str = ABSENT
    pymatgen: str = ABSENT
    agree: bool = ABSENT
    tolerance_A: float = ABSENT  # noqa: N815 - the certificate's own key
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class PointGroupOutcome(Section):
    """``items[].molecule.point_group``: the Schoenflies point group of the input and of the reconstruction (null
    when the oracle failed) at the tolerance τ (``tolerance_A``, Å), whether the input's group closed, and
    pymatgen's cross-check (null unless asked)."""

    SOURCE: ClassVar[str] = "items[].molecule.point_group"
    KINDS: ClassVar[dict] = {"cross_check": PointGroupCheck}
    input: str = ABSENT
    reconstructed: str | None = ABSENT
    tolerance_A: float = ABSENT  # noqa: N815 - the certificate's own key
    input_closed: bool = ABSENT
    cross_check: PointGroupCheck | None = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class HandednessOutcome(Section):
    """``items[].molecule.handedness`` (``certify.molecule.Handedness``): status (determined | achiral |
    ambiguous ...) and why, whether the molecule is chiral, its point group at the tolerance (``tolerance_A``,
    Å), the witness and, per view, whether that view alone resolves the handedness."""

    SOURCE: ClassVar[str] = "items[].molecule.handedness"
    KINDS: ClassVar[dict] = {"status": "text or null"}
    status: str = ABSENT
    reason: str = ABSENT
    chiral: bool | None = ABSENT
    point_group: str | None = ABSENT
    tolerance_A: float = ABSENT  # noqa: N815 - the certificate's own key
    witness: str | None = ABSENT
    single_view_resolves: list = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class MoleculeOutcome(Section):
    """``items[].molecule``: the molecular levels of a molecule item (``certify.molecule.molecule_outcome``):
    kind ("molecule"), truth ("input": the molecule is its own truth), the point groups, the handedness, RDKit's
    stereocentres (null without a bond graph) and the levels scored (``correct_by_level``, level -> bool)."""

    SOURCE: ClassVar[str] = "items[].molecule"
    KINDS: ClassVar[dict] = {"point_group": PointGroupOutcome, "handedness": HandednessOutcome,
                             "correct_by_level": "object or null"}
    kind: str = ABSENT
    truth: str = ABSENT
    point_group: PointGroupOutcome = ABSENT
    handedness: HandednessOutcome = ABSENT
    stereocentres: dict | None = ABSENT
    correct_by_level: dict = ABSENT
    extra: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class ItemCeiling(Section):
    """``items[].ideal`` / ``items[].rendered`` of an interaction item: the ceiling in [0, 1] under ideal
    observations or as rendered, and what the task writes beside it (``benchmark.interaction_export``):
    pocket-ligand the counts of true and determined bonds, the losses by cause, the margin candidates and the
    entries; residue-ligand the residue, whether it is a positive and the loss; interaction-location the number
    of consistent answers, whether the bond was located and the loss; docking (``benchmark.docking_export``) the
    consistent grid answers, their number and the ligand atoms seen. ``InteractionItemRecord.ceiling`` checks
    the ceiling."""

    SOURCE: ClassVar[str] = "items[].rendered"
    ceiling: float = ABSENT
    n_true: int = ABSENT
    n_determined: int = ABSENT
    losses: dict = ABSENT
    margin_candidates: dict = ABSENT
    entries: list = ABSENT
    residue: str = ABSENT
    positive: bool = ABSENT
    loss: str | list | None = ABSENT
    n_consistent: int = ABSENT
    located: bool = ABSENT
    consistent: list = ABSENT
    n_ligand_atoms_seen: int = ABSENT
    extra: Mapping = field(default_factory=dict)
