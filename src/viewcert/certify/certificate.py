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
from dataclasses import replace
from pathlib import Path

from viewcert import __version__
from viewcert.cameras.conditioning import protocol_kappa
from viewcert.cameras.framing import DEFAULT_MARGIN_PX
from viewcert.cameras.placement import focal_px
from viewcert.certify.config import CertifyConfig
from viewcert.certify.evaluate import STANDARDIZER
from viewcert.certify.inputs import Dataset
from viewcert.certify.summary import summary_of
from viewcert.errors import InputError
from viewcert.formats import records
from viewcert.formats.records import (
    ABSENT,
    CEILING_FORMAT,
    CeilingCertificate,
    digest_record,
    outcomes_of,
)
from viewcert.formats.settings_sections import (
    CertifyConfigRecord,
    Location,
    ObservationRecord,
    OracleSettingsRecord,
    Scoring,
    Tolerances,
    ViewProtocol,
)
from viewcert.io.atomic import json_dumps, write_text_atomic
from viewcert.numeric import sig
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


CONVENTION = "rotation maps world to camera; rows = camera x (right), y (up), z (toward viewer)"


def _perspective_camera(spec) -> dict:
    """The camera record of a perspective protocol: kind, fov, image size, focal, where the cameras are."""
    placed = spec.positions[0] is not None
    return {"kind": "perspective", "fov_deg": spec.fov_deg, "width": spec.width, "height": spec.height,
            "focal_px": sig(focal_px(spec.fov_deg, spec.width, spec.height), 15),
            "fov_side": "the smaller image side", "margin_px": None if placed else DEFAULT_MARGIN_PX,
            "placement": ("positions as the protocol states them (world Å, the frame of the rendered structure: "
                          "a crystal's conventional cell as drawn, with its tiling)") if placed else
                         ("framing rule: each pinhole looks along its view at the centre of the drawn points' "
                          "bounding box, every view at the one distance that fits their bounding sphere "
                          "(viewcert.cameras.placement; positions per item in items[].camera_positions)"),
            "refused": "a camera inside the drawn points' bounding sphere; a drawn point at or behind a camera plane",
            "delta_star": "defined for orthographic views only (not computed)",
            "kappa": "of the view directions (orthographic projections)", "convention": CONVENTION}


def protocol_record(cfg: CertifyConfig) -> ViewProtocol:
    """The certificate's ``protocol``: the views (rotations, directions, positions in Å), κ, the camera and its
    framing policy, and a protocol file's name and SHA-256."""
    spec = cfg.protocol.spec
    p = spec.protocol
    views = []
    for v, pos in zip(p.views, spec.positions, strict=True):
        d = {"name": v.name, "rotation": [[sig(x, 15) for x in row] for row in v.rotation.tolist()],
             "direction": [sig(x, 15) for x in v.direction.tolist()]}
        if v.ase_string is not None:
            d["ase_string"] = v.ase_string
        if spec.kind == "perspective" and pos is not None:
            d["position"] = [sig(float(x), 15) for x in pos]
        views.append(d)
    camera = _perspective_camera(spec) if spec.kind == "perspective" else {
        "kind": "orthographic", "width": cfg.observation.image_size, "height": cfg.observation.image_size,
        "margin_px": DEFAULT_MARGIN_PX, "framing": "letterbox fit of the drawn atoms and cell box",
        "convention": CONVENTION}
    return ViewProtocol(
        name=p.name, description=p.description, views=views,
        kappa={k: sig(x, 6) for k, x in protocol_kappa(p).items()},
        camera={**camera, "policy": framing_record(cfg)},
        # the bytes the items used: verify reports a changed file (a JSON object: ViewProtocol.file is not typed)
        file={"name": cfg.protocol.file_name, "sha256": cfg.protocol.sha256} if cfg.protocol.is_file else ABSENT)


def framing_record(cfg: CertifyConfig) -> dict:
    """The framing policy the items' cameras were made with (``viewcert.cameras.policy``), and its rule."""
    rule = ("the drawn spheres: every point grown by the largest atom radius drawn in the style, as the rendered "
            "images are framed" if cfg.observation.frame_on == "drawn" else "the atom centres (no pad)")
    return {"frame_on": cfg.observation.frame_on, "rule": rule, **cfg.framing_policy().to_dict()}


def certificate_of(dataset: Dataset, cfg: CertifyConfig, outcomes: list) -> CeilingCertificate:
    """The certificate (typed, with its digest) for ``outcomes`` (ItemOutcome values or their dicts) computed
    from ``dataset`` under ``cfg``."""
    if len(outcomes) != len(dataset.items):
        raise InputError(f"{len(outcomes)} outcomes for {len(dataset.items)} items", field="outcomes")
    items = tuple(outcomes_of(quantize_tree([o.to_dict() if isinstance(o, records.ItemOutcome) else o
                                                for o in outcomes])))
    cert = CeilingCertificate(format=FORMAT, inputs=dataset.record(),
                              config=CertifyConfigRecord.from_dict(cfg.to_dict()),  # the configuration's JSON, typed
                              protocol=protocol_record(cfg), observation_model=observation_record(cfg),
                              tolerances=tolerances_record(cfg), oracle=oracle_record(cfg),
                              scoring=scoring_record(cfg), libraries=library_versions(), items=items,
                              summary=summary_of(items, cfg), location=location_record(dataset, cfg))
    # every float at its stated resolution (viewcert.resolution): the same bytes on any CPU
    body = cert.to_dict()  # items already at their resolution (typed once, above): the other sections once
    cert = CeilingCertificate.from_dict({**quantize_tree({k: v for k, v in body.items() if k != "items"}),
                                      "items": items, "resolution": resolution_record()})
    return replace(cert, digest=digest_record(cert.to_dict()))


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


def observation_record(cfg: CertifyConfig) -> ObservationRecord:
    """The observation model (``observe.project.ObservationModel``, the observe layer's own values) with the
    ID-buffer observation mode."""
    return ObservationRecord(**cfg.observation_model().to_dict(),
                             observe=cfg.observation.observe,  # ideal | visible | pixel-centroid (render.visibility)
                             min_pixels=cfg.observation.min_pixels, visibility=cfg.visibility)


def tolerances_record(cfg: CertifyConfig) -> Tolerances:
    """δ, τ (Å), the angle tolerance (°), the cross-check, the standardisation and the truth rule's cell."""
    sym = cfg.symmetry
    return Tolerances(
        delta=cfg.oracle.delta, delta_unit="angstrom", tau=sym.tau, tau_unit="angstrom",
        angle_tolerance=sym.angle_tolerance, angle_unit="degree",
        cross_check=("moyopy at tau with the same angle tolerance" if sym.cross_check_angle
                     else "moyopy at tau with its default angle handling") if sym.cross_check else "off",
        standardization={"symprec": sym.std_symprec, "angle_tolerance": sym.std_angle_tolerance,
                         "orientation": sym.orientation, "enabled": sym.standardize},
        input_cell="spglib at tau and the angle tolerance on the cell as read (cross-checked like the "
                   "rendered cell); another space group on the rendered cell flags the item "
                   "(items[].symmetry_raised) and the input's label is then the truth",
        angle_tolerance_negative="spglib's own rule (recorded as -1)")


def oracle_record(cfg: CertifyConfig) -> OracleSettingsRecord:
    return OracleSettingsRecord(pairs=cfg.oracle.pairs, merge=cfg.oracle.merge, visibility=cfg.visibility,
                                merge_frame="minimum image in the cell" if cfg.oracle.periodic_merge else "cartesian",
                                module="viewcert.oracle.triangulate.reconstruct")


def scoring_record(cfg: CertifyConfig) -> Scoring:
    return Scoring(level=cfg.scoring.score, truth=cfg.scoring.truth,
                   rule="correct = label of the reconstruction (spglib at tau) equals the reference label at the "
                        "scored level; reference = dataset label where present (truth='dataset'), else the "
                        "rendered cell's label (the input cell's where the standardisation raised the symmetry)",
                   bound=f"exact Clopper-Pearson, one-sided lower and two-sided, confidence {cfg.scoring.confidence}")


def location_record(dataset: Dataset, cfg: CertifyConfig) -> Location:
    """Where the inputs and the protocol file were read (outside the digest); ABSENT when nowhere."""
    if not dataset.location and not cfg.protocol.is_file:
        return ABSENT
    return Location(
        input=dataset.location or ABSENT,
        protocol=str(Path(cfg.protocol.label).resolve()) if cfg.protocol.is_file else ABSENT,
        # the file by name and sha256 in the digest, its path here
        note="where the inputs were read; outside the digest (inputs.files hash the content)" if dataset.location
        else "where files were read; outside the digest")


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
