"""SDF / MOL files via RDKit (an optional extra: ``pip install viewcert[molecules]``).

Molecules only (no lattice); coordinates from the file's conformer, hydrogens kept unless
``remove_hs=True``. A 2D depiction (all z = 0, or the conformer flagged 2D) is refused unless
``allow_2d=True``, since a flat drawing is not a 3D structure. Multi-record SDF: ``index`` picks the
record (default 0). RDKit's own parse message is included in the error.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

import numpy as np

from viewcert.errors import InputError
from viewcert.io._common import read_source
from viewcert.structures import Provenance, Structure, sha256_text


def _rdkit(source: str | None):
    try:
        from rdkit import Chem, rdBase
    except ImportError:
        raise InputError(
            "reading SDF/MOL needs RDKit, an optional extra: pip install 'viewcert[molecules]' (or rdkit)",
            source=source,
            field="rdkit",
        ) from None
    return Chem, rdBase


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _rdkit_messages(rdBase):
    """Collect RDKit's log messages while parsing. RDKit is switched (once, process-wide) to log through
    Python's ``logging`` logger ``"rdkit"``, where they are collected and go nowhere else while parsing (the
    reader turns them into one InputError line; RDKit's C++ trace never reaches the user's terminal)."""
    rdBase.LogToPythonLogger()
    logger = logging.getLogger("rdkit")
    handler = _Collect()
    saved, propagate = list(logger.handlers), logger.propagate
    logger.handlers[:] = [handler]  # RDKit installs its own stderr handler: set it aside while parsing
    logger.propagate = False
    try:
        yield handler.messages
    finally:
        logger.handlers[:] = saved
        logger.propagate = propagate


def read_sdf(
    path: str | os.PathLike,
    *,
    index: int = 0,
    remove_hs: bool = False,
    sanitize: bool = True,
    allow_2d: bool = False,
    identifier: str | None = None,
) -> Structure:
    """Read record ``index`` of an SDF (or a MOL file) as a molecule."""
    src, text, digest = read_source(path)
    return read_sdf_text(
        text,
        source=src,
        index=index,
        remove_hs=remove_hs,
        sanitize=sanitize,
        allow_2d=allow_2d,
        identifier=identifier,
        sha256=digest,
    )


def read_sdf_text(
    text: str,
    *,
    source: str = "<string>",
    index: int = 0,
    remove_hs: bool = False,
    sanitize: bool = True,
    allow_2d: bool = False,
    identifier: str | None = None,
    sha256: str | None = None,
) -> Structure:
    Chem, rdBase = _rdkit(source)
    records = [r for r in text.split("$$$$") if r.strip()] if "$$$$" in text else [text]
    if not records:
        raise InputError("empty SDF: no molecule records", source=source, field="molblock")
    if not 0 <= index < len(records):
        raise InputError(
            f"record {index} requested, the file has {len(records)}", source=source, field="index"
        )
    block = records[index].lstrip("\r\n") if index > 0 else records[index]
    with _rdkit_messages(rdBase) as messages:
        mol = Chem.MolFromMolBlock(block, sanitize=sanitize, removeHs=remove_hs)
    if mol is None:
        detail = "; ".join(m.split("] ", 1)[-1].strip() for m in messages) or "RDKit could not parse it"
        raise InputError(f"malformed molecule record {index}: {detail}", source=source, field="molblock")
    if mol.GetNumAtoms() == 0:
        raise InputError(f"molecule record {index} has no atoms", source=source, field="molblock")
    if mol.GetNumConformers() == 0:
        raise InputError(f"molecule record {index} has no coordinates", source=source, field="conformer")
    conf = mol.GetConformer()
    pos = np.array(conf.GetPositions(), dtype=np.float64).reshape(-1, 3)
    if not allow_2d and (not conf.Is3D() or np.allclose(pos[:, 2], 0.0)):
        raise InputError(
            f"molecule record {index} has 2D coordinates (a depiction); pass allow_2d=True to accept it",
            source=source,
            field="conformer",
        )
    numbers = np.array([a.GetAtomicNum() for a in mol.GetAtoms()], dtype=np.int64)
    if (numbers < 1).any():
        i = int(np.flatnonzero(numbers < 1)[0])
        raise InputError(f"atom {i + 1} is a dummy/query atom, not an element", source=source, field="atoms")
    name = mol.GetProp("_Name").strip() if mol.HasProp("_Name") else ""
    ident = identifier if identifier is not None else (name or Path(source).stem)
    labels = tuple(f"{a.GetSymbol()}{a.GetIdx() + 1}" for a in mol.GetAtoms())
    prov = Provenance(source=source, identifier=ident, sha256=sha256 or sha256_text(text))
    return Structure(pos, numbers, None, site_labels=labels, provenance=prov)
