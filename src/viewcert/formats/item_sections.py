"""The typed sections of an item record: the JSON objects inside a crystal or molecule item
(``records.ItemOutcome``) and an interaction item (``records.InteractionItemRecord``), each a
:class:`~viewcert.formats.model.Record` whose fields are the keys the producers write.

- :class:`OracleReport`      ``items[].oracle``: the oracle's report (``certify.evaluate``): counts, distances in Å
- :class:`UniquenessMargin`  ``items[].uniqueness_margin``: δ* and its near-miss tuple, in Å (``oracle.margin``)
- :class:`SymmetryRaised`    ``items[].symmetry_raised``: the input's and the rendered cell's labels, the levels
                             that differ (``certify.evaluate.symmetry_raised``)
- :class:`MoleculeOutcome`   ``items[].molecule``: the molecular levels (``certify.molecule.molecule_outcome``),
                             with :class:`PointGroupOutcome` (and its pymatgen :class:`PointGroupCheck`) and
                             :class:`HandednessOutcome`; tolerances in Å
- :class:`ItemCeiling`       ``items[].ideal`` / ``items[].rendered`` of an interaction item: the ceiling in
                             [0, 1] and its accounting (``benchmark.interaction_export``, ``interactions.ceiling``)
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from viewcert.formats.model import Bool, Count, List, Number, Object, Record, Text

__all__ = ["HandednessOutcome", "ItemCeiling", "MoleculeOutcome", "OracleReport", "PointGroupCheck",
           "PointGroupOutcome", "SymmetryRaised", "UniquenessMargin"]


class OracleReport(Record):
    """``items[].oracle``: the oracle's report of one item (``certify.evaluate``): status (ok | failed ...) and
    why, the counts (points reconstructed, phantoms, missing and recovered atoms), the largest position error
    and the closest same-label distance (Å), the phantom margin (in units of δ), whether the separation
    precondition held, and the oracle's warnings (a list of text, or null). Atoms are the rendered cell's, in its
    Cartesian frame."""

    SOURCE: ClassVar[str] = "items[].oracle"
    status: Text | None = Field(None, description=(
        "the oracle's status: ok, or failed (fewer than two usable views, nothing consistent with every view, "
        "...)"))
    reason: Text | None = Field(None, description="why the oracle failed, in words; null when it did not")
    n_points: Count | None = Field(None, description=(
        "a count of 3D points the oracle accepted (after its merge; wrapped into the cell when periodic)"))
    n_phantoms: Count | None = Field(None, description=(
        "a count of phantoms: accepted points farther than δ from every same-label atom of the rendered cell "
        "(minimum image when periodic)"))
    n_missing: Count | None = Field(None, description=(
        "a count of atoms of the rendered cell with no same-label accepted point within δ"))
    n_recovered: Count | None = Field(None, description=(
        "a count of atoms recovered: the rendered cell's atoms minus ``n_missing``"))
    max_position_error: Number | None = Field(None, description=(
        "Å: the largest distance from an accepted point that is not a phantom to its nearest same-label atom "
        "(0 when there is none), 9 significant digits"))
    min_same_label_distance: Number | None = Field(None, description=(
        "Å: d_min, the closest distance between two same-label atoms of the rendered cell (minimum image, an "
        "atom's own images included, when periodic); null when no label repeats"))
    margin: Number | None = Field(None, description=(
        "the phantom margin, in units of δ (dimensionless, not Å): the smallest largest-residual/δ over the "
        "oracle's rejected near-miss candidates farther than δ from every same-label atom; null when none "
        "lies within the near-miss window"))
    separation_ok: Bool | None = Field(None, description=(
        "the separation precondition of Theorem 1 held: d_min > 2δ"))
    warnings: List | None = Field(None, description=(
        "the oracle's warnings (a list of text: e.g. translates of the tiling within 2δ of each other in a "
        "view); null when there is none"))


class UniquenessMargin(Record):
    """``items[].uniqueness_margin`` (with ``CertifyConfig(margin=True)``; ``oracle.margin.Margin.record``): δ* (Å,
    null for ∞), what bounds it, the exact δ and the closest same-label distance d_min (Å), the near-miss tuple
    (one atom index per view), its label (atomic number) and least-squares point (Å); ``error`` (with δ* null)
    when the search did not run (perspective cameras, an unreadable cell)."""

    SOURCE: ClassVar[str] = "items[].uniqueness_margin"
    delta_star: Number | None = Field(None, description=(
        "δ* (Å, 9 significant digits): below it Φ_δ is empty and every atom recovered under ideal "
        "orthographic views of the rendered cell: the smaller of the smallest residual ρ of a false candidate "
        "with ρ < its distance to the nearest same-label atom, and d_min/2; 0 when no two views are "
        "independent; null for ∞ (no label repeats) or when not computed (``error``)"))
    bound: Text | None = Field(None, description=(
        "what sets δ*: candidate (a false candidate), separation (d_min/2), capped (nothing below the "
        "search's upper limit: δ* is a lower bound) or dependent (no two independent views: δ* = 0)"))
    delta_exact: Number | None = Field(None, description=(
        "Å: the stricter margin (≤ δ*) over every false candidate, those within δ of an atom too: below it "
        "the reconstruction is the structure point for point; null for ∞"))
    d_min: Number | None = Field(None, description=(
        "Å: the closest distance between two same-label atoms of the rendered cell (minimum image when "
        "periodic); null when no label repeats"))
    near_miss: List | None = Field(None, description=(
        "the false candidate that sets δ*: one atom index of the rendered cell per view, in the protocol's "
        "view order; null when none does"))
    near_miss_label: Count | None = Field(None, description=(
        "the near-miss tuple's label (atomic number); null when there is no near miss"))
    near_miss_point: List | None = Field(None, description=(
        "the near-miss tuple's least-squares point [x, y, z] (Å, the rendered cell's Cartesian frame, 9 "
        "significant digits); null when there is no near miss"))
    error: Text | None = Field(None, description=(
        "why δ* was not computed (perspective cameras; the search refused the input), in words (at most 200 "
        "characters); written only then, with ``delta_star`` null"))


class SymmetryRaised(Record):
    """``items[].symmetry_raised``: the standardisation gave another space group than the input's at τ
    (``certify.evaluate.symmetry_raised``): the input cell's label and the rendered cell's (each by level:
    crystal_system, point_group, space_group, ...), and the levels where they differ. The input's label is then
    the truth (``ItemOutcome.reference``)."""

    SOURCE: ClassVar[str] = "items[].symmetry_raised"
    input: Object | None = Field(None, description=(
        "the input cell's label: spglib at τ (Å) and the angle tolerance (degrees) on the cell as read: "
        "crystal_system, point_group (international), space_group (number 1-230) and symbol (Hermann-Mauguin)"))
    rendered: Object | None = Field(None, description=(
        "the rendered (standardised) cell's label at the same tolerances, with the same keys"))
    levels: List | None = Field(None, description=(
        "the levels whose values differ between the two labels, among crystal_system, point_group and "
        "space_group (space_group always)"))


class PointGroupCheck(Record):
    """``items[].molecule.point_group.cross_check``: pymatgen's point group of the input at τ (Å) against ours
    (``certify.molecule.PointGroupCheck``); ``pymatgen`` is ``"error: ..."`` when it failed."""

    SOURCE: ClassVar[str] = "items[].molecule.point_group.cross_check"
    ours: Text | None = Field(None, description=(
        "our Schoenflies point group of the input molecule at τ (``symmetry.pointgroup.point_group``)"))
    pymatgen: Text | None = Field(None, description=(
        "pymatgen's ``PointGroupAnalyzer`` symbol at the same τ (C∞v / D∞h for linear molecules), or ``error: "
        "<exception type>`` when it raised"))
    agree: Bool | None = Field(None, description="``ours`` equals ``pymatgen``")
    tolerance_A: Number | None = Field(None, description=(
        "τ (Å): the distance tolerance both point groups were found at"))


class PointGroupOutcome(Record):
    """``items[].molecule.point_group``: the Schoenflies point group of the input and of the reconstruction (null
    when the oracle failed) at the tolerance τ (``tolerance_A``, Å), whether the input's group closed, and
    pymatgen's cross-check (null unless asked)."""

    SOURCE: ClassVar[str] = "items[].molecule.point_group"
    input: Text | None = Field(None, description="the input molecule's Schoenflies point group at τ")
    reconstructed: Text | None = Field(None, description=(
        "the reconstruction's Schoenflies point group at τ (the input's when the reconstruction is the input "
        "atom for atom within 1e-9 Å); null when the oracle failed or accepted no point"))
    tolerance_A: Number | None = Field(None, description="τ (Å): the point groups' distance tolerance")
    input_closed: Bool | None = Field(None, description=(
        "the operations found within τ on the input compose into a group and none was dropped (false: "
        "``input`` names the group they generate)"))
    cross_check: PointGroupCheck | None = Field(None, description=(
        "pymatgen's point group of the input against ours (``PointGroupCheck``); null unless the "
        "configuration's ``molecule_cross_check`` is on"))


class HandednessOutcome(Record):
    """``items[].molecule.handedness`` (``certify.molecule.Handedness``): status (determined | not_determined |
    achiral | undecided) and why, whether the molecule is chiral, its point group at the tolerance
    (``tolerance_A``, Å), the witness and, per view, whether that view alone resolves the handedness."""

    SOURCE: ClassVar[str] = "items[].molecule.handedness"
    status: Text | None = Field(None, description=(
        "determined (no improper image is consistent with every view), not_determined (one is: ``witness``), "
        "achiral (the point group has an improper operation) or undecided (no proof and no witness)"))
    reason: Text | None = Field(None, description=(
        "why, in words (the proof, the witness, or what is missing)"))
    chiral: Bool | None = Field(None, description=(
        "the molecule's point group at ``tolerance_A`` has no improper operation"))
    point_group: Text | None = Field(None, description=(
        "the molecule's Schoenflies point group at ``tolerance_A``"))
    tolerance_A: Number | None = Field(None, description=(
        "Å: the chirality test's tolerance (certify passes the oracle's δ)"))
    witness: Text | None = Field(None, description=(
        "the improper image consistent with every view (``mirror ⟂ view NAME``, or ``improper image in Φ``); "
        "empty text when there is none"))
    single_view_resolves: List | None = Field(None, description=(
        "per view, in the protocol's order: true when that view alone refutes its camera mirror (the mirror's "
        "visible set differs), false when it does not, null for a perspective view; empty for an achiral "
        "molecule"))


class MoleculeOutcome(Record):
    """``items[].molecule``: the molecular levels of a molecule item (``certify.molecule.molecule_outcome``):
    kind ("molecule"), truth ("input": the molecule is its own truth), the point groups, the handedness, RDKit's
    stereocentres (null without a bond graph) and the levels scored (``correct_by_level``, level -> bool)."""

    SOURCE: ClassVar[str] = "items[].molecule"
    kind: Text | None = Field(None, description="``molecule``")
    truth: Text | None = Field(None, description=(
        "``input``: the molecule is its own truth (no dataset label is used)"))
    point_group: PointGroupOutcome | None = Field(None, description=(
        "the input's and the reconstruction's point groups at τ (``PointGroupOutcome``)"))
    handedness: HandednessOutcome | None = Field(None, description=(
        "whether the views fix the molecule's handedness (``HandednessOutcome``)"))
    stereocentres: Object | None = Field(None, description=(
        "RDKit's CIP labels from the 3D coordinates and the bond graph: status (ok, no_bond_graph or "
        "``rdkit_failed: ...``), rdkit and source (lists of [atom index, R/S], source the input's own labels, "
        "e.g. the CCD's) and agree (null without source labels); null when the item has no bond graph"))
    correct_by_level: Object | None = Field(None, description=(
        "per scored molecular level (the configuration's ``molecule_levels``) whether it is correct: "
        "uniqueness (oracle ok, Φ_δ empty, every atom recovered), point_group (``reconstructed`` equals "
        "``input``), handedness (status determined or achiral)"))


class ItemCeiling(Record):
    """``items[].ideal`` / ``items[].rendered`` of an interaction item: the ceiling in [0, 1] under ideal
    observations or as rendered, and what the task writes beside it (``benchmark.interaction_export``):
    pocket-ligand the counts of true and determined bonds, the losses by cause, the margin candidates and the
    entries; residue-ligand the residue, whether it is a positive and the loss; interaction-location the number
    of consistent answers, whether the bond was located and the loss; docking (``benchmark.docking_export``) the
    consistent grid answers, their number and the ligand atoms seen. ``InteractionItemRecord.ceiling`` checks
    the ceiling."""

    SOURCE: ClassVar[str] = "items[].rendered"
    ceiling: Number | None = Field(None, description=(
        "the item's ceiling, a score in [0, 1]: what the best answer is expected to score given what the "
        "views determine (pocket-ligand and residue-ligand: MiSI's list score; interaction-location and "
        "docking: the best answer's mean credit over the consistent answers)"))
    n_true: Count | None = Field(None, description=(
        "pocket-ligand: a count of the certain true entries (residue atom, ligand atom) of the list; "
        "residue-ligand: of this residue's (0 for a negative)"))
    n_determined: Count | None = Field(None, description=(
        "pocket-ligand: a count of the true entries the views determine (identified, recovered and stable "
        "under moves of δ)"))
    losses: Object | None = Field(None, description=(
        "pocket-ligand: per cause (label_hidden, atom_hidden, phantom, criterion_margin) the count of true "
        "entries not determined for that first reason"))
    margin_candidates: Object | None = Field(None, description=(
        "pocket-ligand: counts of the margin candidates an answerer must guess, ``true`` and ``false`` (0 and "
        "0 as exported: margin pairs are uncertain and leave the truth)"))
    entries: List | None = Field(None, description=(
        "pocket-ligand: each certain true entry: ``entry`` (its text), ``residue`` (CHAIN/RESseq), "
        "``determined`` and ``loss`` (its first cause, or null)"))
    residue: Text | None = Field(None, description="residue-ligand: the residue asked about (CHAIN/RESseq)")
    positive: Bool | None = Field(None, description=(
        "residue-ligand: the residue has a certain true entry (it bonds with the ligand)"))
    loss: Text | List | None = Field(None, description=(
        "residue-ligand: a positive's causes (a sorted list) or a negative's cause (label_hidden or "
        "criterion_margin), null when none; interaction-location: the entry's first cause when it is not "
        "located, ``rounding`` when more than one rounding of its answer is consistent, else null"))
    n_consistent: Count | None = Field(None, description=(
        "interaction-location and docking: a count of the answers consistent with the views (the roundings of "
        "the bond's midpoint moved by up to δ, or every candidate pair's answer; the grid displacements)"))
    located: Bool | None = Field(None, description=(
        "interaction-location: the bond's entry is identified and recovered (its loss is null or "
        "criterion_margin)"))
    consistent: List | None = Field(None, description=(
        "docking: the consistent grid answers, each as its restoring command's text"))
    n_ligand_atoms_seen: Count | None = Field(None, description=(
        "docking: a count of the ligand atoms observed (every one under ideal observations; as rendered: "
        "those with a pixel in the displaced complex's atom-ID buffer)"))
