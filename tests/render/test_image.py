"""Image settings declared once (issue 41, item 2): ``render.image.ImageSettings`` checks each field in one
place with one message, the protocol is resolved once at the boundary (``from_options``) and typed below it,
and no settings class keeps state outside its declared fields."""

from __future__ import annotations

import dataclasses

import pytest

from viewcert.benchmark.interaction_export import InteractionExportSettings
from viewcert.benchmark.molecule_export import MoleculeExportSettings
from viewcert.benchmark.settings import ExportSettings
from viewcert.benchmark.tasks_export import TaskExportSettings
from viewcert.cameras.protocol_files import write_protocol_file
from viewcert.cameras.protocols import get_protocol
from viewcert.cameras.resolve import ResolvedProtocol, resolve
from viewcert.errors import InputError
from viewcert.learn.views import ViewSettings
from viewcert.render.image import ImageSettings
from viewcert.tasks.model import ViewSetup


def test_every_form_the_resolver_takes_is_resolved_at_the_boundary(tmp_path):
    f = write_protocol_file(get_protocol("axes-3"), tmp_path / "mine.toml")
    named = ImageSettings.from_options("axes-3")
    for given in ("axes-3", str(f), f, get_protocol("axes-3"), resolve("axes-3")):
        im = ImageSettings.from_options(given)
        assert isinstance(im.protocol, ResolvedProtocol) and im.protocol == named.protocol  # same views, rotations
    assert ImageSettings.from_options(str(f)).protocol.is_file  # a file's bytes travel with the value
    rp = resolve("axes-6")
    assert ImageSettings.from_options(rp).protocol is rp  # an already resolved value is not resolved again


def test_below_the_boundary_the_protocol_is_typed():
    with pytest.raises(TypeError, match="ResolvedProtocol"):
        ImageSettings(protocol="axes-3")
    with pytest.raises(TypeError, match="ResolvedProtocol"):
        ViewSetup(protocol="axes-3")


@pytest.mark.parametrize(("kw", "message"), [
    ({"style": "weird"}, "unknown style 'weird'; known: study, ball-and-stick, spacefill"),
    ({"width": 15}, "width must be an integer ≥ 16 px, got 15"),
    ({"height": 8.0}, "height must be an integer ≥ 16 px, got 8.0"),
    ({"supersample": 0}, "supersample must be an integer ≥ 1, got 0"),
    ({"kind": "fisheye"}, "kind must be 'orthographic' or 'perspective', got 'fisheye'"),
])
def test_each_image_field_is_checked_in_one_place_with_one_message(kw, message):
    with pytest.raises(InputError, match=message):
        ImageSettings.from_options("axes-3", **kw)
    flat = {"size" if k in ("width", "height") else k: v for k, v in kw.items() if k != "kind"}
    for cls in (ExportSettings, MoleculeExportSettings):  # the exporters say the same thing
        if flat:
            with pytest.raises(InputError, match=message.replace("height", "width")):
                cls.from_options(**flat)


def test_no_settings_class_keeps_state_outside_its_fields():
    made = [ExportSettings.from_options(), MoleculeExportSettings.from_options(), TaskExportSettings.from_options(),
            InteractionExportSettings.from_options(), ViewSetup(), ViewSettings.from_options(),
            ImageSettings.from_options("axes-3")]
    for obj in made:
        assert set(vars(obj)) == {f.name for f in dataclasses.fields(obj)}, type(obj).__name__


def test_the_manifest_records_the_flat_settings_as_before():
    # regression pin: the crystal export's settings record as main wrote it (the manifest's bytes are kept)
    assert ExportSettings.from_options().to_dict() == {
        "protocol": "render-ceiling-5", "task": "crystal-system", "style": "study", "tiling": [2, 2, 2], "size": 768,
        "kind": "orthographic", "supersample": 3, "standardize": True, "std_symprec": 0.01,
        "std_angle_tolerance": 5.0, "tau": 0.01, "truth": "dataset", "r3_cell": "rendered", "buffers": False,
        "constraints": []}
    t = TaskExportSettings.from_options(task="zoom", camera="perspective", width=240, height=180, supersample=1)
    # every option, no other (key order is not recorded: certificates and manifests are written with sorted keys)
    assert sorted(t.to_dict()) == sorted(TaskExportSettings.OPTIONS)
    assert t.to_dict()["camera"] == "perspective" and t.view_setup().camera == "perspective"
