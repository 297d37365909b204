"""The certificates' settings sections, typed (``formats.settings_sections``, issue 41 item 1): the exact round trip
over every committed certificate and the certificates the tests build (a certify output, a streamed one's head, a
task export's and an interaction export's certificate and manifest), hand-written sections and their expected
typed fields, and a malformed section as a one-line error naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viewcert.errors import InputError
from viewcert.formats.reader import read
from viewcert.formats.records import (
    CeilingCertificate,
    Certificate,
    InteractionCertificate,
    TaskCertificate,
    digest_record,
)
from viewcert.formats.settings_sections import (
    CeilingRecord,
    CertifyConfigRecord,
    ExportSettingsRecord,
    Inputs,
    Location,
    ObservationRecord,
    OracleSettingsRecord,
    ProtocolFile,
    Scoring,
    TaskProtocol,
    TaskTolerances,
    Tolerances,
    ViewProtocol,
)

DATA = Path(__file__).resolve().parents[1] / "data"
CERTIFICATES = sorted(p for p in DATA.rglob("*.json") if p.name != "manifest.json"
                      and isinstance(d := json.loads(p.read_text()), dict) and "format" in d)
MANIFESTS = sorted(DATA.rglob("manifest.json"))
VIEW_SECTIONS = {"inputs": Inputs, "config": CertifyConfigRecord, "protocol": ViewProtocol,
                 "observation_model": ObservationRecord, "tolerances": Tolerances, "oracle": OracleSettingsRecord,
                 "scoring": Scoring, "location": Location}


def _typed_round_trip(d: dict) -> Certificate:
    """``d`` typed: every settings section it has typed as its class, and written back exactly."""
    cert = Certificate.from_dict(d)
    assert cert.to_dict() == d
    if isinstance(cert, CeilingCertificate):
        for key, cls in VIEW_SECTIONS.items():
            assert key not in d or isinstance(getattr(cert, key), cls), key
            assert key not in d or getattr(cert, key).to_dict() == d[key], key
    elif isinstance(cert, TaskCertificate):
        assert isinstance(cert.settings, ExportSettingsRecord) and isinstance(cert.protocol, TaskProtocol)
        assert isinstance(cert.tolerances, TaskTolerances) and isinstance(cert.observation_model, str)
        assert cert.settings.to_dict() == d["settings"] and cert.tolerances.to_dict() == d["tolerances"]
    elif isinstance(cert, InteractionCertificate):
        assert isinstance(cert.settings, ExportSettingsRecord) and cert.settings.to_dict() == d["settings"]
        assert isinstance(cert.settings.ceiling, CeilingRecord)
    return cert


def test_the_committed_fixtures_are_found():
    assert len(CERTIFICATES) >= 12 and len(MANIFESTS) >= 4  # 8 certificates /1, 4 exports' certificates


@pytest.mark.parametrize("path", CERTIFICATES, ids=lambda p: p.relative_to(DATA).as_posix())
def test_every_committed_certificate_round_trips_with_typed_settings(path):
    _typed_round_trip(json.loads(path.read_text()))


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.relative_to(DATA).as_posix())
def test_every_committed_manifest_settings_round_trip(path):
    m = json.loads(path.read_text())
    if "settings" in m:  # the interaction manifest before viewcert.export/1 has none
        assert ExportSettingsRecord.from_dict(m["settings"]).to_dict() == m["settings"]


def test_the_committed_values_read_as_attributes():
    """Values read from the fixtures' JSON by hand (not through the section) and the typed fields."""
    crystals = json.loads((DATA / "certificates" / "v1" / "crystals.json").read_text())
    c = CeilingCertificate.from_dict(crystals)
    assert (c.tolerances.delta, c.tolerances.tau, c.tolerances.angle_tolerance) == (0.01, 0.01, 5.0)
    assert c.inputs.spec == "crystals" and c.inputs.kind == "folder" and set(c.inputs.files) == {
        "CsCl.cif", "Mg.cif", "NaCl.cif", "TiO2.cif"}
    assert c.config.protocol == "render-ceiling-5" and not c.config.written("protocol_sha256")
    assert c.protocol.name == "render-ceiling-5" and len(c.protocol.views) == 5
    assert c.oracle.pairs == "all" and c.oracle.merge is None and c.observation_model.tiling == [1, 1, 1]
    assert c.scoring.level == "crystal_system" and c.location.input.endswith("inputs/crystals")
    perspective = CeilingCertificate.from_dict(json.loads((DATA / "certificates" / "v1" / "perspective.json").read_text()))
    assert perspective.config.protocol == "perspective-5.toml" and perspective.location.protocol.endswith(".toml")
    molecules = CeilingCertificate.from_dict(json.loads((DATA / "certificates" / "v1" / "molecules.json").read_text()))
    assert not molecules.written("location") and molecules.inputs.kind == "builtin"
    task = TaskCertificate.from_dict(json.loads((DATA / "exports" / "v1" / "task" / "certificate.json").read_text()))
    assert task.settings.protocol == "axes-3" and (task.settings.width, task.settings.height) == (240, 180)
    assert task.protocol.views == ["front", "top", "left"] and task.protocol.source == "builtin"
    assert task.tolerances.delta_angstrom == 0.01 and task.observation_model.startswith("ideal:")
    inter = InteractionCertificate.from_dict(
        json.loads((DATA / "exports" / "v1" / "interaction" / "certificate.json").read_text()))
    assert inter.settings.ceiling.delta == 0.01 and inter.settings.ceiling.labels["font"] == "DejaVuSans.ttf"
    assert not inter.settings.written("protocol_sha256") and inter.settings.protocol_sha256 is None


def test_a_hand_written_section_types_its_fields_and_keeps_the_rest():
    d = {"delta": 0.02, "tau": 0.005, "angle_tolerance": 2, "delta_unit": "angstrom", "standardization": None,
         "new_key": {"kept": [1, 2]}}
    t = Tolerances.from_dict(d)
    assert (t.delta, t.tau, t.angle_tolerance, t.delta_unit) == (0.02, 0.005, 2, "angstrom")
    assert t.standardization is None and not t.written("tau_unit") and dict(t.extra) == {"new_key": {"kept": [1, 2]}}
    assert t.to_dict() == d and "tau_unit" not in t.to_dict()
    settings = {"task": "rotation", "protocol": {"name": "mine", "views": ["a", "b"], "source": "file",
                                                 "file": {"name": "mine.toml", "sha256": "ab" * 32, "kind": "x"}},
                "width": 240, "height": 180, "constraints": [], "pocket": None}
    s = ExportSettingsRecord.from_dict(settings)
    assert isinstance(s.protocol, TaskProtocol) and isinstance(s.protocol.file, ProtocolFile)
    assert (s.protocol.file.name, s.protocol.file.sha256) == ("mine.toml", "ab" * 32)
    assert s.protocol.views == ["a", "b"] and s.pocket is None and not s.written("style") and s.to_dict() == settings
    assert s.options({"task", "width", "style"}) == {"task": "rotation", "width": 240}
    named = ExportSettingsRecord.from_dict({"protocol": "axes-6", "protocol_sha256": None})
    assert named.protocol == "axes-6" and named.protocol_sha256 is None
    assert not Inputs.from_dict({}) and Inputs.from_dict({"spec": "x"})  # empty: falsy, as the dict it replaces


def _sealed_view(**changes) -> dict:
    d = json.loads((DATA / "certificates" / "v1" / "crystals.json").read_text())
    d.update(changes)
    d["digest"] = digest_record(d)
    return d


@pytest.mark.parametrize(("changes", "where", "what"), [
    ({"tolerances": 5}, "tolerances", "must be an object, got 5"),
    ({"inputs": {"spec": "crystals", "files": []}}, "inputs.files", "must be an object, got list"),
    ({"inputs": {"spec": "crystals", "files": None}}, "inputs.files", "must be an object, got None"),
    ({"inputs": {"spec": 3, "files": {}}}, "inputs.spec", "must be text, got 3"),
    ({"inputs": {"spec": "crystals", "files": {}, "subset": 2}}, "inputs.subset", "must be text, got 2"),
    ({"tolerances": {"delta": "0.01", "tau": 0.01}}, "tolerances.delta", "must be a number, got '0.01'"),
    ({"tolerances": {"delta": 0.01, "tau": None}}, "tolerances.tau", "must be a number, got None"),
    ({"tolerances": {"delta": 0.01, "angle_tolerance": False}}, "tolerances.angle_tolerance",
     "must be a number, got False"),
    ({"protocol": {"name": "p", "views": {}}}, "protocol.views", "must be a list, got dict"),
    ({"location": {"input": ["a"]}}, "location.input", "must be text, got list"),
    ({"config": "render-ceiling-5"}, "config", "must be an object, got 'render-ceiling-5'"),
    ({"config": {"protocol": 5}}, "config.protocol", "must be text or an object, got 5"),
])
def test_a_malformed_view_section_is_a_one_line_error_naming_it(tmp_path, changes, where, what):
    d = _sealed_view(**changes)
    with pytest.raises(InputError) as exc:
        CeilingCertificate.from_dict(d)
    assert (exc.value.field, exc.value.message) == (where, f"{where} {what}") and "\n" not in str(exc.value)
    p = tmp_path / "certificate.json"
    p.write_text(json.dumps(d))
    with pytest.raises(InputError) as exc:  # read from a file: the same one line (digest held)
        read(p)
    assert (exc.value.field, exc.value.message) == (where, f"{where} {what}") and "\n" not in str(exc.value)


@pytest.mark.parametrize(("changes", "where", "what"), [
    ({"settings": 5}, "settings", "must be an object, got 5"),
    ({"settings": {"protocol": {"name": "p", "file": 3}}}, "settings.protocol.file", "must be an object, got 3"),
    ({"settings": {"protocol": {"name": "p", "file": {"name": "p.toml"}}, "protocol_sha256": 7}},
     "settings.protocol_sha256", "must be text, got 7"),
    ({"settings": {"ceiling": {"labels": [1]}}}, "settings.ceiling.labels", "must be an object, got list"),
    ({"settings": {"constraints": "format"}}, "settings.constraints", "must be a list, got 'format'"),
    ({"tolerances": {"delta_angstrom": True}}, "tolerances.delta_angstrom", "must be a number, got True"),
    ({"protocol": {"name": "p", "file": []}}, "protocol.file", "must be an object, got list"),
])
def test_a_malformed_export_section_is_a_one_line_error_naming_it(changes, where, what):
    d = json.loads((DATA / "exports" / "v1" / "task" / "certificate.json").read_text())
    d.update(changes)
    with pytest.raises(InputError) as exc:
        TaskCertificate.from_dict(d)
    assert (exc.value.field, exc.value.message) == (where, f"{where} {what}") and "\n" not in str(exc.value)


def test_a_malformed_interaction_settings_is_a_one_line_error():
    d = json.loads((DATA / "exports" / "v1" / "interaction" / "certificate.json").read_text())
    d["settings"] = {**d["settings"], "ceiling": "tight"}
    with pytest.raises(InputError) as exc:
        InteractionCertificate.from_dict(d)
    assert exc.value.field == "settings.ceiling" and "must be an object" in exc.value.message


def test_a_producer_may_hand_sections_as_objects_or_typed():
    d = json.loads((DATA / "certificates" / "v1" / "sheared.json").read_text())
    a = CeilingCertificate.from_dict(d)
    b = CeilingCertificate.from_dict({**d, "tolerances": Tolerances.from_dict(d["tolerances"])})
    assert a == b and b.to_dict() == d


# ---------------------------------------------------------------------- certificates the tests build
def test_a_certify_output_round_trips(hostile_certify):
    """A certify output made from a protocol file, margin on (``explore_fixtures.hostile_certify``)."""
    d = json.loads((hostile_certify / "certificate.json").read_text())
    c = _typed_round_trip(d)
    assert c.config.protocol == "ab.json" and len(c.config.protocol_sha256) == 64 and c.config.margin is True
    assert c.location.protocol.endswith("ab.json") and len(c.protocol.views) == 2


def test_a_streamed_certificate_head_and_sections(tmp_path):
    from tests.support.explore_fixtures import write_table_folder
    from viewcert.formats.reader import receive

    template = json.loads((DATA / "exports" / "v1" / "crystal" / "certificate.json").read_text())
    out = write_table_folder(template, template["items"], tmp_path / "stream", shard_items=2)
    data = json.loads((out / "certificate.json").read_text())
    tc = receive(out / "certificate.json", streamed=True).certificate
    assert tc.inputs.to_dict() == data["inputs"] and tc.tolerances.to_dict() == data["tolerances"]
    assert tc.protocol.to_dict() == data["protocol"] and tc.tolerances.delta == template["tolerances"]["delta"]
    for key, cls in VIEW_SECTIONS.items():
        if key in data:
            assert isinstance(getattr(tc, key), cls) and getattr(tc, key).to_dict() == data[key]
    assert not tc.written("location") and tc.libraries == data["libraries"]  # not a typed section: as written


def test_a_task_export_round_trips(zoom_export):
    d = json.loads((zoom_export / "certificate.json").read_text())
    c = _typed_round_trip(d)
    assert c.settings.task == "zoom" and c.settings.seed == 1 and c.protocol.name == c.settings.protocol
    m = json.loads((zoom_export / "manifest.json").read_text())
    assert ExportSettingsRecord.from_dict(m["settings"]).to_dict() == m["settings"] == d["settings"]


def test_an_interaction_export_round_trips(pocket_ligand_export):
    d = json.loads((pocket_ligand_export / "certificate.json").read_text())
    c = _typed_round_trip(d)
    assert c.settings.task == "pocket-ligand" and c.settings.n_boot == 200 and c.settings.protocol == "axes-6"
    m = json.loads((pocket_ligand_export / "manifest.json").read_text())
    assert ExportSettingsRecord.from_dict(m["settings"]).to_dict() == m["settings"]
