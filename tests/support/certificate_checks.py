"""``assert_certificate_consistent``: the invariants every certificate must satisfy, derived from their
definitions (docs/formats.md "Certificate kinds", docs/reliability.md, docs/reference.md "Render ceiling",
docs/molecules.md), written here without viewcert's code: a test that produces or reads a certificate calls it.

- **digest**: SHA-256 of the compact JSON (sorted keys, UTF-8, a final newline; DEL, C1, bidi controls, line
  separators and lone surrogates as ``\\uXXXX``) of every top-level key but ``digest`` and ``location``;
- **view** certificates (``viewcert-certificate/N``): R1 = correct / n where n counts the scored kind's readable
  items (unreadable items are listed apart and never in the denominator); the census (crystals + molecules +
  errors) sums to the number of items; every item's outcome agrees with its ``correct`` flag and its flags per
  level; the exact Clopper–Pearson bound (one-sided lower ≤ R1, two-sided interval around R1, recomputed with
  scipy's beta quantiles); the per-level and per-crystal-system counts, the phantom census, the failures, errors
  and mismatches by id, recounted from the items; tolerances δ and τ present in Å;
- **table** certificates (``viewcert-certificate-table/1``): the same summary arithmetic, the shard counts and
  the chain c₀ = SHA-256("viewcert-item-table/1"), cₖ = SHA-256(cₖ₋₁ ":" sha256ₖ);
- **task** certificates: exact ceiling = 1 / |consistent answers|, the truth among them, choice ceiling =
  1 / |consistent choices|, the summary's counts and means recounted;
- **interaction** certificates: ceilings in [0, 1], the summary's count and means recounted.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scipy.stats import beta

#: characters a terminal or editor acts on, written as \\uXXXX in viewcert's JSON (docs/reliability.md)
_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")
#: a float is written at its stated resolution (docs/reliability.md: rates, bounds and means at 1e-9, rounded half
#: to even; before the resolution, 9 significant digits): one step of either apart is the same value
_STEP, _REL = 1e-9, 1e-8


def assert_certificate_consistent(cert: Mapping | Any | str | Path) -> None:
    """Fail (AssertionError naming the invariant) unless ``cert`` (a certificate dict, a typed certificate record
    (checked as its JSON object, ``to_dict``), or the path of its JSON file) satisfies every invariant of its kind
    (module docstring)."""
    if hasattr(cert, "to_dict"):
        cert = cert.to_dict()
    if not isinstance(cert, Mapping):
        cert = json.loads(Path(cert).read_text(encoding="utf-8"))
    fmt = str(cert.get("format", ""))
    _check_digest(cert, bare=fmt == "viewcert-interaction-benchmark/1")
    if fmt.startswith("viewcert-certificate-table/"):
        _check_table(cert)
    elif fmt.startswith("viewcert-certificate/"):
        _check_view(cert)
    elif fmt == "viewcert.tasks.certificate":
        _check_task(cert)
    elif fmt.startswith("viewcert-interaction-benchmark/"):
        _check_interaction(cert)
    else:
        raise AssertionError(f"not a certificate format: {fmt!r}")


def canonical_digest(cert: Mapping) -> str:
    """SHA-256 hex of the digested bytes (module docstring), computed here from the definition."""
    body = {k: v for k, v in cert.items() if k not in ("digest", "location")}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False) + "\n"
    text = _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _close(a, b, what: str) -> None:
    assert a is not None and b is not None and math.isclose(a, b, rel_tol=_REL, abs_tol=_STEP), \
        f"{what}: {a!r} != {b!r}"


def _check_digest(cert: Mapping, bare: bool) -> None:
    d = cert.get("digest")
    assert d is not None, "no digest"
    value = d if bare else d.get("value")
    if not bare:
        assert d.get("algorithm") == "sha256", f"digest algorithm {d.get('algorithm')!r}"
    assert value == canonical_digest(cert), "the digest does not recompute from the content"


# --- the exact Clopper–Pearson bounds (docs/reference.md), from scipy's beta quantiles ---------------------------

def _cp_lower(k: int, n: int, confidence: float) -> float:
    return 0.0 if k == 0 else float(beta.ppf(1 - confidence, k, n - k + 1))


def _cp_two_sided(k: int, n: int, confidence: float) -> tuple[float, float]:
    a = (1 - confidence) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def _check_bounds(s: Mapping, k: int, n: int) -> None:
    """R1 = k / n; the one-sided lower bound ≤ R1 and the two-sided interval around it, both exact."""
    if n == 0:
        assert s["R1"] is None, f"R1 {s['R1']!r} with no readable item"
        return
    _close(s["R1"], k / n, "R1 = correct / n")
    b, iv = s["bound"], s["interval"]
    assert (b["k"], b["n"], b["sided"]) == (k, n, "one-sided-lower"), f"bound counts/sidedness: {b}"
    assert (iv["k"], iv["n"], iv["sided"]) == (k, n, "two-sided"), f"interval counts/sidedness: {iv}"
    assert 0.0 <= b["lower"] <= s["R1"] <= b["upper"] == 1.0, f"one-sided bound around R1: {b}"
    assert 0.0 <= iv["lower"] <= s["R1"] <= iv["upper"] <= 1.0, f"two-sided interval around R1: {iv}"
    _close(b["lower"], _cp_lower(k, n, b["confidence"]), "Clopper–Pearson one-sided lower bound")
    lo, hi = _cp_two_sided(k, n, iv["confidence"])
    _close(iv["lower"], lo, "Clopper–Pearson two-sided lower end")
    _close(iv["upper"], hi, "Clopper–Pearson two-sided upper end")


def _check_tolerances(cert: Mapping) -> None:
    tol = cert.get("tolerances") or {}
    for key in ("delta", "tau"):
        assert isinstance(tol.get(key), int | float) and tol[key] > 0, f"tolerances.{key}: {tol.get(key)!r}"
        assert tol.get(f"{key}_unit") == "angstrom", f"tolerances.{key}_unit: {tol.get(f'{key}_unit')!r}"


# --- view certificates ---------------------------------------------------------------------------------------------

def _is_molecule(item: Mapping) -> bool:
    return bool(item.get("molecule"))


def _check_item(item: Mapping, score: str, molecule: bool) -> None:
    """The outcome, the ``correct`` flag and the flags per level tell one story (docs/formats.md,
    docs/molecules.md, docs/reference.md's Theorem 1 for ``certified``)."""
    iid, outcome, correct = item["id"], item["outcome"], item["correct"]
    assert outcome in ("correct", "incorrect", "error"), f"{iid}: outcome {outcome!r}"
    assert isinstance(correct, bool) and correct == (outcome == "correct"), f"{iid}: {outcome} but correct={correct}"
    if outcome == "error":
        assert item.get("error"), f"{iid}: an error item without its error"
        return
    by_level = item.get("correct_by_level") or {}
    oracle = item.get("oracle") or {}
    if item.get("certified"):
        assert not oracle.get("n_phantoms") and not oracle.get("n_missing"), \
            f"{iid}: certified with phantoms or missing atoms ({oracle})"
    if molecule:
        if by_level:  # correct at every molecular level scored (the levels its record holds)
            assert correct == all(by_level.values()), f"{iid}: correct={correct} but {by_level}"
        _check_molecule_levels(iid, by_level, oracle, item.get("molecule") or {})
        return
    if by_level:
        assert correct == by_level[score], f"{iid}: correct={correct} but correct_by_level[{score}]={by_level}"
        ref = item.get("label_dataset") if item.get("reference_source") == "dataset" else item.get("label_rendered")
        got = item.get("label_reconstructed") or {}
        for lv, ok in by_level.items():
            if ok and ref and lv in ref:
                assert got.get(lv) == ref[lv], f"{iid}: correct at {lv} but {got.get(lv)!r} != {ref[lv]!r}"


def _check_molecule_levels(iid: str, by_level: Mapping, oracle: Mapping, mol: Mapping) -> None:
    """docs/molecules.md's table: uniqueness = no phantom and every atom recovered; point group = the
    reconstruction's equals the input's; handedness = status determined or achiral."""
    if by_level.get("uniqueness"):
        assert not oracle.get("n_phantoms") and not oracle.get("n_missing"), f"{iid}: unique with {oracle}"
    pg = mol.get("point_group") or {}
    if "point_group" in by_level and "reconstructed" in pg:
        assert by_level["point_group"] == (pg["reconstructed"] == pg["input"]), f"{iid}: point group {pg}"
    hd = mol.get("handedness") or {}
    if "handedness" in by_level and "status" in hd:
        assert by_level["handedness"] == (hd["status"] in ("determined", "achiral")), f"{iid}: handedness {hd}"


def _check_view(cert: Mapping) -> None:
    items, s = cert["items"], cert["summary"]
    errors = [i for i in items if i["outcome"] == "error"]
    good = [i for i in items if i["outcome"] != "error"]
    crystals = [i for i in good if not _is_molecule(i)]
    mols = [i for i in good if _is_molecule(i)]
    scored = crystals if crystals or not mols else mols
    for i in items:
        _check_item(i, s["score"], _is_molecule(i))
    # the census: every item is a crystal, a molecule or an error; errors never in n
    assert s["kinds"] == {"crystals": len(crystals), "molecules": len(mols)}, f"kinds {s['kinds']}"
    assert s["n_errors"] == len(errors), f"n_errors {s['n_errors']} != {len(errors)} error items"
    assert s["kinds"]["crystals"] + s["kinds"]["molecules"] + s["n_errors"] == len(items), "census != items"
    n, k = len(scored), sum(i["correct"] for i in scored)
    assert (s["n"], s["correct"]) == (n, k), f"n/correct {s['n']}/{s['correct']} != {n}/{k}"
    _check_bounds(s, k, n)
    for lv, rec in s["by_level"].items():
        kk = sum(bool((i.get("correct_by_level") or {}).get(lv)) for i in scored)
        assert rec["correct"] == kk, f"by_level.{lv}.correct {rec['correct']} != {kk}"
        if n:
            _close(rec["R1"], kk / n, f"by_level.{lv}.R1")
    if scored is crystals and crystals and s["score"] in s["by_level"]:
        assert s["by_level"][s["score"]]["correct"] == k, "the scored level's count is not R1's"
    by_cs = s["by_crystal_system"].values()
    assert sum(d["n"] for d in by_cs) == len(crystals), "by_crystal_system does not count every crystal"
    assert sum(d["correct"] for d in by_cs) == sum(i["correct"] for i in crystals), "by_crystal_system correct"
    _check_census(s["phantom_census"], good)
    failures = [i for i in good if not i["correct"]]
    assert [f["id"] for f in s["failures"]] == [i["id"] for i in failures], "failures by id"
    assert s["failure_reasons"] == dict(Counter(r for i in failures for r in i.get("reasons") or [])), \
        "failure_reasons recount"
    assert [e["id"] for e in s.get("errors", [])] == [i["id"] for i in errors], "errors by id"
    assert [m["id"] for m in s["label_mismatches"]] == [i["id"] for i in good if i.get("label_mismatch")], \
        "label_mismatches by id"
    _check_tolerances(cert)


def _check_census(census: Mapping, good: list[Mapping]) -> None:
    oracle = [i.get("oracle") or {} for i in good]
    want = {
        "items_with_phantoms": sum(1 for o in oracle if o.get("n_phantoms")),
        "total_phantoms": sum(o.get("n_phantoms") or 0 for o in oracle),
        "items_with_missing_atoms": sum(1 for o in oracle if o.get("n_missing")),
        "total_missing_atoms": sum(o.get("n_missing") or 0 for o in oracle),
        "items_unique": sum(1 for i in good if i.get("unique")),
        "items_exact": sum(1 for i in good if i.get("exact")),
        "items_certified": sum(1 for i in good if i.get("certified")),
    }
    got = {key: census[key] for key in want}
    assert got == want, f"phantom census {got} != recount {want}"


# --- table, task and interaction certificates ----------------------------------------------------------------------

def _check_table(cert: Mapping) -> None:
    s, t = cert["summary"], cert["items_table"]
    assert sum(sh["n"] for sh in t["shards"]) == t["n_items"], "shard counts do not sum to n_items"
    assert s["kinds"]["crystals"] + s["kinds"]["molecules"] + s["n_errors"] == t["n_items"], "census != items"
    c = hashlib.sha256(b"viewcert-item-table/1").hexdigest()
    for sh in t["shards"]:
        c = hashlib.sha256(f"{c}:{sh['sha256']}".encode()).hexdigest()
    assert t["chain"] == c, "the shards do not chain"
    scored = s["kinds"]["crystals"] or s["kinds"]["molecules"]
    assert s["n"] == scored, f"n {s['n']} != the scored kind's {scored}"
    _check_bounds(s, s["correct"], s["n"])
    for lv, rec in s["by_level"].items():
        assert 0 <= rec["correct"] <= s["n"], f"by_level.{lv}"
    if s["kinds"]["crystals"]:
        assert sum(d["n"] for d in s["by_crystal_system"].values()) == s["kinds"]["crystals"], "by_crystal_system"
    _check_tolerances(cert)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def _check_task(cert: Mapping) -> None:
    items = cert["items"]
    for i in items:
        iid, n_c = i["id"], i["n_consistent"]
        if "consistent" in i:
            assert n_c == len(i["consistent"]), f"{iid}: n_consistent {n_c} != {len(i['consistent'])}"
            if "truth" in i:
                assert i["truth"] in i["consistent"], f"{iid}: the truth is not among the consistent answers"
        if "exact_ceiling" in i:
            _close(i["exact_ceiling"], 1 / n_c, f"{iid}: exact ceiling = 1/|consistent|")
        if i.get("consistent_choices"):
            _close(i["choice_ceiling"], 1 / len(i["consistent_choices"]), f"{iid}: choice ceiling")
        for key in ("exact_ceiling", "partial_ceiling", "choice_ceiling", "handedness_ceiling"):
            if key in i:
                assert 0.0 <= i[key] <= 1.0, f"{iid}: {key} {i[key]} outside [0, 1]"
    every = (cert.get("summary") or {}).get("all")
    if every is not None and items:
        assert every["n"] == len(items), f"summary.all.n {every['n']} != {len(items)} items"
        assert every["unique"] == sum(i["n_consistent"] == 1 for i in items), "summary.all.unique"
        for key in ("exact_ceiling", "partial_ceiling"):
            if key in every and all(key in i for i in items):
                _close(every[key]["mean"], _mean([i[key] for i in items]), f"summary.all.{key}.mean")
                assert every[key]["lo95"] <= every[key]["mean"] <= every[key]["hi95"], f"summary.all.{key}"
        ub = every.get("unique_bound")
        if ub:
            assert (ub["k"], ub["n"]) == (every["unique"], every["n"]), f"unique_bound counts {ub}"
            _close(ub["lower"], _cp_lower(ub["k"], ub["n"], ub["confidence"]), "unique_bound lower")
    assert cert.get("tolerances"), "no tolerances"


def _check_interaction(cert: Mapping) -> None:
    items = cert["items"]
    for i in items:
        for view in ("ideal", "rendered"):
            if "ceiling" in i.get(view, {}):
                assert 0.0 <= i[view]["ceiling"] <= 1.0, f"{i['id']}: {view} ceiling {i[view]['ceiling']}"
    every = (cert.get("summary") or {}).get("all")
    if every is not None and items:
        assert every["n"] == len(items), f"summary.all.n {every['n']} != {len(items)} items"
        for view in ("ideal", "rendered"):
            if view in every and all("ceiling" in i.get(view, {}) for i in items):
                _close(every[view]["mean"], _mean([i[view]["ceiling"] for i in items]), f"summary.all.{view}.mean")
                assert every[view]["lo"] <= every[view]["mean"] <= every[view]["hi"], f"summary.all.{view}"
    assert cert.get("settings"), "no settings (the criterion's tolerances)"
