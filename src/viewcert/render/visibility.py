"""Visibility-aware observations: what the rendered pixels actually show.

From a view's atom-ID buffer (``render.raster``), drawn atom k is **observed** when at least ``min_pixels``
pixel centres show it. Its observed position is either its exact projection (``position="projection"``)
or the centroid of the centres of its visible pixels (``position="pixel-centroid"``, a "perfect detector":
pixel (i, j) counts at (j + ½, i + ½); in px, so ``ViewObservation.plane_coordinates`` converts with the
camera's scale). Depth is the atom centre's exact depth either way. The result is the same
``Observations`` type as ``observe.project.observe`` — only visible atoms, with the hidden ``atom_index``
(cell atom) and ``tile`` filled from the ID mapping — so the oracle and certify take it unchanged. Observations
at the projection need only which atoms show ``min_pixels`` pixels: ``observe_rendered`` counts them without
drawing the image (``render.raster.visible_pixel_counts``, the same counts as the ID buffer's).

``view_atom_table`` gives, per drawn atom, the projected centre, depth, visible pixel count, the count of
pixel centres inside its silhouette were it alone (``render.raster.silhouette_pixel_counts``), and the
visible fraction = visible / silhouette pixels (sidecars record it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewcert.errors import InputError
from viewcert.observe.project import OBSERVE_MODES, ObservationModel, Observations, ViewObservation, observe
from viewcert.render.palette import Style
from viewcert.render.raster import (
    RenderResult,
    build_scene,
    render,
    silhouette_pixel_counts,
    visible_pixel_counts,
)
from viewcert.structures import Structure

POSITIONS = ("projection", "pixel-centroid")


@dataclass(frozen=True)
class RenderedObservationModel(ObservationModel):
    """An ``ObservationModel`` for observations read off rendered ID buffers: occlusion is what the
    renderer drew (``style``, radius = ``radius_scale`` × covalent radius, cell edges when ``edges``),
    an atom needs ``min_pixels`` visible pixels, and its position is its ``position`` (see module)."""

    min_pixels: int = 1
    position: str = "projection"
    style: str = "study"
    edges: bool = True
    width: int = 0
    height: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        if int(self.min_pixels) != self.min_pixels or self.min_pixels < 1:
            raise InputError(f"min_pixels must be an integer ≥ 1, got {self.min_pixels}", field="min_pixels")
        if self.position not in POSITIONS:
            raise InputError(f"position must be one of {POSITIONS}, got {self.position!r}", field="position")
        if self.sigma != 0:
            raise InputError("rendered observations are noise-free (sigma must be 0)", field="sigma")

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.update({
            "visibility": "rendered",
            "min_pixels": int(self.min_pixels),
            "position": self.position,
            "centroids": "exact projection" if self.position == "projection" else "visible-pixel centroid",
            "style": self.style,
            "edges": bool(self.edges),
            "image_size": [int(self.width), int(self.height)],
        })
        return d


def visible_pixel_stats(atom_id: np.ndarray, n_atoms: int) -> tuple[np.ndarray, np.ndarray]:
    """(counts (n,), centroid uv (n, 2) px; NaN where nothing is visible) of the pixel centres per atom ID."""
    ids = np.asarray(atom_id)
    h, w = ids.shape
    flat = ids.ravel()
    sel = flat >= 0
    k = flat[sel].astype(np.int64)
    if len(k) and k.max() >= n_atoms:
        raise InputError(f"atom-ID buffer holds ID {k.max()} ≥ n_atoms = {n_atoms}", field="atom_id")
    jj, ii = np.meshgrid(np.arange(w, dtype=np.float64) + 0.5, np.arange(h, dtype=np.float64) + 0.5)
    counts = np.bincount(k, minlength=n_atoms)[:n_atoms]
    su = np.bincount(k, weights=jj.ravel()[sel], minlength=n_atoms)[:n_atoms]
    sv = np.bincount(k, weights=ii.ravel()[sel], minlength=n_atoms)[:n_atoms]
    with np.errstate(invalid="ignore", divide="ignore"):
        centroid = np.stack([su / counts, sv / counts], axis=1)
    centroid[counts == 0] = np.nan
    return counts.astype(np.int64), centroid


def view_atom_table(result: RenderResult) -> dict[str, np.ndarray]:
    """Per drawn atom of one rendered view: ``uv`` projected centre (px), ``depth`` (Å), ``visible_pixels``,
    ``silhouette_pixels``, ``visible_fraction`` (visible / silhouette; 0 when the silhouette has no pixel
    centre), ``centroid_uv`` of the visible pixels (NaN when none), ``cell_index``, ``tile``, ``numbers``."""
    scene = result.scene
    uv, depth = result.camera.project(scene.sphere_centres)
    uv = np.asarray(uv).reshape(-1, 2)
    depth = np.asarray(depth).reshape(-1)
    counts, centroid = visible_pixel_stats(result.atom_id, scene.n_atoms)
    full = silhouette_pixel_counts(scene, result.camera)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(full > 0, counts / np.maximum(full, 1), 0.0)
    return {"uv": uv, "depth": depth, "visible_pixels": counts, "silhouette_pixels": full,
            "visible_fraction": frac, "centroid_uv": centroid, "cell_index": scene.atom_index.copy(),
            "tile": scene.tile.copy(), "numbers": scene.numbers.copy()}


def observations_from_renders(
    results,
    *,
    min_pixels: int = 1,
    position: str = "projection",
    structure_id: str = "",
    model: RenderedObservationModel | None = None,
) -> Observations:
    """Observations read off already rendered views (see module docstring)."""
    results = list(results)
    if not results:
        raise InputError("no rendered views", field="results")
    scene = results[0].scene
    if model is None:
        st = scene.style
        model = RenderedObservationModel(
            tiling=scene.tiling, occlusion=True, radius_scale=st.radius_scale, min_pixels=min_pixels,
            position=position, style=st.name, edges=len(scene.line_starts) > 0,
            width=int(results[0].camera.width), height=int(results[0].camera.height),
        )
    min_pixels, position = model.min_pixels, model.position
    views = []
    for res in results:
        if res.scene is not scene and res.scene.n_atoms != scene.n_atoms:
            raise InputError("all rendered views must show the same scene", field="results")
        counts, centroid = visible_pixel_stats(res.atom_id, res.scene.n_atoms)
        views.append(_view(res.scene, res.camera, counts >= min_pixels, None if position == "projection" else centroid))
    return Observations(tuple(views), model, structure_id)


def _view(scene, camera, keep: np.ndarray, centroid: np.ndarray | None) -> ViewObservation:
    """One view's observation of the drawn atoms ``keep`` selects: at their exact projection, or (``centroid``
    given, px) at their visible-pixel centroid; the exact depth either way."""
    uv, depth = camera.project(scene.sphere_centres)
    pos = np.asarray(uv).reshape(-1, 2) if centroid is None else centroid
    return ViewObservation(camera, pos[keep], np.asarray(depth).reshape(-1)[keep], scene.numbers[keep],
                           scene.atom_index[keep], scene.tile[keep])


def observe_rendered(
    structure: Structure,
    cameras,
    *,
    tiling=(1, 1, 1),
    radius_scale: float = 0.5,
    min_pixels: int = 1,
    position: str = "projection",
    style: str | Style = "study",
    edges: bool = True,
) -> Observations:
    """Render the atom-ID buffer of ``structure`` (tiled when periodic) through every camera in ``style``
    with radius = ``radius_scale`` × covalent radius, and keep the atoms with ≥ ``min_pixels`` visible
    pixels, at their projection or their visible-pixel centroid (``position``).

    Parameters
    ----------
    structure : Structure
        Positions Cartesian Å; a crystal's lattice rows a, b, c (Å).
    cameras : iterable of OrthographicCamera or PerspectiveCamera
        The views, at least one.
    tiling : tuple of int, (na, nb, nc), default (1, 1, 1)
        Cell repetitions drawn (crystals).
    radius_scale : float, default 0.5
        Drawn atom radius = this × covalent radius (Å).
    min_pixels : int, default 1
        Visible pixels an atom needs to be observed.
    position : {"projection", "pixel-centroid"}, default "projection"
        An observed atom's uv: its exact projection or the centroid of its visible pixels (px).
    style : str or Style, default "study"
        The drawing style (``radius_scale`` overrides its own).
    edges : bool, default True
        Draw the supercell's edges (they can hide atoms).

    Returns
    -------
    Observations
        Per view: uv (m, 2) px, depth (m,) Å, labels, and the hidden atom index and tile; the model is a
        ``RenderedObservationModel``.

    Raises
    ------
    InputError
        An unknown ``position`` (field ``position``), no cameras (field ``cameras``), or as :func:`build_scene`.
    """
    if position not in POSITIONS:
        raise InputError(f"position must be one of {POSITIONS}, got {position!r}", field="position")
    cameras = tuple(cameras)
    if not cameras:
        raise InputError("no cameras", field="cameras")
    scene = build_scene(structure, style, tiling=tiling, radius_scale=radius_scale,
                        edges="supercell" if edges else "none")
    model = RenderedObservationModel(
        tiling=tuple(int(t) for t in tiling), occlusion=True, radius_scale=float(radius_scale),
        min_pixels=int(min_pixels), position=position, style=scene.style.name,
        edges=len(scene.line_starts) > 0, width=int(cameras[0].width), height=int(cameras[0].height),
    )
    if position == "pixel-centroid":  # the centroids need the ID buffer itself
        results = [render(scene, cam, rgb=False) for cam in cameras]
        return observations_from_renders(results, model=model, structure_id=structure.identifier)
    # which atoms show min_pixels pixels, counted without the image (raster.visible_pixel_counts: the same counts)
    views = tuple(_view(scene, cam, visible_pixel_counts(scene, cam, limit=model.min_pixels) >= model.min_pixels, None)
                  for cam in cameras)
    return Observations(views, model, structure.identifier)




def observe_as(
    structure: Structure,
    cameras,
    mode: str = "ideal",
    *,
    model: ObservationModel | None = None,
    min_pixels: int = 1,
    style: str | Style = "study",
) -> Observations:
    """One entry point for ``--observe ideal|visible|pixel-centroid``: ``ideal`` is
    ``observe.project.observe(structure, cameras, model)``; ``visible`` and ``pixel-centroid`` are
    ``observe_rendered`` with the model's tiling and radius_scale (noise-free: model.sigma must be 0).

    Parameters
    ----------
    structure : Structure
        Positions Cartesian Å; a crystal's lattice rows a, b, c (Å).
    cameras : iterable of OrthographicCamera or PerspectiveCamera
        The views.
    mode : {"ideal", "visible", "pixel-centroid"}, default "ideal"
        How observations are made.
    model : ObservationModel, optional
        Tiling, noise (px or Å; must be 0 for the rendered modes), occlusion and radius_scale; default:
        ``ObservationModel()``.
    min_pixels : int, default 1
        Visible pixels an atom needs (rendered modes).
    style : str or Style, default "study"
        The drawing style (rendered modes).

    Returns
    -------
    Observations
        Per view: uv (m, 2) px, depth (m,) Å, labels, and the hidden atom index and tile.

    Raises
    ------
    InputError
        An unknown mode (field ``observe``), or noise with a rendered mode (field ``sigma``).
    """
    model = model or ObservationModel()
    if mode == "ideal":
        return observe(structure, cameras, model)
    if mode not in OBSERVE_MODES:
        raise InputError(f"observe must be one of {OBSERVE_MODES}, got {mode!r}", field="observe")
    if model.sigma != 0:
        raise InputError("rendered observations are noise-free: use sigma = 0 with observe=visible|pixel-centroid",
                         field="sigma")
    return observe_rendered(structure, cameras, tiling=model.tiling, radius_scale=model.radius_scale,
                            min_pixels=min_pixels, position="projection" if mode == "visible" else "pixel-centroid",
                            style=style)
