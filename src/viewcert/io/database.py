"""Structure databases, read lazily: OPTIMADE-style Parquet, GNoME's summary CSV beside a zip of CIFs, an ASE
database (``.db``).

Listing a database reads only each row's id and published labels (``entries``: Parquet in record batches of
``BATCH_ROWS`` rows through pyarrow, the CSV line by line, the ASE database row by row), any range of rows without
the rows before it (``start``/``stop``: the Parquet row groups holding it, a CSV from the byte mark before it,
``csv_marks``, an ASE database by OFFSET/LIMIT; ``layout`` counts the rows); a row's structure is read when it is
certified (``read_entry``, in the worker). Nothing is extracted to disk. Repeated ids are found in bounded memory by
``repeated_rows`` (digests bucketed to temporary files). A GNoME zip is indexed by ``io.zipindex`` (16 bytes per
CIF: a hash of its id and where its central-directory entry lies, built once per process), not ``zipfile`` (one
``ZipInfo`` per member, about 0.7 KB: 0.25 GB for GNoME's 381,000 in the coordinator and again in each worker);
a member is read by seeking to its local header (``benchmarks/bench_gnome_zip.py``).

- **Parquet** (OPTIMADE's names): ``immutable_id``, ``lattice_vectors`` (3 rows of 3 Å), ``cartesian_site_positions``
  (N rows of 3 Å), ``species_at_sites`` (N element symbols); rows numbered from 0 as pyarrow counts them.
- **GNoME** (``gnome:FOLDER``): ``stable_materials_summary.csv`` (``MaterialId``, ``Crystal System``,
  ``Space Group Number``, ``Point Group``, ...) and ``by_id.zip`` holding ``<id>.CIF`` under any folder; a CSV
  row is matched to the member whose file name without extension is its id; lines numbered from 1 (header).
- **ASE** (``.db``): ``ase.db``'s rows (SQLite), numbered by their ASE ``id``; the item id is the key named by
  ``id=`` (default: the row's ``id``).

Published labels come from the columns named (``LabelColumn``); each value is normalised to viewcert's
vocabulary (``label_value``): a space-group number 1..230, one of the seven crystal systems, one of the 32
point groups as spglib writes them. A Parquet file read with no label column named reads OPTIMADE's own
symmetry property when it has one (``OPTIMADE_LABELS``: ``space_group_it_number``, else the Hall symbol, the
Hermann–Mauguin symbol (extended, then short) or the symmetry operations, each read as its space-group number by
``symmetry.notation``); ``label_like`` names the columns that look like a label when none is read. A malformed row (a missing or repeated id, a label not in the vocabulary, a
structure column of the wrong shape, an unknown element) is that row's ``problem`` or an ``InputError`` naming
the file, the row and the column: an item error, never counted in R1.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import math
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from viewcert.elements import atomic_number
from viewcert.errors import InputError
from viewcert.io.cif import read_cif_text
from viewcert.io.parquet import check_decoded, check_footer, open_bounded
from viewcert.io.received import check_received_file
from viewcert.io.zipindex import ZipIndex, build_index, check_limits, find, opened, read_member
from viewcert.limits import LimitError, active_limits
from viewcert.structures import Provenance, Structure
from viewcert.symmetry.labels import CRYSTAL_SYSTEMS, LEVELS

BATCH_ROWS = 4096  # rows per pyarrow record batch when listing a Parquet file
OPTIMADE_COLUMNS = ("lattice_vectors", "cartesian_site_positions", "species_at_sites")
OPTIMADE_ID = "immutable_id"
GNOME_CSV, GNOME_ZIP, GNOME_ID = "stable_materials_summary.csv", "by_id.zip", "MaterialId"
GNOME_LABELS = (("Crystal System", "crystal_system"), ("Space Group Number", "space_group"),
                ("Point Group", "point_group"))
#: the 32 crystallographic point groups as spglib writes them, and the other settings' symbols of the same groups
POINT_GROUPS = ("1", "-1", "2", "m", "2/m", "222", "mm2", "mmm", "4", "-4", "4/m", "422", "4mm", "-42m", "4/mmm",
                "3", "-3", "32", "3m", "-3m", "6", "-6", "6/m", "622", "6mm", "-6m2", "6/mmm", "23", "m-3", "432",
                "-43m", "m-3m")
POINT_GROUP_ALIASES = {"-4m2": "-42m", "-62m": "-6m2", "321": "32", "312": "32", "3m1": "3m", "31m": "3m",
                       "-3m1": "-3m", "-31m": "-3m", "m3": "m-3", "m3m": "m-3m", "2mm": "mm2", "m2m": "mm2"}
MAX_COORDINATE = 1e6  # Å: beyond it a coordinate is an overflow, not a position (as the CIF reader)


#: OPTIMADE's standard symmetry properties (structures entry, v1.2), each a space-group label in its notation
#: (``symmetry.notation``; "" = the IT number), in the order the default label column is chosen from them
OPTIMADE_LABELS = (("space_group_it_number", ""), ("space_group_symbol_hall", "hall"),
                   ("space_group_symbol_hermann_mauguin_extended", "hermann_mauguin"),
                   ("space_group_symbol_hermann_mauguin", "hermann_mauguin"),
                   ("space_group_symmetry_operations_xyz", "operations"))
#: words (a column name lower-cased, its separators dropped) that make a column look like a published label
LABEL_LIKE = ("spacegroup", "pointgroup", "crystalsystem", "symmetry", "hermannmauguin", "hall", "spg",
              "international", "latticesystem", "bravais")


@dataclass(frozen=True)
class LabelColumn:
    """A column holding a published label, the level it states (``symmetry.labels.LEVELS``) and, for a space
    group, its notation (``symmetry.notation.NOTATIONS``; "" = an IT number or a Hermann–Mauguin symbol)."""

    column: str
    level: str
    notation: str = ""


@dataclass(frozen=True)
class Entry:
    """One row of a database: ``row`` (its number as the format counts), ``id``, the published ``label``
    ({level: value}), ``locator`` (what ``read_entry`` needs: a Parquet row, a zip member, an ASE row id) and
    ``problem`` ((column, what is wrong) for a row that cannot be certified, else None)."""

    row: int
    id: str
    label: dict
    locator: Any
    problem: tuple[str, str] | None = None


def label_value(value: Any, level: str, notation: str = "") -> int | str:
    """``value`` as viewcert writes a label at ``level``; ValueError saying why when it is not one. A space group in
    a ``notation`` (``symmetry.notation``: an OPTIMADE symbol or operations column) is read as its number."""
    if level == "space_group":
        if notation:
            from viewcert.symmetry.notation import space_group_number  # lazy: symbols need gemmi

            return space_group_number(value, notation)
        try:
            number = float(value) if isinstance(value, (int, float)) else float(str(value).strip())
        except ValueError:
            number = math.nan
        if not number.is_integer() or not 1 <= number <= 230:
            raise ValueError(f"space-group number {value!r} is not an integer in 1..230")
        return int(number)
    text = str(value).strip().replace(" ", "")
    if level == "crystal_system":
        if text.lower() not in CRYSTAL_SYSTEMS:
            raise ValueError(f"crystal system {value!r} is not one of {', '.join(CRYSTAL_SYSTEMS)}")
        return text.lower()
    if level == "point_group":
        text = POINT_GROUP_ALIASES.get(text, text)
        if text not in POINT_GROUPS:
            raise ValueError(f"point group {value!r} is not one of the 32 crystallographic point groups")
        return text
    raise ValueError(f"label level must be one of {LEVELS}, got {level!r}")


def row_labels(values: dict, columns: tuple[LabelColumn, ...]) -> tuple[dict, tuple[str, str] | None]:
    """(published label, problem) of one row from its ``values`` by column name: a missing (None, NaN, empty)
    value leaves the level out; a malformed one is the row's problem, naming its column."""
    label: dict = {}
    for lc in columns:
        v = values.get(lc.column)
        if v is None or (isinstance(v, float) and math.isnan(v)) or str(v).strip() == "" or \
                (isinstance(v, list) and not v):
            continue
        try:
            label[lc.level] = label_value(v, lc.level, lc.notation)
        except (ValueError, TypeError, OverflowError) as exc:
            return label, (lc.column, str(exc)[:200])
    return label, None


def _entry(row: int, ident: Any, label: dict, problem, locator, seen: set | None) -> Entry:
    """One entry, its id checked: text, not empty, not seen before (else the row's problem, ``id`` column); with
    ``seen`` None the repeat check is the caller's (``repeated_rows``)."""
    if not isinstance(ident, str) or not ident.strip():
        return Entry(row, "", label, locator, ("id", f"no id (got {ident!r})"))
    if seen is None:
        return Entry(row, ident, label, locator, problem)
    if ident in seen:
        return Entry(row, ident, label, locator, ("id", f"id {ident!r} is repeated (an earlier row has it)"))
    seen.add(ident)
    return Entry(row, ident, label, locator, problem)


# --- OPTIMADE-style Parquet ---------------------------------------------------------------------------------------

def _parquet(path: Path):
    """The Parquet file at ``path``, its text columns read dictionary-encoded (``io.parquet``: bounded before
    any value is decoded)."""
    check_received_file(path, what="Parquet database", sized=False)  # a regular file; read in batches
    return open_bounded(str(path), name=str(path))


def parquet_entries(path: str | Path, labels: tuple[LabelColumn, ...] = (), *, id_column: str = OPTIMADE_ID,
                    batch_rows: int = BATCH_ROWS, start: int = 0, stop: int | None = None,
                    repeats: bool = True) -> Iterator[Entry]:
    """The entries of an OPTIMADE-style Parquet file (ids and labels only, ``batch_rows`` at a time), rows
    [``start``, ``stop``) (only the row groups holding them are read); a missing column is an InputError naming
    it. ``repeats=False`` leaves the repeated-id check to the caller (``repeated_rows``)."""
    path = Path(path)
    pf = _parquet(path)
    names = set(pf.schema_arrow.names)
    wanted = (id_column, *OPTIMADE_COLUMNS, *(lc.column for lc in labels))
    for col in wanted:
        if col not in names:
            raise InputError(f"no column {col!r} (columns: {', '.join(sorted(names))[:300]})", source=str(path),
                             field=col)
    starts = _row_groups(_stamp(path))
    stop = starts[-1] if stop is None else min(int(stop), starts[-1])
    if start >= stop:
        return
    g0 = int(np.searchsorted(starts, start, side="right")) - 1
    g1 = int(np.searchsorted(starts, stop, side="left"))
    seen: set | None = set() if repeats else None
    row = starts[g0]
    columns = [id_column, *(lc.column for lc in labels)]
    check_footer(pf, range(g0, g1), columns, name=str(path))  # before any page is read
    # one row group at a time: a batch spanning row groups would join dictionary-encoded nested columns (a list
    # of symmetry operations), which pyarrow cannot convert ("Nested data conversions not implemented")
    batches = (b for g in range(g0, g1) for b in pf.iter_batches(batch_size=batch_rows, row_groups=[g],
                                                                  columns=columns))
    for batch in batches:
        if row + batch.num_rows <= start:
            row += batch.num_rows
            continue
        check_decoded(batch, name=str(path), where=f" (rows {row}..{row + batch.num_rows - 1})")  # before decoding
        cols = batch.to_pydict()
        for k in range(batch.num_rows):
            if row >= stop:
                return
            if row >= start:
                values = {c: v[k] for c, v in cols.items()}
                label, problem = row_labels(values, labels)
                yield _entry(row, values[id_column], label, problem, row, seen)
            row += 1


def parquet_columns(path: str | Path) -> tuple[str, ...]:
    """The column names of a Parquet file (its schema; no row read)."""
    return tuple(_parquet(Path(path)).schema_arrow.names)


def optimade_labels(names) -> tuple[LabelColumn, ...]:
    """The default label column of an OPTIMADE-style file with columns ``names``: the first of OPTIMADE's standard
    symmetry properties it has (``OPTIMADE_LABELS``), else none."""
    have = set(names)
    return next(((LabelColumn(c, "space_group", n),) for c, n in OPTIMADE_LABELS if c in have), ())


def label_like(names, used=()) -> tuple[str, ...]:
    """The names among ``names`` that look like a published label (``LABEL_LIKE``) and are not ``used``, in their
    order (the structure and id columns never)."""
    skip = {OPTIMADE_ID, *OPTIMADE_COLUMNS, *used}

    def looks(name: str) -> bool:
        flat = "".join(ch for ch in name.lower() if ch.isalnum())
        words = set(name.lower().replace("-", " ").replace("_", " ").split())
        return any(w in flat for w in LABEL_LIKE) or "sg" in words or {"space", "group"} <= words \
            or {"point", "group"} <= words or {"crystal", "system"} <= words
    return tuple(n for n in names if isinstance(n, str) and n not in skip and looks(n))


def ase_keys(path: str | Path, rows: int = 100) -> tuple[str, ...]:
    """The key-value keys of the first ``rows`` rows of an ASE database, sorted."""
    import sqlite3

    try:
        keys = {k for row in _ase_db(Path(path)).select(sort="id", limit=rows, include_data=False)
                for k in row.key_value_pairs}
    except (sqlite3.Error, ValueError, KeyError, OSError) as exc:
        raise InputError(f"not a readable ASE database ({str(exc)[:120]})", source=str(path)) from None
    return tuple(sorted(keys))


def parquet_rows(path: str | Path) -> int:
    """The number of rows of a Parquet file (its footer; nothing else read)."""
    return _row_groups(_stamp(path))[-1]


def _stamp(path: str | Path) -> tuple[str, int, int]:
    """(path, mtime ns, size): the key of a per-process cache of an open file (a rewritten file is reopened)."""
    st = Path(path).stat()
    return str(path), st.st_mtime_ns, st.st_size


@functools.lru_cache(maxsize=4)
def _row_groups(stamp: tuple) -> tuple[int, ...]:
    """The first row of each row group of a Parquet file, and its row count last."""
    path = stamp[0]
    meta = _parquet(Path(path)).metadata
    starts = [0]
    for g in range(meta.num_row_groups):
        starts.append(starts[-1] + meta.row_group(g).num_rows)
    return tuple(starts)


@functools.lru_cache(maxsize=2)
def _row_group(stamp: tuple, group: int) -> dict:
    """The structure columns of one row group (a worker reads the rows of its chunk from one or two), bounded
    before they are decoded (``io.parquet``)."""
    pf = _parquet(Path(stamp[0]))
    check_footer(pf, [group], list(OPTIMADE_COLUMNS), name=stamp[0])
    table = pf.read_row_group(group, columns=list(OPTIMADE_COLUMNS))
    check_decoded(table, name=stamp[0], where=f" (row group {group})")
    return table.to_pydict()


def parquet_structure(path: str | Path, row: int, identifier: str, name: str | None = None) -> Structure:
    """The structure of Parquet row ``row``; InputError naming the file (as ``name``), the row and the column when
    it is malformed."""
    name = name or str(path)
    try:
        stamp = _stamp(path)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=name, field="path") from None
    starts = _row_groups(stamp)
    if not 0 <= row < starts[-1]:
        raise InputError(f"row {row} is not in the file ({starts[-1]} rows)", source=name, field="row")
    g = int(np.searchsorted(starts, row, side="right")) - 1
    cols = _row_group(stamp, g)
    values = {c: cols[c][row - starts[g]] for c in OPTIMADE_COLUMNS}
    return cell_structure(values["lattice_vectors"], values["cartesian_site_positions"],
                          values["species_at_sites"], source=f"{name} row {row}", identifier=identifier)


def _vectors(value: Any, n: int | None, column: str, source: str) -> np.ndarray:
    """``value`` as an (n, 3) array of finite floats (Å, each within ``MAX_COORDINATE``), or InputError."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        arr = np.empty((0, 0))
    shape = f"{n if n is not None else 'N'} rows of 3 numbers"
    if arr.ndim != 2 or arr.shape[1:] != (3,) or (n is not None and arr.shape[0] != n) or arr.shape[0] == 0:
        raise InputError(f"expected {shape}, got {str(value)[:80]}", source=source, field=column)
    if not np.isfinite(arr).all() or np.abs(arr).max() > MAX_COORDINATE:
        raise InputError(f"a value is not finite or beyond {MAX_COORDINATE:g} Å", source=source, field=column)
    return arr


def cell_structure(lattice: Any, positions: Any, species: Any, *, source: str, identifier: str) -> Structure:
    """A periodic Structure from OPTIMADE's three columns (lattice rows and Cartesian positions in Å, element
    symbols); the atom limit is checked before the structure is built. InputError naming the column."""
    if not isinstance(species, (list, tuple)) or not species or not all(isinstance(s, str) for s in species):
        raise InputError(f"expected a list of element symbols, got {str(species)[:80]}", source=source,
                         field="species_at_sites")
    active_limits().check_atoms(len(species), source=source)
    pos = _vectors(positions, len(species), "cartesian_site_positions", source)
    lat = _vectors(lattice, 3, "lattice_vectors", source)
    numbers = np.array([atomic_number(s, source=source, field="species_at_sites") for s in species])
    try:
        return Structure(pos, numbers, lat, provenance=Provenance(source=source, identifier=identifier))
    except InputError as exc:  # bad geometry: name the column it comes from
        field = "lattice_vectors" if exc.field == "lattice" else "cartesian_site_positions"
        raise InputError(exc.message, source=source, field=field) from None


# --- GNoME: summary CSV + zip of CIFs ------------------------------------------------------------------------------

def gnome_files(folder: str | Path) -> tuple[Path, Path]:
    """(summary CSV, zip of CIFs) of a GNoME folder; InputError naming the one missing."""
    folder = Path(folder)
    csv_path, zip_path = folder / GNOME_CSV, folder / GNOME_ZIP
    for p in (csv_path, zip_path):
        if not p.is_file():
            raise InputError(f"a GNoME folder holds {GNOME_CSV} and {GNOME_ZIP}; {p.name} is missing",
                             source=str(folder), field=p.name)
    return csv_path, zip_path


def cif_stem(name: str) -> str | None:
    """The id a zip member names: its file name without the ``.cif`` extension (any case, under any folder), or
    None for a member that is not a CIF (a folder, another extension)."""
    stem, dot, ext = name.rsplit("/", 1)[-1].rpartition(".")
    return stem if dot and ext.lower() == "cif" else None


def zip_members(zip_path: str | Path) -> ZipIndex:
    """The index of the CIFs of a zip archive by id (``cif_stem``; ``io.zipindex``: 16 bytes per member, nothing
    decompressed), every member's stated size and ratio checked against the zip limits; a malformed archive, or
    two CIFs with one id, is an InputError."""
    check_received_file(zip_path, what="zip of CIFs", sized=False)
    index = _index(_stamp(zip_path))
    with opened(index) as fd:
        check_limits(fd, index, str(zip_path))
    return index


@functools.lru_cache(maxsize=2)
def _index(stamp: tuple) -> ZipIndex:
    """The CIF index of the zip whose ``_stamp`` this is, built once per process (the coordinator while it lists
    the rows, each worker for its reads)."""
    return build_index(stamp[0], cif_stem)


@dataclass(frozen=True)
class CsvMarks:
    """Where a summary CSV's rows start, for reading any range of them without the rows before: ``n`` rows (blank
    lines are no rows, as ``csv.DictReader`` skips them), ``fieldnames`` (the header), and ``marks[k]`` = (byte
    offset, lines before it) of row ``k * every``."""

    n: int
    every: int
    fieldnames: tuple[str, ...]
    marks: tuple[tuple[int, int], ...]


class _Lines:
    """The UTF-8 lines of a binary file from its current position; ``pos`` is the offset after the last line
    handed out (``csv.reader`` reads no further than the record it returns)."""

    def __init__(self, fh):
        self.fh, self.pos = fh, fh.tell()

    def __iter__(self):
        return self

    def __next__(self) -> str:
        raw = self.fh.readline()
        if not raw:
            raise StopIteration
        self.pos += len(raw)
        return raw.decode("utf-8")


def csv_marks(csv_path: str | Path, every: int = BATCH_ROWS) -> CsvMarks:
    """One pass over a summary CSV (a line at a time): its header and a mark every ``every`` rows."""
    marks, n = [], 0
    with open(csv_path, "rb") as fh:
        lines = _Lines(fh)
        reader = csv.reader(lines)
        try:
            header = tuple(next(reader, ()))
            at = (lines.pos, reader.line_num)  # where the next record starts (blank lines before it skipped)
            for row in reader:
                if row:
                    if n % every == 0:
                        marks.append(at)
                    n += 1
                at = (lines.pos, reader.line_num)
        except (UnicodeDecodeError, csv.Error) as exc:
            raise InputError(f"line {reader.line_num}: not readable CSV ({str(exc)[:120]})",
                             source=str(csv_path)) from None
    return CsvMarks(n, every, header, tuple(marks))


def gnome_entries(folder: str | Path, labels: tuple[LabelColumn, ...] | None = None, *, start: int = 0,
                  stop: int | None = None, marks: CsvMarks | None = None, repeats: bool = True) -> Iterator[Entry]:
    """The entries of a GNoME folder (``gnome_files``): one per CSV row, its locator the zip member of its id;
    labels from ``labels`` (default: GNoME's three label columns); rows [``start``, ``stop``), read from the mark
    before ``start`` (``marks``: ``csv_marks``, made here, the zip limits checked first, when not given).
    ``repeats=False``: as ``parquet_entries``."""
    csv_path, zip_path = gnome_files(folder)
    labels = tuple(LabelColumn(c, lv) for c, lv in GNOME_LABELS) if labels is None else labels
    marks = gnome_marks(folder) if marks is None else marks
    for col in (GNOME_ID, *(lc.column for lc in labels)):
        if col not in marks.fieldnames:
            raise InputError(f"no column {col!r}", source=str(csv_path), field=col)
    stop = marks.n if stop is None else min(int(stop), marks.n)
    if start >= stop:
        return
    index = _index(_stamp(zip_path))
    first = start // marks.every
    offset, lines_before = marks.marks[first]
    with open(csv_path, "rb") as fh, opened(index, str(zip_path)) as fd:
        fh.seek(offset)
        reader = csv.reader(_Lines(fh))
        yield from _gnome_rows(reader, marks, lines_before, range(first * marks.every, stop), start, labels,
                               lambda ident: find(fd, index, ident, cif_stem, str(zip_path)), csv_path,
                               set() if repeats else None)


def gnome_marks(folder: str | Path) -> CsvMarks:
    """The zip limits checked (``zip_members``), then the summary CSV's ``csv_marks``."""
    csv_path, zip_path = gnome_files(folder)
    zip_members(zip_path)
    check_received_file(csv_path, what="summary CSV")  # sized: --max-json-bytes
    return csv_marks(csv_path)


def _gnome_rows(reader, marks: CsvMarks, lines_before: int, rows: range, start: int, labels, member_of,
                csv_path: Path, seen: set | None) -> Iterator[Entry]:
    """The entries of ``rows`` (row numbers, counted as ``CsvMarks`` does) from ``reader`` placed at the first;
    those before ``start`` are read and skipped; ``member_of(id)``: the zip member of an id, or None."""
    names = marks.fieldnames
    try:
        k = rows.start
        for raw in reader:
            if not raw:
                continue
            if k >= rows.stop:
                return
            k += 1
            if k - 1 < start:
                continue
            values = {f: (raw[i] if i < len(raw) else None) for i, f in enumerate(names)}
            label, problem = row_labels(values, labels)
            ident = values.get(GNOME_ID)
            found = member_of(ident) if isinstance(ident, str) else None
            member = found.name if found is not None else None
            if member is None and problem is None and isinstance(ident, str) and ident:
                problem = (GNOME_ID, f"no CIF named {ident!r} in {GNOME_ZIP}")
            yield _entry(lines_before + reader.line_num, ident, label, problem, member, seen)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"line {lines_before + reader.line_num}: not readable CSV ({str(exc)[:120]})",
                         source=str(csv_path)) from None


def zip_cif_structure(zip_path: str | Path, member: str, identifier: str, name: str | None = None) -> Structure:
    """The structure of the CIF ``member`` of ``zip_path`` (named ``name`` in errors), read in memory by seeking to
    its local header (``io.zipindex``: its size and compression ratio checked before it is inflated)."""
    source = f"{name or zip_path}!{member}"
    try:
        check_received_file(zip_path, what="zip of CIFs", sized=False)
        index = _index(_stamp(zip_path))
        key = cif_stem(member)
        with opened(index) as fd:
            found = find(fd, index, key, cif_stem) if key is not None else None
            if found is None or found.name != member:
                raise InputError("no such member in the archive", source=source, field="member")
            text = read_member(fd, index, found, name=source).decode("utf-8")
    except LimitError:
        raise
    except InputError as exc:
        raise InputError(f"cannot read the member ({exc.message[:160]})", source=source, field="member") from None
    except OSError as exc:
        raise InputError(f"cannot read the member ({str(exc)[:120]})", source=source, field="member") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", source=source, field="encoding") from None
    return read_cif_text(text, source=source, identifier=identifier)


# --- ASE database ------------------------------------------------------------------------------------------------

def _ase_db(path: Path):
    import ase.db  # lazy: ase.db (sqlite) is loaded only when an ASE database is read

    check_received_file(path, what="ASE database", sized=False)  # exists and is a regular file: connect never creates
    return ase.db.connect(str(path), type="db", create_indices=False, use_lock_file=False)


def ase_entries(path: str | Path, labels: tuple[LabelColumn, ...] = (), *, id_key: str | None = None,
                start: int = 0, stop: int | None = None, repeats: bool = True) -> Iterator[Entry]:
    """The entries of an ASE database: ids (the key ``id_key``, default the row id) and labels (keys of the rows'
    key-value pairs) only; the locator is the row id. Rows [``start``, ``stop``) in the order of their ids (an SQL
    OFFSET/LIMIT); ``repeats=False``: as ``parquet_entries``."""
    import sqlite3

    path = Path(path)
    seen: set | None = set() if repeats else None
    limit = None if stop is None else max(0, int(stop) - int(start))
    if limit == 0:
        return
    try:
        for row in _ase_db(path).select(sort="id", offset=int(start), limit=limit, include_data=False):
            kv = dict(row.key_value_pairs)
            ident = str(row.id) if id_key is None else kv.get(id_key)
            label, problem = row_labels(kv, labels)
            yield _entry(row.id, ident if ident is None else str(ident), label, problem, row.id, seen)
    except (sqlite3.Error, ValueError, KeyError, OSError) as exc:
        raise InputError(f"not a readable ASE database ({str(exc)[:120]})", source=str(path)) from None


def ase_rows(path: str | Path) -> int:
    """The number of rows of an ASE database."""
    import sqlite3

    try:
        return int(_ase_db(Path(path)).count())
    except (sqlite3.Error, ValueError, KeyError, OSError) as exc:
        raise InputError(f"not a readable ASE database ({str(exc)[:120]})", source=str(path)) from None


def ase_structure(path: str | Path, row_id: int, identifier: str, name: str | None = None) -> Structure:
    """The structure of ASE row ``row_id`` (``io.ase_adapter.from_ase``; the atom limit checked first)."""
    import sqlite3

    from viewcert.io.ase_adapter import from_ase  # lazy: ase.Atoms only when an ASE database is read

    source = f"{name or path} id {row_id}"
    try:
        row = _ase_db(Path(path)).get(id=int(row_id))
        active_limits().check_atoms(int(row.natoms), source=source)
        atoms = row.toatoms()
    except (sqlite3.Error, KeyError, ValueError, OSError) as exc:
        raise InputError(f"cannot read the row ({str(exc)[:120]})", source=source, field="id") from None
    return from_ase(atoms, provenance=Provenance(source=source, identifier=identifier))


# --- one door ----------------------------------------------------------------------------------------------------

FORMATS = ("optimade", "gnome", "ase")


def entries(fmt: str, path: str | Path, labels: tuple[LabelColumn, ...] | None = None, *,
            id_column: str | None = None, start: int = 0, stop: int | None = None, marks: CsvMarks | None = None,
            repeats: bool = True) -> Iterator[Entry]:
    """The entries of a database of format ``fmt`` (``FORMATS``) at ``path``: rows [``start``, ``stop``) (every row
    by default), a repeated id the later row's problem unless ``repeats=False`` (the caller's ``repeated_rows``);
    ``marks``: a GNoME CSV's (``layout``)."""
    if fmt == "optimade":
        return parquet_entries(path, labels or (), id_column=id_column or OPTIMADE_ID, start=start, stop=stop,
                               repeats=repeats)
    if fmt == "gnome":
        return gnome_entries(path, labels, start=start, stop=stop, marks=marks, repeats=repeats)
    if fmt == "ase":
        return ase_entries(path, labels or (), id_key=id_column, start=start, stop=stop, repeats=repeats)
    raise InputError(f"database format must be one of {FORMATS}, got {fmt!r}", field="format")


def layout(fmt: str, path: str | Path) -> tuple[int, CsvMarks | None]:
    """(number of rows, a GNoME CSV's marks or None) of a database file, read without holding its rows: a Parquet
    footer, one line-by-line pass over a CSV, an ASE database's row count."""
    if fmt == "optimade":
        _parquet(Path(path))  # a readable Parquet file, else one InputError
        return parquet_rows(path), None
    if fmt == "gnome":
        marks = gnome_marks(path)
        return marks.n, marks
    if fmt == "ase":
        return ase_rows(path), None
    raise InputError(f"database format must be one of {FORMATS}, got {fmt!r}", field="format")


# --- repeated ids, in bounded memory -------------------------------------------------------------------------------

REPEAT_BUCKET_ROWS = 1 << 18  # rows per bucket of the repeated-id pass: ~6 MB of digests sorted at a time
_RECORD = np.dtype([("a", "<u8"), ("b", "<u8"), ("p", "<i8")])


def _digests(ids: list[str]) -> np.ndarray:
    """The 128-bit BLAKE2b digest of each id as two unsigned 64-bit words."""
    raw = b"".join(hashlib.blake2b(i.encode("utf-8", "surrogatepass"), digest_size=16).digest() for i in ids)
    return np.frombuffer(raw, dtype=[("a", "<u8"), ("b", "<u8")])


def repeated_rows(chunks: Iterable[list[tuple[int, str]]], n: int, *,
                  bucket_rows: int = REPEAT_BUCKET_ROWS) -> tuple[np.ndarray, np.ndarray]:
    """(positions, first positions) of every row whose id an earlier row has, ascending: ``chunks`` gives (position,
    id) pairs of ``n`` rows in all, in order. Memory is bounded whatever ``n``: each id's 128-bit BLAKE2b digest and
    position go to one of ceil(n / ``bucket_rows``) bucket files by digest, each sorted alone (two different ids
    share a digest with probability below 10⁻²⁰ for a billion rows); only the repeats found are held."""
    buckets = max(1, -(-int(n) // int(bucket_rows)))
    found: list[np.ndarray] = []
    with tempfile.TemporaryDirectory(prefix="viewcert-ids-") as tmp:
        files = [open(Path(tmp) / f"{k}.bin", "wb") for k in range(buckets)]  # noqa: SIM115 - closed below
        try:
            for chunk in chunks:
                if not chunk:
                    continue
                d = _digests([i for _, i in chunk])
                rec = np.empty(len(chunk), dtype=_RECORD)
                rec["a"], rec["b"], rec["p"] = d["a"], d["b"], [p for p, _ in chunk]
                which = rec["a"] % buckets
                for k in np.unique(which):
                    rec[which == k].tofile(files[int(k)])
        finally:
            for fh in files:
                fh.close()
        for k in range(buckets):
            found.append(_repeats_in(np.fromfile(Path(tmp) / f"{k}.bin", dtype=_RECORD)))
    pairs = np.concatenate(found) if found else np.empty((0, 2), dtype=np.int64)
    pairs = pairs[np.argsort(pairs[:, 0], kind="stable")]
    return pairs[:, 0].copy(), pairs[:, 1].copy()


def _repeats_in(rec: np.ndarray) -> np.ndarray:
    """(position, first position) rows of the repeated digests of one bucket."""
    if len(rec) < 2:
        return np.empty((0, 2), dtype=np.int64)
    rec = rec[np.lexsort((rec["p"], rec["b"], rec["a"]))]
    same = (rec["a"][1:] == rec["a"][:-1]) & (rec["b"][1:] == rec["b"][:-1])
    new_group = np.concatenate(([True], ~same))
    first = rec["p"][np.maximum.accumulate(np.where(new_group, np.arange(len(rec)), 0))]
    keep = ~new_group
    return np.stack([rec["p"][keep], first[keep]], axis=1).astype(np.int64)


def read_entry(fmt: str, path: str | Path, locator: Any, name: str, identifier: str) -> Structure:
    """The structure of one entry (in the worker): a Parquet row, a GNoME zip member (``path`` is the folder), an
    ASE row; errors name the file as ``name`` (its name in the input, not where it lies)."""
    if fmt == "optimade":
        return parquet_structure(path, int(locator), identifier, name)
    if fmt == "gnome":
        return zip_cif_structure(Path(path) / GNOME_ZIP, str(locator), identifier, name)
    if fmt == "ase":
        return ase_structure(path, int(locator), identifier, name)
    raise InputError(f"database format must be one of {FORMATS}, got {fmt!r}", field="format")
