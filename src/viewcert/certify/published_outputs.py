"""What ``viewcert certify images:FOLDER/images.toml`` writes, and how ``viewcert verify`` recomputes it.

Files (every one written atomically, every received text escaped for its sink):

- ``certificate.json``: the as-published certificate (``formats.records.PublishedCertificate``);
- ``images.csv``: one row per image: image, item, renderer, the 12 numbers of its projection P (``P00`` …
  ``P23``, row by row: world Å -> the image's homogeneous pixels), atoms expected visible, detected, matched,
  unmatched, centre RMS and largest residual (px);
- ``detections.csv``: one row per detected atom: image, x, y, radius (px, the image's pixel frame), element
  (empty when its colour is ambiguous), the matched drawn atom's index (empty when unmatched) and the residual (px);
- ``summary.txt``: both ceilings, the items that differ with their reasons, the detection totals;
- ``cameras.csv`` (only when images.toml asks for a camera to be recovered, ``tool = "unknown"``): one row per such
  image: status and reason, the model fitted, RMS and largest residual (px), the share of detections explained,
  the admissible poses and their spread (degrees), the renderer named and the best pose written back in its terms
  (compact JSON: the camera table ``viewcert.cameras.resolve_tool_camera`` reads, e.g. PyMOL's ``set_view``), or
  why it could not be.

``verify_published`` finds the recorded images.toml inside the trusted folder (``certify.trust``), checks every
file's SHA-256, certifies again with the recorded settings and compares section by section and item by item
(``certify.verify.compare``).
"""

from __future__ import annotations

import json
from pathlib import Path

from viewcert.certify.certificate import certificate_text
from viewcert.certify.config import CertifyConfig
from viewcert.certify.published import certify_published
from viewcert.certify.trust import find_inside, trusted_root
from viewcert.certify.verify import VerifyReport, compare
from viewcert.detect.detector import DetectorSettings
from viewcert.errors import InputError
from viewcert.formats.records import PublishedCertificate, compute_digest
from viewcert.formats.recovery_sections import RecoveredCamera
from viewcert.io.atomic import write_text_atomic
from viewcert.io.tables import csv_text
from viewcert.sanitize import console_fields, console_text

__all__ = ["CAMERA_COLUMNS", "IMAGE_COLUMNS", "cameras_table", "detections_table", "images_table", "published_summary_text", "verify_published",
           "write_published_outputs"]

IMAGE_COLUMNS = ("image", "item", "renderer", *(f"P{i}{j}" for i in range(3) for j in range(4)),
                 "expected_visible", "detected", "matched", "unmatched", "centre_rms_px", "centre_max_px")
DETECTION_COLUMNS = ("image", "x", "y", "radius", "element", "matched_atom", "residual_px")
CAMERA_COLUMNS = ("image", "item", "status", "reason", "model", "rms_px", "max_px", "explained", "poses",
                  "spread_deg", "drawn_by", "written_back", "written_back_note")


def images_table(cert: PublishedCertificate) -> str:
    """``images.csv`` (module docstring)."""
    rows = []
    for im in cert.images:
        p = list(im.projection.matrix) if im.projection and isinstance(im.projection.matrix, list) else [None] * 12
        rows.append([im.file, im.item, im.renderer, *p, im.expected_visible, im.detected, im.matched, im.unmatched,
                     im.centre_rms_px, im.centre_max_px])
    return csv_text(IMAGE_COLUMNS, rows)


def detections_table(cert: PublishedCertificate) -> str:
    """``detections.csv`` (module docstring)."""
    rows = []
    for im in cert.images:
        for u, v, r, e, a, res in im.detections or []:
            rows.append([im.file, u, v, r, e, a if a >= 0 else None, res])
    return csv_text(DETECTION_COLUMNS, rows)


def cameras_table(cert: PublishedCertificate) -> str | None:
    """``cameras.csv`` (module docstring); None when no image's camera was to be recovered."""
    rows = []
    for im in cert.images:
        rec = im.recovered
        if not isinstance(rec, RecoveredCamera):
            continue
        back = None if rec.written_back is None else json.dumps(rec.written_back, sort_keys=True,
                                                                 separators=(",", ":"), ensure_ascii=False)
        rows.append([im.file, im.item, rec.status, rec.reason, rec.model, rec.rms_px, rec.max_px, rec.explained,
                     rec.n_poses, rec.spread_deg, rec.drawn_by, back, rec.written_back_note])
    return csv_text(CAMERA_COLUMNS, rows) if rows else None


def _rate(b) -> str:
    if b is None or not b.n:  # no item: the bound has no k or n (ABSENT), only its text
        return "no item"
    return f"{b.k}/{b.n} = {b.rate:.4g} (exact one-sided {b.confidence:.0%} lower bound {b.lower:.4g})"


def published_summary_text(cert: PublishedCertificate, *, max_list: int = 30) -> str:
    """summary.txt: both ceilings, the differing items and why, the detection totals (received text escaped)."""
    s, set_ = cert.summary, cert.settings
    det = console_fields(dict(s.detection or {}))
    lines = [f"inputs: {console_text(cert.inputs.spec, keep_newlines=False)} ({cert.inputs.n_items} items, "
             f"{det.get('images', 0)} images)",
             f"delta = {set_.delta:g} Å, tau = {set_.tau:g} Å, level {s.level}",
             f"as-published ceiling (atoms read from the pixels): {_rate(s.as_published)}",
             f"geometric ceiling (every atom, exact projection, same cameras): {_rate(s.geometric)}",
             f"items that differ: {s.n_differ}" + (
                 " (" + ", ".join(f"{k} {v}" for k, v in console_fields(s.reasons or {}).items()) + ")"
                 if s.n_differ else ""),
             f"detection: {det.get('detected')} atoms found, {det.get('matched')} matched, {det.get('unmatched')} "
             f"unmatched, {det.get('ambiguous')} of ambiguous colour, of {det.get('expected_visible')} expected "
             f"visible; centre RMS {det.get('centre_rms_px')} px, largest {det.get('centre_max_px')} px"]
    if s.delta_note:
        lines.append(f"note: {console_text(s.delta_note, keep_newlines=False)}")
    shown = 0
    for it in cert.items:
        if it.is_error or not it.differ or shown >= max_list:
            continue
        shown += 1
        lines.append(f"  differs: {console_text(it.id, keep_newlines=False)}: as published "
                     f"{it.as_published.outcome if it.as_published else 'error'}, geometric "
                     f"{it.geometric.outcome if it.geometric else 'error'}; "
                     f"{', '.join(it.reasons or [])}")
    if s.n_errors:
        lines.append(f"errors: {s.n_errors} items could not be certified (not counted)")
        for e in (s.errors or [])[:max_list]:
            lines.append(f"  {console_text(e['id'], keep_newlines=False)}: "
                         f"{console_text(str(e['error'])[:300], keep_newlines=False)}")
    lines.append(f"certificate digest: {cert.digest_value}")
    return "\n".join(lines) + "\n"


def write_published_outputs(out: str | Path, cert: PublishedCertificate) -> dict[str, Path]:
    """Write certificate.json, images.csv, detections.csv, summary.txt and, when a camera was to be recovered,
    cameras.csv into ``out`` (module docstring).

    Parameters
    ----------
    out : str or Path
        The output folder.
    cert : PublishedCertificate
        The sealed certificate.

    Returns
    -------
    dict
        File role -> path written.
    """
    out = Path(out)
    paths = {"certificate": write_text_atomic(out / "certificate.json", certificate_text(cert.to_dict())),
             "images": write_text_atomic(out / "images.csv", images_table(cert)),
             "detections": write_text_atomic(out / "detections.csv", detections_table(cert)),
             "summary": write_text_atomic(out / "summary.txt", published_summary_text(cert))}
    cameras = cameras_table(cert)
    if cameras is not None:
        paths["cameras"] = write_text_atomic(out / "cameras.csv", cameras)
    return paths


def recorded_config(cert: PublishedCertificate) -> tuple[CertifyConfig, DetectorSettings]:
    """The settings an as-published certificate records, as a configuration and detector settings."""
    s = cert.settings
    try:
        cfg = CertifyConfig(delta=s.delta, tau=s.tau, angle_tolerance=s.angle_tolerance, pairs=s.pairs,
                            merge=s.merge, periodic_merge=s.periodic_merge, score=s.score, truth=s.truth,
                            confidence=s.confidence, molecule_levels=tuple(s.molecule_levels))
        d = (cert.detector or {}).get("settings") or {}
        det = DetectorSettings(shading=d.get("shading", "auto"), min_pixels=d.get("min_pixels", 12),
                               max_radius=d.get("max_radius"))
    except (AttributeError, TypeError, ValueError) as exc:
        raise InputError(f"settings cannot be read: {str(exc)[:120]}", field="settings") from None
    return cfg, det


def verify_published(path: str | Path, received, *, input_spec: str | None = None,
                     inputs_root: str | Path | None = None) -> VerifyReport:
    """Recompute an as-published certificate (module docstring).

    Parameters
    ----------
    path : str or Path
        The certificate.json.
    received : Received
        The certificate as read (``formats.reader.receive``).
    input_spec : str, optional
        Where the images.toml is now (trusted; ``images:PATH`` or a path).
    inputs_root : str or Path, optional
        Trusted folder the recorded images.toml must lie inside (default: the current folder).

    Returns
    -------
    VerifyReport
        The digest check, changed files and every difference.
    """
    cert = received.certificate
    rep = VerifyReport(digest_ok=received.digest_ok, stored_digest=cert.digest_value or "")
    spec = cert.inputs.spec if cert.inputs else ""
    if not isinstance(spec, str) or not spec.startswith("images:"):
        raise InputError(f"inputs.spec must be images:NAME, got {str(spec)[:60]!r}", source=str(path),
                         field="inputs.spec")
    cfg, detector = recorded_config(cert)
    if input_spec is None:
        root = trusted_root(Path.cwd() if inputs_root is None else inputs_root)
        loc = (cert.location.input if cert.location else "") or ""
        candidates = ([(loc, "location.input")] if loc else []) + [(spec[len("images:"):], "inputs.spec")]
        input_spec = "images:" + find_inside(candidates, root, what="input", label=spec, source=str(path),
                                             want_dir=False)
    elif not str(input_spec).startswith("images:"):
        input_spec = f"images:{input_spec}"
    try:
        new = certify_published(input_spec, cfg, detector=detector)
    except InputError as exc:
        rep.input_changes.append(f"cannot load {spec}: {exc}")
        return rep
    files = cert.inputs.files or {}
    for name in sorted(set(files) | set(new.inputs.files or {})):
        a, b = files.get(name), (new.inputs.files or {}).get(name)
        if a != b:
            rep.input_changes.append(f"{name}: sha256 {a} (certificate) vs {b} (now)")
    body = new.to_dict()
    body["digest"] = dict(body["digest"], value=compute_digest(body))
    compare(received.data, body, rep)
    return rep
