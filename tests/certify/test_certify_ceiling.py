"""The render ceiling per item and per benchmark: outcomes, reasons, label mismatches, certificates,
determinism and verification."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.certify import CertifyConfig, certify_item
from viewcert.certify.certificate import FORMAT, certificate_text, write_certificate
from viewcert.certify.inputs import Dataset, Item, load_input
from viewcert.certify.run import certify, items_table, run_certification, summary_text
from viewcert.certify.verify import verify_certificate
from viewcert.errors import InputError
from viewcert.formats.reader import read
from viewcert.formats.records import CeilingCertificate, StaleCertificate, compute_digest, digest_ok


@pytest.fixture(scope="module")
def protos() -> Dataset:
    return load_input("builtin:prototypes")


def _one(ds: Dataset, ident: str) -> Item:
    return ds.select([ident]).items[0]


def test_prototypes_all_correct_and_certified(protos):
    typed, run = run_certification(protos, CertifyConfig(), n_workers=1, progress=False)
    assert (typed.summary.correct, typed.summary.n, typed.format) == (20, 20, FORMAT)
    cert = typed.to_dict()  # the JSON object: the rest is about what is written
    assert_certificate_consistent(cert)
    s = cert["summary"]
    assert (s["correct"], s["n"]) == (20, 20)
    assert s["bound"]["sided"] == "one-sided-lower" and s["interval"]["sided"] == "two-sided"
    assert s["bound"]["lower"] == pytest.approx(0.05 ** (1 / 20), abs=1e-8)
    assert s["by_level"]["space_group"]["correct"] == 20
    assert s["phantom_census"]["items_certified"] == 20 and s["phantom_census"]["total_phantoms"] == 0
    assert not s["label_mismatches"] and not s["cross_check_disagreements"] and not s["errors"]
    for it in cert["items"]:
        assert it["correct"] and it["certified"] and it["reasons"] == []
        assert it["label_rendered"]["space_group"] == it["label_dataset"]["space_group"]
    assert cert["format"] == FORMAT and digest_ok(cert)
    assert cert["tolerances"]["delta"] == 0.01 and cert["tolerances"]["tau"] == 0.01
    assert len(cert["protocol"]["views"]) == 5 and len(cert["protocol"]["views"][0]["rotation"]) == 3
    assert "spglib" in cert["libraries"] and "moyopy" in cert["libraries"]
    assert "R1 (crystal_system, truth = dataset): 20/20" in summary_text(typed)
    assert items_table(typed).count("\n") == 21


def test_mislabeled_structure_is_flagged(protos):
    mg = _one(protos, "aflow:A_hP2_194_c")
    wrong = replace(mg, label={"crystal_system": "cubic", "point_group": "m-3m", "space_group": 225})
    out = certify_item(wrong, CertifyConfig()).to_dict()
    assert out["label_mismatch"] == ["crystal_system", "point_group", "space_group"]
    assert out["label_rendered"]["crystal_system"] == "hexagonal"
    assert not out["correct"] and out["reasons"] == ["label_mismatch"]
    assert out["unique"] and out["label_reconstructed"] == out["label_rendered"]
    # scored against the rendered cell instead, the item is correct, and the mismatch is still reported
    out2 = certify_item(wrong, CertifyConfig(truth="rendered")).to_dict()
    assert out2["correct"] and out2["label_mismatch"] == out["label_mismatch"]
    ds = Dataset("test", "test", (wrong, _one(protos, "aflow:A_cF4_225_a")))
    cert, _ = run_certification(ds, CertifyConfig(), n_workers=1, progress=False)
    assert_certificate_consistent(cert)
    summary = cert.to_dict()["summary"]  # the JSON objects of the mismatch and the failure
    (m,) = summary["label_mismatches"]
    assert m["id"] == "aflow:A_hP2_194_c" and m["dataset"]["crystal_system"] == "cubic"
    assert summary["failures"][0]["reasons"] == ["label_mismatch"]


def test_phantoms_with_two_views_are_reasons_with_positions(protos):
    graphite = _one(protos, "aflow:A_hP4_194_bc")
    out = certify_item(graphite, CertifyConfig(views=("axis_a", "axis_b"))).to_dict()
    assert not out["correct"] and out["reasons"][0] == "phantoms"
    assert out["oracle"]["n_phantoms"] == len(out["phantoms"]) > 0
    assert all(len(p) == 4 and p[0] == 6 for p in out["phantoms"])  # [Z, x, y, z]
    assert not out["certified"] and not out["unique"]
    # the full protocol removes them
    assert certify_item(graphite, CertifyConfig()).certified


def test_symmetry_changed_when_noise_exceeds_tau(protos):
    rutile = _one(protos, "aflow:A2B_tP6_136_f_a")
    # ideal observations: exact points whatever δ
    assert certify_item(rutile, CertifyConfig(delta=0.3, tau=0.01)).certified
    # σ = 0.02 Å noise, δ = 0.15 Å: the same atoms within δ, but positions off by more than τ = 0.001 Å
    out = certify_item(rutile, CertifyConfig(delta=0.15, tau=0.001, sigma=0.02, sigma_unit="angstrom", seed=1)).to_dict()
    assert out["unique"] and not out["correct"] and out["reasons"] == ["symmetry_changed"]
    assert out["oracle"]["max_position_error"] > 0.001
    assert out["label_reconstructed"]["crystal_system"] != out["label_rendered"]["crystal_system"]


def test_unreadable_item_is_an_error_value():
    bad = Item("broken", "cif_text", "data_x\n_cell_length_a 1\n", "0" * 64, {"crystal_system": "cubic"})
    out = certify_item(bad, CertifyConfig()).to_dict()
    assert out["outcome"] == "error" and out["reasons"] == ["error"] and out["error"].startswith("read:")
    cert, _ = run_certification(Dataset("t", "t", (bad,)), CertifyConfig(), n_workers=1, progress=False)
    assert_certificate_consistent(cert)
    assert cert.to_dict()["summary"]["errors"][0]["id"] == "broken" and cert.summary.correct == 0


def test_molecule_scored_on_exact_reconstruction():
    pytest.importorskip("biotite")
    ds = load_input("builtin:ccd:IBP")
    out = certify_item(ds.items[0], CertifyConfig()).to_dict()
    # molecules are scored on their own levels (issue 12, certify.molecule), never on a crystal label
    assert out["periodic"] is False and out["label_rendered"] is None
    assert set(out["correct_by_level"]) == {"uniqueness", "point_group", "handedness"}
    assert out["correct_by_level"]["uniqueness"] == out["unique"]
    assert out["correct"] == all(out["correct_by_level"].values())


def test_config_validation():
    for kw, field in [(dict(delta=0), "delta"), (dict(delta=0.01, tau=-1), "symprec"), (dict(score="x"), "score"),
                      (dict(truth="x"), "truth"), (dict(pairs="some"), "pairs"), (dict(tiling=(0, 1, 1)), "tiling"),
                      (dict(tiling=(2, 2, 2), periodic_merge=False), "periodic_merge")]:
        with pytest.raises(InputError) as e:
            CertifyConfig(**kw)
        assert e.value.field == field
    cfg = CertifyConfig(protocol="axes-3", delta=0.05)
    assert cfg.symmetry.tau == 0.05  # τ defaults to δ
    assert CertifyConfig.from_dict(cfg.to_dict()) == cfg
    # a named study protocol carries its study's τ (issue 57 item 8): the render-ceiling study labelled every
    # reconstruction at symprec 0.01 Å whatever δ (its released code, ../shared/anchors)
    study = CertifyConfig(delta=0.05)
    assert study.symmetry.tau == 0.01 and CertifyConfig(delta=0.05, tau=0.05).symmetry.tau == 0.05
    assert CertifyConfig.from_dict(study.to_dict()) == study


def test_same_inputs_give_byte_identical_certificates(protos, tmp_path):
    sub = protos.select([it.id for it in protos.items[:8]])
    a, _ = run_certification(sub, CertifyConfig(), n_workers=1, progress=False)
    assert_certificate_consistent(a)
    b, _ = run_certification(sub, CertifyConfig(), n_workers=2, chunk_size=3, progress=False)
    assert_certificate_consistent(b)
    assert certificate_text(a.to_dict()) == certificate_text(b.to_dict())
    write_certificate(tmp_path / "a.json", a.to_dict())
    write_certificate(tmp_path / "b.json", b.to_dict())
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert read(tmp_path / "a.json", kind="ceiling").to_dict() == json.loads(certificate_text(a.to_dict()))


def _study_layout(tmp_path, protos, ids, eval_labels, sidecar):
    from pymatgen.io.cif import CifWriter

    from viewcert.io.pymatgen_adapter import to_pymatgen

    root = tmp_path / "study"
    root.mkdir()
    structs = {}
    for i in ids:
        structs[i] = {"cif": str(CifWriter(to_pymatgen(_one(protos, i).read()))), "source": "test"}
    (root / "structures.json").write_text(json.dumps(structs))
    (root / "eval.jsonl").write_text("".join(json.dumps({"material_id": i, "crystal_system": eval_labels[i]}) + "\n"
                                             for i in ids))
    (root / "labels_sidecar.json").write_text(json.dumps(sidecar))
    return root


def test_study_layout_labels_conflicts_and_mismatch(protos, tmp_path):
    ids = ["aflow:A_cF4_225_a", "aflow:A_hP2_194_c"]
    root = _study_layout(tmp_path, protos, ids, {ids[0]: "cubic", ids[1]: "tetragonal"},
                         {ids[0]: {"crystal_system": "cubic", "point_group": "m-3m", "space_group": {"number": 225}},
                          ids[1]: {"crystal_system": "hexagonal", "point_group": "6/mmm",
                                   "space_group": {"number": 194}}})
    ds = load_input(root)
    assert ds.kind == "study" and len(ds) == 2 and set(ds.files) == {"structures.json", "eval.jsonl",
                                                                       "labels_sidecar.json"}
    mg = ds.items[1]
    assert mg.label["crystal_system"] == "tetragonal"  # what the benchmark scores (eval.jsonl)
    assert mg.label_conflicts == ("crystal_system: eval.jsonl tetragonal vs labels_sidecar.json hexagonal",)
    cert = certify(ds, CertifyConfig(), n_workers=1, progress=False)
    assert cert.summary.correct == 1
    bad = cert.items[1]
    assert bad.label_mismatch == ["crystal_system"] and bad.label_conflicts


def test_verify_recomputes_and_catches_tampering(protos, tmp_path):
    sub = protos.select([it.id for it in protos.items[:4]])
    out = tmp_path / "out"
    cert = certify(sub, CertifyConfig(), out=out, n_workers=1, progress=False)
    # a builtin subset is not a loadable spec: verify against a folder input instead
    folder = tmp_path / "cifs"
    folder.mkdir()
    from pymatgen.io.cif import CifWriter

    from viewcert.io.pymatgen_adapter import to_pymatgen

    for it in sub.items:
        (folder / (it.id.replace(":", "_") + ".cif")).write_text(str(CifWriter(to_pymatgen(it.read()))))
    cert = certify(str(folder), CertifyConfig(), out=out, n_workers=1, progress=False)
    path = out / "certificate.json"
    # certify returns the typed certificate; certificate.json is its JSON object, byte for byte
    assert isinstance(cert, CeilingCertificate) and path.read_text() == certificate_text(cert.to_dict())
    assert CeilingCertificate.from_dict(json.loads(path.read_text())).to_dict() == cert.to_dict()
    rep = verify_certificate(path, n_workers=1, progress=False, inputs_root=tmp_path)
    assert rep.ok and rep.byte_identical, rep.lines()
    assert rep.lines()[-1].startswith("verified: 4 items")

    # 1) edit an outcome, leave the digest: the digest check fails and the recomputation names the item
    bad = json.loads(path.read_text())
    bad["items"][0]["correct"] = False
    bad["items"][0]["outcome"] = "incorrect"
    (tmp_path / "t1.json").write_text(certificate_text(bad))
    with pytest.raises(StaleCertificate, match="stale certificate"):  # refused in one line (issue 26)
        verify_certificate(tmp_path / "t1.json", n_workers=1, progress=False, inputs_root=tmp_path)
    rep = verify_certificate(tmp_path / "t1.json", n_workers=1, progress=False, inputs_root=tmp_path,
                             allow_stale=True)  # downgraded: recomputed and reported
    assert not rep.digest_ok and not rep.ok
    iid = bad["items"][0]["id"]
    assert iid in rep.item_diffs and any(k == "correct" for k, _, _ in rep.item_diffs[iid])

    # 2) a careful forger also recomputes the digest: recomputation still catches it
    bad["summary"]["correct"] = 3
    bad["digest"]["value"] = compute_digest(bad)
    (tmp_path / "t2.json").write_text(certificate_text(bad))
    rep = verify_certificate(tmp_path / "t2.json", n_workers=1, progress=False, inputs_root=tmp_path)
    assert rep.digest_ok and not rep.ok
    assert any(k == "summary.correct" for k, _, _ in rep.section_diffs)
    assert any("summary.correct" in line for line in rep.lines())

    # 3) the input changed after certification
    first = sorted(folder.iterdir())[0]
    first.write_text(first.read_text().replace("_cell_length_a", "_cell_length_a ", 1))
    rep = verify_certificate(path, n_workers=1, progress=False, inputs_root=tmp_path)
    assert rep.input_changes and not rep.ok
    assert cert.to_dict()["inputs"]["kind"] == "folder"


def test_as_rendered_ceiling_observes_the_id_buffer(protos):
    """--observe visible: the oracle sees only atoms with visible pixels in the rendered ID buffer (single
    cell, study look). Atoms stacked along a view direction vanish from it; with five views only wurtzite
    and ilmenite lose an atom in more views than the oracle can do without. The mode is recorded."""
    typed, _ = run_certification(protos, CertifyConfig(observe="visible"), n_workers=1, progress=False)
    failed = {it.id: it.reasons for it in typed.items if not it.correct}
    cert = typed.to_dict()  # the JSON object: what the config records
    assert_certificate_consistent(cert)
    assert cert["config"]["observe"] == "visible" and cert["config"]["min_pixels"] == 1
    assert failed == {"aflow:AB_hP4_186_b_b": ["missing_atoms"], "aflow:AB3C_hR10_148_c_f_c": ["missing_atoms"]}
    assert cert["summary"]["correct"] == 18  # regression pin: 20 prototypes minus the two listed above
    with pytest.raises(InputError, match="observe"):
        CertifyConfig(observe="xray")
    with pytest.raises(InputError, match="noise-free"):
        CertifyConfig(observe="visible", sigma=0.1)
    with pytest.raises(InputError, match="min_pixels"):
        CertifyConfig(observe="visible", min_pixels=0)
