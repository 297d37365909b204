"""The as-published ceiling: what the images a benchmark actually shipped determine (issue 53).

``certify_published(spec, cfg)`` reads ``images:FOLDER/images.toml`` (``certify.images_input``: every path, image
header, camera and palette checked first), then per item (the views of one question):

1. reads the structure as shipped and its drawn atoms (``observe.drawn_atoms``: a crystal's tiling);
2. per image: decodes the pixels (``io.pictures``), finds the drawn atoms (``detect.detect_atoms``: centre,
   radius, element), matches them to the atoms the resolved camera projects (``detect.match_detections``) and
   turns them into the view's observations in the equivalent camera's frame (``detect.published_view``);
3. certifies twice through the same cameras (``certify.evaluate.evaluate_observations``, the oracle and scoring of
   ``viewcert certify`` unchanged): the **geometric** ceiling (every drawn atom at its exact projection) and the
   **as-published** ceiling (the atoms read from the pixels; the oracle's occlusion rule on, with the drawn radius
   scale estimated from the detections);
4. names why the two differ (:data:`REASONS`) from what each image showed.

The certificate (``formats.records.PublishedCertificate``) records every file's SHA-256, each image's resolved
projection, detections and residuals, both outcomes per item and the summary; ``viewcert verify`` recomputes it
(:func:`verify_published`). Pixel quantities (centres, radii, residuals) are written at ``PIXEL_DECIMALS``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import numpy as np

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.certify import recovered as R
from viewcert.certify.certificate import library_versions as base_library_versions
from viewcert.certify.config import CertifyConfig
from viewcert.certify.evaluate import evaluate_observations
from viewcert.certify.images_input import (
    ImageEntry,
    ImageItem,
    ImagesSpec,
    load_images,
    read_shipped_structure,
)
from viewcert.certify.inputs import Item
from viewcert.certify.summary import NO_BOUND, rate_bound
from viewcert.detect import circles as C
from viewcert.detect import detector as D
from viewcert.detect.detector import DetectorSettings, detect_atoms
from viewcert.detect.match import match_detections, published_view
from viewcert.elements import SYMBOLS, covalent_radii
from viewcert.errors import InputError
from viewcert.formats.image_sections import (
    ImageProjection,
    PublishedImage,
    PublishedSettings,
    PublishedStructure,
    PublishedSummary,
)
from viewcert.formats.model import ABSENT
from viewcert.formats.records import (
    IMAGES_FORMAT,
    ItemOutcome,
    PublishedCertificate,
    PublishedItemRecord,
    digest_record,
)
from viewcert.formats.settings_sections import Inputs, Location
from viewcert.io.pictures import read_picture
from viewcert.numeric import sig
from viewcert.observe.project import ObservationModel, Observations, drawn_atoms, observe
from viewcert.resolution import quantize, quantize_tree, resolution_record
from viewcert.stats import clopper_pearson_lower
from viewcert.structures import sha256_text

__all__ = ["PIXEL_DECIMALS", "REASONS", "certify_published", "published_item"]

#: why an item's as-published outcome differs from its geometric one, most specific first
REASONS = ("atom_hidden", "atoms_merged", "ambiguous_colour", "projection_disagrees", "not_detected",
           "centre_error_above_delta")
#: a matched detection this many px from its projected atom: the camera and the pixels disagree
PROJECTION_PX = 2.0
#: pixel quantities (centres, radii, residuals) are written at 1e-4 px
PIXEL_DECIMALS = 4
#: the drawn radius scale the oracle's occlusion rule uses when nothing was matched to estimate it
DEFAULT_RADIUS_SCALE = 0.5


@dataclass(frozen=True)
class _View:
    """One image read: its record, the equivalent camera, the as-published view and what explains a difference."""

    record: PublishedImage
    camera: Any
    view: Any
    flags: frozenset
    radius_ratios: tuple


def _px(x) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else quantize(float(x), PIXEL_DECIMALS)


def _flags(det, matching, positions_uv_gate) -> set:
    """The reasons this image may give an item (before the item's outcomes say whether they matter)."""
    flags = set()
    m = matching
    if any(not e for e in det.elements) or ((m.atom >= 0) & ~m.element_ok).any():
        flags.add("ambiguous_colour")
    if m.n_unmatched or (m.atom >= 0).any() and float(np.max(m.residual[m.atom >= 0])) > PROJECTION_PX:
        flags.add("projection_disagrees")
    if (~m.expected & np.isfinite(m.projected).all(axis=1)).any():
        flags.add("atom_hidden")
    found = set(int(a) for a in m.atom if a >= 0)
    missed = [i for i in np.flatnonzero(m.expected) if int(i) not in found]
    if missed:
        gate = positions_uv_gate
        merged = False
        for i in missed:
            d = np.linalg.norm(det.centres - m.projected[i], axis=1) if len(det) else np.zeros(0)
            if len(d) and (d <= gate).any() and m.atom[int(np.argmin(d))] >= 0:
                merged = True
        flags.add("atoms_merged" if merged else "not_detected")
    return flags


def _detect(entry: ImageEntry, numbers, detector: DetectorSettings):
    """Decode one image and detect its drawn atoms: (detections, picture header)."""
    rgb, picture = read_picture(entry.path, name=entry.file)
    width, height = entry.header[1], entry.header[2]
    if (picture.width, picture.height) != (width, height):
        raise InputError("the image changed while it was read", source=entry.file, field="image")
    symbols = sorted({SYMBOLS[int(z)] for z in numbers})
    # a pinhole draws nearer spheres larger; matplotlib's scatter markers keep their size in points at any depth
    persp = entry.projection is not None and entry.projection.kind == "perspective" and entry.tool != "matplotlib"
    det = detect_atoms(rgb, entry.palette, symbols, dataclasses.replace(detector, shading=entry.shading,
                                                                        perspective=persp))
    return det, picture


def _read_view(entry: ImageEntry, positions, numbers, cell_index, tiles, detector: DetectorSettings,
               detected=None) -> _View:
    """Decode one image, detect (unless ``detected`` = (detections, picture) already), match and observe (module
    step 2)."""
    det, picture = detected if detected is not None else _detect(entry, numbers, detector)
    width, height = entry.header[1], entry.header[2]
    proj = cast(PixelProjection, entry.projection)  # resolved: a recovered camera replaces None first
    symbols = sorted({SYMBOLS[int(z)] for z in numbers})
    m = match_detections(det, proj, positions, numbers)
    view = published_view(det, m, proj, cell_index, tiles, name=entry.name)
    cam, _ = proj.equivalent()
    # per matched detection: its radius over its atom's covalent radius at its depth's scale (the drawn scale)
    ok = np.flatnonzero(m.atom >= 0)
    px_per_a = np.asarray(cam.pixel_size(m.depth[m.atom[ok]]) if len(ok) else np.zeros(0), dtype=np.float64)
    ratios = tuple(float(x) for x in det.radii[ok] * px_per_a / covalent_radii(numbers[m.atom[ok]])) if len(ok) else ()
    rows = [[_px(c[0]), _px(c[1]), _px(r), e, int(a), _px(res)]
            for c, r, e, a, res in zip(det.centres, det.radii, det.elements, m.atom, m.residual, strict=True)]
    rec = PublishedImage(
        file=entry.file, item=entry.item, name=entry.name, renderer=entry.tool, sha256=picture.sha256,
        format=picture.format, width=width, height=height, colour=picture.colour + ("A" if picture.alpha else ""),
        projection=ImageProjection(**quantize_tree(proj.to_dict())), camera=dict(entry.camera),
        palette=entry.palette.to_dict(symbols), shading=det.shading, n_drawn=len(numbers),
        expected_visible=int(m.expected.sum()), detected=len(det), matched=m.n_matched, unmatched=m.n_unmatched,
        ambiguous=sum(1 for e in det.elements if not e), element_mismatch=int(((m.atom >= 0) & ~m.element_ok).sum()),
        centre_rms_px=_px(m.centre_rms()), centre_max_px=_px(m.centre_max()), detections=rows)
    gate = float(np.median(det.radii)) if len(det) else 0.0
    return _View(rec, cam, view, frozenset(_flags(det, m, gate)), ratios)


def _reasons(geo: ItemOutcome, pub: ItemOutcome, views: list[_View], delta: float) -> list[str]:
    """Why the two outcomes differ (:data:`REASONS`), from what the images showed; empty when they agree."""
    if not _differ(geo, pub):
        return []
    flags = set().union(*(v.flags for v in views)) if views else set()
    out = [r for r in REASONS if r in flags]
    if not out:
        out = ["centre_error_above_delta"]
    return out


def _differ(geo: ItemOutcome, pub: ItemOutcome) -> bool:
    return (geo.correct, geo.unique) != (pub.correct, pub.unique) or geo.outcome != pub.outcome


def _item_record(item: ImageItem, structure) -> Item:
    return Item(item.id, "structure", structure, sha256_text(f"{item.structure}:{item.id}"), item.answer,
                "images.toml" if item.answer else "")


def published_item(item: ImageItem, cfg: CertifyConfig, detector: DetectorSettings | None = None, *,
                   detections: Mapping | None = None) -> tuple[PublishedItemRecord, list[PublishedImage]]:
    """One item certified from its published images (module steps 1–4): its record and its images' records.

    Parameters
    ----------
    item : ImageItem
        The question: the structure as shipped, its tiling and its images (cameras resolved).
    cfg : CertifyConfig
        δ and τ (Å), the oracle's rule, the scoring (its protocol is not used: the cameras are the images').
    detector : DetectorSettings, optional
        The detector's settings (each image's shading from images.toml).
    detections : Mapping, optional
        image file -> ``Detections`` read some other way, used instead of the detector's (a benchmark's exact
        per-atom centres: the as-published ceiling of a perfect reader of the same pixels).

    Returns
    -------
    tuple
        The item's record (both ceilings, whether they differ and why, or its error) and one record per image.
    """
    detector = detector or DetectorSettings()
    try:
        structure = read_shipped_structure(item.structure_path, item.structure, item.cell_frame)
    except InputError as exc:
        return PublishedItemRecord(id=item.id, images=[im.name for im in item.images], error=f"read: {exc}"[:500]), []
    struct = PublishedStructure(file=item.structure, sha256=item.structure_sha256, formula=structure.formula,
                                n_atoms=structure.n_atoms, periodic=structure.is_periodic, tiling=list(item.tiling),
                                cell_frame=item.cell_frame)
    tiling = item.tiling if structure.is_periodic else (1, 1, 1)
    pos, num, idx, tile = drawn_atoms(structure, tiling)
    if any(entry.projection is None for entry in item.images):  # camera = { tool = "unknown" }: issue 54
        return _recovered_item(item, structure, struct, tiling, (pos, num, idx, tile), cfg, detector, detections)
    views: list[_View] = []
    records: list[PublishedImage] = []
    try:
        for entry in item.images:
            given = None
            if detections is not None and entry.file in detections:
                given = (detections[entry.file], read_picture(entry.path, name=entry.file)[1])
            views.append(_read_view(entry, pos, num, idx, tile, detector, detected=given))
            records.append(views[-1].record)
    except InputError as exc:
        return PublishedItemRecord(id=item.id, images=[im.name for im in item.images], structure=struct,
                                   error=f"image: {exc}"[:500]), records
    geo, pub, scale = _certify_views(item, structure, views, tiling, cfg)
    return PublishedItemRecord(
        id=item.id, images=[v.record.name for v in views], structure=struct, answer=item.answer,
        geometric=geo, as_published=pub, differ=_differ(geo, pub),
        reasons=_reasons(geo, pub, views, cfg.oracle.delta), radius_scale=sig(scale, 6)), records


def _certify_views(item: ImageItem, structure, views: list[_View], tiling, cfg: CertifyConfig):
    """Both outcomes of one item through its views' cameras (module step 3): (geometric, as published, the drawn
    radius scale the occlusion rule used)."""
    cams = tuple(v.camera for v in views)
    it = _item_record(item, structure)
    obs_cfg = cfg.with_(observation=replace(cfg.observation, tiling=tiling, occlusion=False, observe="ideal"))
    geo = evaluate_observations(it, structure, cams, observe(structure, cams, ObservationModel(tiling=tiling)),
                                obs_cfg)
    ratios = [r for v in views for r in v.radius_ratios if math.isfinite(r)]
    scale = float(np.median(ratios)) if ratios else DEFAULT_RADIUS_SCALE
    model = ObservationModel(tiling=tiling, occlusion=True, radius_scale=scale)
    pub_obs = Observations(tuple(v.view for v in views), model, structure.identifier)
    pub_cfg = cfg.with_(observation=replace(cfg.observation, tiling=tiling, occlusion=True, observe="ideal"))
    pub = evaluate_observations(it, structure, cams, pub_obs, pub_cfg)
    return geo, pub, scale


def _recovered_item(item: ImageItem, structure, struct: PublishedStructure, tiling, drawn, cfg: CertifyConfig,
                    detector: DetectorSettings, detections: Mapping | None = None
                    ) -> tuple[PublishedItemRecord, list[PublishedImage]]:
    """An item with images whose camera images.toml does not state (``certify.recovered``): detect once, recover
    each unknown camera, certify every combination of admissible poses; camera not recovered, or poses that
    disagree, refuse the item (listed, out of the denominator)."""
    pos, num, idx, tile = drawn
    names = [im.name for im in item.images]
    try:
        detected = [(detections[entry.file], read_picture(entry.path, name=entry.file)[1])
                    if detections is not None and entry.file in detections else _detect(entry, num, detector)
                    for entry in item.images]
    except InputError as exc:
        return PublishedItemRecord(id=item.id, images=names, structure=struct, error=f"image: {exc}"[:500]), []
    choices: list[tuple[Any, ...]] = []
    sections, refusal, first_symmetric = {}, "", True
    centre = 0.5 * (pos.min(axis=0) + pos.max(axis=0))
    for k, (entry, (det, _)) in enumerate(zip(item.images, detected, strict=True)):
        if entry.projection is not None:
            choices.append((entry.projection,))
            continue
        atoms = R.detected_atoms(det.centres, det.radii, det.elements)
        rec = R.recover_image_camera(entry.camera, f"images.toml, {entry.where}", atoms, pos, num,
                                     entry.header[1], entry.header[2])
        sections[k] = R.recovered_record(rec, len(atoms), centre)
        if not rec.recovered and not refusal:
            refusal = f"{R.NOT_RECOVERED_PREFIX} ({entry.file}): {rec.reason}"
        if k == 0:
            first_symmetric = all(p.from_symmetry for p in rec.poses)
        choices.append(tuple(p.projection for p in rec.poses) or (None,))
    all_recovered = len(sections) == len(item.images)
    combos = None if refusal else R.pose_combinations(choices, symmetric_first=all_recovered and first_symmetric,
                                                      n_atoms=len(num))
    if not refusal and combos is None:
        refusal = (f"{R.NOT_RECOVERED_PREFIX}: the images' admissible poses combine in too many ways "
                   f"({' × '.join(str(len(c)) for c in choices)}) to certify, more than {R.MAX_POSE_COMBINATIONS} "
                   f"or {R.MAX_POSE_WORK} atom-combinations")
    if refusal:
        records = [_image_stub(entry, det, pic, sections.get(k), num)
                   for k, (entry, (det, pic)) in enumerate(zip(item.images, detected, strict=True))]
        return PublishedItemRecord(id=item.id, images=names, structure=struct, error=refusal[:500]), records
    outcomes, first = [], None
    for combo in cast("list[tuple[Any, ...]]", combos):  # not None: refused above otherwise
        views = [_read_view(replace(entry, projection=proj), pos, num, idx, tile, detector, detected=d)
                 for entry, proj, d in zip(item.images, combo, detected, strict=True)]
        geo, pub, scale = _certify_views(item, structure, views, tiling, cfg)
        outcomes.append((geo, pub))
        first = first or (views, geo, pub, scale)
    views, geo, pub, scale = cast("tuple[Any, ...]", first)  # set: combos holds one combination at least
    records = [v.record.model_copy(update={"recovered": sections[k]}) if k in sections else v.record for k, v in enumerate(views)]
    geo, pub, extra, failed = R.over_poses(outcomes)
    if failed:
        return PublishedItemRecord(id=item.id, images=names, structure=struct, error=failed), records
    return PublishedItemRecord(
        id=item.id, images=[v.record.name for v in views], structure=struct, answer=item.answer,
        geometric=geo, as_published=pub, differ=_differ(geo, pub),
        reasons=_reasons(geo, pub, views, cfg.oracle.delta), radius_scale=sig(scale, 6), **extra), records


def _image_stub(entry: ImageEntry, det, picture, recovered, numbers) -> PublishedImage:
    """The record of an image whose item was refused before matching: what was read and the recovery."""
    rows = [[_px(c[0]), _px(c[1]), _px(r), e, -1, None]
            for c, r, e in zip(det.centres, det.radii, det.elements, strict=True)]
    return PublishedImage(
        file=entry.file, item=entry.item, name=entry.name, renderer=entry.tool, sha256=picture.sha256,
        format=picture.format, width=entry.header[1], height=entry.header[2], camera=dict(entry.camera),
        palette=entry.palette.to_dict(sorted({SYMBOLS[int(z)] for z in numbers})), shading=det.shading,
        n_drawn=len(numbers), detected=len(det),
        detections=rows, recovered=recovered if recovered is not None else ABSENT)


def _bound(k: int, n: int, confidence: float):
    return rate_bound(clopper_pearson_lower(k, n, confidence)) if n else NO_BOUND


def _summary(items: list[PublishedItemRecord], images: list[PublishedImage], cfg: CertifyConfig) -> PublishedSummary:
    errors = [{"id": it.id, "error": it.error} for it in items if it.is_error]
    good = [it for it in items if not it.is_error]
    n = len(good)
    reasons: dict = {}
    for it in good:
        for r in it.reasons or []:
            reasons[r] = reasons.get(r, 0) + 1
    matched = [im for im in images if im.matched]
    res = [row[5] for im in images for row in im.detections or [] if row[4] >= 0]
    rms = math.sqrt(float(np.mean(np.square(res)))) if res else None
    scale = [im.projection.px_per_angstrom() if im.projection else 0.0 for im in matched]
    per = [(cast(float, im.centre_rms_px) / s) ** 2 for im, s in zip(matched, scale, strict=True) if s]
    rms_a = math.sqrt(float(np.mean(per))) if per else None
    detection = {"images": len(images), "expected_visible": sum(im.expected_visible or 0 for im in images),
                 "detected": sum(im.detected or 0 for im in images), "matched": sum(im.matched or 0 for im in images),
                 "unmatched": sum(im.unmatched or 0 for im in images),
                 "ambiguous": sum(im.ambiguous or 0 for im in images),
                 "element_mismatch": sum(im.element_mismatch or 0 for im in images),
                 "centre_rms_px": _px(rms), "centre_max_px": _px(max(res)) if res else None,
                 "centre_rms_angstrom": sig(rms_a, 6) if rms_a is not None else None}
    note = ABSENT
    if rms_a is not None and cfg.oracle.delta < 3 * rms_a:
        note = (f"delta = {cfg.oracle.delta:g} Å is below 3 × the detections' RMS ({sig(rms_a, 3)} Å at each view's "
                f"scale): the pixels place atoms no closer than that, so the as-published ceiling at this delta "
                f"counts their quantisation; certify again with --delta {sig(3 * rms_a, 2)} or more to ask what "
                f"they determine at the pixels' own precision")
    conf = cfg.scoring.confidence
    return PublishedSummary(
        n=n, n_errors=len(errors), level=cfg.scoring.score,
        as_published=_bound(sum(1 for it in good if it.as_published and it.as_published.correct), n, conf),
        geometric=_bound(sum(1 for it in good if it.geometric and it.geometric.correct), n, conf),
        n_differ=sum(1 for it in good if it.differ), reasons=dict(sorted(reasons.items())), detection=detection,
        delta_note=note, errors=errors)


def detector_record(detector: DetectorSettings) -> dict:
    """What the certificate states of the detector (``detect``): the method, its settings and constants."""
    return {"module": "viewcert.detect", "settings": detector.to_dict(),
            "method": "per-element colour masks (flat: colour blended toward the background; shaded: colour scaled "
                      "by the lighting), rim points (skimage.measure.find_contours), centre votes along the rim "
                      "normals, robust geometric circle fits, explaining-away, slivers; blobs below "
                      f"{D.SMALL_RADIUS} px",
            "constants": {"min_cover": C.MIN_COVER, "small_radius_px": D.SMALL_RADIUS,
                          "constant_spread": D.CONSTANT_SPREAD, "wide_radius": D.WIDE_RADIUS},
            "match": "one-to-one assignment within max(2 px, 0.5 × radius) of the projected centre (viewcert.detect."
                     "match); unmatched detections are reported, never assigned",
            "pixel_resolution": f"1e-{PIXEL_DECIMALS} px"}


def library_versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version  # lazy: read only when a certificate is made

    out = dict(base_library_versions())
    for pkg in ("scikit-image", "pillow"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:  # pragma: no cover
            out[pkg] = "absent"
    return out


def certificate_of(spec: ImagesSpec, cfg: CertifyConfig, items: list, images: list,
                   detector: DetectorSettings) -> PublishedCertificate:
    """The sealed as-published certificate (digest included) of ``items`` and ``images``."""
    settings = PublishedSettings(
        delta=cfg.oracle.delta, tau=cfg.symmetry.tau, angle_tolerance=cfg.symmetry.angle_tolerance,
        pairs=cfg.oracle.pairs, merge=cfg.oracle.merge, periodic_merge=cfg.oracle.periodic_merge,
        score=cfg.scoring.score, truth=cfg.scoring.truth, confidence=cfg.scoring.confidence,
        molecule_levels=list(cfg.molecules.molecule_levels), scoring=cfg.sections()["scoring"].to_dict(),
        geometric="every drawn atom at its exact projection through each image's resolved camera (the equivalent "
                  "viewcert camera), no occlusion",
        as_published="the atoms detected in each image, in its equivalent camera's pixels; the oracle's occlusion "
                     "rule on (a view may miss a point a nearer drawn disc covers)")
    cert = PublishedCertificate(
        format=IMAGES_FORMAT, items=tuple(items),
        inputs=Inputs(spec=spec.spec, kind="images", subset="", n_items=len(spec.items), files=dict(spec.files)),
        settings=settings, tolerances=cfg.sections()["tolerances"], detector=detector_record(detector),
        libraries=library_versions(), images=tuple(images), summary=_summary(items, images, cfg),
        location=Location(input=str(spec.path.resolve()), note="where the inputs were read; outside the digest"))
    body = quantize_tree({k: v for k, v in cert.to_dict().items() if k not in ("digest", "resolution")})
    body["resolution"] = resolution_record()
    cert = PublishedCertificate.from_dict(body)
    return cert.model_copy(update={"digest": digest_record(cert.to_dict())})


def certify_published(spec_text: str | Path, cfg: CertifyConfig, *, detector: DetectorSettings | None = None,
                      progress=None) -> PublishedCertificate:
    """Certify ``images:FOLDER/images.toml`` (module docstring): every input checked first (one InputError), then
    each item; an item that fails is its error record.

    Parameters
    ----------
    spec_text : str or Path
        ``images:PATH`` of an images.toml.
    cfg : CertifyConfig
        δ, τ (Å), the oracle's rule, the scoring.
    detector : DetectorSettings, optional
        The detector's settings.
    progress : callable, optional
        Called with a line per item.

    Returns
    -------
    PublishedCertificate
        The sealed certificate.
    """
    detector = detector or DetectorSettings()
    spec = load_images(spec_text)
    items, images = [], []
    for k, item in enumerate(spec.items):
        rec, recs = published_item(item, cfg, detector)
        items.append(rec)
        images.extend(recs)
        if progress is not None:
            progress(f"item {k + 1}/{len(spec.items)}")
    return certificate_of(spec, cfg, items, images, detector)
