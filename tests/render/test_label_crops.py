"""The legibility rule against hand-judged crops (issue 28 item 4): three crops of the labelled axes-6 images
of the six complexes, committed with a person's verdict (``tests/data/labels/verdicts.json``: legible or not,
and why). Each crop must be what the renderer draws today (pixel for pixel, so the verdict is about these
pixels), and the default rule (glyph pixels, ``merge_px`` 1, ``min_visible`` 0.8) must agree with the person.
Two crops also record why the rule is what it is: the box rule (before issue 28) hides the legible 'GLU 32 B',
and counting coinciding glyph pixels only (``merge_px`` 0) passes the 'N' merged into 'OE2'. Skipped without
../shared/data/complexes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")

from tests.support.complex_data import COMPLEXES, needs_complexes  # noqa: E402
from viewcert.interactions import hbond_truth  # noqa: E402
from viewcert.interactions.ceiling import label_set  # noqa: E402
from viewcert.render import frame_cameras  # noqa: E402
from viewcert.render.labels import LabelStyle, draw_labels  # noqa: E402
from viewcert.render.raster import build_scene, render  # noqa: E402

HERE = Path(__file__).parents[1] / "data" / "labels"
CROPS = json.loads((HERE / "verdicts.json").read_text())["crops"]


def _layers(crop: dict) -> tuple:
    t = hbond_truth(COMPLEXES / crop["complex"], ligand=crop["ligand"], crosscheck=False)
    s = t.protonated.prepared.structure
    labels, _ = label_set(s, t.protonated.prepared.ligand_atoms)
    cams = frame_cameras(s, crop["protocol"], style="ball-and-stick", width=1160, height=803)
    res = render(build_scene(s, "ball-and-stick"), cams[crop["view"]])
    assert cams[crop["view"]].name == crop["view_name"] and labels[crop["label_index"]].text == crop["label"]
    return res, labels


@needs_complexes
@pytest.mark.parametrize("crop", CROPS, ids=[c["file"] for c in CROPS])
def test_the_rule_agrees_with_the_hand_judged_crop(crop):
    from PIL import Image

    res, labels = _layers(crop)
    layer = draw_labels(res, labels, LabelStyle())
    j = crop["label_index"]
    assert layer.boxes[j].tolist() == crop["box"]
    u, v = crop["crop_origin"]
    seen = np.asarray(Image.open(HERE / crop["file"]).convert("RGB"))
    assert layer.rgb[v:v + seen.shape[0], u:u + seen.shape[1]].tolist() == seen.tolist()  # the judged pixels
    assert bool(layer.legible()[j]) is crop["legible"], crop["why"]
    if crop["label"] == "GLU 32 B":
        assert not draw_labels(res, labels, LabelStyle(rule="box")).legible()[j]  # the box rule hides it
    if crop["label"] == "N":
        assert draw_labels(res, labels, LabelStyle(merge_px=0)).legible()[j]  # coinciding pixels alone pass it
