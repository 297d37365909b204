"""What a certification runs on: a list of items (id, how to read the structure, the dataset's own label)
plus the SHA-256 of every input file.

INPUT may be

- ``builtin:NAME`` — a built-in sample (``viewcert.io.builtin``);
- the study's data layout, a folder with ``structures.json`` (``{id: {"cif": text, ...}}``) and
  ``eval.jsonl`` (the items, with ``crystal_system``) and optionally ``labels_sidecar.json`` (crystal
  system, point group, space group per id). ``subset="eval"`` (default) takes the ``eval.jsonl`` items in
  file order; ``subset="all"`` every structure of ``structures.json`` in file order;
- a folder of structure files (``.cif``, POSCAR/CONTCAR/``.vasp``, ``.xyz``, ``.pdb``, …), ids = paths
  relative to the folder without the extension, optionally with ``labels.json``
  (``{id: {"crystal_system": ..., "point_group": ..., "space_group": ...}}``, any subset of the keys);
- a single structure file;
- ``complex:PATH[#ligand=RES,pocket=8]`` — one protein–ligand complex as a MiSI-style ligand + pocket molecule
  (``viewcert.io.complex``);
- a structure database (``viewcert.io.database``), read lazily: ``optimade:PATH`` (a Parquet file or a folder of
  Parquet shards; a bare ``*.parquet`` path too), ``gnome:FOLDER`` (summary CSV + zip of CIFs), ``ase:PATH`` (a
  bare ``*.db`` path too), each with ``#label=COLUMN[:LEVEL]`` (repeatable; the published label column and the
  level it states, inferred from the column's name when left out) and ``#id=COLUMN``. Its items are a
  ``DatabaseItems``: made from the rows a slice covers when it is read, so a run holds one shard's items at a time
  whatever the number of rows (limits, a selection and how items are shown are applied as they are made).

Items are read in the worker (``Item.read()``), so reading is part of the parallel pipeline.

A certificate may cover a part of its input, shown as recorded (``Selection``, ``inputs.selection``): a
benchmark export's questions (the usable items, the first ``--limit`` of them in SHA-256 order of the id) and,
for the molecular handedness task, which of them are shown mirrored. ``verify`` loads the input and applies
the recorded selection (``Dataset.with_selection``), so it recomputes exactly those items, shown the same way.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from viewcert.errors import InputError
from viewcert.formats.fields import ABSENT
from viewcert.formats.settings_sections import Inputs
from viewcert.io.builtin import PROTOTYPES, builtin
from viewcert.io.ccd import ccd_codes, ccd_codes_for, ccd_file_sha256, read_ccd_structure
from viewcert.io.cif import read_cif_text
from viewcert.io.database import (
    FORMATS,
    GNOME_CSV,
    OPTIMADE_LABELS,
    REPEAT_BUCKET_ROWS,
    CsvMarks,
    LabelColumn,
    ase_keys,
    entries,
    label_like,
    layout,
    optimade_labels,
    parquet_columns,
    read_entry,
    repeated_rows,
)
from viewcert.io.read import entry_problem, format_of, read_structure
from viewcert.io.received import loads_json_line, loads_json_strict, read_received_bytes, received_sha256
from viewcert.limits import active_limits
from viewcert.structures import Structure, sha256_text

if TYPE_CHECKING:
    from viewcert.io.complex import ComplexFiles

STRUCTURE_SUFFIXES = (".cif", ".mcif", ".vasp", ".poscar", ".xyz", ".extxyz", ".pdb", ".ent", ".mmcif", ".sdf",
                      ".mol")
STRUCTURE_NAMES = ("POSCAR", "CONTCAR")
LABEL_KEYS = ("crystal_system", "point_group", "space_group")
DEFAULT_POCKET = 8.0  # Å, io.complex's default (not imported here: gemmi would load at CLI start-up)


@dataclass(frozen=True)
class Item:
    """One structure to certify. ``kind``: "cif_text" (payload = CIF text), "file" (payload = path),
    "structure" (payload = Structure), "ccd" (payload = code), "complex" (payload = path, ligand, pocket),
    "database" (payload = format, path, locator, file name: one row of ``io.database``), "unreadable" (payload = (path,
    why): a folder entry that could not be read, this item's error) or "invalid" (payload = (source, field,
    why): a database row that cannot be certified). ``label``: the dataset's own label (any of crystal_system,
    point_group, space_group), or None; ``label_conflicts``: disagreements between the dataset's own label
    files, reported, not resolved. ``name``: a file item's name as its input names it (relative to the input's
    folder): what its errors show instead of where the file lies, so a certificate's bytes do not depend on the
    path the input was given by or the machine it lies on."""

    id: str
    kind: str
    payload: Any
    sha256: str
    label: dict | None = None
    label_source: str = ""
    label_conflicts: tuple[str, ...] = ()
    points_per_atom: int = 0  # observed points per atom (views × tiling × supercell); 0 = not checked
    shown: str = ""  # how the structure is shown: "" as read, or a name of SHOWN_AS (e.g. "mirror-x")
    name: str = ""  # a file item's name relative to its input (errors show it instead of the file's path)

    def read(self) -> Structure:
        """The structure (as ``shown``), or InputError naming the item (its file by ``name``, never by where it
        lies); ``max_atoms`` of the limits in force (in a worker: those where the work was submitted) is checked
        before any work."""
        try:
            s = self._read()
        except Exception as exc:  # noqa: BLE001 - re-raised, its file named as the input names it
            raise self._named(exc) from None
        return SHOWN_AS[self.shown][0](s) if self.shown else s

    def _named(self, exc: Exception) -> Exception:
        """``exc`` with the file's path (as the input was given: relative or absolute) replaced by ``name``."""
        path = self.payload if self.kind == "file" else self.payload[0] if self.kind == "unreadable" else None
        if not self.name or not isinstance(path, str) or not path:
            return exc
        if isinstance(exc, InputError):
            if path not in (exc.source or "") and path not in exc.message:
                return exc
            source = exc.source.replace(path, self.name) if exc.source else exc.source
            return type(exc)(exc.message.replace(path, self.name), source=source, field=exc.field)
        return InputError(str(exc).replace(path, self.name)) if path in str(exc) else exc

    def _read(self) -> Structure:
        if self.kind == "structure":
            s = self.payload
        elif self.kind == "cif_text":
            s = read_cif_text(self.payload, source=self.id, identifier=self.id)
        elif self.kind == "file":
            s = _read_file(self.payload, self.id)
        elif self.kind == "ccd":  # payload = CCD code, read in the worker (viewcert.io.ccd)
            s = read_ccd_structure(str(self.payload))
        elif self.kind == "complex":  # payload = (path, ligand or None, pocket Å), prepared in the worker
            s = read_complex(*self.payload, identifier=self.id)
        elif self.kind == "database":  # payload = (format, path, locator, name), read in the worker
            s = read_entry(*self.payload, identifier=self.id)
        elif self.kind == "unreadable":  # payload = (path, why): listed in the folder, not readable
            raise InputError(f"cannot read: {self.payload[1]}", source=self.payload[0], field="path")
        elif self.kind == "invalid":  # payload = (source, field, why): a malformed database row
            raise InputError(self.payload[2], source=self.payload[0], field=self.payload[1])
        else:
            raise InputError(f"unknown item kind {self.kind!r}", source=self.id, field="kind")
        self.check_size(s.n_atoms)
        return s

    def check_size(self, n_atoms: int) -> None:
        """``max_atoms`` and, with ``points_per_atom``, ``max_observations`` of the limits in force for a structure of
        ``n_atoms``: the structure as read, and again the conventional cell standardisation makes of it (up to
        4× the atoms of a primitive F-centred cell), before the views are observed."""
        limits = active_limits()
        limits.check_atoms(n_atoms, source=self.id)
        if self.points_per_atom:
            limits.check_observations(n_atoms * self.points_per_atom, source=self.id)


def mirror_x(s: Structure) -> Structure:
    """The mirror image x → −x (Cartesian Å) through the bounding-box centre: same atoms, same order, the box
    kept. A molecule only (a lattice would turn left-handed)."""
    if s.is_periodic:
        raise InputError("only a molecule is shown mirrored (this structure has a lattice)", source=s.identifier,
                         field="shown")
    pos = s.positions.copy()
    lo, hi = pos[:, 0].min(), pos[:, 0].max()
    pos[:, 0] = (lo + hi) - pos[:, 0]
    return Structure(pos, s.numbers, provenance=s.provenance)


#: how a selected item may be shown: name → (function of the structure as read, its definition as recorded)
SHOWN_AS = {"mirror-x": (mirror_x, "x -> -x (Cartesian) through the centre of the molecule's bounding box")}


@dataclass(frozen=True)
class Selection:
    """The part of an input a certificate covers: ``ids`` (in the input's order), the ``rule`` that chose
    them (text), and ``shown``: (id, name of ``SHOWN_AS``) for the items shown otherwise than as read, with
    ``shown_rule`` saying how those were chosen. Recorded as ``inputs.selection`` (ids only: location-free)."""

    rule: str
    ids: tuple[str, ...]
    shown: tuple[tuple[str, str], ...] = ()
    shown_rule: str = ""

    def to_dict(self) -> dict:
        d: dict = {"rule": self.rule, "ids": list(self.ids), "n": len(self.ids)}
        if self.shown or self.shown_rule:
            names = sorted({name for _, name in self.shown})
            d["shown"] = {"rule": self.shown_rule, "as": {n: SHOWN_AS[n][1] for n in names},
                          "items": {i: name for i, name in self.shown}}
        return d

    @classmethod
    def from_dict(cls, d, *, source: str = "certificate") -> Selection:
        """A recorded selection (received: every field checked; InputError naming it)."""
        f = "inputs.selection"
        if not isinstance(d, dict) or not isinstance(d.get("rule"), str) or not isinstance(d.get("ids"), list):
            raise InputError("inputs.selection must be an object with text 'rule' and a list 'ids'", source=source,
                             field=f)
        ids = d["ids"]
        if not all(isinstance(i, str) for i in ids) or len(set(ids)) != len(ids) or d.get("n") != len(ids):
            raise InputError("inputs.selection.ids must be distinct texts, as many as 'n'", source=source,
                             field=f"{f}.ids")
        shown = d.get("shown", {"rule": "", "items": {}})
        items = shown.get("items") if isinstance(shown, dict) else None
        if not isinstance(items, dict) or not isinstance(shown.get("rule"), str):
            raise InputError("inputs.selection.shown must be an object with text 'rule' and an object 'items'",
                             source=source, field=f"{f}.shown")
        for i, name in items.items():
            if i not in set(ids) or name not in SHOWN_AS:
                raise InputError(f"inputs.selection.shown: item {i!r} is not selected or {name!r} is not one of "
                                 f"{sorted(SHOWN_AS)}", source=source, field=f"{f}.shown.items")
        return cls(d["rule"], tuple(ids), tuple(sorted(items.items())), shown["rule"])


@dataclass(frozen=True)
class Dataset:
    """Items plus where they came from: ``spec`` (as recorded in a certificate), ``kind``, and ``files``
    ({name: sha256} of every input file read, names relative to the input root)."""

    spec: str
    kind: str
    items: Sequence[Item]  # a tuple, or a database's ``DatabaseItems`` (made when read)
    files: dict[str, str] = field(default_factory=dict)
    subset: str = ""
    location: str = ""  # absolute path read from: a hint for ``verify``, never part of a digest
    selection: Selection | None = None  # the part of the input certified (an export's questions), if recorded

    def __len__(self) -> int:
        return len(self.items)

    def record(self) -> Inputs:
        """The certificate's ``inputs`` section: spec, kind, subset, number of items, every file's SHA-256 by
        name and, when recorded, the selection (written only then: other certificates keep their bytes)."""
        return Inputs(spec=self.spec, kind=self.kind, subset=self.subset, n_items=len(self.items),
                      files=dict(sorted(self.files.items())),
                      selection=ABSENT if self.selection is None else self.selection.to_dict())

    def to_dict(self) -> dict:
        return self.record().to_dict()

    def with_selection(self, sel: Selection) -> Dataset:
        """Exactly the items ``sel`` names (InputError for an id not in the input), each shown as it records
        (its input digest then hashes "<digest>:<shown>"), with ``sel`` recorded."""
        picked = self.select(sel.ids)
        if isinstance(picked.items, DatabaseItems):
            return replace(picked, items=picked.items.with_shown(sel.shown), selection=sel)
        shown = dict(sel.shown)
        items = tuple(replace(it, shown=shown[it.id], sha256=sha256_text(f"{it.sha256}:{shown[it.id]}"))
                      if it.id in shown else it for it in picked.items)
        return replace(picked, items=items, selection=sel)

    def with_points_per_atom(self, points_per_atom: int) -> Dataset:
        """The same items, each read checking the observed points (atoms × ``points_per_atom``: views ×
        repetitions) against the limits in force, besides the atoms every item checks."""
        if isinstance(self.items, DatabaseItems):
            return replace(self, items=self.items.with_points_per_atom(points_per_atom))
        return replace(self, items=tuple(replace(it, points_per_atom=int(points_per_atom)) for it in self.items))

    def select(self, ids) -> Dataset:
        """The items with these ids, in this dataset's order."""
        want = set(ids)
        if isinstance(self.items, DatabaseItems):
            return replace(self, items=self.items.select(want))
        missing = want - {it.id for it in self.items}
        if missing:
            raise InputError(f"unknown item ids: {sorted(missing)[:5]}", field="ids")
        return replace(self, items=tuple(it for it in self.items if it.id in want))


def _read_file(path: str, identifier: str) -> Structure:
    s = read_structure(path)
    return s.with_provenance(replace(s.provenance, identifier=identifier))  # the same atoms: no re-validation


def _norm_label(d: dict | None) -> dict | None:
    if not d:
        return None
    out = {}
    if d.get("crystal_system"):
        out["crystal_system"] = str(d["crystal_system"]).lower()
    if d.get("point_group"):
        out["point_group"] = str(d["point_group"])
    sg = d.get("space_group")
    if isinstance(sg, dict):
        sg = sg.get("number")
    if sg is not None and sg != "":
        out["space_group"] = int(sg)
    return out or None


def _file_sha(path: Path) -> str:
    return received_sha256(path, what="input file")  # streamed from a checked descriptor: regular files only


def read_json_file(path: Path, *, lines: bool = False):
    """JSON (or, with ``lines``, JSONL as a list of rows) from ``path``; InputError naming the file, and the
    line for JSONL, on a size over ``max_json_bytes`` of the limits in force, non-UTF-8 bytes or malformed JSON."""
    path = Path(path)
    raw = read_received_bytes(path, what="JSON file")  # a regular file, sized before reading
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", source=str(path), field="encoding") from None
    if not lines:
        try:
            return loads_json_strict(text, source=str(path))  # a duplicate key is refused, never last-wins
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InputError(f"not valid JSON ({str(exc)[:120]})", source=str(path), field="json") from None
    rows = []
    for k, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = loads_json_line(line, k, source=str(path))  # a duplicate key is refused
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InputError(f"line {k} is not valid JSON ({str(exc)[:120]})", source=str(path),
                             field=f"line {k}") from None
        if not isinstance(row, dict):
            raise InputError(f"line {k} is not a JSON object", source=str(path), field=f"line {k}")
        rows.append(row)
    return rows


def is_study_layout(path: Path) -> bool:
    return path.is_dir() and (path / "structures.json").is_file()


def load_study(root: Path, *, subset: str = "eval", spec: str | None = None) -> Dataset:
    """The render-ceiling study's layout (see the module docstring)."""
    sfile = root / "structures.json"
    files = {"structures.json": _file_sha(sfile)}
    structures = _object(read_json_file(sfile), sfile)
    sidecar: dict = {}
    if (root / "labels_sidecar.json").is_file():
        files["labels_sidecar.json"] = _file_sha(root / "labels_sidecar.json")
        sidecar = _object(read_json_file(root / "labels_sidecar.json"), root / "labels_sidecar.json")
    eval_rows: dict[str, dict] = {}
    if (root / "eval.jsonl").is_file():
        files["eval.jsonl"] = _file_sha(root / "eval.jsonl")
        for k, row in enumerate(read_json_file(root / "eval.jsonl", lines=True), 1):
            if not isinstance(row.get("material_id"), str):
                raise InputError(f"row {k} has no string material_id", source=str(root / "eval.jsonl"),
                                 field="material_id")
            eval_rows[row["material_id"]] = row
    if subset == "eval":
        if not eval_rows:
            raise InputError(f"{root} has no eval.jsonl; pass subset='all'", source=str(root), field="subset")
        ids = list(eval_rows)
    elif subset == "all":
        ids = list(structures)
    else:
        raise InputError(f"subset must be 'eval' or 'all', got {subset!r}", field="subset")
    items = []
    for mid in ids:
        if mid not in structures:
            raise InputError(f"item {mid!r} is not in structures.json", source=str(sfile), field="material_id")
        entry = structures[mid]
        cif = entry.get("cif") if isinstance(entry, dict) else None
        if not isinstance(cif, str):
            raise InputError(f"item {mid!r} has no CIF text", source=str(sfile), field=f"{mid}.cif")
        side = _norm_label(sidecar.get(mid) if isinstance(sidecar.get(mid), dict) else None) or {}
        label = dict(side)
        sources = ["labels_sidecar.json"] if side else []
        conflicts = []
        row = eval_rows.get(mid)
        if row is not None and row.get("crystal_system"):
            cs = str(row["crystal_system"]).lower()
            if side.get("crystal_system") not in (None, cs):
                conflicts.append(f"crystal_system: eval.jsonl {cs} vs labels_sidecar.json {side['crystal_system']}")
            label["crystal_system"] = cs  # what the benchmark scores against
            sources.insert(0, "eval.jsonl")
        items.append(Item(mid, "cif_text", cif, sha256_text(cif), label or None, "+".join(sources),
                          tuple(conflicts)))
    return Dataset(spec or root.name, "study", tuple(items), files, subset, str(root.resolve()))


def _object(value, path: Path) -> dict:
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON object at the top level, got {type(value).__name__}", source=str(path))
    return value


def _structure_files(root: Path) -> list[Path]:
    """Every entry under ``root`` with a structure file's name that is not a directory (hidden ones
    skipped): dangling symbolic links, FIFOs and the like included, so that they become item errors."""
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_dir() or any(part.startswith(".") for part in p.relative_to(root).parts):
            continue
        if p.suffix.lower() in STRUCTURE_SUFFIXES or p.name.split(".")[0] in STRUCTURE_NAMES:
            out.append(p)
    return out


def load_folder(root: Path, *, spec: str | None = None) -> Dataset:
    paths = _structure_files(root)
    if not paths:
        raise InputError(f"no structure files in {root} (looked for {', '.join(STRUCTURE_SUFFIXES)}, POSCAR)",
                         source=str(root), field="INPUT")
    labels: dict = {}
    files: dict[str, str] = {}
    if (root / "labels.json").is_file():
        files["labels.json"] = _file_sha(root / "labels.json")
        labels = _object(read_json_file(root / "labels.json"), root / "labels.json")
    items = []
    for p in paths:
        rel = p.relative_to(root).as_posix()
        ident = rel[: -len(p.suffix)] if p.suffix else rel
        why = entry_problem(p)
        try:
            digest = _file_sha(p) if why is None else ""
        except OSError as exc:  # deleted or made unreadable between the listing and this read
            why, digest = f"vanished or unreadable when read ({exc.strerror or exc})", ""
        if why is not None:  # an item error (exit 1, listed with item, file, reason), never dropped
            items.append(Item(ident, "unreadable", (str(p), why), "", name=rel))
            continue
        files[rel] = digest
        got = labels.get(ident) or labels.get(rel)
        lab = _norm_label(got if isinstance(got, dict) else None)
        items.append(Item(ident, "file", str(p), digest, lab, "labels.json" if lab else "", name=rel))
    ids = [it.id for it in items]
    if len(set(ids)) != len(ids):
        raise InputError(f"two files in {root} share an id (path without extension)", source=str(root))
    return Dataset(spec or root.name, "folder", tuple(items), files, location=str(root.resolve()))


def load_builtin(spec: str) -> Dataset:
    """``builtin:NAME`` (see ``viewcert.io.builtin``). AFLOW prototypes carry their library label: the
    space-group number in the AFLOW label and the crystal system of ``PROTOTYPES``."""
    items = []
    for s in builtin(spec):
        ident = s.identifier
        digest = s.provenance.sha256 or sha256_text(json.dumps(s.to_dict(), sort_keys=True))
        lab = _builtin_label(ident)
        items.append(Item(ident, "structure", s, digest, lab, "aflow-label" if lab else ""))
    return Dataset(spec, "builtin", tuple(items), {it.id: it.sha256 for it in items})


def load_ccd(spec: str) -> Dataset:
    """``builtin:ccd`` (every component of biotite's CCD), ``ccd:ATP[,IBP]`` or ``ccd:@FILE``: one item per
    code (kind "ccd", read in the worker; a component without ideal coordinates is that item's error). Item
    digests are SHA-256 of "<CCD file sha256>:<code>"."""
    codes = ccd_codes_for(spec)
    codes = ccd_codes() if codes is None else codes
    if len(set(codes)) != len(codes):
        raise InputError("a CCD code is listed twice", source=spec, field="codes")
    fsha = ccd_file_sha256()
    items = tuple(Item(f"ccd:{c}", "ccd", c, sha256_text(f"{fsha}:{c}")) for c in codes)
    return Dataset(spec, "ccd", items, {"biotite/structure/info/components.bcif": fsha})


def parse_complex_spec(spec: str) -> tuple[Path | ComplexFiles, str | None, float]:
    """``complex:PATH[#ligand=RES][,pocket=Å]`` or ``complex:protein=P,ligand=L[,water=W][#pocket=Å]`` →
    (path or ComplexFiles, ligand residue name or None, pocket in Å; default 8, at most MAX_POCKET)."""
    from viewcert.io.complex import check_pocket, parse_files  # lazy: gemmi is imported with it

    body = spec[len("complex:"):]
    path, _, opts = body.partition("#")
    ligand, pocket = None, DEFAULT_POCKET
    for part in filter(None, (x.strip() for x in opts.split(","))):
        key, eq, value = part.partition("=")
        if not eq or key not in ("ligand", "pocket") or not value:
            raise InputError(f"complex option must be ligand=RES or pocket=Å, got {part!r}", source=spec,
                             field="INPUT")
        if key == "ligand":
            ligand = value
        else:
            try:
                pocket = float(value)
            except ValueError:
                raise InputError(f"pocket must be a number of Å, got {value!r}", source=spec, field="pocket") from None
    if not path:
        raise InputError("complex: needs a path (complex:PATH[#ligand=RES,pocket=8])", source=spec, field="INPUT")
    check_pocket(pocket, spec)
    if path.startswith("protein="):
        return parse_files(path, spec), ligand, pocket
    return Path(path).expanduser(), ligand, pocket


def read_complex(path, ligand: str | None, pocket: float, *, identifier: str) -> Structure:
    """The MiSI-style ligand + pocket molecule of one complex (``viewcert.io.complex.prepare_complex``)."""
    from viewcert.io.complex import prepare_complex  # lazy: start-up time (gemmi is imported with it)

    s = prepare_complex(path, ligand=ligand, pocket=pocket).structure
    return s.with_provenance(replace(s.provenance, identifier=identifier))  # the same atoms: no re-validation


def load_complex(spec: str) -> Dataset:
    """``complex:PATH[#ligand=RES,pocket=8]`` or ``complex:protein=P,ligand=L[,water=W]``: one protein–ligand
    complex (``viewcert.io.complex.locate``'s layouts) as one molecule: the ligand and the whole residues within
    ``pocket`` Å, waters and hydrogens dropped (prepared in the worker). The item digest hashes the input
    files' digests, the ligand and the pocket."""
    from viewcert.io.complex import ComplexFiles  # lazy: as above

    path, ligand, pocket = parse_complex_spec(spec)
    if isinstance(path, ComplexFiles):
        paths, where, name = list(path.paths()), path.protein.resolve().parent, path.name
    else:
        if not path.exists():
            raise InputError(f"complex input {str(path)!r} does not exist", source=spec, field="INPUT")
        paths = sorted(q for q in path.iterdir() if q.is_file()) if path.is_dir() else [path]
        where, name = path.resolve(), path.name
    files = {q.name: _file_sha(q) for q in paths if not q.name.startswith(".")}
    ident = f"{name}:{ligand or 'sdf'}:pocket{pocket:g}"
    digest = sha256_text(json.dumps({"files": files, "ligand": ligand, "pocket": pocket}, sort_keys=True))
    item = Item(ident, "complex", (path if isinstance(path, ComplexFiles) else str(path), ligand, pocket), digest)
    return Dataset(spec, "complex", (item,), files, location=str(where))


def _builtin_label(ident: str) -> dict | None:
    if not ident.startswith("aflow:"):
        return None

    label = ident[len("aflow:"):]
    systems = {lab: cs for lab, cs, _ in PROTOTYPES}
    parts = label.split("_")
    out: dict = {}
    if label in systems:
        out["crystal_system"] = systems[label]
    if len(parts) > 2 and parts[2].isdigit():
        out["space_group"] = int(parts[2])
    return out or None


#: a database spec's prefix → its format (``io.database.FORMATS``); bare paths by suffix
DATABASE_SUFFIXES = {".parquet": "optimade", ".db": "ase"}
#: words of a label column's name → the level it states (a name matching none needs ``COLUMN:LEVEL``)
LEVEL_WORDS = (("crystal_system", ("crystal", "system")), ("point_group", ("point", "group")),
               ("space_group", ("space", "group")), ("space_group", ("spacegroup",)), ("space_group", ("sg",)))


def database_format(spec: str) -> str | None:
    """The database format of INPUT (``optimade:``, ``gnome:``, ``ase:`` or a bare ``*.parquet``/``*.db``), else
    None."""
    head, colon, _ = spec.partition(":")
    if colon and head in FORMATS:
        return head
    return DATABASE_SUFFIXES.get(Path(spec.partition("#")[0]).suffix.lower())


def label_column(text: str, spec: str) -> LabelColumn:
    """``COLUMN[:LEVEL]`` → LabelColumn, the level inferred from the column's words when not given; one of
    OPTIMADE's standard symmetry properties (``io.database.OPTIMADE_LABELS``) is a space group in its notation."""
    column, _, level = text.rpartition(":") if text.rpartition(":")[2] in LABEL_KEYS else (text, "", "")
    standard = dict(OPTIMADE_LABELS)
    if column in standard and level in ("", "space_group"):
        return LabelColumn(column, "space_group", standard[column])
    if not level:
        words = set(column.lower().replace("-", " ").replace("_", " ").split())
        level = next((lv for lv, need in LEVEL_WORDS if set(need) <= words), "")
    if not column or not level:
        raise InputError(f"label column {text!r}: say the level it states, COLUMN:LEVEL with LEVEL one of "
                         f"{', '.join(LABEL_KEYS)}", source=spec, field="label")
    return LabelColumn(column, level)


def parse_database_spec(spec: str) -> tuple[str, Path, tuple[LabelColumn, ...] | None, str | None]:
    """``[FORMAT:]PATH[#label=COLUMN[:LEVEL],...,id=COLUMN]`` → (format, path, label columns or None for the
    format's own, id column or None)."""
    fmt = database_format(spec)
    body, _, opts = spec.partition("#")
    path = body[len(fmt) + 1:] if body.startswith(f"{fmt}:") else body
    labels, id_column = [], None
    for part in filter(None, (x.strip() for x in opts.split(","))):
        key, eq, value = part.partition("=")
        if not eq or key not in ("label", "id") or not value:
            raise InputError(f"database option must be label=COLUMN[:LEVEL] or id=COLUMN, got {part!r}",
                             source=spec, field="INPUT")
        if key == "label":
            labels.append(label_column(value, spec))
        else:
            id_column = value
    return fmt, Path(path).expanduser(), (tuple(labels) or None), id_column


def load_database(spec: str) -> Dataset:
    """A structure database (``io.database``) as a Dataset: one item per row, made when read (``DatabaseItems``:
    the rows are read chunk by chunk, never all held); a malformed row is an item of kind "invalid" (its error names
    the file, the row and the column); item digests hash "<file sha256>:<row locator>". Listing reads each file
    once for its layout (row count, a CSV's marks) and once more for its ids (the repeated-id pass)."""
    fmt, path, labels, id_column = parse_database_spec(spec)
    if not path.exists():
        raise InputError(f"database {str(path)!r} does not exist", source=spec, field="INPUT")
    shards = sorted(p for p in path.glob("*.parquet") if p.is_file()) if fmt == "optimade" and path.is_dir() \
        else [path]
    if not shards:
        raise InputError(f"no *.parquet files in {path}", source=spec, field="INPUT")
    if fmt == "optimade" and labels is None:  # OPTIMADE's own symmetry property: read as the label, recorded
        labels = optimade_labels(parquet_columns(shards[0])) or None
        if labels:
            spec = f"{spec}{',' if '#' in spec else '#'}label={labels[0].column}"
    files: dict[str, str] = {}
    parts = []
    for shard in shards:
        hashed = _database_files(fmt, shard, path)
        files.update(hashed)
        n, marks = layout(fmt, shard)
        parts.append(DatabaseFile(fmt, str(shard), list(hashed)[-1], ":".join(hashed.values()), labels, id_column,
                                  n, marks))
    items = DatabaseItems(tuple(parts), chunk=LAZY_CHUNK).find_repeats()
    return Dataset(spec, fmt, items, files, location=str(path.resolve()))


def label_hint(dataset: Dataset) -> str | None:
    """One line naming the columns of a database input that look like a published label when none is read (a
    Parquet file's columns, an ASE database's keys: ``io.database.label_like``), with the option that reads one;
    None when a label column is read, the input is not such a database or nothing looks like a label."""
    files = getattr(dataset.items, "files", ())
    if dataset.kind not in ("optimade", "ase") or not files or any(f.labels for f in files):
        return None
    first = files[0]
    names = label_like(parquet_columns(first.path) if first.fmt == "optimade" else ase_keys(first.path))
    if not names:
        return None
    shown = ", ".join(repr(n) for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    try:  # the option as it runs: the level inferred from the column's words, else to be said
        option = f"--label-column {label_column(names[0], dataset.spec).column}"
    except InputError:
        option = f"--label-column {names[0]}:LEVEL (LEVEL one of {', '.join(LABEL_KEYS)})"
    return (f"hint: no published label is read, but {shown} look{'s' if len(names) == 1 else ''} like one: "
            f"{option} audits it")


def _database_files(fmt: str, shard: Path, root: Path) -> dict[str, str]:
    """{name: sha256} of the files a database shard is read from (GNoME: the CSV and the zip)."""
    if fmt == "gnome":
        from viewcert.io.database import gnome_files  # lazy: only the GNoME layout needs its file names

        return {p.name: _file_sha(p) for p in gnome_files(shard)}  # the CSV, then the zip
    name = shard.relative_to(root).as_posix() if shard != root else shard.name
    return {name: _file_sha(shard)}


LAZY_CHUNK = 4096  # rows of a database read at a time when its items are iterated (``DatabaseItems``)


@dataclass(frozen=True)
class DatabaseFile:
    """One file of a database input, as its items are read on demand: ``fmt``, ``path`` (where it lies), ``name``
    (as ``Dataset.files`` names it: errors name it so), ``digest`` (its files' SHA-256s, what item digests hash),
    the label columns and id column asked for, ``n`` rows and, for a GNoME CSV, its ``marks``."""

    fmt: str
    path: str
    name: str
    digest: str
    labels: tuple[LabelColumn, ...] | None
    id_column: str | None
    n: int
    marks: CsvMarks | None = None

    def entries(self, start: int, stop: int):
        """Its entries of rows [start, stop) (counted from 0), repeated ids not checked (``DatabaseItems``)."""
        return entries(self.fmt, self.path, self.labels, id_column=self.id_column, start=start, stop=stop,
                       marks=self.marks, repeats=False)


@dataclass(frozen=True, eq=False)
class DatabaseItems(Sequence):
    """The items of a database input, read on demand: a sequence (length, index, slice, iteration) whose items are
    made from the rows a slice covers, read from the files at that moment (iteration: ``chunk`` rows at a time), so
    no more than one slice's rows are held, whatever the number of rows. ``repeats``: positions (over every file's
    rows, in order) of the rows whose id an earlier row of the same file has (an item error each, as
    ``io.database``'s eager reading makes them); ``positions``: the rows a selection keeps (ascending; None = all);
    ``points_per_atom`` and ``shown`` ((id, name) of ``SHOWN_AS``) are given to each item made."""

    files: tuple[DatabaseFile, ...]
    repeats: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    positions: np.ndarray | None = None
    points_per_atom: int = 0
    shown: tuple[tuple[str, str], ...] = ()
    chunk: int = LAZY_CHUNK

    @property
    def starts(self) -> np.ndarray:
        """The position of each file's first row, and the number of rows last."""
        return np.concatenate(([0], np.cumsum([f.n for f in self.files], dtype=np.int64)))

    def __len__(self) -> int:
        return int(self.starts[-1]) if self.positions is None else len(self.positions)

    def __getitem__(self, k):
        if isinstance(k, slice):
            a, b, step = k.indices(len(self))
            return tuple(self._items(a, b)) if step == 1 else tuple(self[i] for i in range(a, b, step))
        i = operator.index(k)
        i = i + len(self) if i < 0 else i
        if not 0 <= i < len(self):
            raise IndexError("item index out of range")
        return self._items(i, i + 1)[0]

    def __iter__(self):
        for a in range(0, len(self), self.chunk):
            yield from self._items(a, min(len(self), a + self.chunk))

    def _items(self, a: int, b: int) -> list[Item]:
        """Items a..b-1 of this sequence (with a selection: its rows read ``chunk`` at a time, the kept ones
        made)."""
        if a >= b:
            return []
        if self.positions is None:
            return [it for _, it in self.rows(a, b)]
        want = self.positions[a:b]
        out: list[Item] = []
        for lo in range(int(want[0]), int(want[-1]) + 1, self.chunk):
            keep = set(want[(want >= lo) & (want < lo + self.chunk)].tolist())
            if keep:
                out += [it for g, it in self.rows(lo, min(lo + self.chunk, int(want[-1]) + 1)) if g in keep]
        return out

    def rows(self, g0: int, g1: int) -> Iterator[tuple[int, Item]]:
        """(position, item) of the rows [g0, g1) over every file (positions, not a selection's indices)."""
        starts = self.starts
        rep = self.repeats[np.searchsorted(self.repeats, g0):np.searchsorted(self.repeats, g1)]
        repeated = set(rep.tolist())
        shown = dict(self.shown)
        for f, lo in zip(self.files, starts[:-1].tolist(), strict=True):
            if lo >= g1 or lo + f.n <= g0:
                continue
            for k, e in enumerate(f.entries(max(g0, lo) - lo, min(g1, lo + f.n) - lo)):
                g = max(g0, lo) + k
                if g in repeated:
                    e = replace(e, problem=("id", f"id {e.id!r} is repeated (an earlier row has it)"))
                it = _database_item(f, e, self.points_per_atom)
                name = shown.get(it.id)
                yield g, (it if name is None else replace(it, shown=name, sha256=sha256_text(f"{it.sha256}:{name}")))

    def with_points_per_atom(self, points_per_atom: int) -> DatabaseItems:
        return replace(self, points_per_atom=int(points_per_atom))

    def with_shown(self, shown: tuple[tuple[str, str], ...]) -> DatabaseItems:
        return replace(self, shown=tuple(shown))

    def select(self, want: set) -> DatabaseItems:
        """The items whose ids are in ``want``, found by one pass over the rows (``chunk`` at a time); InputError for
        an id not in the input."""
        picked, found = [], set()
        kept = None if self.positions is None else set(self.positions.tolist())
        for lo in range(0, int(self.starts[-1]), self.chunk):
            for g, it in self.rows(lo, min(lo + self.chunk, int(self.starts[-1]))):
                if it.id in want and (kept is None or g in kept):
                    picked.append(g)
                    found.add(it.id)
        missing = set(want) - found
        if missing:
            raise InputError(f"unknown item ids: {sorted(missing)[:5]}", field="ids")
        return replace(self, positions=np.array(picked, dtype=np.int64))

    def find_repeats(self, *, bucket_rows: int = REPEAT_BUCKET_ROWS) -> DatabaseItems:
        """This sequence with ``repeats`` found (``io.database.repeated_rows``: one pass over the ids, bounded
        memory); an id repeated across two files is an InputError (which row of which is meant cannot be said)."""
        starts = self.starts

        def chunks():
            for f, lo in zip(self.files, starts[:-1].tolist(), strict=True):
                for a in range(0, f.n, self.chunk):
                    yield [(lo + a + k, e.id) for k, e in enumerate(f.entries(a, min(f.n, a + self.chunk))) if e.id]
        pos, first = repeated_rows(chunks(), int(starts[-1]), bucket_rows=bucket_rows)
        across = np.searchsorted(starts, pos, side="right") != np.searchsorted(starts, first, side="right")
        if across.any():
            f = self.files[int(np.searchsorted(starts, pos[across][0], side="right")) - 1]
            raise InputError(f"two rows in different shards share an id (a row of {f.name} repeats one of an "
                             "earlier shard)", source=f.name, field="id")
        return replace(self, repeats=pos)


def _database_item(f: DatabaseFile, e, points_per_atom: int) -> Item:
    """The item of one database entry: a row with a problem is an "invalid" item naming the file and row."""
    where = {"gnome": f"{GNOME_CSV} line", "ase": f"{f.name} id"}.get(f.fmt, f"{f.name} row") + f" {e.row}"
    if e.problem is not None:
        ident = e.id if e.problem[0] != "id" else f"{Path(f.path).name}:{e.row}"
        return Item(ident, "invalid", (where, *e.problem), sha256_text(f"{f.digest}:{e.row}"), e.label or None,
                    f.fmt, points_per_atom=points_per_atom)
    return Item(e.id, "database", (f.fmt, f.path, e.locator, f.name), sha256_text(f"{f.digest}:{e.locator}"),
                e.label or None, f.fmt if e.label else "", points_per_atom=points_per_atom)


def load_input(spec: str | Path, *, subset: str = "eval") -> Dataset:
    """Resolve INPUT (see the module docstring) into a Dataset.

    Parameters
    ----------
    spec : str or Path
        INPUT: ``builtin:NAME``, the study layout, a folder of structure files, a file or a database.
    subset : str
        The study layout's subset (``eval`` or ``all``).

    Returns
    -------
    Dataset
        The items (read later, in the workers) and every input file's SHA-256.
    """
    s = str(spec)
    if database_format(s) is not None:
        return load_database(s)
    if s == "builtin:ccd" or s.startswith("ccd:"):
        return load_ccd(s)
    if s.startswith("complex:"):
        return load_complex(s)
    if s.startswith("builtin:"):
        return load_builtin(s)
    p = Path(s).expanduser()
    if not p.exists():
        raise InputError(f"input {s!r} does not exist", field="INPUT")
    if is_study_layout(p):
        return load_study(p, subset=subset)
    if p.is_dir():
        return load_folder(p)
    if not p.is_file():
        raise InputError(f"input {s!r} is not a regular file or folder", field="INPUT")
    format_of(p)  # a file that is no structure file (notes.txt): one line, before any work
    try:
        digest = _file_sha(p)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=s, field="INPUT") from None
    return Dataset(p.name, "file", (Item(p.stem, "file", str(p), digest, name=p.name),), {p.name: digest},
                   location=str(p.resolve()))
