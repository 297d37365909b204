"""δ* inside a certification (CertifyConfig(margin=True)): a hand-worked two-view case through certify, the
record equal to the design commands' standalone computation on e3 items, off by default and recorded."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from viewcert.cameras.pose import look_at
from viewcert.cameras.protocols import Protocol, View
from viewcert.certify import CertifyConfig
from viewcert.certify.evaluate import certify_item
from viewcert.certify.inputs import load_input
from viewcert.certify.run import certify
from viewcert.cli import app
from viewcert.errors import InputError
from viewcert.resolution import quantize

runner = CliRunner()

# views along −z (identity) and along −x (camera at +x, up y). Atoms A = (0, 0, 0), B = (1, 0.3, 1), both C:
# view z sees A's ray {(0, 0, t)}, view x sees B's ray {(s, 0.3, 1)}; the closest points of the two rays are
# (0, 0, 1) and (0, 0.3, 1), so the least-squares point of the tuple (A in view z, B in view x) is their
# midpoint (0, 0.15, 1) with residual 0.15 Å in each view, 1.0112 Å from A and from B: a phantom for
# δ ∈ [0.15, 1.0112). d_min / 2 = √2.09 / 2 = 0.7228 does not bind, and the other false tuple (B, A) has
# B's z-ray {(1, 0.3, t)} and A's x-ray {(s, 0, 0)}, 0.3 Å apart too, midpoint (1, 0.15, 0) → also ρ = 0.15,
# so δ* = 0.15 exactly, set by the first tuple in enumeration order (A, B).
TWO_VIEWS = Protocol("two-hand", (View("z", np.eye(3)), View("x", look_at((1.0, 0.0, 0.0), up=(0.0, 1.0, 0.0)))))


def _two_atoms(tmp_path):
    f = tmp_path / "ab.xyz"
    f.write_text("2\nA at the origin, B at (1, 0.3, 1)\nC 0 0 0\nC 1 0.3 1\n")
    return load_input(str(f))


def test_hand_worked_two_view_margin_in_the_record(tmp_path):
    ds = _two_atoms(tmp_path)
    rec = certify_item(ds.items[0], CertifyConfig(protocol=TWO_VIEWS, margin=True)).to_dict()
    um = rec["uniqueness_margin"]
    assert um["delta_star"] == 0.15 and um["bound"] == "candidate"
    assert um["near_miss"] == [0, 1] and um["near_miss_label"] == 6
    assert um["near_miss_point"] == pytest.approx([0.0, 0.15, 1.0], abs=1e-9)
    assert um["d_min"] == pytest.approx(math.sqrt(2.09), rel=1e-9)
    assert um["delta_exact"] == 0.15  # no false tuple lies below the phantom one


def test_margin_off_by_default_and_recorded(tmp_path):
    ds = _two_atoms(tmp_path)
    assert "uniqueness_margin" not in certify_item(ds.items[0], CertifyConfig(protocol=TWO_VIEWS)).to_dict()
    assert "margin" not in CertifyConfig().to_dict()  # older certificates (no field) keep their digests
    on = CertifyConfig(margin=True)
    assert on.to_dict()["margin"] is True and CertifyConfig.from_dict(on.to_dict()) == on
    with pytest.raises(InputError, match="margin"):
        CertifyConfig(margin="yes")


def test_items_csv_and_plot(tmp_path):
    ds = _two_atoms(tmp_path)
    out = tmp_path / "out"
    cert = certify(ds, CertifyConfig(protocol=TWO_VIEWS, margin=True), out=out, n_workers=1, progress=False)
    assert cert.to_dict()["config"]["margin"] is True
    rows = list(csv.DictReader((out / "items.csv").open()))
    assert [(r["delta_star"], r["delta_star_bound"]) for r in rows] == [("0.15", "candidate")]
    assert (out / "delta_star.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    cert = certify(ds, CertifyConfig(protocol=TWO_VIEWS), out=tmp_path / "off", n_workers=1, progress=False)
    assert [r["delta_star"] for r in csv.DictReader((tmp_path / "off" / "items.csv").open())] == [""]
    assert not (tmp_path / "off" / "delta_star.png").exists()


def test_certify_record_equals_the_margin_command_on_e3(tmp_path, e3_cifs, e3_eval_ids):
    folder = tmp_path / "e3"
    folder.mkdir()
    ids = [e3_eval_ids[i] for i in (0, 50, 100, 150, 209)]
    for i in ids:
        (folder / f"{i}.cif").write_text(e3_cifs[i])
    r = runner.invoke(app, ["margin", str(folder), "--protocol", "render-ceiling-5", "--out", str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    standalone = {row["id"]: row for row in csv.DictReader((tmp_path / "m" / "margins.csv").open())}
    cert = certify(load_input(str(folder)), CertifyConfig(margin=True), n_workers=1, progress=False).to_dict()
    assert len(cert["items"]) == len(ids) == len(standalone)
    for it in cert["items"]:
        um, row = it["uniqueness_margin"], standalone[it["id"]]
        # the certificate at its stated resolution (1e-6 Å, viewcert.resolution), the CSV to 9 significant digits
        assert um["delta_star"] == quantize(float(row["delta_star"]), 6)
        assert um["bound"] == row["bound"]
        assert " ".join(map(str, um["near_miss"] or [])) == row["near_miss"]
