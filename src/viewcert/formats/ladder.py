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
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, model_validator

from viewcert.errors import InputError
from viewcert.formats.model import Record, Text, kind
from viewcert.io.atomic import write_text_atomic
from viewcert.io.received import loads_toml, read_received_text

#: the harnesses an input may name (``harness``); absent: detected from the file
HARNESSES = ("study", "native", "vlmevalkit", "lmms_eval", "inspect")
#: the keys of ``[study]``, in the order they are written
STUDY_KEYS = ("name", "benchmark", "task", "items", "items_id_field", "items_target_field", "r1", "certificate")
#: the keys of an ``[[input]]`` the manifest names, in the order they are written; any other is a reader option
INPUT_KEYS = ("path", "model", "rung", "harness", "run")


class LadderInput(Record):
    """One ``[[input]]``: the result file (``path`` as written), the model, the rung (as written), the harness
    that wrote it, the run, and every other key (``options``: the unknown keys, handed to the reader)."""

    path: Text = Field(description="the result file, relative to the manifest's folder")
    rung: Text = Field(description="chance, no-image, R4, R3, R2 or vision-only (aliases accepted)")
    model: Any = Field(None, description="the model that answered")
    harness: Annotated[str, kind(f"one of {HARNESSES}", lambda v: v in HARNESSES)] | None = Field(None, description=(
        "the harness that wrote the file; absent: detected from the file"))
    run: Any = Field(None, description="the run's name")

    @model_validator(mode="before")
    @classmethod
    def _options(cls, data: Any) -> Any:
        """A producer may hand the reader's options as ``options`` (they are the table's other keys)."""
        if isinstance(data, Mapping) and isinstance(data.get("options"), Mapping):
            return {**{k: v for k, v in data.items() if k != "options"}, **data["options"]}
        return data

    @property
    def options(self) -> dict[str, Any]:
        """Every other key, handed to the result file's reader (id_column, id_map, scorer, metric, ...)."""
        return self.extra

    def to_dict(self) -> dict[str, Any]:
        """The table as TOML holds it: the named keys in order (those not written left out), then the options."""
        out = {k: v for k in INPUT_KEYS if (v := getattr(self, k)) is not None}
        return {**out, **self.options}


class LadderManifest(Record):
    """A ladder manifest: the ``[study]`` keys (each None when not written) and the inputs in order."""

    inputs: tuple[LadderInput, ...] = Field(min_length=1, description="the ``[[input]]`` tables, in order")
    name: Any = Field(None, description="the study's name")
    benchmark: Text | None = Field(None, description=(
        "a viewcert export folder: items, ids, shipped choices, task, certificate"))
    task: Any = Field(None, description="the answer parser (an export's own task by default)")
    items: Any = Field(None, description="the universe of item ids (+ targets) for coverage checks")
    items_id_field: Any = Field(None, description="the id field of ``items``")
    items_target_field: Any = Field(None, description="the target field of ``items``")
    r1: Any = Field(None, description="R1 as a number or a fraction (``200/210``)")
    certificate: Any = Field(None, description="a certificate R1 is read from")

    def study(self) -> dict[str, Any]:
        """The ``[study]`` table as written (keys not written left out)."""
        return {k: v for k in STUDY_KEYS if (v := getattr(self, k)) is not None}

    def to_dict(self) -> dict[str, Any]:
        """The manifest as TOML holds it: ``study`` and ``input``."""
        return {"study": self.study(), "input": [e.to_dict() for e in self.inputs]}


def ladder_manifest_of(data: Mapping[str, Any], *, source: str | None = None) -> LadderManifest:
    """The typed manifest of parsed TOML ``data``; InputError naming the entry and key otherwise."""
    study = data.get("study", {})
    if not isinstance(study, dict):
        raise InputError("[study] must be a table", source=source, field="study")
    inputs = data.get("input")
    if not isinstance(inputs, list) or not inputs:
        raise InputError("no [[input]] entries", source=source, field="input")
    entries = []
    for i, raw in enumerate(inputs):
        where = f"input[{i}]"
        for key in ("path", "rung"):  # what a hand-written manifest most often gets wrong, said as it is wrong
            if isinstance(raw, dict) and key not in raw:
                raise InputError(f"{where} lacks {key!r}", source=source, field=f"{where}.{key}")
        harness = raw.get("harness") if isinstance(raw, dict) else None
        if harness is not None and harness not in HARNESSES:
            raise InputError(f"{where}.harness {str(harness)[:40]!r} is not one of {HARNESSES}", source=source,
                             field=f"{where}.harness")
        try:
            entries.append(LadderInput.from_dict(raw, f"input[{i}]"))
        except InputError as exc:
            raise InputError(exc.message, source=source, field=exc.field) from None
    try:
        return LadderManifest.from_dict({"inputs": entries, **{k: study[k] for k in STUDY_KEYS if k in study}}, "")
    except InputError as exc:
        raise InputError(exc.message.replace("benchmark must be text", "[study].benchmark must be a folder path "
                                                                      "(string)"), source=source,
                         field=exc.field) from None


class R1CountsRecord(Record):
    """A hand-written R1 certificate (no ``format``, no digest; ``viewcert ladder`` reads it): ``ceiling``
    {``correct``, ``n``}, ``items`` (a list of objects, each with an id under one of
    ``item_id``/``id``/``material_id``/``identifier`` and an outcome ``correct``/``certified``/``recovered``
    (true/false) or ``status``/``outcome`` (text); or an {id: outcome} object), ``delta`` and ``tau`` (Å)."""

    ceiling: Any = Field(None, description="``correct`` and ``n``: R1 = correct / n")
    items: Any = Field(None, description="the per-item outcomes: a list of objects, or an {id: outcome} object")
    delta: Any = Field(None, description="δ (Å)")
    tau: Any = Field(None, description="τ (Å)")

    def visit(self, visitor: Any) -> Any:
        """``visitor.counts(self)`` (``formats.records.CertificateVisitor``)."""
        return visitor.counts(self)


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


def _table(header: str, record: Mapping[str, Any]) -> list[str]:
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
