"""Certify an item whose images were published without a camera (issue 54): recover each image's camera from the
structure as shipped and the atoms its pixels show, then certify over every admissible pose.

``images.toml`` states ``camera = { tool = "unknown", ... }`` (``recover.table``: optional kind, field of view,
zone axis, the renderer that drew it). For each such image, ``certify.published`` detects the drawn atoms
(``detect.detect_atoms``) once and this module recovers the camera (``recover.recover_camera``: no correspondences
given). Then:

- an image whose camera is not recovered makes its item **camera not recovered**: the item is listed with the
  reason and counts out of the ceiling's denominator, never in it;
- otherwise every combination of the images' admissible poses (a symmetric molecule draws the same picture from
  several cameras) is certified (up to the structure's own symmetry: ``pose_combinations``); an item is determined
  only if every combination determines it: when they differ, each ceiling takes its least determined outcome
  (``least_determined``) and the item records how many combinations determined it; it is refused with the reason
  when a combination fails, or when there are too many to certify (``MAX_POSE_COMBINATIONS``, ``MAX_POSE_WORK``);
- each image's record carries the recovered camera with its evidence (``formats.recovery_sections``), every
  admissible pose, and the best pose written back in the renderer's own terms where ``drawn_by`` names one;
- ``write_redraws`` draws each recovered image again with viewcert's renderer through its best pose (the
  equivalent camera, warped onto the tool's pixels) beside the published image, for a side-by-side check:
  ``redrawn/NNN.png`` (NNN: the image's place in images.toml) and ``redrawn/index.json``.

Units: pixels in the image's frame (u right, v down), Å, degrees.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any, cast

import numpy as np

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.certify.images_input import load_images, read_shipped_structure
from viewcert.elements import atomic_number
from viewcert.formats.recovery_sections import RecoveredCamera
from viewcert.io.atomic import write_json_atomic
from viewcert.io.images import write_png
from viewcert.io.pictures import read_picture
from viewcert.recover import DetectedAtoms, Recovery, hints_from_table, recover_camera, written_back
from viewcert.render.raster import build_scene, render
from viewcert.resolution import quantize, quantize_tree

__all__ = ["MAX_POSE_COMBINATIONS", "MAX_POSE_WORK", "NOT_RECOVERED_PREFIX", "REDRAW_STYLE", "detected_atoms", "least_determined",
           "outcomes_agree", "over_poses",
           "pose_combinations", "recover_image_camera", "recovered_record", "redraw", "write_redraws"]

#: an item is refused when its images' admissible poses combine into more camera sets than this, or when their
#: number times the drawn atoms exceeds MAX_POSE_WORK (each combination is certified twice: a small symmetric
#: molecule may have thousands, a large structure few)
MAX_POSE_COMBINATIONS = 4096
MAX_POSE_WORK = 20000
#: how an item whose camera was not recovered is listed (out of the denominator)
NOT_RECOVERED_PREFIX = "camera not recovered"
#: how viewcert draws a recovered view again beside the published image
REDRAW_STYLE = "ball-and-stick"
_GAP_PX = 8
_PX = 4  # pixel quantities written at 1e-4 px
_DEG = 4


def detected_atoms(centres, radii, elements) -> DetectedAtoms:
    """The recovery's input from the detector's output: centres (n, 2) px, radii (n,) px and element symbols
    (``""``: the colour is ambiguous, any element)."""
    labels = [atomic_number(e) if e else 0 for e in elements]
    return DetectedAtoms(np.asarray(centres, dtype=np.float64).reshape(-1, 2), cast(Any, labels),
                         np.asarray(radii, dtype=np.float64).reshape(-1))


def recover_image_camera(camera_table, where: str, atoms: DetectedAtoms, positions: np.ndarray,
                         numbers: np.ndarray, width: int, height: int) -> Recovery:
    """Recover one image's camera: the hints of its ``tool = "unknown"`` table, then ``recover_camera`` on the
    drawn atoms (world Å) and the detections (px)."""
    hints = hints_from_table(camera_table, where)
    return recover_camera(positions, numbers, atoms, width, height, hints=hints)


def pose_combinations(choices: list[tuple], symmetric_first: bool = False, n_atoms: int = 1) -> list[tuple] | None:
    """Every combination of one pose per image (the best poses first); None when there are more than
    ``MAX_POSE_COMBINATIONS``, or when their number times the drawn atoms (``n_atoms``) exceeds
    ``MAX_POSE_WORK``.

    ``symmetric_first``: every image's camera was recovered and the first image's poses are all its best pose
    composed with symmetry operations of the drawn atoms; the first image then keeps only its best pose. (A
    combination (P₁∘g₁, P₂∘g₂, ...) is (P₁, P₂∘g₂g₁⁻¹, ...) seen in the world turned by g₁, a symmetry of the atoms:
    the same observations, a reconstruction turned by g₁, the same answer.)"""
    if symmetric_first and choices:
        choices = [choices[0][:1], *choices[1:]]
    n = math.prod(len(c) for c in choices)
    if n > MAX_POSE_COMBINATIONS or n * max(n_atoms, 1) > MAX_POSE_WORK:
        return None
    return list(itertools.product(*choices))


def outcomes_agree(outcomes: list) -> bool:
    """Whether every pose combination gives the item the same outcome (correct, unique, outcome) under both
    ceilings."""
    keys = {(g.correct, g.unique, g.outcome, p.correct, p.unique, p.outcome) for g, p in outcomes}
    return len(keys) == 1


def over_poses(outcomes: list) -> tuple:
    """(geometric, as published, the item's extra, the refusal or '') of an item certified under every combination
    of admissible poses (``outcomes``: (geometric, as published) each, the best poses first): the best poses'
    outcomes when every combination agrees; else each ceiling's ``least_determined`` with how many combinations
    determined the answer (``poses_determining_as_published``, ``poses_determining_geometric``); a refusal when a
    combination could not be certified."""
    geo, pub = outcomes[0]
    extra = {"pose_combinations": len(outcomes)}
    if outcomes_agree(outcomes):
        return geo, pub, extra, ""
    failed = sum(1 for g, p in outcomes if g.is_error or p.is_error)
    if failed:
        return geo, pub, extra, (f"{NOT_RECOVERED_PREFIX}: {failed} of the {len(outcomes)} combinations of admissible "
                                 "poses could not be certified")
    extra["poses_determining_as_published"] = sum(1 for _, p in outcomes if p.correct)
    extra["poses_determining_geometric"] = sum(1 for g, _ in outcomes if g.correct)
    return (least_determined([g for g, _ in outcomes]), least_determined([p for _, p in outcomes]), extra, "")


def least_determined(outcomes: list):
    """Of one ceiling's outcomes under every pose combination, the first of the least determined (not correct
    before correct, then not unique before unique): an item is determined only if every admissible pose
    determines it."""
    return min(outcomes, key=lambda o: (bool(o.correct), bool(o.unique)))


def _px(x) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else quantize(float(x), _PX)


def recovered_record(recovery: Recovery, n_detected: int, centre: np.ndarray | None = None) -> RecoveredCamera:
    """The certificate's section of one recovery: status, evidence, every admissible pose, and the best pose in
    the renderer's own terms (``drawn_by``; PyMOL's origin of rotation and matplotlib's box centre at ``centre``,
    the drawn atoms' centre, Å); ``n_detected``: the detections the recovery read."""
    best = recovery.poses[0] if recovery.poses else recovery.best
    tool = recovery.hints.tool
    table, note = (None, "the camera was not recovered")
    if recovery.recovered:
        if tool == "unknown":
            table, note = None, "no renderer named (drawn_by)"
        else:
            opts = {"centre": [float(x) for x in centre]} if centre is not None and tool in ("pymol",
                                                                                            "matplotlib") else {}
            table, note = written_back(recovery.poses[0].projection, tool, **opts)
            table = quantize_tree(table) if table is not None else None
    return RecoveredCamera(
        status=recovery.status, reason=recovery.reason, model=best.model if best is not None else "",
        rms_px=_px(best.rms_px) if best is not None else None, max_px=_px(best.max_px) if best is not None else None,
        explained=quantize(best.explained, 6) if best is not None else None,
        n_matched=best.n_matched if best is not None else None, n_detected=int(n_detected),
        n_missing=best.n_missing if best is not None else None, n_poses=len(recovery.poses),
        spread_deg=quantize(recovery.spread_deg, _DEG), spread_px=quantize(recovery.spread_px, _PX),
        poses=[quantize_tree(p.projection.to_dict()) for p in recovery.poses],
        hints=recovery.hints.to_dict(), thresholds=recovery.thresholds.to_dict(), unseen=list(recovery.unseen),
        labels_disagree=recovery.labels_disagree,
        drawn_by=tool, written_back=table, written_back_note=note)


def redraw(structure, tiling, projection: PixelProjection, style: str = REDRAW_STYLE) -> np.ndarray:
    """The structure (tiled when periodic) drawn by viewcert's renderer through ``projection``: the equivalent
    camera's image warped onto the tool's pixels (bilinear) when its pixels are not square; (H, W, 3) uint8."""
    from skimage.transform import (  # lazy: start-up (scikit-image only where a view is redrawn)
        AffineTransform,
        warp,
    )

    cam, affine = projection.equivalent()
    scene = build_scene(structure, style, tiling=tiling if structure.is_periodic else (1, 1, 1), edges="none")
    rgb = cast(np.ndarray, render(scene, cam).rgb)  # render always draws its pixels
    if np.allclose(affine, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], atol=1e-9):
        return rgb
    m = np.vstack([affine, [0.0, 0.0, 1.0]])  # camera px -> tool px; warp reads camera px at each tool px
    out = warp(rgb, AffineTransform(matrix=m).inverse, output_shape=rgb.shape[:2], order=1, cval=1.0,
               preserve_range=True)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def write_redraws(out, cert, folder) -> dict:
    """Write, for every image whose camera was recovered, the published image beside viewcert's drawing through
    the best pose: ``out/redrawn/NNN.png`` and ``out/redrawn/index.json`` (NNN → the image's file and item).

    Parameters
    ----------
    out : str or Path
        The certificate's output folder.
    cert : PublishedCertificate
        The as-published certificate (its images' ``recovered`` sections).
    folder : str or Path
        The folder of images.toml (its images and structures, read again here, inside it).

    Returns
    -------
    dict
        ``{"redrawn/index.json": path}`` and one entry per drawing; empty when no camera was recovered.
    """
    folder, out = Path(folder), Path(out)
    recovered = {im.file: im for im in cert.images if im.recovered and im.recovered.status == "recovered"}
    if not recovered:
        return {}
    spec = load_images(f"images:{folder / 'images.toml'}")
    written, index = {}, {}
    for k, entry in enumerate(spec.images):
        im = recovered.get(entry.file)
        if im is None:
            continue
        item = next(it for it in spec.items if it.id == entry.item)
        structure = read_shipped_structure(item.structure_path, item.structure, item.cell_frame)
        projection = PixelProjection.from_dict(im.recovered.poses[0])
        drawn = redraw(structure, item.tiling, projection)
        published, _ = read_picture(entry.path, name=entry.file)
        gap = np.full((published.shape[0], _GAP_PX, 3), 255, dtype=np.uint8)
        name = f"redrawn/{k:03d}.png"
        written[name] = write_png(out / name, np.hstack([published, gap, drawn]))
        index[f"{k:03d}"] = {"file": entry.file, "item": entry.item, "style": REDRAW_STYLE}
    written["redrawn/index.json"] = write_json_atomic(out / "redrawn" / "index.json", index)
    return written
