"""Formats: every file viewcert writes and reads back, each declared once as a frozen pydantic model
(``model.Record``), with one reader per format. Low in the layers (it needs only ``errors``, ``limits``,
``resolution`` and ``io``), so every reader of a certificate or a manifest starts without importing the oracle or
the renderer.

- ``model``     the base of every record (:class:`Record`: frozen, unknown keys kept, unset = not written, strict
                JSON kinds, one error line naming the field's path)
- ``records``   the certificate kinds (:class:`CeilingCertificate`, :class:`TaskCertificate`,
                :class:`InteractionCertificate`), their items, the one digest (``compute_digest``, ``sealed``) and
                the stale-digest refusal
- ``item_sections``  the typed sections of an item record: the oracle's report, the uniqueness margin (Å), the
                raised symmetry, the molecule outcome (point groups, handedness; τ in Å), an interaction item's ceilings
- ``summary_sections``  the typed sections of a certificate's summary: kinds, the exact bound and interval,
                the phantom census, the molecules' summary, the streamed summary, the task and interaction groups
- ``settings_sections`` the certificates' settings sections: a ceiling certificate's inputs, config, protocol,
                observation model, tolerances (Å, degrees), oracle settings, scoring, location; an export's
                settings (task, interaction, manifest), a task's protocol and tolerances
- ``table``     the streamed certificate (:class:`StreamedCertificate`): its item-table shards (Parquet), their
                chain, its items read lazily
- ``reader``    the one reader of every certificate file: ``receive`` (with the file's SHA-256 and whether its
                digest held) and ``read``
- ``versions``  the older certificate formats, read and written by version (``SINCE_V1``)
- ``export``    an export folder's manifest (``viewcert.export/1``, :class:`ExportManifest`): ``write_export``,
                ``read_export``, ``Export``
- ``ladder``    the ladder manifest (TOML: which result file is which arm): ``LadderManifest``, its reader and
                writer; hand-written R1 counts (``R1CountsRecord``)
- ``doc``       the generated sections of ``docs/formats.md``, from the models' field descriptions
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.formats.export import Export, read_export, write_export
    from viewcert.formats.ladder import (
        LadderInput,
        LadderManifest,
        read_ladder_manifest,
        write_ladder_manifest,
    )
    from viewcert.formats.reader import Received, read, receive
    from viewcert.formats.records import (
        CeilingCertificate,
        Certificate,
        CertificateVisitor,
        InteractionCertificate,
        ItemOutcome,
        StaleCertificate,
        Summary,
        TaskCertificate,
        compute_digest,
    )
    from viewcert.formats.table import StreamedCertificate

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "Export": "export", "read_export": "export", "write_export": "export", "Received": "reader", "read": "reader",
    "receive": "reader", "Certificate": "records", "CertificateVisitor": "records", "InteractionCertificate": "records",
    "ItemOutcome": "records", "StaleCertificate": "records", "Summary": "records", "TaskCertificate": "records",
    "CeilingCertificate": "records", "compute_digest": "records", "StreamedCertificate": "table",
    "LadderInput": "ladder", "LadderManifest": "ladder", "read_ladder_manifest": "ladder",
    "write_ladder_manifest": "ladder",
}
lazy_face(__name__, _FACE)

__all__ = ["CeilingCertificate", "Certificate", "CertificateVisitor", "Export", "InteractionCertificate", "ItemOutcome",
           "LadderInput", "LadderManifest", "Received", "StaleCertificate", "StreamedCertificate", "Summary",
           "TaskCertificate", "compute_digest", "read", "read_export", "read_ladder_manifest", "receive",
           "write_export", "write_ladder_manifest"]
