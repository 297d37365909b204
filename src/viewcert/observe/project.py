"""Observations: project a structure through cameras into per-view 2D points with element labels.

Each view keeps the hidden atom index (which cell atom, which tile) only for scoring; the oracle must not
read it. Observation model: single cell or tiled (the study drew 2×2×2), ideal centroids or Gaussian noise
of σ (px, or Å in the image plane converted with the camera's scale at the atom's depth), seeded. Optional
analytic visibility: an atom is hidden in a view when its projected centre falls inside the drawn disc of a
nearer atom (radii in Å). Units: uv px, depth Å.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from viewcert.cameras.camera import Camera, OrthographicCamera, camera_from_dict
from viewcert.elements import covalent_radii
from viewcert.errors import InputError, ObservationError
from viewcert.numeric import readonly
from viewcert.structures import Structure, tiling_translations

OBSERVE_MODES = ("ideal", "visible", "pixel-centroid")  # how observations are made (render.visibility)


@dataclass(frozen=True)
class ObservationModel:
    """How observations were made. tiling: cell repetitions drawn; sigma: noise std (0 = ideal centroids)
    in ``sigma_unit`` ("px" or "angstrom"); seed: noise seed; occlusion: drop atoms whose centre is covered
    by a nearer atom's disc (radius = radius_scale × covalent radius, Å)."""

    tiling: tuple[int, int, int] = (1, 1, 1)
    sigma: float = 0.0
    sigma_unit: str = "px"
    seed: int = 0
    occlusion: bool = False
    radius_scale: float = 0.5

    def __post_init__(self) -> None:
        t = tuple(int(x) for x in self.tiling)
        if len(t) != 3 or min(t) < 1:
            raise InputError(f"tiling must be three positive integers, got {self.tiling}", field="tiling")
        object.__setattr__(self, "tiling", t)
        if not (np.isfinite(self.sigma) and self.sigma >= 0):
            raise InputError(f"sigma must be a finite number ≥ 0, got {self.sigma}", field="sigma")
        if self.sigma_unit not in ("px", "angstrom"):
            raise InputError(f"sigma_unit must be 'px' or 'angstrom', got {self.sigma_unit!r}", field="sigma_unit")

    def to_dict(self) -> dict:
        return {
            "tiling": list(self.tiling),
            "sigma": self.sigma,
            "sigma_unit": self.sigma_unit,
            "seed": self.seed,
            "occlusion": self.occlusion,
            "radius_scale": self.radius_scale,
            "centroids": "ideal" if self.sigma == 0 else "gaussian",
        }



@dataclass(frozen=True, eq=False)
class ViewObservation:
    """What one view shows: uv (m, 2) px, depth (m,) Å, labels (m,) atomic numbers; hidden for scoring only:
    atom_index (m,) cell atom and tile (m,) translation index (C order of the tiling)."""

    camera: Camera
    uv: np.ndarray
    depth: np.ndarray
    labels: np.ndarray
    atom_index: np.ndarray
    tile: np.ndarray

    def __post_init__(self) -> None:
        uv = np.asarray(self.uv, dtype=np.float64).reshape(-1, 2)
        m = len(uv)
        for name in ("depth", "labels", "atom_index", "tile"):
            if np.shape(getattr(self, name)) != (m,):
                raise ObservationError(f"view {self.camera.name!r}: {name} must have shape ({m},)")
        if not np.isfinite(uv).all():
            raise ObservationError(f"view {self.camera.name!r}: uv has non-finite entries")
        object.__setattr__(self, "uv", readonly(uv, np.float64))
        object.__setattr__(self, "depth", readonly(self.depth, np.float64))
        object.__setattr__(self, "labels", readonly(self.labels, np.int64))
        object.__setattr__(self, "atom_index", readonly(self.atom_index, np.int64))
        object.__setattr__(self, "tile", readonly(self.tile, np.int64))

    def __len__(self) -> int:
        return len(self.uv)

    def plane_coordinates(self) -> np.ndarray:
        """In-plane camera coordinates (m, 2) in Å for an orthographic camera (x right, y up)."""
        cam = self.camera
        if not isinstance(cam, OrthographicCamera):
            raise ObservationError("plane coordinates in Å exist only for orthographic cameras")
        x = (self.uv[:, 0] - 0.5 * cam.width) / cam.scale
        y = (0.5 * cam.height - self.uv[:, 1]) / cam.scale
        return np.stack([x, y], axis=1)

    def to_dict(self, *, include_hidden: bool = True) -> dict:
        d = {
            "camera": self.camera.to_dict(),
            "uv": self.uv.tolist(),
            "depth": self.depth.tolist(),
            "labels": self.labels.tolist(),
        }
        if include_hidden:
            d["atom_index"] = self.atom_index.tolist()
            d["tile"] = self.tile.tolist()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> ViewObservation:
        m = len(d["uv"])
        return cls(
            camera=camera_from_dict(d["camera"]),
            uv=np.asarray(d["uv"], dtype=np.float64).reshape(m, 2),
            depth=np.asarray(d["depth"], dtype=np.float64),
            labels=np.asarray(d["labels"], dtype=np.int64),
            atom_index=np.asarray(d.get("atom_index", [-1] * m), dtype=np.int64),
            tile=np.asarray(d.get("tile", [0] * m), dtype=np.int64),
        )


@dataclass(frozen=True, eq=False)
class Observations:
    """All views of one structure under one observation model."""

    views: tuple[ViewObservation, ...]
    model: ObservationModel = field(default_factory=ObservationModel)
    structure_id: str = ""

    @property
    def cameras(self) -> tuple[Camera, ...]:
        return tuple(v.camera for v in self.views)

    def to_dict(self, *, include_hidden: bool = True) -> dict:
        return {
            "structure_id": self.structure_id,
            "observation_model": self.model.to_dict(),
            "views": [v.to_dict(include_hidden=include_hidden) for v in self.views],
        }



def drawn_atoms(structure: Structure, tiling=(1, 1, 1)) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(positions (N, 3) Å, numbers (N,), cell atom index (N,), tile index (N,)) of the atoms drawn.

    Parameters
    ----------
    structure : Structure
        Positions Cartesian Å; a crystal's lattice rows a, b, c (Å).
    tiling : tuple of int, (na, nb, nc), default (1, 1, 1)
        Cell repetitions drawn (a crystal); a molecule takes (1, 1, 1) only.

    Returns
    -------
    tuple of numpy.ndarray
        Positions (N, 3) world Å, atomic numbers (N,), cell atom index (N,) and tile index (N,) (translation
        in the tiling's C order), N = n_atoms × na·nb·nc, atom ``t·n + i`` being atom ``i`` shifted by
        translation ``t``.

    Raises
    ------
    InputError
        A molecule with a tiling other than (1, 1, 1) (field ``tiling``).
    """
    n = structure.n_atoms
    if structure.is_periodic:
        t = tiling_translations(tuple(tiling))
        pos = (t @ structure.lattice)[:, None, :] + structure.positions[None, :, :]
        tiles = np.repeat(np.arange(len(t)), n)
        return pos.reshape(-1, 3), np.tile(structure.numbers, len(t)), np.tile(np.arange(n), len(t)), tiles
    if tuple(tiling) != (1, 1, 1):
        raise InputError("a molecule cannot be tiled (it has no lattice)", field="tiling")
    return structure.positions, structure.numbers, np.arange(n), np.zeros(n, dtype=np.int64)


def centre_visibility(uv: np.ndarray, depth: np.ndarray, radii_px: np.ndarray) -> np.ndarray:
    """True where a point's projected centre is not inside the disc of a strictly nearer point (px).

    Parameters
    ----------
    uv : numpy.ndarray of float, shape (m, 2)
        Projected centres, pixel coordinates (u right, v down).
    depth : numpy.ndarray of float, shape (m,)
        Depth along the view direction, Å (larger = farther).
    radii_px : numpy.ndarray of float, shape (m,)
        Drawn disc radius of each point, px.

    Returns
    -------
    numpy.ndarray of bool, shape (m,)
        The visible points.
    """
    m = len(uv)
    visible = np.ones(m, dtype=bool)
    if m < 2:
        return visible
    from scipy.spatial import cKDTree

    tree = cKDTree(uv)
    rmax = float(radii_px.max())
    for i, nbrs in enumerate(tree.query_ball_point(uv, r=rmax)):
        for j in nbrs:
            if j != i and depth[j] < depth[i] and np.hypot(*(uv[i] - uv[j])) < radii_px[j]:
                visible[i] = False
                break
    return visible


def observe(
    structure: Structure,
    cameras,
    model: ObservationModel | None = None,
) -> Observations:
    """Project ``structure`` (tiled per ``model.tiling`` when periodic) into every camera. Noise is drawn
    from ``numpy.random.default_rng(model.seed)`` view by view in camera order, so it is reproducible.

    Parameters
    ----------
    structure : Structure
        Positions Cartesian Å; a crystal's lattice rows a, b, c (Å).
    cameras : iterable of OrthographicCamera or PerspectiveCamera
        The views, in order.
    model : ObservationModel, optional
        Tiling, noise σ (px or Å) and seed, occlusion; default: one cell, ideal centroids, no occlusion.

    Returns
    -------
    Observations
        One ``ViewObservation`` per camera: uv (m, 2) pixel coordinates, depth (m,) Å, labels (m,) atomic
        numbers, and, for scoring only, atom_index and tile.

    Raises
    ------
    ObservationError
        A drawn atom is behind a perspective camera.
    InputError
        A molecule with a tiling other than (1, 1, 1) (field ``tiling``).
    """
    model = model or ObservationModel()
    pos, num, idx, tile = drawn_atoms(structure, model.tiling)
    rng = np.random.default_rng(model.seed) if model.sigma > 0 else None
    views = []
    for cam in cameras:
        uv, depth = cam.project(pos)
        if not np.isfinite(uv).all():
            raise ObservationError(f"camera {cam.name!r}: some atoms are behind the camera")
        keep = slice(None)  # every drawn atom (views of the arrays above, which no one else writes)
        if model.occlusion:
            r_px = covalent_radii(num) * model.radius_scale / np.asarray(cam.pixel_size(depth))
            keep = centre_visibility(uv, depth, np.broadcast_to(r_px, (len(uv),)).astype(np.float64))
        if rng is not None:
            noise = rng.normal(0.0, model.sigma, size=uv.shape)
            if model.sigma_unit == "angstrom":
                noise = noise / np.asarray(cam.pixel_size(depth)).reshape(-1, 1)
            uv = uv + noise
        views.append(ViewObservation(cam, uv[keep], depth[keep], num[keep], idx[keep], tile[keep]))
    return Observations(tuple(views), model, structure.identifier)
