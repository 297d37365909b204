"""Occlusion report per view, with the render-ceiling study's definitions.

For one structure and one orthographic view, over the drawn atoms (the cell tiled 2×2×2 by default):

- **occluded**: the projected centre lies strictly inside the disc (radius 0.5 × covalent radius, Å) of a
  strictly nearer drawn atom (``viewcert.observe.centre_visibility``);
- **redundant**: occluded, and some covering atom is in the same spglib orbit (``equivalent_atoms`` at
  symprec 1e-3 Å) — what it hides is shown by its copy in front;
- **informative**: occluded and not redundant.

Each is a fraction of the drawn atoms; a protocol's figure is the mean over structures. The pixel-exact
variant counts an atom as hidden when it has fewer than ``min_pixels`` pixels in the rendered atom-ID buffer.
Units: Å (radii, depth); the image-plane test is scale-free for orthographic views.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewcert.elements import covalent_radii
from viewcert.errors import InputError
from viewcert.observe import drawn_atoms
from viewcert.structures import Structure
from viewcert.symmetry.orbits import equivalent_atoms

ORBIT_SYMPREC = 1e-3  # Å, the study's
RADIUS_SCALE = 0.5  # × covalent radius (Å)
TILING = (2, 2, 2)


@dataclass(frozen=True)
class ViewOcclusion:
    """Fractions of drawn atoms (0..1) occluded / redundant / informative in one view of one structure."""

    view: str
    n_drawn: int
    occluded: float
    redundant: float
    informative: float

    def to_dict(self) -> dict:
        return {"view": self.view, "n_drawn": self.n_drawn, "occluded": self.occluded,
                "redundant": self.redundant, "informative": self.informative}


def orbits(structure: Structure, symprec: float = ORBIT_SYMPREC) -> np.ndarray:
    """spglib ``equivalent_atoms`` of the cell (one orbit id per cell atom); a molecule: every atom alone."""
    return equivalent_atoms(structure, symprec=symprec)


def covering(xy: np.ndarray, depth: np.ndarray, radii: np.ndarray) -> list[np.ndarray]:
    """Per point, the indices of the strictly nearer points whose disc strictly contains its centre."""
    from scipy.spatial import cKDTree

    tree = cKDTree(xy)
    out = []
    for i, nbrs in enumerate(tree.query_ball_point(xy, r=float(radii.max()) if len(radii) else 0.0)):
        nb = np.asarray([j for j in nbrs if j != i], dtype=np.int64)
        if len(nb):
            d = np.hypot(*(xy[nb] - xy[i]).T)
            nb = nb[(depth[nb] < depth[i]) & (d < radii[nb])]
        out.append(nb)
    return out


def view_occlusion(structure: Structure, rotation: np.ndarray, *, name: str = "", orbit=None,
                   tiling=TILING, radius_scale: float = RADIUS_SCALE) -> ViewOcclusion:
    """The study's occlusion fractions for one orthographic view (world→camera ``rotation``).

    Parameters
    ----------
    structure : Structure
        The structure drawn (Cartesian Å).
    rotation : numpy.ndarray
        (3, 3) world→camera rotation of the orthographic view.
    name : str
        The view's name, as reported.
    orbit : numpy.ndarray, optional
        spglib orbit id per cell atom (``orbits``); None: computed.
    tiling : tuple of int
        Cell repetitions drawn along a, b, c.
    radius_scale : float
        Drawn sphere radius as a multiple of the covalent radius.

    Returns
    -------
    ViewOcclusion
        The fractions of drawn atoms (0–1) occluded, redundant and informative.
    """
    r = np.asarray(rotation, dtype=np.float64)
    if r.shape != (3, 3):
        raise InputError(f"rotation must be 3×3, got {r.shape}", field="rotation")
    pos, num, idx, _ = drawn_atoms(structure, tiling if structure.is_periodic else (1, 1, 1))
    cam = pos @ r.T
    xy, depth = cam[:, :2], -cam[:, 2]
    radii = covalent_radii(num) * radius_scale
    orb = orbits(structure) if orbit is None else np.asarray(orbit)
    cov = covering(xy, depth, np.asarray(radii, dtype=np.float64))
    occ = np.array([len(c) > 0 for c in cov])
    red = np.array([len(c) > 0 and bool(np.any(orb[idx[c]] == orb[idx[i]])) for i, c in enumerate(cov)])
    n = len(pos)
    return ViewOcclusion(name, n, float(occ.mean()), float(red.mean()), float((occ & ~red).mean()))


def pixel_occlusion(visible_pixels: np.ndarray, drawn_index: np.ndarray, *, min_pixels: int = 1) -> float:
    """Fraction of drawn atoms with fewer than ``min_pixels`` pixels in an atom-ID buffer: the pixel-exact
    occluded fraction. ``visible_pixels``: the ID buffer (H, W) of drawn-atom indices (−1 = background);
    ``drawn_index``: the drawn-atom indices that were drawn."""
    ids = np.asarray(visible_pixels).ravel()
    counts = np.bincount(ids[ids >= 0], minlength=int(np.max(drawn_index)) + 1)
    return float(np.mean(counts[np.asarray(drawn_index)] < min_pixels))


def protocol_occlusion(structures, protocol, **kw) -> dict[str, dict[str, float]]:
    """Per view of ``protocol``: the mean over ``structures`` of occluded / redundant / informative.

    Parameters
    ----------
    structures : iterable of Structure
        The structures measured (Cartesian Å).
    protocol : Protocol
        The orthographic views measured.
    **kw
        ``view_occlusion`` options (tiling, radius_scale).

    Returns
    -------
    dict of str to dict of str to float
        View name → {"occluded", "redundant", "informative": mean fraction of the drawn atoms, 0–1}.
    """
    sums = {v.name: np.zeros(3) for v in protocol.views}
    for s in structures:
        orb = orbits(s)
        for v in protocol.views:
            o = view_occlusion(s, v.rotation, name=v.name, orbit=orb, **kw)
            sums[v.name] += (o.occluded, o.redundant, o.informative)
    n = max(len(structures), 1)
    return {k: dict(zip(("occluded", "redundant", "informative"), (x / n).tolist(), strict=True))
            for k, x in sums.items()}
