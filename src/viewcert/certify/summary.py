"""The benchmark summary: R1 = correct / n with exact Clopper–Pearson bounds, by level and crystal system,
the phantom census, and every failure, label mismatch, cross-check disagreement, raised symmetry and
error by id.

Items that could not be read or certified (outcome ``error``) are reported apart, under ``errors``, and are
never counted in n: R1 is a rate over the items the pipeline certified."""

from __future__ import annotations

from typing import Any

from viewcert.certify.config import CertifyConfig
from viewcert.certify.evaluate import REASON_ORDER
from viewcert.certify.molecule import molecule_summary
from viewcert.errors import InputError
from viewcert.numeric import sig
from viewcert.stats import clopper_pearson_interval, clopper_pearson_lower
from viewcert.symmetry.labels import CRYSTAL_SYSTEMS, LEVELS


def summarize(outcomes: list[dict], cfg: CertifyConfig) -> dict:
    """R1 = correct / n with exact Clopper–Pearson bounds; by level, by crystal system; phantom census;
    failures, label mismatches, cross-check disagreements and errors listed by id."""
    if not outcomes:
        raise InputError("nothing to summarize: no items", field="items")
    errors = [{"id": o["id"], "error": o.get("error") or "unknown error"} for o in outcomes
              if o["outcome"] == "error"]
    outcomes = [o for o in outcomes if o["outcome"] != "error"]
    # crystals and molecules are reported apart: the headline is the crystals' (the molecules' when the run
    # has no crystal), and "molecules" carries the molecular levels (certify.molecule)
    crystals = [o for o in outcomes if not o.get("molecule")]
    mols = [o for o in outcomes if o.get("molecule")]
    scored = crystals if crystals or not mols else mols
    levels = LEVELS if scored is crystals else cfg.molecule_levels
    n = len(scored)
    k = sum(1 for o in scored if o["correct"])
    if n:
        lower = _bound_dict(clopper_pearson_lower(k, n, cfg.confidence), True)
        two = _bound_dict(clopper_pearson_interval(k, n, cfg.confidence), True)
    else:
        lower = two = {"text": "no item could be read or certified: no bound"}
    by_level = {}
    for lv in levels:
        kk = sum(1 for o in scored if o.get("correct_by_level") and o["correct_by_level"].get(lv))
        by_level[lv] = {"correct": kk, "R1": sig(kk / n) if n else None}
    failures = [{"id": o["id"], "reasons": o["reasons"],
                 "predicted": _predicted(o, cfg), "reference": _reference(o, cfg)}
                for o in outcomes if not o["correct"]]
    mism = [{"id": o["id"], "levels": o["label_mismatch"], "dataset": o["label_dataset"],
             "rendered": o["label_rendered"]} for o in outcomes if o.get("label_mismatch")]
    xc = cross_check_disagreements(outcomes)
    raised = [{"id": o["id"], **o["symmetry_raised"]} for o in outcomes if o.get("symmetry_raised")]
    reasons: dict[str, int] = {}
    for f in failures:
        for r in f["reasons"]:
            reasons[r] = reasons.get(r, 0) + 1
    return {
        "n": n,
        "n_errors": len(errors),
        "kinds": {"crystals": len(crystals), "molecules": len(mols)},
        "score": cfg.score if scored is crystals else "+".join(cfg.molecule_levels),
        "truth": cfg.truth if scored is crystals else "input",
        "correct": k,
        "R1": sig(k / n) if n else None,
        "bound": lower,
        "interval": two,
        "by_level": by_level,
        "by_crystal_system": _by_crystal_system(crystals),
        "phantom_census": _phantom_census(outcomes),
        "failure_reasons": dict(sorted(reasons.items(), key=lambda kv: REASON_ORDER.index(kv[0]))),
        "failures": failures,
        "label_mismatches": mism,
        "cross_check_disagreements": xc,
        # the standardisation gave another space group than the input's at τ (evaluate.symmetry_raised)
        "n_symmetry_raised": len(raised),
        "symmetry_raised": raised,
        "errors": errors,
        "molecules": molecule_summary(mols, cfg.confidence),
    }


def cross_check_disagreements(outcomes: list[dict]) -> list[dict]:
    """Every certified item's spglib/moyopy disagreements (its ``cross_check``), by id."""
    return [{"id": o["id"], **o["cross_check"]} for o in outcomes if o.get("cross_check")]


def _by_crystal_system(crystals: list[dict]) -> dict[str, dict]:
    """n and correct per crystal system (the dataset's label, else the rendered cell's), in the order of
    ``CRYSTAL_SYSTEMS``; systems outside it last."""
    by_system: dict[str, dict] = {}
    for o in crystals:
        cs = (o.get("label_dataset") or {}).get("crystal_system") or (o.get("label_rendered") or {}).get(
            "crystal_system") or "unknown"
        d = by_system.setdefault(cs, {"n": 0, "correct": 0})
        d["n"] += 1
        d["correct"] += int(o["correct"])
    order = {c: i for i, c in enumerate(CRYSTAL_SYSTEMS)}
    return dict(sorted(by_system.items(), key=lambda kv: order.get(kv[0], 99)))


def _phantom_census(outcomes: list[dict]) -> dict[str, int]:
    """Items with phantoms or missing atoms and their totals, oracle failures, unique, exact and certified
    items."""
    oracle = [o.get("oracle") or {} for o in outcomes]
    return {
        "items_with_phantoms": sum(1 for x in oracle if x.get("n_phantoms")),
        "total_phantoms": sum(x.get("n_phantoms") or 0 for x in oracle),
        "items_with_missing_atoms": sum(1 for x in oracle if x.get("n_missing")),
        "total_missing_atoms": sum(x.get("n_missing") or 0 for x in oracle),
        "items_oracle_failed": sum(1 for x in oracle if x.get("status") not in (None, "ok")),
        "items_unique": sum(1 for o in outcomes if o.get("unique")),
        "items_exact": sum(1 for o in outcomes if o.get("exact")),
        "items_certified": sum(1 for o in outcomes if o.get("certified")),
    }


def _bound_dict(b, text: bool = False) -> dict:
    d = b.to_dict()
    out = {k: (sig(v) if isinstance(v, float) else v) for k, v in d.items()}
    if text:
        out["text"] = b.describe()
    return out


def _predicted(o: dict, cfg: CertifyConfig) -> Any:
    if o.get("molecule"):  # a molecule's point group, reconstructed
        return o["molecule"]["point_group"]["reconstructed"]
    return (o.get("label_reconstructed") or {}).get(cfg.score)


def _reference(o: dict, cfg: CertifyConfig) -> Any:
    if o.get("molecule"):  # the input molecule's own point group (truth = the input)
        return o["molecule"]["point_group"]["input"]
    src = o.get("reference_source")
    if src == "dataset":
        return (o.get("label_dataset") or {}).get(cfg.score)
    if src == "input":  # the standardisation raised the symmetry: the input's label is the truth
        return o["symmetry_raised"]["input"].get(cfg.score)
    return (o.get("label_rendered") or {}).get(cfg.score)
