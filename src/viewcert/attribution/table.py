"""The canonical long table of model results, and the manifest that says which file is which arm.

One row per (run, model, rung, item_id, sample_k): the raw output, the parsed answer, the target, a
score in [0, 1], the parse status (``ok | unparseable | refused | api_error``), a category (the stratum,
e.g. the true crystal system), the file it came from and the harness that wrote it; plus ``parse_reason``
(why an answer is missing, empty when the status is ``ok``). Every reader in
:mod:`viewcert.attribution.readers` returns a :class:`ResultTable`; the ladder reads nothing else.

``score`` is the harness's own per-sample score when the file carries one (VLMEvalKit ``hit``/``score``,
Inspect scorer values, lmms-eval per-document metrics when K = 1); otherwise 1 if the parsed answer equals
the target, else 0. A sample without an answer scores 0 ("null prediction = wrong").

Manifest (TOML): its format, its reader and its writer are ``viewcert.formats.ladder``'s (``[study]``, one
``[[input]]`` per result file: path, model, rung, harness, run, reader options); :func:`load_manifest` reads it
in the ladder's vocabulary (rungs, task). Relative paths are resolved against the manifest's folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from viewcert.attribution.parsing import PARSE_STATUSES
from viewcert.errors import InputError
from viewcert.formats.ladder import read_ladder_manifest
from viewcert.io.received import loads_json_strict, read_received_text, received_sha256
from viewcert.structures import sha256_text

COLUMNS: tuple[str, ...] = (
    "run",
    "model",
    "rung",
    "item_id",
    "sample_k",
    "raw_output",
    "parsed_answer",
    "target",
    "score",
    "parse_status",
    "category",
    "source_file",
    "harness",
)
KEY = ("run", "model", "rung", "item_id", "sample_k")
#: optional columns after the canonical ones: why an answer is missing (empty when parse_status is ok), and
#: whether ``score`` is the harness's own ("yes") or viewcert's parse because the file has none ("no"; empty:
#: not said, read as the harness's)
EXTRA_COLUMNS: tuple[str, ...] = ("parse_reason", "harness_scored")

#: rungs in ladder order (bottom to top); chance and R1 are never read from result files
#: (the two learned readers of ``viewcert learn``: empirical readings of the same items, never certificates)
LEARNED_CELL = "learned reader: cell metrics"
LEARNED_PIXELS = "learned reader: pixels"
RUNGS: tuple[str, ...] = ("chance", "choices-only", "no-image", "vision-only", "R4", "R2", "R3", LEARNED_CELL,
                          LEARNED_PIXELS, "R1")
MEASURED_RUNGS: tuple[str, ...] = ("choices-only", "no-image", "vision-only", "R4", "R2", "R3", LEARNED_CELL,
                                   LEARNED_PIXELS)
RUNG_ALIASES = {
    "noimage": "no-image",
    "no_image": "no-image",
    "no-image": "no-image",
    "choices-only": "choices-only",
    "choices_only": "choices-only",
    "choicesonly": "choices-only",
    "text-only": "no-image",
    "blind": "no-image",
    "r4": "R4",
    "pixels": "R4",
    "frontier": "R4",
    "zeroshot": "R4",
    "zero-shot": "R4",
    "r3": "R3",
    "r3coords": "R3",
    "geometry": "R3",
    "coords": "R3",
    "r2": "R2",
    "detector": "R2",
    "vision-only": "vision-only",
    "vision_only": "vision-only",
    "visiononly": "vision-only",
    "chance": "chance",
    "r1": "R1",
    "cell-forest": LEARNED_CELL,
    "learned-cell-metrics": LEARNED_CELL,
    "pixel-cnn": LEARNED_PIXELS,
    "learned-pixels": LEARNED_PIXELS,
}
#: every task a viewcert export writes, in the export's spelling (``crystal_system`` is accepted too)
TASKS: tuple[str, ...] = ("crystal-system", "point-group", "molecule-handedness", "translation", "rotation", "zoom",
                          "trans-rot", "rot-rot", "handedness", "pocket-ligand", "residue-ligand",
                          "interaction-location", "docking")


def canonical_task(name: str, *, source: str | None = None) -> str:
    """The export's spelling of a task name (``crystal_system`` and ``crystal-system`` are one task)."""
    key = str(name).strip().lower().replace("_", "-")
    if key not in TASKS:
        raise InputError(f"unknown task {name!r}; known: {', '.join(TASKS)}", source=source, field="task")
    return key


def canonical_rung(name: str, *, source: str | None = None) -> str:
    """Canonical rung name for a rung or alias (case-insensitive); raises naming the accepted names."""
    key = str(name).strip()
    if key in RUNGS:
        return key
    low = key.lower()
    if low in RUNG_ALIASES:
        return RUNG_ALIASES[low]
    raise InputError(
        f"unknown rung {name!r}; use one of {', '.join(RUNGS)} (aliases: {', '.join(sorted(RUNG_ALIASES))})",
        source=source,
        field="rung",
    )


def read_json(path: Path, *, missing: str = "file not found") -> Any:
    """The parsed JSON of a received UTF-8 file (``viewcert.io.received``: a regular file, size checked
    before reading, no duplicate key); InputError naming the path if it is absent (``missing``), special,
    too large or not valid JSON."""
    return read_json_hashed(path, missing=missing)[0]


def read_json_hashed(path: Path, *, missing: str = "file not found") -> tuple[Any, str]:
    """(``read_json``, SHA-256 hex of the bytes parsed): the file is read once, so the digest recorded is
    of what was parsed."""
    src = str(path)
    if not Path(path).exists():
        raise InputError(missing, source=src)
    text = read_received_text(path, what="JSON file")  # a regular file within max_json_bytes
    sha = sha256_text(text)  # strict UTF-8 decoding round-trips: the digest of the file's bytes
    try:
        value = loads_json_strict(text, source=src)  # a duplicate key is refused
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(f"not valid JSON: {exc}", source=src) from None
    return value, sha


def sha256_file(path: str | Path) -> str:
    """SHA-256 (hex) of a received file, streamed from its checked descriptor (only a regular file is read)."""
    return received_sha256(path)


@dataclass(frozen=True)
class InputRecord:
    """Provenance of one input file: path, SHA-256, harness, arm and row count."""

    path: str
    sha256: str
    harness: str
    model: str
    rung: str
    rows: int
    items: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class ResultTable:
    """The canonical frame plus what the readers noticed (warnings) and where the rows came from."""

    frame: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    inputs: list[InputRecord] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def arms(self) -> list[tuple[str, str]]:
        """Sorted (model, rung) pairs present."""
        if self.frame.empty:
            return []
        pairs = self.frame[["model", "rung"]].drop_duplicates().itertuples(index=False)
        return sorted((str(m), str(r)) for m, r in pairs)

    @staticmethod
    def concat(tables: Iterable[ResultTable]) -> ResultTable:
        tables = list(tables)
        if not tables:
            return ResultTable(empty_frame())
        frame = pd.concat([t.frame for t in tables], ignore_index=True)
        out = ResultTable(
            frame,
            [w for t in tables for w in t.warnings],
            [i for t in tables for i in t.inputs],
        )
        validate_frame(out.frame, source="combined table")
        return out


def empty_frame() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=_DTYPES[c]) for c in (*COLUMNS, *EXTRA_COLUMNS)})


_DTYPES = {
    "run": object,
    "model": object,
    "rung": object,
    "item_id": object,
    "sample_k": np.int64,
    "raw_output": object,
    "parsed_answer": object,
    "target": object,
    "score": np.float64,
    "parse_status": object,
    "category": object,
    "source_file": object,
    "harness": object,
    "parse_reason": object,
    "harness_scored": object,
}


def make_frame(records: list[Mapping[str, Any]], *, source: str | None = None) -> pd.DataFrame:
    """Build and validate a canonical frame from row dicts (every column required, in any order)."""
    if not records:
        return empty_frame()
    for i, r in enumerate(records):
        missing = [c for c in COLUMNS if c not in r]
        if missing:
            raise InputError(f"row {i + 1} lacks {', '.join(missing)}", source=source, field=missing[0])
    cols = [*COLUMNS, *EXTRA_COLUMNS]
    frame = pd.DataFrame.from_records([{c: r.get(c, "") if c in EXTRA_COLUMNS else r[c] for c in cols}
                                       for r in records], columns=cols)
    frame["sample_k"] = frame["sample_k"].astype(np.int64)
    frame["score"] = frame["score"].astype(np.float64)
    validate_frame(frame, source=source)
    return frame


def validate_frame(frame: pd.DataFrame, *, source: str | None = None) -> None:
    """Check columns, types, statuses, answer/status consistency and key uniqueness; errors name the
    file, the (1-based) row and the field."""
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"canonical table lacks column(s) {', '.join(missing)}", source=source, field=missing[0])
    if frame.empty:
        return
    bad = ~frame["parse_status"].isin(PARSE_STATUSES)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"row {i + 1}: parse_status {frame['parse_status'].iloc[i]!r} is not one of {PARSE_STATUSES}",
            source=source,
            field="parse_status",
        )
    ok = frame["parse_status"].to_numpy() == "ok"
    has = frame["parsed_answer"].notna().to_numpy()
    bad = ok != has
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"row {i + 1}: parsed_answer {frame['parsed_answer'].iloc[i]!r} with parse_status "
            f"{frame['parse_status'].iloc[i]!r} (an answer exactly when the status is 'ok')",
            source=source,
            field="parsed_answer",
        )
    for col in ("item_id", "model", "rung", "target"):
        empty = frame[col].isna() | (frame[col].astype(str).str.strip() == "")
        if empty.any():
            i = int(np.flatnonzero(empty.to_numpy())[0])
            raise InputError(f"row {i + 1}: {col} is empty", source=source, field=col)
    if (frame["sample_k"] < 0).any():
        i = int(np.flatnonzero((frame["sample_k"] < 0).to_numpy())[0])
        raise InputError(f"row {i + 1}: sample_k must be >= 0", source=source, field="sample_k")
    score = frame["score"].to_numpy(dtype=float)
    bad = ~np.isfinite(score) | (score < 0) | (score > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"row {i + 1}: score {score[i]!r} is not in [0, 1]", source=source, field="score")
    dup = frame.duplicated(subset=list(KEY), keep=False)
    if dup.any():
        rows = np.flatnonzero(dup.to_numpy())
        r0 = frame.iloc[rows[0]]
        raise InputError(
            f"duplicate item id {r0['item_id']!r} (model {r0['model']!r}, rung {r0['rung']!r}, sample "
            f"{int(r0['sample_k'])}) at rows {', '.join(str(int(r) + 1) for r in rows[:5])}",
            source=source if source != "combined table" else str(r0["source_file"]),
            field="item_id",
        )


# ---------------------------------------------------------------------- manifest
@dataclass(frozen=True)
class ManifestEntry:
    """One input file and the arm it holds; ``options`` go to the reader."""

    path: Path
    model: str | None
    rung: str
    harness: str | None = None
    run: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Manifest:
    entries: tuple[ManifestEntry, ...]
    source: str | None = None
    name: str = ""
    task: str | None = None  # None: the benchmark export's own task, else crystal system
    items: Path | None = None
    items_id_field: str = "material_id"
    items_target_field: str = "crystal_system"
    r1: str | None = None
    certificate: Path | None = None
    benchmark: Path | None = None  # a viewcert export folder: items, id table, choices, task, certificate

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "name": self.name,
            "task": self.task,
            "benchmark": None if self.benchmark is None else str(self.benchmark),
            "items": None if self.items is None else str(self.items),
            "r1": self.r1,
            "certificate": None if self.certificate is None else str(self.certificate),
            "entries": [
                {
                    "path": str(e.path),
                    "model": e.model,
                    "rung": e.rung,
                    "harness": e.harness,
                    "run": e.run,
                    "options": dict(e.options),
                }
                for e in self.entries
            ],
        }


def _entry_path(text: str, base: Path, *, source: str, where: str) -> Path:
    """An input's path, relative to the manifest's folder unless absolute; a relative pattern (``*``, ``?``,
    ``[``; ``**`` for any depth) must match exactly one file, which it then names (a harness's log name
    carries a time stamp: ``logs/dry-run/*.eval``)."""
    p = Path(text)
    if p.is_absolute() or not any(c in text for c in "*?["):
        return p if p.is_absolute() else base / p
    hits = sorted(h for h in base.glob(text) if h.is_file())
    if len(hits) != 1:
        shown = ", ".join(repr(h.relative_to(base).as_posix()[:80]) for h in hits[:5])
        raise InputError(f"{where}.path {text[:80]!r} matches {len(hits)} files" + (f" ({shown}{', …' if len(hits) > 5 else ''})"
                         if hits else "") + ": it must match exactly one", source=source, field=f"{where}.path")
    return hits[0]


def _resolved(text: Any, base: Path) -> Path | None:
    """A ``[study]`` path, relative to the manifest's folder unless absolute (None when not written)."""
    return None if text is None else (Path(text) if Path(text).is_absolute() else base / text)


def load_manifest(path: str | Path) -> Manifest:
    """Read a TOML manifest (``formats.ladder``: the one reader of the format; see the module docstring), its
    paths resolved against its folder and its rungs and task read in the ladder's vocabulary; errors name the
    entry and key.

    Parameters
    ----------
    path : str or Path
        The TOML manifest.

    Returns
    -------
    Manifest
        Its runs, arms and files, paths resolved against the manifest's folder.
    """
    m = read_ladder_manifest(path)
    src, base = str(Path(path)), Path(path).parent
    entries = tuple(ManifestEntry(
        path=_entry_path(e.path, base, source=src, where=f"input[{i}]"), model=e.model,
        rung=canonical_rung(e.rung, source=f"{src} input[{i}]"), harness=e.harness, run=e.run,
        options=dict(e.options)) for i, e in enumerate(m.inputs))
    return Manifest(
        entries=entries,
        source=src,
        name=str("" if m.name is None else m.name),
        task=None if m.task is None else canonical_task(str(m.task), source=src),
        benchmark=_resolved(m.benchmark, base),
        items=_resolved(m.items, base),
        items_id_field=str("material_id" if m.items_id_field is None else m.items_id_field),
        items_target_field=str("crystal_system" if m.items_target_field is None else m.items_target_field),
        r1=None if m.r1 is None else str(m.r1),
        certificate=_resolved(m.certificate, base),
    )


_STUDY_NAME = re.compile(r"^(?P<arm>[a-z0-9]+)__(?P<org>[^_].*?)__(?P<model>.+)__K(?P<k>\d+)\.json$")
STUDY_ARMS = {"frontier": "R4", "zeroshot": "R4", "r3coords": "R3", "noimage": "no-image"}


def manifest_from_study_dir(study_dir: str | Path) -> Manifest:
    """Manifest for the render-ceiling study layout: ``release/predictions/{arm}__{org}__{model}__K{K}.json``
    (``frontier``/``zeroshot`` -> R4, ``r3coords`` -> R3, ``noimage`` -> no-image), with
    ``data/e3/eval.jsonl`` as the item universe when present. Accepts the study root or the predictions
    folder. Files whose name does not follow the pattern raise, naming the file."""
    root = Path(study_dir)
    pred_dir = root / "release" / "predictions"
    if not pred_dir.is_dir():
        pred_dir = root
        root = root.parent.parent if root.name == "predictions" else root
    files = sorted(pred_dir.glob("*.json"))
    if not files:
        raise InputError("no prediction files (*.json)", source=str(pred_dir))
    entries = []
    for f in files:
        m = _STUDY_NAME.match(f.name)
        if not m or m.group("arm") not in STUDY_ARMS:
            raise InputError(
                "file name does not follow {arm}__{org}__{model}__K{K}.json with arm in "
                f"{sorted(STUDY_ARMS)}",
                source=str(f),
                field="path",
            )
        entries.append(
            ManifestEntry(
                path=f,
                model=None,  # the file's own "model" field names it
                rung=STUDY_ARMS[m.group("arm")],
                harness="study",
                run=f"{m.group('arm')}-K{m.group('k')}",
            )
        )
    items = root / "data" / "e3" / "eval.jsonl"
    return Manifest(
        entries=tuple(entries),
        source=str(pred_dir),
        name="render-ceiling study predictions",
        task="crystal-system",
        items=items if items.is_file() else None,
    )


def read_items(path: str | Path, *, id_field: str = "material_id", target_field: str = "crystal_system",
               parser=None) -> dict[str, str | None]:
    """Item universe from a JSONL (or JSON list) file: ``{item_id: target}`` in file order; duplicate ids
    raise naming the line."""
    path = Path(path)
    src = str(path)
    text = read_received_text(path, what="item list")  # a regular file within max_json_bytes
    if path.suffix == ".json":
        try:
            rows = loads_json_strict(text, source=src)
        except InputError:
            raise
        except ValueError as exc:
            raise InputError(f"not valid JSON: {exc}", source=src) from None
        if isinstance(rows, dict):
            rows = [{id_field: k, **(v if isinstance(v, dict) else {})} for k, v in rows.items()]
    else:
        rows = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(loads_json_strict(line, source=f"{src} line {n}"))
            except InputError:
                raise
            except ValueError as exc:
                raise InputError(f"line {n}: not valid JSON ({exc})", source=src) from None
    out: dict[str, str | None] = {}
    for n, row in enumerate(rows, start=1):
        if not isinstance(row, dict) or id_field not in row:
            raise InputError(f"line {n} has no {id_field!r}", source=src, field=id_field)
        iid = str(row[id_field])
        if iid in out:
            raise InputError(f"line {n}: duplicate item id {iid!r}", source=src, field=id_field)
        tgt = row.get(target_field)
        if tgt is not None and parser is not None:
            canon = parser.canonical(str(tgt))
            if canon is None:
                raise InputError(f"line {n}: target {tgt!r} is not a label", source=src, field=target_field)
            tgt = canon
        out[iid] = None if tgt is None else str(tgt)
    return out


# ---------------------------------------------------------------------- cross-arm checks
@dataclass(frozen=True)
class Coverage:
    """Per-arm item coverage against the universe: present, missing (listed), extra."""

    universe: tuple[str, ...]
    frame: pd.DataFrame  # model, rung, n_items, present, missing, missing_ids

    def missing(self, model: str, rung: str) -> tuple[str, ...]:
        row = self.frame[(self.frame["model"] == model) & (self.frame["rung"] == rung)]
        return tuple(row["missing_ids"].iloc[0]) if len(row) else ()


def check_consistency(table: ResultTable, universe: Mapping[str, str | None] | None = None) -> Coverage:
    """Cross-arm checks. Every item must have one target across all rows (and agree with the universe
    file when it gives targets); items outside a given universe raise; items missing from an arm are
    counted and listed (never dropped). Returns the coverage table."""
    frame = table.frame
    if frame.empty:
        raise InputError("the result table is empty")
    targets = frame.groupby("item_id", sort=True)["target"].agg(lambda s: sorted(set(map(str, s))))
    conflict = targets[targets.map(len) > 1]
    if len(conflict):
        iid = conflict.index[0]
        rows = frame[frame["item_id"] == iid]
        detail = "; ".join(
            f"{t!r} in {sorted(set(rows.loc[rows['target'] == t, 'source_file']))}" for t in conflict.iloc[0]
        )
        raise InputError(
            f"mismatched targets between arms for item {iid!r}: {detail} ({len(conflict)} item(s) disagree)",
            source=str(rows["source_file"].iloc[0]),
            field="target",
        )
    if universe is not None:
        extra = sorted(set(frame["item_id"]) - set(universe))
        if extra:
            row = frame[frame["item_id"] == extra[0]].iloc[0]
            shown = ", ".join(repr(x) for x in extra[:5]) + (", …" if len(extra) > 5 else "")
            raise InputError(
                f"{len(extra)} item id(s) are not in the item list: {shown}",
                source=str(row["source_file"]),
                field="item_id",
            )
        for iid, tgt in universe.items():
            if tgt is not None and iid in targets.index and targets[iid][0] != tgt:
                row = frame[frame["item_id"] == iid].iloc[0]
                raise InputError(
                    f"item {iid!r}: target {targets[iid][0]!r} disagrees with the item list's {tgt!r}",
                    source=str(row["source_file"]),
                    field="target",
                )
        uni = tuple(universe)
    else:
        uni = tuple(sorted(set(frame["item_id"])))
    rows = []
    uni_set = set(uni)
    for (model, rung), sub in frame.groupby(["model", "rung"], sort=True):
        present = set(sub["item_id"])
        missing = sorted(uni_set - present)
        rows.append(
            {
                "model": model,
                "rung": rung,
                "n_items": len(uni),
                "present": len(present),
                "missing": len(missing),
                "missing_ids": missing,
            }
        )
    return Coverage(uni, pd.DataFrame(rows))


def restrict_items(table: ResultTable, coverage: Coverage, ids: Sequence[str], *,
                   source: str = "id file") -> tuple[ResultTable, Coverage]:
    """The table and coverage over ``ids`` only (in the universe's order); an id outside the results' items is
    refused, naming ``source`` and the first such ids."""
    known = set(coverage.universe)
    unknown = [i for i in ids if i not in known]
    if unknown:
        shown = ", ".join(repr(x[:80]) for x in unknown[:5]) + (", …" if len(unknown) > 5 else "")
        raise InputError(f"{len(unknown)} id(s) are not among the {len(known)} items of the results: {shown}",
                         source=source, field="id")
    wanted = set(ids)
    frame = table.frame[table.frame["item_id"].isin(wanted)].reset_index(drop=True)
    kept = ResultTable(frame, list(table.warnings), list(table.inputs))
    targets = frame.groupby("item_id")["target"].first().to_dict()
    return kept, check_consistency(kept, {u: targets.get(u) for u in coverage.universe if u in wanted})
