"""verify tells rounding error of the machine from a different result (float-noise floors).

An exact reconstruction's max_position_error is ~1e-15 Å and its last digits depend on the CPU's BLAS and SIMD
kernels (the /1 fixture's Mg item recomputes to 4.97e-16 Å on an AMD EPYC where it was written as 4.00e-16 Å).
Below the 1e-12 Å floor two values are the same result; above it, or in any other field, a difference is one.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from viewcert.certify.certificate import compute_digest
from viewcert.certify.verify import FLOAT_NOISE_FLOORS, VerifyReport, compare

FIXTURE = Path(__file__).parent / "data" / "certificates" / "v1" / "crystals.json"


def _recomputed(mutate) -> tuple[dict, dict]:
    cert = json.loads(FIXTURE.read_text())
    new = copy.deepcopy(cert)
    mutate(new["items"][0])
    new["digest"]["value"] = compute_digest(new)
    return cert, new


def _report(cert, new) -> VerifyReport:
    rep = VerifyReport(digest_ok=True, stored_digest=cert["digest"]["value"])
    compare(cert, new, rep)
    return rep


def test_the_floor_is_stated_in_angstrom_and_far_below_a_real_error():
    assert FLOAT_NOISE_FLOORS == {"oracle.max_position_error": 1e-12}


def test_noise_below_the_floor_is_the_same_result_and_the_same_bytes():
    cert, new = _recomputed(lambda it: it["oracle"].__setitem__("max_position_error",
                                                               it["oracle"]["max_position_error"] + 3e-16))
    assert new["digest"]["value"] != cert["digest"]["value"]  # the raw bytes did differ
    rep = _report(cert, new)
    assert rep.ok and rep.byte_identical and not rep.item_diffs
    iid = cert["items"][0]["id"]
    assert list(rep.noise_diffs) == [iid] and rep.noise_diffs[iid][0][0] == "oracle.max_position_error"
    assert any(line.startswith("float noise: 1 value(s) in 1 item(s)") for line in rep.lines())


def test_an_error_above_the_floor_is_a_difference():
    cert, new = _recomputed(lambda it: it["oracle"].__setitem__("max_position_error", 2e-6))
    rep = _report(cert, new)
    assert not rep.ok and not rep.noise_diffs
    assert rep.item_diffs[cert["items"][0]["id"]][0][0] == "oracle.max_position_error"


def test_a_tiny_difference_in_another_field_is_still_a_difference():
    cert, new = _recomputed(lambda it: it.__setitem__("uniqueness_margin", (it.get("uniqueness_margin") or 0) + 1e-16
                                                      if isinstance(it.get("uniqueness_margin"), float) else 1e-16))
    rep = _report(cert, new)
    assert not rep.ok and not rep.noise_diffs
