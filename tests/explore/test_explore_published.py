"""``viewcert explore`` of an as-published certificate (``certify images:``): one page showing each published image
with its detections and the projected atoms overlaid, read only inside the trusted folder."""

from __future__ import annotations

import os
import re
import shutil

import pytest

pytest.importorskip("skimage", reason="the detector needs scikit-image (the [images] extra)")

from tests.support.foreign_render import available  # noqa: E402
from tests.support.published_images import make_folder  # noqa: E402
from tests.support.trust_probe import run  # noqa: E402
from viewcert.io.builtin import builtin_prototypes  # noqa: E402

pytestmark = pytest.mark.skipif(available("ase") is not None, reason=str(available("ase")))


def test_explore_shows_images_with_detections_and_projections(tmp_path):
    cu = next(s for s in builtin_prototypes() if s.identifier == "aflow:A_cF4_225_a")
    make_folder(tmp_path / "set", [cu], tool="ase", views=2, size=(160, 160), seed=7, radii=0.5)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code, out, _ = run(["certify", "images:set/images.toml", "--delta", "0.2", "--out", "cert"])
        assert code == 0, out
        code, out, _ = run(["explore", "cert", "--inputs", "."])
        assert code == 0, out
        page = (tmp_path / "cert" / "explore" / "index.html").read_text()
        assert sorted(os.listdir(tmp_path / "cert" / "explore" / "images")) == ["0_0.png", "0_1.png"]
        # 8 atoms of fcc copper 2x2x2 drawn per image: 8 projection crosses each, a circle per detection
        assert len(re.findall(r"<path d=", page)) == 16 and page.count("<circle") >= 2
        assert "geometric" in page and "aflow_A_cF4_225_a" in page
        # an image changed after certification is not shown as if it were the one certified
        shutil.copy(tmp_path / "set" / "images" / "aflow_A_cF4_225_a_v1.png",
                    tmp_path / "set" / "images" / "aflow_A_cF4_225_a_v0.png")
        code, out, _ = run(["explore", "cert", "--inputs", ".", "--out", "site2"])
        page = (tmp_path / "site2" / "index.html").read_text()
        assert code == 0 and "not the image certified" in page
    finally:
        os.chdir(cwd)
