"""The ladder manifest (TOML): which result file holds which arm of ``viewcert ladder``, as one typed value with
its reader and its writer.

::

    [study]                       # all keys optional
    name = "render-ceiling e3"
    benchmark = "bench"           # a viewcert export: items, ids, shipped choices, task, certificate
    task = "crystal-system"       # answer parser (crystal_system accepted; an export's own task by default)
    items = "data/e3/eval.jsonl"  # universe of item ids (+ targets) for coverage checks
    items_id_field = "material_id"
    items_target_field = "crystal_system"
    r1 = "200/210"                # or certificate = "cert.json"

    [[input]]
    path = "predictions/frontier__google__gemini-3_6-flash__K3.json"
    model = "google/gemini-3.6-flash"
    rung = "R4"                   # chance | no-image | R4 | R3 | R2 | vision-only (aliases accepted)
    harness = "study"             # optional: detected from the file when absent
    run = "K3"                    # optional
    # any other key is passed to the reader (id_column, id_map, scorer, metric, ...)

The value holds the text as written: a path is resolved against the manifest's folder and a rung or task read
in the ladder's vocabulary by ``attribution.table.load_manifest``. A field a manifest does not write is None.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viewcert.errors import InputError
from viewcert.io.atomic import write_text_atomic
from viewcert.io.received import loads_toml, read_received_text

#: the harnesses an input may name (``harness``); absent: detected from the file
HARNESSES = ("study", "native", "vlmevalkit", "lmms_eval", "inspect")
#: the keys of ``[study]``, in the order they are written
STUDY_KEYS = ("name", "benchmark", "task", "items", "items_id_field", "items_target_field", "r1", "certificate")
#: the keys of an ``[[input]]`` the manifest names, in the order they are written; any other is a reader option
INPUT_KEYS = ("path", "model", "rung", "harness", "run")


@dataclass(frozen=True)
class LadderInput:
    """One ``[[input]]``: the result file (``path`` as written), the model, the rung (as written), the harness
    that wrote it, the run, and every other key (``options``, handed to the reader)."""

    path: str
    rung: str
    model: Any = None
    harness: str | None = None
    run: Any = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {k: v for k in INPUT_KEYS if (v := getattr(self, k)) is not None}
        return {**out, **self.options}


@dataclass(frozen=True)
class LadderManifest:
    """A ladder manifest: the ``[study]`` keys (each None when not written) and the inputs in order."""

    inputs: tuple[LadderInput, ...]
    name: Any = None
    benchmark: str | None = None
    task: Any = None
    items: Any = None
    items_id_field: Any = None
    items_target_field: Any = None
    r1: Any = None
    certificate: Any = None

    def study(self) -> dict:
        """The ``[study]`` table as written (keys not written left out)."""
        return {k: v for k in STUDY_KEYS if (v := getattr(self, k)) is not None}

    def to_dict(self) -> dict:
        """The manifest as TOML holds it: ``study`` and ``input``."""
        return {"study": self.study(), "input": [e.to_dict() for e in self.inputs]}


def _input_of(raw: Any, where: str, src: str) -> LadderInput:
    if not isinstance(raw, dict):
        raise InputError(f"{where} must be a table", source=src, field=where)
    for key in ("path", "rung"):
        if key not in raw:
            raise InputError(f"{where} lacks {key!r}", source=src, field=f"{where}.{key}")
        if not isinstance(raw[key], str):
            raise InputError(f"{where}.{key} must be a string", source=src, field=f"{where}.{key}")
    harness = raw.get("harness")
    if harness is not None and harness not in HARNESSES:
        raise InputError(f"{where}.harness {harness!r} is not one of {HARNESSES}", source=src, field=f"{where}.harness")
    return LadderInput(path=raw["path"], rung=raw["rung"], model=raw.get("model"), harness=harness,
                       run=raw.get("run"), options={k: v for k, v in raw.items() if k not in INPUT_KEYS})


def ladder_manifest_of(data: Mapping, *, source: str | None = None) -> LadderManifest:
    """The typed manifest of parsed TOML ``data``; InputError naming the entry and key otherwise."""
    src = source
    study = data.get("study", {})
    if not isinstance(study, dict):
        raise InputError("[study] must be a table", source=src, field="study")
    inputs = data.get("input")
    if not isinstance(inputs, list) or not inputs:
        raise InputError("no [[input]] entries", source=src, field="input")
    entries = tuple(_input_of(raw, f"input[{i}]", src) for i, raw in enumerate(inputs))
    bench = study.get("benchmark")
    if bench is not None and not isinstance(bench, str):
        raise InputError("[study].benchmark must be a folder path (string)", source=src, field="benchmark")
    return LadderManifest(inputs=entries, **{k: study.get(k) for k in STUDY_KEYS})


def read_ladder_manifest(path: str | Path) -> LadderManifest:
    """Read a ladder manifest (module docstring).

    Parameters
    ----------
    path : str or Path
        The TOML file: a regular file within the JSON size limit; a key defined twice is refused.

    Returns
    -------
    LadderManifest
        The manifest as written (paths and rungs as text); InputError naming the file, entry and key otherwise.
    """
    path = Path(path)
    src = str(path)
    if not path.exists():
        raise InputError("manifest not found", source=src)
    return ladder_manifest_of(loads_toml(read_received_text(path, what="manifest"), source=src), source=src)


def _toml_value(value: Any, where: str) -> str:
    """``value`` as a TOML value: a string as a basic string (JSON's, ASCII escapes), a bool, int or float."""
    if isinstance(value, str | Path):
        return json.dumps(str(value), ensure_ascii=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    raise InputError(f"{where}: a ladder manifest writes text, true/false or numbers, not {type(value).__name__}",
                     field=where)


def _table(header: str, record: Mapping) -> list[str]:
    return [header, *(f"{k} = {_toml_value(v, k)}" for k, v in record.items()), ""]


def ladder_manifest_text(manifest: LadderManifest) -> str:
    """The TOML text of ``manifest``: ``[study]`` then one ``[[input]]`` per input, each key as written, each
    table followed by an empty line."""
    lines = _table("[study]", manifest.study())
    for e in manifest.inputs:
        lines += _table("[[input]]", e.to_dict())
    return "\n".join(lines)


def write_ladder_manifest(path: str | Path, manifest: LadderManifest) -> Path:
    """Write a ladder manifest, atomically.

    Parameters
    ----------
    path : str or Path
        The TOML file to write (``viewcert ladder --manifest PATH`` reads it).
    manifest : LadderManifest
        What it holds.

    Returns
    -------
    Path
        The path written.
    """
    return write_text_atomic(path, ladder_manifest_text(manifest))
