"""Typed records of a certification: one item's outcome (:class:`ItemOutcome`), the summary
(:class:`Summary`) and the certificate (:class:`Certificate`), each a frozen value with ONE serialiser
(``to_dict`` / ``from_dict``) whose dict is exactly the certificate's JSON.

A field a record did not write is :data:`ABSENT` (not ``None``: ``None`` is written as ``null``), so
``from_dict(d).to_dict() == d`` for every record the pipeline writes; keys a record does not know are kept in
``extra`` in the same round trip. The per-item pipeline (``certify.evaluate``, worker shards) still builds the
dicts; these values are how the certificate's readers name what they read.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from viewcert.errors import InputError


class _Absent:
    """The marker of a field the record does not have (left out of ``to_dict``)."""

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


@functools.cache
def _names(cls) -> tuple[str, ...]:
    """The record fields of ``cls`` (``extra`` aside), computed once per class."""
    return tuple(f.name for f in fields(cls) if f.name != "extra")


def _fields_from(cls, d: Mapping, source: str) -> dict:
    """The keyword arguments of ``cls`` from the record ``d`` (unknown keys in ``extra``)."""
    if not isinstance(d, Mapping):
        raise InputError(f"{source} must be an object, got {type(d).__name__}", field=source)
    names = frozenset(_names(cls))
    kw = {k: v for k, v in d.items() if k in names}
    kw["extra"] = {k: v for k, v in d.items() if k not in names}
    return kw


def _to_dict(rec) -> dict:
    out = {k: v for k in _names(type(rec)) if (v := getattr(rec, k)) is not ABSENT}
    out.update(rec.extra)
    return out


@dataclass(frozen=True)
class ItemOutcome:
    """One item of ``certificate["items"]``. outcome: correct | incorrect | error; reasons in
    ``evaluate.REASON_ORDER``; labels are dicts of the levels (crystal_system, point_group, space_group,
    symbol); ``molecule`` holds the molecular levels of a molecule (``certify.molecule``); ``oracle`` the
    oracle's report (n_phantoms, n_missing, n_points, max_position_error Å, ...); ``uniqueness_margin`` δ* (Å)
    with ``margin=True``; ``camera_positions`` (Å, per view) for perspective cameras."""

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
    symmetry_raised: dict = ABSENT
    oracle: dict = ABSENT
    uniqueness_margin: dict = ABSENT
    phantoms: list | None = ABSENT
    unique: bool = ABSENT
    exact: bool = ABSENT
    certified: bool = ABSENT
    molecule: dict = ABSENT
    extra: Mapping = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping) -> ItemOutcome:
        kw = _fields_from(cls, d, "item")
        for k in ("id", "outcome", "correct"):
            if k not in kw:
                raise InputError(f"item {d.get('id', '?')!r} has no {k!r}", field=f"items[].{k}")
        return cls(**kw)

    def to_dict(self) -> dict:
        return _to_dict(self)

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
            return self.molecule["point_group"]["reconstructed"]
        return self.label("reconstructed").get(score)

    def reference(self, score: str) -> Any:
        """The label R1 compares with at ``score``: the dataset's, the input cell's (the standardisation raised
        the symmetry) or the rendered cell's; a molecule's own point group."""
        if self.is_molecule:
            return self.molecule["point_group"]["input"]
        if self.reference_source == "dataset":
            return self.label("dataset").get(score)
        if self.reference_source == "input":
            return self.symmetry_raised["input"].get(score)
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
    kinds: dict
    score: str
    truth: str
    correct: int
    R1: float | None  # noqa: N815 - the certificate's own key
    bound: dict
    interval: dict
    by_level: dict
    by_crystal_system: dict
    phantom_census: dict
    failure_reasons: dict
    failures: list
    label_mismatches: list
    cross_check_disagreements: list
    n_symmetry_raised: int = ABSENT
    symmetry_raised: list = ABSENT
    errors: list = ABSENT
    molecules: dict | None = ABSENT
    extra: Mapping = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping) -> Summary:
        try:
            return cls(**_fields_from(cls, d, "summary"))
        except TypeError as exc:
            raise InputError(f"summary: {str(exc)[:200]}", field="summary") from None

    def to_dict(self) -> dict:
        return _to_dict(self)


@dataclass(frozen=True)
class Certificate:
    """A certificate (``certify.certificate``): format, inputs, config, protocol, observation model,
    tolerances, oracle, scoring, libraries, items, summary, digest, and where the inputs were read
    (``location``, outside the digest). Sections other than items and summary stay JSON objects."""

    format: str
    inputs: dict
    config: dict
    protocol: dict
    observation_model: dict
    tolerances: dict
    oracle: dict
    scoring: dict
    libraries: dict
    items: tuple[ItemOutcome, ...]
    summary: Summary
    digest: dict = ABSENT
    location: dict = ABSENT
    extra: Mapping = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping) -> Certificate:
        kw = _fields_from(cls, d, "certificate")
        kw["items"] = tuple(outcomes_of(kw.get("items") or ()))
        if "summary" in kw:
            kw["summary"] = Summary.from_dict(kw["summary"])
        try:
            return cls(**kw)
        except TypeError as exc:
            raise InputError(f"certificate: {str(exc)[:200]}", field="certificate") from None

    def to_dict(self) -> dict:
        out = _to_dict(self)
        out["items"] = [it.to_dict() for it in self.items]
        out["summary"] = self.summary.to_dict()
        return out
