"""``read_structure(path, **kw)``: one entry point dispatching on the file extension.

| extension                         | reader                                   |
|-----------------------------------|------------------------------------------|
| ``.cif``                          | :func:`viewcert.io.cif.read_cif` (small-molecule/crystal CIF); an mmCIF (``_atom_site.Cartn_x``) goes to :func:`viewcert.io.pdb.read_pdb` |
| ``.mmcif``, ``.mcif``             | :func:`viewcert.io.pdb.read_pdb`         |
| ``.pdb``, ``.ent``                | :func:`viewcert.io.pdb.read_pdb`         |
| ``.xyz``, ``.extxyz``             | :func:`viewcert.io.xyz.read_xyz`         |
| ``.vasp``, ``.poscar``; names ``POSCAR*``/``CONTCAR*`` | :func:`viewcert.io.poscar.read_poscar` |
| ``.sdf``, ``.mol``                | :func:`viewcert.io.sdf.read_sdf`         |

Keyword arguments go to the chosen reader. ``builtin:...`` names resolve through
:func:`viewcert.io.builtin.builtin` (which returns a list, so use ``read_structures``).
"""

from __future__ import annotations

import os
import re
import stat
import struct
from pathlib import Path
from typing import Any

from viewcert.errors import InputError
from viewcert.structures import Structure

_READERS = {
    ".cif": "cif",
    ".mmcif": "pdb",
    ".mcif": "pdb",
    ".pdb": "pdb",
    ".ent": "pdb",
    ".xyz": "xyz",
    ".extxyz": "xyz",
    ".vasp": "poscar",
    ".poscar": "poscar",
    ".sdf": "sdf",
    ".mol": "sdf",
}
SUPPORTED_EXTENSIONS: tuple[str, ...] = tuple(sorted(_READERS))
_MMCIF = re.compile(r"^\s*_atom_site\.cartn_x", re.IGNORECASE | re.MULTILINE)
_SMALL = re.compile(r"^\s*_atom_site_fract_x", re.IGNORECASE | re.MULTILINE)


def format_of(path: str | os.PathLike) -> str:
    """'cif', 'pdb', 'xyz', 'poscar' or 'sdf' for a path; InputError for an unknown extension."""
    p = Path(path)
    name = p.name.upper()
    if name.startswith(("POSCAR", "CONTCAR")):
        return "poscar"
    fmt = _READERS.get(p.suffix.lower())
    if fmt is None:
        raise InputError(
            f"unknown structure file extension {p.suffix or '(none)'!r}; supported: "
            f"{', '.join(SUPPORTED_EXTENSIONS)} and POSCAR/CONTCAR names",
            source=str(p),
            field="extension",
        )
    return fmt


#: what a malformed file can make the parsing libraries underneath raise (gemmi, RDKit, numpy, codecs)
READ_FAILURES = (ValueError, UnicodeError, KeyError, IndexError, RuntimeError, OverflowError, ZeroDivisionError,
                 struct.error, TypeError, AttributeError, RecursionError, OSError, EOFError, SystemError)


def read_structure(path: str | os.PathLike, **kw: Any) -> Structure:
    """Read one structure, choosing the reader from the extension (see the module table). Any failure is an
    InputError naming the file: the reader's own message, or the parsing library's with the format.

    Parameters
    ----------
    path : str or path-like
        A structure file whose extension or name the module table lists (``.cif``, ``.pdb``, ``.xyz``,
        ``.sdf``, ``POSCAR``, ...).
    **kw
        Options passed to the format's reader (``occupancy_policy``, ``identifier``, ...).

    Returns
    -------
    Structure
        Positions Cartesian Å; a lattice (rows a, b, c, Å) when the file is periodic.

    Raises
    ------
    InputError
        The format is unknown or the file cannot be read as it (naming the file).
    """
    fmt = format_of(path)
    try:
        return _read(path, fmt, **kw)
    except InputError:
        raise
    except READ_FAILURES as exc:
        msg = " ".join(str(exc).split())[:200]
        raise InputError(f"cannot read as {fmt}: {type(exc).__name__}: {msg}", source=os.fspath(path),
                         field="format") from None


def _read(path: str | os.PathLike, fmt: str, **kw: Any) -> Structure:
    if fmt == "cif":
        p = Path(path)
        try:
            head = p.read_text(errors="replace")
        except OSError as exc:
            raise InputError(
                f"cannot read file: {exc.strerror or exc}", source=str(p), field="path"
            ) from None
        if _MMCIF.search(head) and not _SMALL.search(head):
            fmt = "pdb"
    if fmt == "cif":
        from viewcert.io.cif import read_cif  # lazy: start-up (each reader loads its own library)

        return read_cif(path, **kw)
    if fmt == "pdb":
        from viewcert.io.pdb import read_pdb  # lazy: start-up (each reader loads its own library)

        return read_pdb(path, **kw)
    if fmt == "xyz":
        from viewcert.io.xyz import read_xyz  # lazy: start-up (each reader loads its own library)

        return read_xyz(path, **kw)
    if fmt == "poscar":
        from viewcert.io.poscar import read_poscar  # lazy: start-up (each reader loads its own library)

        return read_poscar(path, **kw)
    from viewcert.io.sdf import read_sdf  # lazy: start-up (each reader loads its own library)

    return read_sdf(path, **kw)


def entry_problem(path: str | os.PathLike) -> str | None:
    """Why a folder entry cannot be read as a structure file, or None when it is a regular file (symbolic
    links followed): a dangling link, an entry deleted after the folder was listed, a FIFO, device or socket,
    a link loop. Nothing is opened, so a FIFO cannot block."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        if os.path.islink(p):
            return f"a dangling symbolic link (its target {os.readlink(p)!r} does not exist)"
        return "vanished before it was read (deleted after the folder was listed)"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if stat.S_ISDIR(st.st_mode):
        return "a directory, not a structure file"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file (a FIFO, device or socket)"
    return None


def read_structures(spec: str | os.PathLike, **kw: Any) -> list[Structure]:
    """A list of structures from a ``builtin:NAME`` spec, a directory (every supported file, sorted by
    name) or a single file. A directory entry with a supported name that cannot be read (a dangling
    symbolic link, a FIFO, a file deleted meanwhile) is an InputError naming it, never skipped.

    Parameters
    ----------
    spec : str or path-like
        ``builtin:NAME``, a directory or a structure file.
    **kw
        Options passed to each file's reader (:func:`read_structure`).

    Returns
    -------
    list of Structure
        In file-name order for a directory.

    Raises
    ------
    InputError
        A builtin name is unknown, a directory holds no supported file or an unreadable entry, or a file
        cannot be read (naming it).
    """
    s = os.fspath(spec)
    if s.startswith("builtin:"):
        from viewcert.io.builtin import builtin  # lazy: start-up (each reader loads its own library)

        return builtin(s)
    p = Path(s)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if not f.is_dir() and _supported(f))
        if not files:
            raise InputError("directory holds no supported structure files", source=str(p), field="path")
        for f in files:
            why = entry_problem(f)
            if why is not None:
                raise InputError(f"cannot read: {why}", source=str(f), field="path")
        return [read_structure(f, **kw) for f in files]
    return [read_structure(p, **kw)]


def _supported(f: Path) -> bool:
    try:
        format_of(f)
    except InputError:
        return False
    return True
