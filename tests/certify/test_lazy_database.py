"""Database inputs read lazily (``certify.inputs.DatabaseItems``, ``io.database``'s row ranges and
``repeated_rows``): the same items, the same certificate, flat memory by construction.

The twins here are written from the definitions, not from the code under test: an item list is what one eager pass
over the rows gives (ids in row order; a row whose id an earlier row of the file has, or whose label or structure
is malformed, an item error naming the file, row and column; item digests SHA-256 of "<file sha256>:<row>"); the
repeated rows are those whose id a ``dict`` has already seen; a CSV's rows are ``csv.DictReader``'s. Memory is
checked structurally: the number of rows any one read asks for, never a wall clock or an RSS."""

from __future__ import annotations

import csv
import hashlib
import random
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from viewcert.certify import CertifyConfig
from viewcert.certify import inputs as I
from viewcert.certify import stream as T
from viewcert.certify.inputs import DatabaseItems, Dataset, Selection, load_input
from viewcert.certify.run import certify_streamed, fingerprint
from viewcert.elements import symbols
from viewcert.errors import InputError
from viewcert.io import database as D
from viewcert.io.builtin import builtin

#: four AFLOW prototypes (1-2 atoms in the primitive cell) and the space group their label states
PROTOTYPES = {"A_cF4_225_a": 225, "AB_cF8_225_a_b": 225, "A_hP2_194_c": 194, "A_tI4_141_a": 141}


def _write(path: Path, ids: list[str], *, broken: dict | None = None, row_group_size: int = 3) -> Path:
    """An OPTIMADE-style Parquet file whose row k is prototype k mod 4 with id ``ids[k]``; ``broken``: {(row,
    column): value}."""
    ss = {s.identifier.removeprefix("aflow:"): s for s in builtin("builtin:prototypes")}
    names = [list(PROTOTYPES)[k % len(PROTOTYPES)] for k in range(len(ids))]
    cols = {"immutable_id": list(ids), "lattice_vectors": [ss[n].lattice.tolist() for n in names],
            "cartesian_site_positions": [ss[n].positions.tolist() for n in names],
            "species_at_sites": [list(symbols(ss[n].numbers)) for n in names],
            "space_group_number": [PROTOTYPES[n] for n in names]}
    for (row, col), value in (broken or {}).items():
        cols[col][row] = value
    pq.write_table(pa.table(cols), path, row_group_size=row_group_size)
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _twin(files: list[Path], ids: list[list[str]]) -> list[tuple[str, str, str]]:
    """(id, kind, sha256) of every item by the definition: one pass over every file's rows in order."""
    out = []
    for path, file_ids in zip(files, ids, strict=True):
        seen: set = set()
        for row, ident in enumerate(file_ids):
            digest = hashlib.sha256(f"{_sha(path)}:{row}".encode()).hexdigest()
            if ident in seen:
                out.append((f"{path.name}:{row}", "invalid", digest))
            else:
                seen.add(ident)
                out.append((ident, "database", digest))
    return out


def test_lazy_items_are_the_eager_definitions_items(tmp_path):
    folder = tmp_path / "db"
    folder.mkdir()
    ids = [[f"a{k}" for k in range(7)] + ["a2", "a8", "a2"], [f"b{k}" for k in range(5)]]
    files = [_write(folder / "s0.parquet", ids[0]), _write(folder / "s1.parquet", ids[1])]
    d = load_input(f"optimade:{folder}#label=space_group_number")
    assert isinstance(d.items, DatabaseItems) and len(d) == 15
    got = [(it.id, it.kind, it.sha256) for it in d.items]
    assert got == _twin(files, ids)
    assert [it.id for it in d.items[6:12]] == [g[0] for g in got[6:12]]  # a slice across the two files
    assert d.items[-1].id == "b4" and d.items[7].kind == "invalid"
    with pytest.raises(InputError, match=r"s0.parquet row 7, field id: id 'a2' is repeated"):
        d.items[7].read()
    eager = Dataset(d.spec, d.kind, tuple(d.items), d.files, location=d.location)
    cfg = CertifyConfig(tiling=(1, 1, 1))
    assert fingerprint(d, cfg) == fingerprint(eager, cfg)  # the input's files, hashed as streamed
    sel = Selection("picked", ("b1", "a3", "s0.parquet:9"), (("a3", "mirror-x"),), "by hand")
    assert [(it.id, it.shown, it.sha256) for it in d.with_selection(sel).items] == \
        [(it.id, it.shown, it.sha256) for it in eager.with_selection(sel).items]
    assert {it.points_per_atom for it in d.with_points_per_atom(5).items} == {5}
    with pytest.raises(InputError, match="unknown item ids"):
        d.select(["a1", "zz"])


def test_an_id_repeated_across_files_is_one_input_error(tmp_path):
    folder = tmp_path / "db"
    folder.mkdir()
    _write(folder / "s0.parquet", ["x", "y"])
    _write(folder / "s1.parquet", ["z", "x"])
    with pytest.raises(InputError, match=r"s1.parquet, field id: two rows in different shards share an id"):
        load_input(f"optimade:{folder}")


def _repeats_by_definition(ids: list[str]) -> tuple[list[int], list[int]]:
    first: dict = {}
    pos, to = [], []
    for p, i in enumerate(ids):
        if i in first:
            pos.append(p)
            to.append(first[i])
        else:
            first[i] = p
    return pos, to


def test_repeated_rows_in_bounded_buckets_agree_with_a_dict():
    rng = random.Random(7)
    ids = [f"id-{rng.randrange(400)}" for _ in range(1000)] + ["é\udcff", "é\udcff"]  # undecodable too
    chunks = [[(p, ids[p]) for p in range(a, min(len(ids), a + 64))] for a in range(0, len(ids), 64)]
    for bucket_rows in (7, 100, 10_000):  # 144 buckets, 11, one
        pos, first = D.repeated_rows(iter(chunks), len(ids), bucket_rows=bucket_rows)
        want = _repeats_by_definition(ids)
        assert pos.tolist() == want[0] and first.tolist() == want[1]
    none = D.repeated_rows(iter([[(0, "a"), (1, "b")]]), 2)
    assert none[0].tolist() == [] and none[1].tolist() == []


def test_malformed_rows_are_item_errors_naming_row_and_column_never_in_r1(tmp_path):
    ids = [f"m{k}" for k in range(6)]
    path = _write(tmp_path / "db.parquet", ids, broken={(1, "species_at_sites"): ["Xx", "Na"], (4, "space_group_number"): 0})
    d = load_input(f"{path}#label=space_group_number")
    by_id = {it.id: it for it in d.items}
    with pytest.raises(InputError, match=r"file db.parquet row 1, field species_at_sites: unknown element symbol"):
        by_id["m1"].read()
    with pytest.raises(InputError, match=r"file db.parquet row 4, field space_group_number: space-group number 0"):
        by_id["m4"].read()
    cert = certify_streamed(d, CertifyConfig(tiling=(1, 1, 1)), tmp_path / "out", n_workers=1, progress=False,
                            shard_items=4).to_dict()  # the streamed certificate's JSON object
    assert cert["summary"]["n"] == 4 and cert["summary"]["n_errors"] == 2
    errors = {it.id: it.error for it in T.read_table(tmp_path / "out", cert) if it.is_error}
    assert sorted(errors) == ["m1", "m4"] and "row 1, field species_at_sites" in errors["m1"]


def test_lazy_dataset_certifies_to_the_eager_paths_table_digest(tmp_path):
    ids = [f"q{k:02d}" for k in range(9)]
    path = _write(tmp_path / "db.parquet", ids, row_group_size=2)
    d = load_input(f"optimade:{path}#label=space_group_number")
    eager = Dataset(d.spec, d.kind, tuple(d.items), d.files, location=d.location)
    cfg = CertifyConfig(tiling=(1, 1, 1))
    lazy_cert = certify_streamed(d, cfg, tmp_path / "lazy", n_workers=1, progress=False, shard_items=4).to_dict()
    eager_cert = certify_streamed(eager, cfg, tmp_path / "eager", n_workers=1, progress=False, shard_items=4).to_dict()
    assert lazy_cert["items_table"]["n_items"] == 9 and len(lazy_cert["items_table"]["shards"]) == 3
    assert lazy_cert["items_table"]["chain"] == eager_cert["items_table"]["chain"]
    assert lazy_cert["digest"] == eager_cert["digest"]
    assert [it.id for it in T.read_table(tmp_path / "lazy", lazy_cert)] == ids


def test_no_read_holds_more_than_one_chunk_of_rows(tmp_path, monkeypatch):
    folder = tmp_path / "db"
    folder.mkdir()
    for k in range(3):
        _write(folder / f"s{k}.parquet", [f"r{k}-{j}" for j in range(11)], row_group_size=4)
    asked: list[int] = []  # rows each read of a file asks for
    made: list[int] = []  # items each read of the sequence makes (and holds until handed out)
    real_entries, real_items = I.DatabaseFile.entries, I.DatabaseItems._items

    def entries(self, start, stop):
        asked.append(stop - start)
        return real_entries(self, start, stop)

    def items(self, a, b):
        out = real_items(self, a, b)
        made.append(len(out))
        return out

    monkeypatch.setattr(I, "LAZY_CHUNK", 5)
    monkeypatch.setattr(I.DatabaseFile, "entries", entries)
    monkeypatch.setattr(I.DatabaseItems, "_items", items)
    d = load_input(f"optimade:{folder}")
    assert d.items.chunk == 5 and asked and max(asked) <= 5  # the repeated-id pass: a chunk at a time
    assert d.items.repeats.size == 0 and d.items.positions is None  # no per-row state is kept
    asked.clear()
    assert sum(1 for _ in d.with_points_per_atom(5).items) == 33
    assert max(asked) <= 5 and sum(asked) == 33 and max(made) <= 5
    asked.clear()
    picked = d.select(["r2-10", "r0-0"])
    assert [it.id for it in picked.items] == ["r0-0", "r2-10"] and max(asked) <= 5


def _gnome(tmp_path: Path, ids: list[str]) -> Path:
    """GNoME's layout with the rows ``ids`` (blank lines and a quoted field spanning two lines among them) and a
    one-atom CIF for each."""
    folder = tmp_path / "gnome"
    folder.mkdir()
    with open(folder / D.GNOME_CSV, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Composition", "MaterialId", "Point Group", "Space Group Number", "Crystal System"])
        for k, mid in enumerate(ids):
            w.writerow(["Po\nsecond line" if k == 2 else "Po", mid, "m-3m", "221", "Cubic"])
            if k % 4 == 1:
                fh.write("\n")
    cif = ("data_Po\n_symmetry_space_group_name_H-M 'P 1'\n_cell_length_a 3.35\n_cell_length_b 3.35\n"
           "_cell_length_c 3.35\n_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\n"
           "loop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n"
           "_atom_site_fract_z\nPo1 Po 0 0 0\n")
    with zipfile.ZipFile(folder / D.GNOME_ZIP, "w") as zf:
        for mid in dict.fromkeys(ids):
            zf.writestr(f"by_id/{mid}.CIF", cif)
    return folder


def test_gnome_csv_ranges_match_one_dictreader_pass(tmp_path, monkeypatch):
    ids = [f"g{k:02d}" for k in range(11)] + ["g03"]
    folder = _gnome(tmp_path, ids)
    with open(folder / D.GNOME_CSV, newline="") as fh:
        reader = csv.DictReader(fh)
        want = []
        for row in reader:
            want.append((reader.line_num, row["MaterialId"]))
    marks = D.csv_marks(folder / D.GNOME_CSV, every=3)
    assert marks.n == 12 and len(marks.marks) == 4
    for start, stop in ((0, 12), (0, 3), (3, 7), (5, 6), (10, 12), (11, 40)):
        got = [(e.row, e.id) for e in D.gnome_entries(folder, start=start, stop=stop, marks=marks, repeats=False)]
        assert got == want[start:stop], (start, stop)
    monkeypatch.setattr(I, "LAZY_CHUNK", 4)
    d = load_input(f"gnome:{folder}")
    assert [it.id for it in d.items] == ids[:-1] + [f"gnome:{want[-1][0]}"]
    assert d.items[-1].kind == "invalid" and d.items[3].read().formula == "Po"


def test_ase_ranges_match_the_whole_select(tmp_path):
    import ase.db
    from ase.build import bulk

    path = tmp_path / "x.db"
    with ase.db.connect(str(path)) as db:
        for k in range(7):
            db.write(bulk("Cu", "fcc", a=3.6 + 0.01 * k), mid=f"c{k}", sg=225)
    every = [(e.row, e.id) for e in D.ase_entries(path, id_key="mid")]
    assert every == [(k + 1, f"c{k}") for k in range(7)]
    assert [(e.row, e.id) for e in D.ase_entries(path, id_key="mid", start=2, stop=5)] == every[2:5]
    d = load_input(f"{path}#id=mid,label=sg:space_group")
    assert [it.id for it in d.items[5:]] == ["c5", "c6"] and np.isclose(d.items[6].read().lattice[0, 1], 1.83)
