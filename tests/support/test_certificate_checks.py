"""The invariant checker itself (``tests/support/certificate_checks.py``): every committed certificate passes it,
and each invariant, broken on its own in a copy whose digest is re-sealed, is caught by name."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from tests.support.certificate_checks import assert_certificate_consistent, canonical_digest

DATA = Path(__file__).resolve().parents[1] / "data"
FIXTURES = sorted((DATA / "certificates" / "v1").glob("*.json")) + sorted((DATA / "exports" / "v1").glob(
    "*/certificate.json"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.relative_to(DATA).as_posix())
def test_every_committed_certificate_is_consistent(path):
    assert_certificate_consistent(path)


def _load(rel: str) -> dict:
    return json.loads((DATA / rel).read_text(encoding="utf-8"))


def _sealed(cert: dict) -> dict:
    if isinstance(cert["digest"], dict):
        cert["digest"]["value"] = canonical_digest(cert)
    else:
        cert["digest"] = canonical_digest(cert)
    return cert


def _error_item(iid: str) -> dict:
    return {"id": iid, "outcome": "error", "correct": False, "error": "read: file x.cif, field cell: broken"}


def test_the_digest_is_recomputed():
    cert = _load("certificates/v1/crystals.json")
    cert["summary"]["n"] += 0  # untouched: passes
    assert_certificate_consistent(cert)
    cert["config"] = {**cert["config"], "note": "edited"}
    with pytest.raises(AssertionError, match="digest"):
        assert_certificate_consistent(cert)


def test_an_unreadable_item_counted_in_the_denominator_is_caught():
    cert = _load("certificates/v1/crystals.json")
    n, k = cert["summary"]["n"], cert["summary"]["correct"]
    cert["items"].append(_error_item("broken"))
    cert["summary"]["n_errors"] = 1
    cert["summary"]["errors"] = [{"id": "broken", "error": "read: file x.cif, field cell: broken"}]
    assert_certificate_consistent(_sealed(copy.deepcopy(cert)))  # R1 = k/n over the readable items: consistent
    cert["summary"]["n"] = n + 1  # the error item counted in n (R1 and the bounds left as k/n)
    with pytest.raises(AssertionError, match="n/correct"):
        assert_certificate_consistent(_sealed(cert))
    assert k == n  # the fixture's items are all correct: 4/4 above, never 4/5


@pytest.mark.parametrize("edit, match", [
    (lambda c: c["summary"].__setitem__("R1", 0.5), "R1 = correct / n"),
    (lambda c: c["summary"]["bound"].__setitem__("lower", 1.5), "one-sided bound around R1"),
    (lambda c: c["summary"]["bound"].__setitem__("lower", 0.47), "Clopper"),
    (lambda c: c["summary"]["interval"].__setitem__("lower", 0.3), "two-sided lower"),
    (lambda c: c["summary"]["kinds"].__setitem__("crystals", 3), "kinds"),
    (lambda c: c["summary"]["by_level"]["space_group"].__setitem__("correct", 3), "by_level.space_group"),
    (lambda c: c["summary"]["by_crystal_system"]["cubic"].__setitem__("n", 3), "by_crystal_system"),
    (lambda c: c["summary"]["phantom_census"].__setitem__("total_phantoms", 2), "phantom census"),
    (lambda c: c["items"][0].__setitem__("outcome", "incorrect"), "correct=True"),
    (lambda c: c["items"][0]["correct_by_level"].__setitem__("crystal_system", False), "correct_by_level"),
    (lambda c: c["items"][0]["label_reconstructed"].__setitem__("space_group", 1), "correct at space_group"),
    (lambda c: c["items"][0]["oracle"].__setitem__("n_phantoms", 1), "certified with phantoms"),
    (lambda c: c["tolerances"].pop("tau"), "tolerances.tau"),
])
def test_each_view_invariant_is_caught(edit, match):
    cert = _load("certificates/v1/crystals.json")
    edit(cert)
    with pytest.raises(AssertionError, match=match):
        assert_certificate_consistent(_sealed(cert))


def test_molecule_levels_follow_their_definitions():
    cert = _load("certificates/v1/molecules.json")
    cert["items"][0]["molecule"]["handedness"]["status"] = "undetermined"
    with pytest.raises(AssertionError, match="handedness"):
        assert_certificate_consistent(_sealed(cert))


def test_task_ceilings_are_one_over_the_consistent_answers():
    cert = _load("exports/v1/task/certificate.json")
    cert["items"][0]["consistent"].append("move y 3")
    cert["items"][0]["n_consistent"] = 2
    with pytest.raises(AssertionError, match=r"1/\|consistent\|"):
        assert_certificate_consistent(_sealed(cert))


def test_interaction_summary_counts_every_item():
    cert = _load("exports/v1/interaction/certificate.json")
    cert["summary"]["all"]["n"] = 2
    with pytest.raises(AssertionError, match="summary.all.n"):
        assert_certificate_consistent(_sealed(cert))
