"""Certificates: a deterministic JSON record of a render-ceiling certification that anyone can recompute.

Contents: ``format``; ``inputs`` (spec, kind, SHA-256 of every input file; per item the SHA-256 of its
structure text); ``config`` (every setting); ``protocol`` (views with full 3×3 world→camera rotations,
ASE strings, κ per view pair, framing; per item a SHA-256 of the framed cameras); ``observation_model``;
``tolerances`` (δ, τ, angle tolerance, standardization tolerances); ``libraries`` (versions); ``items``
(per-item outcome, reasons, labels, counts, phantoms, hashes); ``summary`` (R1 with its exact bound,
census, failures); ``digest``.

Determinism: no timestamps or host names (run metadata goes to a separate ``run.json``); keys sorted;
floats rounded to fixed significant digits before writing and written in shortest round-trip form; items
in input order. The digest is the SHA-256 of the canonical compact JSON of everything except ``digest``
itself, so it does not depend on whitespace. The same inputs and settings give byte-identical files.

``viewcert.certify.verify`` re-reads the inputs (checking their hashes), recomputes every item with the
recorded settings, and reports every difference item by item.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

from viewcert import __version__
from viewcert.certify.config import CertifyConfig
from viewcert.certify.evaluate import STANDARDIZER
from viewcert.certify.inputs import Dataset
from viewcert.certify.summary import summary_of
from viewcert.errors import InputError
from viewcert.formats import records
from viewcert.formats.records import (
    CEILING_FORMAT,
    CeilingCertificate,
    digest_record,
    outcomes_of,
)
from viewcert.io.atomic import json_dumps, write_text_atomic
from viewcert.resolution import quantize_tree, resolution_record
from viewcert.symmetry.labels import library_versions as symmetry_versions

#: /2: the framing policy recorded and the input cell's truth rule (every field since /1: formats.versions.SINCE_V1)
FORMAT = CEILING_FORMAT
__all__ = ["FORMAT", "build_certificate", "certificate_text", "write_certificate"]


def library_versions() -> dict[str, str]:
    # pymatgen.core.__version__ is importlib.metadata's "pymatgen-core" version: read it without importing
    # pymatgen (≈ 0.1 s at start-up)
    from importlib.metadata import PackageNotFoundError, version

    import gemmi
    import numba
    import numpy
    import scipy

    try:
        pmg = version("pymatgen-core")
    except PackageNotFoundError:  # pragma: no cover
        pmg = "absent"
    return {
        "viewcert": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        **symmetry_versions(),
        "pymatgen": pmg,
        "gemmi": gemmi.__version__,
        "standardizer": STANDARDIZER,
    }


def certificate_of(dataset: Dataset, cfg: CertifyConfig, outcomes: list) -> CeilingCertificate:
    """The certificate (typed, with its digest) for ``outcomes`` (ItemOutcome values or their dicts) computed
    from ``dataset`` under ``cfg``."""
    if len(outcomes) != len(dataset.items):
        raise InputError(f"{len(outcomes)} outcomes for {len(dataset.items)} items", field="outcomes")
    items = tuple(outcomes_of(quantize_tree([o.to_dict() if isinstance(o, records.ItemOutcome) else o
                                                for o in outcomes])))
    cert = CeilingCertificate(format=FORMAT, inputs=dataset.record(), **cfg.sections(),  # the configuration's
                              libraries=library_versions(), items=items, summary=summary_of(items, cfg),
                              location=cfg.location(dataset))
    # every float at its stated resolution (viewcert.resolution): the same bytes on any CPU
    body = cert.to_dict()  # items already at their resolution (typed once, above): the other sections once
    cert = CeilingCertificate.from_dict({**quantize_tree({k: v for k, v in body.items() if k != "items"}),
                                      "items": items, "resolution": resolution_record()})
    return cert.model_copy(update={"digest": digest_record(cert.to_dict())})


def build_certificate(dataset: Dataset, cfg: CertifyConfig, outcomes: list) -> dict:
    """:func:`certificate_of` as the JSON object written (what ``certify`` returns).

    Parameters
    ----------
    dataset : Dataset
        The items certified (``certify.inputs``), in the order of ``outcomes``.
    cfg : CertifyConfig
        The settings: protocol, tiling, δ and τ in Å, observation model.
    outcomes : list
        One evaluated outcome per item (a record, or the item's error).

    Returns
    -------
    dict
        The certificate as written to ``certificate.json``, its digest included.
    """
    return certificate_of(dataset, cfg, outcomes).to_dict()


def certificate_text(cert: dict) -> str:
    """Deterministic text: top-level keys sorted, one item per line, everything else indented."""
    parts = []
    for key in sorted(cert):
        val = cert[key]
        if key == "items":
            lines = [" " + json_dumps(it, indent=None).rstrip("\n") for it in val]
            body = "[\n" + ",\n".join(lines) + "\n ]" if lines else "[]"
        else:
            body = json_dumps(val, indent=1).rstrip("\n").replace("\n", "\n ")
        parts.append(f" {json.dumps(key)}: {body}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_certificate(path: str | Path, cert: dict) -> Path:
    """Write a certificate's canonical JSON text atomically.

    Parameters
    ----------
    path : str or Path
        The file written (``certificate.json``).
    cert : dict
        The certificate as built by :func:`build_certificate`.

    Returns
    -------
    Path
        The path written.
    """
    return write_text_atomic(path, certificate_text(cert))
