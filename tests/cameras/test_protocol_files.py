"""Protocol files: every camera form against a hand-worked matrix, exact round trips, errors naming the view
and the field, digests."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.cameras.pose import from_ase_string
from viewcert.cameras.protocol_files import (
    ProtocolSpec,
    pymol_view,
    read_protocol_file,
    spec_from_dict,
    to_pymol_view,
    write_protocol_file,
)
from viewcert.cameras.protocols import PROTOCOL_NAMES, Protocol, View, get_protocol
from viewcert.cameras.resolve import format_protocol, resolve
from viewcert.errors import InputError

ALL_FORMS_TOML = """
[protocol]
name = "mine"
description = "one view per form"
kind = "orthographic"
width = 512
height = 384

[[views]]
name = "matrix"
rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]

[[views]]
name = "down_x"
direction = [1, 0, 0]
up = [0, 0, 1]

[[views]]
name = "ase"
ase = "-90x,0y,0z"

[[views]]
name = "chimerax"
chimerax = "view matrix camera 0,0,1,0,0,1,0,0,-1,0,0,50"

[[views]]
name = "pymol"
pymol = [1, 0, 0, 0, 0, 1, 0, -1, 0,  0, 0, -50,  1, 2, 3,  40, 100, -20]
"""


def test_every_form_hand_worked(tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text(ALL_FORMS_TOML)
    spec = read_protocol_file(f)
    r = {v.name: v.rotation for v in spec.protocol.views}
    assert np.array_equal(r["matrix"], np.eye(3))
    # looking along +x with z up: screen right = up × z_cam; z_cam = −x → x_cam = (0,0,1)×(−1,0,0) = (0,−1,0)
    assert np.allclose(r["down_x"], [[0, -1, 0], [0, 0, 1], [-1, 0, 0]], atol=1e-15)
    # ASE "-90x": M = rotate → rows (1,0,0),(0,0,-1),(0,1,0); R = Mᵀ
    assert np.allclose(r["ase"], [[1, 0, 0], [0, 0, 1], [0, -1, 0]], atol=1e-15)
    # ChimeraX 3×3 part is Rᵀ: its columns (0,0,−1), (0,1,0), (1,0,0) are camera x, y, z in the scene
    assert np.allclose(r["chimerax"], [[0, 0, -1], [0, 1, 0], [1, 0, 0]], atol=0)
    # PyMOL numbers 0-8 column-major model→camera: columns (1,0,0), (0,0,1), (0,-1,0) → R rows below
    assert np.allclose(r["pymol"], [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=0)
    assert np.allclose(spec.positions[3], [0, 0, 50])
    # camera at cam-frame origin: world = origin_model + Rᵀ(0 − (0,0,−50)) = (1,2,3) + 50·R[2] = (1,2,3)+(0,50,0)
    assert np.allclose(spec.positions[4], [1, 52, 3])
    assert spec.positions[0] is None
    assert (spec.width, spec.height, spec.kind) == (512, 384, "orthographic")


def test_pymol_flag_and_inverse():
    r = from_ase_string("-60x,-30y,-15z")
    v = to_pymol_view(r, position=(1.0, -2.0, 30.0), origin=(0.5, 0.5, 0.5), orthographic=False, fov_deg=25.0)
    assert len(v) == 18
    r2, pos, kind, fov = pymol_view(v)
    assert np.allclose(r2, r, atol=1e-15) and np.allclose(pos, [1.0, -2.0, 30.0], atol=1e-12)
    assert (kind, fov) == ("perspective", 25.0)
    v[17] = 1.0
    assert pymol_view(v)[2] == "orthographic"


@pytest.mark.parametrize("name", [*PROTOCOL_NAMES, "fibonacci-7"])
@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_builtin_round_trip_identical_matrices(tmp_path, name, suffix):
    p = get_protocol(name)
    f = write_protocol_file(p, tmp_path / f"p{suffix}")
    back = read_protocol_file(f).protocol
    assert back.view_names == p.view_names
    for a, b in zip(p.views, back.views, strict=True):
        assert np.array_equal(a.rotation, b.rotation)  # bit-identical, not allclose
        assert a.ase_string == b.ase_string
    # writing what was read gives the same bytes
    f2 = write_protocol_file(read_protocol_file(f), tmp_path / f"q{suffix}")
    assert f2.read_bytes() == f.read_bytes()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=4, max_size=4).filter(
    lambda q: np.linalg.norm(q) > 1e-3))
def test_random_rotation_round_trips_exactly(tmp_path_factory, q):
    a, b, c, d = np.asarray(q) / np.linalg.norm(q)
    r = np.array([[a*a+b*b-c*c-d*d, 2*(b*c-a*d), 2*(b*d+a*c)],
                  [2*(b*c+a*d), a*a-b*b+c*c-d*d, 2*(c*d-a*b)],
                  [2*(b*d-a*c), 2*(c*d+a*b), a*a-b*b-c*c+d*d]])
    u, _, vt = np.linalg.svd(r)
    r = u @ vt
    if np.linalg.det(r) < 0:
        r = -r
    spec = ProtocolSpec(Protocol("rnd", (View("v", r),)), kind="perspective", fov_deg=33.3)
    tmp = tmp_path_factory.mktemp("rt")
    for suffix in (".toml", ".json"):
        back = read_protocol_file(write_protocol_file(spec, tmp / f"r{suffix}"))
        assert np.array_equal(back.protocol.views[0].rotation, spec.protocol.views[0].rotation)
        assert (back.kind, back.fov_deg) == ("perspective", 33.3)


def test_builtin_ase_file_equals_registry(tmp_path):
    f = tmp_path / "rc5.json"
    f.write_text(json.dumps({"views": [{"name": "axis_a", "ase": "0x,-90y,0z"},
                                        {"name": "body_diagonal", "ase": "-60x,-30y,-15z"}]}))
    spec = read_protocol_file(f)
    ref = get_protocol("render-ceiling-5")
    assert spec.protocol.name == "rc5"
    for v in spec.protocol.views:
        assert np.array_equal(v.rotation, ref.views[ref.view_names.index(v.name)].rotation)


def test_digest_is_the_files_sha256(tmp_path):
    f = tmp_path / "a.toml"
    f.write_text(ALL_FORMS_TOML)
    assert read_protocol_file(f).sha256 == hashlib.sha256(f.read_bytes()).hexdigest()


@pytest.mark.parametrize("view,match", [
    ({"name": "cam7", "direction": [1, 0]}, r"views\[cam7\]\.direction.*3 numbers"),
    ({"name": "cam7", "rotation": [[1, 0, 0], [0, 1, 0], [0, 0, 2]]}, r"views\[cam7\]\.rotation.*orthonormal"),
    ({"name": "cam7", "rotation": [[1, 0, 0], [0, 1, 0], [0, 0, -1]]}, r"views\[cam7\]\.rotation.*det"),
    ({"name": "cam7", "ase": "-60q"}, r"views\[cam7\]\.ase.*bad rotation term"),
    ({"name": "cam7", "chimerax": "view matrix camera 1,0,0"}, r"views\[cam7\]\.chimerax.*12 numbers"),
    ({"name": "cam7", "pymol": [1] * 17}, r"views\[cam7\]\.pymol.*18 numbers"),
    ({"name": "cam7"}, r"views\[cam7\].*exactly one camera form"),
    ({"name": "cam7", "ase": "0x,0y,0z", "rotation": np.eye(3).tolist()}, r"views\[cam7\].*exactly one"),
    ({"name": "cam7", "rotation": np.eye(3).tolist(), "ase_string": "-90x"}, r"views\[cam7\]\.ase_string"),
])
def test_errors_name_camera_and_field(tmp_path, view, match):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps({"views": [view]}))
    with pytest.raises(InputError, match=match) as ei:
        read_protocol_file(f)
    assert str(f) in str(ei.value)


def test_bad_header_and_files(tmp_path):
    with pytest.raises(InputError, match="protocol.kind"):
        spec_from_dict({"protocol": {"kind": "fisheye"}, "views": [{"name": "a", "ase": "0x"}]})
    with pytest.raises(InputError, match="protocol.width"):
        spec_from_dict({"protocol": {"width": 0}, "views": [{"name": "a", "ase": "0x"}]})
    with pytest.raises(InputError, match="views"):
        spec_from_dict({"views": []})
    with pytest.raises(InputError, match="same direction"):
        spec_from_dict({"views": [{"name": "a", "ase": "0x"}, {"name": "b", "ase": "0x,0y,10z"}]})
    bad = tmp_path / "x.toml"
    bad.write_text("[protocol\n")
    with pytest.raises(InputError, match="not valid TOML"):
        read_protocol_file(bad)
    with pytest.raises(InputError, match="cannot read"):
        read_protocol_file(tmp_path / "missing.toml")


def test_resolve_accepts_names_files_objects(tmp_path):
    p = get_protocol("axes-3")
    assert resolve(p).protocol is p
    assert resolve("axes-3").view_names == p.view_names
    f = write_protocol_file(p, tmp_path / "a3.toml")
    assert resolve(str(f)).view_names == p.view_names
    assert resolve(f).sha256 == hashlib.sha256(f.read_bytes()).hexdigest()
    assert resolve(f).spec.sha256 == resolve(f).sha256  # the parse and the digest are of the same bytes
    with pytest.raises(InputError, match="protocol"):
        resolve(3)


def test_format_protocol_toml_reads_back():
    import tomllib

    d = tomllib.loads(format_protocol("render-ceiling-5", "toml"))
    assert [v["ase_string"] for v in d["views"]][:2] == ["0x,-90y,0z", "-90x,0y,0z"]
    assert json.loads(format_protocol("axes-6", "json"))["protocol"]["name"] == "axes-6"
    with pytest.raises(InputError, match="format"):
        format_protocol("axes-6", "yaml")


def test_certify_config_takes_protocol_objects_and_files(tmp_path):
    from viewcert.certify import CertifyConfig

    p = get_protocol("axes-3")
    cfg = CertifyConfig(protocol=p)
    assert cfg.protocol.protocol is p
    back = CertifyConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))  # recorded in full, rebuilt
    assert [np.array_equal(a.rotation, b.rotation) for a, b in
            zip(back.protocol.protocol.views, p.views, strict=True)] == [True] * 3
    f = write_protocol_file(p, tmp_path / "a3.toml")
    assert CertifyConfig(protocol=str(f), views=("top",)).protocol.view_names == ("top",)
    with pytest.raises(InputError, match="protocol"):
        CertifyConfig(protocol=3)


def test_certificate_from_a_protocol_file_verifies(tmp_path):
    from viewcert.certify import CertifyConfig
    from viewcert.certify.run import certify
    from viewcert.certify.verify import verify_certificate

    f = tmp_path / "mine.toml"
    f.write_text(ALL_FORMS_TOML)
    cfg = CertifyConfig(protocol=str(f), views=("matrix", "down_x", "pymol"))
    cert = certify("builtin:prototypes", cfg, out=tmp_path / "out", n_workers=1, plots=False, progress=False).to_dict()
    assert_certificate_consistent(cert)
    assert cert["protocol"]["file"] == {"name": f.name, "sha256": hashlib.sha256(f.read_bytes()).hexdigest()}
    assert cert["location"]["protocol"] == str(f.resolve())  # the path: outside the digest
    assert cert["config"]["protocol_sha256"] == cert["protocol"]["file"]["sha256"]  # in shard fingerprints too
    assert [v["name"] for v in cert["protocol"]["views"]] == ["matrix", "down_x", "pymol"]
    rep = verify_certificate(tmp_path / "out" / "certificate.json", input_spec="builtin:prototypes", n_workers=1,
                             progress=False, inputs_root=tmp_path)  # the protocol file: inside the trusted folder
    assert rep.ok
    f.write_text(ALL_FORMS_TOML.replace('pymol = [1, 0, 0, 0, 0, 1, 0, -1, 0', 'pymol = [0, 1, 0, 1, 0, 0, 0, 0, -1'))
    rep = verify_certificate(tmp_path / "out" / "certificate.json", input_spec="builtin:prototypes", n_workers=1,
                             progress=False, inputs_root=tmp_path)  # the protocol file: inside the trusted folder
    assert not rep.ok
    # the changed file is not parsed (issue 38: a recorded SHA-256 is checked before anything reads the bytes):
    # an input change naming the file's new SHA-256 and the recorded one, nothing recomputed
    new_sha = hashlib.sha256(f.read_bytes()).hexdigest()
    assert [c for c in rep.input_changes if c.startswith("protocol file:") and new_sha in c
            and cert["protocol"]["file"]["sha256"] in c]
    assert not rep.section_diffs and not rep.item_diffs


def test_certify_takes_a_perspective_protocol_file_as_perspective_never_orthographic(tmp_path):
    """A perspective protocol file is certified through pinholes (``viewcert.cameras.placement``), never
    silently as orthographic; an orthographic file stays a path."""
    from viewcert.cameras.camera import PerspectiveCamera
    from viewcert.certify import CertifyConfig
    from viewcert.certify.evaluate import item_cameras
    from viewcert.structures import Structure

    path = tmp_path / "persp.toml"
    path.write_text('[protocol]\nformat = "viewcert-protocol/1"\nname = "p"\nkind = "perspective"\nfov_deg = 30\n'
                    '\n[[views]]\nname = "front"\nrotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\n'
                    '\n[[views]]\nname = "top"\nrotation = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]\n')
    cfg = CertifyConfig(protocol=str(path))
    mol = Structure(positions=[[0.0, 0.0, 0.0], [1.5, 0.0, 0.0]], numbers=[6, 8])
    cams = item_cameras(mol, cfg)
    assert [type(c) for c in cams] == [PerspectiveCamera, PerspectiveCamera]
    assert [c.name for c in cams] == ["front", "top"]
    ortho = tmp_path / "ortho.toml"
    ortho.write_text(path.read_text().replace('kind = "perspective"\nfov_deg = 30\n', 'kind = "orthographic"\n'))
    assert CertifyConfig(protocol=str(ortho)).protocol.label == str(ortho)  # resolved, kept as the file it is
    assert CertifyConfig(protocol=str(ortho)).protocol.is_file
    assert {c.kind for c in item_cameras(mol, CertifyConfig(protocol=str(ortho)))} == {"orthographic"}


def test_certificate_does_not_depend_on_where_the_protocol_file_sits(tmp_path, monkeypatch):
    """Same bytes, same certificate: the digest holds the file's name and SHA-256, the path sits in the
    undigested ``location``; verify finds the file there, or by name beside the certificate once moved."""
    import shutil

    from tests.support.perspective_files import NACL_CIF
    from viewcert.certify import CertifyConfig
    from viewcert.certify.run import certify
    from viewcert.certify.verify import verify_certificate

    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "mine.toml").write_text(ALL_FORMS_TOML)
        (tmp_path / d / "nacl.cif").write_text(NACL_CIF)
    views = ("matrix", "down_x", "pymol")
    cert_a = certify(str(tmp_path / "a" / "nacl.cif"), CertifyConfig(protocol=str(tmp_path / "a" / "mine.toml"),
                                                                     views=views),
                     out=tmp_path / "a" / "out", n_workers=1, plots=False, progress=False).to_dict()
    assert_certificate_consistent(cert_a)
    monkeypatch.chdir(tmp_path / "b")
    cert_b = certify("nacl.cif", CertifyConfig(protocol="mine.toml", views=views), out="out", n_workers=1,
                     plots=False, progress=False).to_dict()
    assert_certificate_consistent(cert_b)
    assert cert_a["digest"]["value"] == cert_b["digest"]["value"]
    assert cert_a["config"]["protocol"] == cert_b["config"]["protocol"] == "mine.toml"
    assert cert_b["location"]["protocol"] == str((tmp_path / "b" / "mine.toml").resolve())
    shutil.move(str(tmp_path / "b" / "mine.toml"), str(tmp_path / "b" / "out" / "mine.toml"))  # now beside it
    monkeypatch.chdir(tmp_path)
    rep = verify_certificate(tmp_path / "b" / "out" / "certificate.json", input_spec=str(tmp_path / "b" / "nacl.cif"),
                             n_workers=1, progress=False)
    assert rep.ok and rep.byte_identical
    (tmp_path / "b" / "out" / "mine.toml").unlink()
    with pytest.raises(InputError, match="protocol file 'mine.toml' not found"):
        verify_certificate(tmp_path / "b" / "out" / "certificate.json", input_spec=str(tmp_path / "b" / "nacl.cif"),
                           n_workers=1, progress=False)
