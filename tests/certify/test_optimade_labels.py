"""Databases without an option (issue 57, item 4): OPTIMADE's standard symmetry properties are read as published
labels with no ``--label-column``, a column that looks like a label is named in a one-line hint when no label is
read, and the R1 line names the truth it scored against.

Inputs made here: six AFLOW prototypes (1-6 atoms) in an OPTIMADE-style Parquet file. Expected values by hand from
the International Tables: the prototypes' space groups are in their labels (``A_cF4_225_a`` is Fm-3m, 225;
``A_hP2_194_c`` P6_3/mmc, 194; ``A_tI4_141_a`` I4_1/amd, 141; ``A_oC4_63_c`` Cmcm, 63; ``A_mC4_12_i`` C2/m, 12),
their Hall and Hermann–Mauguin symbols as the Tables print them, and two planted wrong labels (221 for the
hexagonal ``A_hP2_194_c``: Pm-3m is cubic; 2 for the monoclinic ``A_mC4_12_i``: P-1 is triclinic), which the
label audit must name, and only them."""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from viewcert.certify.inputs import label_hint, load_input
from viewcert.certify.summary import truth_text
from viewcert.elements import symbols
from viewcert.io.builtin import builtin

PROTOTYPES = {"A_cF4_225_a": 225, "AB_cF8_225_a_b": 225, "A_hP2_194_c": 194, "A_tI4_141_a": 141,
              "A_oC4_63_c": 63, "A_mC4_12_i": 12}
PLANTED = {"A_hP2_194_c": 221, "A_mC4_12_i": 2}
#: each prototype's group in the other OPTIMADE notations, as the International Tables print them
HALL = {225: "-F 4 2 3", 194: "-P 6c 2c", 141: "-I 4bd 2", 63: "-C 2c 2", 12: "-C 2y"}
HM = {225: "F m -3 m", 194: "P 63/m m c", 141: "I 41/a m d", 63: "C m c m", 12: "C 2/m"}
HM_EXTENDED = {225: "F 4/m -3 2/m", 194: "P 63/m 2/m 2/c", 141: "I 41/a 2/m 2/d", 63: "C 2/m 2/c 21/m",
               12: "C 1 2/m 1"}
#: P-1 (2) and P2_1/c (14) with its origin moved to t = (0.1, 0.2, 0.3): each operation (R, T) of the Tables
#: becomes (R, R t + T − t), worked by hand (any origin is read)
OPERATIONS = {2: ["x,y,z", "-x,-y,-z"],
              14: ["x,y,z", "-x-1/5,y+1/2,-z-1/10", "-x-1/5,-y-2/5,-z-3/5", "x,-y+1/10,z+1/2"]}


def _table(labels: dict[str, dict]) -> pa.Table:
    ss = {s.identifier.removeprefix("aflow:"): s for s in builtin("builtin:prototypes")
          if s.identifier.removeprefix("aflow:") in PROTOTYPES}
    ids = list(PROTOTYPES)
    cols = {"immutable_id": ids, "lattice_vectors": [ss[i].lattice.tolist() for i in ids],
            "cartesian_site_positions": [ss[i].positions.tolist() for i in ids],
            "species_at_sites": [list(symbols(ss[i].numbers)) for i in ids]}
    for name, by_id in labels.items():
        cols[name] = [by_id.get(i) for i in ids]
    return pa.table(cols)


def _parquet(path: Path, labels: dict[str, dict]) -> Path:
    pq.write_table(_table(labels), path, row_group_size=3)
    return path


def _certify(spec: str, out: Path, **kw) -> str:
    from viewcert.api import certify
    from viewcert.certify.config import CertifyConfig

    report = certify(spec, CertifyConfig(), out, workers=1, plots=False, **kw)
    return report.text()


def test_optimade_it_number_is_audited_without_an_option(tmp_path):
    published = {i: PLANTED.get(i, sg) for i, sg in PROTOTYPES.items()}
    db = _parquet(tmp_path / "db.parquet", {"space_group_it_number": published})
    text = _certify(str(db), tmp_path / "cert")
    assert "inputs: " in text and "db.parquet#label=space_group_it_number (optimade), 6 items" in text
    assert "label audit: 6 items with a published label" in text
    rows = list(csv.DictReader((tmp_path / "cert" / "label_audit.csv").open()))
    wrong = {r["id"] for r in rows if "published_vs_input" in r["kinds"]}
    assert wrong == set(PLANTED)  # exactly the planted ids
    sg = {r["id"]: r["published"] for r in rows if r["level"] == "space_group"}
    assert sg == {i: str(n) for i, n in PLANTED.items()}
    # the R1 line names the truth it scored against: the crystal system is the input's own (the labels state the
    # space group only), the space group is the labels' (4 of 6 agree: the two planted ones do not)
    r1 = next(x for x in text.splitlines() if x.startswith("R1 ("))
    assert r1.startswith("R1 (crystal_system, truth = the symmetry of the input itself at crystal_system: the "
                         "dataset's labels (column space_group_it_number) state space_group only, scored on the "
                         "by-level line): 6/6")
    assert "space_group 4/6" in text and "hint:" not in text


@pytest.mark.parametrize(("column", "values"), [
    ("space_group_symbol_hall", HALL), ("space_group_symbol_hermann_mauguin", HM),
    ("space_group_symbol_hermann_mauguin_extended", HM_EXTENDED)])
def test_each_optimade_symbol_column_is_read_as_its_number(tmp_path, column, values):
    db = _parquet(tmp_path / "db.parquet", {column: {i: values[sg] for i, sg in PROTOTYPES.items()}})
    d = load_input(str(db))
    assert d.spec.endswith(f"#label={column}")
    assert {it.id: it.label for it in d.items} == {i: {"space_group": sg} for i, sg in PROTOTYPES.items()}


def test_optimade_operations_are_read_in_any_origin(tmp_path):
    ops = {"A_cF4_225_a": OPERATIONS[2], "A_hP2_194_c": OPERATIONS[14], "A_mC4_12_i": ["x,y,z", "x,y"]}
    db = _parquet(tmp_path / "db.parquet", {"space_group_symmetry_operations_xyz": ops})
    d = load_input(str(db))
    by_id = {it.id: it for it in d.items}
    assert by_id["A_cF4_225_a"].label == {"space_group": 2} and by_id["A_hP2_194_c"].label == {"space_group": 14}
    assert by_id["A_oC4_63_c"].label in (None, {})  # no value: no label, not an error
    with pytest.raises(Exception, match="space_group_symmetry_operations_xyz: symmetry operation 'x,y'"):
        by_id["A_mC4_12_i"].read()


def test_the_it_number_comes_first_and_an_option_wins(tmp_path):
    both = {"space_group_symbol_hermann_mauguin": {i: HM[sg] for i, sg in PROTOTYPES.items()},
            "space_group_it_number": dict(PROTOTYPES)}
    db = _parquet(tmp_path / "db.parquet", both)
    assert load_input(str(db)).spec.endswith("#label=space_group_it_number")
    named = load_input(f"{db}#label=space_group_symbol_hermann_mauguin")
    assert named.spec.endswith("#label=space_group_symbol_hermann_mauguin")
    assert {it.label["space_group"] for it in named.items} == set(PROTOTYPES.values())


def test_a_label_like_column_is_named_in_a_hint(tmp_path):
    db = _parquet(tmp_path / "db.parquet", {"spacegroup_number": dict(PROTOTYPES), "band_gap": {}})
    assert label_hint(load_input(str(db))) == ("hint: no published label is read, but 'spacegroup_number' looks "
                                               "like one: --label-column spacegroup_number audits it")
    plain = _parquet(tmp_path / "plain.parquet", {"band_gap": {}})
    assert label_hint(load_input(str(plain))) is None
    assert label_hint(load_input(f"{db}#label=spacegroup_number")) is None  # a label is read: nothing to hint
    odd = _parquet(tmp_path / "odd.parquet", {"symmetry": {}})  # no level in its words: the option says so
    assert label_hint(load_input(str(odd))).endswith(
        "--label-column symmetry:LEVEL (LEVEL one of crystal_system, point_group, space_group) audits it")


def test_no_label_column_says_so_in_the_streamed_summary_too(tmp_path):
    """Before, the item-table summary printed the rule's name, ``truth = dataset``, for a file with no label."""
    db = _parquet(tmp_path / "db.parquet", {})
    text = _certify(str(db), tmp_path / "cert", item_table=True)
    assert "R1 (crystal_system, truth = the symmetry of the input itself (no dataset label)): 6/6" in text
    assert "truth = dataset" not in text


def test_truth_in_words_by_hand():
    n6 = {"n": 6}
    assert truth_text({}, "crystal_system") == "none: no item was scored"
    assert truth_text(n6, "crystal_system") == "the symmetry of the input itself (no dataset label)"
    assert truth_text({**n6, "dataset:crystal_system": 6}, "crystal_system") == "dataset"
    assert truth_text({**n6, "dataset:crystal_system": 6}, "crystal_system", columns=("cs",)) == "dataset (column cs)"
    assert truth_text({**n6, "dataset:crystal_system": 4}, "crystal_system") == \
        "dataset for 4 items, the symmetry of the input itself for 2"
    assert truth_text({**n6, "dataset:space_group": 6, "dataset:point_group": 1}, "crystal_system") == (
        "the symmetry of the input itself at crystal_system: the dataset's labels state point_group and space_group "
        "only, scored on the by-level line")
    assert truth_text(n6, "crystal_system", "rendered") == "rendered"
