"""Hypothesis strategies shared by the tests: rotations, structures (molecules and periodic cells), cameras."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from viewcert.structures import Structure


@st.composite
def rotations(draw) -> np.ndarray:
    """A proper rotation from a random unit quaternion."""
    q = np.array([draw(st.floats(-1, 1, allow_nan=False)) for _ in range(4)])
    n = np.linalg.norm(q)
    if n < 1e-3:
        q, n = np.array([1.0, 0, 0, 0]), 1.0
    w, x, y, z = q / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


@st.composite
def lattices(draw) -> np.ndarray:
    """A right-handed, not too skewed cell with lengths 3–8 Å and angles 70–110°."""
    a, b, c = (draw(st.floats(3.0, 8.0)) for _ in range(3))
    al, be, ga = (np.radians(draw(st.floats(70.0, 110.0))) for _ in range(3))
    cx = np.cos(be)
    cy = (np.cos(al) - np.cos(be) * np.cos(ga)) / np.sin(ga)
    cz2 = 1 - cx * cx - cy * cy
    if cz2 < 0.05:
        cx, cy, cz2 = 0.0, 0.0, 1.0
    return np.array([[a, 0, 0], [b * np.cos(ga), b * np.sin(ga), 0], [c * cx, c * cy, c * np.sqrt(cz2)]])


def _thin(points: np.ndarray, min_dist: float, lattice=None) -> np.ndarray:
    """Greedy keep-first thinning so that kept points are ≥ min_dist apart (minimum image if periodic)."""
    kept: list[np.ndarray] = []
    inv = None if lattice is None else np.linalg.inv(lattice)
    for p in points:
        ok = True
        for q in kept:
            d = p - q
            if lattice is not None:
                f = d @ inv
                f -= np.round(f)
                d = f @ lattice
            if np.linalg.norm(d) < min_dist:
                ok = False
                break
        if ok:
            kept.append(p)
    return np.array(kept).reshape(-1, 3)


@st.composite
def molecules(draw, min_atoms=1, max_atoms=12, elements=(1, 6, 7, 8, 16)) -> Structure:
    n = draw(st.integers(min_atoms, max_atoms))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    pts = _thin(rng.uniform(-4, 4, size=(n * 3, 3)), 1.0)[:n]
    z = rng.choice(np.array(elements), size=len(pts))
    return Structure(pts, z)


@st.composite
def crystals(draw, min_atoms=1, max_atoms=8, elements=(8, 11, 14, 26)) -> Structure:
    lat = draw(lattices())
    n = draw(st.integers(min_atoms, max_atoms))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    pts = _thin(rng.uniform(0, 1, size=(n * 3, 3)) @ lat, 1.0, lat)[:n]
    z = rng.choice(np.array(elements), size=len(pts))
    return Structure(pts, z, lat)


# ----------------------------------------------------------------------------- render (renderer section)


@st.composite
def render_scenes(draw, *, max_spheres=10, cylinders=True, lines=True, perspective=None, size=(24, 40)):
    """(Scene, camera): random spheres (radii 0.4–1.5 Å, may overlap in 3D), optional capped cylinders from a
    sphere centre to a random point and thin screen lines, seen by a random orthographic or perspective
    camera framed to fit in a small image (width, height drawn from ``size``)."""
    from viewcert.cameras.framing import fit_orthographic, fit_perspective
    from viewcert.render.palette import get_style
    from viewcert.render.raster import Scene

    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(1, max_spheres))
    m = draw(st.integers(0, 4)) if cylinders else 0
    nl = draw(st.integers(0, 3)) if lines else 0
    centres = rng.uniform(-2.0, 2.0, size=(n, 3))
    radii = rng.uniform(0.4, 1.5, size=n)
    z = rng.integers(1, 90, size=n)
    cyl_a = centres[rng.integers(0, n, m)]
    cyl_b = cyl_a + rng.normal(0, 1.5, size=(m, 3))
    kw = {}
    if m:
        kw.update(cylinder_starts=cyl_a, cylinder_ends=cyl_b, cylinder_radii=rng.uniform(0.1, 0.4, m),
                  cylinder_colours=rng.uniform(0, 1, (m, 3)), cylinder_owner=rng.integers(0, n, m))
    if nl:
        kw.update(line_starts=rng.uniform(-3, 3, (nl, 3)), line_ends=rng.uniform(-3, 3, (nl, 3)),
                  line_colours=np.zeros((nl, 3)))
    scene = Scene(sphere_centres=centres, sphere_radii=radii, sphere_colours=rng.uniform(0, 1, (n, 3)), numbers=z,
                  atom_index=np.arange(n), tile=np.zeros(n, dtype=np.int64),
                  line_px=float(draw(st.sampled_from([1.0, 1.4, 2.5]))),
                  style=get_style(draw(st.sampled_from(["study", "ball-and-stick"]))), **kw)
    rot = draw(rotations())
    w = draw(st.integers(*size))
    h = draw(st.integers(*size))
    pts = np.concatenate([centres, cyl_a, cyl_b, scene.line_starts, scene.line_ends]).reshape(-1, 3)
    persp = draw(st.booleans()) if perspective is None else perspective
    if persp:
        cam = fit_perspective(rot, pts, width=w, height=h, pad=1.2, margin_px=2.0, fov_deg=draw(st.floats(20, 60)))
    else:
        cam = fit_orthographic(rot, pts, width=w, height=h, pad=1.2, margin_px=2.0)
    return scene, cam


# ----------------------------------------------------------------------------- oracle (viewcert.oracle)
# Structures and cameras for the oracle's kernel-vs-twin tests, and case builders the oracle benchmark
# reuses (seeded molecules and tiled cells of a given size, the e3 conventional cells).


def oracle_orthographic(rotation, *, center=(0.0, 0.0, 0.0), scale=40.0, size=768, name=""):
    from viewcert.cameras.camera import OrthographicCamera

    return OrthographicCamera(rotation=rotation, center=np.asarray(center, dtype=float), scale=scale, width=size,
                              height=size, name=name)


def oracle_perspective(rotation, *, target=(0.0, 0.0, 0.0), distance=40.0, focal=900.0, size=768, name=""):
    """A pinhole camera ``distance`` Å from ``target`` looking along −R[2] at it."""
    from viewcert.cameras.camera import PerspectiveCamera

    pos = np.asarray(target, dtype=float) + distance * np.asarray(rotation)[2]
    return PerspectiveCamera(rotation=rotation, position=pos, focal=focal, width=size, height=size, name=name)


def oracle_random_rotations(n: int, seed: int, min_angle_deg: float = 10.0) -> list[np.ndarray]:
    """n seeded random rotations whose view directions are pairwise ≥ min_angle apart (also from antipodes)."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    while len(out) < n:
        q = rng.normal(size=4)
        w, x, y, z = q / np.linalg.norm(q)
        r = np.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ])
        if all(abs(float(r[2] @ o[2])) < np.cos(np.radians(min_angle_deg)) for o in out):
            out.append(r)
    return out


@st.composite
def oracle_camera_sets(draw, kind="orthographic", min_views=2, max_views=5, target=(0.0, 0.0, 0.0)):
    """2–5 seeded random cameras with view directions pairwise ≥ 10° apart (also from the antipode);
    kind "orthographic", "perspective" or "mixed" (alternating)."""
    n = draw(st.integers(min_views, max_views))
    rots = oracle_random_rotations(n, draw(st.integers(0, 2**31 - 1)))
    cams = []
    for i, r in enumerate(rots):
        k = kind if kind != "mixed" else ("orthographic" if i % 2 == 0 else "perspective")
        if k == "orthographic":
            cams.append(oracle_orthographic(r, center=target, name=f"v{i}"))
        else:
            cams.append(oracle_perspective(r, target=target, name=f"v{i}"))
    return tuple(cams)


@st.composite
def grid_molecules(draw, min_atoms=2, max_atoms=12, spacing=1.5, elements=(6, 8)) -> Structure:
    """Atoms on a small cubic grid: many exact coincidences of projections along the axes (phantoms)."""
    n = draw(st.integers(min_atoms, max_atoms))
    cells = draw(st.lists(st.tuples(*(st.integers(-2, 2) for _ in range(3))), min_size=n, max_size=n, unique=True))
    z = draw(st.lists(st.sampled_from(elements), min_size=n, max_size=n))
    return Structure(np.array(cells, dtype=float) * spacing, np.array(z))


AXIS_ROTATIONS = {
    # world → camera rotations looking along −x, −y, −z (rows: screen right, screen up, toward the viewer)
    "x": np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
    "y": np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
    "z": np.eye(3),
}


def oracle_random_molecule(n_atoms: int, seed: int = 0, *, density=0.08, min_dist=1.2, elements=(1, 6, 7, 8)):
    """A seeded random 'molecule' of n atoms at about ``density`` atoms/Å³ with a minimum spacing."""
    rng = np.random.default_rng(seed)
    side = (n_atoms / density) ** (1 / 3)
    pts = np.zeros((0, 3))
    while len(pts) < n_atoms:
        cand = rng.uniform(0, side, size=(2 * n_atoms, 3))
        pts = _thin_fast(np.concatenate([pts, cand]), min_dist)
    pts = pts[:n_atoms]
    z = rng.choice(np.array(elements), size=n_atoms)
    return Structure(pts - pts.mean(axis=0), z)


def _thin_fast(points: np.ndarray, min_dist: float) -> np.ndarray:
    from scipy.spatial import cKDTree

    keep = np.ones(len(points), dtype=bool)
    tree = cKDTree(points)
    for i, j in sorted(tree.query_pairs(min_dist)):
        if keep[i] and keep[j]:
            keep[j] = False
    return points[keep]


def oracle_tiled_cell(n_atoms: int, seed: int = 0, *, cell_atoms: int = 10):
    """(cell Structure, tiling) whose tiling draws about n_atoms atoms: a seeded random orthorhombic-ish cell of
    ``cell_atoms`` atoms repeated (k, k, k) times."""
    rng = np.random.default_rng(seed)
    lat = np.diag(rng.uniform(4.0, 6.0, size=3))
    lat[1, 0] = rng.uniform(-0.5, 0.5)
    pts = _thin_fast(rng.uniform(0, 1, size=(20 * cell_atoms, 3)) @ lat, 1.2)
    pts = pts[:cell_atoms]
    z = rng.choice(np.array([8, 14, 26]), size=len(pts))
    k = max(1, round((n_atoms / len(pts)) ** (1 / 3)))
    return Structure(pts, z, lat), (k, k, k)


def e3_conventional_cells(ids=None) -> dict:
    """{material_id: conventional standard cell (viewcert Structure)} for the e3 eval structures (or ``ids``),
    built as the study did: pymatgen CIF parse, ``SpacegroupAnalyzer(symprec=0.01, angle_tolerance=5)
    .get_conventional_standard_structure()`` (pymatgen orientation). Cached per process."""
    import json
    from pathlib import Path

    key = None if ids is None else tuple(ids)
    if key in _E3_CACHE:
        return _E3_CACHE[key]
    import warnings

    from pymatgen.core import Structure as PmgStructure
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    from viewcert.structures import Provenance

    e3 = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "render-ceiling" / "data" / "e3"
    data = json.loads((e3 / "structures.json").read_text())
    if ids is None:
        ids = [json.loads(line)["material_id"] for line in (e3 / "eval.jsonl").read_text().splitlines() if line]
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mid in ids:
            s = PmgStructure.from_str(data[mid]["cif"], fmt="cif")
            c = SpacegroupAnalyzer(s, symprec=0.01, angle_tolerance=5).get_conventional_standard_structure()
            out[mid] = Structure(c.cart_coords, [sp.Z for sp in c.species], c.lattice.matrix,
                                 provenance=Provenance(source="e3/structures.json", identifier=mid))
    _E3_CACHE[key] = out
    return out


_E3_CACHE: dict = {}
