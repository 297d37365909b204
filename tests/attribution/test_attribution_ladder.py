"""Canonical table checks, manifests, and the ladder on small synthetic arms worked out by hand."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from viewcert.attribution.ladder import (
    build_ladder,
    ceiling_from_certificate,
    ceiling_from_number,
    parse_fraction,
)
from viewcert.attribution.readers import read_manifest
from viewcert.attribution.table import (
    ResultTable,
    canonical_rung,
    check_consistency,
    load_manifest,
    make_frame,
    manifest_from_study_dir,
)
from viewcert.errors import InputError
from viewcert.formats.records import StaleCertificate, compute_digest, sealed
from viewcert.stats import BootstrapSettings

H = Path(__file__).resolve().parents[1] / "data" / "harness"
SYSTEMS = ["triclinic", "monoclinic", "orthorhombic", "tetragonal", "trigonal", "hexagonal", "cubic"]


def _row(model="m", rung="R4", item="i0", k=0, answer="cubic", target="cubic", status="ok", score=None):
    return {"run": "r", "model": model, "rung": rung, "item_id": item, "sample_k": k, "raw_output": answer,
            "parsed_answer": answer if status == "ok" else None, "target": target,
            "score": (1.0 if answer == target and status == "ok" else 0.0) if score is None else score,
            "parse_status": status, "category": target, "source_file": f"{model}-{rung}.csv", "harness": "native"}


def test_make_frame_validates_rows():
    f = make_frame([_row(), _row(item="i1")], source="a.csv")
    assert list(f.columns)[:3] == ["run", "model", "rung"] and f["sample_k"].dtype == np.int64
    with pytest.raises(InputError) as e:
        make_frame([_row(), _row()], source="a.csv")
    assert "duplicate item id 'i0'" in str(e.value) and "rows 1, 2" in str(e.value) and "a.csv" in str(e.value)
    bad = _row(status="weird")
    with pytest.raises(InputError, match="row 1: parse_status"):
        make_frame([bad])
    bad = _row()
    bad["parsed_answer"] = None
    with pytest.raises(InputError, match="answer exactly when"):
        make_frame([bad])
    bad = _row(score=1.5)
    with pytest.raises(InputError, match="score"):
        make_frame([_row(item="x"), bad])
    bad = _row()
    del bad["target"]
    with pytest.raises(InputError, match="lacks target"):
        make_frame([bad])


def test_rung_aliases():
    assert canonical_rung("frontier") == "R4" and canonical_rung("r3coords") == "R3"
    assert canonical_rung("noimage") == "no-image" and canonical_rung("Pixels") == "R4"
    with pytest.raises(InputError, match="unknown rung 'R5'"):
        canonical_rung("R5")


def test_manifest_errors(tmp_path):
    p = tmp_path / "m.toml"
    p.write_text("[[input]]\npath = 'x.csv'\n")
    with pytest.raises(InputError) as e:
        load_manifest(p)
    assert "input[0] lacks 'rung'" in str(e.value) and e.value.field == "input[0].rung"
    p.write_text("[[input]]\npath = 'x.csv'\nrung = 'R4'\nharness = 'helm'\n")
    with pytest.raises(InputError, match="harness 'helm'"):
        load_manifest(p)
    p.write_text("[study]\nname = 1\n")
    with pytest.raises(InputError, match="no \\[\\[input\\]\\]"):
        load_manifest(p)
    p.write_text("this is = = not toml")
    with pytest.raises(InputError, match="not valid TOML"):
        load_manifest(p)


def test_manifest_from_study_file_names(tmp_path):
    d = tmp_path / "release" / "predictions"
    d.mkdir(parents=True)
    shutil.copy(H / "study" / "frontier__beta__lab-13b__K3.json", d)
    m = manifest_from_study_dir(tmp_path)
    assert len(m.entries) == 1 and m.entries[0].rung == "R4" and m.entries[0].harness == "study"
    assert m.items is None
    (d / "weird_name.json").write_text("{}")
    with pytest.raises(InputError) as e:
        manifest_from_study_dir(tmp_path)
    assert "weird_name.json" in str(e.value)


def _write_native(path: Path, rows: list[dict]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _arm_rows(model, rung, targets, answers, statuses=None, k=0):
    statuses = statuses or ["ok"] * len(targets)
    out = []
    for i, (t, a, s) in enumerate(zip(targets, answers, statuses, strict=True)):
        r = {"model": model, "rung": rung, "item_id": f"item{i:03d}", "sample_k": k, "target": t,
             "raw_output": a if s == "ok" else ("" if s == "unparseable" else None)}
        if s != "ok":
            r["parse_status"] = s
        out.append(r)
    return out


def _manifest(tmp_path: Path, files: dict[str, list[dict]], r1: str = "1", items: list | None = None) -> Path:
    lines = ["[study]", f"r1 = '{r1}'"]
    if items is not None:
        (tmp_path / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items))
        lines.append("items = 'items.jsonl'")
    for name, rows in files.items():
        _write_native(tmp_path / name, rows)
        lines += ["[[input]]", f"path = '{name}'", f"rung = '{rows[0]['rung']}'", f"model = '{rows[0]['model']}'"]
    p = tmp_path / "m.toml"
    p.write_text("\n".join(lines) + "\n")
    return p


def _ladder(path, **kw):
    m = load_manifest(path)
    table, cov = read_manifest(m)
    cs = [ceiling_from_number(m.r1, cov.universe)]
    kw.setdefault("bootstrap", BootstrapSettings(n_boot=500))
    return build_ladder(table, cov, cs, labels=SYSTEMS, **kw), table, cov


TARGETS = [SYSTEMS[i % 7] for i in range(100)]


def _answers(n_right: int) -> list[str]:
    """First n_right items right, the rest answered with a wrong label."""
    return [t if i < n_right else ("cubic" if t != "cubic" else "triclinic") for i, t in enumerate(TARGETS)]


def test_shares_from_counts_by_hand(tmp_path):
    p = _manifest(tmp_path, {
        "r4.csv": _arm_rows("m", "R4", TARGETS, _answers(40)),
        "r3.csv": _arm_rows("m", "R3", TARGETS, _answers(70)),
    })
    lad, _, _ = _ladder(p)
    d = lad.decomposition.iloc[0]
    assert (d["R4"], d["R3"]) == (40, 70)
    assert d["gap_exact"] == "3/10" and d["residual_exact"] == "3/10" and d["share_exact"] == "1/2"
    assert d["residual_limited"] == False  # noqa: E712 - equal gap and residual is not residual-limited
    a = lad.arms.set_index("rung")
    assert a.loc["R4", "correct"] == 40 and a.loc["R4", "scored"]
    lo, hi = a.loc["R4", ["ci_lo", "ci_hi"]]
    assert lo < 0.4 < hi
    # McNemar R4 -> R3: 30 items fixed, none broken
    t = lad.tests[lad.tests["family"] == "adjacent measured rungs"].iloc[0]
    assert (t["lower_only"], t["upper_only"]) == (0, 30)
    tr = lad.transitions.iloc[0]
    assert (tr["R4_wrong_R3_right"], tr["R4_right_R3_wrong"]) == (30, 0)


@pytest.mark.parametrize("n_err, scored", [(5, True), (6, False)])
def test_api_errors_above_threshold_mark_the_arm_unscored(tmp_path, n_err, scored):
    statuses = ["api_error"] * n_err + ["ok"] * (100 - n_err)
    p = _manifest(tmp_path, {
        "r4.csv": _arm_rows("m", "R4", TARGETS, _answers(40), statuses),
        "r3.csv": _arm_rows("m", "R3", TARGETS, _answers(70)),
    })
    lad, _, _ = _ladder(p)
    a = lad.arms.set_index("rung").loc["R4"]
    assert a["scored"] == scored
    assert a["correct"] == 40 - n_err  # reported, never zeroed
    if not scored:
        assert "6/100 API errors" in a["unscored_reason"]
        assert lad.decomposition.iloc[0]["status"].startswith("not computed: R4 unscored")
    lad2, _, _ = _ladder(p, threshold=0.10)
    assert lad2.arms.set_index("rung").loc["R4", "scored"]


def test_unparseable_items_and_refusals_count_against_the_arm(tmp_path):
    statuses = ["unparseable"] * 4 + ["refused"] * 3 + ["ok"] * 93
    p = _manifest(tmp_path, {"n.csv": _arm_rows("m", "no-image", TARGETS, _answers(20), statuses),
                             "r4.csv": _arm_rows("m", "R4", TARGETS, _answers(40))})
    lad, _, _ = _ladder(p)
    a = lad.arms.set_index("rung").loc["no-image"]
    assert not a["scored"] and a["items_without_answer"] == 7
    assert "7/100 items without an answer (3 refused, 4 unparseable" in a["unscored_reason"]
    assert a["failure_reasons"] == "4× unparseable (recorded in the file); 3× refused (recorded in the file)"


def test_items_missing_from_a_rung_are_counted_not_dropped(tmp_path):
    r3 = _arm_rows("m", "R3", TARGETS, _answers(70))
    r3 = [r for r in r3 if r["item_id"] not in ("item000", "item001", "item002")]  # three right answers gone
    p = _manifest(tmp_path, {"r4.csv": _arm_rows("m", "R4", TARGETS, _answers(40)), "r3.csv": r3})
    lad, _, cov = _ladder(p)
    assert cov.missing("m", "R3") == ("item000", "item001", "item002")
    row = lad.coverage.set_index(["model", "rung"]).loc[("m", "R3")]
    assert row["missing"] == 3 and row["missing_ids"] == "item000 item001 item002"
    a = lad.arms.set_index("rung").loc["R3"]
    assert a["n"] == 100 and a["correct"] == 67 and a["missing_items"] == 3 and a["scored"]
    # with the universe file, an unknown item is an error naming the file
    items = [{"material_id": f"item{i:03d}", "crystal_system": t} for i, t in enumerate(TARGETS[:99])]
    p = _manifest(tmp_path, {"r4.csv": _arm_rows("m", "R4", TARGETS, _answers(40))}, items=items)
    with pytest.raises(InputError) as e:
        _ladder(p)
    assert "item099" in str(e.value) and "r4.csv" in str(e.value)


def test_mismatched_targets_between_rungs_name_both_files(tmp_path):
    r3 = _arm_rows("m", "R3", TARGETS, _answers(70))
    r3[5]["target"] = "cubic" if r3[5]["target"] != "cubic" else "triclinic"
    p = _manifest(tmp_path, {"r4.csv": _arm_rows("m", "R4", TARGETS, _answers(40)), "r3.csv": r3})
    with pytest.raises(InputError) as e:
        _ladder(p)
    msg = str(e.value)
    assert "mismatched targets" in msg and "item005" in msg and "r3.csv" in msg and "r4.csv" in msg
    assert e.value.field == "target"


def test_tie_rules_change_counts_as_stated(tmp_path):
    rows = []
    for i, t in enumerate(TARGETS[:10]):
        wrong = "cubic" if t != "cubic" else "triclinic"
        first, second = (t, wrong) if i % 2 == 0 else (wrong, t)  # a 1-1 tie, right answer first on even items
        rows += [{"model": "m", "rung": "R4", "item_id": f"item{i:03d}", "sample_k": k, "target": t,
                  "raw_output": a} for k, a in enumerate((first, second))]
    p = _manifest(tmp_path, {"r4.csv": rows})
    assert _ladder(p)[0].arms.iloc[0]["correct"] == 5 and _ladder(p)[0].arms.iloc[0]["ties"] == 10
    assert _ladder(p, tie_rule="none")[0].arms.iloc[0]["correct"] == 0


def test_ceilings(tmp_path):
    assert parse_fraction("0.9524") == Fraction(2381, 2500)
    assert parse_fraction("200/210") == Fraction(20, 21)
    assert parse_fraction(1.0) == 1
    with pytest.raises(InputError, match="not a number"):
        parse_fraction("high")
    with pytest.raises(InputError, match="\\[0, 1\\]"):
        ceiling_from_number("1.2")
    c = ceiling_from_number("200/210", ["a", "b"])
    assert c.label == "R1 = 200/210 = 0.9524" and c.per_item is None and (c.correct, c.n) == (200, 210)
    assert ceiling_from_number("1", ["a", "b"]).per_item.all()
    ids = [json.loads(x)["material_id"] for x in (H / "items.jsonl").read_text().splitlines()]
    cert = ceiling_from_certificate(H / "certificate_example.json", ids)
    assert cert.value == Fraction(7, 8) and cert.delta == 0.01 and cert.tau == 0.01
    assert cert.per_item.sum() == 7 and not cert.per_item[ids.index("mp-1105758")]
    bad = json.loads((H / "certificate_example.json").read_text())
    bad["ceiling"]["correct"] = 8
    p = tmp_path / "c.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(InputError, match="disagrees"):
        ceiling_from_certificate(p, ids)
    with pytest.raises(InputError, match="not in the certificate"):
        ceiling_from_certificate(H / "certificate_example.json", [*ids, "mp-0"])


def test_reads_viewcert_certificate_layout(tmp_path):
    """A viewcert certificate (the /1 fixture of four crystals, one edited to incorrect and the headline to 3/4)
    is read typed: its counts, per-item outcomes aligned to the results' order, δ and τ, its digest."""
    cert = json.loads((Path(__file__).parents[1] / "data" / "certificates" / "v1" / "crystals.json").read_text())
    ids = ["CsCl", "Mg", "NaCl", "TiO2"]
    assert [it["id"] for it in cert["items"]] == ids and cert["summary"]["correct"] == 4
    cert["items"][2]["correct"] = False  # NaCl
    cert["summary"]["correct"] = 3
    cert["digest"]["value"] = "f" * 64
    p = tmp_path / "cert.json"
    p.write_text(json.dumps(cert))
    # the fake digest is refused in one line (issue 26: every reader checks), naming the file and the field
    with pytest.raises(StaleCertificate, match=r"field digest: stale certificate: it records digest ffff"):
        ceiling_from_certificate(p, ids[::-1])
    # downgraded on request: read, and the source says so
    c = ceiling_from_certificate(p, ids[::-1], allow_stale=True)  # aligned to the results' order
    assert c.value == Fraction(3, 4) and c.per_item.tolist() == [True, False, True, True]
    assert (c.delta, c.tau, c.digest) == (0.01, 0.01, "f" * 64)
    assert "DIGEST MISMATCH" in c.source and "digest not checked" not in c.source and c.digest_ok is False
    resealed = sealed(cert)  # the digest of the content (floats at their resolution): read, and said verified
    p.write_text(json.dumps(resealed))
    c = ceiling_from_certificate(p, ids[::-1])
    assert c.value == Fraction(3, 4) and "digest verified" in c.source and c.digest == compute_digest(resealed)
    assert c.digest_ok is True
    cert["format"] = "viewcert-certificate/9"  # a format no reader knows is refused, not read as hand-written
    p.write_text(json.dumps(sealed(cert)))
    with pytest.raises(InputError, match="not a viewcert certificate"):
        ceiling_from_certificate(p, ids)


def test_example_manifest_ladder_with_certificate():
    m = load_manifest(H / "manifest_example.toml")
    table, cov = read_manifest(m)
    cert = ceiling_from_certificate(H / "certificate_example.json", cov.universe)
    ceilings = [cert, ceiling_from_number("1", cov.universe)]
    lad = build_ladder(table, cov, ceilings, bootstrap=BootstrapSettings(n_boot=300, share_cutoff=0.0), labels=SYSTEMS)
    a = lad.arms.set_index(["model", "rung"])
    # acme R4 (VLMEvalKit): 5 of 8 right; one API-error sample of 8 = 12.5 % > 5 %: unscored, not zeroed
    assert a.loc[("acme/vlm-7b", "R4"), "correct"] == 5 and not a.loc[("acme/vlm-7b", "R4"), "scored"]
    # acme R3 (lmms-eval, 3 repeats): the majority vote is right on all 8
    assert a.loc[("acme/vlm-7b", "R3"), "correct"] == 8
    # beta R4 (study JSON): the 1-1 tie on mp-1237061 goes to the first answer (monoclinic, right)
    assert a.loc[("beta/lab-13b", "R4"), "correct"] == 6 and a.loc[("beta/lab-13b", "R4"), "ties"] == 1
    assert lad.tests.empty and list(lad.tests.columns)[-1] == "p_holm"  # no two adjacent scored rungs
    # acme R4 has 2 of 8 items without an answer (API error, ambiguous): 25 %
    lad = build_ladder(table, cov, ceilings, bootstrap=BootstrapSettings(n_boot=300, share_cutoff=0.0), labels=SYSTEMS,
                       threshold=0.3)
    a = lad.arms.set_index(["model", "rung"])
    assert a.loc[("acme/vlm-7b", "R4"), "scored"] and a.loc[("acme/vlm-7b", "R4"), "items_without_answer"] == 2
    dec = lad.decomposition.set_index(["r1", "model"])
    d = dec.loc[("R1 = 7/8 (certificate)", "acme/vlm-7b")]
    # 8 items: the per-item bootstrap of R1 − R4 reaches below 0, so the share is suppressed, not clipped
    assert d["status"] == "suppressed" and pd.isna(d["share"]) and "lower bound of R1 − R4" in d["suppression_reason"]
    assert d["residual_exact"] == "-1/8"  # R3 = 8/8 above R1 = 7/8: reported as is
    assert dec.loc[("R1 = 1", "acme/vlm-7b"), "share_exact"] == "1"
    fam = set(lad.tests["family"])
    assert "R3 vs R1 = 7/8 (certificate)" in fam and "adjacent measured rungs" in fam
    assert lad.tests["p_holm"].notna().all() and (lad.tests["p_holm"] >= lad.tests["p_value"]).all()
    assert set(lad.summary["r1"]) == {"R1 = 7/8 (certificate)", "R1 = 1"}


def test_result_table_concat_rejects_cross_file_duplicates():
    a = ResultTable(make_frame([_row()], source="a.csv"))
    b = ResultTable(make_frame([_row()], source="b.csv"))
    with pytest.raises(InputError, match="duplicate item id"):
        ResultTable.concat([a, b])
    t = ResultTable.concat([a, ResultTable(make_frame([_row(rung="R3")], source="b.csv"))])
    cov = check_consistency(t)
    assert cov.universe == ("i0",) and t.arms == [("m", "R3"), ("m", "R4")]


def test_mixed_certificate_headline_counts_its_crystals_only():
    """A certificate of crystals and molecules (the /1 fixture made from builtin:sample: seven AFLOW crystals,
    two CCD molecules) states its crystal-system ceiling over the crystals alone (certify.summary); the ladder
    reads the same 7/7 and the crystals' ids, not 9 outcomes (molecules are never scored on a crystal system)."""
    cert = Path(__file__).parents[1] / "data" / "certificates" / "v1" / "sample.json"
    raw = json.loads(cert.read_text())
    crystals = [e["id"] for e in raw["items"] if e["periodic"]]
    assert (raw["summary"]["kinds"], len(crystals)) == ({"crystals": 7, "molecules": 2}, 7)
    c = ceiling_from_certificate(cert, universe=crystals)
    assert (c.correct, c.n) == (7, 7)
    with pytest.raises(InputError, match="ccd:ATP"):
        ceiling_from_certificate(cert, universe=[*crystals, "ccd:ATP"])
