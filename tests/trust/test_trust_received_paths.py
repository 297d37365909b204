"""Paths named inside a received certificate (issue 38, class 1): nothing a certificate names is opened unless its
real path lies inside the trusted folder (``--inputs``) and, where the certificate records a SHA-256, its bytes
match (``viewcert.io.confine``, the one place that decides). Every reader of such paths is planted with a case of
its own: ``verify`` of a transformation-task certificate (``input``, ``settings.protocol``), of an interaction
certificate (a complex folder whose ligand file is a symlink out), and ``explore`` of a task export and of a
certify output (``location.input`` outside; an input file whose SHA-256 is not the certificate's).

Layout: ``T`` = the trusted folder, ``X`` = a folder outside it holding the real input and a secret; the
certificate is edited to name them and re-digested (a stale digest is refused before any of this)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.support.export_fixtures import CHFCLBR_XYZ, SMALL
from tests.support.hostile.corpus import GOOD_CIF, GOOD_CIF_2
from tests.support.trust_probe import one_error, run, under
from viewcert.errors import InputError
from viewcert.formats.records import INTERACTION_FORMAT, sealed
from viewcert.io.confine import confined

OUT = "outside the trusted folder"


@pytest.fixture(scope="module")
def task_export(tmp_path_factory) -> Path:
    """A zoom export of CHFClBr (orthographic axes-3, 240 x 180 px, one question)."""
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

    d = tmp_path_factory.mktemp("task_export")
    (d / "chfclbr.xyz").write_text(CHFCLBR_XYZ)
    build_task_benchmark(d / "chfclbr.xyz", d / "export", TaskExportSettings.from_options(task="zoom", seed=1, **SMALL))
    return d / "export"


def _planted(tmp_path: Path, export: Path, edit) -> tuple[Path, Path, Path]:
    """(T, X, F): X holds the input and a secret; F (inside T) is a copy of the export whose certificate was
    edited by ``edit(cert, t, x)`` and re-digested."""
    t, x = tmp_path / "trusted", tmp_path / "outside"
    x.mkdir()
    (x / "chfclbr.xyz").write_text(CHFCLBR_XYZ)
    (x / "secret.txt").write_text("secret\n")
    shutil.copytree(export, t / "f")
    cert = json.loads((t / "f" / "certificate.json").read_text())
    edit(cert, t, x)
    (t / "f" / "certificate.json").write_text(json.dumps(sealed(cert)))
    return t, x, t / "f"


def _symlink_in(t: Path, x: Path) -> str:
    os.symlink(x / "chfclbr.xyz", t / "link.xyz")
    return "link.xyz"


def _folder_with_link(t: Path, x: Path) -> str:
    (t / "mols").mkdir()
    os.symlink(x / "chfclbr.xyz", t / "mols" / "a.xyz")
    return "mols"


TASK_INPUTS = {
    "absolute": lambda t, x: str(x / "chfclbr.xyz"),
    "dotdot": lambda t, x: "../outside/chfclbr.xyz",
    "symlink-in-trusted-folder": _symlink_in,
    "folder-holding-a-symlink-out": _folder_with_link,
}


@pytest.mark.parametrize("case", list(TASK_INPUTS))
def test_verify_refuses_a_task_input_outside_and_opens_nothing_there(task_export, tmp_path, case):
    def edit(cert, t, x):
        cert["input"] = TASK_INPUTS[case](t, x)

    t, x, f = _planted(tmp_path, task_export, edit)
    code, out, seen = run(["verify", str(f / "certificate.json"), "--inputs", str(t)])
    err = one_error(out)
    assert code == 2 and "field input" in err and (OUT in err), out
    assert under(seen, x) == [], f"opened outside the trusted folder: {under(seen, x)}"


@pytest.mark.parametrize("proto", ["../outside/p.toml", "/etc/passwd.json", "p.toml"])
def test_verify_refuses_a_protocol_file_named_without_its_sha256(task_export, tmp_path, proto):
    def edit(cert, t, x):
        cert["settings"]["protocol"] = proto.replace("{x}", str(x))
        (x / "p.toml").write_text("secret = 1\n")
        (t / "p.toml").write_text("secret = 1\n")

    t, x, f = _planted(tmp_path, task_export, edit)
    code, out, seen = run(["verify", str(f / "certificate.json"), "--inputs", str(t)])
    err = one_error(out)
    assert code == 2 and "field settings.protocol" in err and "without its SHA-256" in err, out
    assert under(seen, x) == [] and under(seen, t / "p.toml") == []


def test_verify_of_a_task_certificate_inside_the_trusted_folder_still_verifies(task_export, tmp_path):
    """The control: the input named by a name inside T is read and the certificate verifies byte-identical."""
    def edit(cert, t, x):
        t.mkdir(exist_ok=True)
        (t / "chfclbr.xyz").write_text(CHFCLBR_XYZ)
        cert["input"] = "chfclbr.xyz"

    t, x, f = _planted(tmp_path, task_export, edit)
    code, out, seen = run(["verify", str(f / "certificate.json"), "--inputs", str(t)])
    assert code == 0 and "byte-identical" in out, out
    assert str((t / "chfclbr.xyz").resolve()) in [p for e, p in seen if e == "open"]
    assert under(seen, x) == []


def test_explore_never_opens_a_task_exports_input(task_export, tmp_path):
    """Issue 55: a task export records the geometry its pages draw (the after view's sidecar), so explore never
    rebuilds its questions: an input named outside T is never opened and the poses are still drawn, from the
    export's own sidecar; with the sidecar removed (an export written before it existed) the page says the poses
    are not drawn."""
    from viewcert.explore.kinds import TaskPages
    from viewcert.sanitize import html_text

    t, x, f = _planted(tmp_path, task_export, lambda c, t, x: c.update(input=str(x / "chfclbr.xyz")))
    code, out, seen = run(["explore", str(f), "--out", str(tmp_path / "site"), "--inputs", str(t),
                           "--workers", "1"])
    assert code == 0, out
    assert under(seen, x) == [], f"opened outside the trusted folder: {under(seen, x)}"
    page = (tmp_path / "site" / "items" / "0000.html").read_text()
    assert 'class="mk candidate"' in page and html_text(TaskPages.OVERLAY_NOTE) not in page
    for side in (f / "sidecars").glob("*.json"):
        side.unlink()
    code, out, _ = run(["explore", str(f), "--out", str(tmp_path / "site2"), "--inputs", str(t), "--workers", "1"])
    page = (tmp_path / "site2" / "items" / "0000.html").read_text()
    assert code == 0 and 'class="mk candidate"' not in page and html_text(TaskPages.OVERLAY_NOTE) in page


@pytest.fixture(scope="module")
def certify_output(tmp_path_factory) -> Path:
    """A certify output (no images: explore draws each item's views from its inputs) of two CIFs in IN/."""
    from viewcert.certify import CertifyConfig
    from viewcert.certify.run import certify

    d = tmp_path_factory.mktemp("certify_output")
    (d / "in").mkdir()
    (d / "in" / "nacl.cif").write_text(GOOD_CIF)
    (d / "in" / "cscl.cif").write_text(GOOD_CIF_2)
    certify(str(d / "in"), CertifyConfig(protocol="axes-3"), out=d / "cert", subset="all", n_workers=1,
            progress=False)
    return d


def _views_drawn(site: Path) -> int:
    return sum(len(re.findall(r'<svg class="overlay"', p.read_text())) for p in (site / "items").glob("*.html"))


def test_explore_draws_no_atom_of_an_input_whose_sha256_is_not_the_certificates(certify_output, tmp_path):
    t = tmp_path / "trusted"
    shutil.copytree(certify_output, t)
    code, out, _ = run(["explore", str(t / "cert"), "--out", str(tmp_path / "ok"), "--inputs", str(t)])
    assert code == 0 and _views_drawn(tmp_path / "ok") == 2 * 3, out  # the control: 2 items x axes-3
    (t / "in" / "cscl.cif").write_text(GOOD_CIF)  # another structure under the certified name
    code, out, _ = run(["explore", str(t / "cert"), "--out", str(tmp_path / "changed"), "--inputs", str(t)])
    assert code == 0 and _views_drawn(tmp_path / "changed") == 0, out


@pytest.mark.parametrize("where", ["location", "spec"])
def test_explore_never_opens_a_certify_input_named_outside(certify_output, tmp_path, where):
    t, x = tmp_path / "trusted", tmp_path / "outside"
    shutil.copytree(certify_output / "cert", t / "cert")
    shutil.copytree(certify_output / "in", x / "in")
    cert = json.loads((t / "cert" / "certificate.json").read_text())
    if where == "location":
        cert["location"]["input"] = str(x / "in")
    else:
        cert["location"] = {}
        cert["inputs"]["spec"] = "../outside/in"
    (t / "cert" / "certificate.json").write_text(json.dumps(sealed(cert)))
    code, out, seen = run(["explore", str(t / "cert"), "--out", str(tmp_path / "site"), "--inputs", str(t)])
    assert code == 0, out
    assert under(seen, x) == [], f"opened outside the trusted folder: {under(seen, x)}"
    assert _views_drawn(tmp_path / "site") == 0


def _complex_with_ligand_link(t: Path, x: Path) -> None:
    (x / "lig.sdf").write_text("secret\n")
    (t / "c1").mkdir(parents=True)
    (t / "c1" / "protein.pdb").write_text("END\n")
    os.symlink(x / "lig.sdf", t / "c1" / "ligand.sdf")


def test_verify_refuses_a_complex_whose_ligand_file_is_a_symlink_out(tmp_path):
    t, x = tmp_path / "trusted", tmp_path / "outside"
    x.mkdir()
    _complex_with_ligand_link(t, x)
    cert = sealed({"format": INTERACTION_FORMAT, "task": "pocket-ligand", "settings": {"task": "pocket-ligand"},
                   "complexes": [{"name": "c1", "ligand": "LIG", "sha256": "0" * 64}],
                   "items": [{"id": "q0000"}]})
    (t / "certificate.json").write_text(json.dumps(cert))
    code, out, seen = run(["verify", str(t / "certificate.json"), "--inputs", str(t)])
    err = one_error(out)
    assert code == 2 and "field complexes" in err and "symlink" in err and OUT in err, out
    assert under(seen, x) == []


def test_confined_is_the_one_rule(tmp_path):
    """The rule itself: inside and existing, no symlink out of a folder, the recorded SHA-256 matched."""
    t, x = tmp_path / "trusted", tmp_path / "outside"
    x.mkdir()
    _complex_with_ligand_link(t, x)
    (t / "a.txt").write_text("abc")
    root = str(t.resolve())
    sha_abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # SHA-256("abc"), FIPS 180-2
    assert confined("a.txt", root, source="c", field="f", sha256=sha_abc) == str((t / "a.txt").resolve())
    with pytest.raises(InputError, match="not the recorded"):
        confined("a.txt", root, source="c", field="f", sha256="0" * 64)
    for name in (str(x / "lig.sdf"), "../outside/lig.sdf", "c1/ligand.sdf"):
        with pytest.raises(InputError, match=OUT):
            confined(name, root, source="c", field="f")
    with pytest.raises(InputError, match="symlink"):
        confined("c1", root, source="c", field="f")
    with pytest.raises(InputError, match="is not in the trusted folder"):
        confined("absent", root, source="c", field="f")


def test_verify_parses_no_protocol_file_whose_sha256_is_not_the_certificates(tmp_path):
    """A crystal certificate made from a protocol file: the file found inside T with other bytes is not parsed;
    verify reports the input change (exit 1) without recomputing."""
    from viewcert.cameras.resolve import format_protocol
    from viewcert.certify import CertifyConfig
    from viewcert.certify.run import certify

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "nacl.cif").write_text(GOOD_CIF)
    text = format_protocol("axes-3", "toml")
    (tmp_path / "p.toml").write_text(text)
    certify(str(tmp_path / "in"), CertifyConfig(protocol=str(tmp_path / "p.toml")), out=tmp_path / "cert",
            subset="all", n_workers=1, progress=False)
    (tmp_path / "p.toml").write_text(text + "# edited\n")
    code, out, _ = run(["verify", str(tmp_path / "cert" / "certificate.json"), "--inputs", str(tmp_path)])
    assert code == 1 and "input changed: protocol file:" in out and "not the recorded" in out, out
    assert "items recomputed" not in out


def test_explore_reads_no_complex_whose_ligand_file_is_a_symlink_out(tmp_path):
    t, x = tmp_path / "trusted", tmp_path / "outside"
    x.mkdir()
    _complex_with_ligand_link(t, x)
    cert = sealed({"format": INTERACTION_FORMAT, "task": "pocket-ligand",
                   "settings": {"task": "pocket-ligand", "protocol": "axes-6", "width": 160, "height": 120},
                   "complexes": [{"name": "c1", "ligand": "LIG", "sha256": "0" * 64}],
                   "ground_truth": {"c1:LIG": {"bonds": [{"entry": "e", "donor": 0, "acceptor": 1}]}},
                   "items": [{"id": "q0000", "source_id": "c1:LIG"}]})
    (t / "f").mkdir()
    (t / "f" / "certificate.json").write_text(json.dumps(cert))
    code, out, seen = run(["explore", str(t / "f"), "--out", str(tmp_path / "site"), "--inputs", str(t),
                           "--workers", "1"])
    assert code == 0, out
    assert under(seen, x) == [], f"opened outside the trusted folder: {under(seen, x)}"
    assert under(seen, t / "c1", ("open",)) == []  # refused from the folder's listing, before any file is read


def test_a_built_in_input_is_a_name_and_needs_no_trusted_folder(tmp_path):
    """``viewcert run`` writes its explorer with no --inputs: a built-in input opens no file named by the
    certificate, so its views are drawn (axes-3: three per item)."""
    from viewcert.certify import CertifyConfig
    from viewcert.certify.inputs import load_input
    from viewcert.certify.run import certify
    from viewcert.explore import write_site

    ds = load_input("builtin:prototypes").select(["aflow:A_cF4_225_a"])
    certify(ds, CertifyConfig(protocol="axes-3"), out=tmp_path / "cert", n_workers=1, progress=False)
    write_site(tmp_path / "cert", tmp_path / "site")
    assert _views_drawn(tmp_path / "site") == 3
