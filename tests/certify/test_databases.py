"""Database inputs (``viewcert.io.database``, ``certify.inputs.load_database``) and the label audit
(``certify.audit``): OPTIMADE-style Parquet, GNoME's CSV + zip layout and an ASE database, made here by the tests.

Expected values are worked out independently of the code: the AFLOW prototypes' space groups are in their labels
(``A_cF4_225_a`` is Fm-3m, 225), the planted wrong labels are chosen by hand with their levels worked out from the
International Tables (221 Pm-3m is cubic, point group m-3m; 12 C2/m is monoclinic, 2/m)."""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.certify import audit as A
from viewcert.certify.inputs import label_column, load_input, parse_database_spec
from viewcert.elements import symbols
from viewcert.errors import InputError
from viewcert.formats.records import ItemOutcome
from viewcert.io.builtin import builtin
from viewcert.io.database import LabelColumn, gnome_entries, label_value
from viewcert.symmetry.labels import point_group_of

#: six AFLOW prototypes (1-6 atoms) and the space group their label states
PROTOTYPES = {"A_cF4_225_a": 225, "AB_cF8_225_a_b": 225, "A_hP2_194_c": 194, "A_tI4_141_a": 141,
              "A_oC4_63_c": 63, "A_mC4_12_i": 12}


def _prototypes() -> dict:
    return {s.identifier.removeprefix("aflow:"): s for s in builtin("builtin:prototypes")
            if s.identifier.removeprefix("aflow:") in PROTOTYPES}


def _write_parquet(path: Path, labels: dict, *, row_group_size: int = 2, broken: dict | None = None) -> Path:
    """An OPTIMADE-style Parquet file of the prototypes with a ``space_group_number`` column (``labels``);
    ``broken`` replaces a column's value in one row: {(id, column): value}."""
    ss = _prototypes()
    ids = list(PROTOTYPES)
    cols = {"immutable_id": ids, "lattice_vectors": [ss[i].lattice.tolist() for i in ids],
            "cartesian_site_positions": [ss[i].positions.tolist() for i in ids],
            "species_at_sites": [list(symbols(ss[i].numbers)) for i in ids],
            "space_group_number": [labels[i] for i in ids]}
    for (ident, col), value in (broken or {}).items():
        cols[col][ids.index(ident)] = value
    pq.write_table(pa.table(cols), path, row_group_size=row_group_size)
    return path


def test_label_values_normalised_to_viewcerts_vocabulary():
    assert label_value("225", "space_group") == 225 and label_value(12.0, "space_group") == 12
    assert label_value("Cubic", "crystal_system") == "cubic"
    assert label_value("-4m2", "point_group") == "-42m" and label_value("3m1", "point_group") == "3m"
    for bad, level in ((0, "space_group"), (231, "space_group"), (12.5, "space_group"), ("cubical", "crystal_system"),
                       ("5mm", "point_group")):
        with pytest.raises(ValueError):
            label_value(bad, level)
    # spglib's point group of a space-group number, against the International Tables
    assert [point_group_of(n) for n in (1, 12, 115, 187, 221)] == ["1", "2/m", "-42m", "-6m2", "m-3m"]


def test_database_specs_and_label_levels():
    assert label_column("space_group_number", "x") == LabelColumn("space_group_number", "space_group")
    assert label_column("Crystal System", "x") == LabelColumn("Crystal System", "crystal_system")
    assert label_column("sym:point_group", "x") == LabelColumn("sym", "point_group")
    with pytest.raises(InputError, match="COLUMN:LEVEL"):
        label_column("truth", "x")
    fmt, path, labels, id_col = parse_database_spec("optimade:d/x.parquet#label=sg:space_group,id=mid")
    assert (fmt, path, labels, id_col) == ("optimade", Path("d/x.parquet"), (LabelColumn("sg", "space_group"),), "mid")
    assert parse_database_spec("a.db")[0] == "ase" and parse_database_spec("gnome:g")[2] is None


def test_parquet_rows_read_lazily_with_malformed_rows_as_item_errors(tmp_path):
    path = _write_parquet(tmp_path / "db.parquet", PROTOTYPES, broken={
        ("A_tI4_141_a", "species_at_sites"): ["Sn", "Qq"], ("A_oC4_63_c", "space_group_number"): 999,
        ("A_mC4_12_i", "lattice_vectors"): [[1.0, 0, 0], [0, 1.0, 0]]})
    d = load_input(f"{path}#label=space_group_number")
    assert [it.id for it in d.items] == list(PROTOTYPES) and d.kind == "optimade"
    by_id = {it.id: it for it in d.items}
    assert by_id["A_cF4_225_a"].label == {"space_group": 225}
    s = by_id["A_hP2_194_c"].read()  # row 2: the second row group's first row
    ref = _prototypes()["A_hP2_194_c"]
    assert np.array_equal(s.positions, ref.positions) and np.array_equal(s.lattice, ref.lattice)
    assert s.identifier == "A_hP2_194_c"
    cases = {"A_tI4_141_a": "row 3, field species_at_sites: unknown element symbol 'Qq'",
             "A_oC4_63_c": "row 4, field space_group_number: space-group number 999",
             "A_mC4_12_i": "row 5, field lattice_vectors: expected 3 rows of 3 numbers"}
    for ident, says in cases.items():
        with pytest.raises(InputError) as exc:
            by_id[ident].read()
        assert f"file db.parquet {says}" in str(exc.value)


def test_parquet_missing_column_and_repeated_id(tmp_path):
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"immutable_id": ["a"], "lattice_vectors": [[[1.0, 0, 0]] * 3]}), path)
    with pytest.raises(InputError, match="field cartesian_site_positions: no column"):
        load_input(str(path))
    path = _write_parquet(tmp_path / "y.parquet", PROTOTYPES, broken={("A_mC4_12_i", "immutable_id"): "A_cF4_225_a"})
    d = load_input(str(path))
    bad = d.items[-1]
    assert bad.id == "y.parquet:5" and bad.kind == "invalid"
    with pytest.raises(InputError, match=r"row 5, field id: id 'A_cF4_225_a' is repeated"):
        bad.read()


def _cif(name: str, a: float, sites: list[tuple[str, float, float, float]]) -> str:
    """A cubic P1 CIF of edge ``a`` Å with the fractional ``sites``."""
    rows = "\n".join(f"{el}{k} {el} {x} {y} {z} 1.0" for k, (el, x, y, z) in enumerate(sites))
    return (f"data_{name}\n_symmetry_space_group_name_H-M 'P 1'\n_cell_length_a {a}\n_cell_length_b {a}\n"
            f"_cell_length_c {a}\n_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\n"
            "loop_\n_symmetry_equiv_pos_as_xyz\n'x, y, z'\n"
            "loop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n"
            f"_atom_site_fract_z\n_atom_site_occupancy\n{rows}\n")


def _gnome_folder(tmp_path: Path) -> Path:
    """GNoME's layout: the summary CSV (rows: Po, CsCl, an id with no CIF) and by_id.zip (by_id/<id>.CIF, plus
    a member no row names)."""
    folder = tmp_path / "gnome"
    folder.mkdir()
    rows = [("00a1", "Cubic", "221", "m-3m"), ("00b2", "cubic", "221", "m-3m"), ("00c3", "Cubic", "225", "m-3m")]
    with open(folder / "stable_materials_summary.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Composition", "MaterialId", "Point Group", "Space Group", "Space Group Number", "Crystal System"])
        for mid, cs, sg, pg in rows:
            w.writerow(["X", mid, pg, "Pm-3m", sg, cs])
    with zipfile.ZipFile(folder / "by_id.zip", "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("by_id/00a1.CIF", _cif("Po", 3.35, [("Po", 0, 0, 0)]))
        zf.writestr("by_id/00b2.CIF", _cif("CsCl", 4.12, [("Cs", 0, 0, 0), ("Cl", 0.5, 0.5, 0.5)]))
        zf.writestr("by_id/zz99.CIF", _cif("Po", 3.35, [("Po", 0, 0, 0)]))
    return folder


def test_gnome_csv_and_zip_read_with_the_right_ids_nothing_extracted(tmp_path):
    folder = _gnome_folder(tmp_path)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    d = load_input(f"gnome:{folder}")
    assert [it.id for it in d.items] == ["00a1", "00b2", "00c3"]
    assert d.items[0].label == {"crystal_system": "cubic", "space_group": 221, "point_group": "m-3m"}
    po, cscl = d.items[0].read(), d.items[1].read()
    assert po.formula == "Po" and po.n_atoms == 1 and po.identifier == "00a1"
    assert sorted(symbols(cscl.numbers)) == ["Cl", "Cs"]
    assert np.allclose(cscl.positions[list(symbols(cscl.numbers)).index("Cl")], [2.06, 2.06, 2.06])
    with pytest.raises(InputError, match=r"file stable_materials_summary.csv line 4, field MaterialId: no CIF named '00c3'"):
        d.items[2].read()
    assert sorted(d.files) == ["by_id.zip", "stable_materials_summary.csv"]
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing extracted to disk
    assert [e.locator for e in gnome_entries(folder)][:2] == ["by_id/00a1.CIF", "by_id/00b2.CIF"]


def test_gnome_zip_bomb_member_refused_before_decompression(tmp_path):
    from viewcert.limits import Limits, using_limits

    folder = _gnome_folder(tmp_path)
    d = load_input(f"gnome:{folder}")
    with using_limits(Limits(max_zip_member_bytes=64)), pytest.raises(InputError, match="max_zip_member_bytes"):
        load_input(f"gnome:{folder}")
    with using_limits(Limits(max_zip_member_bytes=64)), pytest.raises(InputError, match="max_zip_member_bytes"):
        d.items[1].read()  # an item made before the limits were lowered reads under those in force


def test_ase_database_rows(tmp_path):
    import ase.db
    from ase.build import bulk

    path = tmp_path / "x.db"
    with ase.db.connect(str(path)) as db:
        db.write(bulk("Cu", "fcc", a=3.61, cubic=True), material_id="cu-1", sg=225)
        db.write(bulk("NaCl", "rocksalt", a=5.64), material_id="nacl-1", sg="Fm-3m")
    d = load_input(f"{path}#id=material_id,label=sg:space_group")
    assert [it.id for it in d.items] == ["cu-1", "nacl-1"] and d.kind == "ase"
    cu = d.items[0].read()
    assert cu.n_atoms == 4 and np.allclose(np.diag(cu.lattice), 3.61)
    with pytest.raises(InputError, match=r"x.db id 2, field sg: space-group number 'Fm-3m'"):
        d.items[1].read()
    missing = tmp_path / "none.db"
    with pytest.raises(InputError, match="does not exist"):
        load_input(str(missing))
    assert not missing.exists()  # ase.db.connect would have created it


def _item(ident, dataset, rendered, recon, *, raised=None) -> ItemOutcome:
    d = {"id": ident, "outcome": "correct", "correct": True, "label_dataset": dataset, "label_rendered": rendered,
         "label_reconstructed": recon, "periodic": True}
    if raised:
        d["symmetry_raised"] = {"input": raised, "rendered": rendered, "levels": ["space_group"]}
    return ItemOutcome.from_dict(d)


CUBIC = {"crystal_system": "cubic", "point_group": "m-3m", "space_group": 225}
TET = {"crystal_system": "tetragonal", "point_group": "4/mmm", "space_group": 139}


def test_audit_rows_and_counts_hand_worked():
    items = [_item("ok", {"space_group": 225}, CUBIC, CUBIC),
             _item("wrong-sg", {"space_group": 221}, CUBIC, CUBIC),           # same system and point group
             _item("views", {"crystal_system": "cubic"}, CUBIC, TET),         # stated level only
             _item("raised", {"space_group": 139}, CUBIC, CUBIC, raised=TET),  # the input cell is tetragonal
             _item("nolabel", None, CUBIC, TET)]
    a = A.audit(items)
    got = [(r.id, r.level, r.published, r.published_from, r.input, r.rendered, r.reconstructed, r.kinds)
           for r in a.rows]
    assert a.n == 4
    assert got == [
        ("wrong-sg", "space_group", 221, "stated", 225, 225, 225, ("published_vs_input",)),
        ("views", "crystal_system", "cubic", "stated", "cubic", "cubic", "tetragonal", ("rendered_vs_reconstructed",)),
        ("raised", "crystal_system", "tetragonal", "space_group", "tetragonal", "cubic", "cubic", ("input_vs_rendered",)),
        ("raised", "point_group", "4/mmm", "space_group", "4/mmm", "m-3m", "m-3m", ("input_vs_rendered",)),
        ("raised", "space_group", 139, "stated", 139, 225, 225, ("input_vs_rendered",))]
    assert a.counts == {"published_vs_input": {"crystal_system": 0, "point_group": 0, "space_group": 1},
                        "input_vs_rendered": {"crystal_system": 1, "point_group": 1, "space_group": 1},
                        "rendered_vs_reconstructed": {"crystal_system": 1, "point_group": 0, "space_group": 0}}


def test_audit_tables_escape_hostile_ids():
    a = A.audit([_item("=cmd|x\x1b[31m", {"space_group": 221}, CUBIC, CUBIC)])
    text = A.audit_csv(a)
    assert text.splitlines()[1].startswith("'=cmd|x\\x1b[31m,space_group,221")
    md = A.audit_markdown(a)
    assert "\x1b" not in md and "=cmd\\|x" in md and "| 0 | 0 | 1 |" in md


def test_planted_wrong_labels_come_back_exactly_in_the_audit(tmp_path):
    """Certify a Parquet database whose label column is right but for two planted ids; the audit table holds
    exactly those (and, for a label of another system, all three levels), the summary counts them."""
    from viewcert.certify import CertifyConfig, certify

    planted = {"A_cF4_225_a": 221, "A_hP2_194_c": 12}
    labels = {**PROTOTYPES, **planted}
    path = _write_parquet(tmp_path / "db.parquet", labels,
                          broken={("A_oC4_63_c", "cartesian_site_positions"): [[0.0, 0.0]] * 2})
    out = tmp_path / "out"
    cert = certify(f"optimade:{path}#label=space_group_number", CertifyConfig(score="space_group"), out=out,
                   n_workers=1, plots=False, progress=False)
    assert_certificate_consistent(cert)
    assert cert.summary.n == 5
    s = cert.to_dict()["summary"]  # the JSON objects of the item errors
    assert [e["id"] for e in s["errors"]] == ["A_oC4_63_c"]
    assert "row 4, field cartesian_site_positions" in s["errors"][0]["error"]
    with open(out / A.CSV_NAME, newline="") as fh:
        rows = list(csv.DictReader(fh))
    got = {(r["id"], r["level"], r["published"], r["input"], r["kinds"]) for r in rows}
    assert got == {("A_cF4_225_a", "space_group", "221", "225", "published_vs_input"),
                   ("A_hP2_194_c", "crystal_system", "monoclinic", "hexagonal", "published_vs_input"),
                   ("A_hP2_194_c", "point_group", "2/m", "6/mmm", "published_vs_input"),
                   ("A_hP2_194_c", "space_group", "12", "194", "published_vs_input")}
    summary = (out / "summary.txt").read_text()
    assert "label audit: 5 items with a published label" in summary
    assert "published_vs_input (published label is not the input cell's symmetry): 1 / 1 / 2" in summary
    assert "| A\\_cF4\\_225\\_a | space\\_group | 221 |" in (out / A.MARKDOWN_NAME).read_text()


def test_cli_label_column_verify_and_item_table(tmp_path, monkeypatch):
    """``certify DB --label-column`` records the column in the spec, so ``verify`` re-reads the same labels
    (byte-identical); ``--item-table`` writes the streamed certificate with the same audit."""
    import typer
    from typer.testing import CliRunner

    from viewcert.cli.certify import register

    app = typer.Typer()
    register(app)
    monkeypatch.chdir(tmp_path)  # the trusted folder of verify
    _write_parquet(tmp_path / "db.parquet", {**PROTOTYPES, "A_tI4_141_a": 139})
    r = CliRunner()
    res = r.invoke(app, ["certify", "db.parquet", "--label-column", "space_group_number", "--workers", "1",
                         "--no-plots", "--out", "json"])
    assert res.exit_code == 0, res.output
    cert = json.loads((tmp_path / "json" / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    assert cert["inputs"]["spec"] == "db.parquet#label=space_group_number"
    assert "published_vs_input (published label is not the input cell's symmetry): 0 / 0 / 1" in res.output
    res = r.invoke(app, ["verify", "json/certificate.json", "--workers", "1"])
    assert res.exit_code == 0 and "byte-identical" in res.output, res.output
    res = r.invoke(app, ["certify", "db.parquet", "--label-column", "space_group_number", "--workers", "1",
                         "--item-table", "--out", "table"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "table" / A.CSV_NAME).read_text() == (tmp_path / "json" / A.CSV_NAME).read_text()
    assert sorted(p.name for p in (tmp_path / "table" / "items").iterdir()) == ["part-000000.parquet"]
    res = r.invoke(app, ["certify", "builtin:prototypes", "--label-column", "x", "--out", "bad"])
    assert res.exit_code == 2 and "--label-column applies to a database input" in res.output


def test_hostile_database_files_are_one_input_error(tmp_path):
    (tmp_path / "junk.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="junk.parquet: not a readable Parquet file"):
        load_input(str(tmp_path / "junk.parquet"))
    folder = _gnome_folder(tmp_path)
    (folder / "by_id.zip").write_bytes(b"PK\x03\x04 torn")
    with pytest.raises(InputError, match="by_id.zip: not a readable zip archive"):
        load_input(f"gnome:{folder}")
    (tmp_path / "junk.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    with pytest.raises(InputError, match="junk.db: not a readable ASE database"):
        load_input(str(tmp_path / "junk.db"))
    path = _write_parquet(tmp_path / "nan.parquet", PROTOTYPES, broken={
        ("A_cF4_225_a", "cartesian_site_positions"): [[float("nan"), 0.0, 0.0]],
        ("AB_cF8_225_a_b", "species_at_sites"): ["Na"]})
    items = load_input(str(path)).items
    with pytest.raises(InputError, match="row 0, field cartesian_site_positions: a value is not finite"):
        items[0].read()
    with pytest.raises(InputError, match="row 1, field cartesian_site_positions: expected 1 rows of 3 numbers"):
        items[1].read()


def _hand_items() -> list[ItemOutcome]:
    """The five items of ``test_audit_rows_and_counts_hand_worked`` (five audit rows over three items)."""
    return [_item("ok", {"space_group": 225}, CUBIC, CUBIC),
            _item("wrong-sg", {"space_group": 221}, CUBIC, CUBIC),
            _item("views", {"crystal_system": "cubic"}, CUBIC, TET),
            _item("raised", {"space_group": 139}, CUBIC, CUBIC, raised=TET),
            _item("nolabel", None, CUBIC, TET)]


def test_streamed_audit_writes_rows_as_shards_finish_and_the_same_bytes(tmp_path):
    """Shards of 2, 2 and 1 items: each shard's rows are on disk once it is added and only the counts are held;
    the finished files are byte for byte those of the audit of every item at once, and the parts are gone."""
    items = _hand_items()
    sa = A.StreamedAudit(tmp_path)
    sa.add(items[0:2])
    part = tmp_path / ".audit" / "part-000000.csv"
    assert part.read_text() == "wrong-sg,space_group,221,stated,225,225,225,published_vs_input\n"
    assert sa.total.rows == () and sa.total.n == 2
    sa.add(items[2:4])
    sa.add(items[4:])
    counts = sa.finish()
    whole = A.audit(items)
    assert (tmp_path / A.CSV_NAME).read_bytes() == A.audit_csv(whole).encode()
    assert (tmp_path / A.MARKDOWN_NAME).read_bytes() == A.audit_markdown(whole).encode()
    assert (counts.n, counts.counts) == (4, whole.counts) and counts.rows == ()
    assert not (tmp_path / ".audit").exists()
    lines = (tmp_path / A.CSV_NAME).read_text().splitlines()
    assert lines[0] == ",".join(A.COLUMNS) and len(lines) == 6  # the header and the five hand-worked rows


def test_streamed_run_audit_is_resumable_and_matches_the_json_run(tmp_path):
    """A streamed certification of a database with planted labels, in shards of 2: its audit files are the JSON
    certificate path's bytes; a rerun after an interruption (the files gone, a stale part of a longer run left in
    .audit/) resumes every shard and writes the same bytes."""
    from viewcert.certify import CertifyConfig, certify
    from viewcert.certify.run import certify_streamed

    path = _write_parquet(tmp_path / "db.parquet", {**PROTOTYPES, "A_cF4_225_a": 221, "A_hP2_194_c": 12})
    spec = f"optimade:{path}#label=space_group_number"
    cfg = CertifyConfig(score="space_group")
    certify(spec, cfg, out=tmp_path / "json", n_workers=1, plots=False, progress=False)
    out = tmp_path / "table"
    certify_streamed(load_input(spec), cfg, out, n_workers=1, progress=False, shard_items=2)
    want = {name: (tmp_path / "json" / name).read_bytes() for name in (A.CSV_NAME, A.MARKDOWN_NAME)}
    assert {name: (out / name).read_bytes() for name in want} == want
    assert b"A_hP2_194_c,space_group,12," in want[A.CSV_NAME]
    for name in want:
        (out / name).unlink()
    (out / ".audit").mkdir()
    (out / ".audit" / "part-000009.csv").write_text("stale,row\n")  # a part beyond this run's shards
    certify_streamed(load_input(spec), cfg, out, n_workers=1, progress=False, shard_items=2)
    assert json.loads((out / "run.json").read_text())["n_computed"] == 0
    assert {name: (out / name).read_bytes() for name in want} == want
    assert not (out / ".audit").exists()
