"""The one reader of every certificate file: :func:`receive` (the typed certificate with the SHA-256 of its bytes
and whether its digest held) and :func:`read` (the certificate alone). Nobody else opens a certificate.

A received file is a regular file within ``max_json_bytes`` of the limits in force, JSON with no duplicate key;
its ``format`` names its kind (``records.JSON_KINDS``, or the streamed certificate of ``formats.table``); every item
has a text id, listed once; its digest is checked (a mismatch is a one-line
:class:`~viewcert.formats.records.StaleCertificate` unless ``allow_stale``) and its record typed. Every failure is
one :class:`InputError` naming the file and the field.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viewcert.errors import InputError
from viewcert.formats.ladder import R1CountsRecord
from viewcert.formats.records import (
    TASK_VERSIONS,
    CeilingCertificate,
    Certificate,
    TaskCertificate,
    certificate_class,
    check_digest,
    item_ids,
)
from viewcert.formats.table import StreamedCertificate, is_table, receive_table
from viewcert.io.received import loads_json_strict, read_received_bytes

__all__ = ["Received", "read", "receive"]


@dataclass(frozen=True)
class Received:
    """A certificate as read: the typed certificate (a streamed one opened for lazy reading; hand-written R1
    counts as :class:`~viewcert.formats.ladder.R1CountsRecord`), its JSON, the SHA-256 of its bytes (hex) and
    whether its digest held (None: the file has no digest to hold)."""

    certificate: Certificate | R1CountsRecord
    data: dict[str, Any]
    sha256: str
    digest_ok: bool | None


def _read_json(path: Path) -> tuple[Any, str]:
    raw = read_received_bytes(path, what="certificate")
    try:
        return loads_json_strict(raw.decode("utf-8"), source=str(path)), hashlib.sha256(raw).hexdigest()
    except InputError:
        raise
    except (ValueError, RecursionError) as exc:
        raise InputError(f"cannot read certificate: {str(exc)[:200]}", source=str(path)) from None


def _named(exc: InputError, src: str, prefix: str = "") -> InputError:
    return InputError(prefix + exc.message, source=src, field=exc.field)


def receive(path: str | Path, *, allow_stale: bool = False, kind: type[Certificate] | None = None,
            streamed: bool = False, counts: bool = False) -> Received:
    """Read the certificate at ``path``: format, item ids, digest and record checked (module docstring).

    Parameters
    ----------
    path : str or Path
        The certificate file (``certificate.json``; a streamed certificate's items are read later, lazily).
    allow_stale : bool
        Read a certificate whose digest does not match its content (``digest_ok`` is then False: the caller
        says so) instead of refusing it.
    kind : type or None
        ``CeilingCertificate``, ``TaskCertificate`` or ``InteractionCertificate``: only that kind of JSON
        certificate is accepted; None: any kind.
    streamed : bool
        Accept a streamed certificate (``formats.table``; ``kind`` None): ``explore``, ``ladder`` and ``verify``
        read one; any other reader refuses it in one line naming the commands that do.
    counts : bool
        Accept hand-written R1 counts (a JSON object with no ``format``: ``formats.ladder.R1CountsRecord``), as
        ``viewcert ladder`` does.

    Returns
    -------
    Received
        The typed certificate, its JSON, the SHA-256 of its bytes and whether its digest held.
    """
    p, src = Path(path), str(path)
    data, sha256 = _read_json(p)
    if not isinstance(data, dict):
        raise InputError("not a viewcert certificate (not a JSON object)", source=src, field="format")
    if counts and "format" not in data:
        try:
            return Received(R1CountsRecord.from_dict(data, ""), data, sha256, None)
        except InputError as exc:
            raise _named(exc, src) from None
    if is_table(data):
        if not streamed or kind is not None:
            raise InputError(f"a streamed certificate ({StreamedCertificate.FORMATS[0]}: its items in the item "
                             "table items/ beside it) is read by 'viewcert verify', 'explore' and 'ladder'; for this "
                             "command rerun 'viewcert certify INPUT --json-certificate' (one JSON certificate)",
                             source=src, field="format")
        cert, ok = receive_table(p, data, allow_stale=allow_stale)  # digest, shape, chain, shards inside
        return Received(cert, data, sha256, ok)
    try:
        cls = certificate_class(data)
        item_ids(data)  # text ids, each listed once: checked before the digest, so a refusal names the item
    except InputError as exc:
        raise _named(exc, src) from None
    if kind is not None and cls is not kind:
        raise InputError(f"not a {kind.TITLE} certificate (format "
                         f"{data['format']!r}, expected one of {kind.FORMATS})", source=src, field="format")
    ok = check_digest(data, src, allow_stale=allow_stale)
    try:
        typed = cls.from_dict(data, "")
    except InputError as exc:
        raise _named(exc, src) from None
    if cls is TaskCertificate and data.get("version", 1) not in TASK_VERSIONS:  # a version from the future
        raise InputError(f"a task certificate of version {str(data.get('version'))[:20]!r}, not one this viewcert "
                         f"reads {TASK_VERSIONS}", source=src, field="version")
    if isinstance(typed, CeilingCertificate) and (typed.inputs.spec is None or typed.inputs.files is None):
        raise InputError("certificate inputs need 'spec' (text) and 'files' (object)", source=src, field="inputs")
    return Received(typed, data, sha256, ok)


def read(path: str | Path, *, allow_stale: bool = False, kind: type[Certificate] | None = None,
         streamed: bool = False) -> Certificate:
    """The typed certificate at ``path`` (:func:`receive`, without the envelope).

    Parameters
    ----------
    path : str or Path
        The certificate file (its size is checked against the limits in force before it is read).
    allow_stale : bool
        Read a certificate whose digest does not match its content instead of refusing it.
    kind : type or None
        ``CeilingCertificate``, ``TaskCertificate`` or ``InteractionCertificate``: only that kind is accepted.
    streamed : bool
        Accept a streamed certificate (``kind`` None).

    Returns
    -------
    Certificate
        The certificate's typed record (a streamed certificate: opened for lazy reading).
    """
    cert = receive(path, allow_stale=allow_stale, kind=kind, streamed=streamed).certificate
    assert isinstance(cert, Certificate)  # counts are accepted only when asked for
    return cert
