"""An interaction export renders each view once (issue 26, item 5): the labelled PNG and the rendered ceiling
read that one render. Counted by wrapping ``render.raster.render`` wherever a module holds it; the export's
files are pinned to their digests from before the single-render change (regression pins: values the code
wrote at commit 0bf8c87, when every view was rendered twice, not derived independently — they prove the files
did not change). Skipped without ../shared/data/complexes."""

from __future__ import annotations

import hashlib
import json
import sys

import pytest

pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")

from complex_data import COMPLEXES as DATA  # noqa: E402
from complex_data import needs_complexes  # noqa: E402
from viewcert.benchmark.interaction_export import InteractionExportSettings, build_interaction_benchmark  # noqa: E402
from viewcert.render import raster  # noqa: E402

# regression pins (0bf8c87, two renders per view): SHA-256 of the manifest's sorted {file: sha256} map and the
# certificate digest. They move with the library versions the certificate records.
PIN_27 = ("9825f4670a59180aa43c9e257735edfd1384d9b208b41330cda58418151748cf",
          "c879b46b1dbfcb322505c4c0e4122a480ace710eca49e27fb705d3aaccdd5751")
PIN_6 = {"pocket-ligand": ("8b79318b9d66c05f206c4198a4af93deeafbbeaff4afa57e3493b7c4c760f2ea",
                           "c0039f94e4020c43a250ddd95de674682f8a73a26204dc8598a7588e62c69887"),
         "residue-ligand": ("b57f6823d56a645d14ae80ee6ec0f02294518ae21f42da1f0ea7bf1306120c9d",
                            "ae701ad36edf0ac2bd17ea379866c4c988fcd873d2ce6237e33e0388072ac4de")}


def _files_digest(files: dict) -> str:
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()


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


@needs_complexes
def test_a_600_atom_pocket_at_27_views_is_rendered_once_per_view(tmp_path, render_count):
    # the acceptance case: 1s3v's pocket at 10 Å (629 atoms, benchmarks/bench_interactions.py) at fibonacci-27
    settings = InteractionExportSettings(task="pocket-ligand", protocol="fibonacci-27", pocket=10.0, n_boot=200)
    m = build_interaction_benchmark([(DATA / "1s3v", None)], tmp_path, settings)
    assert len(render_count) == 27 and len(set(render_count)) == 27  # each of the 27 views exactly once
    assert sum(f.endswith(".png") for f in m["files"]) == 27
    assert (_files_digest(m["files"]), m["certificate_digest"]) == PIN_27


@needs_complexes
@pytest.mark.parametrize("task", sorted(PIN_6))
def test_six_view_exports_render_once_and_keep_their_bytes(tmp_path, render_count, task):
    cx = [(DATA / "1pwc", "PNM"), (DATA / "1s3v", None)]
    m = build_interaction_benchmark(cx, tmp_path, InteractionExportSettings(task=task, n_boot=200))
    assert len(render_count) == 12  # two complexes, six views each
    assert (_files_digest(m["files"]), m["certificate_digest"]) == PIN_6[task]


def test_one_style_object():
    from viewcert.interactions.ceiling import CeilingSettings

    s = InteractionExportSettings(ceiling=CeilingSettings(style="spacefill"))
    assert s.style == "spacefill" and s.to_dict()["style"] == s.to_dict()["ceiling"]["style"] == "spacefill"
    with pytest.raises(TypeError):
        InteractionExportSettings(style="spacefill")  # no second style field
