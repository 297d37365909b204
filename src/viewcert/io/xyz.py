"""XYZ and extended XYZ (ASE's ``extxyz`` reader and writer).

A plain XYZ is a molecule. An extended XYZ whose comment line has ``Lattice="..."`` (and ``pbc`` all true,
ASE's default when a lattice is given) is periodic. Mixed ``pbc`` follows ``partial_pbc`` of
:func:`viewcert.io.ase_adapter.from_ase`. Multi-frame files: ``index`` picks the frame (default 0).
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Literal

from viewcert.elements import SYMBOLS
from viewcert.errors import InputError
from viewcert.io._common import read_source
from viewcert.io.ase_adapter import from_ase, to_ase
from viewcert.io.atomic import write_text_atomic
from viewcert.structures import Provenance, Structure, sha256_text

_VALID = set(SYMBOLS[1:])


def _diagnose(text: str, src: str) -> InputError | None:
    """A precise error for the first frame of a malformed (extended) XYZ, or None if none is found."""
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        return InputError("empty file: the first line must be the atom count", source=src, field="count")
    try:
        n = int(lines[0].split()[0])
    except ValueError:
        return InputError(
            f"line 1 must be the atom count (an integer), got {lines[0].strip()!r}", source=src, field="count"
        )
    if n < 1:
        return InputError(f"atom count on line 1 is {n}; need at least one atom", source=src, field="count")
    body = lines[2 : 2 + n]
    if len(body) < n:
        return InputError(
            f"line 1 says {n} atoms but the file has {len(body)} atom lines", source=src, field="count"
        )
    extended = "properties=" in (lines[1].lower() if len(lines) > 1 else "")
    for k, line in enumerate(body, start=3):
        parts = line.split()
        if len(parts) < 4:
            return InputError(
                f"line {k}: expected 'symbol x y z', got {line.strip()!r}", source=src, field="coordinates"
            )
        sym = parts[0]
        if not sym.isdigit() and sym.capitalize() not in _VALID:
            return InputError(f"line {k}: unknown element symbol {sym!r}", source=src, field="species")
        if not extended:
            for tok in parts[1:4]:
                try:
                    float(tok)
                except ValueError:
                    return InputError(
                        f"line {k}: coordinate {tok!r} is not a number", source=src, field="coordinates"
                    )
    return None


def read_xyz(
    path: str | os.PathLike,
    *,
    index: int = 0,
    identifier: str | None = None,
    partial_pbc: Literal["refuse", "periodic", "molecule"] = "refuse",
) -> Structure:
    """Read frame ``index`` of an XYZ / extended XYZ file."""
    src, text, digest = read_source(path)
    return read_xyz_text(
        text, source=src, index=index, identifier=identifier, partial_pbc=partial_pbc, sha256=digest
    )


def read_xyz_text(
    text: str,
    *,
    source: str = "<string>",
    index: int = 0,
    identifier: str | None = None,
    partial_pbc: Literal["refuse", "periodic", "molecule"] = "refuse",
    sha256: str | None = None,
) -> Structure:
    """Read frame ``index`` of XYZ / extended XYZ text."""
    import ase.io


    if index == 0:
        diag = _diagnose(text, source)
        if diag is not None:
            raise diag
    try:
        atoms = ase.io.read(io.StringIO(text), format="extxyz", index=index)
    except Exception as exc:  # noqa: BLE001 - ASE raises many types; report as InputError
        diag = _diagnose(text, source)
        if diag is not None:
            raise diag from None
        raise InputError(f"cannot parse XYZ: {exc}", source=source, field="xyz") from None
    prov = Provenance(
        source=source,
        identifier=identifier if identifier is not None else Path(source).stem,
        sha256=sha256 or sha256_text(text),
    )
    return from_ase(atoms, provenance=prov, partial_pbc=partial_pbc)


def xyz_text(s: Structure, *, comment: str | None = None) -> str:
    """Extended XYZ text of ``s`` (``Lattice=`` and ``pbc`` for periodic structures)."""
    import ase.io

    atoms = to_ase(s)
    buf = io.StringIO()
    if comment is not None:
        atoms.info["comment"] = comment
    ase.io.write(buf, atoms, format="extxyz")
    return buf.getvalue()


def write_xyz(path: str | os.PathLike, s: Structure, *, comment: str | None = None) -> Path:
    """Write ``s`` as extended XYZ, atomically."""
    return write_text_atomic(path, xyz_text(s, comment=comment))
