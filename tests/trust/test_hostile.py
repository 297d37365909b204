"""Hostile inputs through the real command line (issue 11): every case of ``tests/support/hostile/corpus.py`` must
exit with its expected code and a one-line message containing its fragment, and no Python traceback may
reach the user. Certificates from elsewhere (``verify``) are edited from a real one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.hostile.corpus import BROKEN, CASES, GOOD_CIF, GOOD_CIF_2, write_case_files
from viewcert.certify.certificate import certificate_text
from viewcert.cli import app
from viewcert.formats.records import compute_digest


def invoke(argv: list[str]):
    res = CliRunner().invoke(app, argv)
    return res, res.output


def check(res, out: str, code: int, message: str) -> None:
    assert "Traceback" not in out, out
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == code, out
    errors = [line for line in out.splitlines() if line.startswith("viewcert:") or "Error" in line
              or "error" in line]
    assert any(message in line for line in errors) or message in out, out


def test_the_corpus_is_large_and_covers_every_command():
    assert len(CASES) >= 60
    commands = {next(a for a in c.argv if not a.startswith("-") and not a.isdigit()) for c in CASES}
    assert commands >= {"certify", "observe", "render", "build-benchmark", "gallery", "sweep", "verify", "ladder",
                        "audit-extraction"}
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_case(case, tmp_path):
    write_case_files(tmp_path, case.files)
    argv = [a.replace("{d}", str(tmp_path)).replace("{broken}", str(BROKEN)) for a in case.argv]
    res, out = invoke(argv)
    check(res, out, case.code, case.message)


def test_unreadable_items_are_reported_apart_and_not_in_r1(tmp_path):
    """2 good + 3 unreadable files: R1 = 2/2 (not 2/5), each unreadable item named with its file and field in
    summary.txt and on stderr, exit 1 after every output is written."""
    f = tmp_path / "f"
    f.mkdir()
    (f / "nacl.cif").write_text(GOOD_CIF)
    (f / "cscl.cif").write_text(GOOD_CIF_2)
    (f / "empty.cif").write_text("")
    shutil.copy(BROKEN / "xyz_bad_count.xyz", f / "bad.xyz")
    shutil.copy(BROKEN / "POSCAR_wrong_count", f / "POSCAR")
    out_dir = tmp_path / "o"
    res, out = invoke(["certify", str(f), "--workers", "1", "--no-plots", "--truth", "rendered", "--out",
                       str(out_dir)])
    check(res, out, 1, "3 items could not be read or certified")
    cert = json.loads((out_dir / "certificate.json").read_text())
    s = cert["summary"]
    assert (s["n"], s["correct"], s["n_errors"]) == (2, 2, 3)
    assert sorted(e["id"] for e in s["errors"]) == ["POSCAR", "bad", "empty"]
    assert all(f["id"] not in ("POSCAR", "bad", "empty") for f in s["failures"])
    text = (out_dir / "summary.txt").read_text()
    assert "R1 (crystal_system, truth = rendered): 2/2" in text and "None vs None" not in text
    assert "item bad: read: file" in text and "field count" in text
    assert "viewcert: item error: item empty: read: file" in out
    assert (out_dir / "items.csv").read_text().count("\n") == 6  # header + all 5 items, errors included


def test_fail_fast_stops_before_any_work(tmp_path):
    f = tmp_path / "f"
    f.mkdir()
    (f / "a.cif").write_text(GOOD_CIF)
    (f / "b.cif").write_text("")
    res, out = invoke(["certify", str(f), "--fail-fast", "--workers", "1", "--out", str(tmp_path / "o")])
    check(res, out, 2, "no data block")
    assert not (tmp_path / "o" / "certificate.json").exists()


def test_debug_shows_the_traceback(tmp_path):
    res = CliRunner().invoke(app, ["--debug", "certify", str(tmp_path / "nope"), "--out", str(tmp_path)])
    assert type(res.exception).__name__ == "InputError" and "does not exist" in str(res.exception)


# ---------------------------------------------------------------------------------------------- verify
@pytest.fixture(scope="module")
def folder_cert(tmp_path_factory):
    d = tmp_path_factory.mktemp("vc")
    (d / "in").mkdir()
    (d / "in" / "nacl.cif").write_text(GOOD_CIF)
    res, out = invoke(["certify", str(d / "in"), "--workers", "1", "--no-plots", "--out", str(d / "out")])
    assert res.exit_code == 0, out
    return d


def _edited(folder_cert: Path, tmp_path: Path, edit, redigest: bool = True) -> Path:
    cert = json.loads((folder_cert / "out" / "certificate.json").read_text())
    edit(cert)
    if redigest and "digest" in cert:
        cert["digest"]["value"] = compute_digest(cert)
    p = tmp_path / "c.json"
    p.write_text(certificate_text(cert) if all(isinstance(k, str) for k in cert) else json.dumps(cert))
    return p


def test_verify_trusts_only_the_inputs_folder(folder_cert, tmp_path):
    path = folder_cert / "out" / "certificate.json"
    res, out = invoke(["verify", str(path), "--workers", "1", "--inputs", str(tmp_path)])
    check(res, out, 2, "outside the trusted folder")
    assert str(folder_cert / "in") in out
    res, out = invoke(["verify", str(path), "--workers", "1", "--inputs", str(folder_cert)])
    assert res.exit_code == 0 and "verified: 1 items recomputed, byte-identical" in out, out


def test_verify_location_is_outside_the_digest(folder_cert, tmp_path):
    """The same data in another folder gives the same digest (location-free input names)."""
    moved = tmp_path / "elsewhere" / "in"
    shutil.copytree(folder_cert / "in", moved)
    res, out = invoke(["certify", str(moved), "--workers", "1", "--no-plots", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, out
    a = json.loads((folder_cert / "out" / "certificate.json").read_text())
    b = json.loads((tmp_path / "o" / "certificate.json").read_text())
    assert a["digest"]["value"] == b["digest"]["value"]
    assert a["location"]["input"] != b["location"]["input"]
    assert a["inputs"]["spec"] == "in" and a["inputs"]["files"] == {"nacl.cif": b["inputs"]["files"]["nacl.cif"]}


VERIFY_EDITS = [
    ("no-config", lambda c: c.pop("config"), "config"),
    ("item-without-id", lambda c: c["items"][0].pop("id"), "items[0].id"),
    ("fibonacci-100000", lambda c: c["config"].update(protocol="fibonacci-100000"), "max_views"),
    ("tiling-1000", lambda c: c["config"].update(tiling=[1000, 1000, 1000]), "max_tiling"),
    ("image-60000", lambda c: c["config"].update(image_size=60000), "max_pixels"),
    ("negative-delta", lambda c: c["config"].update(delta=-1), "delta"),
    ("config-not-object", lambda c: c.update(config=[1, 2]), "config"),
    ("location-etc", lambda c: c.update(location={"input": "/etc"}), "outside the trusted folder"),
    ("spec-escapes", lambda c: (c.pop("location"), c["inputs"].update(spec="../../../../etc")),
     "outside the trusted folder"),
    ("inputs-missing", lambda c: c.pop("inputs"), "inputs"),
]


@pytest.mark.parametrize("name,edit,message", VERIFY_EDITS, ids=[e[0] for e in VERIFY_EDITS])
def test_verify_hostile_certificate(folder_cert, tmp_path, name, edit, message):
    p = _edited(folder_cert, tmp_path, edit)
    res, out = invoke(["verify", str(p), "--workers", "1", "--inputs", str(tmp_path)])
    check(res, out, 2, message)


def test_summary_md_carries_no_html(tmp_path):
    """Model names, study names and answers reach summary.md as escaped text (issue 11); a single-rung ladder
    (no R4→R3 transitions) writes its report instead of failing in the transition plot."""
    (tmp_path / "x.csv").write_text("run,model,rung,item_id,sample_k,raw_output,target,category\n"
                                    "r,m,R4,a,0,<img src=x onerror=alert(1)> cubic,cubic,cubic\n"
                                    "r,m,R4,b,0,cubic,triclinic,triclinic\n")
    (tmp_path / "m.toml").write_text('[study]\nname = "<b>x</b>"\ntask = "crystal_system"\nr1 = "1"\n\n[[input]]\n'
                                     'path = "x.csv"\nmodel = "<script>alert(1)</script>"\nrung = "R4"\n')
    res, out = invoke(["ladder", "--manifest", str(tmp_path / "m.toml"), "--out", str(tmp_path / "o"),
                       "--n-boot", "100"])
    assert res.exit_code == 0, out
    md = (tmp_path / "o" / "summary.md").read_text()
    assert "<" not in md and ">" not in md
    assert "# viewcert ladder: &lt;b&gt;x&lt;/b&gt;" in md and "| &lt;script&gt;alert(1)&lt;/script&gt; | 1 |" in md


def test_an_unreadable_item_names_its_file_as_the_input_does_not_where_it_lies(tmp_path, monkeypatch):
    """The same folder certified by a relative path, by an absolute path and from a copy elsewhere gives the same
    certificate bytes: an item error names its file relative to the input ("sub/bad.xyz", "empty.cif",
    "gone.cif" for a dangling link), never the path the input was given by (issue 41's same-bytes rule: before,
    the error text inside the digest held "in/empty.cif" or "/tmp/.../in/empty.cif")."""
    (tmp_path / "a" / "in" / "sub").mkdir(parents=True)
    f = tmp_path / "a" / "in"
    (f / "nacl.cif").write_text(GOOD_CIF)
    (f / "empty.cif").write_text("")
    shutil.copy(BROKEN / "xyz_bad_count.xyz", f / "sub" / "bad.xyz")
    (f / "gone.cif").symlink_to("missing/nowhere.cif")  # dangling (its target as written): an "unreadable" item
    shutil.copytree(f, tmp_path / "b" / "in", symlinks=True)  # the same folder (its name is the input's), elsewhere
    monkeypatch.chdir(tmp_path / "a")
    runs = {"relative": "in", "absolute": str(f), "copy": str(tmp_path / "b" / "in")}
    got = {}
    for what, spec in runs.items():
        res, out = invoke(["certify", spec, "--workers", "1", "--no-plots", "--out", str(tmp_path / f"o-{what}")])
        check(res, out, 1, "3 items could not be read or certified")
        got[what] = (tmp_path / f"o-{what}" / "certificate.json").read_bytes()
        said = [line for line in out.splitlines() if "item error" in line or line.lstrip().startswith("item ")]
        assert len(said) >= 3 and not any(str(tmp_path) in x or "in/" in x for x in said)  # the console alike
    cert = json.loads(got["relative"])
    errors = {e["id"]: e["error"] for e in cert["summary"]["errors"]}
    assert sorted(errors) == ["empty", "gone", "sub/bad"]
    assert errors["empty"].startswith("read: file empty.cif")
    assert errors["sub/bad"].startswith("read: file sub/bad.xyz")
    assert errors["gone"].startswith("read: file gone.cif") and "'missing/nowhere.cif'" in errors["gone"]
    digests = {w: json.loads(b)["digest"]["value"] for w, b in got.items()}
    assert len(set(digests.values())) == 1, digests
    assert str(tmp_path) not in json.dumps({k: v for k, v in cert.items() if k != "location"})
