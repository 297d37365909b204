"""The benchmark summary: R1 = correct / n with exact Clopper–Pearson bounds, by level and crystal system,
the phantom census, and every failure, label mismatch, cross-check disagreement, raised symmetry and
error by id.

Items that could not be read or certified (outcome ``error``) are reported apart, under ``errors``, and are
never counted in n: R1 is a rate over the items the pipeline certified."""

from __future__ import annotations

from viewcert.certify.config import CertifyConfig
from viewcert.certify.evaluate import REASON_ORDER
from viewcert.certify.molecule import molecule_summary
from viewcert.errors import InputError
from viewcert.formats.fields import ABSENT
from viewcert.formats.item_sections import OracleReport
from viewcert.formats.records import ItemOutcome, Summary, cross_check_disagreements, outcomes_of
from viewcert.formats.summary_sections import Kinds, LevelCount, PhantomCensus, RateBound
from viewcert.numeric import sig
from viewcert.stats import clopper_pearson_interval, clopper_pearson_lower
from viewcert.symmetry.labels import CRYSTAL_SYSTEMS, LEVELS


def summarize(outcomes: list[dict] | list[ItemOutcome], cfg: CertifyConfig) -> dict:
    """R1 = correct / n with exact Clopper–Pearson bounds; by level, by crystal system; phantom census;
    failures, label mismatches, cross-check disagreements and errors listed by id (``summary_of``'s
    :class:`Summary` as the certificate writes it).

    Parameters
    ----------
    outcomes : list of dict or list of ItemOutcome
        Every item's record.
    cfg : CertifyConfig
        The certification's settings (protocol, δ and τ in Å, observation model, levels).

    Returns
    -------
    dict
        The certificate's ``summary`` object.
    """
    return summary_of(outcomes, cfg).to_dict()


def summary_of(outcomes: list[dict] | list[ItemOutcome], cfg: CertifyConfig) -> Summary:
    """The :class:`Summary` of ``outcomes`` under ``cfg`` (module docstring)."""
    if not outcomes:
        raise InputError("nothing to summarize: no items", field="items")
    items = outcomes_of(outcomes)
    errors = [{"id": o.id, "error": o.error or "unknown error"} for o in items if o.is_error]
    items = [o for o in items if not o.is_error]
    # crystals and molecules are reported apart: the headline is the crystals' (the molecules' when the run
    # has no crystal), and "molecules" carries the molecular levels (certify.molecule)
    crystals = [o for o in items if not o.is_molecule]
    mols = [o for o in items if o.is_molecule]
    scored = crystals if crystals or not mols else mols
    levels = LEVELS if scored is crystals else cfg.molecules.molecule_levels
    n = len(scored)
    k = sum(1 for o in scored if o.correct)
    if n:
        lower = rate_bound(clopper_pearson_lower(k, n, cfg.scoring.confidence))
        two = rate_bound(clopper_pearson_interval(k, n, cfg.scoring.confidence))
    else:
        lower = two = NO_BOUND
    by_level = {}
    for lv in levels:
        kk = sum(1 for o in scored if o.correct_at(lv))
        by_level[lv] = LevelCount(correct=kk, R1=sig(kk / n) if n else None)
    failures = [{"id": o.id, "reasons": o.reasons, "predicted": o.predicted(cfg.scoring.score),
                 "reference": o.reference(cfg.scoring.score)} for o in items if not o.correct]
    raised = [{"id": o.id, **o.symmetry_raised.to_dict()} for o in items if o.symmetry_raised]
    return Summary(
        n=n, n_errors=len(errors), kinds=Kinds(crystals=len(crystals), molecules=len(mols)),
        score=cfg.scoring.score if scored is crystals else "+".join(cfg.molecules.molecule_levels),
        truth=cfg.scoring.truth if scored is crystals else "input", correct=k, R1=sig(k / n) if n else None,
        bound=lower, interval=two, by_level=by_level, by_crystal_system=_by_crystal_system(crystals),
        phantom_census=_phantom_census(items), failure_reasons=_failure_reasons(failures), failures=failures,
        label_mismatches=[{"id": o.id, "levels": o.label_mismatch, "dataset": o.label_dataset,
                           "rendered": o.label_rendered} for o in items if o.label_mismatch],
        cross_check_disagreements=cross_check_disagreements(items),
        # the standardisation gave another space group than the input's at τ (evaluate.symmetry_raised)
        n_symmetry_raised=len(raised), symmetry_raised=raised, errors=errors,
        molecules=molecule_summary(mols, cfg.scoring.confidence))


def _failure_reasons(failures: list[dict]) -> dict[str, int]:
    """How many failures give each reason, in ``REASON_ORDER``."""
    reasons: dict[str, int] = {}
    for f in failures:
        for r in f["reasons"]:
            reasons[r] = reasons.get(r, 0) + 1
    return dict(sorted(reasons.items(), key=lambda kv: REASON_ORDER.index(kv[0])))


def crystal_system_of(o: ItemOutcome) -> str:
    """The crystal system a crystal item is counted under: the dataset's label, else the rendered cell's, else
    "unknown" (the JSON summary's and the streamed tally's one rule)."""
    return o.label("dataset").get("crystal_system") or o.label("rendered").get("crystal_system") or "unknown"


def _by_crystal_system(crystals: list[ItemOutcome]) -> dict[str, LevelCount]:
    """n and correct per crystal system (the dataset's label, else the rendered cell's), in the order of
    ``CRYSTAL_SYSTEMS``; systems outside it last."""
    n: dict[str, int] = {}
    correct: dict[str, int] = {}
    for o in crystals:
        cs = crystal_system_of(o)
        n[cs] = n.get(cs, 0) + 1
        correct[cs] = correct.get(cs, 0) + int(o.correct)
    order = {c: i for i, c in enumerate(CRYSTAL_SYSTEMS)}
    return {cs: LevelCount(n=n[cs], correct=correct[cs]) for cs in sorted(n, key=lambda cs: order.get(cs, 99))}


def _phantom_census(outcomes: list[ItemOutcome]) -> PhantomCensus:
    """Items with phantoms or missing atoms and their totals, oracle failures, unique, exact and certified
    items."""
    oracle = [o.oracle or OracleReport() for o in outcomes]
    return PhantomCensus(
        items_with_phantoms=sum(1 for x in oracle if x.n_phantoms),
        total_phantoms=sum(x.n_phantoms or 0 for x in oracle),
        items_with_missing_atoms=sum(1 for x in oracle if x.n_missing),
        total_missing_atoms=sum(x.n_missing or 0 for x in oracle),
        items_oracle_failed=sum(1 for x in oracle if x.status not in (ABSENT, None, "ok")),
        items_unique=sum(1 for o in outcomes if o.unique),
        items_exact=sum(1 for o in outcomes if o.exact),
        items_certified=sum(1 for o in outcomes if o.certified),
    )


#: ``bound`` and ``interval`` when no item was scored (the JSON summary's and the streamed one's)
NO_BOUND = RateBound(text="no item could be read or certified: no bound")


def rate_bound(b) -> RateBound:
    """The summary's ``bound`` / ``interval`` of an exact Clopper–Pearson bound (``stats.Bound``): its fields,
    floats at 9 significant digits, and its sentence (``text``)."""
    return RateBound(**{k: (sig(v) if isinstance(v, float) else v) for k, v in b.to_dict().items()},
                     text=b.describe())


# --- the truth R1 is scored against, in words ---------------------------------------------------------------------

def truth_counts(items) -> dict[str, int]:
    """What the truth of each certified crystal is, counted (additive over items: the streamed tally merges it):
    ``"n"`` crystals, ``"dataset:<level>"`` of them with a dataset label at that level (under ``truth = dataset``
    the label R1 compares with there; the input's own symmetry elsewhere: ``evaluate._reference``)."""
    out: dict[str, int] = {}
    for o in items:
        if o.is_error or o.is_molecule:
            continue
        out["n"] = out.get("n", 0) + 1
        for lv in o.label("dataset"):
            if lv in LEVELS:
                out[f"dataset:{lv}"] = out.get(f"dataset:{lv}", 0) + 1
    return out


#: the truth where no dataset label is: the rendered cell's label (the input cell's where standardisation raised it)
OWN = "the symmetry of the input itself"


def truth_text(counts: dict[str, int], score: str, truth: str = "dataset", columns=()) -> str:
    """The truth R1 at ``score`` was scored against, in words (``truth_counts``' ``counts``): the dataset's label
    (naming its ``columns``, a database's label columns) where every item has one there, the input's own symmetry
    where none has, the count of each when they mix; when the dataset labels other levels only, which (they are
    scored on the by-level line); a rule other than ``dataset`` as it is named; no item scored said so."""
    if truth != "dataset":
        return truth
    n = counts.get("n", 0)
    if not n:
        return "none: no item was scored"
    named = f" (column{'s' if len(columns) > 1 else ''} {', '.join(columns)})" if columns else ""
    d = counts.get(f"dataset:{score}", 0)
    if d == n:
        return "dataset" + named
    if d:
        return f"dataset{named} for {d} items, {OWN} for {n - d}"
    others = [lv for lv in LEVELS if counts.get(f"dataset:{lv}")]
    if not others:
        return f"{OWN} (no dataset label)"
    return (f"{OWN} at {score}: the dataset's labels{named} state {' and '.join(others)} only, scored on the "
            "by-level line")
