"""The typed sections of an item record (``formats.item_sections``, issue 41 item 1): a hand-written item reads as
the typed fields it states, every committed certificate and the certificates the tests build round-trip exactly
(``from_dict(d).to_dict() == d``) with their sections typed, and a malformed section is a one-line InputError
naming the item and the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from viewcert.errors import InputError
from viewcert.formats.item_sections import (
    HandednessOutcome,
    ItemCeiling,
    MoleculeOutcome,
    OracleReport,
    PointGroupCheck,
    PointGroupOutcome,
    SymmetryRaised,
    UniquenessMargin,
)
from viewcert.formats.records import (
    CeilingCertificate,
    Certificate,
    InteractionItemRecord,
    ItemOutcome,
    certificate_class,
)

DATA = Path(__file__).resolve().parents[1] / "data"
#: the item sections typed here, by record: field -> section class
VIEW_SECTIONS = {"oracle": OracleReport, "uniqueness_margin": UniquenessMargin, "symmetry_raised": SymmetryRaised,
                 "molecule": MoleculeOutcome}
INTERACTION_SECTIONS = {"ideal": ItemCeiling, "rendered": ItemCeiling}

#: a crystal item written by hand: every value below is stated here, not computed by viewcert
CRYSTAL = {
    "id": "nacl", "outcome": "incorrect", "correct": False, "reasons": ["phantoms", "symmetry_raised"],
    "reference_source": "input",
    "label_rendered": {"crystal_system": "tetragonal", "point_group": "4/mmm", "space_group": 139},
    "label_reconstructed": {"crystal_system": "cubic", "point_group": "m-3m", "space_group": 225},
    "oracle": {"status": "ok", "reason": None, "n_points": 8, "n_phantoms": 2, "n_missing": 0, "n_recovered": 8,
               "max_position_error": 0.00125, "min_same_label_distance": 3.99, "margin": 0.5, "separation_ok": True,
               "warnings": None, "a_later_key": [1, 2]},
    "uniqueness_margin": {"delta_star": 0.0042, "bound": "pairs", "delta_exact": 0.0042, "d_min": 3.99,
                          "near_miss": [3, 5], "near_miss_label": 11, "near_miss_point": [0.5, 0.25, 1.0]},
    "symmetry_raised": {"input": {"crystal_system": "cubic", "point_group": "m-3m", "space_group": 225},
                        "rendered": {"crystal_system": "tetragonal", "point_group": "4/mmm", "space_group": 139},
                        "levels": ["crystal_system", "point_group", "space_group"]},
}
#: a molecule item written by hand (CHFClBr: C1, chiral), with an unknown key inside a nested section
MOLECULE = {
    "id": "chfclbr", "outcome": "correct", "correct": True, "periodic": False,
    "oracle": {"status": "ok", "n_phantoms": 0, "n_missing": 0},
    "molecule": {"kind": "molecule", "truth": "input",
                 "point_group": {"input": "C1", "reconstructed": "C1", "tolerance_A": 0.01, "input_closed": True,
                                 "cross_check": {"ours": "C1", "pymatgen": "C1", "agree": True, "tolerance_A": 0.01}},
                 "handedness": {"status": "determined", "reason": "mirror image not consistent", "chiral": True,
                                "point_group": "C1", "tolerance_A": 0.01, "witness": "",
                                "single_view_resolves": [False, True], "new_in_a_later_version": 7},
                 "stereocentres": None,
                 "correct_by_level": {"uniqueness": True, "point_group": True, "handedness": True}},
}
#: an interaction item written by hand (a residue-ligand question: its ideal and rendered ceilings)
INTERACTION = {"id": "q0", "source_id": "1abc:LIG", "positive": True, "n_bonds": 2, "residue": "A/ASP25",
               "ideal": {"residue": "A/ASP25", "positive": True, "n_true": 2, "ceiling": 1.0, "loss": None},
               "rendered": {"residue": "A/ASP25", "positive": True, "n_true": 2, "ceiling": 0.5,
                            "loss": ["label_hidden"]}}


def test_a_hand_written_crystal_item_reads_as_typed_fields():
    it = ItemOutcome.from_dict(copy.deepcopy(CRYSTAL))
    assert isinstance(it.oracle, OracleReport) and isinstance(it.uniqueness_margin, UniquenessMargin)
    assert (it.oracle.status, it.oracle.n_points, it.oracle.n_phantoms, it.oracle.n_missing) == ("ok", 8, 2, 0)
    assert it.oracle.max_position_error == 0.00125 and it.oracle.separation_ok is True
    assert it.oracle.reason is None and it.oracle.warnings is None  # null stays null
    assert it.oracle.extra == {"a_later_key": [1, 2]}  # an unknown key is kept
    assert it.uniqueness_margin.delta_star == 0.0042 and it.uniqueness_margin.near_miss == [3, 5]
    assert it.uniqueness_margin.near_miss_point == [0.5, 0.25, 1.0] and not it.uniqueness_margin.written("error")
    assert isinstance(it.symmetry_raised, SymmetryRaised) and it.symmetry_raised.levels[0] == "crystal_system"
    assert not it.written("molecule") and not it.is_molecule
    # the truth of a raised symmetry is the input's label (reference_source "input")
    assert it.reference("space_group") == 225 and it.predicted("space_group") == 225
    assert it.to_dict() == CRYSTAL


def test_a_hand_written_molecule_item_reads_as_typed_fields():
    it = ItemOutcome.from_dict(copy.deepcopy(MOLECULE))
    mol = it.molecule
    assert isinstance(mol, MoleculeOutcome) and it.is_molecule
    assert isinstance(mol.point_group, PointGroupOutcome) and isinstance(mol.handedness, HandednessOutcome)
    assert isinstance(mol.point_group.cross_check, PointGroupCheck) and mol.point_group.cross_check.agree is True
    assert (mol.point_group.input, mol.point_group.reconstructed, mol.point_group.tolerance_A) == ("C1", "C1", 0.01)
    assert (mol.handedness.status, mol.handedness.chiral) == ("determined", True)
    assert mol.handedness.extra == {"new_in_a_later_version": 7} and mol.stereocentres is None
    assert mol.correct_by_level == {"uniqueness": True, "point_group": True, "handedness": True}
    assert it.predicted("point_group") == "C1" and it.reference("point_group") == "C1"
    assert not it.oracle.written("n_recovered")  # a key the item did not write
    assert it.to_dict() == MOLECULE


def test_a_hand_written_interaction_item_reads_as_typed_fields():
    it = InteractionItemRecord.from_dict(copy.deepcopy(INTERACTION))
    assert isinstance(it.ideal, ItemCeiling) and isinstance(it.rendered, ItemCeiling)
    assert it.ceiling("ideal") == 1.0 and it.ceiling("rendered") == 0.5 and it.ceiling() == 0.5
    assert it.rendered.loss == ["label_hidden"] and it.ideal.loss is None and not it.rendered.written("n_determined")
    assert it.to_dict() == INTERACTION
    without = InteractionItemRecord.from_dict({"id": "q1", "rendered": {"n_true": 0}})
    with pytest.raises(InputError, match="rendered ceiling"):
        without.ceiling()


def test_a_producer_may_hand_a_record_a_section_or_its_dict():
    orc = OracleReport(status="ok", n_phantoms=1)
    a = ItemOutcome(id="x", outcome="correct", correct=True, oracle=orc)
    b = ItemOutcome(id="x", outcome="correct", correct=True, oracle={"status": "ok", "n_phantoms": 1})
    assert a.oracle is orc and b.oracle == orc and a.to_dict() == b.to_dict()
    assert a.to_dict()["oracle"] == {"status": "ok", "n_phantoms": 1}
    assert not ItemOutcome(id="y", outcome="correct", correct=True, oracle={}).oracle  # empty: falsy like {}


def _certificates(root: Path) -> list[tuple[Path, dict]]:
    out = []
    for p in sorted(root.rglob("*.json")):
        d = json.loads(p.read_text())
        if not (isinstance(d, dict) and isinstance(d.get("items"), list)):
            continue
        try:
            certificate_class(d)
        except InputError:  # a manifest or a harness file, not a certificate
            continue
        out.append((p, d))
    return out


def _check_typed(cert: Certificate, d: dict) -> int:
    """Every section the raw JSON item holds as an object is typed in the record (the raw JSON read by key here,
    independently of the typed path); the number of sections seen."""
    sections = INTERACTION_SECTIONS if cert.KIND == "interaction" else VIEW_SECTIONS if cert.KIND == "ceiling" else {}
    seen = 0
    for raw, it in zip(d["items"], cert.items, strict=True):
        for name, cls in sections.items():
            if isinstance(raw.get(name), dict):
                assert isinstance(getattr(it, name), cls), (it.id, name)
                assert getattr(it, name).to_dict() == raw[name]
                seen += 1
            else:
                assert getattr(it, name) == raw.get(name)
        if cert.KIND == "ceiling" and isinstance(raw.get("molecule"), dict):
            assert it.molecule.point_group.input == raw["molecule"]["point_group"]["input"]
            assert it.molecule.handedness.status == raw["molecule"]["handedness"]["status"]
    return seen


def test_every_committed_certificate_round_trips_with_its_sections_typed():
    found = _certificates(DATA)
    kinds = {certificate_class(d).KIND for _, d in found}
    assert {"ceiling", "task", "interaction"} <= kinds, kinds  # the fixtures cover every kind
    seen = 0
    for path, d in found:
        cert = Certificate.from_dict(copy.deepcopy(d))
        assert cert.to_dict() == d, path
        seen += _check_typed(cert, d)
    assert seen > 0


def test_a_built_molecule_certificate_round_trips(tmp_path):
    """Two molecules certified (CHFClBr: C1, chiral; water: C2v, achiral), the margin on: the certificate as
    written reads typed and writes back the same object."""
    from tests.support.export_fixtures import CHFCLBR_XYZ, WATER_XYZ
    from viewcert.certify import CertifyConfig
    from viewcert.certify.run import certify

    src = tmp_path / "in"
    src.mkdir()
    (src / "chfclbr.xyz").write_text(CHFCLBR_XYZ)
    (src / "water.xyz").write_text(WATER_XYZ)
    certify(str(src), CertifyConfig(protocol="axes-3", margin=True), out=tmp_path / "out", n_workers=1, plots=False,
            progress=False)
    d = json.loads((tmp_path / "out" / "certificate.json").read_text())
    cert = CeilingCertificate.from_dict(copy.deepcopy(d))
    assert cert.to_dict() == d
    assert _check_typed(cert, d) >= 4
    by_id = {it.id: it for it in cert.items}
    assert set(by_id) == {"chfclbr", "water"}
    assert by_id["chfclbr"].molecule.point_group.input == "C1" and by_id["chfclbr"].molecule.handedness.chiral
    assert by_id["water"].molecule.point_group.input == "C2v"
    assert by_id["water"].molecule.handedness.status == "achiral"
    assert all(it.uniqueness_margin for it in cert.items)  # margin=True: every item has its section


def test_a_built_interaction_certificate_round_trips(pocket_ligand_export):
    d = json.loads((pocket_ligand_export / "certificate.json").read_text())
    cert = Certificate.from_dict(copy.deepcopy(d))
    assert cert.KIND == "interaction" and cert.to_dict() == d
    assert _check_typed(cert, d) == 2 * len(d["items"])  # every item has both ceilings
    for raw, it in zip(d["items"], cert.items, strict=True):
        assert it.ceiling("rendered") == raw["rendered"]["ceiling"] and it.ceiling("ideal") == raw["ideal"]["ceiling"]


# ---------------------------------------------------------------------- malformed sections: one line, named
def _sample() -> dict:
    return json.loads((DATA / "certificates" / "v1" / "sample.json").read_text())


def _molecule_index(d: dict) -> int:
    return next(k for k, it in enumerate(d["items"]) if isinstance(it.get("molecule"), dict))


@pytest.mark.parametrize(("mutate", "field"), [
    (lambda d: d["items"][3].__setitem__("oracle", "ok"), "items[3].oracle"),
    (lambda d: d["items"][3].__setitem__("oracle", [1, 2]), "items[3].oracle"),
    (lambda d: d["items"][2]["oracle"].__setitem__("n_phantoms", "3"), "items[2].oracle.n_phantoms"),
    (lambda d: d["items"][2]["oracle"].__setitem__("n_missing", True), "items[2].oracle.n_missing"),
    (lambda d: d["items"][1]["oracle"].__setitem__("warnings", "one warning"), "items[1].oracle.warnings"),
    (lambda d: d["items"][0].__setitem__("uniqueness_margin", 0.5), "items[0].uniqueness_margin"),
    (lambda d: d["items"][0].__setitem__("symmetry_raised", {"input": "cubic"}), "items[0].symmetry_raised.input"),
    (lambda d: d["items"][_molecule_index(d)].__setitem__("molecule", ["C1"]),
     "items[{m}].molecule"),
    (lambda d: d["items"][_molecule_index(d)]["molecule"].__setitem__("point_group", "C1"),
     "items[{m}].molecule.point_group"),
    (lambda d: d["items"][_molecule_index(d)]["molecule"]["point_group"].__setitem__("cross_check", 1),
     "items[{m}].molecule.point_group.cross_check"),
    (lambda d: d["items"][_molecule_index(d)]["molecule"]["handedness"].__setitem__("status", 0),
     "items[{m}].molecule.handedness.status"),
])
def test_a_malformed_item_section_is_a_one_line_error_naming_it(mutate, field):
    d = _sample()
    field = field.format(m=_molecule_index(d))  # the molecule item, before it is broken
    mutate(d)
    with pytest.raises(InputError) as exc:
        CeilingCertificate.from_dict(d)
    assert exc.value.field == field, str(exc.value)
    assert "\n" not in str(exc.value) and field.split(".")[0] in str(exc.value)


@pytest.mark.parametrize("mode", ["ideal", "rendered"])
def test_a_malformed_interaction_ceiling_is_a_one_line_error_naming_it(mode):
    d = json.loads((DATA / "exports" / "v1" / "interaction" / "certificate.json").read_text())
    d["items"][0][mode] = [0.5]
    with pytest.raises(InputError) as exc:
        Certificate.from_dict(d)
    assert exc.value.field == f"items[0].{mode}" and "\n" not in str(exc.value)


def test_a_malformed_section_read_from_a_file_names_the_file_and_the_item(tmp_path):
    from viewcert.certify.certificate import write_certificate
    from viewcert.formats.reader import read
    from viewcert.formats.records import sealed

    d = _sample()
    d["items"][4]["oracle"] = "ok"
    path = tmp_path / "certificate.json"
    write_certificate(path, sealed(d))  # digest current: the section itself is what is refused
    with pytest.raises(InputError) as exc:
        read(path)
    assert exc.value.field == "items[4].oracle" and "\n" not in str(exc.value)


def test_a_wrong_kind_in_an_item_section_is_named_by_its_full_path():
    """The one message shape, naming the item by its place in the certificate (hand-written expectations)."""
    d = _sample()
    d["items"][2]["oracle"]["n_phantoms"] = 1.5
    with pytest.raises(InputError) as exc:
        CeilingCertificate.from_dict(d)
    assert exc.value.message == "items[2].oracle.n_phantoms must be a count, got 1.5"
    m = _molecule_index(d := _sample())
    d["items"][m]["molecule"]["point_group"]["cross_check"] = {"ours": "C1", "pymatgen": "C1", "agree": True}
    d["items"][m]["molecule"]["handedness"]["status"] = ["determined"]
    with pytest.raises(InputError) as exc:
        CeilingCertificate.from_dict(d)
    assert exc.value.field == f"items[{m}].molecule.handedness.status"
    assert exc.value.message == f"items[{m}].molecule.handedness.status must be text, got list"
