"""``viewcert certify images:FOLDER/images.toml`` (issue 53 item 3): the as-published ceiling of a folder of images
drawn by a real tool (ASE's PNG writer), beside the geometric ceiling of the same cameras; the certificate, its
sidecars and ``verify``; and the issue's bad inputs, each one line naming the file and field, exit 2."""

from __future__ import annotations

import csv
import json
import os
import shutil
import struct
import zlib

import numpy as np
import pytest

pytest.importorskip("skimage", reason="the detector needs scikit-image (the [images] extra)")

from PIL import Image  # noqa: E402

from tests.support.foreign_render import available  # noqa: E402
from tests.support.published_images import images_toml, make_folder  # noqa: E402
from tests.support.trust_probe import one_error, run  # noqa: E402
from viewcert.io.builtin import builtin_prototypes  # noqa: E402

pytestmark = pytest.mark.skipif(available("ase") is not None, reason=str(available("ase")))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Rock salt 2×2×2 drawn by ASE's PNG writer from two cameras, its answer cubic."""
    nacl = next(s for s in builtin_prototypes() if s.identifier == "aflow:AB_cF8_225_a_b")
    out = tmp_path_factory.mktemp("published") / "set"
    toml, truth = make_folder(out, [nacl], tool="ase", views=2, size=(180, 180), seed=3, radii=0.5,
                              answers={"aflow_AB_cF8_225_a_b": {"crystal_system": "cubic"}})
    return out, truth


def _copy(folder, tmp_path):
    dst = tmp_path / "set"
    shutil.copytree(folder, dst)
    return dst


def test_certify_and_verify(folder, tmp_path):
    src, truth = folder
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        shutil.copytree(src, tmp_path / "set")
        code, out, _ = run(["certify", "images:set/images.toml", "--delta", "0.1", "--out", "cert"])
        assert code == 0, out
        cert = json.loads((tmp_path / "cert" / "certificate.json").read_text())
        assert cert["format"] == "viewcert-images-certificate/1" and cert["inputs"]["spec"] == "images:images.toml"
        assert set(cert["inputs"]["files"]) == {"images.toml", "images/aflow_AB_cF8_225_a_b_v0.png",
                                                "images/aflow_AB_cF8_225_a_b_v1.png",
                                                "structures/aflow_AB_cF8_225_a_b.vasp"}
        (item,) = cert["items"]
        geo, pub = item["geometric"], item["as_published"]
        # the geometric ceiling: two generic views of rock salt determine it (every atom, exact projection)
        assert geo["correct"] and geo["unique"] and geo["label_reconstructed"]["crystal_system"] == "cubic"
        # the two outcomes differ exactly when correct or unique does, and then say why
        assert item["differ"] == ((geo["correct"], geo["unique"]) != (pub["correct"], pub["unique"]))
        assert bool(item["reasons"]) == item["differ"]
        for im in cert["images"]:
            # every atom the tool shows with ≥ 30 pixels is detected within 1 px of the tool's own centre
            r = truth[im["file"]]
            rows = np.array([d[:2] for d in im["detections"]], dtype=float)
            for k in np.flatnonzero(r.visible >= 30):
                assert np.min(np.linalg.norm(rows - r.centres[k], axis=1)) <= 1.0
            assert im["unmatched"] == 0 and im["matched"] == im["detected"] and im["centre_max_px"] <= 1.0
            assert len(im["projection"]["matrix"]) == 12 and im["sha256"] == cert["inputs"]["files"][im["file"]]
        with open(tmp_path / "cert" / "images.csv") as f:
            rows = list(csv.DictReader(f))
        assert [r["image"] for r in rows] == [im["file"] for im in cert["images"]]
        assert list(rows[0])[:5] == ["image", "item", "renderer", "P00", "P01"] and rows[0]["renderer"] == "ase"
        assert float(rows[0]["P23"]) == 1.0  # orthographic: P's last row is (0, 0, 0, 1)
        with open(tmp_path / "cert" / "detections.csv") as f:
            det = list(csv.DictReader(f))
        assert len(det) == sum(im["detected"] for im in cert["images"])
        assert {d["element"] for d in det} == {"Na", "Cl"} and all(d["matched_atom"] != "" for d in det)
        assert "geometric ceiling (every atom, exact projection, same cameras): 1/1" in out
        code, out, _ = run(["verify", "cert", "--inputs", "."])
        assert code == 0 and "byte-identical" in out, out
        # an image changed after certification: verify names it, exit 1
        img = tmp_path / "set" / "images" / "aflow_AB_cF8_225_a_b_v0.png"
        a = np.asarray(Image.open(img).convert("RGB")).copy()
        a[:5, :5] = 0
        Image.fromarray(a).save(img)
        code, out, _ = run(["verify", "cert", "--inputs", "."])
        assert code == 1 and "images/aflow_AB_cF8_225_a_b_v0.png: sha256" in out, out
    finally:
        os.chdir(cwd)


def _edit(dst, index: int, **changes):
    """Rewrite images.toml with image ``index``'s keys changed (None: removed)."""
    import tomllib

    doc = tomllib.loads((dst / "images.toml").read_text())
    entry = doc["image"][index]
    for k, v in changes.items():
        if v is None:
            entry.pop(k, None)
        else:
            entry[k] = v
    (dst / "images.toml").write_text(images_toml(doc["image"], {k: v for k, v in doc.items() if k != "image"}))


def _png(path, width, height, depth, colour):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 8))
                     + chunk(b"IEND", b""))


def _camera(dst, index=0):
    import tomllib

    return dict(tomllib.loads((dst / "images.toml").read_text())["image"][index]["camera"])


@pytest.mark.parametrize("case", ["outside", "absolute", "structure_outside", "link_outside", "size", "nan",
                                  "singular", "unknown_tool", "palette", "palette_png", "sixteen_bit", "huge"])
def test_bad_input_is_one_line_naming_file_and_field(folder, tmp_path, case):
    dst = _copy(folder[0], tmp_path)
    expect = {}
    if case == "outside":
        shutil.copy(dst / "images" / "aflow_AB_cF8_225_a_b_v0.png", tmp_path / "x.png")
        _edit(dst, 0, file="../x.png")
        expect = {"field": "image[0].file", "text": "outside the folder"}
    elif case == "absolute":
        _edit(dst, 0, file=str(dst / "images" / "aflow_AB_cF8_225_a_b_v0.png"))
        expect = {"field": "image[0].file", "text": "absolute path"}
    elif case == "structure_outside":
        for k in (0, 1):  # one item, one structure: both its images name it
            _edit(dst, k, structure="../../etc/passwd")
        expect = {"field": "image[0].structure", "text": "outside the folder"}
    elif case == "link_outside":
        (dst / "images" / "l.png").symlink_to(tmp_path / "elsewhere.png")
        _edit(dst, 0, file="images/l.png")
        expect = {"field": "image[0].file", "text": "outside the folder"}
    elif case == "size":
        cam = _camera(dst)
        cam["width"] = 300
        _edit(dst, 0, camera=cam)
        expect = {"field": "camera.width", "text": "180"}
    elif case == "nan":
        cam = _camera(dst)
        cam["scale"] = float("nan")
        _edit(dst, 0, camera=cam)
        expect = {"field": "camera.scale", "text": ""}
    elif case == "singular":
        _edit(dst, 0, camera={"tool": "pymol", "view": [0.0] * 9 + [0, 0, -50, 0, 0, 0, 40, 60, 20],
                              "width": 180, "height": 180})
        expect = {"field": "camera.view", "text": "rotation"}
    elif case == "unknown_tool":
        cam = _camera(dst)
        cam["tool"] = "pymool"
        _edit(dst, 0, camera=cam)
        expect = {"field": "camera.tool", "text": "did you mean pymol"}
    elif case == "palette":
        _edit(dst, 0, palette={"Na": "#ab5cf2"})
        expect = {"field": "image[0].palette", "text": "no colour for element(s) Cl"}
    elif case == "palette_png":
        Image.open(dst / "images" / "aflow_AB_cF8_225_a_b_v0.png").convert("P").save(dst / "images" / "p.png")
        _edit(dst, 0, file="images/p.png")
        expect = {"field": "image", "file": "images/p.png", "text": "8-bit palette PNG"}
    elif case == "sixteen_bit":
        _png(dst / "images" / "d.png", 180, 180, 16, 2)
        _edit(dst, 0, file="images/d.png")
        expect = {"field": "image", "file": "images/d.png", "text": "16-bit PNG"}
    elif case == "huge":
        _png(dst / "images" / "big.png", 40_000, 40_000, 8, 2)
        _edit(dst, 0, file="images/big.png")
        expect = {"field": "image", "file": "images/big.png", "text": "max_pixels"}
    code, out, seen = run(["certify", f"images:{dst / 'images.toml'}", "--out", str(tmp_path / "cert")])
    line = one_error(out)
    assert code == 2, out
    assert f"field {expect['field']}" in line and expect["text"] in line, line
    assert f"file {expect.get('file', 'images.toml')}" in line, line
    assert not (tmp_path / "cert" / "certificate.json").exists()
    if case in ("outside", "structure_outside", "link_outside"):  # nothing outside the folder was opened
        assert not [p for e, p in seen if e == "open" and not p.startswith(str(dst.resolve()))
                    and p.endswith((".png", "passwd"))], seen
