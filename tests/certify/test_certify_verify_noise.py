"""verify tells rounding error of the machine from a different result (issue 37: floats at a stated resolution).

An exact reconstruction's max_position_error is ~1e-15 Å and its last digits depend on the CPU's BLAS and SIMD
kernels (the /1 fixture's Mg item recomputes to 4.97e-16 Å on an AMD EPYC where it was written as 4.00e-16 Å;
the study's 210-item certificate held 9.93e-16 Å on one CPU and 1.09e-15 Å on another). Since /3 every float is
written at the resolution the certificate states (``viewcert.resolution``): noise below it is written as 0, so
both machines write the same bytes. A certificate written before /3 is compared at that resolution; two values
one step apart are a value at a rounding boundary (reported as noise); anything further apart is a difference.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from viewcert.certify.verify import VerifyReport, compare
from viewcert.formats.records import compute_digest
from viewcert.resolution import RESOLUTIONS, quantize_tree, resolution_record

FIXTURE = Path(__file__).parents[1] / "data" / "certificates" / "v1" / "crystals.json"


def _as_v3(cert: dict) -> dict:
    """The fixture as a /3 producer writes it: floats at their resolution, the resolution stated."""
    out = quantize_tree({k: v for k, v in cert.items() if k != "digest"})
    out["resolution"] = resolution_record()
    out["digest"] = dict(cert["digest"], value=compute_digest(out))
    return out


def _recomputed(cert: dict, mutate) -> dict:
    new = copy.deepcopy(cert)
    mutate(new["items"][0])
    new["digest"]["value"] = compute_digest(new)
    return new


def _report(cert, new) -> VerifyReport:
    rep = VerifyReport(digest_ok=True, stored_digest=cert["digest"]["value"])
    compare(cert, new, rep)
    return rep


def test_the_error_resolution_is_stated_in_angstrom_far_below_a_real_error_far_above_noise():
    res, unit, _ = RESOLUTIONS["max_position_error"]
    assert (res, unit) == (1e-9, "angstrom")
    assert resolution_record()["fields"]["max_position_error"] == {"resolution": "1e-09", "unit": "angstrom"}


def test_noise_is_written_as_zero_so_two_cpus_write_the_same_bytes():
    cert = json.loads(FIXTURE.read_text())
    err = cert["items"][0]["oracle"]["max_position_error"]
    assert 0 < err < 1e-14  # the fixture holds this CPU's noise
    a = _as_v3(cert)
    b = _as_v3(_recomputed(cert, lambda it: it["oracle"].__setitem__("max_position_error", err + 3e-16)))
    assert a["items"][0]["oracle"]["max_position_error"] == 0.0
    assert a["digest"]["value"] == b["digest"]["value"]
    rep = _report(a, b)
    assert rep.ok and rep.byte_identical and not rep.noise_diffs


def test_an_older_certificate_is_compared_at_the_resolution():
    cert = json.loads(FIXTURE.read_text())  # /1: 9 significant digits, noise included
    new = _as_v3(cert)  # what a /3 recomputation writes (then restated without 'resolution' by in_format)
    del new["resolution"]
    rep = _report(cert, new)
    assert rep.ok and not rep.item_diffs and not rep.byte_identical


def test_one_step_apart_is_a_rounding_boundary_two_steps_a_difference():
    cert = _as_v3(json.loads(FIXTURE.read_text()))
    d = cert["items"][0]["oracle"]["min_same_label_distance"]
    one = _recomputed(cert, lambda it: it["oracle"].__setitem__("min_same_label_distance", round(d + 1e-6, 6)))
    rep = _report(cert, one)
    iid = cert["items"][0]["id"]
    assert rep.ok and list(rep.noise_diffs) == [iid]
    assert rep.noise_diffs[iid][0][0] == "oracle.min_same_label_distance"
    assert any("one step of their resolution" in line for line in rep.lines())
    two = _recomputed(cert, lambda it: it["oracle"].__setitem__("min_same_label_distance", round(d + 2e-6, 6)))
    rep = _report(cert, two)
    assert not rep.ok and not rep.noise_diffs
    assert rep.item_diffs[iid][0][0] == "oracle.min_same_label_distance"


def test_an_error_above_the_resolution_is_a_difference():
    cert = _as_v3(json.loads(FIXTURE.read_text()))
    rep = _report(cert, _recomputed(cert, lambda it: it["oracle"].__setitem__("max_position_error", 2e-6)))
    assert not rep.ok and not rep.noise_diffs
    assert rep.item_diffs[cert["items"][0]["id"]][0][0] == "oracle.max_position_error"
