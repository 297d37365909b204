"""The typed sections of a certificate's summary (``formats.summary_sections``, issue 41 item 1): a hand-written
summary and its expected typed fields, the exact round trip over every committed certificate fixture and over a
streamed summary computed from one, and the one-line error naming where of a malformed section."""

import json
from pathlib import Path

import pytest

from viewcert.certify.config import CertifyConfig
from viewcert.certify.stream import Tally, tally_summary
from viewcert.errors import InputError
from viewcert.formats.records import CeilingCertificate, Certificate, ItemOutcome, Summary, TaskCertificate
from viewcert.formats.summary_sections import (
    InteractionGroup,
    InteractionSummary,
    Kinds,
    LevelCount,
    MeanInterval,
    MoleculeSummary,
    PhantomCensus,
    RateBound,
    TableSummary,
    TaskGroup,
    TaskSummary,
)

DATA = Path(__file__).resolve().parents[1] / "data"
FIXTURES = sorted(p for p in DATA.rglob("*.json") if p.name != "manifest.json"
                  and json.loads(p.read_text()).get("format") is not None)

CENSUS = {"items_with_phantoms": 2, "total_phantoms": 7, "items_with_missing_atoms": 1, "total_missing_atoms": 1,
          "items_oracle_failed": 0, "items_unique": 5, "items_exact": 5, "items_certified": 4}
HAND = {"n": 8, "n_errors": 1, "kinds": {"crystals": 8, "molecules": 0}, "score": "space_group",
        "truth": "dataset", "correct": 6, "R1": 0.75,
        "bound": {"k": 6, "n": 8, "rate": 0.75, "confidence": 0.95, "sided": "one-sided-lower", "lower": 0.40,
                  "upper": 1.0, "method": "clopper-pearson", "text": "6/8 = 0.7500; ..."},
        "interval": {"text": "no item could be read or certified: no bound"},
        "by_level": {"space_group": {"correct": 6, "R1": 0.75}}, "by_crystal_system": {"cubic": {"n": 8, "correct": 6}},
        "phantom_census": CENSUS, "failure_reasons": {"phantoms": 2}, "failures": [], "label_mismatches": [],
        "cross_check_disagreements": [], "errors": [{"id": "x", "error": "read"}], "molecules": None,
        "a_later_key": {"kept": True}}


def test_a_hand_written_summary_typed():
    s = Summary.from_dict(HAND)
    assert isinstance(s.kinds, Kinds) and (s.kinds.crystals, s.kinds.molecules) == (8, 0)
    assert isinstance(s.bound, RateBound) and (s.bound.k, s.bound.n, s.bound.lower, s.bound.sided) == (
        6, 8, 0.40, "one-sided-lower")
    assert s.interval.text.startswith("no item") and not s.interval.written("lower") and s.interval
    assert isinstance(s.phantom_census, PhantomCensus)
    assert (s.phantom_census.items_with_phantoms, s.phantom_census.total_phantoms,
            s.phantom_census.items_certified) == (2, 7, 4)
    assert isinstance(s.by_level["space_group"], LevelCount) and (s.by_level["space_group"].correct,
                                                                  s.by_level["space_group"].R1) == (6, 0.75)
    assert (s.by_crystal_system["cubic"].n, s.by_crystal_system["cubic"].correct) == (8, 6)
    assert s.molecules is None and s.extra == {"a_later_key": {"kept": True}}
    assert s.to_dict() == HAND
    no_kinds = {**HAND, "kinds": {}}
    assert not Summary.from_dict(no_kinds).kinds and Summary.from_dict(no_kinds).to_dict() == no_kinds


def test_a_molecule_summary_typed():
    mol = {"n": 3, "truth": "input", "by_level": {"point_group": {"correct": 3, "R1": 1.0, "bound": "3/3"}},
           "handedness": {"determined": 3}, "input_point_groups": {"C1": 3},
           "point_group_cross_check_disagreements": []}
    s = Summary.from_dict({**HAND, "molecules": mol})
    assert isinstance(s.molecules, MoleculeSummary) and (s.molecules.n, s.molecules.handedness) == (
        3, {"determined": 3})
    assert s.to_dict()["molecules"] == mol
    assert (s.molecules.by_level["point_group"].correct, s.molecules.by_level["point_group"].bound) == (3, "3/3")


def test_a_hand_written_task_and_interaction_summary():
    g = {"n": 4, "unique": 1, "unique_bound": {"k": 1, "n": 4, "sided": "one-sided-lower", "lower": 0.01},
         "exact_ceiling": {"mean": 0.5, "lo95": 0.25, "hi95": 0.75}, "partial_ceiling": {"mean": 0.6},
         "explanations": {"mirror": 3}}
    d = {"all": {**g, "excluded": [{"structure_id": "planar"}]}, "axis y": g}
    s = TaskSummary.from_dict(d)
    assert isinstance(s.all, TaskGroup) and (s.all.n, s.all.unique, s.all.unique_bound.lower) == (4, 1, 0.01)
    assert isinstance(s.all.exact_ceiling, MeanInterval) and s.all.exact_ceiling.hi95 == 0.75
    assert not s.all.written("handedness_ceiling") and s.all.excluded == [{"structure_id": "planar"}]
    assert list(s.groups()) == ["all", "axis y"] and s.groups()["axis y"].partial_ceiling.mean == 0.6
    assert s.to_dict() == d and s.extra == {"axis y": g}
    i = {"all": {"n": 2, "ideal": {"mean": 1.0, "lo": 1.0, "hi": 1.0}, "rendered": {"mean": 0.5, "lo": 0.0,
                                                                                     "hi": 1.0}},
         "negative": {"n": 1}, "bonds=1": {"n": 1, "rendered": {"mean": 1.0, "lo": 1.0, "hi": 1.0}}}
    t = InteractionSummary.from_dict(i)
    assert isinstance(t.all, InteractionGroup) and (t.all.rendered.mean, t.all.ideal.hi) == (0.5, 1.0)
    assert not t.written("positive") and t.negative.n == 1 and not t.negative.written("rendered")
    assert list(t.groups()) == ["all", "negative", "bonds=1"] and t.groups()["bonds=1"].rendered.lo == 1.0
    assert t.to_dict() == i


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(DATA)))
def test_every_committed_certificate_round_trips(path):
    d = json.loads(path.read_text())
    cert = Certificate.from_dict(d)
    assert cert.to_dict() == d
    if isinstance(cert, CeilingCertificate):
        assert isinstance(cert.summary.kinds, Kinds) and isinstance(cert.summary.phantom_census, PhantomCensus)
        assert cert.summary.bound.n == cert.summary.n == d["summary"]["bound"]["n"]
    elif isinstance(cert, TaskCertificate):
        assert isinstance(cert.summary, TaskSummary) and cert.summary.all.n == d["summary"]["all"]["n"]
    else:
        assert isinstance(cert.summary, InteractionSummary) and cert.summary.all.n == d["summary"]["all"]["n"]


def test_a_streamed_summary_round_trips_and_states_the_json_figures():
    """The streamed summary (``tally_summary`` over a committed certificate's items) types as
    :class:`TableSummary`, keeps its round trip, and its figures are the JSON summary's."""
    d = json.loads((DATA / "exports/v1/crystal/certificate.json").read_text())
    summ = tally_summary(Tally.of([ItemOutcome.from_dict(it) for it in d["items"]]), CertifyConfig())
    s = TableSummary.from_dict(summ)
    assert s.to_dict() == summ
    assert (s.n, s.correct, s.kinds.to_dict()) == (d["summary"]["n"], d["summary"]["correct"], d["summary"]["kinds"])
    assert s.phantom_census.to_dict() == d["summary"]["phantom_census"]
    assert s.bound.text == summ["bound"]["text"]


@pytest.mark.parametrize(("bad", "where", "message"), [
    ({"kinds": [8, 0]}, "summary.kinds", "must be an object, got list"),
    ({"bound": "6/8"}, "summary.bound", "must be an object, got '6/8'"),
    ({"phantom_census": {**CENSUS, "items_unique": "5"}}, "summary.phantom_census.items_unique",
     "must be a count, got '5'"),
    ({"phantom_census": {**CENSUS, "total_phantoms": True}}, "summary.phantom_census.total_phantoms",
     "must be a count, got True"),
    ({"phantom_census": {**CENSUS, "items_exact": 4.5}}, "summary.phantom_census.items_exact",
     "must be a count, got 4.5"),
    ({"interval": {"lower": "low"}}, "summary.interval.lower", "must be a number, got 'low'"),
    ({"molecules": 3}, "summary.molecules", "must be an object, got 3"),
    ({"molecules": {"n": 1.0}}, "summary.molecules.n", "must be a count, got 1.0"),
    ({"by_level": {"space_group": 6}}, "summary.by_level.space_group", "must be an object, got 6"),
    ({"by_crystal_system": {"cubic": {"n": "8"}}}, "summary.by_crystal_system.cubic.n",
     "must be a count, got '8'"),
    ({"by_level": [6]}, "summary.by_level", "must be an object, got list"),
])
def test_a_malformed_summary_section_is_one_named_line(bad, where, message):
    with pytest.raises(InputError) as e:
        CeilingCertificate.from_dict({**json.loads((DATA / "certificates/v1/crystals.json").read_text()),
                                   "summary": {**HAND, **bad}})
    assert (e.value.field, e.value.message) == (where, f"{where} {message}")
    assert "\n" not in str(e.value)


def test_a_malformed_task_or_interaction_group_is_one_named_line():
    d = json.loads((DATA / "exports/v1/task/certificate.json").read_text())
    with pytest.raises(InputError, match=r"summary\.axis y must be an object, got list"):
        Certificate.from_dict({**d, "summary": {**d["summary"], "axis y": []}})
    with pytest.raises(InputError, match=r"summary\.all\.exact_ceiling\.mean must be a number, got '1'"):
        Certificate.from_dict({**d, "summary": {"all": {"exact_ceiling": {"mean": "1"}}}})
    with pytest.raises(InputError, match=r"summary must be an object, got 3"):
        Certificate.from_dict({**d, "summary": 3})
    assert Certificate.from_dict({**d, "summary": None}).summary is None
    i = json.loads((DATA / "exports/v1/interaction/certificate.json").read_text())
    with pytest.raises(InputError, match=r"summary\.all\.rendered must be an object, got 0\.5"):
        Certificate.from_dict({**i, "summary": {"all": {"n": 1, "rendered": 0.5}}})
    with pytest.raises(InputError, match=r"summary\.n must be a count, got '1'"):
        TableSummary.from_dict({"n": "1"})


def test_a_received_streamed_summary_is_checked_with_its_shape():
    """``check_table_shape`` (what a streamed certificate received passes first) refuses a malformed summary in
    one line naming the file and the field."""
    from viewcert.formats.table import StreamedCertificate

    bad = {"format": StreamedCertificate.FORMATS[0], "inputs": {}, "config": {}, "summary": {"n": 3, "kinds": [3, 0]},
           "items_table": {}}
    with pytest.raises(InputError, match=r"summary\.kinds must be an object, got list") as e:
        StreamedCertificate.opened("sent/certificate.json", bad)
    assert (e.value.source, e.value.field) == ("sent/certificate.json", "summary.kinds")
    assert "\n" not in str(e.value)


def test_a_group_read_under_another_name_is_named_where_it_was_read():
    """A section names its fields under its ``SOURCE`` (``summary.all.rendered``); read as another group's
    section it is named where it was read (hand-written expectations)."""
    with pytest.raises(InputError) as e:
        InteractionSummary.from_dict({"positive": {"n": 2, "rendered": {"mean": "high"}}})
    assert e.value.message == "summary.positive.rendered.mean must be a number, got 'high'"
    with pytest.raises(InputError) as e:
        TaskSummary.from_dict({"all": {"n": 1}, "axis y": {"n": 1, "unique_bound": {"k": False}}})
    assert e.value.message == "summary.axis y.unique_bound.k must be a count, got False"
    with pytest.raises(InputError) as e:
        TaskSummary.from_dict({"all": {"n": 1}, "axis y": None})
    assert e.value.message == "summary.axis y must be an object, got None"
    with pytest.raises(InputError) as e:  # read on its own: named under the section's own SOURCE
        TaskGroup.from_dict({"n": 1, "exact_ceiling": {"lo95": [0.1]}})
    assert e.value.message == "summary.all.exact_ceiling.lo95 must be a number, got list"
