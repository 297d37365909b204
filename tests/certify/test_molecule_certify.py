"""Molecules in certify: the molecular score levels, per-kind summaries, CCD inputs and bad molecule inputs."""

from __future__ import annotations

import numpy as np
import pytest

from viewcert.certify import CertifyConfig
from viewcert.certify.run import certify, items_table, summary_text


def run(spec, tmp_path, **kw):
    cfg = CertifyConfig(protocol="axes-3", **kw)
    return certify(spec, cfg, out=tmp_path / "out", n_workers=1, plots=False, progress=False)


def test_ccd_molecules_scored_on_their_own_levels(tmp_path):
    pytest.importorskip("biotite")
    cert = run("ccd:IBP,BNZ,FC6,XXXXX", tmp_path)
    s = cert.summary
    assert s.kinds.to_dict() == {"crystals": 0, "molecules": 2}
    assert s.truth == "input"
    assert s.by_crystal_system == {}
    items = {it["id"]: it for it in cert.to_dict()["items"]}  # each item's JSON object
    ibp = items["ccd:IBP"]["molecule"]
    assert ibp["point_group"]["input"] == "C1" and ibp["point_group"]["reconstructed"] == "C1"
    assert ibp["handedness"]["status"] == "determined"  # three independent views, Φ = ∅, chiral
    assert ibp["stereocentres"]["rdkit"] == [[5, "S"]] and ibp["stereocentres"]["agree"] is True
    bnz = items["ccd:BNZ"]["molecule"]
    assert bnz["point_group"]["input"] == "D6h" and bnz["handedness"]["status"] == "achiral"
    assert bnz["point_group"]["cross_check"]["pymatgen"] == "D6h"
    # bad components are per-item reasons, never a crash
    assert "ideal coordinates missing for 13 of 13 atoms" in items["ccd:FC6"]["error"]
    assert "no component 'XXXXX' in the CCD" in items["ccd:XXXXX"]["error"]
    text = summary_text(cert)
    assert "crystal system" not in text and "dataset" not in text
    assert "handedness: achiral 1, determined 1" in text
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(items_table(cert))))
    bnz_row = next(r for r in rows if r["id"] == "ccd:BNZ")
    cols = ("kind", "molecule_point_group", "molecule_point_group_reconstructed", "molecule_point_group_pymatgen",
            "handedness")
    assert tuple(bnz_row[c] for c in cols) == ("molecule", "D6h", "D6h", "D6h", "achiral")
    assert bnz_row["rendered_crystal_system"] == ""


def test_one_view_leaves_a_chiral_molecule_ambiguous(tmp_path):
    pytest.importorskip("biotite")
    cert = run("ccd:IBP", tmp_path, views=("front",), molecule_levels=("handedness",))
    it = cert.to_dict()["items"][0]  # the item's JSON object
    assert it["molecule"]["handedness"]["status"] == "not_determined"
    assert it["molecule"]["handedness"]["witness"] == "mirror ⟂ view front"
    assert it["correct_by_level"] == {"handedness": False}
    assert "handedness_ambiguous" in it["reasons"]


def test_mixed_run_reports_each_kind(tmp_path):
    cert = run("builtin:sample", tmp_path)
    s = cert.summary
    assert s.kinds.to_dict() == {"crystals": 7, "molecules": 2}
    assert s.n == 7 and s.score == "crystal_system"  # the crystals' headline
    molecules = cert.to_dict()["summary"]["molecules"]
    assert molecules["n"] == 2
    assert set(molecules["by_level"]) == {"uniqueness", "point_group", "handedness"}
    text = summary_text(cert)
    assert "crystals: R1 (crystal_system" in text and "molecules: 2 items; truth = the input molecule" in text


def _xyz(path, pos, sym="C"):
    path.write_text(f"{len(pos)}\nmade by the test\n" + "".join(f"{sym} {x:.4f} {y:.4f} {z:.4f}\n" for x, y, z in pos))


def test_bad_molecule_files_are_per_item_reasons(tmp_path):
    d = tmp_path / "mols"
    d.mkdir()
    _xyz(d / "dup.xyz", [(0, 0, 0), (0, 0, 0), (1.5, 0, 0)])
    g = np.stack(np.meshgrid(np.arange(14), np.arange(14), np.arange(14)), -1).reshape(-1, 3) * 1.5
    _xyz(d / "big.xyz", g)  # 2,744 atoms > max_atoms 2,000
    _xyz(d / "one.xyz", [(0, 0, 0)], sym="Cl")
    (d / "empty.xyz").write_text("0\nno atoms\n")
    cert = run(str(d), tmp_path)
    items = {it.id: it for it in cert.items}
    assert "duplicated" in items["dup"].error
    assert "max_atoms" in items["big"].error
    assert items["empty"].outcome == "error"
    one = items["one"].to_dict()["molecule"]  # a single atom: point group Kh, no handedness to fix
    assert one["point_group"]["input"] == "Kh" and one["handedness"]["status"] == "achiral"


def test_ccd_certificate_verifies(tmp_path):
    pytest.importorskip("biotite")
    from viewcert.certify.verify import verify_certificate

    run("ccd:HOH,IBP", tmp_path)
    rep = verify_certificate(tmp_path / "out" / "certificate.json")
    assert rep.ok
