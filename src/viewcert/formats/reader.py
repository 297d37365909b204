"""The one reader of every certificate file: :func:`receive` (the certificate with the SHA-256 of its bytes and
whether its digest held) and :func:`read` (the certificate alone).

A received file is a regular file within ``max_json_bytes`` of the limits in force, JSON with no duplicate key; its ``format``
names its kind (``records.KINDS``, or the streamed certificate of ``formats.table``); its digest is checked (a
mismatch is a one-line :class:`~viewcert.formats.records.StaleCertificate` unless ``allow_stale``) and its record
typed. Every failure is one :class:`InputError` naming the file and the field.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viewcert.errors import InputError
from viewcert.formats.records import (
    ABSENT,
    KINDS,
    TASK_VERSIONS,
    CeilingCertificate,
    Certificate,
    Section,
    check_digest,
    item_ids,
    kind_of,
)
from viewcert.formats.settings_sections import Location
from viewcert.formats.table import TableCertificate, is_table, receive_table
from viewcert.io.received import loads_json_strict, read_received_bytes

#: what ``kind="ceiling"`` names in a refusal
_KIND_TEXT = {"ceiling": "crystal/molecule", "task": "transformation-task", "interaction": "interaction"}


@dataclass(frozen=True)
class Received:
    """A certificate as read: the typed value (a JSON certificate's record, or a streamed certificate opened for
    lazy reading), its JSON, the SHA-256 of its bytes (hex) and whether its digest held."""

    certificate: Certificate | TableCertificate
    data: dict
    sha256: str
    digest_ok: bool


def read_json(path: str | Path) -> tuple[Any, str]:
    """Read a received certificate file once.

    Parameters
    ----------
    path : str or Path
        The certificate file; its size is checked against ``max_json_bytes`` of the limits in force before it
        is read.

    Returns
    -------
    tuple
        (the parsed JSON, the SHA-256 of the file's bytes in hex); InputError naming the file otherwise.
    """
    raw = read_received_bytes(path, what="certificate")
    try:
        return loads_json_strict(raw.decode("utf-8"), source=str(path)), hashlib.sha256(raw).hexdigest()
    except InputError:
        raise
    except (ValueError, RecursionError) as exc:
        raise InputError(f"cannot read certificate: {str(exc)[:200]}", source=str(path)) from None


def receive(path: str | Path, *, allow_stale: bool = False, kind: str | None = None, streamed: bool = False, data: Any = None, sha256: str | None = None) -> Received:
    """Read the certificate at ``path``: format, digest and record checked (module docstring).

    Parameters
    ----------
    path : str or Path
        The certificate file (``certificate.json``; a streamed certificate's items are read later, lazily).
    allow_stale : bool
        Read a certificate whose digest does not match its content (``digest_ok`` is then False: the caller
        says so) instead of refusing it.
    kind : str or None
        ``ceiling``, ``task`` or ``interaction``: only that kind of JSON certificate is accepted (``ceiling``: its
        shape checked as ``verify`` needs it); None: any kind.
    streamed : bool
        Accept a streamed certificate (``formats.table``; ``kind`` None): ``explore``, ``ladder`` and ``verify``
        read one; any other reader refuses it in one line naming the commands that do.
    data : object
        The parsed JSON when the caller read the file already (with ``sha256``, the hex SHA-256 of its bytes).
    sha256 : str or None
        The hex SHA-256 of the file's bytes, given with ``data``.

    Returns
    -------
    Received
        The typed certificate, its JSON, the SHA-256 of its bytes and whether its digest held.
    """
    p, src = Path(path), str(path)
    if data is None:
        data, sha256 = read_json(p)
    if not isinstance(data, dict):
        raise InputError("not a viewcert certificate (not a JSON object)", source=src, field="format")
    if streamed and kind is None and is_table(data):
        ok = receive_table(p, data, allow_stale=allow_stale)  # digest, shape, chain, shards present and inside
        return Received(TableCertificate(p, data), data, sha256 or "", ok)
    try:
        got = kind_of(data)
    except InputError as exc:
        raise InputError(exc.message, source=src, field=exc.field) from None
    ok = check_digest(data, src, allow_stale=allow_stale)
    try:
        item_ids(data)  # text ids, each listed once
        cert = got.record.from_dict(data)
    except InputError as exc:
        raise InputError(exc.message, source=src, field=exc.field) from None
    if kind is not None and got.name != kind:
        raise InputError(f"not a {_KIND_TEXT.get(kind, kind)} certificate (format {cert.format!r}, expected one of "
                         f"{KINDS[kind].formats})", source=src, field="format")
    if got.name == "task" and data.get("version", 1) not in TASK_VERSIONS:  # a version from the future: not read
        raise InputError(f"a task certificate of version {str(data.get('version'))[:20]!r}, not one this viewcert "
                         f"reads {TASK_VERSIONS}", source=src, field="version")
    if isinstance(cert, CeilingCertificate) and kind == "ceiling":
        check_shape(cert, src)
    return Received(cert, data, sha256 or "", ok)


def read(path: str | Path, *, allow_stale: bool = False, kind: str | None = None, streamed: bool = False) -> Certificate | TableCertificate:
    """The typed certificate at ``path`` (:func:`receive`, without the envelope).

    Parameters
    ----------
    path : str or Path
        The certificate file (its size is checked against the limits in force before it is read).
    allow_stale : bool
        Read a certificate whose digest does not match its content instead of refusing it.
    kind : str or None
        ``ceiling``, ``task`` or ``interaction``: only that kind is accepted; None: any.
    streamed : bool
        Accept a streamed certificate (``kind`` None).

    Returns
    -------
    Certificate or TableCertificate
        The certificate's typed record (a streamed certificate: opened for lazy reading).
    """
    return receive(path, allow_stale=allow_stale, kind=kind, streamed=streamed).certificate


def check_shape(cert: CeilingCertificate, src: str) -> None:
    """What ``verify`` needs of a crystal/molecule certificate: ``inputs`` (``spec`` text, ``files`` object),
    ``config`` and ``libraries`` objects, text item ids, and a ``location`` (when present) with text paths."""
    for key in ("inputs", "config", "libraries"):
        if not isinstance(getattr(cert, key), dict | Section):
            raise InputError(f"certificate has no {key!r} dict", source=src, field=key)
    inputs = cert.inputs
    if not isinstance(inputs.spec, str) or not isinstance(inputs.files, Mapping):
        raise InputError("certificate inputs need 'spec' (text) and 'files' (object)", source=src, field="inputs")
    for k, it in enumerate(cert.items):
        if not isinstance(it.id, str):
            raise InputError(f"item {k} has no text 'id'", source=src, field=f"items[{k}].id")
    loc = cert.location
    if loc is not ABSENT and loc is not None and not (
            isinstance(loc, Location) and isinstance(loc.input or "", str) and isinstance(loc.protocol or "", str)):
        raise InputError("certificate location must be an object with text 'input' and 'protocol'", source=src,
                         field="location")
