"""Shared helpers for the readers: read bytes once (the digest is of exactly what was parsed)."""

from __future__ import annotations

import os
from pathlib import Path

from viewcert.errors import InputError
from viewcert.structures import sha256_text


def read_source(path: str | os.PathLike) -> tuple[str, str, str]:
    """(source string, text, sha256 of the bytes) of a file; InputError if it cannot be read."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", source=str(p), field="path") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return str(p), text, sha256_text(data)
