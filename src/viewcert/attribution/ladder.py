"""The attribution ladder: chance, no-image, R4 (pixels), R3 (geometry as text), optional R2 and
vision-only rungs, and the certified ceiling R1.

Per arm (model × rung), from the canonical table:

- each item's answer is the majority vote of its ``ok`` samples (:func:`~.parsing.majority_vote`,
  tie rule stated); an item missing from the arm, or with no ``ok`` sample, has no answer and is wrong;
- ``correct`` is a count over the item universe (every arm of a model is scored on the same items);
- the arm is **unscored** — reported, never zeroed — when the share of failed API calls
  (``api_error`` samples / all samples) or of items left without an answer (no ``ok`` sample, or
  missing) exceeds ``threshold`` (default 5 %).

Per model and ceiling: perception gap R3 − R4, post-perception residual R1 − R3, perception share
(R3 − R4)/(R1 − R4), residual-limited when R1 − R3 > R3 − R4. All from integer counts as exact
fractions; floats appear only at the output.

R1 comes from a number (``"1"``, ``"0.9524"``, ``"200/210"``; exact, no item-level variation except that
R1 = 1 or 0 fixes every item) or from a certificate JSON (counts and, when present, per-item outcomes,
which the bootstrap and McNemar then use).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from viewcert import stats as st
from viewcert.attribution.parsing import TIE_RULES, majority_vote
from viewcert.attribution.settings import LadderSettingsRecord
from viewcert.attribution.table import RUNGS, Coverage, ResultTable
from viewcert.errors import InputError
from viewcert.formats.ladder import R1CountsRecord
from viewcert.formats.reader import Received, receive
from viewcert.formats.records import (
    CeilingCertificate,
    CertificateVisitor,
    InteractionCertificate,
    TaskCertificate,
    as_kind,
    ladder_items,
)
from viewcert.formats.table import StreamedCertificate

DEFAULT_THRESHOLD = 0.05


# ---------------------------------------------------------------------- ceilings
@dataclass(frozen=True)
class Ceiling:
    """R1: an exact value, optional counts and per-item outcomes (aligned to the item universe)."""

    value: Fraction
    label: str
    source: str
    correct: int | None = None
    n: int | None = None
    per_item: np.ndarray | None = None
    delta: float | None = None
    tau: float | None = None
    digest: str | None = None
    #: per item (aligned like ``per_item``) the certificate's reasons, comma-joined ('' when correct); None: not given
    reasons: tuple[str, ...] | None = None
    #: whether the certificate's digest held: False when read with --allow-stale-certificate over a mismatch (the
    #: source then says so too); None when there is no digest to check (a number, a hand-written layout)
    digest_ok: bool | None = None

    def to_dict(self) -> dict:
        return {
            "label": self.label,
            "value": float(self.value),
            "value_exact": str(self.value),
            "source": self.source,
            "correct": self.correct,
            "n": self.n,
            "per_item": self.per_item is not None,
            "delta": self.delta,
            "tau": self.tau,
            "digest": self.digest,
        }

    def item_vector(self) -> np.ndarray | Fraction:
        return self.per_item if self.per_item is not None else self.value


def parse_fraction(text: str | float | int | Fraction) -> Fraction:
    """Exact value of ``"1"``, ``"0.9524"`` (as the decimal written), ``"200/210"`` or a number."""
    if isinstance(text, Fraction):
        return text
    if isinstance(text, float):
        return Fraction(repr(text))
    try:
        return Fraction(str(text).strip())
    except (ValueError, ZeroDivisionError):
        raise InputError(f"R1 {text!r} is not a number or a fraction like 200/210", field="r1") from None


def ceiling_from_number(value: str | float | Fraction, universe: Sequence[str] | None = None, *,
                        delta: float | None = None, tau: float | None = None, source: str = "number") -> Ceiling:
    """R1 given as a number. ``value`` may carry its tolerance as ``"VALUE@DELTA"`` (δ in Å; τ = δ unless
    given), e.g. ``"200/210@0.15"``. R1 = 1 or 0 fixes every item's outcome; any other number carries no
    item-level variation.

    Parameters
    ----------
    value : str, float or Fraction
        R1, e.g. ``1``, ``0.95``, ``"200/210"`` or ``"200/210@0.15"`` (with δ in Å).
    universe : sequence of str, optional
        Item ids; with R1 = 1 or 0, every item's outcome.
    delta : float, optional
        δ (Å) when ``value`` does not carry it.
    tau : float, optional
        τ (Å); default δ.
    source : str
        The ceiling's source as reported.

    Returns
    -------
    Ceiling
        R1 as given.
    """
    text = str(value).strip()
    if "@" in text:
        text, _, tol = text.partition("@")
        try:
            delta = float(tol)
        except ValueError:
            raise InputError(f"R1 tolerance {tol!r} after '@' is not a number (δ in Å)", field="r1") from None
        tau = delta if tau is None else tau
    v = parse_fraction(text if not isinstance(value, (float, Fraction)) else value)
    if not 0 <= v <= 1:
        raise InputError(f"R1 must lie in [0, 1], got {float(v)}", field="r1")
    label = f"R1 = {text}" if "/" not in text else f"R1 = {text} = {float(v):.4f}"
    per_item = None
    if universe is not None and v in (0, 1):
        per_item = np.full(len(universe), bool(v))
    correct = n = None
    if "/" in text:
        a, b = text.split("/")
        correct, n = int(a), int(b)
    return Ceiling(v, label, source, correct, n, per_item, delta, tau)


_ID_KEYS = ("item_id", "id", "material_id", "identifier")


def _outcome(entry: Mapping) -> bool | None:
    for key in ("correct", "certified", "recovered"):
        if isinstance(entry.get(key), bool):
            return entry[key]
    status = entry.get("status") or entry.get("outcome")
    if isinstance(status, str):
        return status.lower() in ("certified", "correct", "ok", "success", "pass")
    return None


def list_ceilings(cert: InteractionCertificate, src: str, universe: Sequence[str] | None, mode: str = "rendered") -> dict:
    """{item id: ceiling} of an interaction certificate (``items[].{mode}.ceiling``: the best expected
    list score), over the results' items (all of the certificate's when no universe is given); InputError when
    ``cert`` is another kind."""
    per = {}
    why = "an interaction-list export needs its interaction certificate"
    for i, e in enumerate(as_kind(cert, InteractionCertificate, src, why).items):
        try:
            per[e.id] = e.ceiling(mode)
        except InputError:
            raise InputError(f"items[{i}] needs an id and a {mode} ceiling in [0, 1]", source=src,
                             field=f"items[{i}]") from None
    ids = list(universe) if universe is not None else list(per)
    _check_covered(ids, per, src)
    return {u: per[u] for u in ids}


def _task_ceiling(cert: TaskCertificate, src: str, universe: Sequence[str] | None) -> tuple[int, int, Fraction]:
    """(items, items, R1) of a transformation-task certificate: R1 = the mean exact ceiling (command
    answers: 1/|consistent set|) or the mean choice ceiling (1/|consistent options|), as an exact fraction
    over the results' items (all of the certificate's when no universe is given)."""
    per: dict[str, Fraction] = {e.id: e.ceiling for e in cert.items}
    ids = list(universe) if universe is not None else list(per)
    _check_covered(ids, per, src)
    value = sum((per[u] for u in ids), Fraction(0)) / len(ids)
    return len(ids), len(ids), value


def _outcomes(items: Any, src: str, id_map: Mapping[str, str]) -> dict[str, bool]:
    """{item id: outcome} of a certificate's ``items`` (a list of objects or an {id: outcome} object), the ids
    renamed through ``id_map``; empty when there are none."""
    outcomes: dict[str, bool] = {}
    if isinstance(items, list):
        for i, e in enumerate(items):
            if not isinstance(e, dict):
                raise InputError(f"items[{i}] is not an object", source=src, field="items")
            iid = next((e[k] for k in _ID_KEYS if k in e), None)
            ok = _outcome(e)
            if iid is None or ok is None:
                raise InputError(f"items[{i}] needs an id ({'/'.join(_ID_KEYS)}) and an outcome "
                                 "(correct/certified/status)", source=src, field=f"items[{i}]")
            outcomes[str(id_map.get(str(iid), iid))] = ok
    elif isinstance(items, dict):
        for iid, e in items.items():
            ok = _outcome(e) if isinstance(e, dict) else (e if isinstance(e, bool) else None)
            if ok is None:
                raise InputError(f"items[{iid!r}] has no outcome", source=src, field="items")
            outcomes[str(id_map.get(str(iid), iid))] = ok
    return outcomes


def _reasons(items: Any, id_map: Mapping[str, str]) -> dict[str, str]:
    """{item id: its reasons comma-joined} of a certificate's ``items`` list (``reasons``, a list, or ``reason``,
    a text); items without either are left out."""
    out: dict[str, str] = {}
    for e in items if isinstance(items, list) else ():
        iid = next((e[k] for k in _ID_KEYS if k in e), None) if isinstance(e, dict) else None
        why = e.get("reasons", e.get("reason")) if isinstance(e, dict) else None
        if iid is not None and why is not None:
            out[str(id_map.get(str(iid), iid))] = (", ".join(map(str, why)) if isinstance(why, list) else str(why))
    return out


@dataclass(frozen=True)
class R1Counts:
    """What a crystal/molecule certificate gives R1: the headline counts, the items they count (id and outcome),
    δ and τ (Å). Read from a viewcert certificate (:meth:`of_view`) or from the one hand-written layout
    (:meth:`from_dict`)."""

    correct: Any = None
    n: Any = None
    items: Any = None
    delta: Any = None
    tau: Any = None

    @classmethod
    def of_view(cls, cert: CeilingCertificate | StreamedCertificate) -> R1Counts:
        """``summary.correct`` / ``n`` over the items the headline counts (``formats.records.ladder_items``: a
        streamed certificate's read lazily, only the columns R1 needs); δ and τ from ``tolerances``."""
        s, tol = cert.summary, cert.tolerances
        return cls(s.correct, s.n, ladder_items(s, cert.r1_rows()), tol.delta if tol else None,
                   tol.tau if tol else None)

    @classmethod
    def from_dict(cls, d: Mapping) -> R1Counts:
        """A hand-written certificate (no ``format``, no digest): ``ceiling`` {``correct``, ``n``}, ``items`` (a
        list of objects, each with an id under one of ``item_id``/``id``/``material_id``/``identifier`` and an
        outcome ``correct``/``certified``/``recovered`` (true/false) or ``status``/``outcome`` (text); or an
        {id: outcome} object), ``delta`` and ``tau`` (Å)."""
        c = d.get("ceiling")
        c = c if isinstance(c, Mapping) else {}
        return cls(c.get("correct"), c.get("n"), d.get("items"), d.get("delta"), d.get("tau"))


def _source(src: str, sha256: str, digest_ok: bool | None, *, say_verified: bool = True) -> str:
    """The ceiling's source as the ladder table shows it: the certificate's path and SHA-256 and what its digest
    check said (``digest_ok``: True, False when read with --allow-stale-certificate over a mismatch, None for a
    hand-written certificate, which has no digest); ``say_verified`` False: a held digest is not mentioned."""
    note = {True: "digest verified" if say_verified else "",
            False: "DIGEST MISMATCH: read with --allow-stale-certificate", None: "digest not checked"}[digest_ok]
    return f"certificate {src} sha256:{sha256}" + (f" ({note})" if note else "")


def _check_covered(universe: Sequence[str], outcomes: Mapping, src: str) -> None:
    """Every item of the results must have its certificate entry: the missing ones listed with their count."""
    missing = [u for u in universe if u not in outcomes]
    if missing:
        shown = ", ".join(repr(x) for x in missing[:5]) + (", …" if len(missing) > 5 else "")
        raise InputError(f"{len(missing)} item(s) of the results are not in the certificate: {shown}", source=src,
                         field="items")


def ceiling_from_certificate(path: str | Path, universe: Sequence[str] | None = None,
                             id_map: Mapping[str, str] | None = None,
                             received: Received | None = None, allow_stale: bool = False) -> Ceiling:
    """R1 from a certificate: a viewcert certificate (it has a ``format``) as ``formats.reader.receive`` reads it
    (format and digest checked: a digest that does not match its content is a one-line ``StaleCertificate``
    unless ``allow_stale``; typed; ``received``: when the caller has it already, the file is not read again), or
    a JSON object without a format as the hand-written layout (:meth:`R1Counts.from_dict`; no digest to check).
    A crystal/molecule certificate (a streamed one read lazily, :meth:`R1Counts.of_table`): its headline counts and per-item outcomes
    (:meth:`R1Counts.of_view`), δ and τ, its digest; a hand-written one: :meth:`R1Counts.from_dict`. The
    per-item outcomes must cover every item of the universe and agree with the counts. ``id_map`` renames the
    certificate's ids (a benchmark export's ``source_id`` → item id, ``attribution.shipped``). A
    transformation-task or interaction certificate gives R1 = its mean per-item ceiling over the results'
    items, with no per-item outcomes.

    Parameters
    ----------
    path : str or Path
        The certificate.json (any kind).
    universe : sequence of str, optional
        Item ids of the results; a certificate's per-item outcomes must cover them.
    id_map : mapping of str to str, optional
        Certificate id → item id (an export's ``source_id`` mapping).
    received : formats.reader.Received, optional
        The certificate as ``formats.reader.receive`` read it already (then the file is not read again).
    allow_stale : bool
        Accept a certificate whose digest does not match its content (the ceiling's source says so).

    Returns
    -------
    Ceiling
        R1 as a fraction, δ and τ (Å) where recorded, per-item outcomes where the kind has them, the digest.
    """
    src = str(Path(path))
    if received is None:  # the one reader: a viewcert certificate, or the hand-written layout
        received = receive(path, allow_stale=allow_stale, streamed=True, counts=True)
    return received.certificate.visit(_CeilingOf(received, src, universe, id_map))


@dataclass(frozen=True)
class _CeilingOf(CertificateVisitor[Ceiling]):
    """R1 of each kind of certificate (``ceiling_from_certificate``)."""

    got: Received
    src: str
    universe: Sequence[str] | None
    id_map: Mapping[str, str] | None

    def ceiling(self, cert: CeilingCertificate | StreamedCertificate) -> Ceiling:
        digest = cert.digest_value
        return _counts_ceiling(R1Counts.of_view(cert), self.src, self.got.sha256, None if digest is None else str(digest),
                               self.got.digest_ok, self.universe, self.id_map)

    def counts(self, cert: R1CountsRecord) -> Ceiling:
        return _counts_ceiling(R1Counts.from_dict(self.got.data), self.src, self.got.sha256, None, None, self.universe,
                               self.id_map)

    def task(self, cert: TaskCertificate) -> Ceiling:
        _, n_t, value = _task_ceiling(cert, self.src, self.universe)
        tol = cert.tolerances
        return Ceiling(value, f"R1 = {float(value):.4f} (task certificate, mean ceiling over {n_t} items)",
                       _source(self.src, self.got.sha256, self.got.digest_ok, say_verified=False), None, n_t, None,
                       tol.delta_angstrom if tol else None, None, cert.digest_value, digest_ok=self.got.digest_ok)

    def interaction(self, cert: InteractionCertificate) -> Ceiling:
        per = list_ceilings(cert, self.src, self.universe)
        value = parse_fraction(sum(per.values()) / len(per))
        return Ceiling(value, f"R1 = {float(value):.4f} (interaction certificate, mean list ceiling over {len(per)} "
                       "items)", _source(self.src, self.got.sha256, self.got.digest_ok, say_verified=False), None,
                       len(per), None, None, None, cert.digest_value, digest_ok=self.got.digest_ok)


def _counts_ceiling(counts: R1Counts, src: str, sha256: str, digest: str | None, digest_ok: bool | None,
                    universe: Sequence[str] | None, id_map: Mapping[str, str] | None) -> Ceiling:
    """R1 = correct / n of a crystal/molecule or hand-written certificate's counts, with its per-item outcomes
    (aligned to ``universe``) when it has them."""
    correct, n = counts.correct, counts.n
    outcomes = _outcomes(counts.items, src, id_map or {})
    if outcomes:
        c_items, n_items = sum(outcomes.values()), len(outcomes)
        if correct is not None and (int(correct), int(n)) != (c_items, n_items):
            raise InputError(f"ceiling {correct}/{n} disagrees with the per-item outcomes "
                             f"{c_items}/{n_items}", source=src, field="ceiling")
        correct, n = c_items, n_items
    if correct is None or n is None:
        raise InputError("no R1 counts (ceiling.correct / ceiling.n) and no per-item outcomes", source=src,
                         field="ceiling")
    correct, n = int(correct), int(n)
    if n <= 0 or not 0 <= correct <= n:
        raise InputError(f"R1 counts {correct}/{n} are not valid", source=src, field="ceiling")
    per_item = reasons = None
    if outcomes and universe is not None:
        _check_covered(universe, outcomes, src)
        per_item = np.array([outcomes[u] for u in universe], dtype=bool)
        why = _reasons(counts.items, id_map or {})
        reasons = tuple("" if outcomes[u] else why.get(u, "") for u in universe)
        if per_item.size != n:
            correct, n = int(per_item.sum()), int(per_item.size)
    return Ceiling(Fraction(correct, n), f"R1 = {correct}/{n} (certificate)", _source(src, sha256, digest_ok),
                   correct, n, per_item, None if counts.delta is None else float(counts.delta),
                   None if counts.tau is None else float(counts.tau), digest, reasons, digest_ok)


# ---------------------------------------------------------------------- arms
@dataclass(frozen=True)
class Arm:
    model: str
    rung: str
    n_items: int
    correct: int
    missing: int
    samples: int
    k_max: int
    api_error_samples: int
    refused_samples: int
    unparseable_samples: int
    failed_items: int
    failed_refused: int
    failed_unparseable: int
    failed_api_error: int
    ties: int
    failure_reasons: str
    scored: bool
    reason: str
    correct_vector: np.ndarray = field(repr=False)
    answers: tuple[str | None, ...] = field(repr=False)

    @property
    def accuracy(self) -> Fraction:
        return Fraction(self.correct, self.n_items)


def _arm(model: str, rung: str, sub: pd.DataFrame, universe: Sequence[str], targets: Mapping[str, str], *,
         tie_rule: str, threshold: float, scoring: str) -> Arm:
    sub = sub.sort_values(["item_id", "sample_k"], kind="stable")
    groups: dict[str, list[tuple[str, str | None, float]]] = {}
    for iid, status, ans, score in zip(sub["item_id"].tolist(), sub["parse_status"].tolist(),
                                       sub["parsed_answer"].tolist(), sub["score"].tolist(), strict=True):
        groups.setdefault(iid, []).append((status, ans, score))
    answers: list[str | None] = []
    correct = np.zeros(len(universe), dtype=bool)
    failed = {"api_error": 0, "refused": 0, "unparseable": 0}
    n_failed = missing = ties = 0
    for j, iid in enumerate(universe):
        g = groups.get(iid)
        if g is None:
            missing += 1
            n_failed += 1
            answers.append(None)
            continue
        ok_answers = [a if s == "ok" else None for s, a, _ in g]
        if all(a is None for a in ok_answers):
            n_failed += 1
            # an item counts under its most frequent failure (ties: api_error, refused, unparseable)
            counts = {k: sum(s == k for s, _, _ in g) for k in failed}
            failed[max(failed, key=lambda k: counts[k])] += 1
        vote = majority_vote(ok_answers, tie_rule)
        ties += vote.tied
        answers.append(vote.answer)
        if scoring == "vote":
            correct[j] = vote.answer is not None and vote.answer == targets[iid]
        else:  # harness: the item's mean harness score over its samples
            correct[j] = float(np.mean([sc for _, _, sc in g])) >= 0.5
    statuses = sub["parse_status"].value_counts()
    n_samples = len(sub)
    failed_rows = sub[sub["parse_status"] != "ok"]
    reason_col = failed_rows["parse_reason"] if "parse_reason" in failed_rows else pd.Series(dtype=object)
    top = reason_col.fillna("").replace("", "(no reason recorded)").value_counts().head(3)
    failure_reasons = "; ".join(f"{c}× {r}" for r, c in top.items())
    api = int(statuses.get("api_error", 0))
    api_rate = api / n_samples if n_samples else 0.0
    fail_rate = n_failed / len(universe)
    reasons = []
    if api_rate > threshold:
        reasons.append(f"{api}/{n_samples} API errors ({api_rate:.1%} > {threshold:.0%})")
    if fail_rate > threshold:
        parts = [f"{v} {k.replace('_', ' ')}" for k, v in failed.items() if v]
        if missing:
            parts.append(f"{missing} missing")
        reasons.append(f"{n_failed}/{len(universe)} items without an answer ({', '.join(parts)}; "
                       f"{fail_rate:.1%} > {threshold:.0%})")
    k_max = int(sub["sample_k"].max()) + 1 if n_samples else 0
    return Arm(model, rung, len(universe), int(correct.sum()), missing, n_samples, k_max, api,
               int(statuses.get("refused", 0)), int(statuses.get("unparseable", 0)), n_failed,
               failed["refused"], failed["unparseable"], failed["api_error"], ties, failure_reasons, not reasons,
               "; ".join(reasons), correct, tuple(answers))


def arms_from_table(table: ResultTable, coverage: Coverage, *, tie_rule: str = "first",
                    threshold: float = DEFAULT_THRESHOLD, scoring: str = "vote") -> dict[tuple[str, str], Arm]:
    if tie_rule not in TIE_RULES:
        raise InputError(f"tie rule must be one of {TIE_RULES}, got {tie_rule!r}", field="tie_rule")
    if scoring not in ("vote", "harness"):
        raise InputError(f"scoring must be 'vote' or 'harness', got {scoring!r}", field="scoring")
    if not 0 <= threshold < 1:
        raise InputError(f"threshold must be in [0, 1), got {threshold}", field="threshold")
    frame = table.frame
    targets = frame.groupby("item_id")["target"].first().to_dict()
    universe = list(coverage.universe)
    for iid in universe:
        if iid not in targets:
            raise InputError(f"item {iid!r} of the item list appears in no result file", field="item_id")
    out = {}
    for (model, rung), sub in frame.groupby(["model", "rung"], sort=True):
        out[(str(model), str(rung))] = _arm(str(model), str(rung), sub, universe, targets, tie_rule=tie_rule,
                                            threshold=threshold, scoring=scoring)
    return out


# ---------------------------------------------------------------------- ladder
DECOMPOSITION_COLUMNS = [
    "r1", "r1_value", "model", "R4", "R3", "n", "status", "gap", "gap_exact", "gap_lo", "gap_hi", "residual",
    "residual_exact", "residual_lo", "residual_hi", "r1_minus_r4", "r1_minus_r4_lo", "r1_minus_r4_hi", "share",
    "share_exact", "share_lo", "share_hi", "suppression_reason", "degenerate_resamples", "residual_limited",
]


@dataclass
class Ladder:
    """Everything the report needs; every table is a DataFrame sorted deterministically."""

    arms: pd.DataFrame
    decomposition: pd.DataFrame
    tests: pd.DataFrame
    transitions: pd.DataFrame
    summary: pd.DataFrame
    coverage: pd.DataFrame
    ceilings: list[Ceiling]
    settings: LadderSettingsRecord
    warnings: list[str]
    universe: tuple[str, ...]
    arm_objects: dict[tuple[str, str], Arm] = field(repr=False)
    #: MiSI partial credit beside the certified ceilings (command-answer exports; ``attribution.task_scores``)
    task_scores: pd.DataFrame | None = None
    #: the harness's own accuracy beside viewcert's, per arm, with the disagreeing items
    harness_agreement: pd.DataFrame | None = None
    #: the partial-credit item scale of a command or list export (``account.ItemScale``), for the deficit account
    item_scale: Any = None

    @property
    def shares(self) -> pd.DataFrame:
        """The perception share (R3 − R4)/(R1 − R4) per ceiling and model, as numbers (``shares.csv``: R4 and R3
        in items right, the gap and residual in points of accuracy, the share a ratio, each with its bootstrap
        interval ends; ``status`` and ``suppression_reason`` where no share is given)."""
        return self.decomposition.reindex(columns=SHARE_COLUMNS)


#: the columns of ``Ladder.shares`` (and ``shares.csv``)
SHARE_COLUMNS = ["r1", "model", "R4", "R3", "status", "gap", "gap_lo", "gap_hi", "residual", "residual_lo",
                 "residual_hi", "share", "share_exact", "share_lo", "share_hi", "suppression_reason",
                 "residual_limited"]


def _f(x: Fraction | None) -> float | None:
    return None if x is None else float(x)


def _arms_frame(arms: dict, alpha: float) -> pd.DataFrame:
    """One row per (model, rung) arm with its two-sided Clopper–Pearson interval (none for an unscored arm: its
    count is reported, never given an interval it has not earned) and failure counts."""
    arm_rows = []
    for (model, rung), a in sorted(arms.items(), key=lambda kv: (kv[0][0], RUNGS.index(kv[0][1]))):
        b = st.clopper_pearson_interval(a.correct, a.n_items, 1 - alpha)
        lo, hi = (b.lower, b.upper) if a.scored else (float("nan"), float("nan"))
        arm_rows.append({
            "model": model, "rung": rung, "correct": a.correct, "n": a.n_items, "accuracy": float(a.accuracy),
            "ci_lo": lo, "ci_hi": hi, "scored": a.scored, "unscored_reason": a.reason,
            "samples": a.samples, "k": a.k_max, "api_error_samples": a.api_error_samples,
            "refused_samples": a.refused_samples, "unparseable_samples": a.unparseable_samples,
            "items_without_answer": a.failed_items, "missing_items": a.missing, "ties": a.ties,
            "failure_reasons": a.failure_reasons,
        })
    return pd.DataFrame(arm_rows)


def _adjacent_tests(models: list[str], arms: dict) -> tuple[list[dict], list[dict]]:
    """McNemar between adjacent measured rungs of each model (independent of the ceiling), and the R4→R3
    transition counts: (test rows, transition rows)."""
    test_rows, trans_rows = [], []
    for model in models:
        present = [r for r in RUNGS if (model, r) in arms and arms[(model, r)].scored]
        for lo_r, hi_r in zip(present, present[1:], strict=False):
            t = st.mcnemar_exact(arms[(model, lo_r)].correct_vector, arms[(model, hi_r)].correct_vector)
            test_rows.append({"family": "adjacent measured rungs", "model": model, "lower": lo_r, "upper": hi_r,
                              "lower_only": t.a_only, "upper_only": t.b_only, "both": t.both,
                              "neither": t.neither, "p_value": t.p_value})
        if (model, "R4") in arms and (model, "R3") in arms:
            a4, a3 = arms[(model, "R4")].correct_vector, arms[(model, "R3")].correct_vector
            trans_rows.append({"model": model, "R4_right_R3_right": int((a4 & a3).sum()),
                               "R4_right_R3_wrong": int((a4 & ~a3).sum()),
                               "R4_wrong_R3_right": int((~a4 & a3).sum()),
                               "R4_wrong_R3_wrong": int((~a4 & ~a3).sum())})
    return test_rows, trans_rows


def _not_computed(a4: Arm | None, a3: Arm | None) -> list[str]:
    """Why a model's decomposition cannot be computed (missing or unscored R4/R3 arms); empty when it can."""
    why = []
    if a4 is None or a3 is None:
        why.append("no " + " and no ".join(r for r, a in (("R4", a4), ("R3", a3)) if a is None))
    for r, a in (("R4", a4), ("R3", a3)):
        if a is not None and not a.scored:
            why.append(f"{r} unscored ({a.reason})")
    return why


def _decompose(row: dict, a4: Arm, a3: Arm, ceiling: Ceiling, n: int, idx, alpha: float, share_cutoff: float):
    """Fill one decomposition row (gap R3 − R4, residual R1 − R3, share with paired bootstrap intervals).
    Returns (gap, residual-limited, share or None, bootstrap result)."""
    p4, p3 = Fraction(a4.correct, n), Fraction(a3.correct, n)
    gap, res, den = p3 - p4, ceiling.value - p3, ceiling.value - p4
    boot = st.paired_share_bootstrap(a4.correct_vector, a3.correct_vector, ceiling.item_vector(), idx,
                                     alpha=alpha, share_cutoff=share_cutoff)
    share = None if boot.suppressed else gap / den
    limited = res > gap
    row.update({
        "status": "suppressed" if boot.suppressed else "ok",
        "gap": float(gap), "gap_exact": str(gap), "gap_lo": boot.gap.lo, "gap_hi": boot.gap.hi,
        "residual": float(res), "residual_exact": str(res), "residual_lo": boot.residual.lo,
        "residual_hi": boot.residual.hi,
        "r1_minus_r4": float(den), "r1_minus_r4_lo": boot.denominator.lo,
        "r1_minus_r4_hi": boot.denominator.hi,
        "share": _f(share), "share_exact": None if share is None else str(share),
        "share_lo": None if share is None else boot.share.lo,
        "share_hi": None if share is None else boot.share.hi,
        "suppression_reason": boot.reason, "degenerate_resamples": boot.degenerate,
        "residual_limited": bool(limited),
    })
    return gap, bool(limited), share, boot


def _summary_row(label: str, share_points: dict, share_samples: dict, n_decomposed: int, lim: list[bool],
                 alpha: float) -> dict:
    """Across models for one ceiling: median share with bootstrap interval, sign tests, residual-limited."""
    srow: dict[str, Any] = {"r1": label, "models_with_share": len(share_points),
                            "models_decomposed": n_decomposed, "residual_limited": int(sum(lim))}
    if share_points:
        med_exact = statistics.median(share_points.values())
        med, dropped = st.bootstrap_median(share_samples, {m: float(v) for m, v in share_points.items()},
                                           alpha=alpha)
        sg = st.sign_test(list(share_points.values()))
        rl = st.sign_test([1 if x else -1 for x in lim])
        srow.update({"median_share": float(med_exact), "median_share_exact": str(med_exact),
                     "median_share_lo": med.lo, "median_share_hi": med.hi,
                     "median_degenerate_resamples": dropped,
                     "share_sign_test_positive": sg.n_positive, "share_sign_test_negative": sg.n_negative,
                     "share_sign_test_p": sg.p_value, "residual_limited_sign_test_p": rl.p_value})
    return srow


def _ceiling_rows(ceiling: Ceiling, models: list[str], arms: dict, n: int, idx, alpha: float,
                  share_cutoff: float) -> tuple[list[dict], list[dict], dict]:
    """Per model decomposition rows, R3 vs R1 McNemar rows (when the ceiling has per-item outcomes) and the
    summary row for one ceiling."""
    if ceiling.per_item is not None and ceiling.per_item.size != n:
        raise InputError(f"{ceiling.label}: per-item outcomes cover {ceiling.per_item.size} items, the "
                         f"results {n}", field="r1")
    dec_rows, test_rows = [], []
    share_samples: dict[str, np.ndarray] = {}
    share_points: dict[str, Fraction] = {}
    gaps, lim = [], []
    for model in models:
        a4, a3 = arms.get((model, "R4")), arms.get((model, "R3"))
        row: dict[str, Any] = {"r1": ceiling.label, "r1_value": float(ceiling.value), "model": model,
                               "R4": None if a4 is None else a4.correct,
                               "R3": None if a3 is None else a3.correct, "n": n}
        why = _not_computed(a4, a3)
        if why:
            row.update({"status": "not computed: " + "; ".join(why)})
            dec_rows.append(row)
            continue
        gap, limited, share, boot = _decompose(row, a4, a3, ceiling, n, idx, alpha, share_cutoff)
        dec_rows.append(row)
        gaps.append(gap)
        lim.append(limited)
        if share is not None:
            share_samples[model] = boot.share_samples
            share_points[model] = share
        if ceiling.per_item is not None:
            t = st.mcnemar_exact(a3.correct_vector, ceiling.per_item)
            test_rows.append({"family": f"R3 vs {ceiling.label}", "model": model, "lower": "R3",
                              "upper": "R1", "lower_only": t.a_only, "upper_only": t.b_only,
                              "both": t.both, "neither": t.neither, "p_value": t.p_value})
    return dec_rows, test_rows, _summary_row(ceiling.label, share_points, share_samples, len(gaps), lim, alpha)


def _tests_frame(test_rows: list[dict]) -> pd.DataFrame:
    """The McNemar tests with Holm-adjusted p-values within each family."""
    tests = pd.DataFrame(test_rows, columns=["family", "model", "lower", "upper", "lower_only", "upper_only",
                                             "both", "neither", "p_value"])
    tests["p_holm"] = pd.Series(dtype=float)
    if len(tests):
        tests["p_holm"] = np.nan
        for _family, sub in tests.groupby("family"):
            tests.loc[sub.index, "p_holm"] = st.holm(sub["p_value"].tolist())
    return tests


def build_ladder(
    table: ResultTable,
    coverage: Coverage,
    ceilings: Sequence[Ceiling],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    tie_rule: str = "first",
    scoring: str = "vote",
    bootstrap: st.BootstrapSettings = st.BootstrapSettings(),
    chance: Fraction | None = None,
    labels: Sequence[str] | None = None,
) -> Ladder:
    """Arms, per-model decomposition for each ceiling (with bootstrap intervals), McNemar tests between
    adjacent rungs (Holm-corrected within each family), R4→R3 transitions, and the across-model summary
    (median share with bootstrap interval, sign tests, residual-limited count). ``bootstrap``: seed,
    resamples, α and share cutoff as one value.

    Parameters
    ----------
    table : ResultTable
        The canonical long table: one row per model, rung, item and repeat.
    coverage : Coverage
        The item universe and each arm's coverage of it (checked before any score).
    ceilings : sequence of Ceiling
        R1 values the decomposition is computed against (one ladder column each).
    threshold : float
        An arm is unscored when its API-error samples / samples or its items without an answer / items
        exceed it (a fraction in [0, 1), strict >).
    tie_rule : str
        Majority-vote tie rule over repeats: ``first``, ``alphabetical`` or ``none``.
    scoring : str
        ``"vote"`` (the majority answer per item) or ``"harness"`` (the mean of the harness's scores over repeats).
    bootstrap : stats.BootstrapSettings
        Seed, resamples, α and share cutoff of the bootstrap intervals, as one value.
    chance : Fraction, optional
        Chance accuracy (default: one over the number of ``labels``, else of distinct targets).
    labels : sequence of str, optional
        The task's answer labels.

    Returns
    -------
    Ladder
        Arms, per-model shares with intervals, tests and the across-model summary.
    """
    seed, n_boot, alpha, share_cutoff = bootstrap.seed, bootstrap.n_boot, bootstrap.alpha, bootstrap.share_cutoff
    if not ceilings:
        raise InputError("give at least one R1 (a number or a certificate)", field="r1")
    arms = arms_from_table(table, coverage, tie_rule=tie_rule, threshold=threshold, scoring=scoring)
    universe = tuple(coverage.universe)
    n = len(universe)
    if chance is None:
        k = len(labels) if labels else table.frame["target"].nunique()
        chance = Fraction(1, k)
    counts = pd.Series([table.frame.groupby("item_id")["target"].first()[u] for u in universe]).value_counts()
    majority = Fraction(int(counts.max()), n)
    arms_df = _arms_frame(arms, alpha)
    models = sorted({m for m, _ in arms})
    idx = st.bootstrap_indices(n, n_boot=n_boot, seed=seed)
    test_rows, trans_rows = _adjacent_tests(models, arms)
    dec_rows, summary_rows = [], []
    for ceiling in ceilings:
        d, t, srow = _ceiling_rows(ceiling, models, arms, n, idx, alpha, share_cutoff)
        dec_rows += d
        test_rows += t
        summary_rows.append(srow)
    cov = coverage.frame.drop(columns=["missing_ids"]).assign(
        missing_ids=coverage.frame["missing_ids"].map(lambda x: " ".join(x)))
    settings = LadderSettingsRecord(
        threshold=threshold, threshold_rule="unscored when api_error samples / samples > threshold or "
        "items without an answer / items > threshold (strict >)",
        tie_rule=tie_rule, scoring=scoring, seed=seed, n_boot=n_boot, alpha=alpha,
        interval="two-sided Clopper-Pearson per arm; paired item bootstrap percentile for gaps/shares",
        share_cutoff=share_cutoff, chance=str(chance), chance_value=float(chance),
        majority_class=str(majority), majority_class_value=float(majority), n_items=n,
        ceilings=tuple(c.to_dict() for c in ceilings),
    )
    dec = pd.DataFrame(dec_rows).reindex(columns=DECOMPOSITION_COLUMNS)
    for col in ("R4", "R3"):
        dec[col] = dec[col].astype("Int64")
    return Ladder(arms_df, dec, _tests_frame(test_rows), pd.DataFrame(trans_rows), pd.DataFrame(summary_rows),
                  cov, list(ceilings), settings, list(table.warnings), universe, arms)
