"""The trust boundary of ``verify`` (issue 23): every path a received certificate names is resolved inside
the trusted folder (``--inputs DIR``) before anything is opened; a path outside is refused in one line with
exit 2, and a file-access probe (an audit hook on "open", "os.listdir" and "os.scandir" events) proves that
nothing outside the folder was opened, not only the exit code.

Layout of every case: ``T`` = the trusted folder (holds the certificate), ``X`` = a folder outside it
holding the real inputs, a protocol file and a "secret"; the certificate is edited to name them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.hostile.corpus import GOOD_CIF
from tests.support.trust_probe import run, under  # noqa: E402,F401
from viewcert.certify.certificate import certificate_text
from viewcert.certify.trust import inside
from viewcert.cli import app
from viewcert.formats.records import compute_digest


def verify(argv: list[str]) -> tuple[int, str, list[tuple[str, str]]]:
    """Run ``viewcert verify ...`` in this process with the probe on: (exit code, output, [(event, path)])."""
    return run(["verify", *argv, "--workers", "1"])


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Two real certificates made in X: a folder input with a named protocol, and the same input with a
    protocol file (X/axes3.toml)."""
    x = tmp_path_factory.mktemp("made")
    (x / "in").mkdir()
    (x / "in" / "nacl.cif").write_text(GOOD_CIF)
    res = CliRunner().invoke(app, ["protocol", "show", "axes-3", "--format", "toml"])
    assert res.exit_code == 0, res.output
    (x / "axes3.toml").write_text(res.output)
    for out, proto in (("named", "axes-3"), ("file", str(x / "axes3.toml"))):
        res = CliRunner().invoke(app, ["certify", str(x / "in"), "--protocol", proto, "--workers", "1",
                                       "--no-plots", "--out", str(x / out)])
        assert res.exit_code == 0, res.output
    return x


def _setup(made: Path, tmp_path: Path, which: str, edit) -> tuple[Path, Path, Path]:
    """(T, X, certificate path in T): X is a fresh copy of the made inputs plus a secret; the certificate
    ``which`` is edited by ``edit(cert, x)`` and redigested."""
    t, x = tmp_path / "trusted", tmp_path / "outside"
    t.mkdir()
    shutil.copytree(made / "in", x / "in")
    shutil.copy(made / "axes3.toml", x / "axes3.toml")
    (x / "secret.cif").write_text(GOOD_CIF)
    (x / "codes.txt").write_text("ATP\n")
    cert = json.loads((made / which / "certificate.json").read_text())
    edit(cert, x)
    cert["digest"]["value"] = compute_digest(cert)
    p = t / "certificate.json"
    p.write_text(certificate_text(cert))
    return t, x, p


def _set(cert: dict, x: Path, *, spec: str | None = None, kind: str | None = None, loc: str | None = None,
         proto_loc: str | None = None) -> None:
    if spec is not None:
        cert["inputs"]["spec"] = spec.replace("{x}", str(x))
    if kind is not None:
        cert["inputs"]["kind"] = kind
    location = cert.setdefault("location", {})
    if loc is not None:
        location["input"] = loc.replace("{x}", str(x))
    if proto_loc is not None:
        location["protocol"] = proto_loc.replace("{x}", str(x))


def check_refused(t: Path, x: Path, code: int, out: str, seen: list[str], fragment: str) -> None:
    errors = [line for line in out.splitlines() if line.startswith("viewcert: error:")]
    assert code == 2 and len(errors) == 1 and fragment in errors[0], out
    assert under(seen, x) == [], f"opened outside the trusted folder: {under(seen, x)}"
    assert "/etc/passwd" not in [p for _, p in seen]
    assert under(seen, t, ("open",)) == [str((t / "certificate.json").resolve())], seen  # the certificate alone


OUT = "outside the trusted folder"
CASES = {
    # an absolute path where a built-in name belongs, or kind "builtin" claimed for a path
    "builtin-absolute": ("named", dict(spec="builtin:{x}/secret.cif"), "not a built-in name"),
    "kind-builtin-path": ("named", dict(spec="{x}/secret.cif", kind="builtin", loc=""), OUT),
    "ccd-absolute-file": ("named", dict(spec="ccd:@{x}/codes.txt", kind="ccd"), OUT),
    "ccd-kind-with-path": ("named", dict(spec="{x}/in", kind="ccd", loc=""), OUT),
    "complex-absolute": ("named", dict(spec="complex:{x}/in#ligand=LIG", kind="complex", loc=""), OUT),
    # /etc/passwd, as the spec and as the location
    "etc-passwd-spec": ("named", dict(spec="/etc/passwd", loc=""), OUT),
    "etc-passwd-location": ("named", dict(spec="passwd", loc="/etc/passwd"), OUT),
    # the real inputs, elsewhere (the certificate's own location)
    "location-elsewhere": ("named", dict(loc="{x}/in"), OUT),
    # .. traversal out of the trusted folder
    "dotdot-spec": ("named", dict(spec="../outside/in", loc=""), OUT),
    "dotdot-deep": ("named", dict(spec="in/../../outside/secret.cif", loc=""), OUT),
    # a protocol file found only elsewhere (location.protocol names it, nothing by that name in T)
    "protocol-elsewhere": ("file", dict(loc="in", proto_loc="{x}/axes3.toml"), OUT),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_path_outside_the_trusted_folder_is_refused_and_never_opened(made, tmp_path, name):
    which, fields, fragment = CASES[name]
    t, x, cert = _setup(made, tmp_path, which, lambda c, x: _set(c, x, **fields))
    if name == "protocol-elsewhere":  # the input itself is in T, so only the protocol is outside
        shutil.copytree(x / "in", t / "in")
    code, out, seen = verify([str(cert), "--inputs", str(t)])
    check_refused(t, x, code, out, seen, fragment)


def test_a_symlink_inside_the_trusted_folder_pointing_out_is_refused(made, tmp_path):
    """Four symlinks in T pointing into X: the input folder itself, a file named as the input, an entry of
    a folder input, and the protocol file; each is refused and nothing in X is opened."""
    def edit(c, x):
        _set(c, x, spec="in", loc="")

    t, x, cert = _setup(made, tmp_path, "named", edit)
    (t / "in").symlink_to(x / "in", target_is_directory=True)
    check_refused(t, x, *verify([str(cert), "--inputs", str(t)]), OUT)

    (t / "in").unlink()
    (t / "in").mkdir()
    shutil.copy(x / "in" / "nacl.cif", t / "in" / "nacl.cif")
    (t / "in" / "evil.cif").symlink_to(x / "secret.cif")
    code, out, seen = verify([str(cert), "--inputs", str(t)])
    check_refused(t, x, code, out, seen, OUT)
    assert "evil.cif" in out

    (t / "in" / "evil.cif").unlink()
    (t / "one.cif").symlink_to(x / "secret.cif")
    data = json.loads(cert.read_text())
    data["inputs"]["spec"] = "one.cif"
    data["digest"]["value"] = compute_digest(data)
    cert.write_text(certificate_text(data))
    check_refused(t, x, *verify([str(cert), "--inputs", str(t)]), OUT)


def test_a_symlinked_protocol_file_pointing_out_is_refused(made, tmp_path):
    t, x, cert = _setup(made, tmp_path, "file", lambda c, x: _set(c, x, loc="in", proto_loc=""))
    shutil.copytree(x / "in", t / "in")
    (t / "axes3.toml").symlink_to(x / "axes3.toml")
    check_refused(t, x, *verify([str(cert), "--inputs", str(t)]), OUT)


def test_the_probe_sees_what_verify_opens(made, tmp_path):
    """Control: the same certificates verified with X trusted open X's files (the probe is not blind) and
    verify byte-identical; with T trusted and the inputs copied into it, nothing outside T is opened."""
    t, x, cert = _setup(made, tmp_path, "file", lambda c, x: _set(c, x, loc="{x}/in", proto_loc="{x}/axes3.toml"))
    code, out, seen = verify([str(cert), "--inputs", str(tmp_path)])
    assert code == 0 and "byte-identical" in out, out
    assert {str((x / "in" / "nacl.cif").resolve()), str((x / "axes3.toml").resolve())} <= set(under(seen, x))
    shutil.copytree(x / "in", t / "in")
    shutil.copy(x / "axes3.toml", t / "axes3.toml")
    code, out, seen = verify([str(cert), "--inputs", str(t)])
    assert code == 0 and "byte-identical" in out, out
    assert under(seen, x) == [] and str((t / "in" / "nacl.cif").resolve()) in under(seen, t)


def test_inside_by_hand(tmp_path):
    """Hand-worked resolutions: relative names join the root, '..' and symlinks are resolved first."""
    root = os.path.realpath(tmp_path / "r")
    os.mkdir(root)
    os.mkdir(os.path.join(root, "a"))
    os.symlink("/etc", os.path.join(root, "etc"))
    assert inside("a", root) == os.path.join(root, "a")
    assert inside("a/../a/./b.cif", root) == os.path.join(root, "a", "b.cif")
    assert inside(root, root) == root
    assert inside("..", root) is None
    assert inside("a/../../r2", root) is None  # a sibling sharing the prefix "r" is outside
    assert inside("/etc/passwd", root) is None
    assert inside("etc/passwd", root) is None  # through the symlink
    assert inside("bad\0name", root) is None
