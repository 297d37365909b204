"""``viewcert certify images:FOLDER/images.toml`` with ``camera = { tool = "unknown" }`` (issue 54 step 2): each
camera recovered from the structure and the atoms detected, the item certified over every admissible pose, a camera
not recovered listed out of the denominator.

The pixel reader is not under test here (its own tests measure it): ``certify.published._detect`` is replaced by a
detector that returns the atoms viewcert's renderer shows (≥ 30 visible pixels in its atom-ID buffer) at their exact
projections plus 0.3 px noise, with their drawn radii. The truth is the camera each image was rendered with: the
same folder with that camera stated (``tool = "matrix"``) gives the reference ceiling."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image
from scipy.spatial.transform import Rotation

import viewcert.certify.published as published
from tests.support.molecule_geometries import methane
from viewcert.cameras import OrthographicCamera, PixelProjection
from viewcert.certify import CertifyConfig
from viewcert.certify.published import certify_published
from viewcert.detect.detector import Detections
from viewcert.elements import covalent_radii, symbols
from viewcert.io.builtin import builtin
from viewcert.io.pictures import read_picture
from viewcert.render import observe_rendered, render_structure
from viewcert.structures import Structure

SIZE = 360


def _camera(pos, angles):
    r = Rotation.from_euler("xyz", angles, degrees=True).as_matrix()
    c = pos.mean(0)
    ext = float(np.abs((pos - c) @ r[:2].T).max()) + 1.5
    return OrthographicCamera(rotation=r, center=c, scale=(SIZE / 2 - 20) / ext, width=SIZE, height=SIZE)


def _write(folder, name, structure: Structure, camera, truth: dict):
    rgb = render_structure(structure, [camera], style="study")[0].rgb
    Image.fromarray(rgb).save(folder / f"{name}.png")
    (folder / f"{name}.xyz").write_text(f"{structure.n_atoms}\n{name}\n" + "".join(
        f"{e} {x:.8f} {y:.8f} {z:.8f}\n" for e, (x, y, z) in zip(structure.symbols, structure.positions,
                                                                strict=True)))
    seen = observe_rendered(structure, [camera], min_pixels=30, position="projection").views[0]
    rng = np.random.default_rng(len(truth))
    px_per_a = camera.scale if hasattr(camera, "scale") else camera.focal / np.asarray(seen.depth)
    radii = 0.5 * covalent_radii(seen.labels) * px_per_a
    truth[f"{name}.png"] = (seen.uv + rng.normal(scale=0.3, size=seen.uv.shape), symbols(seen.labels), radii)


def _toml(entries):
    lines = ['format = "viewcert-images/1"', ""]
    for file, item, xyz, camera in entries:
        cam = ", ".join(f"{k} = {json.dumps(v)}" for k, v in camera.items())
        lines += ["[[image]]", f'file = "{file}"', f'item = "{item}"', f'structure = "{xyz}"', 'palette = "jmol"',
                  f"camera = {{ {cam} }}", ""]
    return "\n".join(lines)


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    truth: dict = {}
    ibp = next(s for s in builtin("sample") if s.identifier == "ccd:IBP")
    atp = next(s for s in builtin("sample") if s.identifier == "ccd:ATP")
    ch4 = Structure(*methane())
    cams = {"ibp": _camera(ibp.positions, (30, -50, 20)), "ch4": _camera(ch4.positions, (37, -21, 64))}
    _write(tmp_path, "ibp", ibp, cams["ibp"], truth)
    _write(tmp_path, "ch4", ch4, cams["ch4"], truth)
    (tmp_path / "atp.xyz").write_text(f"{atp.n_atoms}\natp\n" + "".join(
        f"{e} {x:.8f} {y:.8f} {z:.8f}\n" for e, (x, y, z) in zip(atp.symbols, atp.positions, strict=True)))

    def detect(entry, numbers, detector):
        _, picture = read_picture(entry.path, name=entry.file)
        uv, els, radii = truth[entry.file]
        n = len(els)
        return Detections(uv, radii, tuple(els), ("",) * n, np.ones(n), "flat", (255, 255, 255), SIZE,
                          SIZE), picture

    monkeypatch.setattr(published, "_detect", detect)
    return tmp_path, cams, truth


def _matrix(camera):
    p = PixelProjection.from_camera(camera)
    return {"tool": "matrix", "matrix": p.matrix.ravel().tolist()}


def test_recovered_cameras_certify_as_the_true_ones(folder):
    path, cams, _ = folder
    (path / "images.toml").write_text(_toml([
        ("ibp.png", "ibp", "ibp.xyz", {"tool": "unknown", "drawn_by": "pymol"}),
        ("ch4.png", "ch4", "ch4.xyz", {"tool": "unknown", "kind": "orthographic"})]))
    (path / "true.toml").write_text(_toml([("ibp.png", "ibp", "ibp.xyz", _matrix(cams["ibp"])),
                                           ("ch4.png", "ch4", "ch4.xyz", _matrix(cams["ch4"]))]))
    cfg = CertifyConfig(delta=0.3, tau=0.3)
    got = certify_published(f"images:{path / 'images.toml'}", cfg)
    ref = certify_published(f"images:{path / 'true.toml'}", cfg)
    assert [it.error for it in got.items] == [None, None]  # no error written (unset reads None, issue 55)
    for a, b in zip(got.items, ref.items, strict=True):  # the same ceiling as with the true cameras
        assert (a.geometric.outcome, a.as_published.outcome) == (b.geometric.outcome, b.as_published.outcome)
    ibp, ch4 = got.images
    assert ibp.recovered.status == "recovered" and ibp.recovered.n_poses == 1
    assert ibp.recovered.written_back["tool"] == "pymol" and ibp.recovered.written_back_note == ""
    assert ch4.recovered.n_poses == 24  # Td: every operation draws the same orthographic picture
    # one image whose poses are all symmetry images of the best: certified once (the others are the same
    # reconstruction turned by a symmetry of the molecule)
    assert got.items[1].extra["pose_combinations"] == 1
    # the recovered projection is the true one (the best pose of ibuprofen, which has no symmetry)
    p = np.asarray(ibp.projection.matrix).reshape(3, 4)
    true = PixelProjection.from_camera(cams["ibp"]).matrix
    pts = np.random.default_rng(1).normal(size=(10, 3)) * 3 + cams["ibp"].center
    h = pts @ p[:, :3].T + p[:, 3]
    assert np.abs(h[:, :2] - (pts @ true[:2, :3].T + true[:2, 3])).max() < 1.0


def test_camera_not_recovered_is_listed_out_of_the_denominator(folder):
    path, _, _ = folder
    (path / "images.toml").write_text(_toml([
        ("ibp.png", "swapped", "atp.xyz", {"tool": "unknown"}),
        ("ch4.png", "ch4", "ch4.xyz", {"tool": "unknown"})]))
    cert = certify_published(f"images:{path / 'images.toml'}", CertifyConfig(delta=0.3, tau=0.3))
    swapped = cert.items[0]
    assert swapped.is_error and swapped.error.startswith("camera not recovered (ibp.png): ")
    assert cert.images[0].recovered.status == "not recovered"
    assert cert.summary.n == 1 and cert.summary.n_errors == 1  # the swapped item counts out of the denominator


def test_pose_combinations_up_to_the_structures_symmetry():
    from viewcert.certify.recovered import MAX_POSE_COMBINATIONS, MAX_POSE_WORK, pose_combinations
    a, b, c = "a", "b", "c"
    assert pose_combinations([(a, b), (c,)]) == [(a, c), (b, c)]
    assert pose_combinations([(a, b), (a, b, c)], symmetric_first=True) == [(a, a), (a, b), (a, c)]
    assert (MAX_POSE_COMBINATIONS, MAX_POSE_WORK) == (4096, 20000)
    assert len(pose_combinations([tuple(range(48)), tuple(range(48))], n_atoms=7)) == 2304  # SF6, two views
    assert pose_combinations([tuple(range(48)), tuple(range(48))], n_atoms=9) is None  # 2304 × 9 > 20000
    assert pose_combinations([tuple(range(64))] * 3) is None  # 262144 > 4096


def test_recovered_views_are_drawn_again_beside_the_published_image(folder):
    """viewcert draws the structure again through the recovered camera beside the published image: where the true
    camera puts each heavy atom of ibuprofen, the redrawn half shows an atom (not the white background; hydrogens
    are drawn white)."""
    from viewcert.certify.published_outputs import write_published_outputs
    from viewcert.certify.recovered import write_redraws

    path, cams, _ = folder
    (path / "images.toml").write_text(_toml([("ibp.png", "ibp", "ibp.xyz", {"tool": "unknown"})]))
    cert = certify_published(f"images:{path / 'images.toml'}", CertifyConfig(delta=0.3, tau=0.3))
    out = path / "out"
    write_published_outputs(out, cert)
    written = write_redraws(out, cert, path)
    assert sorted(written) == ["redrawn/000.png", "redrawn/index.json"]
    assert json.loads((out / "redrawn" / "index.json").read_text())["000"]["file"] == "ibp.png"
    pair = np.asarray(Image.open(out / "redrawn" / "000.png").convert("RGB"))
    assert pair.shape == (SIZE, 2 * SIZE + 8, 3)
    ibp = next(s for s in builtin("sample") if s.identifier == "ccd:IBP")
    uv, _ = PixelProjection.from_camera(cams["ibp"]).project(ibp.positions[ibp.numbers > 1])
    redrawn = pair[:, SIZE + 8:]
    cols, rows = np.floor(uv).astype(int).T
    inked = (redrawn[rows, cols] < 230).any(axis=1)
    assert inked.all()


def test_an_item_may_mix_orthographic_and_perspective_views(folder):
    """Two tools drew one item, one orthographic and one perspective: both ceilings are computed (the evaluator
    recorded a position for every camera as soon as one was perspective, and failed on the orthographic one)."""
    from viewcert.cameras import PerspectiveCamera

    path, cams, truth = folder
    ibp = next(s for s in builtin("sample") if s.identifier == "ccd:IBP")
    r = Rotation.from_euler("xyz", [-60, 15, 80], degrees=True).as_matrix()
    persp = PerspectiveCamera(rotation=r, position=ibp.positions.mean(0) + 60 * r[2], focal=1500.0, width=SIZE,
                              height=SIZE)
    _write(path, "ibp2", ibp, persp, truth)
    (path / "two.toml").write_text(_toml([("ibp.png", "ibp", "ibp.xyz", _matrix(cams["ibp"])),
                                          ("ibp2.png", "ibp", "ibp.xyz", {"tool": "matrix", "matrix": PixelProjection
                                                                          .from_camera(persp).matrix.ravel().tolist()})]))
    cert = certify_published(f"images:{path / 'two.toml'}", CertifyConfig(delta=0.3, tau=0.3))
    item = cert.items[0]
    assert not item.is_error and item.geometric.outcome != "error", item.geometric.error


def test_a_recovered_certificate_is_recomputed_to_the_same_bytes(folder):
    """verify recomputes a certificate: the recovery (hypotheses, least squares, the poses) gives the same digest
    every time."""
    path, _, _ = folder
    (path / "images.toml").write_text(_toml([("ibp.png", "ibp", "ibp.xyz", {"tool": "unknown"})]))
    cfg = CertifyConfig(delta=0.3, tau=0.3)
    a = certify_published(f"images:{path / 'images.toml'}", cfg)
    b = certify_published(f"images:{path / 'images.toml'}", cfg)
    assert a.images[0].recovered.status == "recovered"
    assert a.digest == b.digest


def test_cameras_csv_lists_each_recovery_and_its_written_back_camera(folder):
    """cameras.csv (issue 54 item 3, for people and tools): one row per image asked to be recovered; the camera
    written back in PyMOL's terms, read back by viewcert's PyMOL importer, draws ibuprofen's atoms where the true
    camera does (within 1 px); the swapped file's row says why it was not recovered; a folder whose cameras are all
    stated writes no cameras.csv."""
    import csv
    import io

    from viewcert.cameras import resolve_tool_camera
    from viewcert.certify.published_outputs import write_published_outputs

    path, cams, _ = folder
    (path / "images.toml").write_text(_toml([
        ("ibp.png", "ibp", "ibp.xyz", {"tool": "unknown", "drawn_by": "pymol"}),
        ("ch4.png", "swapped", "atp.xyz", {"tool": "unknown"})]))
    cert = certify_published(f"images:{path / 'images.toml'}", CertifyConfig(delta=0.3, tau=0.3))
    paths = write_published_outputs(path / "out", cert)
    rows = list(csv.DictReader(io.StringIO((path / "out" / "cameras.csv").read_text())))
    assert paths["cameras"] == path / "out" / "cameras.csv"
    assert [(r["image"], r["status"], r["drawn_by"]) for r in rows] == [("ibp.png", "recovered", "pymol"),
                                                                       ("ch4.png", "not recovered", "unknown")]
    assert rows[1]["reason"] and rows[1]["written_back"] == "" and rows[1]["written_back_note"]
    table = json.loads(rows[0]["written_back"])
    assert table["tool"] == "pymol" and rows[0]["poses"] == "1"
    ibp = next(s for s in builtin("sample") if s.identifier == "ccd:IBP")
    got, _ = resolve_tool_camera(table).project(ibp.positions)
    want, _ = PixelProjection.from_camera(cams["ibp"]).project(ibp.positions)
    assert np.abs(got - want).max() < 1.0
    (path / "true.toml").write_text(_toml([("ibp.png", "ibp", "ibp.xyz", _matrix(cams["ibp"]))]))
    stated = certify_published(f"images:{path / 'true.toml'}", CertifyConfig(delta=0.3, tau=0.3))
    assert "cameras" not in write_published_outputs(path / "out2", stated)
    assert not (path / "out2" / "cameras.csv").exists()


def test_an_item_is_determined_only_if_every_admissible_pose_determines_it(folder, monkeypatch):
    """Issue 54: "an item is determined only if every admissible pose determines it". Two pictures of CH4 make one
    item; the second's 24 admissible poses give 24 combinations, none of which determines the answer as published
    at δ = 0.3 Å. When one of them is made to determine it (by wrapping the certification), the combinations
    disagree: the item is not refused (before: an error out of the denominator) but counts as not determined as
    published, with how many combinations determined it."""
    from viewcert.certify import recovered as R

    path, cams, truth = folder
    ch4 = Structure(*methane())
    _write(path, "ch4b", ch4, _camera(ch4.positions, (-50, 33, 10)), truth)
    (path / "two.toml").write_text(_toml([("ch4.png", "ch4", "ch4.xyz", {"tool": "unknown", "kind": "orthographic"}),
                                          ("ch4b.png", "ch4", "ch4.xyz", {"tool": "unknown",
                                                                          "kind": "orthographic"})]))
    real, calls = published._certify_views, []

    def one_combination_determined(*args):
        geo, pub, scale = real(*args)
        calls.append((geo.correct, pub.correct))
        if len(calls) == 3:
            pub = pub.model_copy(update={"correct": True, "outcome": "correct", "unique": True})
        return geo, pub, scale

    monkeypatch.setattr(published, "_certify_views", one_combination_determined)
    cert = certify_published(f"images:{path / 'two.toml'}", CertifyConfig(delta=0.3, tau=0.3))
    item = cert.items[0]
    assert len(calls) == 24 and not any(p for _, p in calls)
    assert not item.is_error and item.extra["pose_combinations"] == 24
    assert item.as_published.correct is False
    assert item.geometric.correct is all(g for g, _ in calls)
    assert item.extra["poses_determining_as_published"] == 1
    assert item.extra["poses_determining_geometric"] == sum(g for g, _ in calls)
    assert cert.summary.n == 1 and cert.summary.as_published.k == 0
    a = published.ItemOutcome(id="a", outcome="correct", correct=True, unique=True)
    b = published.ItemOutcome(id="b", outcome="incorrect", correct=False, unique=True)
    c = published.ItemOutcome(id="c", outcome="incorrect", correct=False, unique=False)
    assert R.least_determined([a, b, c, b]) is c and R.least_determined([a, b]) is b
