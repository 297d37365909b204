"""An interaction export renders each view once (issue 26, item 5): the labelled PNG and the rendered ceiling
read that one render. Counted by wrapping ``render.raster.render`` wherever a module holds it; the export's
images are pinned to their digests from before the single-render change (regression pins: values the code
wrote at commit 0bf8c87, when every view was rendered twice, not derived independently — they prove the
images did not change) and the certificate's rendered ceilings equal those of the former path (each view
rendered again by ``pocket_ligand_ceiling``). Skipped without ../shared/data/complexes."""

from __future__ import annotations

import hashlib
import json
import sys

import pytest

pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")

from tests.support.complex_data import COMPLEXES as DATA  # noqa: E402
from tests.support.complex_data import needs_complexes  # noqa: E402
from viewcert.benchmark.interaction_export import InteractionExportSettings, build_interaction_benchmark  # noqa: E402
from viewcert.interactions import hbond_truth  # noqa: E402
from viewcert.interactions.ceiling import pocket_ligand_ceiling, residue_ligand_ceiling  # noqa: E402
from viewcert.render import frame_cameras, raster  # noqa: E402

# regression pins (0bf8c87, two renders per view): SHA-256 of the sorted {image: sha256} map of the export's
# PNGs. The certificate is checked against the ceiling recomputed by rendering the views again (the former
# path), not pinned: it moves with the ground truth's rules.
PIN_27 = "c43f5e957c7f11a5d5e536266fdf9f8a7cb75cae5ad7e49b9703a556ac898ffa"
PIN_6 = "754a131878d72a0772b4631cfab73c80f40f7fd0c44d123841cf07f31c575ffc"


def _images_digest(files: dict) -> str:
    pngs = {k: v for k, v in files.items() if k.endswith(".png")}
    return hashlib.sha256(json.dumps(pngs, sort_keys=True).encode()).hexdigest()


@pytest.fixture
def render_count(monkeypatch):
    """Every module-level name bound to ``raster.render`` replaced by a counting wrapper."""
    real, calls = raster.render, []

    def counted(scene, camera, **kw):
        calls.append(camera.name)
        return real(scene, camera, **kw)

    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("viewcert") and getattr(mod, "render", None) is real:
            monkeypatch.setattr(mod, "render", counted)
    return calls


def _rendered_twice(path, ligand, settings) -> dict:
    """The rendered ceiling as before the change: ``pocket_ligand_ceiling`` rendering the views itself."""
    truth = hbond_truth(path, ligand=ligand, pocket=settings.pocket)
    s = truth.protonated.prepared.structure
    im = settings.image
    cams = frame_cameras(s, im.protocol, style=im.style, width=im.width, height=im.height)
    return pocket_ligand_ceiling(truth, cams, settings.ceiling, "rendered")


@needs_complexes
def test_a_600_atom_pocket_at_27_views_is_rendered_once_per_view(tmp_path, render_count):
    # the acceptance case: 1s3v's pocket at 10 Å (629 atoms, benchmarks/bench_interactions.py) at fibonacci-27
    settings = InteractionExportSettings.from_options(task="pocket-ligand", protocol="fibonacci-27", pocket=10.0, n_boot=200)
    m = build_interaction_benchmark([(DATA / "1s3v", None)], tmp_path, settings)
    assert len(render_count) == 27 and len(set(render_count)) == 27  # each of the 27 views exactly once
    assert sum(f.endswith(".png") for f in m.manifest["files"]) == 27
    assert _images_digest(m.manifest["files"]) == PIN_27
    again = _rendered_twice(DATA / "1s3v", None, settings)
    assert len(render_count) == 54  # the former path renders all 27 again
    item = m.certificate.to_dict()["items"][0]["rendered"]
    assert item == {k: again[k] for k in item} and item["n_true"] == again["n_true"] > 0


@needs_complexes
def test_six_view_exports_render_once_and_keep_their_images(tmp_path, render_count):
    cx = [(DATA / "1pwc", "PNM"), (DATA / "1s3v", None)]
    settings = InteractionExportSettings.from_options(task="residue-ligand", n_boot=200)
    m = build_interaction_benchmark(cx, tmp_path, settings)
    assert len(render_count) == 12  # two complexes, six views each
    assert _images_digest(m.manifest["files"]) == PIN_6
    truths = m.certificate.to_dict()["ground_truth"]
    assert set(truths) == {"1pwc:PNM", "1s3v:"}
    for it in m.certificate.to_dict()["items"]:  # every item's rendered residue ceiling from the twice-rendered pocket
        path, lig = (DATA / "1pwc", "PNM") if it["source_id"].startswith("1pwc") else (DATA / "1s3v", None)
        assert it["rendered"] == residue_ligand_ceiling(_rendered_twice(path, lig, settings), it["residue"])


def test_one_style_object():
    from viewcert.interactions.ceiling import CeilingSettings

    s = InteractionExportSettings.from_options(ceiling=CeilingSettings(style="spacefill"))
    assert s.image.style == "spacefill" and s.to_dict()["style"] == s.to_dict()["ceiling"]["style"] == "spacefill"
    with pytest.raises(TypeError):
        InteractionExportSettings.from_options(style="spacefill")  # no second style field
