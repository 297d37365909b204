"""The item-level evidence of a ladder, in one value: each item's status (:mod:`.items`), the repeated-sample
figures (:mod:`.samples`), the model pairs (:mod:`.pairs`) and item quality with an optional ranking-keeping
subset (:mod:`.quality`). Computed from a built ladder, its canonical table and its diagnostics; the report and
the CLI only format it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from viewcert import stats as st
from viewcert.attribution.failure_types import failure_shares, failure_types
from viewcert.attribution.hierarchy import HierarchyFit, fit_hierarchy
from viewcert.attribution.irt import LINKED_FIT, LinkedFit, fit_linked
from viewcert.attribution.items import CLEAN, clean_accuracy, item_status, shortcut_evidence, status_counts
from viewcert.attribution.ladder import Ceiling, Ladder
from viewcert.attribution.pairs import ladder_vectors, pair_tests
from viewcert.attribution.posterior import arm_posteriors
from viewcert.attribution.quality import propose_subset
from viewcert.attribution.samples import SCHEME, arm_samples, repeated_samples
from viewcert.attribution.settings import EvidenceSettingsRecord
from viewcert.attribution.subset_check import SubsetCheck, check_subset
from viewcert.attribution.table import MEASURED_RUNGS, ResultTable
from viewcert.attribution.ties import TieSensitivity, tie_sensitivity
from viewcert.errors import InputError


@dataclass(frozen=True)
class ItemEvidence:
    """Every table of the item-level evidence, and the records of how it was computed."""

    status: pd.DataFrame
    counts: pd.DataFrame
    clean: pd.DataFrame
    samples: pd.DataFrame
    pairs: pd.DataFrame
    quality: pd.DataFrame
    fit: dict
    settings: EvidenceSettingsRecord
    subset: dict | None = None
    subset_ids: tuple[str, ...] | None = None
    #: each arm's majority-vote count under every tie rule and what the rule does to the ranking (:mod:`.ties`)
    ties: TieSensitivity | None = None
    #: every item a model misses at R4, typed (:mod:`.failure_types`), and the items per type per model
    failures: pd.DataFrame | None = None
    failure_shares: pd.DataFrame | None = None
    #: the subset checked out of sample: leave one model out, beside random subsets (:mod:`.subset_check`)
    subset_check: SubsetCheck | None = None
    #: each scored arm's Beta-Binomial posterior of its per-sample accuracy μ (:mod:`.posterior`)
    posteriors: pd.DataFrame | None = None
    #: the item-response fit's abilities and rung effects with standard errors (:meth:`.irt.LinkedFit.respondents`)
    respondents: pd.DataFrame | None = None
    #: the hierarchical model's rung accuracies and differences (:mod:`.hierarchy`; None: not asked for)
    hierarchy: HierarchyFit | None = None
    #: every arm's vote and verdict per item (model, rung, item_id, answer, right): the two-model page's rows
    outcomes: pd.DataFrame | None = None


def status_ceiling(ladder: Ladder) -> Ceiling | None:
    """The ceiling the statuses read: the first with per-item outcomes (a certificate, or R1 = 1 or 0)."""
    return next((c for c in ladder.ceilings if c.per_item is not None), None)


def _statuses(ladder: Ladder, table: ResultTable, giveaway: pd.DataFrame | None,
              shortcut_tests: pd.DataFrame | None) -> pd.DataFrame:
    c = status_ceiling(ladder)
    targets = table.frame.groupby("item_id")["target"].first().to_dict()
    r4 = {m: a.correct_vector for (m, r), a in sorted(ladder.arm_objects.items()) if r == "R4" and a.scored}
    empty = pd.DataFrame()
    text, choices = shortcut_evidence(empty if giveaway is None else giveaway,
                                      empty if shortcut_tests is None else shortcut_tests)
    return item_status(ladder.universe, targets, None if c is None else c.per_item,
                       None if c is None else c.reasons, r4, text, choices)


def _hierarchy(ladder: Ladder, frame: pd.DataFrame, seed: int, alpha: float) -> HierarchyFit | None:
    """The hierarchical model over the scored arms on measured rungs whose items all carry the same K (None when
    fewer than 2 models have one)."""
    rows, models, rungs, ks = [], [], [], set()
    for (m, r), g in frame.groupby(["model", "rung"], sort=True):
        a = ladder.arm_objects.get((str(m), str(r)))
        s = arm_samples(g, ladder.universe) if a is not None and a.scored and r in MEASURED_RUNGS else None
        if s is None or isinstance(s, str):
            continue
        rows.append(s.correct.sum(1))
        models.append(str(m))
        rungs.append(str(r))
        ks.add(s.k)
    if len(set(models)) < 2 or len(ks) != 1:
        return None
    order = sorted(range(len(rows)), key=lambda j: (rungs[j] != "R4", rungs[j], models[j]))
    return fit_hierarchy(np.array([rows[j] for j in order]), ks.pop(), [models[j] for j in order],
                         [rungs[j] for j in order], seed=seed, alpha=alpha)


def _outcomes(ladder: Ladder) -> pd.DataFrame:
    """Every arm's vote and verdict on every item (``ItemEvidence.outcomes``)."""
    rows = [(m, r, iid, ans, bool(ok)) for (m, r), a in sorted(ladder.arm_objects.items())
            for iid, ans, ok in zip(ladder.universe, a.answers, a.correct_vector.tolist(), strict=True)]
    return pd.DataFrame(rows, columns=["model", "rung", "item_id", "answer", "right"])


def _responses(ladder: Ladder) -> tuple[np.ndarray, list[str], list[str]]:
    """The 0/1 matrix of the scored arms on measured rungs (arms × items), each row's model and rung; R4's rows
    first (the fit's reference rung)."""
    arms = sorted(((k, a) for k, a in ladder.arm_objects.items() if a.scored and k[1] in MEASURED_RUNGS),
                  key=lambda kv: (kv[0][1] != "R4", kv[0][1], kv[0][0]))
    if not arms:
        return np.zeros((0, len(ladder.universe))), [], []
    return (np.vstack([a.correct_vector for _, a in arms]).astype(float), [m for (m, _), _ in arms],
            [r for (_, r), _ in arms])


QUALITY_COLUMNS = ["item_id", "difficulty", "difficulty_se", "discrimination", "discrimination_se",
                   "respondents_right", "respondents"]


def _fit(ladder: Ladder) -> tuple[LinkedFit | None, dict, pd.DataFrame]:
    """The linked 2PL over the ladder's scored arms, one respondent per model (:mod:`.irt`; None and a stated record
    with fewer than 2 models or items), its record and the per-item quality table with standard errors."""
    y, models, rungs = _responses(ladder)
    if len(set(models)) >= 2 and y.shape[1] >= 2:
        fit = fit_linked(y, models, rungs)
        q = pd.DataFrame({"item_id": list(ladder.universe), "difficulty": fit.difficulty,
                          "difficulty_se": fit.difficulty_se, "discrimination": fit.discrimination,
                          "discrimination_se": fit.discrimination_se,
                          "respondents_right": y.sum(0).astype(int), "respondents": np.full(y.shape[1], y.shape[0])})
        return fit, fit.record, q
    record = {"fit": LINKED_FIT, "respondents": len(set(models)), "items": y.shape[1], "converged": False,
              "message": "not fitted: needs at least 2 models with a scored arm and 2 items", "iterations": 0,
              "max_abs_gradient": float("nan")}
    return None, record, pd.DataFrame(columns=QUALITY_COLUMNS)


def item_evidence(ladder: Ladder, table: ResultTable, *, giveaway: pd.DataFrame | None = None,
                  shortcut_tests: pd.DataFrame | None = None, text_items: np.ndarray | None = None,
                  bootstrap: st.BootstrapSettings = st.BootstrapSettings(), subset: int | None = None,
                  subset_rung: str = "R4", hierarchy: bool = False) -> ItemEvidence:
    """The evidence of the module docstring. ``giveaway`` and ``shortcut_tests``: the diagnostics' prompt audit and
    per-item shortcut tests (``Diagnostics.giveaway``, ``.shortcut_tests``; absent: no item is found answerable
    without the image, and ``settings`` says so); ``text_items``: the text-only reader's per-item correctness
    (``Diagnostics.text_items``; absent: the shortcut term's pairs are not tested); ``subset``: propose that many
    items keeping the models' ranking at ``subset_rung`` (its size checked before any work); ``hierarchy``: also fit
    the hierarchical model (:mod:`.hierarchy`)."""
    n = len(ladder.universe)
    if subset is not None and not 1 <= subset < n:
        raise InputError(f"--subset must be between 1 and {n - 1} (the items), got {subset}", field="subset")
    status = _statuses(ladder, table, giveaway, shortcut_tests)
    frame = table.frame[table.frame["item_id"].isin(set(ladder.universe))]
    unscored = {k: a.reason for k, a in ladder.arm_objects.items() if not a.scored}
    samples = repeated_samples(frame, ladder.universe, tie_rule=ladder.settings.tie_rule, bootstrap=bootstrap,
                               unscored=unscored)
    pairs = pair_tests(ladder_vectors(ladder.arm_objects, MEASURED_RUNGS, text_items), alpha=bootstrap.alpha)
    fit, record, quality = _fit(ladder)
    c = status_ceiling(ladder)
    settings = EvidenceSettingsRecord(
        status_ceiling=None if c is None else c.label, samples_interval=SCHEME,
        shortcut_evidence="prompt audit and per-item shortcut tests" if shortcut_tests is not None
        else "none given: no item tested for answers without the image", samples_seed=bootstrap.seed,
        samples_n_boot=bootstrap.n_boot, alpha=bootstrap.alpha, tie_rule=ladder.settings.tie_rule)
    targets = frame.groupby("item_id")["target"].first().to_dict()
    ties = tie_sensitivity(frame, ladder.universe, {k: a.scored for k, a in ladder.arm_objects.items()},
                           ladder.settings.tie_rule)
    failures = failure_types(ladder.arm_objects, ladder.universe, targets, frame, None if c is None else c.per_item)
    missed = {m: a.n_items - a.correct for (m, r), a in ladder.arm_objects.items() if r == "R4"}
    ev = ItemEvidence(status, status_counts(status), clean_accuracy(status, ladder.arm_objects), samples, pairs,
                      quality, record, settings, ties=ties, failures=failures,
                      failure_shares=failure_shares(failures, missed), outcomes=_outcomes(ladder),
                      respondents=None if fit is None else fit.respondents(),
                      posteriors=arm_posteriors(frame, ladder.universe,
                                                {k: a.scored for k, a in ladder.arm_objects.items()}))
    if hierarchy:
        ev = ItemEvidence(**{**ev.__dict__, "hierarchy": _hierarchy(ladder, frame, bootstrap.seed, bootstrap.alpha)})
    if subset is None:
        return ev
    if fit is None:
        raise InputError(f"--subset needs an item-response fit: {record['message']}", field="subset")
    ranked = {m: a.correct_vector for (m, r), a in sorted(ladder.arm_objects.items()) if r == subset_rung and a.scored}
    pool = np.flatnonzero((status["status"] == CLEAN).to_numpy())  # only the items the status table keeps
    keep, chosen = propose_subset(ranked, subset, fit, seed=bootstrap.seed, candidates=pool)
    chosen["rung"] = subset_rung
    check = None
    if len(ranked) >= 4:
        check = check_subset(ranked, subset, pool, bootstrap=bootstrap)
        check.record["rung"] = subset_rung
    return ItemEvidence(**{**ev.__dict__, "subset": chosen, "subset_ids": tuple(ladder.universe[i] for i in keep),
                           "subset_check": check})


__all__ = ["ItemEvidence", "item_evidence", "status_ceiling"]
