"""VASP POSCAR / CONTCAR (ASE's ``vasp`` reader and writer). Always periodic; lattice rows and Cartesian
positions exactly as ASE reads them (scale factor applied)."""

from __future__ import annotations

import io
import os
from pathlib import Path

from viewcert.errors import InputError
from viewcert.io._common import read_source
from viewcert.io.ase_adapter import from_ase, to_ase
from viewcert.io.atomic import write_text_atomic
from viewcert.structures import Provenance, Structure, sha256_text


def _diagnose_header(lines: list[str], src: str) -> InputError | None:
    """A precise error for the first five lines of a POSCAR (length, scale factor, lattice), or None."""
    if len(lines) < 8:
        return InputError(
            f"a POSCAR needs at least 8 lines, this has {len(lines)}", source=src, field="header"
        )
    try:
        float(lines[1].split()[0])
    except (ValueError, IndexError):
        return InputError(
            f"line 2 must be the scale factor, got {lines[1].strip()!r}", source=src, field="scale"
        )
    for k in range(2, 5):
        try:
            vals = [float(x) for x in lines[k].split()[:3]]
            if len(vals) != 3:
                raise ValueError
        except ValueError:
            return InputError(
                f"line {k + 1}: lattice vector must be three numbers", source=src, field="lattice"
            )
    return None


def _diagnose_counts(lines: list[str], src: str) -> tuple[int, list[int]] | InputError:
    """(index of the counts line, the counts) of a POSCAR whose header is sound, or a precise error."""
    tok5 = lines[5].split()
    if tok5 and not tok5[0].lstrip("-").isdigit():  # VASP 5: species names, then counts
        count_line = 6
    else:
        count_line = 5
    try:
        counts = [int(x) for x in lines[count_line].split()]
    except ValueError:
        return InputError(
            f"line {count_line + 1}: atom counts must be integers, got {lines[count_line].strip()!r}",
            source=src,
            field="atom counts",
        )
    if count_line == 6 and len(counts) != len(tok5):
        return InputError(
            f"{len(tok5)} species names on line 6 but {len(counts)} counts on line 7",
            source=src,
            field="atom counts",
        )
    return count_line, counts


def _diagnose(text: str, src: str) -> InputError | None:
    """A precise error for a malformed POSCAR (VASP 5 layout with a species line), or None."""
    lines = text.splitlines()
    if (err := _diagnose_header(lines, src)) is not None:
        return err
    found = _diagnose_counts(lines, src)
    if isinstance(found, InputError):
        return found
    count_line, counts = found
    k = count_line + 1
    if k < len(lines) and lines[k].strip()[:1].lower() == "s":  # Selective dynamics
        k += 1
    k += 1  # Direct / Cartesian
    n = sum(counts)
    coords = []
    for line in lines[k : k + n]:
        parts = line.split()
        try:
            coords.append([float(x) for x in parts[:3]])
            if len(parts) < 3:
                raise ValueError
        except ValueError:
            break
    if len(coords) < n:
        return InputError(
            f"atom counts sum to {n} but only {len(coords)} coordinate lines follow",
            source=src,
            field="atom counts",
        )
    return None


def read_poscar(path: str | os.PathLike, *, identifier: str | None = None) -> Structure:
    """Read a POSCAR/CONTCAR file (VASP 5 layout with species names; VASP 4 needs them in the comment)."""
    src, text, digest = read_source(path)
    return read_poscar_text(text, source=src, identifier=identifier, sha256=digest)


def read_poscar_text(
    text: str, *, source: str = "<string>", identifier: str | None = None, sha256: str | None = None
) -> Structure:
    import ase.io

    diag = _diagnose(text, source)
    if diag is not None:
        raise diag
    try:
        atoms = ase.io.read(io.StringIO(text), format="vasp")
    except Exception as exc:  # noqa: BLE001 - ASE raises many types; report as InputError
        raise InputError(f"cannot parse POSCAR: {exc}", source=source, field="poscar") from None
    comment = text.splitlines()[0].strip() if text.strip() else ""
    prov = Provenance(
        source=source,
        identifier=identifier if identifier is not None else (comment or Path(source).stem),
        sha256=sha256 or sha256_text(text),
    )
    return from_ase(atoms, provenance=prov)


def poscar_text(s: Structure, *, direct: bool = True, comment: str | None = None) -> str:
    """POSCAR text (VASP 5, species line, sorted by first appearance as ASE writes it)."""
    import ase.io

    if s.lattice is None:
        raise InputError("a POSCAR needs a periodic structure (this one has no lattice)", field="lattice")
    buf = io.StringIO()
    ase.io.write(buf, to_ase(s), format="vasp", direct=direct)
    text = buf.getvalue()
    label = (comment if comment is not None else s.identifier).replace("\n", " ").strip()
    if label:  # the first line is a free comment; ASE writes the species there
        text = label + "\n" + text.split("\n", 1)[1]
    return text


def write_poscar(
    path: str | os.PathLike, s: Structure, *, direct: bool = True, comment: str | None = None
) -> Path:
    """Write ``s`` as a POSCAR, atomically."""
    return write_text_atomic(path, poscar_text(s, direct=direct, comment=comment))
