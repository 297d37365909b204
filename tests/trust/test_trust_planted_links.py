"""No write follows a symlink planted inside an output folder (issue 58, class 1): at every folder a certify, export,
explore, ladder or learn run creates or reuses below its output folder (``items/``, ``.shards/``, a resumed
``.shards/FINGERPRINT``, ``.audit/``, ``views/``, ``assets/``, ``EXPORT/ladder``, a learned reader's folder) a link
to a folder X outside is refused in one line (exit 2, field ``--out``), nothing is written into X and nothing in X is
opened (an audit hook on "open", "os.listdir" and "os.scandir": ``tests/support/trust_probe.py``). A link standing
where a file goes is replaced, never written through (``io.confine.write_inside``: the folders are opened one by one
with ``O_NOFOLLOW`` from their parent, so the check and the write are the same open). The other way round, an
``--out`` the user names that is itself a link is resolved once and used, and the run says where it wrote.

Each case fails on the main branch before issue 58: the run exited 0 and wrote its parts, shards or audit parts
into X (or, for the resumed shards, read them back from X)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.export_fixtures import CHFCLBR_XYZ, SMALL
from tests.support.trust_probe import one_error, run, under
from viewcert.elements import symbols
from viewcert.errors import InputError
from viewcert.io.builtin import builtin
from viewcert.io.confine import write_inside, writing_into

#: three small prototypes (1-2 atoms) and the space group a database states for them
PROTOTYPES = {"A_cF4_225_a": 225, "AB_cF8_225_a_b": 225, "A_hP2_194_c": 194}
QUICK = ["--protocol", "axes-3", "--tiling", "1,1,1", "--workers", "1", "--no-cross-check"]


def _database(path: Path) -> Path:
    """An OPTIMADE-style Parquet file of three prototypes with a ``space_group_number`` label column."""
    ss = {s.identifier.removeprefix("aflow:"): s for s in builtin("builtin:prototypes")}
    ids = list(PROTOTYPES)
    pq.write_table(pa.table({"immutable_id": ids, "lattice_vectors": [ss[i].lattice.tolist() for i in ids],
                             "cartesian_site_positions": [ss[i].positions.tolist() for i in ids],
                             "species_at_sites": [list(symbols(ss[i].numbers)) for i in ids],
                             "space_group_number": [PROTOTYPES[i] for i in ids]}), path)
    return path


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.fixture
def places(tmp_path) -> tuple[Path, Path, Path]:
    """(the database, the output folder OUT, X: a folder outside OUT holding one file)."""
    x = tmp_path / "X"
    x.mkdir()
    (x / "keep.txt").write_text("untouched")
    return _database(tmp_path / "db.parquet"), tmp_path / "OUT", x


def _refused(argv: list[str], x: Path, link: str) -> None:
    """``viewcert ARGV``: exit 2, one line naming the link and --out, X as it was and nothing in X opened."""
    code, out, seen = run(argv)
    err = one_error(out)
    assert code == 2 and "symlink" in err and "field --out" in err and link in err, out
    assert _files(x) == ["keep.txt"] and (x / "keep.txt").read_text() == "untouched"
    assert under(seen, x) == []


@pytest.mark.parametrize("link", ["items", ".shards", ".audit"])
def test_certify_refuses_a_link_planted_at_a_folder_it_writes(places, link):
    db, out, x = places
    out.mkdir()
    os.symlink(x, out / link)
    table = [] if link == ".shards" else ["--item-table"]
    _refused(["certify", str(db), *QUICK, *table, "--out", str(out)], x, link)


def test_certify_refuses_a_link_swapped_for_the_shards_it_resumes(places):
    """A rerun of the same command resumes ``.shards/FINGERPRINT``: swapped for a link to a copy in X, it is
    refused before a shard is read (before: the shards were read back from X)."""
    db, out, x = places
    argv = ["certify", str(db), *QUICK, "--out", str(out)]
    code, said, _ = run(argv)
    assert code == 0, said
    (fp,) = list((out / ".shards").iterdir())
    shutil.move(str(fp), str(x / fp.name))
    os.symlink(x / fp.name, fp)
    before = {p: p.read_bytes() for p in (x / fp.name).iterdir()}
    code, said, seen = run(argv)
    err = one_error(said)
    assert code == 2 and "symlink" in err and fp.name in err and "field --out" in err, said
    assert {p: p.read_bytes() for p in (x / fp.name).iterdir()} == before and under(seen, x, ("open",)) == []


def test_certify_into_a_named_link_writes_where_it_points_and_says_so(places, tmp_path):
    """``--out L`` with L a symlink the user made (a scratch folder linked into a project): resolved once, used,
    and the run's lines name the real folder."""
    db, _, x = places
    (x / "scratch").mkdir()
    os.symlink(x / "scratch", tmp_path / "L")
    code, out, _ = run(["certify", str(db), *QUICK, "--out", str(tmp_path / "L")])
    assert code == 0, out
    assert (x / "scratch" / "certificate.json").is_file() and f"wrote {x / 'scratch' / 'certificate.json'}" in out


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

    d = tmp_path_factory.mktemp("planted_export")
    (d / "chfclbr.xyz").write_text(CHFCLBR_XYZ)
    build_task_benchmark(d / "chfclbr.xyz", d / "export", TaskExportSettings.from_options(task="zoom", seed=1, **SMALL))
    return d / "export"


@pytest.mark.parametrize("link", ["assets", "views"])
def test_explore_refuses_a_link_planted_at_a_site_folder(export, tmp_path, link):
    f, x = tmp_path / "received", tmp_path / "X"
    shutil.copytree(export, f)
    x.mkdir()
    (x / "keep.txt").write_text("untouched")
    (f / "explore").mkdir()
    os.symlink(x, f / "explore" / link)
    _refused(["explore", str(f), "--workers", "1"], x, link)


def test_ladder_refuses_a_planted_ladder_folder_in_a_received_export(export, tmp_path):
    """``viewcert ladder EXPORT`` writes into EXPORT/ladder by default: a received export shipping it as a link is
    refused (a ladder folder the user names with --out may be a link)."""
    f, x = tmp_path / "received", tmp_path / "X"
    shutil.copytree(export, f)
    x.mkdir()
    (x / "keep.txt").write_text("untouched")
    os.symlink(x, f / "ladder")
    _refused(["ladder", str(f), "--n-boot", "200"], x, "ladder")


def test_export_refuses_a_planted_images_folder(tmp_path):
    out, x = tmp_path / "OUT", tmp_path / "X"
    out.mkdir()
    x.mkdir()
    (x / "keep.txt").write_text("untouched")
    os.symlink(x, out / "images")
    (tmp_path / "m.xyz").write_text(CHFCLBR_XYZ)
    code, said, seen = run(["build-benchmark", str(tmp_path / "m.xyz"), "--task", "zoom", "--protocol", "axes-3",
                            "--size", "64", "--out", str(out)])
    assert code == 2 and "field --out" in one_error(said), said
    assert _files(x) == ["keep.txt"] and under(seen, x) == []


def test_learn_refuses_a_link_planted_at_its_readers_folder(tmp_path):
    pytest.importorskip("sklearn")
    out, x = tmp_path / "OUT", tmp_path / "X"
    out.mkdir()
    x.mkdir()
    (x / "keep.txt").write_text("untouched")
    os.symlink(x, out / "cell-forest")
    _refused(["learn", "builtin:prototypes", "--reader", "cell-forest", "--train", "pyxtal:14", "--out", str(out)], x,
             "cell-forest")


def test_a_link_at_the_target_or_its_temporary_is_replaced_never_written_through(tmp_path):
    x = tmp_path / "X"
    x.mkdir()
    (x / "victim").write_text("untouched")
    with writing_into(tmp_path / "OUT") as site:
        (site / "parts").mkdir()
        os.symlink(x / "victim", site / "parts" / "a.csv")
        write_inside(site / "parts" / "a.csv", lambda fh: fh.write(b"mine"))
        assert not (site / "parts" / "a.csv").is_symlink() and (site / "parts" / "a.csv").read_text() == "mine"
        os.symlink(x, site / "deep")
        with pytest.raises(InputError, match="is a symlink") as e:
            write_inside(site / "deep" / "b" / "c.csv", lambda fh: fh.write(b"mine"))
        assert e.value.field == "--out"
    assert _files(x) == ["victim"] and (x / "victim").read_text() == "untouched"
