"""One home for camera setup (issue 19, items 1-2): the shipped images of every export kind and the ID buffer
their certificate is computed on share pixel scale and origin; a protocol file is opened once per certify run;
the resolver gives one value for a name, a file, a Protocol and a ProtocolSpec of the same protocol; a
certificate of format /1 (no framing policy recorded) still verifies."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
from ase.data import covalent_radii as ASE_COVALENT  # an independent table of the radii the styles scale
from PIL import Image
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from tests.support.export_fixtures import SMALL, chiral_xyz
from tests.support.export_fixtures import WATER_XYZ as WATER
from viewcert.benchmark.export import ExportSettings, build_benchmark
from viewcert.benchmark.molecule_export import MoleculeExportSettings, build_molecule_benchmark
from viewcert.benchmark.tasks_export import (
    TaskExportSettings,
    build_task_benchmark,
    read_molecules,
    sample_questions,
)
from viewcert.cameras import camera_from_dict, get_protocol
from viewcert.cameras.protocol_files import ProtocolSpec, write_protocol_file
from viewcert.cameras.resolve import resolve
from viewcert.certify import CertifyConfig
from viewcert.certify.digests import cameras_digest
from viewcert.certify.evaluate import item_cameras, prepare
from viewcert.certify.inputs import load_input
from viewcert.render.palette import STYLES
from viewcert.render.raster import build_scene, render
from viewcert.structures import Structure

ROCK_SALT = "builtin:aflow:AB_cF8_225_a_b"
SIZE = 160
MARGIN_PX = 16.0
# axes-3 (ChimeraX front, top, left), rows = camera x, y, z in world coordinates (cameras/protocols.py comment)
AXES3 = {"front": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "top": [[1, 0, 0], [0, 0, -1], [0, 1, 0]],
         "left": [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]}


def _png(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"))


def _dilate(mask: np.ndarray, r: int) -> np.ndarray:
    out = mask.copy()
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            out |= np.roll(np.roll(mask, dy, axis=0), dx, axis=1)
    return out


def _same_silhouette(rgb: np.ndarray, ids: np.ndarray, numbers=None, r: int = 2) -> bool:
    """The image draws nothing farther than ``r`` px from what the ID buffer shows, and every pixel the ID
    buffer shows with ``r`` px to spare is drawn (anti-aliasing and outlines stay within ``r`` px). Pixels
    of hydrogen atoms (``numbers``: the drawn atoms' Z) and of bonds may be as white as the background."""
    drawn = np.any(rgb != 255, axis=2)
    shown = ids != -1
    pale = np.zeros_like(shown)
    if numbers is not None:
        pale = (ids == -2) | ((ids >= 0) & (np.asarray(numbers)[np.maximum(ids, 0)] == 1))
    return bool(not (drawn & ~_dilate(shown, r)).any() and not (~drawn & ~pale & ~_dilate(~shown, r)).any())


# ----------------------------------------------------------------------------- crystal-system export
@pytest.fixture(scope="module")
def rock_salt(tmp_path_factory):
    out = tmp_path_factory.mktemp("rocksalt")
    build_benchmark(ROCK_SALT, out, settings=ExportSettings.from_options(size=SIZE, supersample=2, buffers=True))
    cert = json.loads((out / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    cfg = CertifyConfig.from_dict(cert["config"])
    (item,) = load_input(ROCK_SALT).items
    return out, cert, cfg, prepare(item, cfg).cell


def test_rock_salt_axis_a_shipped_and_certified_at_one_hand_worked_scale(rock_salt):
    out, cert, cfg, cell = rock_salt
    assert cert["format"] == "viewcert-certificate/3" and cert["config"]["frame_on"] == "drawn"
    assert cert["protocol"]["camera"]["policy"]["atom_radius_scale"] == STYLES["study"].radius_scale
    cams = item_cameras(cell, cfg)
    assert cameras_digest(cams) == cert["items"][0]["cameras_sha256"]  # these are the certified cameras
    side = json.loads((out / "sidecars" / "q0000_v0.json").read_text())
    shipped = camera_from_dict(side["camera"])
    assert side["view"] == cams[0].name == "axis_a"
    # hand-worked: the conventional cube (edge a) tiled 2x2x2 spans 2a on screen along b and c; the study
    # style grows it by the largest drawn radius 0.5 x covalent radius on each side, inside a 16 px margin
    a = float(cell.lattice[0, 0])
    pad = 0.5 * max(ASE_COVALENT[z] for z in set(cell.numbers.tolist()))
    assert side["framing"]["pad_angstrom"] == pytest.approx(pad, abs=1e-6)
    want = (SIZE - 2 * MARGIN_PX) / (2 * a + 2 * pad)
    assert shipped.scale == pytest.approx(want, abs=0.5e-9)  # the sidecar camera at its stated resolution
    assert cams[0].scale == pytest.approx(want, rel=1e-12)
    assert np.allclose(shipped.center, [a, a, a], atol=1e-9) and np.allclose(cams[0].center, [a, a, a], atol=1e-9)
    # before issue 19 certify framed the atom centres: the ID buffer it certified was drawn at another scale
    old = item_cameras(cell, cfg.with_(frame_on="centres"))[0]
    assert old.scale == pytest.approx((SIZE - 2 * MARGIN_PX) / (2 * a), rel=1e-12) and old.scale > shipped.scale * 1.1


def test_rock_salt_shipped_id_buffer_is_the_certified_one(rock_salt):
    out, _, cfg, cell = rock_salt
    cams = item_cameras(cell, cfg)
    scene = build_scene(cell, cfg.observation.style, tiling=cfg.observation.tiling)
    certified = render(scene, cams[0], rgb=False).atom_id
    shipped_ids = np.load(out / "buffers" / "q0000_v0.ids.npy")
    assert np.array_equal(shipped_ids, certified)
    png = _png(out / "images" / "q0000_v0.png")
    assert _same_silhouette(png, certified)
    # a known atom: the front-face atom nearest the image centre projects, with the sidecar's camera, onto a
    # pixel that shows it in both buffers and is drawn in the shipped PNG
    shipped = camera_from_dict(json.loads((out / "sidecars" / "q0000_v0.json").read_text())["camera"])
    uv, depth = shipped.project(scene.sphere_centres)
    front = np.flatnonzero(depth <= depth.min() + 1e-6)
    k = int(front[np.argmin(np.linalg.norm(uv[front] - [SIZE / 2, SIZE / 2], axis=1))])
    col, row = (int(x) for x in np.floor(uv[k]))
    assert shipped_ids[row, col] == certified[row, col] == k
    assert tuple(png[row, col]) != (255, 255, 255)
    # the check can fail: the ID buffer of the unpadded framing does not match the shipped image
    old = render(scene, item_cameras(cell, cfg.with_(frame_on="centres"))[0], rgb=False).atom_id
    assert not _same_silhouette(png, old)


# ----------------------------------------------------------------------------- molecular export
def test_molecule_export_ships_the_certified_common_scale(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    (d / "water.xyz").write_text(WATER)
    out = tmp_path / "out"
    build_molecule_benchmark(str(d), out, MoleculeExportSettings.from_options(task="point-group", size=SIZE, supersample=2))
    cert = json.loads((out / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert cert["config"]["frame_on"] == "drawn" and cert["observation_model"]["observe"] == "visible"
    cfg = CertifyConfig.from_dict(cert["config"])
    (item,) = load_input(str(d)).items
    mol = prepare(item, cfg).cell
    cams = item_cameras(mol, cfg)
    assert cameras_digest(cams) == cert["items"][0]["cameras_sha256"]
    # hand-worked common scale: one centre (the bounding-box centre) and the largest scale at which every
    # axes-3 view holds every atom grown by the style's radius scale x covalent radius
    pts = np.asarray(mol.positions)
    centre = 0.5 * (pts.min(axis=0) + pts.max(axis=0))
    pad = STYLES["ball-and-stick"].radius_scale * max(ASE_COVALENT[z] for z in mol.numbers)
    halves = [np.abs((pts - centre) @ np.asarray(r, float).T).max(axis=0)[:2] + pad for r in AXES3.values()]
    want = min((SIZE - 2 * MARGIN_PX) / (2 * h) for hh in halves for h in hh)
    scene = build_scene(mol, cfg.observation.style)
    for k, (name, cam) in enumerate(zip(AXES3, cams, strict=True)):
        shipped = camera_from_dict(json.loads((out / "sidecars" / f"q0000_v{k}.json").read_text())["camera"])
        assert shipped.name == cam.name == name
        assert shipped.scale == pytest.approx(want, abs=0.5e-9) and cam.scale == pytest.approx(want, rel=1e-12)
        assert np.allclose(shipped.center, centre, atol=1e-12) and np.allclose(cam.center, centre, atol=1e-12)
        ids = render(scene, cam, rgb=False).atom_id
        assert _same_silhouette(_png(out / "images" / f"q0000_v{k}.png"), ids, scene.numbers)


# ----------------------------------------------------------------------------- transformation-task export
def test_task_export_ships_the_cameras_its_oracle_observes(tmp_path):
    mol = chiral_xyz(tmp_path)
    settings = TaskExportSettings.from_options(task="rotation", observe="visible", **SMALL)
    build_task_benchmark(mol, tmp_path / "out", settings)
    structures, _ = read_molecules(str(mol))
    ((item, _),) = sample_questions(structures, settings)  # the same seeded question the export wrote
    # hand-worked: one common scale and centre for the three views, margin 5 % of the smaller side, no pad
    pts = np.asarray(item.positions)
    centre = 0.5 * (pts.min(axis=0) + pts.max(axis=0))
    m = 0.05 * min(SMALL["width"], SMALL["height"])
    want = min(min((SMALL["width"] - 2 * m) / (2 * h[0]), (SMALL["height"] - 2 * m) / (2 * h[1]))
               for h in (np.abs((pts - centre) @ np.asarray(r, float).T).max(axis=0) for r in AXES3.values()))
    style = settings.image.style
    for k, cam in enumerate(item.cameras):
        assert cam.scale == pytest.approx(want, rel=1e-12) and np.allclose(cam.center, centre, atol=1e-12)
        ids = render(build_scene(Structure(positions=pts, numbers=item.numbers), style), cam, rgb=False).atom_id
        assert _same_silhouette(_png(tmp_path / "out" / "images" / f"q0000_v{k}.png"), ids, item.numbers)
    # the after view: the ID buffer ``observe = "visible"`` counts pixels in (tasks.model.visible_atoms)
    pose = item.pose(item.truth)
    moved = pts @ pose.matrix.T + pose.shift
    ids = render(build_scene(Structure(positions=moved, numbers=item.numbers), style), item.after_camera,
                 rgb=False, supersample=1).atom_id
    png = _png(tmp_path / "out" / "images" / f"q0000_v{len(item.cameras)}.png")
    assert _same_silhouette(png, ids, item.numbers)
    assert not _same_silhouette(png, np.roll(ids, 4, axis=1), item.numbers)  # the check sees a 4 px shift


# ----------------------------------------------------------------------------- a protocol file is opened once
_OPENS: list[str] = []
_WATCH: list[str] = []


def _audit(event, args):
    if event == "open" and _WATCH and args and isinstance(args[0], str | bytes | os.PathLike):
        if os.path.realpath(os.fsdecode(args[0])) == _WATCH[0]:
            _OPENS.append(event)


sys.addaudithook(_audit)  # audit hooks cannot be removed; this one only counts while _WATCH names a file


def _count_opens(path: Path, fn) -> int:
    _OPENS.clear()
    _WATCH[:] = [os.path.realpath(path)]
    try:
        fn()
    finally:
        _WATCH.clear()
    return len(_OPENS)


def test_certify_opens_a_protocol_file_once_per_run(tmp_path):
    from viewcert.cli import app
    from viewcert.io.poscar import write_poscar

    f = write_protocol_file(get_protocol("render-ceiling-5"), tmp_path / "rc5.toml")
    folder = tmp_path / "in"
    folder.mkdir()
    for label in ("A_cF4_225_a", "AB_cF8_225_a_b", "A_hP2_194_c"):
        (s,) = [it.read() for it in load_input(f"builtin:aflow:{label}").items]
        write_poscar(folder / f"{label}.vasp", s)
    argv = ["certify", str(folder), "--protocol", str(f), "--out", str(tmp_path / "out"), "--workers", "1",
            "--no-plots"]
    res = None

    def run():
        nonlocal res
        res = CliRunner().invoke(app, argv)

    assert _count_opens(f, run) == 1
    assert res.exit_code == 0, res.output
    cert = json.loads((tmp_path / "out" / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert len(cert["items"]) == 3
    assert cert["protocol"]["file"]["sha256"] == hashlib.sha256(f.read_bytes()).hexdigest()
    # verify finds the file by its recorded name and reads it once too
    from viewcert.certify.verify import verify_certificate

    rep = None

    def check():
        nonlocal rep
        rep = verify_certificate(tmp_path / "out" / "certificate.json", input_spec=argv[1], n_workers=1,
                                 progress=False, inputs_root=tmp_path)

    assert _count_opens(f, check) == 1 and rep.ok


def test_a_configuration_keeps_the_bytes_it_was_made_with(tmp_path):
    """The certificate's digest and the items' cameras come from the same bytes: editing the file after the
    configuration was made changes neither (a later run reads the new bytes)."""
    from viewcert.certify.run import run_certification

    p3 = get_protocol("axes-3")
    f = write_protocol_file(p3, tmp_path / "a3.toml")
    raw = f.read_bytes()
    cfg = CertifyConfig(protocol=str(f))
    f.write_text(f.read_text().replace('name = "top"', 'name = "up"'))
    typed, _ = run_certification(load_input("builtin:aflow:A_cF4_225_a"), cfg, n_workers=1, progress=False)
    cert = typed.to_dict()  # the JSON object: the test is about what is written
    assert_certificate_consistent(cert)
    assert cert["protocol"]["file"]["sha256"] == cert["config"]["protocol_sha256"] == hashlib.sha256(raw).hexdigest()
    assert [v["name"] for v in cert["protocol"]["views"]] == ["front", "top", "left"]
    assert CertifyConfig(protocol=str(f)).protocol.view_names == ("front", "up", "left")


# ----------------------------------------------------------------------------- one resolved value
def test_resolver_gives_one_value_for_name_file_protocol_and_spec(tmp_path):
    p3 = get_protocol("axes-3")
    f = write_protocol_file(p3, tmp_path / "axes3.toml")
    values = {"name": resolve("axes-3"), "file": resolve(str(f)), "path": resolve(f), "protocol": resolve(p3),
              "spec": resolve(ProtocolSpec(p3))}
    for origin, rp in values.items():
        assert rp == values["name"], origin
        assert rp.view_names == tuple(AXES3), origin
        for got, want in zip(rp.rotations, AXES3.values(), strict=True):
            assert np.array_equal(got, np.asarray(want, dtype=np.float64)), origin
        assert (rp.kind, rp.width, rp.height, rp.positions) == ("orthographic", 768, 768, (None, None, None))
        back = pickle.loads(pickle.dumps(rp))  # items are mapped over processes and Dask workers
        assert back == rp and back.sha256 == rp.sha256
    assert values["file"].origin == "file" and values["file"].raw == f.read_bytes()
    assert values["file"].sha256 == hashlib.sha256(f.read_bytes()).hexdigest() == values["file"].spec.sha256
    assert values["name"].sha256 is None and values["protocol"].origin == "protocol"
    # a selection is the same value restricted, read from memory: no open
    assert _count_opens(f, lambda: values["file"].select(("top",))) == 0
    assert values["file"].select(("top",)).view_names == ("top",) == resolve(p3, ("top",)).view_names
    assert resolve("axes-3") != resolve("axes-6")


# ----------------------------------------------------------------------------- certificates written before
def test_a_format_1_certificate_is_read_with_the_one_policy_it_had(tmp_path):
    """/1 certificates record no framing policy: verify reads them as frame_on = "centres" (the only framing
    /1 had) and compares in their own format, so they verify; a /1 file claiming a policy is refused."""
    from viewcert.certify.certificate import write_certificate
    from viewcert.certify.run import run_certification
    from viewcert.certify.verify import verify_certificate
    from viewcert.errors import InputError
    from viewcert.formats.versions import V1, in_format, read_config

    ds = load_input(ROCK_SALT)
    typed, _ = run_certification(ds, CertifyConfig(observe="visible", tiling=(2, 2, 2)), n_workers=1, progress=False)
    cert = typed.to_dict()  # the JSON object, written in the older format below
    assert_certificate_consistent(cert)
    old = in_format(cert, V1)
    assert "frame_on" not in old["config"] and "policy" not in old["protocol"]["camera"]
    assert read_config(old)["frame_on"] == "centres"
    write_certificate(tmp_path / "v1.json", old)
    rep = verify_certificate(tmp_path / "v1.json", input_spec=ROCK_SALT, n_workers=1, progress=False)
    assert rep.ok and rep.byte_identical, rep.lines()
    with pytest.raises(InputError, match="frame_on"):
        read_config({**old, "config": {**old["config"], "frame_on": "drawn"}})
    with pytest.raises(InputError, match="frame_on"):  # a /2 certificate records its policy
        read_config({**old, "format": cert["format"]})
