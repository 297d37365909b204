"""One export record: what every ``build-benchmark`` exporter leaves in its folder, as one value.

The four exporters (``export`` crystals, ``molecule_export``, ``tasks_export``, ``interaction_export``) end
with :func:`write_export`: it writes ``manifest.json`` in one shape (:data:`EXPORT_FORMAT`, the fields of
:data:`MANIFEST_FIELDS`) and returns the :class:`Export` (settings, items, images, harness files, the typed
certificate, the manifest). :func:`read_export` reads any export folder back as the same value: the current
shape, or an older exporter's manifest through the version table :data:`MANIFEST_FORMATS` (each older
format → its exporter and the function that restates it in the current shape). The certificate is read as
the typed record of ``formats.records`` (format and digest checked, and the digest the manifest records).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import Field

from viewcert.errors import InputError
from viewcert.formats.model import Count, List, Object, Record, Text
from viewcert.formats.model import kind as kind_of_text
from viewcert.formats.reader import read
from viewcert.formats.records import (
    INTERACTION_FORMAT_V1,
    INTERACTION_FORMAT_V2,
    Certificate,
)
from viewcert.formats.settings_sections import ExportSettingsRecord
from viewcert.io.atomic import json_dumps, write_text_atomic
from viewcert.io.received import loads_json_strict, read_received_bytes

MANIFEST = "manifest.json"
CERTIFICATE = "certificate.json"
#: the one manifest shape every exporter writes
EXPORT_FORMAT = "viewcert.export/1"
EXPORT_KINDS = ("crystal", "molecule", "task", "interaction")


class ExportManifest(Record):
    """A ``viewcert.export/1`` manifest (``manifest.json``): what one ``build-benchmark`` exporter wrote."""

    SOURCE: ClassVar[str] = ""
    format: Text = Field(description=f"`{EXPORT_FORMAT}`")
    kind: Annotated[str, kind_of_text(f"one of {EXPORT_KINDS}", lambda v: v in EXPORT_KINDS)] = Field(
        description="the exporter: " + " \\| ".join(EXPORT_KINDS))
    task: Any = Field(description="the task asked (crystal-system, point-group, rotation, pocket-ligand, ...)")
    input: Any = Field(description=(
        "what was read: the dataset with every file's SHA-256 (crystal, molecule), the input as given (task), "
        "the complexes by name, ligand and SHA-256 (interaction)"))
    settings: ExportSettingsRecord = Field(description="the exporter's settings as recorded")
    n_questions: Count = Field(description="the number of questions")
    items: List = Field(description=(
        "per question its id and answer and the exporter's record of it (crystal: also the items that could "
        "not be rendered, with their error)"))
    errors: List = Field(description="items that could not be read: id, error")
    skipped: List = Field(description="items given no question: id, reason")
    label_mismatches: List = Field(description=(
        "crystal: ids whose dataset label and rendered cell's label disagree"))
    details: Object = Field(description=(
        "what one exporter alone records (crystal: question, choices, constraints per question; molecule: "
        "protocol, choices, truth)"))
    certificate: Object | None = Field(description=(
        f"null when none was written, else `path` (`{CERTIFICATE}`), `format`, `digest` (its value) and "
        "(crystal, molecule) `observe`, `level`, `summary` (n, correct, R1)"))
    images: List = Field(description="the PNG files, relative paths")
    harness_files: List = Field(description=(
        "the files a harness reads (benchmark.jsonl, benchmark.tsv, ids.csv, Inspect and lmms-eval tasks, ...), "
        "relative paths"))
    files: Object = Field(description="SHA-256 of every file in the folder but the manifest, by relative path")


MANIFEST_BEGIN = "<!-- export manifest: generated from viewcert.formats.export; do not edit -->"
MANIFEST_END = "<!-- end of the generated export manifest -->"


def file_digests(out: Path) -> dict[str, str]:
    """SHA-256 of every file under ``out`` but the manifest and hidden files, by relative POSIX path."""
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file() and p.name != MANIFEST and not p.name.startswith(".")}


@dataclass(frozen=True)
class Export:
    """One export folder. ``kind``: crystal | molecule | task | interaction; ``settings``: the exporter's
    settings as recorded, typed (``formats.settings_sections.ExportSettingsRecord``; ``to_dict`` gives the
    manifest's object back); ``items``: the manifest's per-question records; ``images``, ``harness_files``:
    relative paths; ``certificate``: the typed certificate (None when the export wrote none); ``manifest``:
    the manifest as written."""

    kind: str
    task: str
    n_questions: int
    settings: ExportSettingsRecord
    items: tuple[Any, ...]
    images: tuple[str, ...]
    harness_files: tuple[str, ...]
    errors: tuple[Any, ...]
    skipped: tuple[Any, ...]
    label_mismatches: tuple[str, ...]
    certificate: Certificate | None
    manifest: Mapping[str, Any]


def certificate_entry(cert: Certificate, **extra: Any) -> dict[str, Any]:
    """The manifest's record of the certificate ``cert`` written beside it: path, format, digest, ``extra``
    (molecule: level) and, for a ceiling certificate, its observation mode and R1's counts (``formats.records``)."""
    return cert.manifest_entry(**extra)


def question_items(records: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The manifest's items of exporters whose certificate holds the per-question record (task,
    interaction): per question its id, index, source id and answer (from the harness records)."""
    return [{k: r[k] for k in ("id", "index", "source_id", "answer")} for r in records]


def write_export(out: str | Path, kind: str, body: Mapping[str, Any], certificate: Certificate | None = None,
                 **cert_extra: Any) -> Export:
    """Write the manifest of the export in ``out`` (deterministic JSON, atomically: the one manifest writer of
    every exporter) and return it.

    Parameters
    ----------
    out : str or Path
        The export folder; every file in it but the manifest is hashed into ``files``.
    kind : str
        The exporter: crystal, molecule, task or interaction.
    body : Mapping
        task, input, settings (the exporter's ``ExportSettingsRecord``), n_questions, items, errors, skipped,
        label_mismatches, details (absent: empty) and ``harness_files`` (the paths ``write_harness_files``
        wrote).
    certificate : Certificate or None
        The typed certificate written to ``certificate.json`` (None: no certificate).
    **cert_extra
        Further fields of the manifest's certificate entry (a molecule export: ``level``).

    Returns
    -------
    Export
        The export as a reader of the folder gets it (the manifest as written, the certificate typed).
    """
    out = Path(out)
    # typed as certificate.json reads back (lists for tuples, plain numbers): serialised here, where it is written
    cert = None if certificate is None else Certificate.from_dict(json.loads(json_dumps(certificate.to_dict())))
    files = file_digests(out)
    harness = sorted(Path(p).relative_to(out).as_posix() for p in body.get("harness_files") or ())
    settings: ExportSettingsRecord = body.get("settings") or ExportSettingsRecord()  # serialised where written
    manifest = {"format": EXPORT_FORMAT, "kind": kind, "task": body["task"], "input": body.get("input"),
                "settings": settings.to_dict(), "n_questions": int(body.get("n_questions") or 0),
                "items": list(body.get("items") or ()), "errors": list(body.get("errors") or ()),
                "skipped": list(body.get("skipped") or ()),
                "label_mismatches": list(body.get("label_mismatches") or ()), "details": dict(body.get("details") or {}),
                "certificate": None if cert is None else certificate_entry(cert, **cert_extra),
                "images": sorted(f for f in files if f.endswith(".png")), "harness_files": harness, "files": files}
    text = json_dumps(manifest)
    write_text_atomic(out / MANIFEST, text)
    written = json.loads(text)  # as a reader of the file gets it (lists for tuples, plain numbers)
    return _export_of(written, cert, written)


def _export_of(shape: Mapping[str, Any], cert: Certificate | None, written: Mapping[str, Any]) -> Export:
    """The :class:`Export` of a manifest in the current shape (``shape``; ``written``: as written); its settings
    typed (InputError naming ``settings.<field>``)."""
    settings = ExportSettingsRecord.from_dict(shape.get("settings") or {}, "settings")
    return Export(kind=shape["kind"], task=str(shape.get("task")), n_questions=int(shape.get("n_questions") or 0),
                  settings=settings, items=tuple(shape.get("items") or ()),
                  images=tuple(shape.get("images") or ()), harness_files=tuple(shape.get("harness_files") or ()),
                  errors=tuple(shape.get("errors") or ()), skipped=tuple(shape.get("skipped") or ()),
                  label_mismatches=tuple(shape.get("label_mismatches") or ()), certificate=cert, manifest=written)


# ---------------------------------------------------------------------- older manifests
def _old_view_entry(m: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The certificate entry of a ``viewcert.benchmark/1`` or ``.molecule/1`` manifest (an object or null)."""
    entry = m.get("certificate")
    return entry if isinstance(entry, Mapping) else None


def _old_digest_entry(m: Mapping[str, Any]) -> Mapping[str, Any]:
    """The certificate of a task or interaction manifest before ``viewcert.export/1``: always written, its
    digest a top-level ``certificate_digest``."""
    return {"path": CERTIFICATE, "digest": m.get("certificate_digest")}


def _from_view_export(m: Mapping[str, Any], cert: Certificate | None) -> dict[str, Any]:
    """``viewcert.benchmark/1``, ``viewcert.benchmark.molecule/1``: the task in the settings."""
    settings = m.get("settings") or {}
    return {"task": settings.get("task") if isinstance(settings, Mapping) else None, "settings": settings, "items": m.get("items"),
            "n_questions": m.get("n_questions"), "errors": m.get("errors"), "skipped": m.get("skipped"),
            "label_mismatches": m.get("label_mismatches"), "images": _pngs(m)}


def _from_task_export(m: Mapping[str, Any], cert: Certificate | None) -> dict[str, Any]:
    """``viewcert.tasks.benchmark/1``: no items (the certificate's ids stand for them)."""
    settings = m.get("settings") or {}
    return {"task": settings.get("task") if isinstance(settings, Mapping) else None, "settings": settings,
            "n_questions": m.get("n_questions"),
            "items": [{"id": i} for i in (cert.item_ids() if cert else ())], "errors": m.get("errors"),
            "images": _pngs(m)}


def _from_interaction_export(m: Mapping[str, Any], cert: Certificate | None) -> dict[str, Any]:
    """The interaction manifest before ``viewcert.export/1`` (its format its certificate's): no settings or
    items (the certificate's settings and ids stand for them)."""
    settings = getattr(cert, "settings", None)  # an interaction certificate's (an older manifest has none)
    return {"task": m.get("task"), "settings": settings.to_dict() if settings else {},
            "n_questions": m.get("n_questions"), "items": [{"id": i} for i in (cert.item_ids() if cert else ())],
            "images": _pngs(m)}


def _pngs(m: Mapping[str, Any]) -> list[str]:
    files = m.get("files")
    return sorted(f for f in files if isinstance(f, str) and f.endswith(".png")) if isinstance(files, Mapping) else []


#: version table: each manifest format an exporter wrote before ``viewcert.export/1`` → (its exporter, the
#: certificate entry it recorded, the function restating it in the current shape's fields but ``kind``)
MANIFEST_FORMATS: dict[str, tuple[str, Callable[..., Any], Callable[..., Any]]] = {
    "viewcert.benchmark/1": ("crystal", _old_view_entry, _from_view_export),
    "viewcert.benchmark.molecule/1": ("molecule", _old_view_entry, _from_view_export),
    "viewcert.tasks.benchmark/1": ("task", _old_digest_entry, _from_task_export),
    INTERACTION_FORMAT_V1: ("interaction", _old_digest_entry, _from_interaction_export),  # its certificate's format
    INTERACTION_FORMAT_V2: ("interaction", _old_digest_entry, _from_interaction_export),
}


def _read_manifest(out: Path) -> dict[str, Any]:
    src = str(out / MANIFEST)
    try:
        m: Any = loads_json_strict(read_received_bytes(out / MANIFEST, what="manifest"), source=src)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"cannot read the manifest: {str(exc)[:200]}", source=src) from None
    fmt = m.get("format") if isinstance(m, dict) else None
    if fmt != EXPORT_FORMAT and fmt not in MANIFEST_FORMATS:
        raise InputError(f"not a viewcert export manifest (format {str(fmt)[:60]!r}, expected one of "
                         f"{(EXPORT_FORMAT, *MANIFEST_FORMATS)})", source=src, field="format")
    if fmt == EXPORT_FORMAT:
        try:
            ExportManifest.from_dict(m, "")
        except InputError as exc:
            raise InputError(exc.message, source=src, field=exc.field) from None
    return dict(m)


def check_manifest(out: str | Path) -> dict[str, Any]:
    """The manifest of the export folder ``out`` checked as ``read_export`` checks it (its format one this
    viewcert reads, its shape): the one check ``verify`` and ``explore`` apply; InputError naming it otherwise."""
    return _read_manifest(Path(out))


def read_export(out: str | Path) -> Export:
    """The export in folder ``out`` (module docstring).

    Parameters
    ----------
    out : str or Path
        The export folder (its ``manifest.json`` in the current or an older format); every file's size is
        checked against the limits in force before it is read.

    Returns
    -------
    Export
        The export, its certificate typed and its digest checked against the manifest's. Bad input (no
        manifest, an unknown format, a certificate whose digest does not match) is one InputError naming the file.
    """
    if not isinstance(out, str | os.PathLike):
        raise InputError(f"must be a path (text or pathlib.Path), got {type(out).__name__} {out!r}"[:120], field="out")
    out = Path(out)
    src = str(out / MANIFEST)
    m = _read_manifest(out)
    old = MANIFEST_FORMATS.get(m["format"])
    entry = m.get("certificate") if old is None else old[1](m)
    if entry is not None and (not isinstance(entry, Mapping) or entry.get("path", CERTIFICATE) != CERTIFICATE):
        raise InputError(f"the manifest's certificate must be null or name {CERTIFICATE}", source=src,
                         field="certificate")
    cert = read(out / CERTIFICATE) if entry is not None else None
    if cert is not None and entry is not None and entry.get("digest") != cert.digest_value:
        raise InputError(f"the manifest names certificate digest {str(entry.get('digest'))[:16]!r}…, "
                         f"{CERTIFICATE} has {str(cert.digest_value)[:16]}… (not the certificate this export "
                         "wrote)", source=src, field="certificate")
    try:
        return _export_of(m if old is None else {**old[2](m, cert), "kind": old[0]}, cert, m)
    except InputError as exc:  # the settings' field, named in the manifest
        raise InputError(exc.message, source=src, field=exc.field) from None


def manifest_markdown() -> str:
    """The export-manifest section of ``docs/formats.md`` (generated from :class:`ExportManifest`'s fields and
    :data:`MANIFEST_FORMATS`; ``tests/benchmark/test_export_record.py`` compares)."""
    rows = [MANIFEST_BEGIN, "", "## Export manifest (`manifest.json`)", "",
            "Every `viewcert build-benchmark` exporter writes one `manifest.json` in one shape "
            f"(`{EXPORT_FORMAT}`, `viewcert.formats.export.write_export`), read back by "
            "`viewcert.formats.export.read_export` as one `Export` value (its certificate read and typed, its "
            "digest checked against the manifest's). Older manifests are read through the version table: "
            + ", ".join(f"`{f}` ({kind})" for f, (kind, _, _) in MANIFEST_FORMATS.items()) + ".", "",
            "| field | |", "|---|---|"]
    rows += [f"| `{k}` | {f.description} |" for k, f in ExportManifest.model_fields.items()]
    return "\n".join([*rows, "", MANIFEST_END]) + "\n"
