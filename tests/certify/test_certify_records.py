"""Typed records and the named parts of a configuration (issue 19, item 3).

- ``ItemOutcome``, ``Summary`` and ``Certificate`` round-trip every certificate exactly (the fixtures written
  by the /1 code, a fresh one with an unreadable item): one serialiser, the same bytes;
- ``summary_of`` on hand-built outcomes gives the hand-counted summary (R1 1/2, the exact one-sided bound
  1 − √0.95 worked by hand, failures with predicted and reference, errors apart);
- ``CertifyConfig`` is its five parts (nothing copied): they partition the settings, keep the documented
  defaults, check their own fields, and the parts constructor is the flat shorthand's value.
"""

from __future__ import annotations

import json
import math
import pickle
from dataclasses import fields
from pathlib import Path

import pytest

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.certify import CertifyConfig
from viewcert.certify.certificate import certificate_text
from viewcert.certify.config import PARTS, SETTING_PART, OracleSettings, ScoringSettings, SymmetrySettings
from viewcert.certify.inputs import load_input
from viewcert.certify.run import run_certification
from viewcert.certify.summary import summary_of
from viewcert.errors import InputError
from viewcert.formats.records import ABSENT, Certificate, ItemOutcome, Summary

V1 = Path(__file__).parents[1] / "data" / "certificates" / "v1"
BROKEN = Path(__file__).parents[1] / "data" / "broken"


@pytest.mark.parametrize("path", sorted(V1.glob("*.json")), ids=lambda p: p.stem)
def test_a_written_certificate_round_trips_exactly(path):
    raw = path.read_text()
    cert = json.loads(raw)
    typed = Certificate.from_dict(cert)
    assert typed.to_dict() == cert
    assert certificate_text(typed.to_dict()) == raw  # the same bytes as written
    assert all(isinstance(it, ItemOutcome) for it in typed.items) and isinstance(typed.summary, Summary)


def test_an_error_item_round_trips_and_is_counted_apart(tmp_path):
    (tmp_path / "NaCl.cif").write_bytes((V1 / "inputs" / "crystals" / "NaCl.cif").read_bytes())
    (tmp_path / "empty.cif").write_bytes((BROKEN / "cif_no_atoms.cif").read_bytes())
    got, _ = run_certification(load_input(str(tmp_path)), CertifyConfig(), n_workers=1, progress=False)
    cert = got.to_dict()  # the JSON object: the round trip through the reader's typed record
    assert_certificate_consistent(cert)
    typed = Certificate.from_dict(cert)
    assert typed.to_dict() == cert
    bad = next(it for it in typed.items if it.is_error)
    assert bad.formula is ABSENT and "formula" not in bad.to_dict() and bad.error
    assert typed.summary.n == 1 and typed.summary.n_errors == 1
    assert [e["id"] for e in typed.summary.errors] == [bad.id]


def test_absent_is_not_null():
    it = ItemOutcome.from_dict({"id": "a", "outcome": "correct", "correct": True, "phantoms": None, "new": 1})
    assert it.to_dict() == {"id": "a", "outcome": "correct", "correct": True, "phantoms": None, "new": 1}
    assert it.phantoms is None and it.oracle is ABSENT and it.extra == {"new": 1}
    assert pickle.loads(pickle.dumps(it)) == it and pickle.loads(pickle.dumps(ABSENT)) is ABSENT
    with pytest.raises(InputError, match="'outcome'"):
        ItemOutcome.from_dict({"id": "a", "correct": True})


def _crystal(iid, correct, reasons, system="cubic", rendered=225, recon=225):
    lab = {"crystal_system": system, "point_group": "x", "space_group": rendered, "symbol": "s"}
    return {"id": iid, "outcome": "correct" if correct else "incorrect", "correct": correct, "reasons": reasons,
            "correct_by_level": {"crystal_system": correct, "point_group": correct, "space_group": correct},
            "label_dataset": None, "label_rendered": lab,
            "label_reconstructed": {**lab, "space_group": recon}, "label_mismatch": None, "cross_check": None,
            "reference_source": "rendered", "oracle": {"n_phantoms": 0 if correct else 3, "n_missing": 0,
                                                         "status": "ok"},
            "unique": correct, "exact": correct, "certified": correct}


def test_summary_of_hand_built_outcomes():
    outs = [_crystal("a", True, []), _crystal("b", False, ["phantoms"], "hexagonal", 194, 191),
            {"id": "c", "outcome": "error", "correct": False, "reasons": ["error"], "error": "read: no atoms",
             "correct_by_level": None}]
    s = summary_of(outs, CertifyConfig(score="space_group"))
    assert (s.n, s.correct, s.n_errors, s.R1) == (2, 1, 1, 0.5)
    # hand-worked: P(X ≥ 1 | n = 2, p) = 1 − (1 − p)² = 0.05 → p = 1 − √0.95
    assert s.bound.lower == pytest.approx(1 - math.sqrt(0.95), rel=1e-5)
    assert s.failures == [{"id": "b", "reasons": ["phantoms"], "predicted": 191, "reference": 194}]
    assert s.failure_reasons == {"phantoms": 1}
    assert {k: (v.n, v.correct) for k, v in s.by_crystal_system.items()} == {"hexagonal": (1, 0), "cubic": (1, 1)}
    assert s.phantom_census.items_with_phantoms == 1 and s.phantom_census.total_phantoms == 3
    assert s.errors == [{"id": "c", "error": "read: no atoms"}] and s.n_symmetry_raised == 0
    assert summary_of([ItemOutcome.from_dict(o) for o in outs], CertifyConfig(score="space_group")) == s


#: the default configuration as every certificate records it (written out from the settings' documented
#: defaults: δ = τ = 0.01 Å, 5°, the study's standardisation, crystal-system R1 against the dataset, ...)
DEFAULT_CONFIG = {
    "protocol": "render-ceiling-5", "views": None, "delta": 0.01, "tau": 0.01, "angle_tolerance": 5.0,
    "standardize": True, "std_symprec": 0.01, "std_angle_tolerance": 5.0, "orientation": "pymatgen",
    "tiling": [1, 1, 1], "supercell": [1, 1, 1], "sigma": 0.0, "sigma_unit": "px", "seed": 0, "occlusion": False,
    "pairs": "all", "merge": None, "periodic_merge": True, "score": "crystal_system", "truth": "dataset",
    "cross_check": True, "cross_check_angle": False, "cross_check_reconstruction": False,
    "label_shortcuts": True, "confidence": 0.95, "image_size": 768, "observe": "ideal", "min_pixels": 1,
    "frame_on": "centres",
}


def test_the_configuration_is_its_parts_and_nothing_copied():
    assert [f.name for f in fields(CertifyConfig)] == ["protocol", "views", *PARTS]
    names = [f.name for cls in PARTS.values() for f in fields(cls)]
    assert len(names) == len(set(names)) == len(SETTING_PART) == 33  # + protocol, views: 35
    cfg = CertifyConfig()
    assert not any(hasattr(cfg, n) for n in names)  # read cfg.oracle.delta, not a copy
    assert cfg.to_dict() == DEFAULT_CONFIG  # the defaults left out of the record are the documented ones
    full = cfg.with_(style="spacefill", molecule_levels=("point_group",), molecule_cross_check=False, margin=True,
                     molecule_scale="per-view", constraints=("letter",)).to_dict()
    assert set(full) == {*names, "protocol", "views"}


def test_the_parts_constructor_is_the_flat_shorthand():
    cfg = CertifyConfig(protocol="axes-3", oracle=OracleSettings(delta=0.02, pairs="first"),
                        scoring=ScoringSettings(score="space_group"))
    flat = CertifyConfig(protocol="axes-3", delta=0.02, pairs="first", score="space_group")
    assert cfg == flat and cfg.to_dict() == flat.to_dict() and cfg.symmetry.tau == 0.02  # τ defaults to δ
    assert flat.oracle == OracleSettings(delta=0.02, pairs="first") and flat.symmetry.tau == 0.02
    # the study protocol (the default) states its own τ, the study's symprec 0.01 Å, whatever δ is
    assert CertifyConfig(delta=0.02).symmetry.tau == 0.01
    assert CertifyConfig(symmetry=SymmetrySettings(tau=0.03), delta=0.02).symmetry.tau == 0.03
    assert flat.with_(tiling=(2, 2, 2)).observation.tiling == (2, 2, 2)
    assert flat.with_(oracle=OracleSettings(delta=0.5)).oracle.delta == 0.5
    assert flat.with_(delta=0.5).symmetry.tau == 0.02  # a change of δ keeps the τ already set
    assert CertifyConfig.from_dict(flat.to_dict()) == flat
    assert pickle.loads(pickle.dumps(flat)) == flat
    with pytest.raises(TypeError, match="unknown setting 'render'"):
        CertifyConfig(render=1)
    with pytest.raises(InputError, match="symmetry must be a SymmetrySettings"):
        CertifyConfig(symmetry=OracleSettings())


@pytest.mark.parametrize("part, kw, fld", [(OracleSettings, {"delta": -1}, "delta"),
                                           (OracleSettings, {"pairs": "some"}, "pairs"),
                                           (SymmetrySettings, {"angle_tolerance": 0}, "angle_tolerance"),
                                           (SymmetrySettings, {"supercell": (0, 1, 1)}, "supercell"),
                                           (ScoringSettings, {"confidence": 1.0}, "confidence")])
def test_a_part_checks_its_own_settings(part, kw, fld):
    with pytest.raises(InputError) as exc:
        part(**kw)
    assert exc.value.field == fld
    with pytest.raises(InputError) as flat:  # the flat constructor says the same
        CertifyConfig(**kw)
    assert flat.value.field == fld
