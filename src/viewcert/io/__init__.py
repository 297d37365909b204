"""Readers, writers and adapters: the only part of viewcert that touches files.

- ``read``              ``read_structure(path, **kw)`` dispatching on the extension; ``read_structures``
- ``cif``               ``read_cif`` / ``read_cif_text``: gemmi fast path reproducing pymatgen, occupancy policies
- ``poscar``, ``xyz``   POSCAR/CONTCAR and (extended) XYZ via ASE, readers and atomic writers
- ``pdb``               PDB and mmCIF via gemmi (molecule by default, ``periodic=True`` for the crystal)
- ``altloc``            alternate locations: one conformer per residue by a stated rule, the choice recorded
- ``sdf``               SDF/MOL via RDKit (optional extra)
- ``pymatgen_adapter``  ``from_pymatgen`` / ``to_pymatgen``
- ``ase_adapter``       ``from_ase`` / ``to_ase``
- ``cell``              lattice rows from cell parameters in pymatgen's orientation, and back
- ``atomic``            atomic JSON (deterministic), text, bytes, Parquet and PNG writers
- ``received``          the one reader of received files (certificates, protocol files, manifests, harness
                        logs): regular files only, size checked before a bounded read; strict JSON keys
- ``confine``           the one rule for paths a received file names (real path inside the trusted folder, no
                        symlink out, recorded SHA-256 matched) and for where a write or a served file may land
- ``outputs``           output folders: one writer at a time (a lock), one output per folder
- ``idlist``            item-id files (one id per line): what ``ladder --subset-size`` writes, ``--ids`` reads
- ``tables``            CSV text for people and spreadsheets: every string cell neutralised (OWASP's rule)
- ``builtin``           built-in prototypes (pymatgen's AFLOW library) and molecules (biotite's CCD)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.io.atomic import (
        json_dumps,
        write_bytes_atomic,
        write_json_atomic,
        write_parquet_atomic,
        write_png_atomic,
        write_text_atomic,
    )
    from viewcert.io.cif import read_cif, read_cif_text
    from viewcert.io.read import read_structure, read_structures

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "json_dumps": "atomic", "write_bytes_atomic": "atomic", "write_json_atomic": "atomic",
    "write_parquet_atomic": "atomic", "write_png_atomic": "atomic", "write_text_atomic": "atomic",
    "read_cif": "cif", "read_cif_text": "cif", "read_structure": "read", "read_structures": "read",
}
lazy_face(__name__, _FACE)

__all__ = [
    "json_dumps",
    "read_cif",
    "read_cif_text",
    "read_structure",
    "read_structures",
    "write_bytes_atomic",
    "write_json_atomic",
    "write_parquet_atomic",
    "write_png_atomic",
    "write_text_atomic",
]
