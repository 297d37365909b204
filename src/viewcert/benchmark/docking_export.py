"""MiSI-style docking items: the ligand alone, the pocket alone and one displaced complex, and the
consistent-answer ceiling of the command that restores the native pose.

Displacement (world Å, degrees, the front camera's screen axes, ``tasks.transforms`` semantics): the ligand
is rolled about screen y by θ about its centroid, then moved along screen x by d: ``roll y θ, move x d``.
The answer restores the native pose: ``roll y −θ, move x −d``, rolled about the displaced ligand's
centroid (the centroid, unlike the bounding-box centre, moves with the ligand, so this inverse is exact).
Grid: θ ∈ −90…90° by 15° (0 excluded) × d ∈ {−d₀, +d₀}, d₀ = the ligand's extent along screen x + 2 Å,
rounded up to whole Å (clearly apart, the same for every answer of the complex), grown by 2 Å at a time
while no grid displacement clears the pocket. The item is drawn with ``numpy.random.default_rng(seed)``
from the grid displacements that keep every ligand atom ``CLASH`` Å from every pocket atom (no bad
interpenetration), without replacement within a complex (no two items of a complex alike; fewer items than
asked, with the reason recorded, when fewer displacements clear the pocket); the camera is framed on the box of every grid pose, so the frame does not give the
answer away.

Ceiling (as ``viewcert.tasks`` does for the transformation tasks): the ligand's 3D structure is taken as
known (the ligand-alone view and its chemistry; whether one view determines it is ``viewcert.certify``'s
question); a grid displacement g is **consistent** when the displaced ligand it predicts draws the observed
displaced view: *ideal* — every ligand atom's projection, element-labelled, within δ (px at the view's
scale) of one of g's, and back; *rendered* — the ligand atoms visible in the displaced complex's atom-ID
buffer each matched by one of g's, and each of g's atoms matched or landing on a pixel where something
nearer than it is drawn (it could be hidden). Value: the best single answer's mean MiSI docking credit over
the consistent set (``tasks.credit``, moves on their sign, rotations N = 90°).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from viewcert.benchmark.interaction_arms import docking_question
from viewcert.errors import InputError
from viewcert.formats.item_sections import ItemCeiling
from viewcert.io.atomic import write_png_atomic
from viewcert.render import frame_cameras
from viewcert.render.raster import build_scene, render
from viewcert.structures import Structure
from viewcert.tasks.credit import transformation_credit
from viewcert.tasks.transforms import Step, Transformation, rigid_motion

ANGLES = tuple(a for a in range(-90, 91, 15) if a != 0)
DOCKING_NORMALISERS = {"translate": 4.0, "rotate": 90.0}
CLASH = 1.0  # Å: the drawn displacement keeps every ligand atom this far from every pocket atom
MAX_EXTRA = 20  # Å added to d0 at most while looking for a displacement that clears the pocket


def _min_distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1).min()))


def displacement(theta: int, d: int) -> Transformation:
    return Transformation((Step("roll", "y", float(theta)), Step("move", "x", float(d))))


def restoring(theta: int, d: int) -> Transformation:
    """The answer: ``roll y −θ, move x −d``."""
    return Transformation((Step("roll", "y", float(-theta)), Step("move", "x", float(-d))))


def displaced(ligand: np.ndarray, theta: int, d: int, camera) -> np.ndarray:
    """Ligand positions (Å) after ``roll y θ, move x d`` at ``camera``, rolled about its centroid."""
    m, t = rigid_motion(displacement(theta, d), camera.rotation, ligand.mean(axis=0))
    return ligand @ m.T + t


def grid_d0(ligand: np.ndarray, camera) -> int:
    x = np.asarray(camera.to_camera(ligand)).reshape(-1, 3)[:, 0]
    return int(math.ceil(float(x.max() - x.min()) + 2.0))


def grid(d0: int) -> list[tuple[int, int]]:
    return [(a, s * d0) for a in ANGLES for s in (-1, 1)]


def _matched(a_uv, a_z, b_uv, b_z, tol: float) -> np.ndarray:
    """(len(a),) bool: a's point has a same-element point of b within tol px."""
    out = np.zeros(len(a_uv), dtype=bool)
    for z in np.unique(a_z):
        ia, ib = np.flatnonzero(a_z == z), np.flatnonzero(b_z == z)
        if len(ib) == 0:
            continue
        d2 = ((a_uv[ia, None, :] - b_uv[None, ib, :]) ** 2).sum(-1)
        out[ia] = d2.min(axis=1) <= tol * tol
    return out


def consistent(hyp: np.ndarray, obs_uv: np.ndarray, obs_z: np.ndarray, z: np.ndarray, camera, tol: float,
               cover=None) -> bool:
    """Does the hypothesised displaced ligand ``hyp`` (Å) draw the observed points (module docstring)?
    ``cover``: (atom-ID buffer, depth buffer) of the rendered view for the rendered rule, None for ideal."""
    uv, depth = camera.project(hyp)
    uv = np.asarray(uv).reshape(-1, 2)
    if not _matched(obs_uv, obs_z, uv, z, tol).all():
        return False
    back = _matched(uv, z, obs_uv, obs_z, tol)
    if cover is None:
        return bool(back.all())
    ids, dep = cover
    h, w = dep.shape
    for k in np.flatnonzero(~back).tolist():
        j, i = int(uv[k, 0]), int(uv[k, 1])
        if not (0 <= i < h and 0 <= j < w and dep[i, j] < float(np.asarray(depth).reshape(-1)[k])):
            return False
    return True


def _clear_grid(lig: np.ndarray, pocket: np.ndarray, camera, source: str):
    """(d0, poses by grid answer, the answers keeping CLASH Å clear): d0 from ``grid_d0``, grown by 2 Å at a
    time (at most MAX_EXTRA Å) until some grid displacement clears the pocket. The poses depend on the
    camera's rotation only, so any framing of the same view direction gives the same ones."""
    base = grid_d0(lig, camera)
    for extra in range(0, MAX_EXTRA + 1, 2):
        d0 = base + extra
        poses = {g: displaced(lig, g[0], g[1], camera) for g in grid(d0)}
        apart = [g for g in grid(d0) if _min_distance(poses[g], pocket) >= CLASH]
        if apart:
            return d0, poses, apart
    raise InputError(f"no displacement up to {base + MAX_EXTRA} Å keeps the ligand {CLASH} Å clear of the pocket",
                     source=source, field="ligand")


def best_mean_credit(answers: list[Transformation]) -> float:
    return max(float(np.mean([transformation_credit(p, t, DOCKING_NORMALISERS, sign_only_moves=True)
                              for t in answers])) for p in answers)


def _ceiling(mode: str, disp, cam, poses: dict, truth, d0: int, z, n_pocket: int, delta: float) -> ItemCeiling:
    """Consistent grid answers of one docking item and the best answer's mean credit (module docstring)."""
    if mode == "ideal":
        keep, cover = np.ones(len(z), dtype=bool), None
    else:
        ids = disp.atom_id
        keep, cover = np.bincount(ids[ids >= 0].ravel(), minlength=n_pocket + len(z))[n_pocket:] > 0, (ids, disp.depth)
    obs_uv = np.asarray(cam.project(poses[truth])[0]).reshape(-1, 2)[keep]
    ok = [g for g in grid(d0) if consistent(poses[g], obs_uv, z[keep], z, cam, delta * cam.scale, cover)]
    return ItemCeiling(ceiling=best_mean_credit([restoring(*g) for g in ok]), n_consistent=len(ok),
                       consistent=[restoring(*g).format() for g in ok], n_ligand_atoms_seen=int(keep.sum()))


class DockingItem(NamedTuple):
    """One docking item: its images (paths relative to the export), the answer, d0 (Å), the ceilings by mode
    (ideal, rendered) and the R3 arm's question (``benchmark.interaction_arms.docking_question``)."""

    images: list
    answer: str
    d0: int
    ceilings: dict
    r3: str


def docking_item(structure: Structure, ligand_atoms, settings, rng: np.random.Generator, out: Path, stem: str,
                 used: set | None = None):
    """Images, question, answer and ceilings (ideal, rendered) of one docking item of one complex; ``settings``:
    ``InteractionExportSettings`` (its images' settings ``settings.image``, the protocol resolved once). ``used``: the grid
    displacements already drawn for this complex (drawn without replacement: the one drawn is added); None is
    returned, nothing written, when every displacement that clears the pocket is used. Returns a
    ``DockingItem``."""

    lig_idx = np.asarray(ligand_atoms, dtype=np.int64)
    pocket_idx = np.setdiff1d(np.arange(structure.n_atoms), lig_idx)
    if len(pocket_idx) == 0:
        raise InputError("docking needs a pocket: none within the cutoff", field="pocket")
    lig, z = structure.positions[lig_idx], structure.numbers[lig_idx]
    im = settings.image
    probe = frame_cameras(structure, im.protocol, style=im.style, width=im.width, height=im.height)[0]
    d0, poses, apart = _clear_grid(lig, structure.positions[pocket_idx], probe, structure.provenance.source)
    everything = np.vstack([structure.positions, *poses.values()])
    lo, hi = everything.min(axis=0), everything.max(axis=0)
    corners = np.array([[(lo, hi)[i][0], (lo, hi)[j][1], (lo, hi)[k][2]] for i in (0, 1) for j in (0, 1)
                        for k in (0, 1)])  # the box of every pose: no answer takes the ligand out of frame
    cam = frame_cameras(Structure(corners, np.full(8, 6), None), im.protocol, style=im.style, width=im.width,
                        height=im.height)[0]
    used = set() if used is None else used
    left = [g for g in apart if g not in used]
    if not left:
        return None
    truth = left[int(rng.integers(len(left)))]
    used.add(truth)
    shown = Structure(np.vstack([structure.positions[pocket_idx], poses[truth]]),
                      np.concatenate([structure.numbers[pocket_idx], z]), None)
    images = []
    for name, s in (("ligand", Structure(lig, z, None)), ("pocket", Structure(structure.positions[pocket_idx],
                                                                            structure.numbers[pocket_idx], None)),
                    ("displaced", shown)):
        res = render(build_scene(s, im.style), cam)
        rel = f"images/{stem}_{name}.png"
        write_png_atomic(out / rel, res.rgb)
        images.append(rel)
        if name == "displaced":
            disp = res
    ceilings = {m: _ceiling(m, disp, cam, poses, truth, d0, z, len(pocket_idx), settings.ceiling.delta)
                for m in ("ideal", "rendered")}
    r3 = docking_question(lig, z, structure.positions[pocket_idx], structure.numbers[pocket_idx], poses[truth], cam,
                          settings.pocket)
    return DockingItem(images, restoring(*truth).format(), d0, ceilings, r3)
