"""One export record: what every ``build-benchmark`` exporter leaves in its folder, read back as one value.

The four exporters (``export`` crystals, ``molecule_export``, ``tasks_export``, ``interaction_export``) write
``manifest.json`` through one writer (:func:`write_manifest`) and their certificate's entry in the manifest
through one function (:func:`certificate_entry`). :func:`read_export` decodes a manifest of any of them —
the version table :data:`MANIFEST_FORMATS` maps each manifest format to its exporter — and reads the
certificate it names as the typed record of ``certify.records`` (format and digest checked, and the digest
the manifest records for it), giving one
:class:`Export`: settings, items, images, certificate, manifest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from viewcert.certify.records import (
    INTERACTION_FORMAT,
    INTERACTION_FORMAT_V1,
    Certificate,
    ViewCertificate,
    digest_value,
    read_certificate,
)
from viewcert.errors import InputError
from viewcert.io.atomic import json_dumps, write_text_atomic
from viewcert.io.received import loads_json_strict, read_received_bytes
from viewcert.limits import DEFAULT_LIMITS, Limits

MANIFEST = "manifest.json"
#: version table: the format each exporter writes in ``manifest.json`` → the exporter (kind)
MANIFEST_FORMATS = {
    "viewcert.benchmark/1": "crystal",
    "viewcert.benchmark.molecule/1": "molecule",
    "viewcert.tasks.benchmark/1": "task",
    INTERACTION_FORMAT_V1: "interaction",  # the interaction manifest carries its certificate's format
    INTERACTION_FORMAT: "interaction",
}


@dataclass(frozen=True)
class Export:
    """One export folder read back. ``kind``: crystal | molecule | task | interaction; ``settings``: the
    exporter's settings as recorded; ``items``: the manifest's per-question records (crystal, molecule; the
    certificate's items otherwise); ``images``: the PNG files (relative paths); ``certificate``: the typed
    certificate (None when the export wrote none); ``manifest``: the manifest as written."""

    kind: str
    task: str
    n_questions: int
    settings: Mapping
    items: tuple
    images: tuple[str, ...]
    errors: tuple
    skipped: tuple
    label_mismatches: tuple[str, ...]
    certificate: Certificate | None
    manifest: Mapping


def write_manifest(out: Path, manifest: Mapping) -> None:
    """Write ``out/manifest.json`` (deterministic JSON, atomically): the one writer of every exporter."""
    write_text_atomic(Path(out) / MANIFEST, json_dumps(manifest))


def certificate_entry(cert: Mapping, **extra) -> dict:
    """The manifest's record of the view certificate ``cert`` it wrote beside it (crystal, molecule exports):
    status, path, digest, ``extra`` (observe, level) and R1's counts, read through ``certify.records``."""
    s = ViewCertificate.from_dict(cert).summary
    return {"status": "written", "path": "certificate.json", "digest": digest_value(cert), **extra,
            "summary": {"n": s.n, "correct": s.correct, "R1": s.R1}}


def read_export(out: str | Path, *, limits: Limits = DEFAULT_LIMITS) -> Export:
    """The export in folder ``out`` (module docstring). Bad input (no manifest, an unknown format, a
    certificate whose digest does not match) is one InputError naming the file."""
    out = Path(out)
    src = str(out / MANIFEST)
    try:
        m = loads_json_strict(read_received_bytes(out / MANIFEST, what="manifest", limits=limits), source=src)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"cannot read the manifest: {str(exc)[:200]}", source=src) from None
    fmt = m.get("format") if isinstance(m, dict) else None
    if fmt not in MANIFEST_FORMATS:
        raise InputError(f"not a viewcert export manifest (format {str(fmt)[:60]!r}, expected one of "
                         f"{tuple(MANIFEST_FORMATS)})", source=src, field="format")
    kind = MANIFEST_FORMATS[fmt]
    entry = m.get("certificate")
    written = kind in ("task", "interaction") or isinstance(entry, Mapping)
    cert = read_certificate(out / "certificate.json", limits=limits) if written else None
    said = m.get("certificate_digest") if kind in ("task", "interaction") else (entry or {}).get("digest")
    if cert is not None and said != cert.digest_value:
        raise InputError(f"the manifest names certificate digest {str(said)[:16]!r}…, certificate.json has "
                         f"{str(cert.digest_value)[:16]}… (not the certificate this export wrote)", source=src,
                         field="certificate")
    settings = m.get("settings") if kind != "interaction" else (cert.settings if cert else {})
    task = m.get("task") if kind == "interaction" else (settings or {}).get("task")
    items = tuple(m.get("items") or ()) if kind in ("crystal", "molecule") else tuple(cert.items if cert else ())
    return Export(kind=kind, task=str(task), n_questions=int(m.get("n_questions") or 0), settings=settings or {},
                  items=items, images=tuple(sorted(f for f in (m.get("files") or {}) if f.endswith(".png"))),
                  errors=tuple(m.get("errors") or ()), skipped=tuple(m.get("skipped") or ()),
                  label_mismatches=tuple(m.get("label_mismatches") or ()), certificate=cert, manifest=m)
